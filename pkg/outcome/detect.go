// Package outcome follows a payment operation past the confirmation of its
// transaction to where it ends: a deposit credited on the rollup, every
// piece of a private transfer paid out on base, a withdrawal back on base
// — or refunded, or failed. It reads only the chain nodes (pkg/chainclient)
// and is shared by `ferry send --confirm`, `ferry confirm` and the payments
// API's send with waitForOutcome.
//
// The evidence is what the rollup validator leaves on the two chains
// (docs/localnet.md §3): the validator-signed CloseShuttle (eSPL 201) that
// closes a shuttle on base and pays back what it still holds, the group
// receipt of a queued transfer on the rollup, and the validator-signed
// ExecuteReadyQueuedTransfer (eSPL 202) payouts on base. The internal
// instructions are ferry's local validator's (MagicBlock's differ), so
// settlement is followed on the local cluster; on other clusters Track
// stops after the confirmation with Status Unknown.
package outcome

import (
	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// Kind is what an operation does, as its transaction shows.
type Kind string

// Operation kinds.
const (
	// KindDeposit moves tokens from base into the owner's rollup balance
	// (eSPL 24 whose merge lands in the owner's own ATA).
	KindDeposit Kind = "deposit"
	// KindRollupTransfer is a private base → ephemeral transfer: eSPL 24
	// merging into another wallet's rollup balance.
	KindRollupTransfer Kind = "privateToRollup"
	// KindPrivateTransfer is a private base → base transfer (eSPL 25):
	// queued on the rollup, paid out on base in split pieces.
	KindPrivateTransfer Kind = "privateTransfer"
	// KindQueuedTransfer is a private ephemeral → base transfer (eSPL 16
	// sent to the rollup), paid out on base in split pieces.
	KindQueuedTransfer Kind = "queuedTransfer"
	// KindWithdraw moves tokens from the rollup back to base (eSPL 26).
	KindWithdraw Kind = "withdraw"
	// KindTransaction is anything else (a public transfer, init-mint): it
	// is done once it is confirmed.
	KindTransaction Kind = "transaction"
)

// Layers.
const (
	Base      = "base"
	Ephemeral = "ephemeral"
)

// Operation is what Detect reads from a transaction.
type Operation struct {
	Kind Kind `json:"kind"`
	// Layer is where the transaction was sent (base or ephemeral).
	Layer string `json:"layer"`
	// Signature is the transaction's (first) signature.
	Signature solana.Signature `json:"signature"`
	Owner     solana.PublicKey `json:"owner"`
	Mint      solana.PublicKey `json:"mint"`
	// Amount is what the instruction moves, in base units.
	Amount uint64 `json:"amount,string"`
	// Shuttle is the shuttle's eATA (eSPL 24, 25, 26).
	Shuttle solana.PublicKey `json:"shuttle,omitempty"`
	// Destination is the token account credited: the rollup ATA of a
	// deposit, the owner's base ATA of a withdrawal.
	Destination solana.PublicKey `json:"destination,omitempty"`
	// Queue and GroupID identify a queued transfer's group receipt
	// (eSPL 25, 16).
	Queue   solana.PublicKey `json:"queue,omitempty"`
	GroupID uint32           `json:"groupId,omitempty"`
}

// Detect reads the operation a transaction starts, sent to layer. The
// first eSPL instruction that starts one decides; a transaction without
// any is KindTransaction.
func Detect(tx *txwire.Transaction, layer string) Operation {
	op := Operation{Kind: KindTransaction, Layer: layer}
	if len(tx.Signatures) > 0 {
		op.Signature = tx.Signatures[0]
	}
	m := &tx.Message
	for _, ci := range m.Instructions {
		if int(ci.ProgramIDIndex) >= len(m.AccountKeys) || m.AccountKeys[ci.ProgramIDIndex] != espl.ProgramID {
			continue
		}
		keys := make([]solana.PublicKey, 0, len(ci.Accounts))
		for _, a := range ci.Accounts {
			if int(a) >= len(m.AccountKeys) {
				keys = nil // loaded from a lookup table: not decodable here
				break
			}
			keys = append(keys, m.AccountKeys[a])
		}
		if keys == nil || len(ci.Data) == 0 {
			continue
		}
		d, err := espl.Decode(ci.Data, keys)
		if err != nil {
			continue
		}
		switch v := d.(type) {
		case espl.DepositShuttleIx:
			op.Kind, op.Owner, op.Mint, op.Amount = KindDeposit, v.Owner, v.Mint, v.Amount
			op.Shuttle, op.Destination = v.ShuttleEphemeralATA, v.Destination
			if v.Destination != ownerATA(v.Owner, v.Mint, v.TokenProgram) {
				op.Kind = KindRollupTransfer
			}
			return op
		case espl.PrivateTransferIx:
			queued, _, _, _ := espl.PrivateTransferAmounts(v.Amount, v.ExactOut)
			op.Kind, op.Owner, op.Mint, op.Amount = KindPrivateTransfer, v.Owner, v.Mint, queued
			op.Shuttle, op.Queue, op.GroupID = v.ShuttleEphemeralATA, v.Queue, v.GroupID()
			return op
		case espl.WithdrawShuttleIx:
			op.Kind, op.Owner, op.Mint, op.Amount = KindWithdraw, v.Owner, v.Mint, v.Amount
			op.Shuttle, op.Destination = v.ShuttleEphemeralATA, v.OwnerATA
			return op
		case espl.DepositAndQueueTransferIx:
			op.Kind, op.Owner, op.Mint, op.Amount = KindQueuedTransfer, v.Owner, v.Mint, v.Amount
			op.Queue, op.GroupID = v.Queue, v.GroupID
			return op
		}
	}
	return op
}

func ownerATA(owner, mint, tokenProgram solana.PublicKey) solana.PublicKey {
	return spl.AssociatedTokenAddress(owner, mint, tokenProgram)
}
