package espl

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gagliardetto/solana-go"
)

// Transfer queue layout constants (§4).
const (
	TransferQueueHeaderSize = 96
	QueuedTransferSize      = 96
	// QueuedFlagCreateIdempotentATA is set on entries whose execution
	// creates the destination's ATA first (all private transfers). The
	// reference names the flag but not its bit; ferry uses bit 0.
	QueuedFlagCreateIdempotentATA uint8 = 1 << 0
	// TransferQueueVersion is the header version ferry writes. The
	// reference does not give the program's value.
	TransferQueueVersion uint8 = 1
	// DefaultTransferQueueCapacity is the entry capacity ferry gives a
	// queue when ix 12 omits requestedItems: the most entries that fit in
	// one 10 KiB CPI allocation, (10240−96)/96. The reference does not
	// give the program's default.
	DefaultTransferQueueCapacity = (10240 - TransferQueueHeaderSize) / QueuedTransferSize
)

// Queue errors.
var (
	ErrQueueFull  = errors.New("transfer queue is full")
	ErrQueueEmpty = errors.New("transfer queue is empty")
)

// TransferQueueHeader is the 96-byte header of a transfer queue account
// (§4, offsets inferred from the field order):
//
//	0  1  version
//	1  1  bump
//	2  6  padding
//	8  32 mint
//	40 4  length u32 (heap entries)
//	44 8  padding; its first 4 bytes hold the next group id
//	52 4  next_task_id u32
//	56 8  crank_task_id i64
//	64 32 validator
type TransferQueueHeader struct {
	Version     uint8
	Bump        uint8
	Mint        solana.PublicKey
	Length      uint32
	NextGroupID uint32
	NextTaskID  uint32
	CrankTaskID int64
	Validator   solana.PublicKey
}

// Encode returns the 96-byte header.
func (h TransferQueueHeader) Encode() []byte {
	out := make([]byte, TransferQueueHeaderSize)
	h.put(out)
	return out
}

func (h *TransferQueueHeader) put(out []byte) {
	_ = out[TransferQueueHeaderSize-1]
	clear(out[:TransferQueueHeaderSize])
	out[0] = h.Version
	out[1] = h.Bump
	copy(out[8:40], h.Mint[:])
	binary.LittleEndian.PutUint32(out[40:], h.Length)
	binary.LittleEndian.PutUint32(out[44:], h.NextGroupID)
	binary.LittleEndian.PutUint32(out[52:], h.NextTaskID)
	binary.LittleEndian.PutUint64(out[56:], uint64(h.CrankTaskID))
	copy(out[64:96], h.Validator[:])
}

// DecodeTransferQueueHeader parses the header at the start of data.
func DecodeTransferQueueHeader(data []byte) (TransferQueueHeader, error) {
	if len(data) < TransferQueueHeaderSize {
		return TransferQueueHeader{}, accountErr("transfer queue", "%d bytes, want at least %d", len(data), TransferQueueHeaderSize)
	}
	return TransferQueueHeader{
		Version:     data[0],
		Bump:        data[1],
		Mint:        solana.PublicKeyFromBytes(data[8:40]),
		Length:      binary.LittleEndian.Uint32(data[40:44]),
		NextGroupID: binary.LittleEndian.Uint32(data[44:48]),
		NextTaskID:  binary.LittleEndian.Uint32(data[52:56]),
		CrankTaskID: int64(binary.LittleEndian.Uint64(data[56:64])),
		Validator:   solana.PublicKeyFromBytes(data[64:96]),
	}, nil
}

// QueuedTransfer is one 96-byte transfer queue entry (§4):
//
//	0  32 source
//	32 32 destination_owner
//	64 8  amount u64
//	72 8  ready_at i64 (unix ms)
//	80 8  client_ref_id u64
//	88 4  task_id u32
//	92 1  flags
//	93 3  group_id (24-bit LE)
type QueuedTransfer struct {
	Source           solana.PublicKey
	DestinationOwner solana.PublicKey
	Amount           uint64
	ReadyAt          int64
	ClientRefID      uint64
	TaskID           uint32
	Flags            uint8
	GroupID          uint32 // 24-bit; higher bits are dropped by Encode
}

// Encode returns the 96-byte entry.
func (e QueuedTransfer) Encode() []byte {
	out := make([]byte, QueuedTransferSize)
	e.put(out)
	return out
}

func (e *QueuedTransfer) put(out []byte) {
	_ = out[QueuedTransferSize-1]
	copy(out[0:32], e.Source[:])
	copy(out[32:64], e.DestinationOwner[:])
	binary.LittleEndian.PutUint64(out[64:], e.Amount)
	binary.LittleEndian.PutUint64(out[72:], uint64(e.ReadyAt))
	binary.LittleEndian.PutUint64(out[80:], e.ClientRefID)
	binary.LittleEndian.PutUint32(out[88:], e.TaskID)
	out[92] = e.Flags
	putUint24(out[93:], e.GroupID)
}

// DecodeQueuedTransfer parses one 96-byte entry.
func DecodeQueuedTransfer(data []byte) (QueuedTransfer, error) {
	if len(data) != QueuedTransferSize {
		return QueuedTransfer{}, accountErr("queued transfer", "%d bytes, want %d", len(data), QueuedTransferSize)
	}
	return decodeEntry(data), nil
}

func decodeEntry(b []byte) QueuedTransfer {
	_ = b[QueuedTransferSize-1]
	return QueuedTransfer{
		Source:           solana.PublicKeyFromBytes(b[0:32]),
		DestinationOwner: solana.PublicKeyFromBytes(b[32:64]),
		Amount:           binary.LittleEndian.Uint64(b[64:72]),
		ReadyAt:          int64(binary.LittleEndian.Uint64(b[72:80])),
		ClientRefID:      binary.LittleEndian.Uint64(b[80:88]),
		TaskID:           binary.LittleEndian.Uint32(b[88:92]),
		Flags:            b[92],
		GroupID:          uint24(b[93:96]),
	}
}

// TransferQueueSize is the account size of a queue holding capacity
// entries.
func TransferQueueSize(capacity int) int {
	return TransferQueueHeaderSize + capacity*QueuedTransferSize
}

// NewTransferQueueAccount returns zeroed account data for a queue with
// room for capacity entries and header h (its Length is forced to 0).
func NewTransferQueueAccount(h TransferQueueHeader, capacity int) []byte {
	out := make([]byte, TransferQueueSize(max(capacity, 0)))
	h.Length = 0
	h.put(out)
	return out
}

// TransferQueue operates in place on the bytes of a transfer queue
// account: the header followed by a binary min-heap of entries ordered by
// ready_at (the earliest-ready entry is at index 0). Entries with equal
// ready_at have no defined relative order beyond what the heap operations
// produce deterministically. The heap is kept in the account bytes, so the
// local validator can push and pop without decoding the whole account.
type TransferQueue struct {
	b []byte
}

// OpenTransferQueue wraps account data. It checks that the header fits
// and that its length does not exceed the capacity, (len(data)−96)/96.
// Trailing bytes that do not form a whole entry are ignored.
func OpenTransferQueue(data []byte) (TransferQueue, error) {
	if len(data) < TransferQueueHeaderSize {
		return TransferQueue{}, accountErr("transfer queue", "%d bytes, want at least %d", len(data), TransferQueueHeaderSize)
	}
	q := TransferQueue{b: data}
	if n := binary.LittleEndian.Uint32(data[40:44]); uint64(n) > uint64(q.Cap()) {
		return TransferQueue{}, accountErr("transfer queue", "length %d exceeds capacity %d", n, q.Cap())
	}
	return q, nil
}

// Bytes returns the underlying account data.
func (q TransferQueue) Bytes() []byte { return q.b }

// Header decodes the header.
func (q TransferQueue) Header() TransferQueueHeader {
	h, _ := DecodeTransferQueueHeader(q.b)
	return h
}

// SetHeader overwrites the header. h.Length must not exceed Cap; the
// entries themselves are not touched.
func (q TransferQueue) SetHeader(h TransferQueueHeader) error {
	if uint64(h.Length) > uint64(q.Cap()) {
		return fmt.Errorf("set transfer queue header: length %d exceeds capacity %d", h.Length, q.Cap())
	}
	h.put(q.b)
	return nil
}

// Len is the number of queued entries.
func (q TransferQueue) Len() int { return int(binary.LittleEndian.Uint32(q.b[40:44])) }

// Cap is the number of entries the account has room for.
func (q TransferQueue) Cap() int { return (len(q.b) - TransferQueueHeaderSize) / QueuedTransferSize }

func (q TransferQueue) setLen(n int) { binary.LittleEndian.PutUint32(q.b[40:44], uint32(n)) }

func (q TransferQueue) slot(i int) []byte {
	off := TransferQueueHeaderSize + i*QueuedTransferSize
	return q.b[off : off+QueuedTransferSize]
}

func (q TransferQueue) readyAt(i int) int64 {
	off := TransferQueueHeaderSize + i*QueuedTransferSize + 72
	return int64(binary.LittleEndian.Uint64(q.b[off : off+8]))
}

func (q TransferQueue) swap(i, j int) {
	var tmp [QueuedTransferSize]byte
	a, b := q.slot(i), q.slot(j)
	copy(tmp[:], a)
	copy(a, b)
	copy(b, tmp[:])
}

// At returns the entry at heap index i (0 ≤ i < Len). Index 0 is the
// earliest-ready entry; other indexes follow heap order, not time order.
func (q TransferQueue) At(i int) QueuedTransfer {
	if i < 0 || i >= q.Len() {
		panic(fmt.Sprintf("espl: transfer queue index %d out of range [0,%d)", i, q.Len()))
	}
	return decodeEntry(q.slot(i))
}

// Peek returns the earliest-ready entry without removing it.
func (q TransferQueue) Peek() (QueuedTransfer, bool) {
	if q.Len() == 0 {
		return QueuedTransfer{}, false
	}
	return decodeEntry(q.slot(0)), true
}

// Push inserts e, keeping the heap ordered by ReadyAt. It returns
// ErrQueueFull when Len == Cap (the program then refunds the deposit).
func (q TransferQueue) Push(e QueuedTransfer) error {
	n := q.Len()
	if n >= q.Cap() {
		return fmt.Errorf("push queued transfer: %w (capacity %d)", ErrQueueFull, q.Cap())
	}
	e.put(q.slot(n))
	q.setLen(n + 1)
	for i := n; i > 0; {
		p := (i - 1) / 2
		if q.readyAt(i) >= q.readyAt(p) {
			break
		}
		q.swap(i, p)
		i = p
	}
	return nil
}

// Pop removes and returns the earliest-ready entry. The vacated slot is
// zeroed. It returns ErrQueueEmpty when the queue is empty.
func (q TransferQueue) Pop() (QueuedTransfer, error) {
	n := q.Len()
	if n == 0 {
		return QueuedTransfer{}, fmt.Errorf("pop queued transfer: %w", ErrQueueEmpty)
	}
	top := decodeEntry(q.slot(0))
	n--
	if n > 0 {
		copy(q.slot(0), q.slot(n))
	}
	clear(q.slot(n))
	q.setLen(n)
	for i := 0; ; {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && q.readyAt(r) < q.readyAt(l) {
			m = r
		}
		if q.readyAt(m) >= q.readyAt(i) {
			break
		}
		q.swap(i, m)
		i = m
	}
	return top, nil
}

// PopReady pops the earliest entry if its ReadyAt is at or before nowMs
// (unix milliseconds).
func (q TransferQueue) PopReady(nowMs int64) (QueuedTransfer, bool) {
	if q.Len() == 0 || q.readyAt(0) > nowMs {
		return QueuedTransfer{}, false
	}
	e, err := q.Pop()
	return e, err == nil
}
