// Package delegation is a native implementation of MagicBlock's delegation
// program ("DLP", DELeGGvXpWV2fqJUhqcF5ZSYMS4JTLjteaAMARRSaeSh) for ferry's
// base-layer ledger, as docs/localnet.md §2 describes it:
//
//   - Delegate (called by an owner program through CPI, e.g. eSPL ix 4):
//     the account's owner becomes DLP, its data is kept (copied back from
//     the owner program's ["buffer", account] PDA), and the delegation
//     record ["delegation", account] (espl-program.md §3.2 layout) and
//     delegation metadata ["delegation-metadata", account] (ferry's layout
//     in pkg/espl) are created, rent paid by the payer.
//   - CommitState and CommitAndUndelegate, reserved to the delegation's
//     validator: write the account's ephemeral-rollup state back, and
//     return it to its owner program (through the owner program's
//     undelegation callback, eSPL ix 196), closing the record and metadata
//     with their rent refunded to the recorded payer.
//   - IntentGuard (ferry-local): a per-validator high-water mark of the
//     ephemeral-rollup intents executed on base, which makes the local
//     validator's commits and payouts exactly-once across restarts.
//
// Instruction data starts with an 8-byte little-endian discriminator, as
// the real program's does; the argument encodings are ferry's own (the
// real program is only ever reached by CPI in these flows, see
// espl-program.md §2), documented on each builder.
package delegation

import (
	"encoding/binary"
	"fmt"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/internal/progutil"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// ProgramID is the delegation program's id.
var ProgramID = espl.DelegationProgramID

// BaseCost is the compute units one instruction charges (CPIs are extra).
const BaseCost = 4_000

// Config configures the program.
type Config struct {
	// DefaultValidator is the authority of a delegation whose data names
	// no validator: the local validator's identity (docs/localnet.md §2).
	DefaultValidator solana.PublicKey
}

// Registration returns the program's registration.
func Registration(cfg Config) *runtime.Registration {
	p := &program{cfg: cfg}
	return &runtime.Registration{ID: ProgramID, Name: "Delegation Program", Program: p, BaseCost: BaseCost}
}

// Errors (ferry-local custom codes; logs say what failed).
var (
	// ErrNotDelegated: the account is not owned by DLP or its record is
	// missing.
	ErrNotDelegated = runtime.Custom(0)
	// ErrAlreadyDelegated: a delegation record already exists.
	ErrAlreadyDelegated = runtime.Custom(1)
	// ErrWrongValidator: the signer is not the delegation's validator.
	ErrWrongValidator = runtime.Custom(2)
	// ErrIntentAlreadyExecuted: IntentGuard was given an id at or below
	// the recorded one (the intent already ran on base).
	ErrIntentAlreadyExecuted = runtime.Custom(3)
	// ErrInvalidOwnerProgram: the owner program does not match the record
	// or does not derive the account.
	ErrInvalidOwnerProgram = runtime.Custom(4)
	// ErrCallbackFailed: the owner program did not take the account back.
	ErrCallbackFailed = runtime.Custom(5)
)

type program struct{ cfg Config }

func (p *program) Execute(ctx *runtime.Context) error {
	if err := ctx.Consume(BaseCost); err != nil {
		return err
	}
	ix, err := Decode(ctx.Data())
	if err != nil {
		ctx.Log(err.Error())
		return runtime.ErrInvalidInstructionData
	}
	switch v := ix.(type) {
	case *DelegateIx:
		ctx.Log("Instruction: Delegate")
		return p.delegate(ctx, v)
	case *CommitStateIx:
		ctx.Log("Instruction: CommitState")
		return p.commitState(ctx, v)
	case *CommitAndUndelegateIx:
		ctx.Log("Instruction: CommitAndUndelegate")
		return p.commitAndUndelegate(ctx, v)
	case *IntentGuardIx:
		ctx.Log("Instruction: IntentGuard")
		return p.intentGuard(ctx, v)
	}
	return runtime.ErrInvalidInstructionData
}

// delegate: accounts 0 payer S W · 1 delegated account S W · 2 owner
// program · 3 buffer · 4 delegation record W · 5 delegation metadata W ·
// 6 System program.
func (p *program) delegate(ctx *runtime.Context, ix *DelegateIx) error {
	a, err := ctx.Accounts(7)
	if err != nil {
		return err
	}
	payer, acct, owner, buffer, record, meta, system := a[0], a[1], a[2], a[3], a[4], a[5], a[6]
	if err := progutil.SignerWritable(ctx, payer, "payer"); err != nil {
		return err
	}
	// The owner program proves it wants the delegation by signing for its
	// PDA (invoke_signed) after handing the account to DLP.
	if err := progutil.SignerWritable(ctx, acct, "delegated account"); err != nil {
		return err
	}
	if err := progutil.Owner(ctx, acct, ProgramID, "delegated account"); err != nil {
		return err
	}
	if err := progutil.Executable(ctx, owner, "owner program"); err != nil {
		return err
	}
	if err := progutil.ProgramKey(ctx, system, spl.SystemProgramID, "system program"); err != nil {
		return err
	}
	derived, _, err := solana.FindProgramAddress(ix.Seeds, owner.Key)
	if err != nil || derived != acct.Key {
		ctx.Logf("seeds do not derive %s under %s", acct.Key, owner.Key)
		return ErrInvalidOwnerProgram
	}
	wantBuf, _, err := progutil.Find(ctx, owner.Key, []byte(espl.SeedBuffer), acct.Key[:])
	if err != nil {
		return err
	}
	if err := progutil.Key(ctx, buffer, wantBuf, "delegate buffer"); err != nil {
		return err
	}
	if err := progutil.Owner(ctx, buffer, owner.Key, "delegate buffer"); err != nil {
		return err
	}
	if len(buffer.Data) != len(acct.Data) {
		ctx.Logf("buffer holds %d bytes, the account %d", len(buffer.Data), len(acct.Data))
		return runtime.ErrInvalidAccountData
	}
	recKey, recBump, err := progutil.Find(ctx, ProgramID, []byte(espl.SeedDelegation), acct.Key[:])
	if err != nil {
		return err
	}
	if err := progutil.Key(ctx, record, recKey, "delegation record"); err != nil {
		return err
	}
	metaKey, metaBump, err := progutil.Find(ctx, ProgramID, []byte(espl.SeedDelegationMetadata), acct.Key[:])
	if err != nil {
		return err
	}
	if err := progutil.Key(ctx, meta, metaKey, "delegation metadata"); err != nil {
		return err
	}
	if record.Owner == ProgramID || meta.Owner == ProgramID {
		ctx.Logf("%s is already delegated", acct.Key)
		return ErrAlreadyDelegated
	}
	validator := p.cfg.DefaultValidator
	if ix.Validator != nil {
		validator = *ix.Validator
	}
	metaData, err := espl.DelegationMetadata{RentPayer: payer.Key, Seeds: ix.Seeds, IsUndelegatable: true}.Encode()
	if err != nil {
		ctx.Log(err.Error())
		return runtime.ErrInvalidInstructionData
	}
	recSeeds := [][]byte{[]byte(espl.SeedDelegation), acct.Key[:], {recBump}}
	if err := progutil.CreatePDA(ctx, payer, record, recSeeds, espl.DelegationRecordSize, ProgramID); err != nil {
		return err
	}
	metaSeeds := [][]byte{[]byte(espl.SeedDelegationMetadata), acct.Key[:], {metaBump}}
	if err := progutil.CreatePDA(ctx, payer, meta, metaSeeds, len(metaData), ProgramID); err != nil {
		return err
	}
	record.Data = espl.DelegationRecord{
		Authority: validator, Owner: owner.Key, DelegationSlot: ctx.Env().Slot,
		Lamports: acct.Lamports, CommitFrequencyMs: uint64(ix.CommitFrequencyMs),
	}.Encode()
	copy(meta.Data, metaData)
	// The owner program zeroed the account to hand it over; its data
	// comes back from the buffer, now under DLP's ownership.
	copy(acct.Data, buffer.Data)
	ctx.Logf("Delegated %s (owner %s) to validator %s", acct.Key, owner.Key, validator)
	return nil
}

// loadDelegation checks a delegated account, its record and metadata,
// and the validator's signature, and decodes the record and metadata.
func loadDelegation(ctx *runtime.Context, validator, acct, record, meta *runtime.AccountRef) (espl.DelegationRecord, espl.DelegationMetadata, error) {
	var rec espl.DelegationRecord
	var md espl.DelegationMetadata
	if err := progutil.Signer(ctx, validator, "validator"); err != nil {
		return rec, md, err
	}
	if err := progutil.Writable(ctx, acct, "delegated account"); err != nil {
		return rec, md, err
	}
	recKey, _, err := progutil.Find(ctx, ProgramID, []byte(espl.SeedDelegation), acct.Key[:])
	if err != nil {
		return rec, md, err
	}
	if err := progutil.Key(ctx, record, recKey, "delegation record"); err != nil {
		return rec, md, err
	}
	metaKey, _, err := progutil.Find(ctx, ProgramID, []byte(espl.SeedDelegationMetadata), acct.Key[:])
	if err != nil {
		return rec, md, err
	}
	if err := progutil.Key(ctx, meta, metaKey, "delegation metadata"); err != nil {
		return rec, md, err
	}
	if acct.Owner != ProgramID || record.Owner != ProgramID || meta.Owner != ProgramID {
		ctx.Logf("%s is not delegated", acct.Key)
		return rec, md, ErrNotDelegated
	}
	if rec, err = espl.DecodeDelegationRecord(record.Data); err != nil {
		ctx.Log(err.Error())
		return rec, md, runtime.ErrInvalidAccountData
	}
	if md, err = espl.DecodeDelegationMetadata(meta.Data); err != nil {
		ctx.Log(err.Error())
		return rec, md, runtime.ErrInvalidAccountData
	}
	if rec.Authority != validator.Key {
		ctx.Logf("%s is delegated to %s, not %s", acct.Key, rec.Authority, validator.Key)
		return rec, md, ErrWrongValidator
	}
	return rec, md, nil
}

// commitState: accounts 0 validator S · 1 delegated account W · 2
// delegation record · 3 delegation metadata W.
func (p *program) commitState(ctx *runtime.Context, ix *CommitStateIx) error {
	a, err := ctx.Accounts(4)
	if err != nil {
		return err
	}
	validator, acct, record, meta := a[0], a[1], a[2], a[3]
	_, md, err := loadDelegation(ctx, validator, acct, record, meta)
	if err != nil {
		return err
	}
	if err := progutil.Writable(ctx, meta, "delegation metadata"); err != nil {
		return err
	}
	if err := rentCovers(ctx, acct, len(ix.Data)); err != nil {
		return err
	}
	acct.Data = append(acct.Data[:0:0], ix.Data...)
	md.LastUpdateNonce++
	out, err := md.Encode()
	if err != nil || len(out) != len(meta.Data) {
		return runtime.ErrInvalidAccountData
	}
	copy(meta.Data, out)
	ctx.Logf("Committed %d bytes to %s (nonce %d)", len(ix.Data), acct.Key, md.LastUpdateNonce)
	return nil
}

// commitAndUndelegate: accounts 0 validator S W · 1 delegated account W ·
// 2 owner program · 3 undelegate buffer (DLP PDA, signs the callback) ·
// 4 delegation record W · 5 delegation metadata W · 6 rent payer W ·
// 7 System program.
func (p *program) commitAndUndelegate(ctx *runtime.Context, ix *CommitAndUndelegateIx) error {
	a, err := ctx.Accounts(8)
	if err != nil {
		return err
	}
	validator, acct, owner, buffer, record, meta, rentPayer, system := a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]
	rec, md, err := loadDelegation(ctx, validator, acct, record, meta)
	if err != nil {
		return err
	}
	if err := progutil.Writable(ctx, validator, "validator"); err != nil {
		return err
	}
	for _, w := range []*runtime.AccountRef{record, meta, rentPayer} {
		if err := progutil.Writable(ctx, w, "account"); err != nil {
			return err
		}
	}
	if owner.Key != rec.Owner {
		ctx.Logf("owner program %s does not match the record's %s", owner.Key, rec.Owner)
		return ErrInvalidOwnerProgram
	}
	if err := progutil.Executable(ctx, owner, "owner program"); err != nil {
		return err
	}
	if rentPayer.Key != md.RentPayer {
		ctx.Logf("rent payer %s does not match the recorded %s", rentPayer.Key, md.RentPayer)
		return runtime.ErrInvalidArgument
	}
	if err := progutil.ProgramKey(ctx, system, spl.SystemProgramID, "system program"); err != nil {
		return err
	}
	bufKey, bufBump, err := progutil.Find(ctx, ProgramID, []byte(espl.SeedUndelegateBuffer), acct.Key[:])
	if err != nil {
		return err
	}
	if err := progutil.Key(ctx, buffer, bufKey, "undelegate buffer"); err != nil {
		return err
	}
	if err := rentCovers(ctx, acct, len(ix.Data)); err != nil {
		return err
	}
	// Hand the account back zeroed (the runtime allows an owner change
	// only for zeroed data); the owner program's callback writes the
	// committed state, authenticated by the undelegate buffer's signature.
	acct.Data = make([]byte, len(ix.Data))
	acct.Owner = owner.Key
	cb := UndelegateCallback(owner.Key, acct.Key, validator.Key, ix.Data)
	if err := ctx.Invoke(cb, [][]byte{[]byte(espl.SeedUndelegateBuffer), acct.Key[:], {bufBump}}); err != nil {
		return err
	}
	if acct.Owner != owner.Key || len(acct.Data) != len(ix.Data) {
		ctx.Logf("owner program %s did not restore %s", owner.Key, acct.Key)
		return ErrCallbackFailed
	}
	progutil.Close(record, rentPayer)
	progutil.Close(meta, rentPayer)
	ctx.Logf("Undelegated %s back to %s", acct.Key, owner.Key)
	return nil
}

// intentGuard: accounts 0 validator S W · 1 guard PDA W · 2 System program.
func (p *program) intentGuard(ctx *runtime.Context, ix *IntentGuardIx) error {
	a, err := ctx.Accounts(3)
	if err != nil {
		return err
	}
	validator, guard, system := a[0], a[1], a[2]
	if err := progutil.SignerWritable(ctx, validator, "validator"); err != nil {
		return err
	}
	if err := progutil.Writable(ctx, guard, "intent guard"); err != nil {
		return err
	}
	key, bump, err := progutil.Find(ctx, ProgramID, []byte(SeedIntentGuard), validator.Key[:])
	if err != nil {
		return err
	}
	if err := progutil.Key(ctx, guard, key, "intent guard"); err != nil {
		return err
	}
	if guard.Owner != ProgramID {
		if err := progutil.ProgramKey(ctx, system, spl.SystemProgramID, "system program"); err != nil {
			return err
		}
		seeds := [][]byte{[]byte(SeedIntentGuard), validator.Key[:], {bump}}
		if err := progutil.CreatePDA(ctx, validator, guard, seeds, GuardSize, ProgramID); err != nil {
			return err
		}
		copy(guard.Data, validator.Key[:])
	}
	g, err := DecodeGuard(guard.Data)
	if err != nil || g.Validator != validator.Key {
		ctx.Logf("intent guard %s is corrupt", guard.Key)
		return runtime.ErrInvalidAccountData
	}
	if ix.IntentID <= g.LastIntentID {
		ctx.Logf("intent %d already executed (guard at %d)", ix.IntentID, g.LastIntentID)
		return ErrIntentAlreadyExecuted
	}
	binary.LittleEndian.PutUint64(guard.Data[32:], ix.IntentID)
	ctx.Logf("Executing intent %d", ix.IntentID)
	return nil
}

// Guard is the decoded intent guard account (ferry-local, 40 bytes):
// validator[32] ‖ last executed intent id u64.
type Guard struct {
	Validator    solana.PublicKey
	LastIntentID uint64
}

// GuardSize is the intent guard account's size.
const GuardSize = 40

// SeedIntentGuard is the intent guard PDA's seed prefix (ferry-local).
const SeedIntentGuard = "ferry-intent-guard"

// GuardAddress is the intent guard PDA of a validator.
func GuardAddress(validator solana.PublicKey) solana.PublicKey {
	k, _, _ := solana.FindProgramAddress([][]byte{[]byte(SeedIntentGuard), validator[:]}, ProgramID)
	return k
}

// DecodeGuard parses an intent guard account.
func DecodeGuard(data []byte) (Guard, error) {
	if len(data) != GuardSize {
		return Guard{}, fmt.Errorf("decode intent guard: %d bytes, want %d", len(data), GuardSize)
	}
	return Guard{Validator: solana.PublicKeyFromBytes(data[:32]), LastIntentID: binary.LittleEndian.Uint64(data[32:])}, nil
}

// TakeBack is the owner-program side of undelegation, for owner programs
// to call when their instruction data is an UndelegateCallback: it checks
// that DLP's undelegate buffer PDA signed (so only DLP can invoke it) and
// that the account was handed back zeroed, then writes the committed
// state. Accounts: 0 account W · 1 undelegate buffer S · 2 payer S W ·
// 3 System program.
func TakeBack(ctx *runtime.Context) error {
	state, ok := ParseUndelegateCallback(ctx.Data())
	if !ok {
		return runtime.ErrInvalidInstructionData
	}
	a, err := ctx.Accounts(2)
	if err != nil {
		return err
	}
	acct, buffer := a[0], a[1]
	want, _ := espl.FindUndelegateBuffer(acct.Key)
	if buffer.Key != want || !buffer.IsSigner {
		ctx.Log("undelegation callback not signed by the delegation program")
		return runtime.ErrMissingRequiredSignature
	}
	if err := progutil.Writable(ctx, acct, "undelegated account"); err != nil {
		return err
	}
	if acct.Owner != ctx.ProgramID() || len(acct.Data) != len(state) || !progutil.Zeroed(acct.Data) {
		ctx.Logf("%s was not handed back to %s", acct.Key, ctx.ProgramID())
		return runtime.ErrInvalidAccountData
	}
	copy(acct.Data, state)
	return nil
}

// rentCovers refuses a commit whose data size the account's lamports do
// not keep rent-exempt (commits carry data, not lamports).
func rentCovers(ctx *runtime.Context, acct *runtime.AccountRef, size int) error {
	if need := ctx.Env().Rent.MinimumBalance(size); acct.Lamports < need {
		ctx.Logf("committing %d bytes needs %d lamports in %s, it has %d", size, need, acct.Key, acct.Lamports)
		return runtime.ErrAccountNotRentExempt
	}
	return nil
}
