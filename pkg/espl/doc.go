// Package espl knows the bytes of MagicBlock's Ephemeral SPL Token program
// ("eSPL", program SPLxh1LV…): its ids, PDA derivations, account layouts,
// instruction encoders and decoders, the sealed-box encryption of private
// transfers, and the split/delay/fee rules of the transfer queue.
//
// The protocol reference is espl-program.md (section numbers in comments,
// e.g. §7, refer to it). Everything here is pure data handling: no RPC and
// no execution. The payments planner builds transactions from the
// builders, the local rollup simulation executes the decoded instructions
// natively, and the transaction inspector prints them.
//
// # Addresses
//
// Every derivation of §3 exists as a pure function (FindEphemeralATA,
// FindTransferQueue, FindStealthPool, …) returning the address and its
// bump. A derivation costs a SHA-256 plus an ed25519 on-curve check per
// bump attempt (about 10 µs on average), so callers that derive the same
// addresses repeatedly should own a [Cache]: it has the same methods,
// memoises results in a bounded, sharded map and is safe for concurrent use.
// A nil *Cache is valid and simply derives without memoising.
//
// # Instructions
//
// Each eSPL instruction has three pieces:
//
//   - an argument struct (e.g. [DepositShuttleArgs]) holding only what the
//     caller chooses; the builder function of the same name without "Args"
//     ([DepositShuttle]) derives every PDA and returns a [txwire.Instruction]
//     with the exact data layout and account list of §7 / §9.1;
//   - a full instruction struct (e.g. [DepositShuttleIx]) naming every
//     account by role plus the decoded data; [Decode] returns one of these
//     (as a [Decoded]), and its Instruction method encodes it back;
//   - an entry in the account specification table ([AccountSpecs]) giving
//     each account's role name and expected signer/writable flags.
//
// Zero-valued optional arguments mean "absent" or "derive the default"
// unless a field's comment says otherwise.
//
// # Private transfers
//
// [Seal] and [Open] implement libsodium sealed boxes addressed to a
// validator's ed25519 identity (§9.2). [PrivateTransfer] seals the
// destination and the delay/split suffix of ix 25; [OpenPrivateTransfer]
// recovers them on the validator side.
package espl
