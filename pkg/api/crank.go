package api

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/mr-tron/base58"

	"github.com/ferry-sh/ferry/pkg/auth"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/payments"
)

// Crank behaviour of the hosted API (payments-api.md §5.8).
const (
	// crankIdle: a queue with a successful transaction younger than this
	// is considered cranked.
	crankIdle = 60 * time.Second
	// crankAuthRetry: after auth-filter errors, only every this-many-th
	// background attempt proceeds.
	crankAuthRetry = 100
	// crankTimeout bounds one background crank.
	crankTimeout = 30 * time.Second
	// crankParallel bounds concurrent background cranks.
	crankParallel = 4
)

// cranker sends ESPL 17 (ensureTransferQueueCrank) transactions: forced
// by /ensure-crank, or in the background after is-mint-initialized found an
// initialized queue.
type cranker struct {
	s       *Service
	enabled bool
	poll    time.Duration

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	sem    chan struct{}

	mu         sync.Mutex
	last       map[solana.PublicKey]time.Time // last background attempt per queue
	authMisses map[solana.PublicKey]int
}

func newCranker(s *Service, enabled bool, poll time.Duration) *cranker {
	ctx, cancel := context.WithCancel(context.Background())
	return &cranker{s: s, enabled: enabled, poll: poll, ctx: ctx, cancel: cancel,
		sem: make(chan struct{}, crankParallel), last: map[solana.PublicKey]time.Time{}, authMisses: map[solana.PublicKey]int{}}
}

func (c *cranker) close() {
	c.cancel()
	c.wg.Wait()
}

// background schedules a crank of an initialized queue, at most one per
// queue per crankIdle and crankParallel at a time; errors are logged.
func (c *cranker) background(cl *Cluster, st *payments.MintInitializationResponse) {
	if !c.enabled || c.ctx.Err() != nil {
		return
	}
	queue := solana.MustPublicKeyFromBase58(st.TransferQueue)
	now := c.s.now()
	c.mu.Lock()
	if t, ok := c.last[queue]; ok && now.Sub(t) < crankIdle {
		c.mu.Unlock()
		return
	}
	if len(c.last) >= 4096 {
		for k, t := range c.last {
			if now.Sub(t) >= crankIdle {
				delete(c.last, k)
			}
		}
	}
	c.last[queue] = now
	c.mu.Unlock()
	select {
	case c.sem <- struct{}{}:
	default:
		return // enough cranks in flight
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer func() { <-c.sem }()
		ctx, cancel := context.WithTimeout(c.ctx, crankTimeout)
		defer cancel()
		sig, skipped, err := c.maybeCrank(ctx, cl, st)
		switch {
		case err != nil:
			c.s.log.Warn("background transfer-queue crank failed", "cluster", cl.Endpoints.Name, "queue", st.TransferQueue, "err", err)
		case !skipped:
			c.s.log.Debug("background transfer-queue crank", "cluster", cl.Endpoints.Name, "queue", st.TransferQueue, "signature", sig.String())
		}
	}()
}

// maybeCrank cranks unless the queue ran recently.
func (c *cranker) maybeCrank(ctx context.Context, cl *Cluster, st *payments.MintInitializationResponse) (solana.Signature, bool, error) {
	queue := solana.MustPublicKeyFromBase58(st.TransferQueue)
	sigs, err := cl.Crank.GetSignaturesForAddress(ctx, queue, chainclient.SignaturesOptions{Limit: 5, Commitment: chainclient.Confirmed})
	if err != nil {
		if !isAuthFilterError(err) {
			return solana.Signature{}, false, err
		}
		c.mu.Lock()
		c.authMisses[queue]++
		n := c.authMisses[queue]
		c.mu.Unlock()
		if n%crankAuthRetry != 0 {
			return solana.Signature{}, true, nil
		}
	} else {
		for _, si := range sigs {
			if len(si.Err) == 0 && si.BlockTime != nil {
				if c.s.now().Sub(time.Unix(*si.BlockTime, 0)) < crankIdle {
					return solana.Signature{}, true, nil
				}
				break
			}
		}
	}
	plan, err := c.s.planner.PlanEnsureCrank(ctx, cl.Chain(""), &payments.TransferQueueEnsureCrankRequest{Mint: st.Mint, Validator: st.Validator})
	if err != nil {
		return solana.Signature{}, false, err
	}
	sig, err := c.run(ctx, cl, plan)
	return sig, false, err
}

// isAuthFilterError recognises a TEE rollup refusing a request without a
// valid token.
func isAuthFilterError(err error) bool {
	m := strings.ToLower(err.Error())
	for _, s := range []string{"missing token", "invalidtoken", "invalid token", "401 unauthorized", "access denied", "unauthorized"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// run sends one crank, signed and paid by a throw-away keypair, to the
// cluster's crank RPC with skipPreflight, and confirms it. On a TEE
// cluster whose crank RPC is the rollup, a throw-away login provides the
// token.
func (c *cranker) run(ctx context.Context, cl *Cluster, plan *payments.CrankPlan) (solana.Signature, error) {
	_, payer, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return solana.Signature{}, err
	}
	client := cl.Crank.Client
	var bh chainclient.Blockhash
	if cl.Endpoints.TEE && cl.Crank.URL() == cl.Ephemeral.URL() {
		tok, err := c.throwawayToken(ctx, cl)
		if err != nil {
			return solana.Signature{}, fmt.Errorf("throw-away login: %w", err)
		}
		client = client.WithToken(tok)
		bh, err = client.GetLatestBlockhash(ctx, chainclient.Confirmed)
		if err != nil {
			return solana.Signature{}, err
		}
	} else if bh, err = cl.Crank.GetLatestBlockhash(ctx, chainclient.Confirmed); err != nil {
		return solana.Signature{}, err
	}
	raw, err := plan.Transaction(payer, bh.Hash)
	if err != nil {
		return solana.Signature{}, err
	}
	sig, err := client.SendTransaction(ctx, raw, chainclient.SendOptions{SkipPreflight: true, PreflightCommitment: chainclient.Confirmed})
	if err != nil {
		return solana.Signature{}, err
	}
	if _, err := client.Confirm(ctx, sig, bh.LastValidBlockHeight, chainclient.Confirmed, chainclient.ConfirmOptions{PollInterval: c.poll}); err != nil {
		var failed *chainclient.TransactionFailedError
		if errors.As(err, &failed) {
			return sig, fmt.Errorf("Transfer queue crank transaction failed: %s", failed.Err)
		}
		return sig, err
	}
	return sig, nil
}

// throwawayToken logs a random keypair in to the cluster's TEE auth
// service and returns the inner token.
func (c *cranker) throwawayToken(ctx context.Context, cl *Cluster) (string, error) {
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", err
	}
	pk := base58.Encode(k[32:])
	ch, err := c.s.auth.ProxyChallenge(ctx, cl.Endpoints.Ephemeral, pk)
	if err != nil {
		return "", err
	}
	sig := base58.Encode(ed25519.Sign(k, []byte(ch.Challenge)))
	lr, err := c.s.auth.ProxyLogin(ctx, cl.Endpoints.Ephemeral, &auth.LoginRequest{Pubkey: pk, Challenge: ch.Challenge, Signature: sig})
	if err != nil {
		return "", err
	}
	_, inner := auth.SplitToken(lr.Token)
	return inner, nil
}
