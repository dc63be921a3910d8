package ata_test

import (
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/programs"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/programtest"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// nativeHarness is a harness with the genesis native mints.
func nativeHarness(t *testing.T) *programtest.Harness {
	h := programtest.New(t, programs.Builtins()...)
	for k, a := range programs.GenesisAccounts(h.Env.Rent) {
		h.SetAccount(k, *a)
	}
	h.Fund(payer, 10*programtest.SOL)
	h.Fund(wallet, 10*programtest.SOL)
	return h
}

// TestNativeATA covers the wrapped-SOL associated token accounts that
// @solana/spl-token's createWrappedNativeAccount (create ATA, System
// transfer, SyncNative) and getOrCreateAssociatedTokenAccount(NATIVE_MINT)
// (CreateIdempotent) make, under both token programs.
func TestNativeATA(t *testing.T) {
	for _, tc := range []struct {
		program, mint solana.PublicKey
		size          int
		reserve       uint64
	}{
		{spl.TokenProgramID, spl.NativeMintID, 165, rentToken},
		{spl.Token2022ProgramID, spl.NativeMint2022ID, 170, rentToken2022},
	} {
		ataKey := spl.AssociatedTokenAddress(wallet, tc.mint, tc.program)
		create := func(idempotent bool) txwire.Instruction {
			return spl.CreateAssociatedTokenAccount(payer, wallet, tc.mint, tc.program, idempotent)
		}
		check := func(t *testing.T, h *programtest.Harness, amount uint64) {
			t.Helper()
			a := h.Account(ataKey)
			if a == nil || a.Owner != tc.program || len(a.Data) != tc.size {
				t.Fatalf("ATA %+v", a)
			}
			ta := h.TokenAccount(ataKey)
			if ta.Mint != tc.mint || ta.Owner != wallet || ta.State != spl.StateInitialized ||
				ta.IsNative == nil || *ta.IsNative != tc.reserve || ta.Amount != amount || a.Lamports != tc.reserve+amount {
				t.Errorf("ATA state %+v lamports %d, want reserve %d amount %d", ta, a.Lamports, tc.reserve, amount)
			}
			if tc.program == spl.Token2022ProgramID && (a.Data[165] != spl.AccountTypeAccount || a.Data[166] != 7) {
				t.Errorf("Token-2022 ATA lacks ImmutableOwner: % x", a.Data[165:])
			}
		}
		t.Run(tc.program.String(), func(t *testing.T) {
			t.Run("create-wrapped-native-account", func(t *testing.T) {
				h := nativeHarness(t)
				before := h.TotalLamports()
				h.Run(payer, create(true), spl.SystemTransfer(wallet, ataKey, 3*programtest.SOL),
					spl.TokenSyncNative(tc.program, ataKey)).RequireSuccess(t)
				check(t, h, 3*programtest.SOL)
				if h.Lamports(wallet) != 7*programtest.SOL || h.TotalLamports() != before {
					t.Errorf("wallet %d, total %d → %d", h.Lamports(wallet), before, h.TotalLamports())
				}
			})
			t.Run("get-or-create-twice", func(t *testing.T) {
				h := nativeHarness(t)
				h.Run(payer, create(true)).RequireSuccess(t)
				check(t, h, 0)
				payerBefore := h.Lamports(payer)
				h.Run(payer, create(true)).RequireSuccess(t)
				check(t, h, 0)
				if h.Lamports(payer) != payerBefore {
					t.Errorf("idempotent create charged %d", payerBefore-h.Lamports(payer))
				}
				h.Run(payer, create(false)).RequireError(t, 0, runtime.ErrIllegalOwner)
			})
			// SOL sent to the ATA address before the ATA exists is wrapped
			// by InitializeAccount3: amount = lamports - reserve.
			t.Run("prefunded-address", func(t *testing.T) {
				h := nativeHarness(t)
				h.Run(wallet, spl.SystemTransfer(wallet, ataKey, 2*programtest.SOL)).RequireSuccess(t)
				payerBefore := h.Lamports(payer)
				h.Run(payer, create(false)).RequireSuccess(t)
				check(t, h, 2*programtest.SOL-tc.reserve)
				if h.Lamports(payer) != payerBefore {
					t.Errorf("payer paid %d for a funded address", payerBefore-h.Lamports(payer))
				}
			})
			t.Run("prefunded-below-reserve", func(t *testing.T) {
				h := nativeHarness(t)
				h.Fund(ataKey, 1_000)
				payerBefore := h.Lamports(payer)
				h.Run(payer, create(false)).RequireSuccess(t)
				check(t, h, 0)
				if got := payerBefore - h.Lamports(payer); got != tc.reserve-1_000 {
					t.Errorf("payer topped up %d", got)
				}
			})
			// The other program's native mint is refused by
			// GetAccountDataSize (IncorrectProgramId).
			t.Run("wrong-program", func(t *testing.T) {
				h := nativeHarness(t)
				other := spl.NativeMint2022ID
				if tc.program == spl.Token2022ProgramID {
					other = spl.NativeMintID
				}
				res := h.Run(payer, spl.CreateAssociatedTokenAccount(payer, wallet, other, tc.program, true))
				res.RequireError(t, 0, runtime.ErrIncorrectProgramID)
			})
		})
	}
}
