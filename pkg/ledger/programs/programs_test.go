package programs_test

import (
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/programs"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/programtest"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

func TestBuiltins(t *testing.T) {
	want := map[solana.PublicKey]bool{
		runtime.SystemProgramID:         true,
		runtime.ComputeBudgetProgramID:  true,
		spl.TokenProgramID:              false,
		spl.Token2022ProgramID:          false,
		spl.AssociatedTokenProgramID:    false,
		spl.MemoProgramID:               false,
		spl.MemoV1ProgramID:             false,
		spl.AddressLookupTableProgramID: false,
	}
	regs := programs.Builtins()
	if len(regs) != len(want) {
		t.Fatalf("%d builtins, want %d", len(regs), len(want))
	}
	for _, r := range regs {
		builtin, ok := want[r.ID]
		if !ok {
			t.Errorf("unexpected program %s", r.ID)
			continue
		}
		delete(want, r.ID)
		if r.Builtin != builtin || r.Program == nil || r.Name == "" {
			t.Errorf("%s: builtin=%v program=%v name=%q", r.ID, r.Builtin, r.Program != nil, r.Name)
		}
	}
	if programs.Builtins()[0] == regs[0] {
		t.Error("Builtins must return fresh registrations")
	}
}

// TestPaymentFlow runs what a ferry payment does on the base chain in one
// transaction: compute budget, idempotent ATA creation for the recipient,
// TransferChecked and a memo.
func TestPaymentFlow(t *testing.T) {
	h := programtest.New(t, programs.Builtins()...)
	payer, recipient, mintAuth := solana.NewWallet().PublicKey(), solana.NewWallet().PublicKey(), solana.NewWallet().PublicKey()
	mint := solana.NewWallet().PublicKey()
	h.Fund(payer, 10*programtest.SOL)
	h.AddMint(mint, spl.TokenProgramID, spl.Mint{MintAuthority: &mintAuth, Supply: 5_000_000, Decimals: 6})
	payerATA := spl.AssociatedTokenAddress(payer, mint, spl.TokenProgramID)
	h.AddTokenAccount(payerATA, spl.TokenProgramID, spl.TokenAccount{Mint: mint, Owner: payer, Amount: 5_000_000})
	recipientATA := spl.AssociatedTokenAddress(recipient, mint, spl.TokenProgramID)

	before := h.TotalLamports()
	res := h.Run(payer,
		txwire.Instruction{ProgramID: runtime.ComputeBudgetProgramID, Data: []byte{2, 0x40, 0x0d, 0x03, 0x00}},
		spl.CreateAssociatedTokenAccount(payer, recipient, mint, spl.TokenProgramID, true),
		spl.TokenTransferChecked(spl.TokenProgramID, payerATA, mint, recipientATA, payer, 1_500_000, 6),
		spl.Memo("invoice 42", payer),
	)
	res.RequireSuccess(t)
	res.RequireLogs(t,
		"Program ComputeBudget111111111111111111111111111111 invoke [1]",
		"Program ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL invoke [1]",
		"Program log: CreateIdempotent",
		"Program log: Initialize the associated token account",
		"Program TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA invoke [1]",
		"Program log: Instruction: TransferChecked",
		"Program MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr invoke [1]",
		"Program log: Signed by:",
		"Program log: "+payer.String(),
		"Program log: Memo (len 10)",
		"Program log: invoice 42",
		"Program MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr success",
	)
	if got := h.TokenAccount(recipientATA).Amount; got != 1_500_000 {
		t.Errorf("recipient amount %d", got)
	}
	if got := h.TokenAccount(payerATA).Amount; got != 3_500_000 {
		t.Errorf("payer amount %d", got)
	}
	if h.TotalLamports() != before {
		t.Errorf("lamports not conserved: %d → %d", before, h.TotalLamports())
	}
	if h.Lamports(recipientATA) != 2_039_280 {
		t.Errorf("ATA lamports %d", h.Lamports(recipientATA))
	}
	t.Log(res)
}

// TestWrappedSOLFlow wraps SOL in an ATA (System transfer + SyncNative),
// moves it with TransferChecked and unwraps it with CloseAccount, under both
// token programs.
func TestWrappedSOLFlow(t *testing.T) {
	for _, tc := range []struct {
		program, nativeMint solana.PublicKey
		reserve             uint64
	}{
		{spl.TokenProgramID, spl.NativeMintID, 2_039_280},
		{spl.Token2022ProgramID, spl.NativeMint2022ID, 2_074_080},
	} {
		t.Run(tc.program.String(), func(t *testing.T) {
			h := programtest.New(t, programs.Builtins()...)
			for k, a := range programs.GenesisAccounts(h.Env.Rent) {
				h.SetAccount(k, *a)
			}
			alice, bob := solana.NewWallet().PublicKey(), solana.NewWallet().PublicKey()
			h.Fund(alice, 5*programtest.SOL)
			h.Fund(bob, programtest.SOL)
			aliceATA := spl.AssociatedTokenAddress(alice, tc.nativeMint, tc.program)
			bobATA := spl.AssociatedTokenAddress(bob, tc.nativeMint, tc.program)
			before := h.TotalLamports()

			h.Run(alice,
				spl.CreateAssociatedTokenAccount(alice, alice, tc.nativeMint, tc.program, true),
				spl.SystemTransfer(alice, aliceATA, programtest.SOL),
				spl.TokenSyncNative(tc.program, aliceATA),
			).RequireSuccess(t)
			a := h.TokenAccount(aliceATA)
			if a.IsNative == nil || *a.IsNative != tc.reserve || a.Amount != programtest.SOL || h.Lamports(aliceATA) != tc.reserve+programtest.SOL {
				t.Fatalf("wrapped account %+v, lamports %d", a, h.Lamports(aliceATA))
			}

			h.Run(bob,
				spl.CreateAssociatedTokenAccount(bob, bob, tc.nativeMint, tc.program, true),
				spl.TokenTransferChecked(tc.program, aliceATA, tc.nativeMint, bobATA, alice, 400_000_000, 9),
			).RequireSuccess(t)
			if h.TokenAccount(bobATA).Amount != 400_000_000 || h.Lamports(bobATA) != tc.reserve+400_000_000 {
				t.Fatalf("bob %+v lamports %d", h.TokenAccount(bobATA), h.Lamports(bobATA))
			}

			aliceBefore := h.Lamports(alice)
			res := h.Run(alice, spl.TokenCloseAccount(tc.program, aliceATA, alice, alice))
			res.RequireSuccess(t)
			res.RequireLogs(t, "Program log: Instruction: CloseAccount")
			if h.Account(aliceATA) != nil {
				t.Error("closed account still exists")
			}
			if got := h.Lamports(alice) - aliceBefore; got != tc.reserve+600_000_000 {
				t.Errorf("unwrapped %d lamports", got)
			}
			if h.TotalLamports() != before {
				t.Errorf("lamports not conserved: %d → %d", before, h.TotalLamports())
			}
		})
	}
}

// TestReturnDataResets: every instruction starts with empty return data,
// so a transaction reports what its last program set, if anything (as
// LiteSVM shows the real runtime doing).
func TestReturnDataResets(t *testing.T) {
	h := programtest.New(t, programs.Builtins()...)
	payer, mint := solana.PublicKey{1}, solana.PublicKey{2}
	h.Fund(payer, programtest.SOL)
	h.AddMint(mint, spl.TokenProgramID, spl.Mint{Decimals: 2})
	size := txwire.Instruction{ProgramID: spl.TokenProgramID, Accounts: []txwire.AccountMeta{txwire.Readonly(mint)}, Data: []byte{21}}
	res := h.Run(payer, size)
	res.RequireSuccess(t)
	if res.ReturnData == nil || res.ReturnData.ProgramID != spl.TokenProgramID || len(res.ReturnData.Data) != 8 {
		t.Fatalf("alone: %+v", res.ReturnData)
	}
	for _, next := range []txwire.Instruction{spl.Memo("after"), {ProgramID: runtime.ComputeBudgetProgramID, Data: []byte{3, 1, 0, 0, 0, 0, 0, 0, 0}}} {
		res := h.Run(payer, size, next)
		res.RequireSuccess(t)
		if res.ReturnData != nil {
			t.Fatalf("followed by %s: %+v", next.ProgramID, res.ReturnData)
		}
	}
}
