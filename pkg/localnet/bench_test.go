package localnet_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/cluster"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/localnet"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// BenchmarkCycle measures the full cycle the issue names, with the
// ledgers' slot clocks and the validator running: deposit (built with
// pkg/payments, sent to the base node over loopback HTTP) → the deposit
// appears on the rollup → private transfer ER → base with zero delay
// (sent to the ephemeral node) → the payout lands in the recipient's base
// balance. Workers run cycles concurrently, each with its own sender and
// a fresh recipient per cycle.
//
// Transactions go through the JSON-RPC endpoints; completion (a
// signature confirmed, a balance reaching its target) is observed by one
// in-process subscriber to both ledgers' committed blocks instead of RPC
// polling, so that hundreds of waiting clients neither load the machine
// nor blur the timings. It reports completed cycles per second, the
// process CPU time per cycle, and the p50/p99 latency from sending the
// private transfer to the payout's block being confirmed on base, and of
// the whole cycle.
//
//	go test ./pkg/localnet -run '^$' -bench BenchmarkCycle -benchtime 400x
func BenchmarkCycle(b *testing.B) {
	for _, c := range []struct {
		name     string
		base, er time.Duration
		workers  int
	}{
		{"magicblock-slots/400ms-50ms/workers=16", 400 * time.Millisecond, 50 * time.Millisecond, 16},
		{"magicblock-slots/400ms-50ms/workers=64", 400 * time.Millisecond, 50 * time.Millisecond, 64},
		{"fast-slots/20ms-10ms/workers=16", 20 * time.Millisecond, 10 * time.Millisecond, 16},
		{"fast-slots/20ms-10ms/workers=64", 20 * time.Millisecond, 10 * time.Millisecond, 64},
	} {
		b.Run(c.name, func(b *testing.B) {
			w := openRPCWorld(b, localnet.Config{DataDir: b.TempDir(), BaseSlot: c.base, EphemeralSlot: c.er, FinalityDepth: 32,
				CrankInterval: c.er}, nil)
			runCycles(b, w, c.workers)
		})
	}
}

// watcher follows the committed blocks of both ledgers and wakes waiters
// when a signature lands or a token account reaches a balance.
type watcher struct {
	mu      sync.Mutex
	sigs    map[solana.Signature]chan landing
	amounts map[solana.PublicKey][]amountWait
}

// landing is when a transaction's block was confirmed, and the record.
type landing struct {
	at  time.Time
	rec *ledger.TxRecord
}

type amountWait struct {
	ok   func(uint64) bool
	done chan time.Time
}

func watch(ctx context.Context, ls ...*ledger.Ledger) *watcher {
	w := &watcher{sigs: map[solana.Signature]chan landing{}, amounts: map[solana.PublicKey][]amountWait{}}
	for _, l := range ls {
		blocks := l.Subscribe(ctx)
		go func() {
			for blk := range blocks {
				w.block(blk)
			}
		}()
	}
	return w
}

func (w *watcher) block(blk *ledger.Block) {
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, tx := range blk.Transactions {
		if ch, ok := w.sigs[tx.Signature]; ok {
			ch <- landing{at: now, rec: tx}
			delete(w.sigs, tx.Signature)
		}
	}
	for _, wr := range blk.Writes {
		waits := w.amounts[wr.Key]
		if len(waits) == 0 {
			continue
		}
		var amount uint64
		if wr.Account != nil {
			amount = spl.TokenAmountOf(wr.Account.Data)
		}
		kept := waits[:0]
		for _, aw := range waits {
			if aw.ok(amount) {
				aw.done <- now
			} else {
				kept = append(kept, aw)
			}
		}
		w.amounts[wr.Key] = kept
	}
}

// signature registers a wait for sig; call it before sending.
func (w *watcher) signature(sig solana.Signature) <-chan landing {
	ch := make(chan landing, 1)
	w.mu.Lock()
	w.sigs[sig] = ch
	w.mu.Unlock()
	return ch
}

// balance registers a wait for key's token amount to satisfy ok; call it
// before the action that changes it.
func (w *watcher) balance(key solana.PublicKey, ok func(uint64) bool) <-chan time.Time {
	ch := make(chan time.Time, 1)
	w.mu.Lock()
	w.amounts[key] = append(w.amounts[key], amountWait{ok: ok, done: ch})
	w.mu.Unlock()
	return ch
}

func runCycles(b *testing.B, w *rpcWorld, workers int) {
	// Builds reuse a blockhash for a base slot, as a real client's cache
	// does.
	cached := func(url string) *chainclient.Cached {
		c, err := chainclient.New(url)
		if err != nil {
			b.Fatal(err)
		}
		return chainclient.NewCached(c, chainclient.CacheOptions{})
	}
	w.base, w.er = cached(w.base.URL()), cached(w.er.URL())
	w.chain = &payments.RPCChain{Base: w.base, Ephemeral: w.er, Kind: cluster.Local}
	w.createMint()
	payer := w.funded()
	out, err := w.planner.InitializeMint(w.ctx, w.chain, &payments.InitializeMintRequest{Payer: pub(payer).String(), Mint: w.mint.String()})
	if err != nil {
		b.Fatal(err)
	}
	w.sendAndConfirm(&out.UnsignedTransaction, payer)
	wt := watch(w.ctx, w.p.Base, w.p.Ephemeral)
	senders := make([]ed25519.PrivateKey, workers)
	var setup sync.WaitGroup
	errs := make(chan error, workers)
	sem := make(chan struct{}, 32)
	for i := range senders {
		setup.Add(1)
		go func() {
			defer setup.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			k, err := benchUser(w, wt, 1_000_000_000)
			senders[i] = k
			errs <- err
		}()
	}
	setup.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	const amount = 5_000_000
	var (
		mu      sync.Mutex
		payout  []time.Duration
		cycle   []time.Duration
		next    int
		failure error
	)
	b.ResetTimer()
	cpu0 := cpuTime()
	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func(sender ed25519.PrivateKey) {
			defer wg.Done()
			var erBalance uint64
			for {
				mu.Lock()
				if next >= b.N || failure != nil {
					mu.Unlock()
					return
				}
				next++
				mu.Unlock()
				p, c, err := oneCycle(w, wt, sender, &erBalance, amount)
				mu.Lock()
				if err != nil && failure == nil {
					failure = err
				}
				payout, cycle = append(payout, p), append(cycle, c)
				mu.Unlock()
			}
		}(senders[i])
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := cpuTime() - cpu0
	b.StopTimer()
	if failure != nil {
		b.Fatal(failure)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "cycles/s")
	b.ReportMetric(ms(cpu)/float64(b.N), "cpu-ms/cycle")
	b.ReportMetric(ms(percentile(payout, 50)), "p50-payout-ms")
	b.ReportMetric(ms(percentile(payout, 99)), "p99-payout-ms")
	b.ReportMetric(ms(percentile(cycle, 50)), "p50-cycle-ms")
	b.ReportMetric(ms(percentile(cycle, 99)), "p99-cycle-ms")
}

// cpuTime is the process's user+system CPU time: unlike wall time it does
// not depend on what else the shared machine runs.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, (len(s)*p+99)/100-1)]
}

// oneCycle runs deposit → private ER→base → payout and returns the
// payout latency (from sending the private transfer) and the whole
// cycle's. erBalance tracks the sender's rollup balance.
func oneCycle(w *rpcWorld, wt *watcher, sender ed25519.PrivateKey, erBalance *uint64, amount uint64) (time.Duration, time.Duration, error) {
	ctx := w.ctx
	t0 := time.Now()
	dep, err := w.planner.Deposit(ctx, w.chain, &payments.DepositRequest{Owner: pub(sender).String(), Mint: w.mint.String(), Amount: int64(amount)})
	if err != nil {
		return 0, 0, fmt.Errorf("build deposit: %w", err)
	}
	target := *erBalance + amount
	onER := wt.balance(w.ata(pub(sender)), func(a uint64) bool { return a == target })
	if _, err := sendBuilt(w, wt, dep, sender); err != nil {
		return 0, 0, fmt.Errorf("deposit: %w", err)
	}
	if _, err := await(ctx, onER); err != nil {
		return 0, 0, fmt.Errorf("wait for the deposit on the rollup: %w", err)
	}
	recipient := solana.NewWallet().PublicKey()
	tr, err := w.planner.Transfer(ctx, w.chain, &payments.TransferRequest{From: pub(sender).String(), To: recipient.String(),
		Mint: w.mint.String(), Amount: int64(amount), Visibility: payments.Private, FromBalance: payments.Ephemeral, ToBalance: payments.Base})
	if err != nil {
		return 0, 0, fmt.Errorf("build private transfer: %w", err)
	}
	paid := wt.balance(w.ata(recipient), func(a uint64) bool { return a == amount })
	t1, err := sendBuilt(w, wt, tr, sender)
	if err != nil {
		return 0, 0, fmt.Errorf("private transfer: %w", err)
	}
	done, err := await(ctx, paid)
	if err != nil {
		return 0, 0, fmt.Errorf("wait for the payout: %w", err)
	}
	*erBalance = target - amount
	return done.Sub(t1), done.Sub(t0), nil
}

func await(ctx context.Context, ch <-chan time.Time) (time.Time, error) {
	select {
	case t := <-ch:
		return t, nil
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	}
}

// sendBuilt signs a built transaction, sends it over RPC and waits until
// its block is confirmed; it returns when it was sent.
func sendBuilt(w *rpcWorld, wt *watcher, u *payments.UnsignedTransaction, signer ed25519.PrivateKey) (time.Time, error) {
	raw, err := base64.StdEncoding.DecodeString(u.TransactionBase64)
	if err != nil {
		return time.Time{}, err
	}
	tx, err := txwire.Decode(raw)
	if err != nil {
		return time.Time{}, err
	}
	if err := tx.Sign(signer); err != nil {
		return time.Time{}, err
	}
	c := w.base
	if u.SendTo == payments.Ephemeral {
		c = w.er
	}
	return send(w, wt, c, tx)
}

// send sends tx and waits until its block is confirmed. A failed
// transaction, or an ix 16 that a full queue refunded (the payout would
// never come), is an error.
func send(w *rpcWorld, wt *watcher, c *chainclient.Cached, tx *txwire.Transaction) (time.Time, error) {
	landed := wt.signature(tx.ID())
	sent := time.Now()
	if _, err := c.SendTransaction(w.ctx, tx.Bytes(), chainclient.SendOptions{PreflightCommitment: chainclient.Confirmed}); err != nil {
		return sent, err
	}
	select {
	case l := <-landed:
		if l.rec.Err != nil {
			return sent, fmt.Errorf("transaction %s failed: %v", l.rec.Signature, l.rec.Err)
		}
		for _, line := range l.rec.Meta.Logs {
			if strings.Contains(line, "transfer queue full") {
				return sent, fmt.Errorf("transaction %s: %s (too many payouts in flight for the queue)", l.rec.Signature, line)
			}
		}
		return sent, nil
	case <-w.ctx.Done():
		return sent, w.ctx.Err()
	}
}

// benchUser is rpcWorld.user without the test's Fatal (it runs on setup
// goroutines): a funded wallet holding tokens.
func benchUser(w *rpcWorld, wt *watcher, tokens uint64) (ed25519.PrivateKey, error) {
	k := newKey()
	sig, err := w.base.RequestAirdrop(w.ctx, pub(k), 10_000_000_000, chainclient.Confirmed)
	if err != nil {
		return nil, err
	}
	if _, err := w.base.Confirm(w.ctx, sig, ^uint64(0), chainclient.Confirmed, chainclient.ConfirmOptions{PollInterval: 20 * time.Millisecond}); err != nil {
		return nil, err
	}
	bh, err := w.base.GetLatestBlockhash(w.ctx, chainclient.Confirmed)
	if err != nil {
		return nil, err
	}
	msg, err := txwire.Compile(pub(w.auth), []txwire.Instruction{
		spl.CreateAssociatedTokenAccount(pub(w.auth), pub(k), w.mint, spl.TokenProgramID, true),
		spl.TokenMintTo(spl.TokenProgramID, w.mint, w.ata(pub(k)), pub(w.auth), tokens),
	}, bh.Hash)
	if err != nil {
		return nil, err
	}
	tx := txwire.NewUnsigned(msg)
	if err := tx.Sign(w.auth); err != nil {
		return nil, err
	}
	_, err = send(w, wt, w.base, tx)
	return k, err
}
