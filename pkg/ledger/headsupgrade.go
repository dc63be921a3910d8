package ledger

import (
	"encoding/binary"
	"fmt"
	"path/filepath"

	"github.com/gagliardetto/solana-go"
	bolt "go.etcd.io/bbolt"
)

// Before ferry-ledger-6 the heads table was keyed by whole addresses and
// every posting's previous slot was its own address's: one chain per
// address. From ferry-ledger-6 on it is keyed by an address's first 8
// bytes, so a new posting links to the newest posting of any address
// with those bytes, and the walk of getSignaturesForAddress checks whose
// each posting is (postingReader.onChain). Old chains stay as they are:
// where only one address of the old history had a prefix, its chain is
// that prefix's chain. Where several had (cheap to grind: a 64-bit
// birthday collision), the first new posting of the prefix links to
// whichever of them was newest, and the others' chains would be cut off;
// for those the upgrade keeps each address's old head (bucket
// legacyheads), and a walk that goes below the first slot chained by
// prefix (meta prefixchains) continues from it.

// headCodecV1 is the heads table's layout before ferry-ledger-6: address
// -> slot.
var headCodecV1 = &tableCodec[solana.PublicKey, uint64]{
	magic: "ferry-heads-1\n\x00\x00", keySize: 32, valSize: 8,
	putKey: func(b []byte, k solana.PublicKey) { copy(b, k[:]) },
	getKey: func(b []byte) solana.PublicKey { return solana.PublicKeyFromBytes(b) },
	putVal: func(b []byte, v uint64) { binary.LittleEndian.PutUint64(b, v) },
	getVal: func(b []byte) uint64 { return binary.LittleEndian.Uint64(b) },
}

var (
	// bucketLegacyHeads: address (32) -> slot (8 BE), the old heads of
	// the addresses that shared their first 8 bytes with another address
	// before the upgrade (usually none: the bucket is then absent).
	bucketLegacyHeads = []byte("legacyheads")
)

// metaPrefixChains is the first slot whose postings are chained by
// address prefix (8 BE; absent: every slot, a directory created with
// ferry-ledger-6 or later).
const metaPrefixChains = "prefixchains"

// upgradeHeads converts the heads table of a directory of format from
// (one of upgradeFormats) to address prefixes and renames the format.
// A kill at any point leaves a directory that open upgrades again or a
// current one whose heads file, if not yet converted, is rebuilt from
// history like any damaged table.
func (s *boltStore) upgradeHeads(dir, from string) error {
	old, err := openDerivedTable(dir, "heads", headCodecV1)
	if err != nil {
		return fmt.Errorf("upgrade %s: %w", from, err)
	}
	var tip uint64
	err = s.db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(bucketMeta).Get([]byte(metaTip)); len(b) == 8 {
			tip = binary.BigEndian.Uint64(b)
		}
		_, err := s.replayPostings(tx, tableSlot(old.meta)+1, old.set)
		return err
	})
	if err != nil {
		old.close()
		return fmt.Errorf("upgrade %s: %w", from, err)
	}
	// Whole addresses sort by their first 8 bytes: the addresses that
	// share them are adjacent, and the new table's entries come out in
	// order, each prefix with its newest slot. The old runs go before the
	// rename: a kill in between leaves the old base with a prefix of
	// them, which the next open's upgrade completes from history.
	shared := map[solana.PublicKey]uint64{}
	err = writeBase(filepath.Join(dir, "heads"), headCodec.magic, binary.LittleEndian.AppendUint64(nil, tip), !s.noSync, func(emit func(k, v []byte)) {
		var last solana.PublicKey
		var lastSlot, newest uint64
		var val [8]byte
		n := 0
		flush := func() {
			if n > 0 {
				headCodec.putVal(val[:], newest)
				emit(last[:8], val[:])
			}
		}
		old.each(func(a solana.PublicKey, slot uint64) bool {
			if n > 0 && headKey(last) == headKey(a) {
				shared[last], shared[a] = lastSlot, slot
				newest = max(newest, slot)
			} else {
				flush()
				newest = slot
			}
			last, lastSlot = a, slot
			n++
			return true
		})
		flush()
	}, old.removeRuns)
	if cerr := old.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("upgrade %s: %w", from, err)
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if len(shared) > 0 {
			b, err := tx.CreateBucketIfNotExists(bucketLegacyHeads)
			if err != nil {
				return err
			}
			for a, slot := range shared {
				if err := b.Put(a[:], u64be(slot)); err != nil {
					return err
				}
			}
		}
		if err := meta.Put([]byte(metaPrefixChains), u64be(tip+1)); err != nil {
			return err
		}
		return meta.Put([]byte(metaFormat), []byte(storeFormat))
	})
	if err != nil {
		return fmt.Errorf("upgrade %s: %w", from, err)
	}
	return nil
}

// loadLegacyHeads reads what upgradeHeads kept for the walks of
// addresses whose old chains share a prefix.
func (s *boltStore) loadLegacyHeads() error {
	return s.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bucketMeta).Get([]byte(metaPrefixChains)); v != nil {
			if len(v) != 8 {
				return fmt.Errorf("%w: first slot chained by prefix", errCorrupt)
			}
			s.prefixChainsFrom = binary.BigEndian.Uint64(v)
		}
		b := tx.Bucket(bucketLegacyHeads)
		if b == nil {
			return nil
		}
		s.legacyHeads = map[solana.PublicKey]uint64{}
		s.legacyPrefixes = map[uint64]bool{}
		return b.ForEach(func(k, v []byte) error {
			if len(k) != 32 || len(v) != 8 {
				return fmt.Errorf("%w: legacy address head", errCorrupt)
			}
			a := solana.PublicKeyFromBytes(k)
			s.legacyHeads[a] = binary.BigEndian.Uint64(v)
			s.legacyPrefixes[headKey(a)] = true
			return nil
		})
	})
}
