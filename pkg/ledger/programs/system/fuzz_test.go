package system_test

import (
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/programs/programtest"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/system"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// FuzzSystem feeds arbitrary instruction data and account selections to
// the System program: it must never panic, and successes conserve lamports.
func FuzzSystem(f *testing.F) {
	seeded, _ := solana.CreateWithSeed(alice, "vault", owner)
	pool := []solana.PublicKey{payer, alice, bob, seeded, owner, runtime.SystemProgramID}
	sel := func(flags ...byte) []byte { return flags }
	const s, w = 0x10, 0x20
	f.Add(spl.SystemTransfer(payer, alice, 1).Data, sel(0|s|w, 1|w))
	f.Add(spl.SystemCreateAccount(payer, alice, rent0, 0, owner).Data, sel(0|s|w, 1|s|w))
	f.Add(spl.SystemCreateAccountWithSeed(payer, seeded, alice, "vault", 2*rent0, 10, owner).Data, sel(0|s|w, 3|w, 1|s))
	f.Add(spl.SystemAllocateWithSeed(seeded, alice, "vault", 10, owner).Data, sel(3|w, 1|s))
	f.Add(spl.SystemAssignWithSeed(seeded, alice, "vault", owner).Data, sel(3|w, 1|s))
	f.Add(spl.SystemTransferWithSeed(seeded, alice, "vault", owner, bob, 5).Data, sel(3|w, 1|s, 2|w))
	f.Add(spl.SystemAllocate(alice, 8).Data, sel(1|s|w))
	f.Add(spl.SystemAssign(alice, owner).Data, sel(1|s|w))
	f.Add([]byte{4, 0, 0, 0}, sel(1|w))
	f.Fuzz(func(t *testing.T, data, sel []byte) {
		h := programtest.New(t, system.Registration())
		h.CheckRent = false
		h.Fund(payer, 10*programtest.SOL)
		h.Fund(alice, programtest.SOL)
		h.SetAccount(bob, runtime.Account{Lamports: programtest.SOL, Owner: runtime.SystemProgramID, Data: []byte{1, 2, 3}})
		h.Fund(seeded, programtest.SOL)
		h.FuzzInstruction(system.ProgramID, pool, data, sel)
	})
}
