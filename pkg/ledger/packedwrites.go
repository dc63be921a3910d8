package ledger

import (
	"fmt"

	"github.com/gagliardetto/solana-go"
)

// PackedWrites holds account writes encoded (the account log's compact
// record) in one buffer, so that many can be kept for a while without the
// garbage collector marking a decoded account for each: PubSub keeps the
// final values of every confirmed block until it is finalized, for
// finalized-level account subscriptions, which at a million accounts and
// 20 000 transfers a second is over 250 000 accounts nobody may read.
// The zero value holds none.
type PackedWrites struct {
	keys []solana.PublicKey
	ends []uint64 // where each value's encoding ends in buf; an empty one is nil
	buf  []byte
}

// PackWrites encodes ws.
func PackWrites(ws []AccountWrite) PackedWrites {
	p := PackedWrites{keys: make([]solana.PublicKey, len(ws)), ends: make([]uint64, len(ws))}
	for i, w := range ws {
		p.keys[i] = w.Key
		if w.Account != nil {
			p.buf = appendAccountRecord(p.buf, w.Account)
		}
		p.ends[i] = uint64(len(p.buf))
	}
	return p
}

// Len is the number of writes.
func (p PackedWrites) Len() int { return len(p.keys) }

// Unpack decodes the writes, in the order they were packed.
func (p PackedWrites) Unpack() ([]AccountWrite, error) {
	out := make([]AccountWrite, len(p.keys))
	var start uint64
	for i, k := range p.keys {
		out[i].Key = k
		if end := p.ends[i]; end > start {
			a, err := decodeAccountRecord(p.buf[start:end])
			if err != nil {
				return nil, fmt.Errorf("unpack account writes: %w", err)
			}
			out[i].Account = a
			start = end
		}
	}
	return out, nil
}
