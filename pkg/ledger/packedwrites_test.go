package ledger

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestPackWrites: packed writes unpack to the same keys and values in the
// same order, deletions (nil) and accounts without data included.
func TestPackWrites(t *testing.T) {
	if ws, err := (PackedWrites{}).Unpack(); err != nil || len(ws) != 0 {
		t.Fatalf("zero value: %v, %v", ws, err)
	}
	rng := rand.New(rand.NewPCG(3, 9))
	var ws []AccountWrite
	for i := range 500 {
		w := AccountWrite{Key: testKey(i % 200)} // repeated keys stay in order
		if rng.IntN(5) > 0 {
			w.Account = testAccount(rng.Uint64(), rng.IntN(3)*rng.IntN(170))
		}
		ws = append(ws, w)
	}
	p := PackWrites(ws)
	got, err := p.Unpack()
	if err != nil || p.Len() != len(ws) || len(got) != len(ws) {
		t.Fatalf("unpacked %d of %d (Len %d): %v", len(got), len(ws), p.Len(), err)
	}
	for i := range ws {
		if got[i].Key != ws[i].Key || !sameAccount(got[i].Account, ws[i].Account) {
			t.Fatalf("write %d: %v, want %v", i, got[i], ws[i])
		}
	}
}

// sameAccount reports whether two values (either may be nil) are equal.
func sameAccount(a, b *Account) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Lamports == b.Lamports && a.Owner == b.Owner && a.Executable == b.Executable &&
		a.RentEpoch == b.RentEpoch && bytes.Equal(a.Data, b.Data)
}
