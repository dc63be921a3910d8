package localnet_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"sync"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/localnet"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// fakeClock is an injectable clock: tests move it, nothing sleeps.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *fakeClock { return &fakeClock{now: time.Unix(1_800_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// harness is a manual-slot pair driven in process: transactions are
// built by pkg/payments against the pair's payments.Chain, signed and
// processed on the ledger the response names.
type harness struct {
	t       testing.TB
	ctx     context.Context
	p       *localnet.Pair
	clock   *fakeClock
	planner *payments.Planner
	chain   payments.Chain
	mint    solana.PublicKey
	payer   ed25519.PrivateKey
}

const tokenDecimals = 6

func newHarness(t testing.TB, dir string, clock *fakeClock) *harness {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	if clock == nil {
		clock = newClock()
	}
	p, err := localnet.Open(localnet.Config{DataDir: dir, ManualSlots: true, Now: clock.Now, FinalityDepth: -1, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	h := &harness{t: t, ctx: ctx, p: p, clock: clock, planner: &payments.Planner{Cache: espl.NewCache(1024)}, chain: p.Chain("")}
	return h
}

// setupMint creates a mint on base and runs initialize-mint for it.
func (h *harness) setupMint() {
	h.t.Helper()
	mint, _, err := h.p.Base.Faucet().CreateMint(h.ctx, ledger.MintOptions{Decimals: tokenDecimals})
	if err != nil {
		h.t.Fatal(err)
	}
	h.mint = mint
	h.payer = h.wallet(0)
	h.settle()
	out, err := h.planner.InitializeMint(h.ctx, h.chain, &payments.InitializeMintRequest{Payer: pub(h.payer).String(), Mint: mint.String()})
	if err != nil {
		h.t.Fatal(err)
	}
	h.submit(&out.UnsignedTransaction, h.payer)
	h.sync()
}

func pub(k ed25519.PrivateKey) solana.PublicKey { return solana.PublicKeyFromBytes(k[32:]) }

// wallet makes a funded base wallet holding tokens (once a mint exists).
func (h *harness) wallet(tokens uint64) ed25519.PrivateKey {
	h.t.Helper()
	_, k, _ := ed25519.GenerateKey(rand.Reader)
	f := h.p.Base.Faucet()
	if _, err := f.Airdrop(h.ctx, pub(k), 10_000_000_000); err != nil {
		h.t.Fatal(err)
	}
	if tokens > 0 {
		if _, err := f.MintTo(h.ctx, h.mint, pub(k), tokens); err != nil {
			h.t.Fatal(err)
		}
	}
	h.settle()
	return k
}

// settle advances both ledgers so that everything processed is confirmed
// (what the planner's confirmed reads need).
func (h *harness) settle() {
	h.t.Helper()
	for _, l := range []*ledger.Ledger{h.p.Base, h.p.Ephemeral} {
		if _, err := l.AdvanceSlot(h.ctx); err != nil {
			h.t.Fatal(err)
		}
	}
}

func (h *harness) sync() {
	h.t.Helper()
	if err := h.p.Sync(h.ctx); err != nil {
		h.t.Fatal(err)
	}
}

// submit signs an unsigned transaction and processes it where it is to
// be sent; it must land and succeed.
func (h *harness) submit(u *payments.UnsignedTransaction, signers ...ed25519.PrivateKey) *ledger.TxRecord {
	h.t.Helper()
	rec, err := h.trySubmit(u, signers...)
	if err != nil {
		h.t.Fatal(err)
	}
	if rec.Err != nil {
		h.t.Fatalf("%s transaction failed: %v\n%v", u.Kind, rec.Err, rec.Meta.Logs)
	}
	return rec
}

func (h *harness) trySubmit(u *payments.UnsignedTransaction, signers ...ed25519.PrivateKey) (*ledger.TxRecord, error) {
	raw, err := base64.StdEncoding.DecodeString(u.TransactionBase64)
	if err != nil {
		return nil, err
	}
	tx, err := txwire.Decode(raw)
	if err != nil {
		return nil, err
	}
	if err := tx.Sign(signers...); err != nil {
		return nil, err
	}
	l := h.p.Base
	if u.SendTo == payments.Ephemeral {
		l = h.p.Ephemeral
	}
	rec, err := l.Process(h.ctx, tx.Bytes())
	h.settle()
	return rec, err
}

func (h *harness) ata(owner solana.PublicKey) solana.PublicKey {
	return spl.AssociatedTokenAddress(owner, h.mint, spl.TokenProgramID)
}

func balanceOn(l *ledger.Ledger, k solana.PublicKey) uint64 {
	a, _ := l.Account(k, ledger.Confirmed)
	if a == nil {
		return 0
	}
	return spl.TokenAmountOf(a.Data)
}

func (h *harness) baseBalance(owner solana.PublicKey) uint64 {
	return balanceOn(h.p.Base, h.ata(owner))
}
func (h *harness) erBalance(owner solana.PublicKey) uint64 {
	return balanceOn(h.p.Ephemeral, h.ata(owner))
}

func (h *harness) deposit(k ed25519.PrivateKey, amount int64) {
	h.t.Helper()
	out, err := h.planner.Deposit(h.ctx, h.chain, &payments.DepositRequest{Owner: pub(k).String(), Mint: h.mint.String(), Amount: amount})
	if err != nil {
		h.t.Fatal(err)
	}
	h.submit(out, k)
	h.sync()
}

func (h *harness) transfer(k ed25519.PrivateKey, req payments.TransferRequest) *ledger.TxRecord {
	h.t.Helper()
	req.From, req.Mint = pub(k).String(), h.mint.String()
	out, err := h.planner.Transfer(h.ctx, h.chain, &req)
	if err != nil {
		h.t.Fatal(err)
	}
	rec := h.submit(out, k)
	h.sync()
	return rec
}
