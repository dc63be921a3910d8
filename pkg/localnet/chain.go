package localnet

import (
	"context"
	"errors"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/cluster"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/payments"
)

// Chain returns a payments.Chain that reads the pair in process (no RPC):
// confirmed blockhashes of either layer, confirmed base accounts and the
// validator identity. endpoint is reported as sendRpcEndpoint ("" when
// the ephemeral node is not served).
func (p *Pair) Chain(endpoint string) payments.Chain { return &pairChain{p: p, endpoint: endpoint} }

type pairChain struct {
	p        *Pair
	endpoint string
}

func (c *pairChain) LatestBlockhash(_ context.Context, layer string) (payments.Blockhash, error) {
	l := c.p.Base
	switch layer {
	case payments.Base:
	case payments.Ephemeral:
		l = c.p.Ephemeral
	default:
		return payments.Blockhash{}, errors.New("unknown layer " + layer)
	}
	bh, _ := l.LatestBlockhash(ledger.Confirmed)
	return payments.Blockhash{Hash: bh.Blockhash, LastValidBlockHeight: bh.LastValidBlockHeight}, nil
}

func (c *pairChain) Account(_ context.Context, key solana.PublicKey) (*payments.Account, error) {
	a, _ := c.p.Base.Account(key, ledger.Confirmed)
	if a == nil {
		return nil, nil
	}
	return &payments.Account{Owner: a.Owner, Lamports: a.Lamports, Data: a.Data}, nil
}

func (c *pairChain) Identity(context.Context) (solana.PublicKey, error) { return c.p.Identity(), nil }

func (c *pairChain) EphemeralEndpoint() string { return c.endpoint }

func (c *pairChain) Cluster() cluster.Kind { return cluster.Local }
