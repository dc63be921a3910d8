package ledger

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/gagliardetto/solana-go"
	bolt "go.etcd.io/bbolt"

	"github.com/ferry-sh/ferry/pkg/txwire"
)

// Address postings of one slot (bucket addrslot; the layout is described
// at the top of boltstore.go). A slot's postings are one bbolt value
// written once by the slot's commit, so a posting costs its own ~15–20
// bytes instead of a bbolt element with a 40-byte key and a 16-byte
// element header. Addresses are stored as a prefix of keyWidth bytes: 8
// when no two addresses of the slot share their first 8 bytes (checked at
// commit), else the whole key. A lookup at a slot where the address has a
// posting is then exact; a lookup at any other slot with 8-byte prefixes
// may match another address sharing the prefix (slotPostings.exact).

const (
	// postingPrefix is the usual key width of a slot's postings.
	postingPrefix = 8
	// postingFull is the key width of a slot where two addresses share
	// their first postingPrefix bytes (cheap to grind for an attacker:
	// a 64-bit birthday collision).
	postingFull = 32
)

// addrPosting is one address's posting in a slot: the previous slot with
// a posting for it (0: none) and the indexes of the slot's transactions
// that reference it, ascending.
type addrPosting struct {
	addr solana.PublicKey
	prev uint64
	idxs []uint32
}

// encodeSlotPostings lays out a slot's postings (ps sorted by address,
// each address once, each with at least one index, prev < slot).
func encodeSlotPostings(slot uint64, ps []addrPosting) []byte {
	width := postingPrefix
	for i := 1; i < len(ps); i++ {
		if bytes.Equal(ps[i-1].addr[:postingPrefix], ps[i].addr[:postingPrefix]) {
			width = postingFull
			break
		}
	}
	var vars []byte
	offs := make([]uint32, len(ps))
	for i, p := range ps {
		offs[i] = uint32(len(vars))
		// prev 0 (no previous posting) is stored as delta = slot.
		vars = binary.AppendUvarint(vars, slot-p.prev)
		vars = binary.AppendUvarint(vars, uint64(len(p.idxs)))
		last := uint64(0)
		for j, x := range p.idxs {
			d := uint64(x) - last
			if j == 0 {
				d = uint64(x)
			}
			vars = binary.AppendUvarint(vars, d)
			last = uint64(x)
		}
	}
	out := make([]byte, 0, 1+binary.MaxVarintLen64+len(ps)*(width+4)+len(vars))
	out = append(out, byte(width))
	out = binary.AppendUvarint(out, uint64(len(ps)))
	for i, p := range ps {
		out = append(out, p.addr[:width]...)
		out = binary.BigEndian.AppendUint32(out, offs[i])
	}
	return append(out, vars...)
}

// slotPostings is a decoded header of a slot's postings value; lookups
// read only the entries they need.
type slotPostings struct {
	slot  uint64
	width int
	n     int
	fixed []byte // n entries of width + 4 bytes
	vars  []byte
}

// parseSlotPostings checks a slot's postings value's header and sizes.
func parseSlotPostings(slot uint64, v []byte) (*slotPostings, error) {
	if len(v) < 1 || (v[0] != postingPrefix && v[0] != postingFull) {
		return nil, fmt.Errorf("%w: address postings of slot %d: key width", errCorrupt, slot)
	}
	width := int(v[0])
	n, w := binary.Uvarint(v[1:])
	if w <= 0 || n == 0 {
		return nil, fmt.Errorf("%w: address postings of slot %d: count", errCorrupt, slot)
	}
	rest := v[1+w:]
	// Each entry takes width + 4 fixed bytes and at least 3 variable ones.
	if n > uint64(len(rest))/uint64(width+4+3) {
		return nil, fmt.Errorf("%w: address postings of slot %d: %d entries in %d bytes", errCorrupt, slot, n, len(rest))
	}
	fl := int(n) * (width + 4)
	return &slotPostings{slot: slot, width: width, n: int(n), fixed: rest[:fl], vars: rest[fl:]}, nil
}

// exact reports whether a match is certain to be addr's posting even at
// a slot where addr may have none (full keys); with prefixes it is only
// certain at slots where addr has a posting.
func (sp *slotPostings) exact() bool { return sp.width == postingFull }

// find returns addr's posting (nil if the slot has none with its key
// prefix).
func (sp *slotPostings) find(addr solana.PublicKey) (*addrPosting, error) {
	return sp.search(addr[:sp.width], addr)
}

// search returns the first posting whose stored key starts with key
// (at most sp.width bytes), decoded for addr, or nil.
func (sp *slotPostings) search(key []byte, addr solana.PublicKey) (*addrPosting, error) {
	es := sp.width + 4
	kl := len(key)
	lo, hi := 0, sp.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if bytes.Compare(sp.fixed[m*es:m*es+kl], key) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == sp.n || !bytes.Equal(sp.fixed[lo*es:lo*es+kl], key) {
		return nil, nil
	}
	return sp.entry(lo, addr)
}

// entry decodes entry i (for addr).
func (sp *slotPostings) entry(i int, addr solana.PublicKey) (*addrPosting, error) {
	es := sp.width + 4
	off := binary.BigEndian.Uint32(sp.fixed[i*es+sp.width:])
	bad := func(what string) error {
		return fmt.Errorf("%w: address posting %d of slot %d: %s", errCorrupt, i, sp.slot, what)
	}
	if uint64(off) >= uint64(len(sp.vars)) {
		return nil, bad("offset")
	}
	b := sp.vars[off:]
	next := func() (uint64, bool) {
		x, w := binary.Uvarint(b)
		if w <= 0 {
			return 0, false
		}
		b = b[w:]
		return x, true
	}
	delta, ok := next()
	if !ok || delta == 0 || delta > sp.slot {
		return nil, bad("previous slot")
	}
	n, ok := next()
	if !ok || n == 0 || n > uint64(len(b)) {
		return nil, bad("index count")
	}
	p := &addrPosting{addr: addr, prev: sp.slot - delta, idxs: make([]uint32, 0, n)}
	var last uint64
	for j := uint64(0); j < n; j++ {
		d, ok := next()
		if !ok || (j > 0 && d == 0) || d > 1<<32-1-last {
			return nil, bad("transaction index")
		}
		last += d
		p.idxs = append(p.idxs, uint32(last))
	}
	return p, nil
}

// decodeLegacyPosting decodes a posting of the addrpost bucket (written
// before ferry-ledger-4): previous slot (8 BE) | indexes (uvarint).
func decodeLegacyPosting(slot uint64, addr solana.PublicKey, v []byte) (*addrPosting, error) {
	if len(v) < 8 {
		return nil, fmt.Errorf("%w: address index posting %d/%s", errCorrupt, slot, addr)
	}
	p := &addrPosting{addr: addr, prev: binary.BigEndian.Uint64(v[:8])}
	if p.prev >= slot {
		return nil, fmt.Errorf("%w: address index chain at %d/%s", errCorrupt, slot, addr)
	}
	for rest := v[8:]; len(rest) > 0; {
		x, n := binary.Uvarint(rest)
		if n <= 0 || x > 1<<32-1 {
			return nil, fmt.Errorf("%w: address index value", errCorrupt)
		}
		p.idxs = append(p.idxs, uint32(x))
		rest = rest[n:]
	}
	return p, nil
}

// postingReader reads postings in one bbolt read transaction, from the
// slot's addrslot value or, for a slot committed before ferry-ledger-4,
// its addrpost key.
type postingReader struct {
	slots, legacy *bolt.Bucket
}

// postingVerdict says whose a posting onChain found is.
type postingVerdict int

const (
	// postingMine: addr's own posting.
	postingMine postingVerdict = iota
	// postingByPrefix: the posting of the one address of its slot with
	// addr's first 8 bytes, which may or may not be addr (the slot
	// stores prefixes); its transactions tell.
	postingByPrefix
	// postingOther: the posting of another address with addr's first 8
	// bytes (the slot stores whole keys and has none for addr).
	postingOther
)

// onChain returns the posting at slot on addr's prefix chain: addr's
// own if the slot has one, else that of an address sharing addr's first
// 8 bytes, whose previous slot continues the chain (nil: the slot has no
// posting with addr's prefix). A prefix chain links the postings of
// every address that starts with the same 8 bytes, because the heads
// table is keyed by them (headKey).
func (r postingReader) onChain(slot uint64, addr solana.PublicKey) (*addrPosting, postingVerdict, error) {
	if v := slotValue(r.slots, u64be(slot), nil); v != nil {
		sp, err := parseSlotPostings(slot, v)
		if err != nil {
			return nil, 0, err
		}
		if !sp.exact() {
			p, err := sp.find(addr)
			return p, postingByPrefix, err
		}
		if p, err := sp.find(addr); p != nil || err != nil {
			return p, postingMine, err
		}
		p, err := sp.search(addr[:postingPrefix], addr)
		return p, postingOther, err
	}
	if v := r.legacy.Get(postKey(slot, addr)); v != nil {
		p, err := decodeLegacyPosting(slot, addr, v)
		return p, postingMine, err
	}
	// addrpost keys are slot | address: the first one after slot |
	// prefix has the prefix if any of the slot's does.
	seek := append(u64be(slot), addr[:postingPrefix]...)
	if k, v := r.legacy.Cursor().Seek(seek); k != nil && bytes.HasPrefix(k, seek) {
		if len(k) != 40 {
			return nil, 0, fmt.Errorf("%w: address index key", errCorrupt)
		}
		p, err := decodeLegacyPosting(slot, solana.PublicKeyFromBytes(k[8:]), v)
		return p, postingOther, err
	}
	return nil, postingMine, nil
}

// replayHeads brings the heads up to the committed postings: those of
// the slots from from on. A slot's postings value holds each posted
// address's first 8 bytes, the heads' key, so no transaction is decoded.
// The postings of slots up to tableSlot, whose changes of the heads table
// its files hold, go to the cache only; later ones are set as a commit
// sets them (setHeadAt). A restart after a kill replays the slots since
// the older of the table's and the heads cache's files (loadHeads).
// It returns how many postings it replayed. Callers hold mu for writing.
func (s *boltStore) replayHeads(tx *bolt.Tx, from, tableSlot uint64) (int, error) {
	fromKey := u64be(max(from, 1))
	n := 0
	set := func(p, slot uint64) {
		n++
		i := s.hc.index(p)
		if slot > tableSlot {
			s.setHeadAt(p, i, slot)
		} else if i >= 0 {
			s.hc.put(i, slot)
		}
	}
	err := eachLegacyPosting(tx, fromKey, func(a solana.PublicKey, slot uint64) { set(headKey(a), slot) })
	if err != nil {
		return n, err
	}
	b := tx.Bucket(bucketAddrSlot)
	c := b.Cursor()
	for k, v := c.Seek(fromKey); k != nil; k, v = c.Next() {
		if len(k) != 8 {
			return n, fmt.Errorf("%w: address postings key", errCorrupt)
		}
		slot := binary.BigEndian.Uint64(k)
		sp, err := parseSlotPostings(slot, slotValue(b, k, v))
		if err != nil {
			return n, fmt.Errorf("replay address heads: %w", err)
		}
		// Every transaction posts its fee payer: the slot's count is its
		// highest index plus one.
		txs := 0
		es := sp.width + 4
		for i := 0; i < sp.n; i++ {
			set(binary.BigEndian.Uint64(sp.fixed[i*es:]), slot)
			p, err := sp.entry(i, solana.PublicKey{})
			if err != nil {
				return n, fmt.Errorf("replay address heads: %w", err)
			}
			txs = max(txs, int(p.idxs[len(p.idxs)-1])+1)
		}
		if slot > tableSlot {
			s.headsTxs += txs
		}
		if slot > s.hcSlot {
			s.hcTxs += txs
		}
	}
	return n, nil
}

// replayPostings calls set with every address posted in the slots from
// from on and the slot, in slot order, and returns how many transactions
// those slots' addrslot values cover. The addrpost postings name their
// address; an addrslot value only its prefix, so the addresses come from
// the slot's transactions (what commit posted: each transaction's
// account keys).
func (s *boltStore) replayPostings(tx *bolt.Tx, from uint64, set func(solana.PublicKey, uint64)) (int, error) {
	fromKey := u64be(from)
	if err := eachLegacyPosting(tx, fromKey, set); err != nil {
		return 0, err
	}
	txb := tx.Bucket(bucketTxs)
	txs := txb.Cursor()
	sc := tx.Bucket(bucketAddrSlot).Cursor()
	total := 0
	for k, _ := sc.Seek(fromKey); k != nil; k, _ = sc.Next() {
		if len(k) != 8 {
			return 0, fmt.Errorf("%w: address postings key", errCorrupt)
		}
		slot := binary.BigEndian.Uint64(k)
		n := 0
		prefix := u64be(slot)
		for ck, cv := txs.Seek(prefix); ck != nil && bytes.HasPrefix(ck, prefix); ck, cv = txs.Next() {
			ch, err := s.codec.decodeChunk(ck, slotValue(txb, ck, cv))
			if err != nil {
				return 0, fmt.Errorf("replay address heads of slot %d: %w", slot, err)
			}
			for _, rec := range ch.records {
				keys, err := recordAccountKeys(rec)
				if err != nil {
					return 0, fmt.Errorf("replay address heads of slot %d: %w", slot, err)
				}
				for _, a := range keys {
					set(a, slot)
				}
			}
			n += len(ch.records)
		}
		if n == 0 {
			return 0, fmt.Errorf("%w: address postings of slot %d without transactions", errCorrupt, slot)
		}
		total += n
	}
	return total, nil
}

// eachLegacyPosting calls set with the address and slot of every
// addrpost posting from the slot fromKey on, in slot order. Legacy
// postings come from before any addrslot value (the upgrade stops
// writing them), so a replay that goes on with those sets the newest
// slot last.
func eachLegacyPosting(tx *bolt.Tx, fromKey []byte, set func(solana.PublicKey, uint64)) error {
	pc := tx.Bucket(bucketAddrPost).Cursor()
	for k, _ := pc.Seek(fromKey); k != nil; k, _ = pc.Next() {
		if len(k) != 40 {
			return fmt.Errorf("%w: address index key", errCorrupt)
		}
		set(solana.PublicKeyFromBytes(k[8:]), binary.BigEndian.Uint64(k))
	}
	return nil
}

// recordAccountKeys returns the account keys of the transaction of a
// record (encodeTx), which commit posted, decoding no more of the record
// than its raw transaction.
func recordAccountKeys(rec []byte) ([]solana.PublicKey, error) {
	d := decoder{b: rec}
	if v := d.u8(); d.err == nil && v != txFormat {
		return nil, fmt.Errorf("%w: transaction format %d", errCorrupt, v)
	}
	d.sig()
	d.uvarint()
	d.uvarint()
	d.varint()
	raw := d.bytes()
	if d.err != nil {
		return nil, fmt.Errorf("%w: transaction record: %v", errCorrupt, d.err)
	}
	t, err := txwire.Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: transaction record: %v", errCorrupt, err)
	}
	return t.Message.AccountKeys, nil
}
