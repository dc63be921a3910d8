package payments

import (
	"context"
	"errors"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/cluster"
)

// Chain is everything the planner reads from the clusters of one request:
// blockhashes from the layer a transaction is sent to, base-layer accounts
// (mint owners, delegation records, stealth pools), and the ephemeral
// validator's identity. A real RPC client, the embedded ledger pair and fixed
// offline values all implement it.
type Chain interface {
	// LatestBlockhash returns a recent blockhash ("confirmed") of the base
	// layer (layer == Base) or the ephemeral rollup (layer == Ephemeral).
	LatestBlockhash(ctx context.Context, layer string) (Blockhash, error)
	// Account returns a base-layer account, or (nil, nil) if it does not exist.
	Account(ctx context.Context, key solana.PublicKey) (*Account, error)
	// Identity is the ephemeral rollup validator's identity (getIdentity).
	Identity(ctx context.Context) (solana.PublicKey, error)
	// EphemeralEndpoint is the ephemeral RPC URL reported as sendRpcEndpoint
	// ("" when unknown, e.g. offline builds).
	EphemeralEndpoint() string
	// Cluster is the kind of cluster (mainnet, devnet, custom, local); it
	// selects default mints and the gasless allow-list.
	Cluster() cluster.Kind
}

// MintProgramResolver is implemented by chains that can resolve (and cache)
// a mint's token program more cheaply than reading the whole account.
// MintProgram returns the owner of an existing mint account (zero for the
// System program) and an error wrapping ErrNoAccount for a missing one, so
// that one read decides both.
type MintProgramResolver interface {
	MintProgram(ctx context.Context, mint solana.PublicKey) (solana.PublicKey, error)
}

// ErrNoAccount is the error (wrapped or not) of a MintProgramResolver for
// a mint account that does not exist.
var ErrNoAccount = errors.New("account does not exist")

// Blockhash is a recent blockhash and the last block height it is valid at.
type Blockhash struct {
	Hash                 solana.Hash
	LastValidBlockHeight uint64
}

// Account is the part of an account the planner reads.
type Account struct {
	Owner    solana.PublicKey
	Lamports uint64
	Data     []byte
}

// FixedChain answers from fixed values, for fully offline builds
// (`ferry transfer --blockhash ... --token-program ... --validator ...`).
// When TokenProgram is set, every mint is assumed to be owned by it without
// a lookup; other accounts come from Accounts and are otherwise missing (not
// delegated, no stealth pool).
type FixedChain struct {
	Blockhash            solana.Hash
	LastValidBlockHeight uint64
	TokenProgram         solana.PublicKey
	Validator            solana.PublicKey // zero: identity unknown (the planner falls back)
	Accounts             map[solana.PublicKey]*Account
	Endpoint             string
	Kind                 cluster.Kind
}

// LatestBlockhash returns the fixed blockhash for either layer.
func (c *FixedChain) LatestBlockhash(context.Context, string) (Blockhash, error) {
	return Blockhash{Hash: c.Blockhash, LastValidBlockHeight: c.LastValidBlockHeight}, nil
}

// Account returns the configured account, or nil.
func (c *FixedChain) Account(_ context.Context, key solana.PublicKey) (*Account, error) {
	if a, ok := c.Accounts[key]; ok {
		return a, nil
	}
	return nil, nil
}

// Identity returns the fixed validator, or an error when none is set.
func (c *FixedChain) Identity(context.Context) (solana.PublicKey, error) {
	if c.Validator.IsZero() {
		return solana.PublicKey{}, errors.New("no validator identity configured for offline builds")
	}
	return c.Validator, nil
}

// EphemeralEndpoint returns the fixed endpoint.
func (c *FixedChain) EphemeralEndpoint() string { return c.Endpoint }

// Cluster returns Kind, or custom when unset.
func (c *FixedChain) Cluster() cluster.Kind {
	if c.Kind == "" {
		return cluster.Custom
	}
	return c.Kind
}

// MintProgram returns TokenProgram when set; otherwise the owner of the
// configured account (ErrNoAccount without one).
func (c *FixedChain) MintProgram(ctx context.Context, mint solana.PublicKey) (solana.PublicKey, error) {
	if !c.TokenProgram.IsZero() {
		return c.TokenProgram, nil
	}
	if a, _ := c.Account(ctx, mint); a != nil {
		return a.Owner, nil
	}
	return solana.PublicKey{}, ErrNoAccount
}
