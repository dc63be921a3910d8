package ledger

import (
	"bytes"
	"crypto/ed25519"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// randomPostings returns n postings of random distinct addresses at slot
// (sorted), with random previous slots and indexes.
func randomPostings(rng *rand.Rand, slot uint64, n int) []addrPosting {
	ps := make([]addrPosting, n)
	for i := range ps {
		for j := range ps[i].addr {
			ps[i].addr[j] = byte(rng.Uint32())
		}
		if rng.IntN(3) > 0 {
			ps[i].prev = rng.Uint64N(slot)
		}
		x := uint32(rng.IntN(5))
		for k := 0; k <= rng.IntN(4); k++ {
			ps[i].idxs = append(ps[i].idxs, x)
			x += 1 + uint32(rng.IntN(300))
		}
	}
	slices.SortFunc(ps, func(a, b addrPosting) int { return compareKeys(a.addr, b.addr) })
	return slices.CompactFunc(ps, func(a, b addrPosting) bool { return a.addr == b.addr })
}

// withPrefixOf returns an address sharing a's first postingPrefix bytes
// and differing after them.
func withPrefixOf(a solana.PublicKey, last byte) solana.PublicKey {
	b := a
	b[31] ^= last
	return b
}

func TestSlotPostingsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	shared := randomPostings(rng, 100, 1)[0]
	collide := []addrPosting{shared, {addr: withPrefixOf(shared.addr, 1), prev: 7, idxs: []uint32{3}}}
	slices.SortFunc(collide, func(a, b addrPosting) int { return compareKeys(a.addr, b.addr) })
	for _, tc := range []struct {
		name  string
		slot  uint64
		ps    []addrPosting
		width int
	}{
		{"one", 5, []addrPosting{{addr: solana.PublicKey{1}, prev: 0, idxs: []uint32{0}}}, postingPrefix},
		{"largest values", 1<<64 - 1, []addrPosting{{addr: solana.PublicKey{2}, prev: 1<<64 - 2, idxs: []uint32{0, 1<<32 - 1}}}, postingPrefix},
		{"many", 1 << 40, randomPostings(rng, 1<<40, 5000), postingPrefix},
		{"shared prefix", 100, collide, postingFull},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := encodeSlotPostings(tc.slot, tc.ps)
			sp, err := parseSlotPostings(tc.slot, v)
			if err != nil {
				t.Fatal(err)
			}
			if sp.width != tc.width || sp.exact() != (tc.width == postingFull) || sp.n != len(tc.ps) {
				t.Fatalf("width %d, %d entries; want %d, %d", sp.width, sp.n, tc.width, len(tc.ps))
			}
			for _, want := range tc.ps {
				got, err := sp.find(want.addr)
				if err != nil {
					t.Fatal(err)
				}
				if got == nil || got.prev != want.prev || !slices.Equal(got.idxs, want.idxs) {
					t.Fatalf("%s: got %+v, want %+v", want.addr, got, want)
				}
			}
			// An address of none of the postings (and, with whole keys, one
			// sharing a posting's prefix) is not found.
			absent := []solana.PublicKey{{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}
			if tc.width == postingFull {
				absent = append(absent, withPrefixOf(tc.ps[0].addr, 2))
			}
			for _, a := range absent {
				if got, err := sp.find(a); got != nil || err != nil {
					t.Fatalf("absent %s: %+v, %v", a, got, err)
				}
			}
		})
	}
}

func TestSlotPostingsCorrupt(t *testing.T) {
	addr := solana.PublicKey{9}
	good := encodeSlotPostings(10, []addrPosting{{addr: addr, prev: 4, idxs: []uint32{1, 5}}})
	entry := func(width byte, off uint32, vars ...byte) []byte {
		v := []byte{width, 1}
		v = append(v, addr[:width]...)
		return append(binary.BigEndian.AppendUint32(v, off), vars...)
	}
	for _, tc := range []struct {
		name string
		v    []byte
	}{
		{"empty", nil},
		{"unknown width", append([]byte{16}, good[1:]...)},
		{"no count", []byte{8}},
		{"zero count", []byte{8, 0}},
		{"count past the end", []byte{8, 200, 1, 2, 3}},
		{"huge count", append([]byte{8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, good[2:]...)},
		{"offset past the end", entry(8, 3, 6, 1, 1)},
		{"previous slot not before", entry(8, 0, 0, 1, 1)},
		{"previous slot below 0", entry(8, 0, 11, 1, 1)},
		{"no index", entry(8, 0, 6, 0, 1)},
		{"index count past the end", entry(8, 0, 6, 5, 1)},
		{"indexes not ascending", entry(8, 0, 6, 2, 1, 0)},
		{"index past u32", entry(8, 0, 6, 2, 0xff, 0xff, 0xff, 0xff, 0x0f, 1)},
		{"truncated varint", entry(8, 0, 6, 2, 1, 0x80)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp, err := parseSlotPostings(10, tc.v)
			if err == nil {
				_, err = sp.find(addr)
			}
			if !errors.Is(err, errCorrupt) {
				t.Fatalf("got %v, want a corrupt-record error", err)
			}
		})
	}
	sp, err := parseSlotPostings(10, good)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := sp.find(addr); err != nil || p.prev != 4 || !slices.Equal(p.idxs, []uint32{1, 5}) {
		t.Fatalf("good value: %+v, %v", p, err)
	}
}

// FuzzSlotPostings decodes arbitrary values (never a panic; whatever is
// returned is well formed) and round-trips postings built from the input.
func FuzzSlotPostings(f *testing.F) {
	rng := rand.New(rand.NewPCG(3, 4))
	f.Add(uint64(10), encodeSlotPostings(10, randomPostings(rng, 10, 3)), []byte{1, 2, 3})
	a := randomPostings(rng, 50, 1)[0]
	b := addrPosting{addr: withPrefixOf(a.addr, 4), prev: 0, idxs: []uint32{2}}
	ps := []addrPosting{a, b}
	slices.SortFunc(ps, func(x, y addrPosting) int { return compareKeys(x.addr, y.addr) })
	f.Add(uint64(50), encodeSlotPostings(50, ps), a.addr[:])
	f.Fuzz(func(t *testing.T, slot uint64, v []byte, seed []byte) {
		if sp, err := parseSlotPostings(slot, v); err == nil {
			var addr solana.PublicKey
			copy(addr[:], seed)
			// A few entries: each may decode up to the whole value.
			for i := 0; i < min(sp.n, 64); i++ {
				p, err := sp.entry(i, addr)
				if err != nil {
					if !errors.Is(err, errCorrupt) {
						t.Fatalf("entry %d: %v", i, err)
					}
					continue
				}
				if p.prev >= slot || len(p.idxs) == 0 || !slices.IsSorted(p.idxs) {
					t.Fatalf("entry %d: %+v at slot %d", i, p, slot)
				}
			}
			if _, err := sp.find(addr); err != nil && !errors.Is(err, errCorrupt) {
				t.Fatal(err)
			}
		}
		// Postings whose addresses come from seed in 9-byte pieces: the
		// first byte a flag to share the previous address's prefix.
		if slot == 0 {
			return
		}
		var posts []addrPosting
		for i := 0; i+9 <= len(seed) && len(posts) < 64; i += 9 {
			var p addrPosting
			copy(p.addr[:], seed[i+1:i+9])
			if seed[i]&1 == 1 && len(posts) > 0 {
				p.addr = withPrefixOf(posts[len(posts)-1].addr, seed[i]|1)
			}
			p.prev = uint64(seed[i+1]) % slot
			p.idxs = []uint32{uint32(seed[i+2]), uint32(seed[i+2]) + 1 + uint32(seed[i+3])<<20}
			posts = append(posts, p)
		}
		slices.SortFunc(posts, func(x, y addrPosting) int { return compareKeys(x.addr, y.addr) })
		posts = slices.CompactFunc(posts, func(x, y addrPosting) bool { return x.addr == y.addr })
		if len(posts) == 0 {
			return
		}
		sp, err := parseSlotPostings(slot, encodeSlotPostings(slot, posts))
		if err != nil {
			t.Fatal(err)
		}
		shared := false
		for i := 1; i < len(posts); i++ {
			shared = shared || bytes.Equal(posts[i-1].addr[:8], posts[i].addr[:8])
		}
		if sp.exact() != shared {
			t.Fatalf("whole keys %v with shared prefixes %v", sp.exact(), shared)
		}
		for _, want := range posts {
			got, err := sp.find(want.addr)
			if err != nil || got == nil || got.prev != want.prev || !slices.Equal(got.idxs, want.idxs) {
				t.Fatalf("%s: %+v, %v; want %+v", want.addr, got, err, want)
			}
		}
	})
}

// FuzzRecordAccountKeys reads the account keys of arbitrary records
// (never a panic) and of records of real transactions (the keys commit
// posted).
func FuzzRecordAccountKeys(f *testing.F) {
	payer := ed25519.NewKeyFromSeed(make([]byte, 32))
	msg, err := txwire.Compile(pubkeyOf(payer), []txwire.Instruction{
		spl.SystemTransfer(pubkeyOf(payer), solana.PublicKey{7}, 1),
		spl.Memo("m"),
	}, solana.Hash{1})
	if err != nil {
		f.Fatal(err)
	}
	tx := txwire.NewUnsigned(msg)
	if err := tx.Sign(payer); err != nil {
		f.Fatal(err)
	}
	f.Add(encodeTx(&TxRecord{Slot: 3, Index: 1, Raw: tx.Bytes(), Meta: &TxMeta{Logs: []string{"x"}}}), tx.Bytes())
	f.Add([]byte{txFormat}, []byte{})
	f.Fuzz(func(t *testing.T, rec, raw []byte) {
		if _, err := recordAccountKeys(rec); err != nil && !errors.Is(err, errCorrupt) {
			t.Fatal(err)
		}
		want, err := txwire.Decode(raw)
		if err != nil {
			return
		}
		got, err := recordAccountKeys(encodeTx(&TxRecord{Slot: 9, Raw: raw, Meta: &TxMeta{}}))
		if err != nil || !slices.Equal(got, want.Message.AccountKeys) {
			t.Fatalf("%v, %v; want %v", got, err, want.Message.AccountKeys)
		}
	})
}
