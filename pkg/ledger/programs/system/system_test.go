package system_test

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/programs/programtest"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/system"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

var (
	payer = solana.MustPublicKeyFromBase58("3rXKwQ1kpjBd5tdcco32qsvqUh1BnZjcYnS5kYrP7AYE")
	alice = solana.MustPublicKeyFromBase58("HrVRhFn8zUawCGSHHnn5N4mEaaLHFWt2jQMceJXaQz7B")
	bob   = solana.MustPublicKeyFromBase58("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")
	owner = solana.MustPublicKeyFromBase58("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
)

const rent0 = 890_880 // rent-exempt minimum for 0 bytes

func newHarness(t *testing.T) *programtest.Harness {
	h := programtest.New(t, system.Registration())
	h.Fund(payer, 10*programtest.SOL)
	return h
}

// nonSigner rewrites an instruction so that key is not a signer.
func nonSigner(ix txwire.Instruction, key solana.PublicKey) txwire.Instruction {
	metas := append([]txwire.AccountMeta(nil), ix.Accounts...)
	for i := range metas {
		if metas[i].PublicKey == key {
			metas[i].IsSigner = false
		}
	}
	ix.Accounts = metas
	return ix
}

func addr(k solana.PublicKey) string {
	return fmt.Sprintf("Address { address: %s, base: None }", k)
}

func seedAddr(k, base solana.PublicKey) string {
	return fmt.Sprintf("Address { address: %s, base: Some(%s) }", k, base)
}

func mustSeed(t *testing.T, base solana.PublicKey, seed string, owner solana.PublicKey) solana.PublicKey {
	k, err := solana.CreateWithSeed(base, seed, owner)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSystemInstructions(t *testing.T) {
	seeded := mustSeed(t, alice, "vault", owner)
	seededSys := mustSeed(t, alice, "wallet", runtime.SystemProgramID)
	cases := []struct {
		name  string
		setup func(h *programtest.Harness)
		ixs   []txwire.Instruction
		err   *runtime.InstructionError
		logs  []string
		check func(t *testing.T, h *programtest.Harness)
	}{
		{name: "transfer",
			ixs: []txwire.Instruction{spl.SystemTransfer(payer, alice, 2*rent0)},
			check: func(t *testing.T, h *programtest.Harness) {
				if h.Lamports(alice) != 2*rent0 || h.Lamports(payer) != 10*programtest.SOL-2*rent0 {
					t.Errorf("balances %d %d", h.Lamports(alice), h.Lamports(payer))
				}
			}},
		{name: "transfer-to-self",
			ixs: []txwire.Instruction{spl.SystemTransfer(payer, payer, 5)},
			check: func(t *testing.T, h *programtest.Harness) {
				if h.Lamports(payer) != 10*programtest.SOL {
					t.Errorf("balance %d", h.Lamports(payer))
				}
			}},
		{name: "transfer-insufficient",
			ixs:  []txwire.Instruction{spl.SystemTransfer(payer, alice, 10*programtest.SOL+1)},
			err:  system.ErrResultWithNegativeLamports,
			logs: []string{"Transfer: insufficient lamports 10000000000, need 10000000001", "Program 11111111111111111111111111111111 failed: custom program error: 0x1"}},
		{name: "transfer-from-carries-data",
			setup: func(h *programtest.Harness) {
				h.SetAccount(alice, runtime.Account{Lamports: programtest.SOL, Owner: runtime.SystemProgramID, Data: make([]byte, 8)})
			},
			ixs:  []txwire.Instruction{spl.SystemTransfer(alice, bob, rent0)},
			err:  runtime.ErrInvalidArgument,
			logs: []string{"Transfer: `from` must not carry data"}},
		{name: "transfer-from-not-signer",
			setup: func(h *programtest.Harness) { h.Fund(alice, programtest.SOL) },
			ixs:   []txwire.Instruction{nonSigner(spl.SystemTransfer(alice, bob, rent0), alice)},
			err:   runtime.ErrMissingRequiredSignature,
			logs:  []string{"Transfer: `from` account " + alice.String() + " must sign"}},
		{name: "transfer-from-not-system-owned",
			setup: func(h *programtest.Harness) {
				h.SetAccount(alice, runtime.Account{Lamports: programtest.SOL, Owner: owner})
			},
			ixs: []txwire.Instruction{spl.SystemTransfer(alice, bob, rent0)},
			err: runtime.ErrExternalAccountLamportSpend},
		{name: "transfer-missing-account",
			ixs: []txwire.Instruction{{ProgramID: system.ProgramID, Accounts: []txwire.AccountMeta{txwire.WritableSigner(payer)},
				Data: spl.SystemTransfer(payer, alice, 1).Data}},
			err: runtime.ErrNotEnoughAccountKeys},
		{name: "create-account",
			ixs: []txwire.Instruction{spl.SystemCreateAccount(payer, alice, 2_039_280, 165, owner)},
			check: func(t *testing.T, h *programtest.Harness) {
				a := h.Account(alice)
				if a == nil || a.Lamports != 2_039_280 || a.Owner != owner || len(a.Data) != 165 {
					t.Errorf("account %+v", a)
				}
			}},
		{name: "create-account-already-funded",
			setup: func(h *programtest.Harness) { h.Fund(alice, 1) },
			ixs:   []txwire.Instruction{spl.SystemCreateAccount(payer, alice, 2_039_280, 165, owner)},
			err:   system.ErrAccountAlreadyInUse,
			logs:  []string{"Create Account: account " + addr(alice) + " already in use"}},
		{name: "create-account-has-data",
			setup: func(h *programtest.Harness) {
				h.SetAccount(alice, runtime.Account{Owner: runtime.SystemProgramID, Data: []byte{1}})
			},
			ixs:  []txwire.Instruction{spl.SystemCreateAccount(payer, alice, 2_039_280, 165, owner)},
			err:  system.ErrAccountAlreadyInUse,
			logs: []string{"Allocate: account " + addr(alice) + " already in use"}},
		{name: "create-account-foreign-owner",
			setup: func(h *programtest.Harness) { h.SetAccount(alice, runtime.Account{Owner: owner}) },
			ixs:   []txwire.Instruction{spl.SystemCreateAccount(payer, alice, 2_039_280, 165, owner)},
			err:   system.ErrAccountAlreadyInUse,
			logs:  []string{"Allocate: account " + addr(alice) + " already in use"}},
		{name: "create-account-too-large",
			ixs:  []txwire.Instruction{spl.SystemCreateAccount(payer, alice, programtest.SOL, system.MaxPermittedDataLength+1, owner)},
			err:  system.ErrInvalidAccountDataLength,
			logs: []string{"Allocate: requested 10485761, max allowed 10485760"}},
		{name: "create-account-new-not-signer",
			ixs:  []txwire.Instruction{nonSigner(spl.SystemCreateAccount(payer, alice, 2_039_280, 165, owner), alice)},
			err:  runtime.ErrMissingRequiredSignature,
			logs: []string{"Allocate: 'to' account " + addr(alice) + " must sign"}},
		{name: "create-account-payer-poor",
			setup: func(h *programtest.Harness) { h.Fund(bob, rent0) },
			ixs:   []txwire.Instruction{spl.SystemCreateAccount(bob, alice, 2_039_280, 165, owner)},
			err:   system.ErrResultWithNegativeLamports,
			logs:  []string{fmt.Sprintf("Transfer: insufficient lamports %d, need 2039280", rent0)}},
		{name: "allocate-and-assign",
			setup: func(h *programtest.Harness) { h.Fund(alice, programtest.SOL) },
			ixs:   []txwire.Instruction{spl.SystemAllocate(alice, 100), spl.SystemAssign(alice, owner)},
			check: func(t *testing.T, h *programtest.Harness) {
				if a := h.Account(alice); a.Owner != owner || len(a.Data) != 100 {
					t.Errorf("account %+v", a)
				}
			}},
		{name: "allocate-in-use",
			setup: func(h *programtest.Harness) {
				h.SetAccount(alice, runtime.Account{Lamports: programtest.SOL, Owner: runtime.SystemProgramID, Data: []byte{0}})
			},
			ixs:  []txwire.Instruction{spl.SystemAllocate(alice, 100)},
			err:  system.ErrAccountAlreadyInUse,
			logs: []string{"Allocate: account " + addr(alice) + " already in use"}},
		{name: "allocate-not-signer",
			setup: func(h *programtest.Harness) { h.Fund(alice, programtest.SOL) },
			ixs:   []txwire.Instruction{nonSigner(spl.SystemAllocate(alice, 100), alice)},
			err:   runtime.ErrMissingRequiredSignature},
		{name: "assign-not-signer",
			setup: func(h *programtest.Harness) { h.Fund(alice, programtest.SOL) },
			ixs:   []txwire.Instruction{nonSigner(spl.SystemAssign(alice, owner), alice)},
			err:   runtime.ErrMissingRequiredSignature,
			logs:  []string{"Assign: account " + addr(alice) + " must sign"}},
		{name: "assign-same-owner-needs-no-signature",
			setup: func(h *programtest.Harness) { h.Fund(alice, programtest.SOL) },
			ixs:   []txwire.Instruction{nonSigner(spl.SystemAssign(alice, runtime.SystemProgramID), alice)}},
		{name: "assign-foreign-account",
			setup: func(h *programtest.Harness) {
				h.SetAccount(alice, runtime.Account{Lamports: programtest.SOL, Owner: bob})
			},
			ixs: []txwire.Instruction{spl.SystemAssign(alice, owner)},
			err: runtime.ErrModifiedProgramID},
		{name: "create-account-with-seed",
			ixs: []txwire.Instruction{spl.SystemCreateAccountWithSeed(payer, seeded, alice, "vault", 2_039_280, 165, owner)},
			check: func(t *testing.T, h *programtest.Harness) {
				if a := h.Account(seeded); a == nil || a.Owner != owner || len(a.Data) != 165 || a.Lamports != 2_039_280 {
					t.Errorf("account %+v", a)
				}
			}},
		{name: "create-account-with-seed-in-use",
			setup: func(h *programtest.Harness) { h.Fund(seeded, 1) },
			ixs:   []txwire.Instruction{spl.SystemCreateAccountWithSeed(payer, seeded, alice, "vault", 2_039_280, 165, owner)},
			err:   system.ErrAccountAlreadyInUse,
			logs:  []string{"Create Account: account " + seedAddr(seeded, alice) + " already in use"}},
		{name: "create-account-with-seed-mismatch",
			ixs:  []txwire.Instruction{spl.SystemCreateAccountWithSeed(payer, bob, alice, "vault", 2_039_280, 165, owner)},
			err:  system.ErrAddressWithSeedMismatch,
			logs: []string{"Create: address " + bob.String() + " does not match derived address " + seeded.String()}},
		{name: "create-account-with-seed-base-not-signer",
			ixs: []txwire.Instruction{nonSigner(spl.SystemCreateAccountWithSeed(payer, seeded, alice, "vault", 2_039_280, 165, owner), alice)},
			err: runtime.ErrMissingRequiredSignature},
		{name: "create-account-with-seed-too-long",
			ixs: []txwire.Instruction{spl.SystemCreateAccountWithSeed(payer, seeded, alice, strings.Repeat("s", 33), 2_039_280, 165, owner)},
			// Agave's System program turns the AddressError into Custom(0).
			err: runtime.Custom(0)},
		{name: "create-account-with-seed-pda-marker-owner",
			ixs: []txwire.Instruction{spl.SystemCreateAccountWithSeed(payer, seeded, alice, "vault", 2_039_280, 165,
				solana.PublicKeyFromBytes([]byte("0123456789aProgramDerivedAddress")))},
			err: runtime.Custom(2)}, // AddressError::IllegalOwner
		{name: "allocate-with-seed",
			setup: func(h *programtest.Harness) { h.Fund(seeded, programtest.SOL) },
			ixs:   []txwire.Instruction{spl.SystemAllocateWithSeed(seeded, alice, "vault", 64, owner)},
			check: func(t *testing.T, h *programtest.Harness) {
				if a := h.Account(seeded); a.Owner != owner || len(a.Data) != 64 {
					t.Errorf("account %+v", a)
				}
			}},
		{name: "assign-with-seed",
			setup: func(h *programtest.Harness) { h.Fund(seeded, programtest.SOL) },
			ixs:   []txwire.Instruction{spl.SystemAssignWithSeed(seeded, alice, "vault", owner)},
			check: func(t *testing.T, h *programtest.Harness) {
				if a := h.Account(seeded); a.Owner != owner {
					t.Errorf("account %+v", a)
				}
			}},
		{name: "assign-with-seed-mismatch",
			setup: func(h *programtest.Harness) { h.Fund(bob, programtest.SOL) },
			ixs:   []txwire.Instruction{spl.SystemAssignWithSeed(bob, alice, "vault", owner)},
			err:   system.ErrAddressWithSeedMismatch},
		{name: "transfer-with-seed",
			setup: func(h *programtest.Harness) { h.Fund(seededSys, programtest.SOL) },
			ixs:   []txwire.Instruction{spl.SystemTransferWithSeed(seededSys, alice, "wallet", runtime.SystemProgramID, bob, rent0)},
			check: func(t *testing.T, h *programtest.Harness) {
				if h.Lamports(bob) != rent0 || h.Lamports(seededSys) != programtest.SOL-rent0 {
					t.Errorf("balances %d %d", h.Lamports(bob), h.Lamports(seededSys))
				}
			}},
		{name: "transfer-with-seed-mismatch",
			setup: func(h *programtest.Harness) { h.Fund(seededSys, programtest.SOL) },
			ixs:   []txwire.Instruction{spl.SystemTransferWithSeed(seededSys, alice, "other", runtime.SystemProgramID, bob, rent0)},
			err:   system.ErrAddressWithSeedMismatch,
			logs:  []string{"Transfer: 'from' address " + seededSys.String() + " does not match derived address " + mustSeed(t, alice, "other", runtime.SystemProgramID).String()}},
		{name: "transfer-with-seed-base-not-signer",
			setup: func(h *programtest.Harness) { h.Fund(seededSys, programtest.SOL) },
			ixs:   []txwire.Instruction{nonSigner(spl.SystemTransferWithSeed(seededSys, alice, "wallet", runtime.SystemProgramID, bob, rent0), alice)},
			err:   runtime.ErrMissingRequiredSignature,
			logs:  []string{"Transfer: 'from' account " + alice.String() + " must sign"}},
		{name: "advance-nonce-missing-sysvar",
			ixs: []txwire.Instruction{{ProgramID: system.ProgramID, Accounts: []txwire.AccountMeta{txwire.Writable(alice)},
				Data: []byte{4, 0, 0, 0}}},
			err: runtime.ErrNotEnoughAccountKeys},
		{name: "transfer-zero-to-read-only",
			ixs: []txwire.Instruction{func() txwire.Instruction {
				ix := spl.SystemTransfer(payer, alice, 0)
				ix.Accounts[1].IsWritable = false
				return ix
			}()},
			err: runtime.ErrReadonlyLamportChange},
		{name: "garbage-data",
			ixs: []txwire.Instruction{{ProgramID: system.ProgramID, Accounts: []txwire.AccountMeta{txwire.WritableSigner(payer)},
				Data: []byte{99, 0, 0, 0}}},
			err: runtime.ErrInvalidInstructionData},
		{name: "short-data",
			ixs: []txwire.Instruction{{ProgramID: system.ProgramID, Accounts: []txwire.AccountMeta{txwire.WritableSigner(payer)},
				Data: []byte{2, 0, 0, 0, 1}}},
			err: runtime.ErrInvalidInstructionData},
		{name: "seed-not-utf8",
			ixs: []txwire.Instruction{{ProgramID: system.ProgramID, Accounts: []txwire.AccountMeta{txwire.WritableSigner(payer)},
				Data: append(binary.LittleEndian.AppendUint64(append([]byte{10, 0, 0, 0}, alice[:]...), 1), append([]byte{0xff}, owner[:]...)...)}},
			err: runtime.ErrInvalidInstructionData},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			if tc.setup != nil {
				tc.setup(h)
			}
			before := h.TotalLamports()
			res := h.Run(payer, tc.ixs...)
			if tc.err != nil {
				res.RequireError(t, 0, tc.err)
			} else {
				res.RequireSuccess(t)
			}
			res.RequireLogs(t, tc.logs...)
			if h.TotalLamports() != before {
				t.Errorf("lamports not conserved: %d → %d", before, h.TotalLamports())
			}
			for _, l := range res.Logs {
				if strings.Contains(l, "consumed") {
					t.Errorf("builtin logged %q", l)
				}
			}
			if tc.check != nil {
				tc.check(t, h)
			}
		})
	}
}

func TestSystemComputeUnits(t *testing.T) {
	h := newHarness(t)
	res := h.Run(payer, spl.SystemTransfer(payer, alice, rent0), spl.SystemTransfer(payer, bob, rent0))
	res.RequireSuccess(t)
	if res.ComputeUsed != 2*system.BaseCost {
		t.Errorf("compute used %d, want %d", res.ComputeUsed, 2*system.BaseCost)
	}
	want := []string{
		"Program 11111111111111111111111111111111 invoke [1]",
		"Program 11111111111111111111111111111111 success",
		"Program 11111111111111111111111111111111 invoke [1]",
		"Program 11111111111111111111111111111111 success",
	}
	if strings.Join(res.Logs, "\n") != strings.Join(want, "\n") {
		t.Errorf("logs %q", res.Logs)
	}
}

// TestReadonlyRecipient checks that the runtime's privilege rules apply to
// what the program does.
func TestReadonlyRecipient(t *testing.T) {
	h := newHarness(t)
	ix := spl.SystemTransfer(payer, alice, rent0)
	ix.Accounts[1].IsWritable = false
	h.Run(payer, ix).RequireError(t, 0, runtime.ErrReadonlyLamportChange)
}
