package magic

import (
	"encoding/binary"
	"errors"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/txwire"
)

// ErrInvalidInstruction wraps every decoding and building failure.
var ErrInvalidInstruction = errors.New("invalid magic instruction")

// Instruction is a decoded Magic instruction: *ScheduleIx,
// *ScheduleBaseActionIx, *AcceptIntentsIx, *AdvanceBaseCursorIx,
// *ExecuteActionsIx or *CreateEphemeralAccountIx.
type Instruction interface{ isMagic() }

// ScheduleIx is ScheduleCommit (Undelegate false) or
// ScheduleCommitAndUndelegate. Data: disc u32 ‖ has_data u8 [‖ len u32 ‖
// data] ‖ n u8 ‖ n × drain index u8 ‖ m u8 ‖ m × evict index u8 ‖
// len u16 ‖ base action. Indexes point into the instruction's accounts.
type ScheduleIx struct {
	Undelegate bool
	// Data is the state to commit; nil commits the account's current data.
	Data []byte
	// Drain are projected token accounts whose balance moves into the
	// commit: they are zeroed, frozen and later evicted.
	Drain []uint8
	// Evict are further accounts to evict after the undelegation.
	Evict  []uint8
	Action *BaseAction
}

// ScheduleBaseActionIx schedules a base action. Data: disc u32 ‖ len u16 ‖
// base action.
type ScheduleBaseActionIx struct{ Action *BaseAction }

// AcceptIntentsIx drops the intents with id ≤ UpTo. Data: disc ‖ u64.
type AcceptIntentsIx struct{ UpTo uint64 }

// AdvanceBaseCursorIx records a base position as done. Data: disc ‖
// slot u64 ‖ tx u32 ‖ step u32.
type AdvanceBaseCursorIx struct{ Position Position }

// ExecuteActionsIx runs post-delegation actions. Data: disc ‖ n u8 ‖
// n × signer index u8 ‖ m u8 ‖ m × action, each program index u8 ‖ k u8 ‖
// k × (index u8 ‖ flags u8: 1 signer, 2 writable) ‖ len u16 ‖ data.
type ExecuteActionsIx struct {
	Signers []uint8
	Actions []Action
}

// Action is one compiled post-delegation action.
type Action struct {
	Program  uint8
	Accounts []ActionAccount
	Data     []byte
}

// ActionAccount is one account of an Action.
type ActionAccount struct{ Index, Flags uint8 }

// CreateEphemeralAccountIx creates an account for the calling program.
// Data: disc ‖ size u32.
type CreateEphemeralAccountIx struct{ Size uint32 }

func (*ScheduleIx) isMagic()               {}
func (*ScheduleBaseActionIx) isMagic()     {}
func (*AcceptIntentsIx) isMagic()          {}
func (*AdvanceBaseCursorIx) isMagic()      {}
func (*ExecuteActionsIx) isMagic()         {}
func (*CreateEphemeralAccountIx) isMagic() {}

// Decode parses Magic instruction data.
func Decode(data []byte) (Instruction, error) {
	if len(data) < 4 {
		return nil, errorf("%d bytes, want at least 4", len(data))
	}
	r := reader{b: data[4:], what: "magic instruction"}
	var ix Instruction
	switch d := u32(data); d {
	case DiscScheduleCommit, DiscScheduleCommitAndUndelegate:
		s := &ScheduleIx{Undelegate: d == DiscScheduleCommitAndUndelegate}
		switch r.u8() {
		case 0:
		case 1:
			s.Data = r.bytes(int(r.u32()))
			if s.Data == nil {
				s.Data = []byte{}
			}
		default:
			r.fail("has_data flag")
		}
		s.Drain = r.bytes(int(r.u8()))
		s.Evict = r.bytes(int(r.u8()))
		if a := r.bytes(int(r.u16())); len(a) > 0 && r.err == nil {
			act, err := DecodeBaseAction(a)
			if err != nil {
				return nil, errorf("%v", err)
			}
			s.Action = act
		}
		ix = s
	case DiscScheduleBaseAction:
		act, err := DecodeBaseAction(r.bytes(int(r.u16())))
		if err != nil && r.err == nil {
			return nil, errorf("%v", err)
		}
		ix = &ScheduleBaseActionIx{Action: act}
	case DiscAcceptIntents:
		ix = &AcceptIntentsIx{UpTo: r.u64()}
	case DiscAdvanceBaseCursor:
		ix = &AdvanceBaseCursorIx{Position: Position{Slot: r.u64(), Tx: r.u32(), Step: r.u32()}}
	case DiscExecuteActions:
		e := &ExecuteActionsIx{Signers: r.bytes(int(r.u8()))}
		n := int(r.u8())
		for i := 0; i < n && r.err == nil; i++ {
			a := Action{Program: r.u8()}
			k := int(r.u8())
			for j := 0; j < k && r.err == nil; j++ {
				a.Accounts = append(a.Accounts, ActionAccount{Index: r.u8(), Flags: r.u8()})
			}
			a.Data = r.bytes(int(r.u16()))
			e.Actions = append(e.Actions, a)
		}
		ix = e
	case DiscCreateEphemeralAccount:
		ix = &CreateEphemeralAccountIx{Size: r.u32()}
	default:
		return nil, errorf("unknown discriminator %d", d)
	}
	r.end()
	if r.err != nil {
		return nil, errorf("%v", r.err)
	}
	return ix, nil
}

func disc(d uint32) []byte { return binary.LittleEndian.AppendUint32(nil, d) }

// ScheduleArgs are the arguments of Schedule.
type ScheduleArgs struct {
	Payer      solana.PublicKey // any signer of the calling instruction
	Account    solana.PublicKey // owned by the calling program
	Undelegate bool
	// Data is the state to commit; nil commits the current data.
	Data []byte
	// Drain are token accounts (writable) whose balance moves into the
	// commit; Evict are further accounts to evict after undelegation.
	Drain, Evict []solana.PublicKey
	// Action, if set, runs on base after the commit.
	Action *BaseAction
}

// Schedule builds ScheduleCommit or ScheduleCommitAndUndelegate, for an
// owner program to invoke. Accounts: 0 payer S · 1 magic context W ·
// 2 account · then the drained accounts (W) and the evicted accounts.
func Schedule(a ScheduleArgs) (txwire.Instruction, error) {
	d := DiscScheduleCommit
	if a.Undelegate {
		d = DiscScheduleCommitAndUndelegate
	}
	if len(a.Drain)+len(a.Evict) > 200 {
		return txwire.Instruction{}, errorf("too many drained or evicted accounts")
	}
	data := disc(d)
	if a.Data != nil {
		data = binary.LittleEndian.AppendUint32(append(data, 1), uint32(len(a.Data)))
		data = append(data, a.Data...)
	} else {
		data = append(data, 0)
	}
	metas := []txwire.AccountMeta{txwire.Signer(a.Payer), txwire.Writable(ContextID), txwire.Readonly(a.Account)}
	data = append(data, byte(len(a.Drain)))
	for _, k := range a.Drain {
		data = append(data, byte(len(metas)))
		metas = append(metas, txwire.Writable(k))
	}
	data = append(data, byte(len(a.Evict)))
	for _, k := range a.Evict {
		data = append(data, byte(len(metas)))
		metas = append(metas, txwire.Readonly(k))
	}
	var act []byte
	if a.Action != nil {
		var err error
		if act, err = a.Action.Encode(); err != nil {
			return txwire.Instruction{}, errorf("%v", err)
		}
	}
	data = binary.LittleEndian.AppendUint16(data, uint16(len(act)))
	return txwire.Instruction{ProgramID: ProgramID, Accounts: metas, Data: append(data, act...)}, nil
}

// ScheduleBaseAction builds ScheduleBaseAction, for the action's own
// program to invoke. Accounts: 0 payer S · 1 magic context W.
func ScheduleBaseAction(payer solana.PublicKey, action *BaseAction) (txwire.Instruction, error) {
	act, err := action.Encode()
	if err != nil {
		return txwire.Instruction{}, errorf("%v", err)
	}
	data := binary.LittleEndian.AppendUint16(disc(DiscScheduleBaseAction), uint16(len(act)))
	return txwire.Instruction{ProgramID: ProgramID, Data: append(data, act...),
		Accounts: []txwire.AccountMeta{txwire.Signer(payer), txwire.Writable(ContextID)}}, nil
}

// AcceptIntents builds AcceptIntents (validator only): drop the intents
// with id ≤ upTo. Accounts: 0 validator S · 1 magic context W.
func AcceptIntents(validator solana.PublicKey, upTo uint64) txwire.Instruction {
	return txwire.Instruction{ProgramID: ProgramID, Data: binary.LittleEndian.AppendUint64(disc(DiscAcceptIntents), upTo),
		Accounts: []txwire.AccountMeta{txwire.Signer(validator), txwire.Writable(ContextID)}}
}

// AdvanceBaseCursor builds AdvanceBaseCursor (validator only); it fails
// with ErrCursorNotAdvanced unless pos is after the recorded cursor, which
// makes the transaction carrying it exactly-once. Accounts: 0 validator S ·
// 1 bridge state W.
func AdvanceBaseCursor(validator solana.PublicKey, pos Position) txwire.Instruction {
	data := binary.LittleEndian.AppendUint64(disc(DiscAdvanceBaseCursor), pos.Slot)
	data = binary.LittleEndian.AppendUint32(data, pos.Tx)
	data = binary.LittleEndian.AppendUint32(data, pos.Step)
	return txwire.Instruction{ProgramID: ProgramID, Data: data,
		Accounts: []txwire.AccountMeta{txwire.Signer(validator), txwire.Writable(BridgeStateID)}}
}

// ExecuteActions builds ExecuteActions for the action executor program
// (validator only): invoke actions in
// order, granting signer privilege to signers (the action signers
// registered with a delegation) wherever an action marks them signer.
// Accounts: 0 validator S · then every program and account of the
// actions, writable where some action writes it.
func ExecuteActions(validator solana.PublicKey, signers []solana.PublicKey, actions []txwire.Instruction) (txwire.Instruction, error) {
	metas := []txwire.AccountMeta{txwire.Signer(validator)}
	index := map[solana.PublicKey]int{validator: 0}
	add := func(k solana.PublicKey, writable bool) (uint8, error) {
		i, ok := index[k]
		if !ok {
			i = len(metas)
			index[k] = i
			metas = append(metas, txwire.Readonly(k))
		}
		metas[i].IsWritable = metas[i].IsWritable || writable
		if i > 255 {
			return 0, errorf("too many accounts")
		}
		return uint8(i), nil
	}
	data := disc(DiscExecuteActions)
	data = append(data, byte(len(signers)))
	for _, s := range signers {
		i, err := add(s, false)
		if err != nil {
			return txwire.Instruction{}, err
		}
		data = append(data, i)
	}
	if len(actions) > 255 {
		return txwire.Instruction{}, errorf("%d actions", len(actions))
	}
	data = append(data, byte(len(actions)))
	for _, ix := range actions {
		pi, err := add(ix.ProgramID, false)
		if err != nil {
			return txwire.Instruction{}, err
		}
		if len(ix.Accounts) > 255 || len(ix.Data) > 0xFFFF {
			return txwire.Instruction{}, errorf("action too large")
		}
		data = append(data, pi, byte(len(ix.Accounts)))
		for _, m := range ix.Accounts {
			i, err := add(m.PublicKey, m.IsWritable)
			if err != nil {
				return txwire.Instruction{}, err
			}
			var f byte
			if m.IsSigner {
				f |= 1
			}
			if m.IsWritable {
				f |= 2
			}
			data = append(data, i, f)
		}
		data = binary.LittleEndian.AppendUint16(data, uint16(len(ix.Data)))
		data = append(data, ix.Data...)
	}
	return txwire.Instruction{ProgramID: ActionExecutorID, Accounts: metas, Data: data}, nil
}

// CreateEphemeralAccount builds CreateEphemeralAccount, for a program to
// invoke (signing for account, usually its PDA): create account with
// size zeroed bytes, owned by the calling program, its rent paid by the
// ephemeral vault. Accounts: 0 vault W · 1 account S W.
func CreateEphemeralAccount(account solana.PublicKey, size uint32) txwire.Instruction {
	return txwire.Instruction{ProgramID: ProgramID, Data: binary.LittleEndian.AppendUint32(disc(DiscCreateEphemeralAccount), size),
		Accounts: []txwire.AccountMeta{txwire.Writable(VaultID), txwire.WritableSigner(account)}}
}

type actionInstruction struct {
	program solana.PublicKey
	metas   []txwire.AccountMeta
	data    []byte
}

func (a actionInstruction) instruction() txwire.Instruction {
	return txwire.Instruction{ProgramID: a.program, Accounts: a.metas, Data: a.data}
}

func metaOf(k solana.PublicKey, signer, writable bool) txwire.AccountMeta {
	return txwire.AccountMeta{PublicKey: k, IsSigner: signer, IsWritable: writable}
}
