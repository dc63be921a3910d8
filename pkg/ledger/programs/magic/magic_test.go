package magic_test

import (
	"bytes"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/programs"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/magic"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/programtest"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

var validator = solana.NewWallet().PublicKey()

func harness(t testing.TB, extra ...*runtime.Registration) *programtest.Harness {
	cfg := magic.Config{Validator: validator}
	regs := append(programs.Builtins(), magic.Registration(cfg), magic.ActionExecutorRegistration(cfg))
	h := programtest.New(t, append(regs, extra...)...)
	for k, a := range magic.GenesisAccounts() {
		h.SetAccount(k, *a)
	}
	h.Fund(validator, programtest.SOL)
	return h
}

func TestStateRoundTrip(t *testing.T) {
	act := &magic.BaseAction{ProgramID: solana.NewWallet().PublicKey(), Data: []byte{1, 2, 3},
		Accounts: []txwire.AccountMeta{txwire.WritableSigner(validator), txwire.Readonly(solana.NewWallet().PublicKey())}}
	c := &magic.Context{NextID: 9, Intents: []magic.Intent{
		{ID: 7, Kind: magic.KindCommitAndUndelegate, Slot: 3, Owner: validator, Account: validator, Data: []byte("x"),
			Evict: []solana.PublicKey{validator}, Action: act},
		{ID: 8, Kind: magic.KindBaseAction, Action: act},
	}}
	b, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := magic.DecodeContext(b)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := got.Encode()
	if !bytes.Equal(b, b2) || got.Intents[0].Action.Accounts[0] != act.Accounts[0] {
		t.Fatal("context does not round-trip")
	}
	for i := 0; i < len(b); i++ {
		if _, err := magic.DecodeContext(b[:i]); err == nil {
			t.Fatalf("truncated context (%d bytes) decoded", i)
		}
	}
	s := &magic.BridgeState{Cursor: magic.Position{Slot: 1, Tx: 2, Step: 3}, Queues: []solana.PublicKey{validator}}
	if got, err := magic.DecodeBridgeState(s.Encode()); err != nil || got.Cursor != s.Cursor || got.Queues[0] != validator {
		t.Fatalf("bridge state %+v %v", got, err)
	}
}

// grantee is a program that requires key to sign, to test action
// signers.
func grantee(key solana.PublicKey) *runtime.Registration {
	id := solana.NewWallet().PublicKey()
	return &runtime.Registration{ID: id, Program: runtime.ProgramFunc(func(ctx *runtime.Context) error {
		if !ctx.IsSigner(key) {
			return runtime.ErrMissingRequiredSignature
		}
		return nil
	})}
}

func TestExecuteActionsGrantsOnlyDeclaredSigners(t *testing.T) {
	owner := solana.NewWallet().PublicKey()
	g := grantee(owner)
	h := harness(t, g)
	action := txwire.Instruction{ProgramID: g.ID, Accounts: []txwire.AccountMeta{txwire.Signer(owner)}}
	ok, err := magic.ExecuteActions(validator, []solana.PublicKey{owner}, []txwire.Instruction{action})
	if err != nil {
		t.Fatal(err)
	}
	h.Run(validator, ok).RequireSuccess(t)
	undeclared, _ := magic.ExecuteActions(validator, nil, []txwire.Instruction{action})
	h.Run(validator, undeclared).RequireError(t, 0, magic.ErrInvalidAction)
	// ExecuteActions belongs to the executor, not the Magic program.
	wrong := ok
	wrong.ProgramID = magic.ProgramID
	h.Run(validator, wrong).RequireError(t, 0, runtime.ErrInvalidInstructionData)
}

func TestCreateEphemeralAccount(t *testing.T) {
	// A caller program that creates its PDA ["e"] as an ephemeral account.
	caller := solana.NewWallet().PublicKey()
	pda, bump, _ := solana.FindProgramAddress([][]byte{[]byte("e")}, caller)
	reg := &runtime.Registration{ID: caller, Program: runtime.ProgramFunc(func(ctx *runtime.Context) error {
		return ctx.Invoke(magic.CreateEphemeralAccount(pda, 40), [][]byte{[]byte("e"), {bump}})
	})}
	h := harness(t, reg)
	ix := txwire.Instruction{ProgramID: caller, Accounts: []txwire.AccountMeta{txwire.Writable(magic.VaultID),
		txwire.Writable(pda), txwire.Readonly(magic.ProgramID)}}
	vault := h.Lamports(magic.VaultID)
	h.Run(validator, ix).RequireSuccess(t)
	a := h.Account(pda)
	if a == nil || a.Owner != caller || len(a.Data) != 40 || vault-h.Lamports(magic.VaultID) != a.Lamports {
		t.Fatalf("ephemeral account %+v", a)
	}
	h.Run(validator, ix).RequireError(t, 0, runtime.ErrAccountAlreadyInitialized)
}

func FuzzMagic(f *testing.F) {
	pool := []solana.PublicKey{validator, magic.ContextID, magic.BridgeStateID, magic.VaultID, spl.SystemProgramID,
		solana.NewWallet().PublicKey()}
	f.Add(magic.AcceptIntents(validator, 3).Data, []byte{0x30, 0x21})
	f.Add(magic.AdvanceBaseCursor(validator, magic.Position{Slot: 1}).Data, []byte{0x30, 0x22})
	ex, _ := magic.ExecuteActions(validator, []solana.PublicKey{validator}, []txwire.Instruction{spl.SystemTransfer(validator, pool[5], 1)})
	f.Add(ex.Data, []byte{0x30, 0x24, 0x25})
	f.Fuzz(func(t *testing.T, data, sel []byte) {
		h := harness(t)
		h.CheckRent = false
		h.FuzzInstruction(magic.ProgramID, pool, data, sel)
		h.FuzzInstruction(magic.ActionExecutorID, pool, data, sel)
		_, _ = magic.DecodeContext(data)
		_, _ = magic.DecodeBridgeState(data)
		_, _ = magic.DecodeBaseAction(data)
	})
}
