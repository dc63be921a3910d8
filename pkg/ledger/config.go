package ledger

import (
	"crypto/ed25519"
	"fmt"
	"log/slog"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
)

// Defaults applied to zero Config fields.
const (
	DefaultSlotDuration         = 400 * time.Millisecond
	DefaultFinalityDepth        = 32
	DefaultEmptySlotBatch       = 500 * time.Millisecond
	DefaultLamportsPerSignature = 5000
	DefaultSlotsPerEpoch        = 432_000
	// DefaultFaucetLamports funds the faucet with 500 million SOL.
	DefaultFaucetLamports = 500_000_000 * 1_000_000_000
	// DefaultPerformanceSamplePeriod is Agave's sampling interval for
	// getRecentPerformanceSamples.
	DefaultPerformanceSamplePeriod = 60 * time.Second
)

// Agave constants the pipeline enforces.
const (
	// MaxProcessingAge is how many blocks a recent blockhash stays usable.
	MaxProcessingAge = 150
	// MaxAccountLocks is the most accounts one transaction may reference.
	MaxAccountLocks = 64
)

// Config describes one ledger instance. The zero value is a usable
// in-memory ledger with 400 ms slots; every field has a sensible default.
type Config struct {
	// Name labels the ledger in logs and in the genesis hash, so two
	// ledgers in one process (base layer and ephemeral rollup) differ.
	Name string
	// DataDir holds the ledger's files: ledger.db (bbolt: blocks,
	// transactions, indexes), the account log in accounts/, and the
	// signature and address tables (sigs, heads). Empty means in-memory:
	// nothing survives Close.
	DataDir string
	// NoSync skips fsync on commit (bbolt NoSync). Faster, but a machine
	// crash may lose recent slots. Ignored in memory.
	NoSync bool

	// SlotDuration is the slot time (default 400 ms).
	SlotDuration time.Duration
	// ManualSlots disables the slot clock: slots end only when AdvanceSlot
	// is called. Tests use it to move time deterministically.
	ManualSlots bool
	// EmptySlotBatch bounds how long the empty slots of a durable ledger
	// (no transactions: only the clock moved) wait to be made durable
	// together, in one commit, rather than one commit and two syncs
	// each: an idle `ferry serve` otherwise committed 22 slots a second
	// (the rollup's 50 ms slots and the base's 400 ms ones) and wrote
	// about 0.8 MB/s. A slot is reported confirmed only once durable, so
	// while idle the confirmed slot trails the processed one by up to
	// this much more; a slot with transactions is committed at once,
	// with the empty slots before it. Zero means DefaultEmptySlotBatch; a
	// negative value commits every slot on its own. Ignored in memory
	// and with ManualSlots.
	EmptySlotBatch time.Duration
	// FinalityDepth is how many slots a confirmed slot needs on top of it
	// to be finalized. Zero means DefaultFinalityDepth; a negative value
	// finalizes every slot as soon as it is durable.
	FinalityDepth int
	// SlotsPerEpoch is the epoch length (default 432 000).
	SlotsPerEpoch uint64

	// Rent sets the rent-exempt minimum (default runtime.DefaultRent).
	Rent runtime.Rent
	// LamportsPerSignature is the base fee per signature. Zero means the
	// default 5 000; a negative value makes transactions free (as on
	// public ephemeral rollups). Priority fees are still charged.
	LamportsPerSignature int64
	// AllowUnfundedFeePayers lets a transaction whose fee is zero name a
	// fee payer that does not exist: it is treated as an empty System
	// account (and stays absent unless the transaction credits it). This
	// is MagicBlock's ephemeral-rollup rule that any keypair may pay,
	// including one with no lamports; it only matters together with free
	// transactions (LamportsPerSignature < 0).
	AllowUnfundedFeePayers bool

	// Programs are registered on top of the builtins (programs.Builtins
	// plus Compute Budget); a registration with a builtin's id replaces it.
	Programs []*runtime.Registration
	// NoBuiltins leaves out the builtin programs, so that only Programs
	// (and Compute Budget) run. Meant for tests of the bank itself.
	NoBuiltins bool
	// Genesis accounts are created in slot 0 of a new ledger, after the
	// faucet, program and sysvar accounts (and may replace them).
	Genesis []GenesisAccount

	// Identity is the node identity reported by getIdentity. When nil a
	// key is generated and, with a DataDir, stored so restarts keep it.
	Identity ed25519.PrivateKey
	// ValidatorStake, when non-zero, gives a new ledger's genesis a vote
	// account for the node identity and a stake account delegating this
	// many lamports to it (the stake account holds them plus its
	// rent-exempt reserve), as solana-test-validator's genesis does, so
	// getVoteAccounts, getBlockCommitment and friends report a staked
	// validator. See validator.go for what is and is not modelled. It
	// has no effect on a ledger that already exists.
	ValidatorStake uint64
	// PerformanceSamplePeriod is how often a performance sample (slots and
	// transactions in the window) is recorded (default 60 s, as Agave).
	PerformanceSamplePeriod time.Duration

	// Faucet funds airdrops and test mints. When nil a key is generated
	// and stored like Identity.
	Faucet ed25519.PrivateKey
	// FaucetLamports is the faucet's genesis balance.
	FaucetLamports uint64

	// Now is the wall clock used for block times and the Clock sysvar.
	Now func() time.Time
	// Logger receives operational logs (default: discard).
	Logger *slog.Logger
	// MaxPending bounds the transactions waiting for the slot loop; a full
	// queue makes Process wait (default 100 000).
	MaxPending int
	// AccountCacheSize is how many accounts read from disk a durable
	// ledger keeps decoded in memory besides those written in slots not
	// yet durable (default DefaultAccountCacheSize). Other accounts are
	// read from the store when used.
	AccountCacheSize int
	// LimitLedgerSize, when non-zero, bounds the history kept (ferry
	// serve --limit-ledger-size): whole slots are pruned from the oldest
	// while every transaction in them is older than the newest
	// LimitLedgerSize ones, and the slot is finalized and older than the
	// last MaxProcessingAge+2 blocks. A pruned slot answers as a purged
	// one does on Agave (prune.go). History may exceed the limit by a
	// sixteenth before a pruning step runs, plus the slots that step
	// keeps whole. Zero keeps all history, as solana-test-validator does
	// without --limit-ledger-size. Accounts are never pruned.
	LimitLedgerSize uint64

	// accountSegmentBytes overrides accountSegmentBytes (tests use small
	// segments to clean the account log often).
	accountSegmentBytes int64
	// tableRewriteMin overrides tableRewriteMin (tests rewrite the
	// store's tables often).
	tableRewriteMin int
	// tableRunChanges overrides tableRunChanges (tests write runs often).
	tableRunChanges int
	// statusWarmGate, if set, holds the status cache's warm-up after an
	// open until it is closed (tests of the lookups that stand in meanwhile).
	statusWarmGate chan struct{}
	// nestedValueMin overrides nestedValueMin (tests nest every value).
	nestedValueMin int
	// legacyPostings makes the durable store write address postings in
	// the ferry-ledger-3 layout (tests of upgrading it).
	legacyPostings bool
}

// GenesisAccount is an account created at genesis.
type GenesisAccount struct {
	Key     solana.PublicKey
	Account runtime.Account
}

func (c Config) normalized() Config {
	if c.Name == "" {
		c.Name = "ledger"
	}
	if c.SlotDuration <= 0 {
		c.SlotDuration = DefaultSlotDuration
	}
	switch {
	case c.FinalityDepth == 0:
		c.FinalityDepth = DefaultFinalityDepth
	case c.FinalityDepth < 0:
		c.FinalityDepth = 0
	}
	if c.SlotsPerEpoch == 0 {
		c.SlotsPerEpoch = DefaultSlotsPerEpoch
	}
	switch {
	case c.DataDir == "" || c.ManualSlots || c.EmptySlotBatch < 0:
		c.EmptySlotBatch = 0
	case c.EmptySlotBatch == 0:
		c.EmptySlotBatch = DefaultEmptySlotBatch
	}
	if c.Rent.LamportsPerByte == 0 {
		c.Rent = runtime.DefaultRent
	}
	switch {
	case c.LamportsPerSignature == 0:
		c.LamportsPerSignature = DefaultLamportsPerSignature
	case c.LamportsPerSignature < 0:
		c.LamportsPerSignature = 0
	}
	if c.FaucetLamports == 0 {
		c.FaucetLamports = DefaultFaucetLamports
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.MaxPending <= 0 {
		c.MaxPending = 100_000
	}
	if c.AccountCacheSize <= 0 {
		c.AccountCacheSize = DefaultAccountCacheSize
	}
	if c.PerformanceSamplePeriod <= 0 {
		c.PerformanceSamplePeriod = DefaultPerformanceSamplePeriod
	}
	return c
}

// Commitment is how settled a read must be: processed (executed in the
// current slot), confirmed (its slot is durable on disk) or finalized
// (FinalityDepth slots deeper than that).
type Commitment uint8

// Commitment levels, weakest first.
const (
	Processed Commitment = iota
	Confirmed
	Finalized
)

// String returns the JSON-RPC spelling.
func (c Commitment) String() string {
	switch c {
	case Processed:
		return "processed"
	case Confirmed:
		return "confirmed"
	case Finalized:
		return "finalized"
	}
	return fmt.Sprintf("commitment(%d)", uint8(c))
}

// ParseCommitment reads a JSON-RPC commitment. The empty string is
// finalized, the Agave default; the deprecated aliases are accepted.
func ParseCommitment(s string) (Commitment, error) {
	switch s {
	case "", "finalized", "max", "root":
		return Finalized, nil
	case "confirmed", "single", "singleGossip":
		return Confirmed, nil
	case "processed", "recent":
		return Processed, nil
	}
	return 0, fmt.Errorf("unknown commitment %q", s)
}
