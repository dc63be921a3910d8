package ledger

import (
	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// Account is the state of one account. Values returned by the ledger are
// shared snapshots: treat them as read-only (Clone before changing).
type Account = runtime.Account

// TxRecord is a landed transaction: its bytes, where it landed and what it
// did. Records handed out by the ledger are shared; do not modify them.
type TxRecord struct {
	Signature solana.Signature
	Slot      uint64
	// Index is the transaction's position in its block.
	Index     uint32
	BlockTime int64
	// Raw is the wire transaction.
	Raw []byte
	// Err is nil for a successful transaction. A failed one still paid
	// its fee.
	Err  *runtime.TxError
	Meta *TxMeta
	// Writes are the accounts the transaction changed, with their values
	// right after it (nil Account: deleted). Filled only in blocks
	// delivered to subscribers; records read back from history leave it
	// nil.
	Writes []AccountWrite

	tx *txwire.Transaction
}

// Transaction decodes Raw (cached).
func (r *TxRecord) Transaction() (*txwire.Transaction, error) {
	if r.tx != nil {
		return r.tx, nil
	}
	tx, err := txwire.Decode(r.Raw)
	if err != nil {
		return nil, err
	}
	r.tx = tx
	return tx, nil
}

// TxMeta is the execution metadata getTransaction reports.
type TxMeta struct {
	Fee               uint64
	PreBalances       []uint64
	PostBalances      []uint64
	PreTokenBalances  []TokenBalance
	PostTokenBalances []TokenBalance
	// Logs is nil when the transaction failed before any program ran.
	Logs              []string
	ComputeUnits      uint64
	CostUnits         uint64
	InnerInstructions []runtime.InnerInstructions
	ReturnData        *runtime.ReturnData
	// LoadedWritable and LoadedReadonly are the addresses a v0 message
	// loaded through address lookup tables (meta.loadedAddresses), in
	// account-index order after the static keys.
	LoadedWritable []solana.PublicKey
	LoadedReadonly []solana.PublicKey
}

// TokenBalance is one token account's balance in pre/postTokenBalances.
type TokenBalance struct {
	AccountIndex uint8
	Mint         solana.PublicKey
	Owner        solana.PublicKey
	ProgramID    solana.PublicKey
	Amount       uint64
	Decimals     uint8
}

// AccountWrite is the new value of an account; a nil Account means the
// account was deleted (it reached zero lamports).
type AccountWrite struct {
	Key     solana.PublicKey
	Account *Account
}

// Block is a produced slot. Blocks delivered by Subscribe carry the
// transactions with their Writes, the privileged writes made through
// Apply, and the final value of every account written in the slot.
type Block struct {
	Slot              uint64
	ParentSlot        uint64
	Height            uint64
	Blockhash         solana.Hash
	PreviousBlockhash solana.Hash
	// Time is the slot's unix timestamp in seconds (the Clock sysvar's).
	Time         int64
	Transactions []*TxRecord
	// Applied lists the writes of each Apply call made in this slot, in
	// order.
	Applied [][]AccountWrite
	// Writes is the final value of every account written in the slot,
	// sorted by key.
	Writes []AccountWrite
	// Replayed marks a block SubscribeFrom read back from history.
	Replayed bool
}

// SignatureStatus is a transaction's status as getSignatureStatuses reports
// it.
type SignatureStatus struct {
	Slot uint64
	// Confirmations counts the blocks built on top of the transaction's
	// block; it is meaningless once Status is Finalized.
	Confirmations uint64
	Err           *runtime.TxError
	// Status is the commitment the transaction has reached.
	Status Commitment
}

// BlockInfo is the header of a block.
type BlockInfo struct {
	Slot              uint64
	ParentSlot        uint64
	Height            uint64
	Blockhash         solana.Hash
	PreviousBlockhash solana.Hash
	Time              int64
	// Signatures of the block's transactions, in order.
	Signatures []solana.Signature
}

// SlotInfo describes where a commitment level currently stands.
type SlotInfo struct {
	Slot             uint64
	Height           uint64
	Blockhash        solana.Hash
	TransactionCount uint64
}
