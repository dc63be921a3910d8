package ledger

import (
	"fmt"

	"github.com/gagliardetto/solana-go"
)

// undoMap is a slot's undo history: for each account the slot wrote, the
// value it had before the slot first wrote it (nil: it did not exist).
//
// The values are kept encoded (the account log's compact record) in one
// buffer, and the map holds only keys and positions, so neither has a
// pointer for the garbage collector to follow. The unfinalized window
// holds one value per account written per slot: at a million accounts
// nearly every transfer's recipient is an account of its own, and 32
// slots at 20 000 transfers a second kept over 200 000 decoded accounts
// alive, which made every collection cycle mark them and, against the
// memory limit, made the cycles frequent (a quarter of the node's CPU).
// A read at an older commitment decodes the value it needs.
type undoMap struct {
	at  map[solana.PublicKey]undoRef
	buf []byte
}

// undoRef locates a value in undoMap.buf; n == 0 is a nil value (an
// encoded account is never empty).
type undoRef struct {
	off uint64
	n   uint32
}

func newUndoMap() undoMap { return undoMap{at: map[solana.PublicKey]undoRef{}} }

// len is how many accounts the slot wrote.
func (u *undoMap) len() int { return len(u.at) }

// has reports whether the slot wrote k.
func (u *undoMap) has(k solana.PublicKey) bool {
	_, ok := u.at[k]
	return ok
}

// set records a's encoding as k's value before the slot, replacing any
// (a may be nil). The bytes of a replaced value stay in the buffer until
// the slot is finalized; replacing is rare (a forked account's copy).
func (u *undoMap) set(k solana.PublicKey, a *Account) {
	if a == nil {
		u.at[k] = undoRef{}
		return
	}
	off := len(u.buf)
	u.buf = appendAccountRecord(u.buf, a)
	u.at[k] = undoRef{off: uint64(off), n: uint32(len(u.buf) - off)}
}

// get returns k's value before the slot, decoded, and whether the slot
// wrote k.
func (u *undoMap) get(k solana.PublicKey) (*Account, bool, error) {
	r, ok := u.at[k]
	if !ok {
		return nil, false, nil
	}
	a, err := u.decode(r, nil)
	return a, true, err
}

// getInto is get without the allocation: it decodes k's value into
// scratch (reusing its data array) and returns scratch, or nil when the
// value is nil or the slot did not write k.
func (u *undoMap) getInto(k solana.PublicKey, scratch *Account) (*Account, error) {
	return u.decode(u.at[k], scratch)
}

// decode decodes the value r locates, into scratch if it is not nil
// (decodeAccountRecordInto).
func (u *undoMap) decode(r undoRef, scratch *Account) (*Account, error) {
	if r.n == 0 {
		return nil, nil
	}
	a, err := decodeAccountRecordInto(scratch, u.buf[r.off:r.off+uint64(r.n)])
	if err != nil {
		return nil, fmt.Errorf("undo history: %w", err)
	}
	return a, nil
}

// undoView is the merged undo history of several slots: for each account
// one of them wrote, its value before the first of them that wrote it,
// decoded when it is read.
type undoView map[solana.PublicKey]undoEntry

type undoEntry struct {
	m *undoMap
	r undoRef
}

// exists reports whether the value was an account rather than nil.
func (e undoEntry) exists() bool { return e.r.n != 0 }

// value decodes the value.
func (e undoEntry) value() (*Account, error) { return e.m.decode(e.r, nil) }
