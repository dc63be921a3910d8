// Package magic is ferry's native Magic program
// (Magic11111111111111111111111111111111111111) and Magic context account
// for the ephemeral-rollup ledger: the validator builtin through which
// ephemeral programs ask the validator to act on the base layer, and with
// which the validator acts on the ephemeral ledger.
//
// It is registered as a privileged program (runtime.Registration
// .Privileged), as the real Magic program is a validator builtin that
// writes accounts directly: it creates ephemeral accounts for the calling
// program, freezes and drains projections, and grants the registered
// action signers their signatures when it executes post-delegation
// actions.
//
// # Instructions
//
// Data starts with a u32 little-endian discriminator (bincode enum style,
// like the real program's); the argument encodings are ferry-local and
// documented on each builder:
//
//	0 ScheduleCommit               CPI from the account's owner program
//	1 ScheduleCommitAndUndelegate  CPI from the account's owner program
//	2 ScheduleBaseAction           CPI from the action's program
//	3 AcceptIntents                validator: drop executed intents
//	4 AdvanceBaseCursor            validator: record base work done
//	5 ExecuteActions               validator: run post-delegation actions
//	                               (on the action executor, PostAct111…)
//	6 CreateEphemeralAccount       CPI: an account sponsored by the vault
//
// Schedule instructions append an Intent to the Magic context account
// (MagicContext111…, ferry's layout: see Context); the local validator
// executes intents on base in id order and then accepts them.
package magic

import (
	"encoding/binary"
	"fmt"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/internal/progutil"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// Well-known ids.
var (
	// ProgramID is the Magic program.
	ProgramID = espl.MagicProgramID
	// ContextID is the Magic context account holding pending intents.
	ContextID = espl.MagicContextID
	// VaultID is the ephemeral vault that sponsors ephemeral accounts.
	VaultID = espl.MagicVaultID
	// ActionExecutorID is the post-delegation action executor, a builtin
	// separate from the Magic program (as in the real validator) so that
	// actions may themselves invoke the Magic program without reentrancy.
	ActionExecutorID = solana.MustPublicKeyFromBase58("PostAct111111111111111111111111111111111111")
	// BridgeStateID is ferry's bridge state account (PDA ["ferry-bridge"]
	// of the Magic program): the validator's base cursor and queues.
	BridgeStateID = func() solana.PublicKey {
		k, _, _ := solana.FindProgramAddress([][]byte{[]byte("ferry-bridge")}, espl.MagicProgramID)
		return k
	}()
)

// BaseCost is the compute units one instruction charges.
const BaseCost = 1_000

// MaxEphemeralAccountSize bounds CreateEphemeralAccount (Agave's CPI
// allocation limit).
const MaxEphemeralAccountSize = 10_240

// Config configures the program.
type Config struct {
	// Validator is the ephemeral rollup's identity: the only key that may
	// accept intents, advance the cursor and execute actions.
	Validator solana.PublicKey
}

// Registration returns the Magic program's registration (a privileged
// builtin).
func Registration(cfg Config) *runtime.Registration {
	return &runtime.Registration{
		ID: ProgramID, Name: "Magic Program", Program: &program{cfg: cfg},
		Builtin: true, BaseCost: BaseCost, Privileged: true,
	}
}

// Genesis lamports of the accounts GenesisAccounts creates. The context
// and bridge state grow with their contents; their balances keep them
// rent-exempt up to about 1.4 MB.
const (
	ContextLamports     = 10_000_000_000
	BridgeStateLamports = 10_000_000_000
	VaultLamports       = 1_000_000_000 * 1_000_000_000
)

// ActionExecutorRegistration returns the post-delegation action
// executor's registration (a privileged builtin). Its one instruction is
// ExecuteActions.
func ActionExecutorRegistration(cfg Config) *runtime.Registration {
	p := &program{cfg: cfg}
	return &runtime.Registration{
		ID: ActionExecutorID, Name: "Post-delegation Action Executor",
		Program: runtime.ProgramFunc(func(ctx *runtime.Context) error {
			ix, err := Decode(ctx.Data())
			e, ok := ix.(*ExecuteActionsIx)
			if err != nil || !ok {
				ctx.Log("expected ExecuteActions")
				return runtime.ErrInvalidInstructionData
			}
			return p.execute(ctx, e)
		}),
		Builtin: true, BaseCost: BaseCost, Privileged: true,
	}
}

// GenesisAccounts returns the accounts an ephemeral ledger starts with:
// the empty Magic context, the bridge state (cursor at the start of
// history) and the funded ephemeral vault, all owned by the Magic program.
func GenesisAccounts() map[solana.PublicKey]*runtime.Account {
	ctxData, _ := (&Context{NextID: 1}).Encode()
	return map[solana.PublicKey]*runtime.Account{
		ContextID:     {Lamports: ContextLamports, Owner: ProgramID, Data: ctxData},
		BridgeStateID: {Lamports: BridgeStateLamports, Owner: ProgramID, Data: (&BridgeState{}).Encode()},
		VaultID:       {Lamports: VaultLamports, Owner: ProgramID},
	}
}

// Errors (ferry-local custom codes).
var (
	// ErrNotValidator: the instruction needs the validator's signature.
	ErrNotValidator = runtime.Custom(0)
	// ErrCPIOnly: the instruction must be invoked by a program.
	ErrCPIOnly = runtime.Custom(1)
	// ErrNotOwner: the account is not owned by the calling program.
	ErrNotOwner = runtime.Custom(2)
	// ErrAccountUndelegating: an undelegation of the account is pending.
	ErrAccountUndelegating = runtime.Custom(3)
	// ErrCursorNotAdvanced: AdvanceBaseCursor was given a position at or
	// before the recorded one (the work was already done).
	ErrCursorNotAdvanced = runtime.Custom(4)
	// ErrInvalidAction: a base action or post-delegation action is
	// malformed or names a signer it may not.
	ErrInvalidAction = runtime.Custom(5)
	// ErrInvalidDrain: a drained projection is not a token account.
	ErrInvalidDrain = runtime.Custom(6)
)

// Instruction discriminators.
const (
	DiscScheduleCommit              uint32 = 0
	DiscScheduleCommitAndUndelegate uint32 = 1
	DiscScheduleBaseAction          uint32 = 2
	DiscAcceptIntents               uint32 = 3
	DiscAdvanceBaseCursor           uint32 = 4
	DiscExecuteActions              uint32 = 5
	DiscCreateEphemeralAccount      uint32 = 6
)

type program struct{ cfg Config }

func (p *program) Execute(ctx *runtime.Context) error {
	ix, err := Decode(ctx.Data())
	if err != nil {
		ctx.Log(err.Error())
		return runtime.ErrInvalidInstructionData
	}
	switch v := ix.(type) {
	case *ScheduleIx:
		return p.schedule(ctx, v)
	case *ScheduleBaseActionIx:
		return p.scheduleAction(ctx, v)
	case *AcceptIntentsIx:
		return p.accept(ctx, v)
	case *AdvanceBaseCursorIx:
		return p.advance(ctx, v)
	case *ExecuteActionsIx:
		ctx.Log("ExecuteActions runs on the action executor program")
		return runtime.ErrInvalidInstructionData
	case *CreateEphemeralAccountIx:
		return p.createEphemeral(ctx, v)
	}
	return runtime.ErrInvalidInstructionData
}

func (p *program) requireValidator(ctx *runtime.Context, a *runtime.AccountRef) error {
	if a.Key != p.cfg.Validator || !a.IsSigner {
		ctx.Logf("%s is not the validator %s", a.Key, p.cfg.Validator)
		return ErrNotValidator
	}
	return nil
}

func loadContext(ctx *runtime.Context, a *runtime.AccountRef) (*Context, error) {
	if a.Key != ContextID || a.Owner != ProgramID {
		ctx.Logf("%s is not the magic context", a.Key)
		return nil, runtime.ErrInvalidArgument
	}
	if err := progutil.Writable(ctx, a, "magic context"); err != nil {
		return nil, err
	}
	c, err := DecodeContext(a.Data)
	if err != nil {
		ctx.Log(err.Error())
		return nil, runtime.ErrInvalidAccountData
	}
	return c, nil
}

func storeContext(ctx *runtime.Context, a *runtime.AccountRef, c *Context) error {
	b, err := c.Encode()
	if err != nil {
		ctx.Log(err.Error())
		return runtime.ErrInvalidArgument
	}
	a.Data = b
	return nil
}

func caller(ctx *runtime.Context) (solana.PublicKey, error) {
	c, ok := ctx.CallerID()
	if !ok {
		ctx.Log("must be invoked by a program (CPI)")
		return c, ErrCPIOnly
	}
	return c, nil
}

// schedule: accounts 0 payer S · 1 magic context W · 2 account ·
// 3.. extra accounts named by the drain and evict indexes.
func (p *program) schedule(ctx *runtime.Context, ix *ScheduleIx) error {
	owner, err := caller(ctx)
	if err != nil {
		return err
	}
	a, err := ctx.Accounts(3)
	if err != nil {
		return err
	}
	payer, mc, acct := a[0], a[1], a[2]
	if err := progutil.Signer(ctx, payer, "payer"); err != nil {
		return err
	}
	c, err := loadContext(ctx, mc)
	if err != nil {
		return err
	}
	if acct.Owner != owner {
		ctx.Logf("%s is owned by %s, not the calling program %s", acct.Key, acct.Owner, owner)
		return ErrNotOwner
	}
	for _, it := range c.Intents {
		if it.Kind == KindCommitAndUndelegate && it.Account == acct.Key {
			ctx.Logf("%s is being undelegated (intent %d)", acct.Key, it.ID)
			return ErrAccountUndelegating
		}
	}
	it := Intent{ID: c.NextID, Kind: KindCommit, Slot: ctx.Env().Slot, Owner: owner, Account: acct.Key, Data: ix.Data}
	if ix.Undelegate {
		it.Kind = KindCommitAndUndelegate
	}
	if ix.Data == nil {
		it.Data = append([]byte(nil), acct.Data...)
	}
	for _, i := range ix.Drain {
		d, err := ctx.Account(int(i))
		if err != nil {
			return err
		}
		if err := drain(ctx, d); err != nil {
			return err
		}
		it.Evict = append(it.Evict, d.Key)
	}
	for _, i := range ix.Evict {
		e, err := ctx.Account(int(i))
		if err != nil {
			return err
		}
		it.Evict = append(it.Evict, e.Key)
	}
	if ix.Action != nil {
		if err := checkAction(ctx, ix.Action, owner); err != nil {
			return err
		}
		if err := p.checkActionSigners(ctx, ix.Action); err != nil {
			return err
		}
		it.Action = ix.Action
	}
	c.Intents = append(c.Intents, it)
	c.NextID++
	ctx.Logf("Scheduled %s of %s (intent %d)", it.Kind, acct.Key, it.ID)
	return storeContext(ctx, mc, c)
}

// drain empties a projected token account into the commit and freezes
// it, so the balance leaves the ephemeral ledger atomically with the
// request and nothing can move in or out until the validator evicts it.
func drain(ctx *runtime.Context, d *runtime.AccountRef) error {
	if !d.IsWritable || !spl.IsTokenProgram(d.Owner) {
		ctx.Logf("drained account %s is not a writable token account", d.Key)
		return ErrInvalidDrain
	}
	ta, err := spl.DecodeTokenAccount(d.Data)
	if err != nil || ta.State == spl.StateUninitialized {
		ctx.Logf("drained account %s is not an initialized token account", d.Key)
		return ErrInvalidDrain
	}
	ta.Amount = 0
	ta.State = spl.StateFrozen
	ta.EncodeInto(d.Data)
	return nil
}

// checkAction enforces what a base action may be: an instruction of the
// scheduling program whose only possible signer is the validator.
func (p *program) checkActionSigners(ctx *runtime.Context, a *BaseAction) error {
	for _, m := range a.Accounts {
		if m.IsSigner && m.PublicKey != p.cfg.Validator {
			ctx.Logf("base action signer %s is not the validator", m.PublicKey)
			return ErrInvalidAction
		}
	}
	return nil
}

func checkAction(ctx *runtime.Context, a *BaseAction, owner solana.PublicKey) error {
	if a.ProgramID != owner {
		ctx.Logf("base action program %s is not the scheduling program %s", a.ProgramID, owner)
		return ErrInvalidAction
	}
	return nil
}

// scheduleAction: accounts 0 payer S · 1 magic context W.
func (p *program) scheduleAction(ctx *runtime.Context, ix *ScheduleBaseActionIx) error {
	owner, err := caller(ctx)
	if err != nil {
		return err
	}
	a, err := ctx.Accounts(2)
	if err != nil {
		return err
	}
	if err := progutil.Signer(ctx, a[0], "payer"); err != nil {
		return err
	}
	c, err := loadContext(ctx, a[1])
	if err != nil {
		return err
	}
	if err := checkAction(ctx, ix.Action, owner); err != nil {
		return err
	}
	if err := p.checkActionSigners(ctx, ix.Action); err != nil {
		return err
	}
	c.Intents = append(c.Intents, Intent{ID: c.NextID, Kind: KindBaseAction, Slot: ctx.Env().Slot, Owner: owner, Action: ix.Action})
	ctx.Logf("Scheduled base action of %s (intent %d)", owner, c.NextID)
	c.NextID++
	return storeContext(ctx, a[1], c)
}

// accept: accounts 0 validator S · 1 magic context W.
func (p *program) accept(ctx *runtime.Context, ix *AcceptIntentsIx) error {
	a, err := ctx.Accounts(2)
	if err != nil {
		return err
	}
	if err := p.requireValidator(ctx, a[0]); err != nil {
		return err
	}
	c, err := loadContext(ctx, a[1])
	if err != nil {
		return err
	}
	kept := c.Intents[:0]
	for _, it := range c.Intents {
		if it.ID > ix.UpTo {
			kept = append(kept, it)
		}
	}
	ctx.Logf("Accepted intents up to %d (%d left)", ix.UpTo, len(kept))
	c.Intents = kept
	return storeContext(ctx, a[1], c)
}

// advance: accounts 0 validator S · 1 bridge state W.
func (p *program) advance(ctx *runtime.Context, ix *AdvanceBaseCursorIx) error {
	a, err := ctx.Accounts(2)
	if err != nil {
		return err
	}
	if err := p.requireValidator(ctx, a[0]); err != nil {
		return err
	}
	st := a[1]
	if st.Key != BridgeStateID || st.Owner != ProgramID {
		return runtime.ErrInvalidArgument
	}
	if err := progutil.Writable(ctx, st, "bridge state"); err != nil {
		return err
	}
	s, err := DecodeBridgeState(st.Data)
	if err != nil {
		ctx.Log(err.Error())
		return runtime.ErrInvalidAccountData
	}
	if !s.Cursor.Less(ix.Position) {
		ctx.Logf("base position %+v already done (cursor %+v)", ix.Position, s.Cursor)
		return ErrCursorNotAdvanced
	}
	s.Cursor = ix.Position
	st.Data = s.Encode()
	return nil
}

// execute: accounts 0 validator S · 1.. the actions' accounts and
// programs. Each action is invoked in order; the declared signers get
// signer privilege (the action signers registered with the delegation).
func (p *program) execute(ctx *runtime.Context, ix *ExecuteActionsIx) error {
	v, err := ctx.Account(0)
	if err != nil {
		return err
	}
	if err := p.requireValidator(ctx, v); err != nil {
		return err
	}
	granted := map[solana.PublicKey]bool{}
	for _, i := range ix.Signers {
		a, err := ctx.Account(int(i))
		if err != nil {
			return err
		}
		granted[a.Key] = true
	}
	for n, act := range ix.Actions {
		prog, err := ctx.Account(int(act.Program))
		if err != nil {
			return err
		}
		inner := actionInstruction{program: prog.Key}
		for _, m := range act.Accounts {
			a, err := ctx.Account(int(m.Index))
			if err != nil {
				return err
			}
			signer := m.Flags&1 != 0
			if signer && !a.IsSigner && !granted[a.Key] {
				ctx.Logf("action %d: %s may not sign", n, a.Key)
				return ErrInvalidAction
			}
			inner.metas = append(inner.metas, metaOf(a.Key, signer, m.Flags&2 != 0))
		}
		inner.data = act.Data
		ctx.Logf("Post-delegation action %d: %s", n, prog.Key)
		if err := ctx.Invoke(inner.instruction()); err != nil {
			return err
		}
	}
	return nil
}

// createEphemeral: accounts 0 sponsor W (the vault) · 1 new account S W.
// The account is created for the calling program with size zero bytes;
// the vault pays its rent.
func (p *program) createEphemeral(ctx *runtime.Context, ix *CreateEphemeralAccountIx) error {
	owner, err := caller(ctx)
	if err != nil {
		return err
	}
	a, err := ctx.Accounts(2)
	if err != nil {
		return err
	}
	vault, acct := a[0], a[1]
	if vault.Key != VaultID || vault.Owner != ProgramID {
		ctx.Logf("sponsor %s is not the ephemeral vault", vault.Key)
		return runtime.ErrInvalidArgument
	}
	if err := progutil.Writable(ctx, vault, "vault"); err != nil {
		return err
	}
	if err := progutil.SignerWritable(ctx, acct, "ephemeral account"); err != nil {
		return err
	}
	if ix.Size > MaxEphemeralAccountSize {
		ctx.Logf("ephemeral account of %d bytes exceeds %d", ix.Size, MaxEphemeralAccountSize)
		return runtime.ErrInvalidArgument
	}
	if !progutil.Empty(acct) {
		ctx.Logf("account %s is already in use", acct.Key)
		return runtime.ErrAccountAlreadyInitialized
	}
	rent := ctx.Env().Rent.MinimumBalance(int(ix.Size))
	if vault.Lamports < rent {
		return runtime.ErrInsufficientFunds
	}
	vault.Lamports -= rent
	acct.Lamports += rent
	acct.Owner = owner
	acct.Data = make([]byte, ix.Size)
	ctx.Logf("Created ephemeral: %d bytes, %d rent, owner: %s", ix.Size, rent, owner)
	return nil
}

func u32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }

func errorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidInstruction, fmt.Sprintf(format, args...))
}
