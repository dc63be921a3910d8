package ata_test

import (
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/programs/ata"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// FuzzATA feeds arbitrary instruction data and account selections to the
// ATA program (and, through it, to System and the token programs): no
// panics, and successes conserve lamports.
func FuzzATA(f *testing.F) {
	const s, w = 0x10, 0x20
	ataT := spl.AssociatedTokenAddress(wallet, mint, spl.TokenProgramID)
	ata22 := spl.AssociatedTokenAddress(wallet, mint, spl.Token2022ProgramID)
	nested := spl.AssociatedTokenAddress(ataT, mint, spl.TokenProgramID)
	pool := []solana.PublicKey{payer, ataT, wallet, mint, runtime.SystemProgramID, spl.TokenProgramID,
		spl.Token2022ProgramID, ata22, nested, mintAuth}
	create := []byte{0 | s | w, 1 | w, 2, 3, 4, 5}
	f.Add([]byte{}, create)
	f.Add([]byte{1}, create)
	f.Add([]byte{1}, []byte{0 | s | w, 7 | w, 2, 3, 4, 6})
	f.Add([]byte{2}, []byte{8 | w, 3, 1 | w, 1, 3, 2 | s | w, 5})
	f.Add([]byte{3}, create)
	f.Fuzz(func(t *testing.T, data, sel []byte) {
		h := newHarness(t, spl.TokenProgramID)
		h.CheckRent = false
		h.Fund(wallet, 1000)
		h.FuzzInstruction(ata.ProgramID, pool, data, sel)
	})
}
