package ledger

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/klauspost/compress/zstd"
	bolt "go.etcd.io/bbolt"
)

// Transaction records are stored in chunks: up to txChunkRecords
// consecutive transactions of a block, compressed together with zstd,
// keyed by slot | index of the first one. Records of one block repeat a
// lot (program ids, mints, log lines, the blockhash, fee payers), which
// compressing them one by one would not see; a lookup decompresses one
// chunk (tens of microseconds).
//
// Chunk value: chunkFormat (1) | zstd frame of the records, each as
// uvarint length | encodeTx.
const (
	txChunkRecords = 64
	chunkFormat    = 2
)

// txChunkWindow is the compressor's window: a chunk is compressed on its
// own (EncodeAll), so matches never reach further back than its start,
// and a chunk of 64 records is tens of KB. The default window (4 MiB at
// this level) made the encoder keep an 8 MB history buffer for the
// node's life; this one keeps the 1 MB the library allocates at least.
const txChunkWindow = 256 << 10

// txCodec compresses and decompresses chunks. Decompression is safe for
// concurrent use; encodeChunks is called by the store's one committer.
type txCodec struct {
	enc *zstd.Encoder
	dec *zstd.Decoder
	// raw, rec and out are encodeChunks' buffers, kept between calls: a
	// slot's chunks are hundreds of KB, allocated anew for every commit
	// before (3.6 % of the bytes a node allocated under transfers).
	raw, rec, out []byte
}

func newTxCodec() (*txCodec, error) {
	// The fastest level: it runs on the persister for every transaction,
	// and the records' redundancy (repeated keys and log lines) is found
	// by it as well.
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(txChunkWindow))
	if err != nil {
		return nil, fmt.Errorf("transaction compressor: %w", err)
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(2), zstd.WithDecoderMaxMemory(64<<20))
	if err != nil {
		return nil, fmt.Errorf("transaction decompressor: %w", err)
	}
	return &txCodec{enc: enc, dec: dec}, nil
}

func (c *txCodec) close() {
	c.enc.Close()
	c.dec.Close()
}

// encodeChunks encodes a block's transactions (in index order) as chunk
// keys and values. The values share one buffer that the next call reuses:
// the caller is done with them (its bbolt transaction committed) before
// it encodes the next block.
func (c *txCodec) encodeChunks(txs []*TxRecord) (keys, vals [][]byte) {
	raw, e, out := c.raw, c.rec, c.out[:0]
	for lo := 0; lo < len(txs); lo += txChunkRecords {
		raw = raw[:0]
		for _, r := range txs[lo:min(lo+txChunkRecords, len(txs))] {
			e = appendTx(e[:0], r)
			raw = binary.AppendUvarint(raw, uint64(len(e)))
			raw = append(raw, e...)
		}
		keys = append(keys, locKey(txs[lo].Slot, txs[lo].Index))
		start := len(out)
		// EncodeAll appends; when it outgrows out, the values already
		// taken stay in the old array.
		out = c.enc.EncodeAll(raw, append(out, chunkFormat))
		vals = append(vals, out[start:len(out):len(out)])
	}
	c.raw, c.rec = raw, e
	if cap(out) <= maxChunkArena {
		c.out = out
	}
	return keys, vals
}

// maxChunkArena bounds the chunk buffer txCodec keeps between commits (a
// slot of 10 000 transfers compresses to ~3 MB).
const maxChunkArena = 16 << 20

// txChunk is a decompressed chunk: the records of transactions first,
// first+1, ...
type txChunk struct {
	slot    uint64
	first   uint32
	records [][]byte
}

func (c *txCodec) decodeChunk(k, v []byte) (*txChunk, error) {
	if len(k) != 12 || len(v) < 1 || v[0] != chunkFormat {
		return nil, fmt.Errorf("%w: transaction chunk", errCorrupt)
	}
	raw, err := c.dec.DecodeAll(v[1:], nil)
	if err != nil {
		return nil, fmt.Errorf("%w: transaction chunk: %v", errCorrupt, err)
	}
	ch := &txChunk{slot: binary.BigEndian.Uint64(k), first: binary.BigEndian.Uint32(k[8:])}
	for len(raw) > 0 {
		n, w := binary.Uvarint(raw)
		if w <= 0 || n > uint64(len(raw)-w) {
			return nil, fmt.Errorf("%w: transaction chunk record", errCorrupt)
		}
		ch.records = append(ch.records, raw[w:w+int(n)])
		raw = raw[w+int(n):]
	}
	return ch, nil
}

// chunkReader reads transactions from the chunks of one bbolt read
// transaction, keeping the last chunk it decompressed.
type chunkReader struct {
	codec *txCodec
	b     *bolt.Bucket
	last  *txChunk
}

// read returns the transaction at slot/index, or nil if there is none.
func (r *chunkReader) read(slot uint64, index uint32) (*TxRecord, error) {
	if c := r.last; c == nil || c.slot != slot || index < c.first || index >= c.first+uint32(len(c.records)) {
		cur := r.b.Cursor()
		want := locKey(slot, index)
		k, v := cur.Seek(want)
		if !bytes.Equal(k, want) {
			k, v = cur.Prev()
		}
		if k == nil || len(k) != 12 || binary.BigEndian.Uint64(k) != slot {
			return nil, nil
		}
		ch, err := r.codec.decodeChunk(k, slotValue(r.b, k, v))
		if err != nil {
			return nil, err
		}
		r.last = ch
	}
	c := r.last
	if i := int(index - c.first); i < len(c.records) {
		return decodeTx(c.records[i])
	}
	return nil, nil
}

// block returns every transaction of a slot, in order.
func (r *chunkReader) block(slot uint64) ([]*TxRecord, error) {
	var out []*TxRecord
	prefix := u64be(slot)
	cur := r.b.Cursor()
	for k, v := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = cur.Next() {
		ch, err := r.codec.decodeChunk(k, slotValue(r.b, k, v))
		if err != nil {
			return nil, err
		}
		for _, rec := range ch.records {
			t, err := decodeTx(rec)
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		}
	}
	return out, nil
}
