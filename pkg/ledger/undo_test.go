package ledger

import (
	"math/rand/v2"
	"testing"

	"github.com/gagliardetto/solana-go"
)

// TestUndoMap checks that the encoded undo history gives back every value
// it was given: nil values, accounts with and without data, runs of
// zeros, values replaced (a forked account's copy), and the decode into a
// reused scratch account, whose data must not leak from one value into
// the next.
func TestUndoMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 16))
	key := func() (k solana.PublicKey) {
		for i := range k {
			k[i] = byte(rng.Uint32())
		}
		return k
	}
	account := func() *Account {
		a := &Account{Lamports: rng.Uint64(), Owner: key(), Executable: rng.IntN(2) == 0, RentEpoch: rng.Uint64()}
		switch rng.IntN(4) {
		case 0: // no data
		case 1:
			a.Data = make([]byte, 165) // all zeros
		default:
			a.Data = make([]byte, 1+rng.IntN(300))
			for i := range a.Data {
				if rng.IntN(3) == 0 {
					a.Data[i] = byte(rng.Uint32())
				}
			}
		}
		if rng.IntN(4) == 0 {
			a.RentEpoch = ^uint64(0)
		}
		return a
	}
	u := newUndoMap()
	want := map[solana.PublicKey]*Account{}
	var keys []solana.PublicKey
	for range 2000 {
		k := key()
		if len(keys) > 0 && rng.IntN(10) == 0 {
			k = keys[rng.IntN(len(keys))] // replaced
		} else {
			keys = append(keys, k)
		}
		var a *Account
		if rng.IntN(5) > 0 {
			a = account()
		}
		u.set(k, a)
		want[k] = a
	}
	if u.len() != len(want) {
		t.Fatalf("len %d, want %d", u.len(), len(want))
	}
	var scratch Account
	for _, k := range keys {
		got, ok, err := u.get(k)
		if err != nil || !ok || !sameAccount(got, want[k]) {
			t.Fatalf("get %s: %+v, %v, %v; want %+v", k, got, ok, err, want[k])
		}
		into, err := u.getInto(k, &scratch)
		if err != nil || !sameAccount(into, want[k]) {
			t.Fatalf("getInto %s: %+v, %v; want %+v", k, into, err, want[k])
		}
		if into != nil && into != &scratch {
			t.Fatal("getInto allocated instead of decoding into the scratch account")
		}
		if !u.has(k) {
			t.Fatalf("has %s: false", k)
		}
	}
	other := key()
	if a, ok, err := u.get(other); a != nil || ok || err != nil || u.has(other) {
		t.Fatalf("unwritten key: %v, %v, %v", a, ok, err)
	}
	if a, err := u.getInto(other, &scratch); a != nil || err != nil {
		t.Fatalf("getInto of an unwritten key: %v, %v", a, err)
	}
}
