package ledger

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

var testTableCodec = &tableCodec[uint64, uint64]{
	magic: "ferry-test-tbl\n\x00", keySize: 8, valSize: 8,
	putKey: func(b []byte, k uint64) { binary.BigEndian.PutUint64(b, k) },
	getKey: func(b []byte) uint64 { return binary.BigEndian.Uint64(b) },
	putVal: func(b []byte, v uint64) { binary.LittleEndian.PutUint64(b, v) },
	getVal: func(b []byte) uint64 { return binary.LittleEndian.Uint64(b) },
}

// TestSortedTable applies random sets and deletions to a table and a map,
// writing and reopening the table now and then, and compares lookups and
// iteration.
func TestSortedTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t")
	tbl, err := openTable(path, testTableCodec)
	if err != nil {
		t.Fatal(err)
	}
	model := map[uint64]uint64{}
	rng := rand.New(rand.NewPCG(5, 6))
	for round := 0; round < 30; round++ {
		for i := 0; i < 200; i++ {
			k := rng.Uint64N(500)
			if rng.IntN(4) == 0 {
				tbl.del(k)
				delete(model, k)
			} else {
				v := rng.Uint64()
				tbl.set(k, v)
				model[k] = v
			}
		}
		switch round % 3 {
		case 1:
			nt, err := tbl.write([]byte{byte(round)}, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := tbl.replace(nt); err != nil {
				t.Fatal(err)
			}
		case 2:
			nt, err := tbl.write([]byte{byte(round)}, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			nt.close()
			tbl.close()
			if tbl, err = openTable(path, testTableCodec); err != nil {
				t.Fatal(err)
			}
			if tbl.changes() != 0 || tbl.entries() != len(model) || string(tbl.meta) != string([]byte{byte(round)}) {
				t.Fatalf("round %d: reopened with %d changes, %d entries (model %d), meta %v", round, tbl.changes(), tbl.entries(), len(model), tbl.meta)
			}
		}
		for k := uint64(0); k < 500; k++ {
			v, ok := tbl.get(k)
			if want, has := model[k]; ok != has || v != want {
				t.Fatalf("round %d: get(%d) = %d, %v; want %d, %v", round, k, v, ok, want, has)
			}
		}
		seen := 0
		tbl.each(func(k, v uint64) bool {
			if model[k] != v {
				t.Fatalf("each: %d = %d, want %d", k, v, model[k])
			}
			seen++
			return true
		})
		if seen != len(model) {
			t.Fatalf("each visited %d, model has %d", seen, len(model))
		}
	}
	tbl.close()
	b, _ := os.ReadFile(path)
	b[20] ^= 1 // the entry count
	os.WriteFile(path, b, 0o600)
	if _, err := openTable(path, testTableCodec); !errors.Is(err, errCorrupt) {
		t.Fatalf("damaged header: %v", err)
	}
}
