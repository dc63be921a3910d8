package devchain

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger"
)

// MaxAccountDataBytes is the largest account a cheatcode writes: Solana's
// MAX_PERMITTED_DATA_LENGTH (10 MiB).
const MaxAccountDataBytes = 10 << 20

// MaxResetAccounts bounds resetAccount with includeOwnedAccounts: resetting
// a program that owns more accounts is refused (reset them by address).
const MaxResetAccounts = 10_000

// MaxHaltReason bounds the reason ferry_haltLedger takes (it is logged and
// echoed by /health).
const MaxHaltReason = 200

// DefaultHaltReason is the failure a halted node reports when
// ferry_haltLedger names none.
const DefaultHaltReason = "simulated disk full (ferry_haltLedger)"

// AccountUpdate is surfpool's AccountUpdate: the fields of an account to
// set; absent fields keep their current value (a new account starts with 0
// lamports, the System program as owner and no data).
type AccountUpdate struct {
	Lamports *uint64 `json:"lamports,omitempty" doc:"Balance in lamports. 0 deletes the account (an account without lamports does not exist on Solana)."`
	// Data is hex, surfpool's encoding of AccountUpdate.data.
	Data *string `json:"data,omitempty" doc:"Account data as hex (surfpool's encoding). Exclusive with dataBase64."`
	// DataBase64 is ferry's extension for data given as base64.
	DataBase64 *string `json:"dataBase64,omitempty" doc:"Account data as base64 (ferry's extension). Exclusive with data."`
	Owner      *string `json:"owner,omitempty" validate:"pubkey" doc:"Owner program (base58)."`
	Executable *bool   `json:"executable,omitempty" doc:"Whether the account holds a program."`
	// RentEpoch is accepted for surfpool compatibility; the ledger stores
	// what Agave stores instead (u64::MAX for a rent-exempt account, 0
	// otherwise).
	RentEpoch *uint64 `json:"rentEpoch,omitempty" doc:"Accepted for compatibility and not kept: the ledger stores u64::MAX for a rent-exempt account and 0 otherwise, as Agave does."`
}

// SetAccountRequest is surfnet_setAccount / ferry_setAccount.
type SetAccountRequest struct {
	Address string `json:"address" validate:"required,pubkey" doc:"Account to set (base58)."`
	AccountUpdate
}

// data decodes the update's data, if any.
func (u *AccountUpdate) data() ([]byte, bool, error) {
	switch {
	case u.Data != nil && u.DataBase64 != nil:
		return nil, false, invalid("Invalid params: data and dataBase64 are exclusive")
	case u.Data != nil:
		if len(*u.Data) > 2*MaxAccountDataBytes {
			return nil, false, invalid("Invalid params: data longer than %d bytes", MaxAccountDataBytes)
		}
		b, err := hex.DecodeString(*u.Data)
		if err != nil {
			return nil, false, invalid("Invalid hex data provided: %v", err)
		}
		return b, true, nil
	case u.DataBase64 != nil:
		if base64.StdEncoding.DecodedLen(len(*u.DataBase64)) > MaxAccountDataBytes+2 {
			return nil, false, invalid("Invalid params: dataBase64 longer than %d bytes", MaxAccountDataBytes)
		}
		b, err := base64.StdEncoding.DecodeString(*u.DataBase64)
		if err != nil {
			return nil, false, invalid("Invalid base64 data provided: %v", err)
		}
		if len(b) > MaxAccountDataBytes {
			return nil, false, invalid("Invalid params: dataBase64 longer than %d bytes", MaxAccountDataBytes)
		}
		return b, true, nil
	}
	return nil, false, nil
}

// SetAccount sets the fields the request gives on an account, creating it
// if needed, in one privileged write.
func (n *Node) SetAccount(ctx context.Context, req SetAccountRequest) (*WriteResult, error) {
	key, err := parseKey(req.Address)
	if err != nil {
		return nil, err
	}
	var owner solana.PublicKey
	if req.Owner != nil {
		if owner, err = parseKey(*req.Owner); err != nil {
			return nil, err
		}
	}
	data, hasData, err := req.data()
	if err != nil {
		return nil, err
	}
	if err := n.prefetch(ctx, key); err != nil {
		return nil, err
	}
	return n.write(ctx, "setAccount", func(w ledger.AccountWriter) ([]solana.PublicKey, error) {
		cur := w.Get(key)
		if err := refuseSysvar(key, cur); err != nil {
			return nil, err
		}
		a := cur
		if a == nil {
			a = &ledger.Account{Owner: solana.SystemProgramID}
		}
		if req.Lamports != nil {
			a.Lamports = *req.Lamports
		}
		if req.Owner != nil {
			a.Owner = owner
		}
		if hasData {
			a.Data = data
		}
		if req.Executable != nil {
			a.Executable = *req.Executable
		}
		if a.Lamports == 0 && req.Lamports == nil {
			// Only an explicit lamports 0 deletes: anything else would
			// silently write nothing.
			return nil, invalid("Invalid params: account %s would have 0 lamports and so not exist; set lamports (the rent-exempt minimum for %d bytes is %d)",
				key, len(a.Data), n.l.MinimumBalanceForRentExemption(len(a.Data)))
		}
		w.Set(key, a)
		return []solana.PublicKey{key}, nil
	})
}

// refuseSysvar refuses writes to sysvar accounts: the ledger rewrites
// them itself (the Clock every slot), so a cheat there would not hold.
func refuseSysvar(key solana.PublicKey, cur *ledger.Account) error {
	if cur != nil && cur.Owner == ledger.SysvarOwnerID {
		return invalid("Invalid params: %s is a sysvar, which the ledger maintains; it cannot be set", key)
	}
	return nil
}

// ResetAccountRequest is surfnet_resetAccount / ferry_resetAccount.
type ResetAccountRequest struct {
	Address string `json:"address" validate:"required,pubkey" doc:"Account to reset (base58)."`
	// IncludeOwnedAccounts also resets the accounts this one owns (a
	// program's accounts), as surfpool's includeOwnedAccounts does.
	IncludeOwnedAccounts bool `json:"includeOwnedAccounts,omitempty" doc:"Also reset every account this one owns (a program's accounts), at most 10000."`
}

// ResetAccount puts an account back where the chain started: its genesis
// value if genesis created it (a program, a native mint, the faucet),
// otherwise it is deleted. Surfpool re-fetches the account from its
// remote; ferry serve's chains start from genesis.
func (n *Node) ResetAccount(ctx context.Context, req ResetAccountRequest) (*WriteResult, error) {
	key, err := parseKey(req.Address)
	if err != nil {
		return nil, err
	}
	return n.write(ctx, "resetAccount", func(w ledger.AccountWriter) ([]solana.PublicKey, error) {
		keys := []solana.PublicKey{key}
		if req.IncludeOwnedAccounts {
			owned, _, err := n.l.ProgramAccounts(key, ledger.Processed, ledger.ProgramQuery{Limit: MaxResetAccounts})
			var tooMany *ledger.TooManyAccountsError
			if errors.As(err, &tooMany) {
				return nil, invalid("Invalid params: %s owns more than %d accounts; reset them by address", key, MaxResetAccounts)
			}
			if err != nil {
				return nil, internal("list owned accounts", err)
			}
			for _, ka := range owned {
				keys = append(keys, ka.Key)
			}
		}
		for _, k := range keys {
			if err := refuseSysvar(k, w.Get(k)); err != nil {
				return nil, err
			}
			w.Set(k, n.l.GenesisAccount(k))
		}
		return keys, nil
	})
}

// HaltRequest is ferry_haltLedger.
type HaltRequest struct {
	Reason string `json:"reason,omitempty" doc:"The failure the node will report (at most 200 bytes)."`
}

// HaltResult is ferry_haltLedger's result.
type HaltResult struct {
	Halting string `json:"halting" doc:"The reason the node now reports."`
}

// Halt makes every later slot commit of the node fail, as a full disk
// does (ledger.Ledger.FailCommits): nothing more becomes confirmed,
// /health and getHealth report it and the payments API answers
// LEDGER_HALTED, so an application can test its handling of a halted
// node. Restarting ferry serve recovers from the last durable slot.
func (n *Node) Halt(_ context.Context, req HaltRequest) (*HaltResult, error) {
	if len(req.Reason) > MaxHaltReason {
		return nil, invalid("Invalid param: reason longer than %d bytes", MaxHaltReason)
	}
	reason := req.Reason
	if reason == "" {
		reason = DefaultHaltReason
	}
	n.l.FailCommits(errors.New(reason))
	n.log.Warn("cheatcode", "method", "haltLedger", "reason", reason)
	return &HaltResult{Halting: reason}, nil
}

// MaxAdvanceSlots bounds how many slots one ferry_advanceSlot call ends:
// enough to outlast a lookup table's 512-slot deactivation cool-down.
const MaxAdvanceSlots = 1024

// AdvanceSlotRequest is ferry_advanceSlot.
type AdvanceSlotRequest struct {
	Slots *int `json:"slots,omitempty" doc:"How many slots to end (1 when absent, at most 1024)."`
}

// AdvanceSlotResult is ferry_advanceSlot's result.
type AdvanceSlotResult struct {
	Slot      uint64 `json:"slot" doc:"The last slot that ended (now durable)."`
	Blockhash string `json:"blockhash" doc:"The new latest blockhash."`
}

// AdvanceSlot ends the working slot now, whatever the slot clock says (or
// the next req.Slots slots), and answers once the last block is durable.
// With a long --slot-time it moves the chain one block at a time, so tests
// reproduce what happens across blocks (a durable nonce advancing, a
// lookup table's deactivation cool-down) deterministically.
func (n *Node) AdvanceSlot(ctx context.Context, req AdvanceSlotRequest) (*AdvanceSlotResult, error) {
	count := 1
	if req.Slots != nil {
		count = *req.Slots
	}
	if count < 1 || count > MaxAdvanceSlots {
		return nil, invalid("Invalid param: slots must be between 1 and %d", MaxAdvanceSlots)
	}
	slot, err := n.l.AdvanceSlots(ctx, count)
	if err != nil {
		return nil, internal("advance slot", err)
	}
	bh, _ := n.l.LatestBlockhash(ledger.Processed)
	return &AdvanceSlotResult{Slot: slot, Blockhash: bh.Blockhash.String()}, nil
}
