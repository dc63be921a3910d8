package system_test

import (
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/programs/programtest"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/system"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

const rentNonce = 1_447_680 // rent-exempt minimum for 80 bytes

var (
	nonceKey = solana.MustPublicKeyFromBase58("8ELqZcz5eJqpMVqbsLskTHz6GMJg1zzeAyVfJ6d6KWVH")
	blockA   = solana.Hash{1}
	blockB   = solana.Hash{2}
)

func withdrawNonce(nonce, to, authority solana.PublicKey, lamports uint64) txwire.Instruction {
	return txwire.Instruction{ProgramID: system.ProgramID,
		Accounts: []txwire.AccountMeta{txwire.Writable(nonce), txwire.Writable(to), txwire.Readonly(spl.SysvarRecentBlockhashesID),
			txwire.Readonly(spl.SysvarRentID), txwire.Signer(authority)},
		Data: append([]byte{5, 0, 0, 0}, le64(lamports)...)}
}

func authorizeNonce(nonce, authority, next solana.PublicKey) txwire.Instruction {
	return txwire.Instruction{ProgramID: system.ProgramID,
		Accounts: []txwire.AccountMeta{txwire.Writable(nonce), txwire.Signer(authority)},
		Data:     append([]byte{7, 0, 0, 0}, next[:]...)}
}

func upgradeNonce(nonce solana.PublicKey) txwire.Instruction {
	return txwire.Instruction{ProgramID: system.ProgramID, Accounts: []txwire.AccountMeta{txwire.Writable(nonce)}, Data: []byte{12, 0, 0, 0}}
}

func le64(v uint64) []byte {
	b := make([]byte, 8)
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
	return b
}

// nonceAt stores a nonce account with the given state and lamports.
func nonceAt(h *programtest.Harness, st spl.NonceState, lamports uint64) {
	data := make([]byte, spl.NonceAccountSize)
	st.EncodeInto(data)
	h.SetAccount(nonceKey, runtime.Account{Lamports: lamports, Owner: system.ProgramID, Data: data})
}

func initialized(authority solana.PublicKey, nonce solana.Hash) spl.NonceState {
	return spl.NonceState{Version: spl.NonceVersionCurrent, Initialized: true, Authority: authority, Nonce: nonce, LamportsPerSignature: 5000}
}

// TestNonceInstructions pins the durable-nonce instructions against
// Agave's system_instruction_processor: byte layout (version, state,
// authority, DurableNonce(blockhash), lamports per signature), the
// once-per-blockhash rule (Custom 7), withdrawal rules and authority
// checks.
func TestNonceInstructions(t *testing.T) {
	advanced := spl.DurableNonce(blockA)
	cases := []struct {
		name  string
		setup func(h *programtest.Harness)
		ixs   []txwire.Instruction
		err   *runtime.InstructionError
		want  *spl.NonceState // nonce account state after success
		check func(t *testing.T, h *programtest.Harness)
	}{
		{name: "initialize",
			ixs: []txwire.Instruction{spl.SystemCreateAccount(payer, nonceKey, rentNonce, spl.NonceAccountSize, system.ProgramID),
				spl.SystemInitializeNonce(nonceKey, alice)},
			want: ptr(initialized(alice, advanced))},
		{name: "initialize-below-rent",
			ixs: []txwire.Instruction{spl.SystemCreateAccount(payer, nonceKey, rentNonce-1, spl.NonceAccountSize, system.ProgramID),
				spl.SystemInitializeNonce(nonceKey, alice)},
			err: runtime.ErrInsufficientFunds},
		{name: "initialize-twice",
			setup: func(h *programtest.Harness) { nonceAt(h, initialized(alice, blockB), rentNonce) },
			ixs:   []txwire.Instruction{spl.SystemInitializeNonce(nonceKey, alice)},
			err:   runtime.ErrInvalidAccountData},
		{name: "initialize-wrong-sysvar",
			setup: func(h *programtest.Harness) { nonceAt(h, spl.NonceState{}, rentNonce) },
			ixs: []txwire.Instruction{func() txwire.Instruction {
				ix := spl.SystemInitializeNonce(nonceKey, alice)
				ix.Accounts[1].PublicKey = spl.SysvarClockID
				return ix
			}()},
			err: runtime.ErrInvalidArgument},
		{name: "initialize-no-data",
			setup: func(h *programtest.Harness) { h.Fund(nonceKey, rentNonce) },
			ixs:   []txwire.Instruction{spl.SystemInitializeNonce(nonceKey, alice)},
			err:   runtime.ErrInvalidAccountData},
		{name: "advance",
			setup: func(h *programtest.Harness) { nonceAt(h, initialized(alice, blockB), rentNonce) },
			ixs:   []txwire.Instruction{spl.SystemAdvanceNonce(nonceKey, alice)},
			want:  ptr(initialized(alice, advanced))},
		{name: "advance-twice-in-a-block",
			setup: func(h *programtest.Harness) { nonceAt(h, initialized(alice, advanced), rentNonce) },
			ixs:   []txwire.Instruction{spl.SystemAdvanceNonce(nonceKey, alice)},
			err:   system.ErrNonceBlockhashNotExpired},
		{name: "advance-unsigned",
			setup: func(h *programtest.Harness) { nonceAt(h, initialized(alice, blockB), rentNonce) },
			ixs:   []txwire.Instruction{nonSigner(spl.SystemAdvanceNonce(nonceKey, alice), alice)},
			err:   runtime.ErrMissingRequiredSignature},
		{name: "advance-uninitialized",
			setup: func(h *programtest.Harness) { nonceAt(h, spl.NonceState{}, rentNonce) },
			ixs:   []txwire.Instruction{spl.SystemAdvanceNonce(nonceKey, alice)},
			err:   runtime.ErrInvalidAccountData},
		{name: "withdraw-keeping-rent",
			setup: func(h *programtest.Harness) { nonceAt(h, initialized(alice, blockB), rentNonce+500) },
			ixs:   []txwire.Instruction{withdrawNonce(nonceKey, bob, alice, 500)},
			want:  ptr(initialized(alice, blockB)),
			check: func(t *testing.T, h *programtest.Harness) {
				if h.Lamports(bob) != programtest.SOL+500 || h.Lamports(nonceKey) != rentNonce {
					t.Errorf("bob %d nonce %d", h.Lamports(bob), h.Lamports(nonceKey))
				}
			}},
		{name: "withdraw-into-rent",
			setup: func(h *programtest.Harness) { nonceAt(h, initialized(alice, blockB), rentNonce+500) },
			ixs:   []txwire.Instruction{withdrawNonce(nonceKey, bob, alice, 501)},
			err:   runtime.ErrInsufficientFunds},
		{name: "withdraw-all",
			setup: func(h *programtest.Harness) { nonceAt(h, initialized(alice, blockB), rentNonce) },
			ixs:   []txwire.Instruction{withdrawNonce(nonceKey, bob, alice, rentNonce)},
			check: func(t *testing.T, h *programtest.Harness) {
				if h.Lamports(nonceKey) != 0 || h.Lamports(bob) != programtest.SOL+rentNonce {
					t.Errorf("nonce %d bob %d", h.Lamports(nonceKey), h.Lamports(bob))
				}
			}},
		{name: "withdraw-all-same-block",
			setup: func(h *programtest.Harness) { nonceAt(h, initialized(alice, advanced), rentNonce) },
			ixs:   []txwire.Instruction{withdrawNonce(nonceKey, bob, alice, rentNonce)},
			err:   system.ErrNonceBlockhashNotExpired},
		{name: "withdraw-wrong-signer",
			setup: func(h *programtest.Harness) { nonceAt(h, initialized(alice, blockB), rentNonce+500) },
			ixs:   []txwire.Instruction{withdrawNonce(nonceKey, bob, bob, 1)},
			err:   runtime.ErrMissingRequiredSignature},
		{name: "withdraw-uninitialized-signed-by-itself",
			setup: func(h *programtest.Harness) { nonceAt(h, spl.NonceState{}, rentNonce+10) },
			ixs:   []txwire.Instruction{withdrawNonce(nonceKey, bob, nonceKey, 10)},
			check: func(t *testing.T, h *programtest.Harness) {
				if h.Lamports(bob) != programtest.SOL+10 {
					t.Errorf("bob %d", h.Lamports(bob))
				}
			}},
		{name: "authorize",
			setup: func(h *programtest.Harness) { nonceAt(h, initialized(alice, blockB), rentNonce) },
			ixs:   []txwire.Instruction{authorizeNonce(nonceKey, alice, bob)},
			want:  ptr(initialized(bob, blockB))},
		{name: "authorize-wrong-signer",
			setup: func(h *programtest.Harness) { nonceAt(h, initialized(alice, blockB), rentNonce) },
			ixs:   []txwire.Instruction{authorizeNonce(nonceKey, bob, bob)},
			err:   runtime.ErrMissingRequiredSignature},
		{name: "upgrade-legacy",
			setup: func(h *programtest.Harness) {
				st := initialized(alice, blockB)
				st.Version = spl.NonceVersionLegacy
				nonceAt(h, st, rentNonce)
			},
			ixs:  []txwire.Instruction{upgradeNonce(nonceKey)},
			want: ptr(initialized(alice, spl.DurableNonce(blockB)))},
		{name: "upgrade-current",
			setup: func(h *programtest.Harness) { nonceAt(h, initialized(alice, blockB), rentNonce) },
			ixs:   []txwire.Instruction{upgradeNonce(nonceKey)},
			err:   runtime.ErrInvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.Env.Blockhash, h.Env.LamportsPerSignature = blockA, 5000
			h.Fund(alice, programtest.SOL)
			h.Fund(bob, programtest.SOL)
			if tc.setup != nil {
				tc.setup(h)
			}
			res := h.Run(payer, tc.ixs...)
			if tc.err != nil {
				res.RequireError(t, len(tc.ixs)-1, tc.err)
				return
			}
			res.RequireSuccess(t)
			if tc.want != nil {
				got, err := spl.DecodeNonce(h.Account(nonceKey).Data)
				if err != nil || got != *tc.want {
					t.Fatalf("nonce state %+v (%v), want %+v", got, err, *tc.want)
				}
			}
			if tc.check != nil {
				tc.check(t, h)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
