// Package localnet is the rollup in a box: a base-layer ledger (Solana,
// 400 ms slots) and an ephemeral-rollup ledger (MagicBlock ER, 50 ms
// slots) in one process, each behind its own chain-node JSON-RPC handler,
// with the local validator's work between them (docs/localnet.md):
//
//   - cloning accounts delegated to the local validator into the
//     ephemeral ledger and projecting eATA balances into ATAs;
//   - running post-delegation actions (shuttle merges, private transfers,
//     withdrawals) on the ephemeral ledger;
//   - executing ephemeral intents (commits, undelegations, payouts) on
//     base;
//   - cranking the transfer queues.
//
// Open returns a Pair. The bridge is driven by committed (confirmed)
// state and is exactly-once across restarts: its cursor over base history
// lives in the ephemeral ledger and advances atomically with the work it
// records, and the intents it executes on base are fenced by an intent
// guard on base that advances atomically with them. Nothing the bridge
// needs is kept only in memory.
package localnet

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/keyfile"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/delegation"
	esplprog "github.com/ferry-sh/ferry/pkg/ledger/programs/espl"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/magic"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/permission"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/rpcserver"
)

// Defaults.
const (
	DefaultBaseSlot      = 400 * time.Millisecond
	DefaultEphemeralSlot = 50 * time.Millisecond
	DefaultCrankInterval = 50 * time.Millisecond
	// DefaultControlTimeout bounds one rollup control (CommitNow,
	// UndelegateNow, CrankNow): the validator's work it waits for normally
	// takes a few slots.
	DefaultControlTimeout = time.Minute
	// DefaultValidatorLamports funds the validator identity on base at
	// genesis; it pays the fees of the validator's base transactions.
	DefaultValidatorLamports = 1_000 * 1_000_000_000
	// KeypairFile is the validator identity's file in the data directory
	// (Solana CLI format: a JSON array of the 64 secret key bytes).
	KeypairFile = "validator-keypair.json"
)

// BaseValidatorStake is the stake a new base ledger's genesis delegates
// to its node's vote account (solana-test-validator's amount, 1 million
// SOL), so getVoteAccounts and getBlockCommitment report a staked
// validator there. The ephemeral rollup has no vote account: MagicBlock
// validators do not vote.
const BaseValidatorStake = 1_000_000 * 1_000_000_000

// Config configures Open. The zero value runs in memory with MagicBlock's
// slot times.
type Config struct {
	// DataDir holds the ledgers ("base", "ephemeral") and the validator
	// identity. Empty runs in memory.
	DataDir string
	// Identity is the validator identity (getIdentity of the ephemeral
	// node, delegation authority, sealed-box recipient). Nil loads it
	// from DataDir, or generates one (and stores it there).
	Identity ed25519.PrivateKey
	// BaseSlot and EphemeralSlot are the slot durations.
	BaseSlot, EphemeralSlot time.Duration
	// ManualSlots stops both slot clocks and the bridge's own loop: slots
	// advance and the bridge runs only in Sync (deterministic tests).
	ManualSlots bool
	// FinalityDepth is the base ledger's (see ledger.Config).
	FinalityDepth int
	// NoSync skips fsync on commit (development only).
	NoSync bool
	// LimitLedgerSize bounds the history of both ledgers
	// (ledger.Config.LimitLedgerSize; 0 keeps all).
	LimitLedgerSize uint64
	// EmptySlotBatch is both ledgers' ledger.Config.EmptySlotBatch.
	EmptySlotBatch time.Duration
	// AccountCacheSize is both ledgers' ledger.Config.AccountCacheSize
	// (0: ledger.DefaultAccountCacheSize).
	AccountCacheSize int
	// Now is the clock of both ledgers (block times, the Clock sysvar that
	// queue delays are measured against). Default time.Now.
	Now func() time.Time
	// CrankInterval is how often the bridge looks for ready queue entries
	// between block notifications.
	CrankInterval time.Duration
	// ControlTimeout bounds how long a rollup control waits for the
	// validator to settle (DefaultControlTimeout).
	ControlTimeout time.Duration
	// ValidatorLamports funds the identity on base at genesis.
	ValidatorLamports uint64
	// BaseGenesis and EphemeralGenesis add genesis accounts.
	BaseGenesis, EphemeralGenesis []ledger.GenesisAccount
	// RPC configures both chain-node handlers (limits, faucet origins);
	// its Logger defaults to Logger.
	RPC    rpcserver.Options
	Logger *slog.Logger
}

func (c Config) normalized() Config {
	if c.BaseSlot <= 0 {
		c.BaseSlot = DefaultBaseSlot
	}
	if c.EphemeralSlot <= 0 {
		c.EphemeralSlot = DefaultEphemeralSlot
	}
	if c.CrankInterval <= 0 {
		c.CrankInterval = DefaultCrankInterval
	}
	if c.ControlTimeout <= 0 {
		c.ControlTimeout = DefaultControlTimeout
	}
	if c.ValidatorLamports == 0 {
		c.ValidatorLamports = DefaultValidatorLamports
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Pair is a running base ledger and ephemeral rollup with the local
// validator between them. Close it to stop the bridge and flush both
// ledgers.
type Pair struct {
	// Base and Ephemeral are the two ledgers. Read them freely; write only
	// through transactions (the bridge owns the privileged writes).
	Base, Ephemeral *ledger.Ledger
	// BaseRPC and EphemeralRPC are their JSON-RPC handlers. The ephemeral
	// one answers getIdentity with the validator identity, adds
	// MagicBlock's getBlockhashForAccounts, getDelegationStatus and
	// getRoutes, and hides private accounts as a TEE rollup does (see
	// SetTokenVerifier).
	BaseRPC, EphemeralRPC *rpcserver.Handler

	cfg      Config
	identity ed25519.PrivateKey
	private  *privateReads
	bridge   *bridge
	cancel   context.CancelFunc
	done     chan struct{}
	closeMu  sync.Mutex
	closed   bool
}

// Programs returns the programs of each ledger for a validator identity
// (besides the builtins every ledger runs): eSPL, the delegation program
// and the permission program on base; eSPL, the permission program, the
// Magic program and the post-delegation action executor on the ephemeral
// rollup.
func Programs(validator solana.PublicKey) (base, ephemeral []*runtime.Registration) {
	mcfg := magic.Config{Validator: validator}
	base = []*runtime.Registration{
		esplprog.Registration(esplprog.Config{Validator: validator}),
		delegation.Registration(delegation.Config{DefaultValidator: validator}),
		permission.Registration(),
	}
	ephemeral = []*runtime.Registration{
		esplprog.Registration(esplprog.Config{Validator: validator, Ephemeral: true}),
		permission.Registration(),
		magic.Registration(mcfg),
		magic.ActionExecutorRegistration(mcfg),
	}
	return base, ephemeral
}

// Open creates or reopens the pair and starts the bridge (unless
// ManualSlots).
func Open(cfg Config) (*Pair, error) {
	cfg = cfg.normalized()
	id := cfg.Identity
	if id == nil {
		var err error
		if id, err = loadIdentity(cfg.DataDir); err != nil {
			return nil, err
		}
	}
	if len(id) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("open localnet: identity has %d bytes, want %d", len(id), ed25519.PrivateKeySize)
	}
	me := solana.PublicKeyFromBytes(id[32:])
	baseProgs, erProgs := Programs(me)
	dir := func(name string) string {
		if cfg.DataDir == "" {
			return ""
		}
		return filepath.Join(cfg.DataDir, name)
	}
	baseGenesis := append([]ledger.GenesisAccount{{Key: me, Account: runtime.Account{Lamports: cfg.ValidatorLamports, Owner: solana.SystemProgramID}}},
		cfg.BaseGenesis...)
	baseCfg := ledger.Config{
		Name: "base", DataDir: dir("base"), NoSync: cfg.NoSync, LimitLedgerSize: cfg.LimitLedgerSize, EmptySlotBatch: cfg.EmptySlotBatch, SlotDuration: cfg.BaseSlot, ManualSlots: cfg.ManualSlots,
		AccountCacheSize: cfg.AccountCacheSize, FinalityDepth: cfg.FinalityDepth, Programs: baseProgs, Genesis: baseGenesis, Now: cfg.Now, Logger: cfg.Logger,
		ValidatorStake: BaseValidatorStake,
	}
	var erGenesis []ledger.GenesisAccount
	for k, a := range magic.GenesisAccounts() {
		erGenesis = append(erGenesis, ledger.GenesisAccount{Key: k, Account: *a})
	}
	erGenesis = append(erGenesis, cfg.EphemeralGenesis...)
	erCfg := ledger.Config{
		Name: "ephemeral", DataDir: dir("ephemeral"), NoSync: cfg.NoSync, LimitLedgerSize: cfg.LimitLedgerSize, EmptySlotBatch: cfg.EmptySlotBatch, SlotDuration: cfg.EphemeralSlot,
		AccountCacheSize: cfg.AccountCacheSize, ManualSlots: cfg.ManualSlots, FinalityDepth: -1, LamportsPerSignature: -1, AllowUnfundedFeePayers: true,
		Programs: erProgs, Genesis: erGenesis, Identity: id, Now: cfg.Now, Logger: cfg.Logger,
	}
	// The two ledgers share nothing: opening them side by side takes a
	// restart the time of the larger one, not of both.
	var er *ledger.Ledger
	erErr := make(chan error, 1)
	go func() {
		var err error
		er, err = ledger.Open(erCfg)
		erErr <- err
	}()
	base, baseErr := ledger.Open(baseCfg)
	if err := <-erErr; err != nil || baseErr != nil {
		if base != nil {
			base.Close()
		}
		if er != nil {
			er.Close()
		}
		return nil, fmt.Errorf("open localnet: %w", errors.Join(baseErr, err))
	}
	p := &Pair{Base: base, Ephemeral: er, cfg: cfg, identity: id, done: make(chan struct{})}
	p.private = &privateReads{p: p, cache: espl.NewCache(PrivateCacheSize)}
	rpcOpts := cfg.RPC
	if rpcOpts.Logger == nil {
		rpcOpts.Logger = cfg.Logger
	}
	p.BaseRPC = rpcserver.New(base, rpcOpts)
	erOpts := rpcOpts
	erOpts.ReadFilter = p.private.filter
	p.EphemeralRPC = rpcserver.New(er, erOpts)
	p.addEphemeralMethods()
	p.bridge = newBridge(p)
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	go func() {
		defer close(p.done)
		p.bridge.run(ctx)
	}()
	cfg.Logger.Info("localnet open", "validator", me, "base", base.Slot(ledger.Processed), "ephemeral", er.Slot(ledger.Processed))
	return p, nil
}

// Identity is the validator's public key.
func (p *Pair) Identity() solana.PublicKey { return solana.PublicKeyFromBytes(p.identity[32:]) }

// BaseHandler and EphemeralHandler are the JSON-RPC endpoints to serve.
func (p *Pair) BaseHandler() http.Handler { return p.BaseRPC }

// EphemeralHandler serves the ephemeral rollup's JSON-RPC.
func (p *Pair) EphemeralHandler() http.Handler { return p.EphemeralRPC }

// Sync runs the bridge until it has nothing left to do: every confirmed
// delegation is cloned, every post-delegation action and ready payout has
// run and every intent is executed on base and accepted. With
// ManualSlots it advances both ledgers' slots itself; otherwise it waits
// for their slot clocks. Payouts whose ready time has not come stay
// queued. Tests use it; a served pair never needs it.
func (p *Pair) Sync(ctx context.Context) error {
	reply := make(chan error, 1)
	select {
	case p.bridge.syncReq <- reply:
	case <-p.done:
		return ledger.ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops the bridge and closes both ledgers. Pending work resumes
// when the data directory is opened again.
func (p *Pair) Close() error {
	p.closeMu.Lock()
	defer p.closeMu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	p.cancel()
	<-p.done
	return errors.Join(p.Ephemeral.Close(), p.Base.Close())
}

// loadIdentity reads the validator keypair from dir, creating it on first
// use; in memory it generates one.
func loadIdentity(dir string) (ed25519.PrivateKey, error) {
	if dir == "" {
		_, k, err := ed25519.GenerateKey(rand.Reader)
		return k, err
	}
	k, _, err := keyfile.LoadOrCreate(filepath.Join(dir, KeypairFile))
	if err != nil {
		return nil, fmt.Errorf("validator identity: %w", err)
	}
	return k, nil
}

// addEphemeralMethods adds what a MagicBlock ER validator answers besides
// the standard methods (chain-rpc.md §9.5).
func (p *Pair) addEphemeralMethods() {
	h := p.EphemeralRPC
	latest := h.Method("getLatestBlockhash")
	h.Handle("getBlockhashForAccounts", func(ctx context.Context, _ rpcserver.Params) (any, error) {
		// An alias of getLatestBlockhash, context-wrapped.
		return latest(ctx, nil)
	})
	h.Handle("getDelegationStatus", func(_ context.Context, params rpcserver.Params) (any, error) {
		if err := params.Count(1, 1); err != nil {
			return nil, err
		}
		s, err := params.String(0)
		if err != nil {
			return nil, err
		}
		k, err := rpcserver.ParsePubkey(s) // length-checked before decoding
		if err != nil {
			return nil, err
		}
		return map[string]any{"isDelegated": p.delegatedToMe(k)}, nil
	})
	h.Handle("getRoutes", func(context.Context, rpcserver.Params) (any, error) { return []any{}, nil })
}

// delegatedToMe reports whether account is delegated to the local
// validator on base (confirmed).
func (p *Pair) delegatedToMe(account solana.PublicKey) bool {
	a, _ := p.Base.Account(account, ledger.Confirmed)
	if a == nil || a.Owner != espl.DelegationProgramID {
		return false
	}
	rk, _ := espl.FindDelegationRecord(account)
	r, _ := p.Base.Account(rk, ledger.Confirmed)
	if r == nil {
		return false
	}
	rec, err := espl.DecodeDelegationRecord(r.Data)
	return err == nil && rec.Authority == p.Identity()
}
