package delegation_test

import (
	"crypto/sha256"
	"encoding/binary"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/ledger/programs"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/delegation"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/internal/progutil"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/programtest"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// ownerProgram is a minimal owner program: data [0] creates its PDA
// ["acct"] holding "hello" and delegates it (validator in the remaining
// 32 bytes, if any); the undelegation callback takes the account back.
var ownerProgram = func() solana.PublicKey {
	h := sha256.Sum256([]byte("owner program"))
	return solana.PublicKeyFromBytes(h[:])
}()

var (
	validator = solana.NewWallet().PublicKey()
	payer     = solana.NewWallet().PublicKey()
)

func pda() (solana.PublicKey, uint8) {
	k, b, _ := solana.FindProgramAddress([][]byte{[]byte("acct")}, ownerProgram)
	return k, b
}

func ownerReg() *runtime.Registration {
	return &runtime.Registration{ID: ownerProgram, Name: "owner", Program: runtime.ProgramFunc(func(ctx *runtime.Context) error {
		if _, ok := delegation.ParseUndelegateCallback(ctx.Data()); ok {
			return delegation.TakeBack(ctx)
		}
		a, err := ctx.Accounts(7)
		if err != nil {
			return err
		}
		pay, acct, buf := a[0], a[1], a[2]
		key, bump := pda()
		if acct.Owner != ownerProgram {
			if err := progutil.CreatePDA(ctx, pay, acct, [][]byte{[]byte("acct"), {bump}}, 5, ownerProgram); err != nil {
				return err
			}
			copy(acct.Data, "hello")
		}
		var v *solana.PublicKey
		if d := ctx.Data(); len(d) == 33 {
			k := solana.PublicKeyFromBytes(d[1:])
			v = &k
		}
		_ = key
		return delegation.DelegateFromOwner(ctx, delegation.OwnerDelegation{
			Payer: pay, Account: acct, Buffer: buf, Seeds: [][]byte{[]byte("acct")}, Bump: bump, Validator: v,
		})
	})}
}

func delegateIx(v *solana.PublicKey) txwire.Instruction {
	acct, _ := pda()
	buf, _ := espl.FindDelegateBuffer(acct, ownerProgram)
	rec, _ := espl.FindDelegationRecord(acct)
	meta, _ := espl.FindDelegationMetadata(acct)
	data := []byte{0}
	if v != nil {
		data = append(data, v[:]...)
	}
	return txwire.Instruction{ProgramID: ownerProgram, Data: data, Accounts: []txwire.AccountMeta{
		txwire.WritableSigner(payer), txwire.Writable(acct), txwire.Writable(buf), txwire.Writable(rec),
		txwire.Writable(meta), txwire.Readonly(delegation.ProgramID), txwire.Readonly(spl.SystemProgramID),
	}}
}

func newHarness(t *testing.T) *programtest.Harness {
	regs := append(programs.Builtins(), delegation.Registration(delegation.Config{DefaultValidator: validator}), ownerReg())
	h := programtest.New(t, regs...)
	h.Fund(payer, 10*programtest.SOL)
	h.Fund(validator, 10*programtest.SOL)
	return h
}

func TestDelegateCommitUndelegate(t *testing.T) {
	h := newHarness(t)
	acct, _ := pda()
	recKey, _ := espl.FindDelegationRecord(acct)
	metaKey, _ := espl.FindDelegationMetadata(acct)
	bufKey, _ := espl.FindDelegateBuffer(acct, ownerProgram)
	before := h.Lamports(payer)

	h.Run(payer, delegateIx(nil)).RequireSuccess(t)
	a := h.Account(acct)
	if a.Owner != delegation.ProgramID || string(a.Data) != "hello" {
		t.Fatalf("delegated account: owner %s data %q", a.Owner, a.Data)
	}
	if h.Account(bufKey) != nil {
		t.Fatal("buffer was not closed")
	}
	rec, err := espl.DecodeDelegationRecord(h.Account(recKey).Data)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Authority != validator || rec.Owner != ownerProgram || rec.DelegationSlot != h.Env.Slot || rec.Lamports != a.Lamports {
		t.Fatalf("record %+v", rec)
	}
	md, err := espl.DecodeDelegationMetadata(h.Account(metaKey).Data)
	if err != nil || md.RentPayer != payer || len(md.Seeds) != 1 || string(md.Seeds[0]) != "acct" {
		t.Fatalf("metadata %+v %v", md, err)
	}
	// A second delegation finds the account taken (it belongs to DLP now).
	h.Run(payer, delegateIx(nil)).RequireError(t, 0, runtime.ErrAccountAlreadyInitialized)

	// Only the record's validator may commit.
	stranger := solana.NewWallet().PublicKey()
	h.Fund(stranger, programtest.SOL)
	h.Run(stranger, delegation.CommitState(stranger, acct, []byte("world!"))).RequireError(t, 0, delegation.ErrWrongValidator)
	big := make([]byte, 1000)
	h.Run(validator, delegation.CommitState(validator, acct, big)).RequireError(t, 0, runtime.ErrAccountNotRentExempt)
	h.Run(validator, delegation.CommitState(validator, acct, []byte("world"))).RequireSuccess(t)
	if got := string(h.Account(acct).Data); got != "world" {
		t.Fatalf("committed data %q", got)
	}
	if md, _ := espl.DecodeDelegationMetadata(h.Account(metaKey).Data); md.LastUpdateNonce != 1 {
		t.Fatalf("nonce %d", md.LastUpdateNonce)
	}

	rentBack := h.Lamports(recKey) + h.Lamports(metaKey)
	payerBefore := h.Lamports(payer)
	res := h.Run(validator, delegation.CommitAndUndelegate(delegation.CommitAndUndelegateArgs{
		Validator: validator, Account: acct, OwnerProgram: ownerProgram, RentPayer: payer, Data: []byte("final"),
	}))
	res.RequireSuccess(t)
	a = h.Account(acct)
	if a.Owner != ownerProgram || string(a.Data) != "final" {
		t.Fatalf("undelegated account: owner %s data %q", a.Owner, a.Data)
	}
	if h.Account(recKey) != nil || h.Account(metaKey) != nil {
		t.Fatal("record or metadata survived undelegation")
	}
	if got := h.Lamports(payer) - payerBefore; got != rentBack {
		t.Fatalf("rent payer refunded %d, want %d", got, rentBack)
	}
	if spent := before - h.Lamports(payer); spent != h.Lamports(acct) {
		t.Fatalf("payer spent %d overall, want only the account's rent %d", spent, h.Lamports(acct))
	}
	// Undelegating again fails: the account is no longer delegated.
	h.Run(validator, delegation.CommitAndUndelegate(delegation.CommitAndUndelegateArgs{
		Validator: validator, Account: acct, OwnerProgram: ownerProgram, RentPayer: payer, Data: []byte("final"),
	})).RequireError(t, 0, delegation.ErrNotDelegated)

	// It can be delegated again, now to an explicit validator.
	other := solana.NewWallet().PublicKey()
	h.Run(payer, delegateIx(&other)).RequireSuccess(t)
	rec, _ = espl.DecodeDelegationRecord(h.Account(recKey).Data)
	if rec.Authority != other {
		t.Fatalf("authority %s, want %s", rec.Authority, other)
	}
}

func TestUndelegateChecks(t *testing.T) {
	h := newHarness(t)
	acct, _ := pda()
	h.Run(payer, delegateIx(nil)).RequireSuccess(t)
	stranger := solana.NewWallet().PublicKey()
	cases := []struct {
		name string
		args delegation.CommitAndUndelegateArgs
		want *runtime.InstructionError
	}{
		{"wrong rent payer", delegation.CommitAndUndelegateArgs{Validator: validator, Account: acct, OwnerProgram: ownerProgram, RentPayer: stranger}, runtime.ErrInvalidArgument},
		{"wrong owner program", delegation.CommitAndUndelegateArgs{Validator: validator, Account: acct, OwnerProgram: spl.TokenProgramID, RentPayer: payer}, delegation.ErrInvalidOwnerProgram},
		{"data size change to 0 is allowed but owner must match", delegation.CommitAndUndelegateArgs{Validator: validator, Account: acct, OwnerProgram: delegation.ProgramID, RentPayer: payer}, delegation.ErrInvalidOwnerProgram},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h.Run(validator, delegation.CommitAndUndelegate(tc.args)).RequireError(t, 0, tc.want)
		})
	}
	// A direct call of the owner program's callback is refused: nobody but
	// DLP can sign for the undelegate buffer PDA, and the account must
	// have been handed back zeroed.
	cb := delegation.UndelegateCallback(ownerProgram, acct, validator, []byte("hacked"))
	cb.Accounts[1].IsSigner = false
	h.Run(validator, cb).RequireError(t, 0, runtime.ErrMissingRequiredSignature)
	cb.Accounts[1].IsSigner = true // the harness treats every message signer as signed
	h.Run(validator, cb).RequireError(t, 0, runtime.ErrInvalidAccountData)
}

func TestIntentGuard(t *testing.T) {
	h := newHarness(t)
	guard := delegation.GuardAddress(validator)
	steps := []struct {
		id   uint64
		want *runtime.InstructionError
	}{{1, nil}, {1, delegation.ErrIntentAlreadyExecuted}, {3, nil}, {2, delegation.ErrIntentAlreadyExecuted}, {4, nil}}
	for _, s := range steps {
		res := h.Run(validator, delegation.IntentGuard(validator, s.id))
		if s.want == nil {
			res.RequireSuccess(t)
		} else {
			res.RequireError(t, 0, s.want)
		}
	}
	g, err := delegation.DecodeGuard(h.Account(guard).Data)
	if err != nil || g.LastIntentID != 4 || g.Validator != validator {
		t.Fatalf("guard %+v %v", g, err)
	}
	// Another key cannot use this validator's guard.
	stranger := solana.NewWallet().PublicKey()
	h.Fund(stranger, programtest.SOL)
	ix := delegation.IntentGuard(stranger, 9)
	ix.Accounts[1] = txwire.Writable(guard)
	h.Run(stranger, ix).RequireError(t, 0, runtime.ErrInvalidSeeds)
}

func TestDecodeRoundTrip(t *testing.T) {
	v := solana.NewWallet().PublicKey()
	ix, err := delegation.Delegate(delegation.DelegateArgs{Payer: payer, Account: payer, OwnerProgram: ownerProgram,
		Seeds: [][]byte{[]byte("a"), make([]byte, 32)}, Validator: &v, CommitFrequencyMs: 30_000})
	if err != nil {
		t.Fatal(err)
	}
	d, err := delegation.Decode(ix.Data)
	if err != nil {
		t.Fatal(err)
	}
	got := d.(*delegation.DelegateIx)
	if got.CommitFrequencyMs != 30_000 || *got.Validator != v || len(got.Seeds) != 2 || len(got.Seeds[1]) != 32 {
		t.Fatalf("%+v", got)
	}
	for _, bad := range [][]byte{nil, {1, 2, 3}, binary.LittleEndian.AppendUint64(nil, 99),
		append(binary.LittleEndian.AppendUint64(nil, delegation.DiscCommitState), 5, 0, 0, 0, 1)} {
		if _, err := delegation.Decode(bad); err == nil {
			t.Errorf("Decode(%x) succeeded", bad)
		}
	}
}

// FuzzDelegation feeds arbitrary data and account selections to DLP: no
// panics, and successful transactions conserve lamports.
func FuzzDelegation(f *testing.F) {
	acct, _ := pda()
	rec, _ := espl.FindDelegationRecord(acct)
	meta, _ := espl.FindDelegationMetadata(acct)
	buf, _ := espl.FindUndelegateBuffer(acct)
	pool := []solana.PublicKey{validator, acct, ownerProgram, buf, rec, meta, payer, spl.SystemProgramID, delegation.GuardAddress(validator)}
	const s, w = 0x10, 0x20
	f.Add(delegation.CommitState(validator, acct, []byte("x")).Data, []byte{0 | s, 1 | w, 4, 5 | w})
	f.Add(delegation.IntentGuard(validator, 7).Data, []byte{0 | s | w, 8 | w, 7})
	f.Add(delegation.CommitAndUndelegate(delegation.CommitAndUndelegateArgs{Data: []byte("y")}).Data,
		[]byte{0 | s | w, 1 | w, 2, 3, 4 | w, 5 | w, 6 | w, 7})
	f.Fuzz(func(t *testing.T, data, sel []byte) {
		h := newHarness(t)
		h.CheckRent = false
		h.Run(payer, delegateIx(nil))
		h.FuzzInstruction(delegation.ProgramID, pool, data, sel)
	})
}
