package ledger

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestSlotValues checks the per-slot values of the append-only buckets:
// short ones inline, long ones nested, read back either way by key and by
// cursor, replaced in either direction, and deleted.
func TestSlotValues(t *testing.T) {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	val := func(slot uint64, n int) []byte {
		v := make([]byte, n)
		for i := range v {
			v[i] = byte(slot) ^ byte(i*7)
		}
		return v
	}
	sizes := map[uint64]int{1: 1, 2: 100, 3: nestedValueMin - 1, 4: nestedValueMin, 5: 200 << 10, 6: 5000}
	update := func(fn func(b *bolt.Bucket) error) {
		t.Helper()
		if err := db.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(bucketBlocks)
			if err != nil {
				return err
			}
			return fn(b)
		}); err != nil {
			t.Fatal(err)
		}
	}
	check := func() {
		t.Helper()
		if err := db.View(func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketBlocks)
			for slot, n := range sizes {
				if got := slotValue(b, u64be(slot), nil); !bytes.Equal(got, val(slot, n)) {
					t.Errorf("slot %d: %d bytes, want %d", slot, len(got), n)
				}
				nested := b.Get(u64be(slot)) == nil
				if nested != (n >= nestedValueMin) {
					t.Errorf("slot %d (%d bytes): nested %v", slot, n, nested)
				}
			}
			seen := 0
			c := b.Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				slot := binary.BigEndian.Uint64(k)
				if got := slotValue(b, k, v); !bytes.Equal(got, val(slot, sizes[slot])) {
					t.Errorf("cursor at slot %d: %d bytes, want %d", slot, len(got), sizes[slot])
				}
				seen++
			}
			if seen != len(sizes) {
				t.Errorf("cursor saw %d slots, want %d", seen, len(sizes))
			}
			if slotValue(b, u64be(99), nil) != nil {
				t.Error("a missing slot has a value")
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	update(func(b *bolt.Bucket) error {
		for slot, n := range sizes {
			if err := putSlotValue(b, u64be(slot), val(slot, n), nestedValueMin); err != nil {
				return err
			}
		}
		return nil
	})
	check()
	// Replace a nested value by an inline one and the other way round.
	sizes[4], sizes[2] = 10, 50<<10
	update(func(b *bolt.Bucket) error {
		for _, slot := range []uint64{4, 2} {
			if err := putSlotValue(b, u64be(slot), val(slot, sizes[slot]), nestedValueMin); err != nil {
				return err
			}
		}
		return nil
	})
	check()
	update(func(b *bolt.Bucket) error {
		for _, slot := range []uint64{2, 3, 99} {
			if err := deleteSlotValue(b, u64be(slot)); err != nil {
				return err
			}
			delete(sizes, slot)
		}
		return nil
	})
	check()
}

// TestSlotValueWrittenOnce checks why long values are nested: once a
// slot's long value is committed, the commits that append the next slots
// do not write it again. Inline, the right-edge leaf would carry it (and
// the two to four values before it) into each of them.
func TestSlotValueWrittenOnce(t *testing.T) {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const long = 64 << 10
	for slot := uint64(1); slot <= 12; slot++ {
		st := db.Stats()
		before := st.TxStats.GetPageAlloc()
		if err := db.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(bucketBlocks)
			if err != nil {
				return err
			}
			b.FillPercent = 1
			return putSlotValue(b, u64be(slot), make([]byte, long), nestedValueMin)
		}); err != nil {
			t.Fatal(err)
		}
		// The new value, the leaf of bucket headers and the tree above it,
		// the freelist: far less than a second long value.
		st = db.Stats()
		if alloc := st.TxStats.GetPageAlloc() - before; slot > 1 && alloc >= 2*long {
			t.Fatalf("appending slot %d allocated %d bytes of pages for one %d-byte value", slot, alloc, long)
		}
	}
}
