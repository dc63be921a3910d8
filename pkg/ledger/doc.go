// Package ledger is ferry's embedded chain node: a Solana-style bank of
// accounts running native programs, a transaction pipeline in Agave's
// order, a slot clock producing blocks with chained blockhashes,
// processed/confirmed/finalized commitment, transaction history, and a
// durable store written once per slot: an append-only account log and a
// bbolt database of blocks, compressed transactions and indexes.
//
// # Running ledgers
//
// Open starts a ledger from a Config whose zero value is an in-memory
// ledger with 400 ms slots. Ledgers share no state, so a process can run
// a base layer and an ephemeral rollup side by side:
//
//	base, _ := ledger.Open(ledger.Config{Name: "base", DataDir: dir + "/base"})
//	er, _ := ledger.Open(ledger.Config{Name: "ephemeral", DataDir: dir + "/er",
//		SlotDuration: 50 * time.Millisecond, LamportsPerSignature: -1,
//		Programs: []*runtime.Registration{magicProgram}})
//
// Tests use ManualSlots and AdvanceSlot to move the chain without sleeping,
// and Now to control block times.
//
// # The pipeline
//
// Process, ProcessBatch and Send run a wire transaction through: size
// check, decode and sanitize; ed25519 verification (batched across
// concurrent callers); blockhash age (150 blocks); duplicate rejection
// from the status cache; compute budget; fee payer checks and fees (5 000
// lamports per signature plus the priority fee); execution on copies of
// the accounts; the rent-state check; and commit. A failed transaction
// still pays its fee and lands with its error; a rejected one does not
// land. Simulate runs the same stages against the state at any
// commitment without changing anything.
//
// # Commitment and durability
//
// Transactions are executed as they arrive and are processed at once.
// Every SlotDuration the working slot is frozen into a block and handed
// to the persister, which appends the accounts the slot wrote to the
// account log (acclog.go) and then writes the block, its transactions
// (in compressed chunks), the indexes and the log's end in one bbolt
// transaction; only then are they confirmed. A block is finalized
// FinalityDepth slots later. Reads at confirmed and finalized commitment
// look through the undo history of newer slots, so every level sees a
// consistent state. Reopening a data directory resumes accounts, history,
// the slot and the status cache without loading the accounts: a durable
// ledger reads an account from the log when it is used (bank accounts.go;
// docs/performance.md, "Ledger storage at scale").
//
// # Hooks for other components
//
// Subscribe delivers each durable block with its transactions and the
// accounts they wrote; Observe streams every processed transaction, slot
// end, confirmed block and finalized advance to a bounded queue the
// ledger never waits on (PubSub builds on it); Apply makes privileged account writes (clone,
// commit back) that land atomically in the working slot and persist with
// it; Config.Programs registers native programs per ledger; the read
// methods (Account, TokenAccountsByOwner, LatestBlockhash, Slot,
// SignatureStatuses, Transaction, ...) serve in-process callers such as
// the payments API, and pkg/rpcserver is a thin JSON-RPC layer over them.
package ledger
