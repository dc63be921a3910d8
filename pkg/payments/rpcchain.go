package payments

import (
	"context"
	"errors"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/cluster"
)

// RPCChain reads from JSON-RPC endpoints: a real cluster, or the chain
// nodes of a running `ferry serve`. Blockhashes, mint programs and the
// validator identity come from chainclient's caches, so steady-state builds
// need no round trip.
type RPCChain struct {
	Base      *chainclient.Cached
	Ephemeral *chainclient.Cached
	Kind      cluster.Kind
}

// LatestBlockhash reads a "confirmed" blockhash from the layer's RPC.
func (c *RPCChain) LatestBlockhash(ctx context.Context, layer string) (Blockhash, error) {
	rpc := c.Base
	if layer == Ephemeral {
		rpc = c.Ephemeral
	}
	if rpc == nil {
		return Blockhash{}, errors.New("no " + layer + " RPC endpoint configured")
	}
	bh, err := rpc.GetLatestBlockhash(ctx, chainclient.Confirmed)
	if err != nil {
		return Blockhash{}, err
	}
	return Blockhash{Hash: bh.Hash, LastValidBlockHeight: bh.LastValidBlockHeight}, nil
}

// Account reads a base-layer account ("confirmed").
func (c *RPCChain) Account(ctx context.Context, key solana.PublicKey) (*Account, error) {
	a, err := c.Base.GetAccountInfo(ctx, key, chainclient.Confirmed)
	if err != nil || a == nil {
		return nil, err
	}
	return &Account{Owner: a.Owner, Lamports: a.Lamports, Data: a.Data}, nil
}

// MintProgram returns the (cached) owner of a mint; ErrNoAccount if it is
// missing.
func (c *RPCChain) MintProgram(ctx context.Context, mint solana.PublicKey) (solana.PublicKey, error) {
	p, err := c.Base.MintProgram(ctx, mint)
	if errors.Is(err, chainclient.ErrAccountNotFound) {
		return solana.PublicKey{}, ErrNoAccount
	}
	return p, err
}

// Identity calls getIdentity on the ephemeral RPC (cached on success).
func (c *RPCChain) Identity(ctx context.Context) (solana.PublicKey, error) {
	if c.Ephemeral == nil {
		return solana.PublicKey{}, errors.New("no ephemeral RPC endpoint configured")
	}
	id, err := c.Ephemeral.GetIdentity(ctx)
	if err != nil {
		return solana.PublicKey{}, err
	}
	return id.Identity, nil
}

// EphemeralEndpoint is the ephemeral RPC URL without any auth token.
func (c *RPCChain) EphemeralEndpoint() string {
	if c.Ephemeral == nil {
		return ""
	}
	return c.Ephemeral.URL()
}

// Cluster returns Kind.
func (c *RPCChain) Cluster() cluster.Kind { return c.Kind }
