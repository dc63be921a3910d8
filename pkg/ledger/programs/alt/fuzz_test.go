package alt_test

import (
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/programs/alt"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/programtest"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// FuzzALT feeds arbitrary instruction data and account selections to the
// lookup table program with a live, a frozen and a deactivated table
// around: it must never panic, and whatever it does conserves lamports
// (FuzzInstruction checks that) and leaves every table it owns decodable.
func FuzzALT(f *testing.F) {
	live, frozen, old := solana.PublicKey{0xc1}, solana.PublicKey{0xc2}, solana.PublicKey{0xc3}
	created, _ := spl.LookupTableAddress(authority, current-1)
	pool := []solana.PublicKey{payer, authority, live, frozen, old, created, alt.ProgramID, solana.SystemProgramID}
	const s, w = 0x10, 0x20
	ix, _ := spl.ALTCreate(authority, payer, current-1)
	f.Add(ix.Data, []byte{5 | w, 1, 0 | s | w, 7})
	f.Add(spl.ALTExtend(live, authority, payer, []solana.PublicKey{addrA}).Data, []byte{2 | w, 1 | s, 0 | s | w, 7})
	f.Add(spl.ALTFreeze(live, authority).Data, []byte{2 | w, 1 | s})
	f.Add(spl.ALTDeactivate(live, authority).Data, []byte{2 | w, 1 | s})
	f.Add(spl.ALTClose(old, authority, payer).Data, []byte{4 | w, 1 | s, 0 | w})
	f.Fuzz(func(t *testing.T, data, sel []byte) {
		h := newHarness(t)
		h.CheckRent = false
		h.Fund(authority, programtest.SOL)
		auth := authority
		table(h, live, spl.LookupTable{DeactivationSlot: spl.LookupTableActive, Authority: &auth, Addresses: []solana.PublicKey{addrA}})
		table(h, frozen, spl.LookupTable{DeactivationSlot: spl.LookupTableActive, Addresses: []solana.PublicKey{addrA, addrB}})
		table(h, old, spl.LookupTable{DeactivationSlot: 1, Authority: &auth})
		h.FuzzInstruction(alt.ProgramID, pool, data, sel)
		for _, k := range pool {
			if a := h.Account(k); a != nil && a.Owner == alt.ProgramID && len(a.Data) > 0 {
				if _, err := spl.DecodeLookupTable(a.Data); err != nil {
					t.Fatalf("table %s left undecodable: %v", k, err)
				}
			}
		}
	})
}
