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
	// is considered cranked, and a background check stops there.
	crankIdle = 60 * time.Second
	// crankAuthRetry: when the rollup refuses the activity check (its
	// auth filter), only every this-many-th background check of a queue
	// cranks anyway.
	crankAuthRetry = 100
	// crankSignatures is how many of the queue's latest signatures the
	// activity check reads.
	crankSignatures = 5
	// crankTimeout bounds one background check and crank.
	crankTimeout = 30 * time.Second
	// crankParallel bounds concurrent background checks; beyond it a
	// check is skipped (the next is-mint-initialized schedules another).
	crankParallel = 4
	// crankMaxQueues bounds the queues whose auth-filtered checks are
	// counted; beyond it the counts start again.
	crankMaxQueues = 4096
)

// cranker sends ESPL 17 (ensureTransferQueueCrank) transactions the way
// the hosted API's ensureTransferQueueCrankRunning does: forced by
// /ensure-crank, or in the background after is-mint-initialized found an
// initialized queue, unless the queue ran recently.
type cranker struct {
	s       *Service
	enabled bool
	poll    time.Duration

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	sem    chan struct{}

	mu         sync.Mutex
	inFlight   map[solana.PublicKey]bool // background checks under way
	authMisses map[solana.PublicKey]int  // auth-filtered checks per queue
}

func newCranker(s *Service, enabled bool, poll time.Duration) *cranker {
	ctx, cancel := context.WithCancel(context.Background())
	return &cranker{s: s, enabled: enabled, poll: poll, ctx: ctx, cancel: cancel,
		sem: make(chan struct{}, crankParallel), inFlight: map[solana.PublicKey]bool{}, authMisses: map[solana.PublicKey]int{}}
}

func (c *cranker) close() {
	c.cancel()
	c.wg.Wait()
}

// wait blocks until the background work scheduled so far is done (tests,
// as a Worker's waitUntil drains).
func (c *cranker) wait() { c.wg.Wait() }

// background schedules a check (and, if due, a crank) of an initialized
// queue: one per is-mint-initialized, as on the hosted API, except that a
// queue already being checked is not checked twice at once and at most
// crankParallel run together. Errors are logged.
func (c *cranker) background(cl *Cluster, st *payments.MintInitializationResponse) {
	if !c.enabled || c.ctx.Err() != nil {
		return
	}
	plan := c.s.planner.CrankPlanFor(solana.MustPublicKeyFromBase58(st.Mint), solana.MustPublicKeyFromBase58(st.Validator))
	c.mu.Lock()
	if c.inFlight[plan.Queue] {
		c.mu.Unlock()
		return
	}
	select {
	case c.sem <- struct{}{}:
	default:
		c.mu.Unlock()
		return // enough checks in flight
	}
	c.inFlight[plan.Queue] = true
	c.wg.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.wg.Done()
		defer func() {
			c.mu.Lock()
			delete(c.inFlight, plan.Queue)
			c.mu.Unlock()
			<-c.sem
		}()
		ctx, cancel := context.WithTimeout(c.ctx, crankTimeout)
		defer cancel()
		sig, err := c.ensure(ctx, cl, plan, false)
		switch {
		case err != nil:
			c.s.log.Warn("background transfer-queue crank failed", "cluster", cl.Endpoints.Name, "queue", st.TransferQueue, "err", err)
		case sig != (solana.Signature{}):
			c.s.log.Debug("background transfer-queue crank", "cluster", cl.Endpoints.Name, "queue", st.TransferQueue, "signature", sig.String())
		}
	}()
}

// ensure is the hosted API's routine: read the queue's latest signatures
// on the rollup; unless forced, stop when a successful one is younger
// than crankIdle, or when the rollup's auth filter refused the read (but
// on every crankAuthRetry-th such check); then crank. A crank after a
// refused read, sent to the rollup itself, carries a throw-away login's
// token. It returns the zero signature when it stopped.
func (c *cranker) ensure(ctx context.Context, cl *Cluster, plan *payments.CrankPlan, force bool) (solana.Signature, error) {
	needToken := false
	sigs, err := cl.Ephemeral.Client.GetSignaturesForAddress(ctx, plan.Queue, chainclient.SignaturesOptions{Limit: crankSignatures, Commitment: chainclient.Confirmed})
	switch {
	case err != nil && !isAuthFilterError(err):
		return solana.Signature{}, fmt.Errorf("check transfer queue activity: %w", err)
	case err != nil:
		needToken = true
		if !force && !c.authMissDue(plan.Queue) {
			return solana.Signature{}, nil
		}
	case !force:
		for _, si := range sigs {
			if len(si.Err) == 0 && si.BlockTime != nil {
				if c.s.now().Sub(time.Unix(*si.BlockTime, 0)) < crankIdle {
					return solana.Signature{}, nil
				}
				break
			}
		}
	}
	return c.run(ctx, cl, plan, needToken)
}

// authMissDue counts an auth-filtered check of queue and reports whether
// this one is due to crank anyway.
func (c *cranker) authMissDue(queue solana.PublicKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.authMisses[queue]; !ok && len(c.authMisses) >= crankMaxQueues {
		clear(c.authMisses)
	}
	c.authMisses[queue]++
	return c.authMisses[queue]%crankAuthRetry == 0
}

// isAuthFilterError recognises a rollup refusing a request without a
// valid token (the hosted API's list of words).
func isAuthFilterError(err error) bool {
	m := strings.ToLower(err.Error())
	for _, s := range []string{"missing token", "invalidtoken", "invalid token", "401 unauthorized", "access denied", "unauthorized"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// latestBlockhash is getLatestBlockhash with its context slot.
type latestBlockhash struct {
	Context struct {
		Slot uint64 `json:"slot"`
	} `json:"context"`
	Value chainclient.Blockhash `json:"value"`
}

// run sends one crank, signed and paid by a throw-away keypair, to the
// cluster's crank RPC, and confirms it: a fresh "confirmed" blockhash, a
// check that the block height has not passed it yet (getEpochInfo at the
// blockhash's slot), the send with skipPreflight, the confirmation. With
// withToken, a crank RPC that is the cluster's rollup gets the token of a
// throw-away login to it.
func (c *cranker) run(ctx context.Context, cl *Cluster, plan *payments.CrankPlan, withToken bool) (solana.Signature, error) {
	_, payer, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return solana.Signature{}, err
	}
	client := cl.Crank.Client
	if withToken && cl.Crank.URL() == cl.Ephemeral.URL() {
		tok, err := c.throwawayToken(ctx, cl)
		if err != nil {
			return solana.Signature{}, fmt.Errorf("throw-away login: %w", err)
		}
		client = client.WithToken(tok)
	}
	var bh latestBlockhash
	if err := client.Call(ctx, "getLatestBlockhash", []any{map[string]any{"commitment": chainclient.Confirmed}}, &bh); err != nil {
		return solana.Signature{}, err
	}
	var epoch chainclient.EpochInfo
	if err := client.Call(ctx, "getEpochInfo", []any{map[string]any{"commitment": chainclient.Confirmed, "minContextSlot": bh.Context.Slot}}, &epoch); err != nil {
		return solana.Signature{}, err
	}
	if epoch.BlockHeight > bh.Value.LastValidBlockHeight {
		return solana.Signature{}, errors.New("blockhash expired before send")
	}
	raw, err := plan.Transaction(payer, bh.Value.Hash)
	if err != nil {
		return solana.Signature{}, err
	}
	sig, err := client.SendTransaction(ctx, raw, chainclient.SendOptions{SkipPreflight: true, PreflightCommitment: chainclient.Confirmed})
	if err != nil {
		return solana.Signature{}, err
	}
	if _, err := client.Confirm(ctx, sig, bh.Value.LastValidBlockHeight, chainclient.Confirmed, chainclient.ConfirmOptions{PollInterval: c.poll}); err != nil {
		var failed *chainclient.TransactionFailedError
		if errors.As(err, &failed) {
			return sig, fmt.Errorf("Transfer queue crank transaction failed: %s", failed.Err)
		}
		return sig, err
	}
	return sig, nil
}

// throwawayToken logs a random keypair in to the cluster's rollup's auth
// service and returns the inner token (the mock token of a rollup without
// one, as on the hosted API).
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
