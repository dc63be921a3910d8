package magic

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/txwire"
)

// ErrInvalidState is returned for Magic context or bridge state data that
// does not decode.
var ErrInvalidState = errors.New("invalid magic state")

func stateErr(what, format string, args ...any) error {
	return fmt.Errorf("decode %s: %w: %s", what, ErrInvalidState, fmt.Sprintf(format, args...))
}

// IntentKind is what an intent asks the validator to do on base.
type IntentKind uint8

// Intent kinds.
const (
	// KindCommit writes Intent.Data to the delegated account on base
	// (DLP CommitState); it stays delegated.
	KindCommit IntentKind = 1
	// KindCommitAndUndelegate writes Intent.Data and returns the account
	// to its owner program (DLP CommitAndUndelegate); the validator then
	// evicts the account and Intent.Evict from the ephemeral ledger.
	KindCommitAndUndelegate IntentKind = 2
	// KindBaseAction only runs Intent.Action on base.
	KindBaseAction IntentKind = 3
)

// String names the kind.
func (k IntentKind) String() string {
	switch k {
	case KindCommit:
		return "commit"
	case KindCommitAndUndelegate:
		return "commitAndUndelegate"
	case KindBaseAction:
		return "baseAction"
	}
	return fmt.Sprintf("intent(%d)", uint8(k))
}

// BaseAction is an instruction the validator executes on the base layer,
// signed by itself, after an intent's commit (real MagicBlock calls these
// base or L1 actions). Its program must be the program that scheduled the
// intent, and only the validator may be a signer among its accounts.
//
// Encoding: program[32] ‖ n u8 ‖ n × (key[32] ‖ flags u8: 1 signer,
// 2 writable) ‖ len u16 ‖ data.
type BaseAction struct {
	ProgramID solana.PublicKey
	Accounts  []txwire.AccountMeta
	Data      []byte
}

// Instruction returns the action as an instruction.
func (a *BaseAction) Instruction() txwire.Instruction {
	return txwire.Instruction{ProgramID: a.ProgramID, Accounts: append([]txwire.AccountMeta(nil), a.Accounts...), Data: append([]byte(nil), a.Data...)}
}

// ActionOf converts an instruction into a BaseAction.
func ActionOf(ix txwire.Instruction) *BaseAction {
	return &BaseAction{ProgramID: ix.ProgramID, Accounts: append([]txwire.AccountMeta(nil), ix.Accounts...), Data: append([]byte(nil), ix.Data...)}
}

// Encode serializes the action. It fails for more than 255 accounts or
// 65 535 data bytes.
func (a *BaseAction) Encode() ([]byte, error) {
	if len(a.Accounts) > 255 || len(a.Data) > 0xFFFF {
		return nil, fmt.Errorf("encode base action: %d accounts, %d data bytes: too large", len(a.Accounts), len(a.Data))
	}
	b := append(make([]byte, 0, 35+33*len(a.Accounts)+len(a.Data)), a.ProgramID[:]...)
	b = append(b, byte(len(a.Accounts)))
	for _, m := range a.Accounts {
		var f byte
		if m.IsSigner {
			f |= 1
		}
		if m.IsWritable {
			f |= 2
		}
		b = append(append(b, m.PublicKey[:]...), f)
	}
	b = binary.LittleEndian.AppendUint16(b, uint16(len(a.Data)))
	return append(b, a.Data...), nil
}

// DecodeBaseAction parses an encoded action.
func DecodeBaseAction(b []byte) (*BaseAction, error) {
	r := reader{b: b, what: "base action"}
	a := &BaseAction{ProgramID: r.key()}
	n := int(r.u8())
	for i := 0; i < n && r.err == nil; i++ {
		k := r.key()
		f := r.u8()
		if f > 3 {
			r.fail("account flags %d", f)
		}
		a.Accounts = append(a.Accounts, txwire.AccountMeta{PublicKey: k, IsSigner: f&1 != 0, IsWritable: f&2 != 0})
	}
	a.Data = r.bytes(int(r.u16()))
	r.end()
	if r.err != nil {
		return nil, r.err
	}
	return a, nil
}

// Intent is one request an ephemeral-rollup program made through the
// Magic program, waiting in the Magic context for the validator to
// execute it on base.
type Intent struct {
	ID   uint64
	Kind IntentKind
	// Slot is the ephemeral slot it was scheduled in.
	Slot uint64
	// Owner is the program that scheduled it (the committed account's
	// owner on the ephemeral ledger).
	Owner solana.PublicKey
	// Account is the committed account (zero for KindBaseAction).
	Account solana.PublicKey
	// Data is the account's state to commit, captured when scheduled.
	Data []byte
	// Evict lists further ephemeral accounts (e.g. the drained
	// projection) to remove once the undelegation has landed on base.
	Evict []solana.PublicKey
	// Action runs on base after the commit, if set.
	Action *BaseAction
}

func (it *Intent) append(b []byte) ([]byte, error) {
	var action []byte
	if it.Action != nil {
		var err error
		if action, err = it.Action.Encode(); err != nil {
			return nil, err
		}
	}
	if len(it.Evict) > 255 || len(action) > 0xFFFF || len(it.Data) > 10<<20 {
		return nil, errors.New("encode intent: too large")
	}
	b = binary.LittleEndian.AppendUint64(b, it.ID)
	b = append(b, byte(it.Kind))
	b = binary.LittleEndian.AppendUint64(b, it.Slot)
	b = append(b, it.Owner[:]...)
	b = append(b, it.Account[:]...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(it.Data)))
	b = append(b, it.Data...)
	b = append(b, byte(len(it.Evict)))
	for _, k := range it.Evict {
		b = append(b, k[:]...)
	}
	b = binary.LittleEndian.AppendUint16(b, uint16(len(action)))
	return append(b, action...), nil
}

func (r *reader) intent() Intent {
	it := Intent{ID: r.u64(), Kind: IntentKind(r.u8()), Slot: r.u64(), Owner: r.key(), Account: r.key()}
	if it.Kind < KindCommit || it.Kind > KindBaseAction {
		r.fail("intent kind %d", it.Kind)
	}
	it.Data = r.bytes(int(r.u32()))
	n := int(r.u8())
	for i := 0; i < n && r.err == nil; i++ {
		it.Evict = append(it.Evict, r.key())
	}
	if a := r.bytes(int(r.u16())); len(a) > 0 && r.err == nil {
		var err error
		if it.Action, err = DecodeBaseAction(a); err != nil {
			r.err = err
		}
	}
	return it
}

// Context is the decoded Magic context account (ferry's layout):
// "ferryMC1" ‖ next_id u64 ‖ count u32 ‖ count × intent, each
// id u64 ‖ kind u8 ‖ slot u64 ‖ owner[32] ‖ account[32] ‖ len u32 ‖ data ‖
// n u8 ‖ n × evict[32] ‖ len u16 ‖ base action.
type Context struct {
	// NextID is the id the next intent gets (ids start at 1).
	NextID  uint64
	Intents []Intent
}

const contextMagic = "ferryMC1"

// Encode serializes the context.
func (c *Context) Encode() ([]byte, error) {
	b := append([]byte(contextMagic), make([]byte, 12)...)
	binary.LittleEndian.PutUint64(b[8:], c.NextID)
	binary.LittleEndian.PutUint32(b[16:], uint32(len(c.Intents)))
	for i := range c.Intents {
		var err error
		if b, err = c.Intents[i].append(b); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// DecodeContext parses the Magic context account.
func DecodeContext(data []byte) (*Context, error) {
	r := reader{b: data, what: "magic context"}
	if string(r.bytes(8)) != contextMagic {
		return nil, stateErr("magic context", "bad magic")
	}
	c := &Context{NextID: r.u64()}
	n := r.u32()
	for i := uint32(0); i < n && r.err == nil; i++ {
		c.Intents = append(c.Intents, r.intent())
	}
	r.end()
	if r.err != nil {
		return nil, r.err
	}
	return c, nil
}

// Position is a place in the base ledger's history: a transaction of a
// block and a step within it. The bridge records the last one whose work
// is done, so replaying history after a restart repeats nothing.
type Position struct {
	Slot uint64
	Tx   uint32
	Step uint32
}

// Less orders positions.
func (p Position) Less(q Position) bool {
	if p.Slot != q.Slot {
		return p.Slot < q.Slot
	}
	if p.Tx != q.Tx {
		return p.Tx < q.Tx
	}
	return p.Step < q.Step
}

// BridgeState is the validator's own state on the ephemeral ledger
// (ferry's layout, at BridgeStateID, owned by the Magic program):
// "ferryBS1" ‖ slot u64 ‖ tx u32 ‖ step u32 ‖ n u16 ‖ n × queue[32].
type BridgeState struct {
	// Cursor is the last base position whose work is done.
	Cursor Position
	// Queues are the transfer queues delegated to this validator, which
	// its crank serves.
	Queues []solana.PublicKey
}

const bridgeMagic = "ferryBS1"

// Encode serializes the state.
func (s *BridgeState) Encode() []byte {
	b := append([]byte(bridgeMagic), make([]byte, 18)...)
	binary.LittleEndian.PutUint64(b[8:], s.Cursor.Slot)
	binary.LittleEndian.PutUint32(b[16:], s.Cursor.Tx)
	binary.LittleEndian.PutUint32(b[20:], s.Cursor.Step)
	binary.LittleEndian.PutUint16(b[24:], uint16(len(s.Queues)))
	for _, q := range s.Queues {
		b = append(b, q[:]...)
	}
	return b
}

// DecodeBridgeState parses the bridge state account.
func DecodeBridgeState(data []byte) (*BridgeState, error) {
	r := reader{b: data, what: "bridge state"}
	if string(r.bytes(8)) != bridgeMagic {
		return nil, stateErr("bridge state", "bad magic")
	}
	s := &BridgeState{Cursor: Position{Slot: r.u64(), Tx: r.u32(), Step: r.u32()}}
	n := int(r.u16())
	for i := 0; i < n && r.err == nil; i++ {
		s.Queues = append(s.Queues, r.key())
	}
	r.end()
	if r.err != nil {
		return nil, r.err
	}
	return s, nil
}

// reader decodes little-endian fields; the first failure sticks.
type reader struct {
	b    []byte
	err  error
	what string
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = stateErr(r.what, format, args...)
	}
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.fail("truncated")
		return nil
	}
	out := append([]byte(nil), r.b[:n]...)
	r.b = r.b[n:]
	return out
}

func (r *reader) u8() uint8 {
	if b := r.bytes(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *reader) u16() uint16 {
	if b := r.bytes(2); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

func (r *reader) u32() uint32 {
	if b := r.bytes(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *reader) u64() uint64 {
	if b := r.bytes(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (r *reader) key() solana.PublicKey {
	if b := r.bytes(32); b != nil {
		return solana.PublicKeyFromBytes(b)
	}
	return solana.PublicKey{}
}

func (r *reader) end() {
	if r.err == nil && len(r.b) != 0 {
		r.fail("%d trailing bytes", len(r.b))
	}
}
