package localnet_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/cluster"
	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/delegation"
	"github.com/ferry-sh/ferry/pkg/localnet"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// rpcWorld is a pair served over real loopback HTTP with running slot
// clocks; everything a test does goes through the two JSON-RPC endpoints
// with pkg/chainclient and pkg/payments. Only the clock (which queue
// delays are measured against) is the test's.
type rpcWorld struct {
	t       testing.TB
	ctx     context.Context
	p       *localnet.Pair
	clock   *fakeClock
	base    *chainclient.Cached
	er      *chainclient.Cached
	chain   *payments.RPCChain
	planner *payments.Planner
	mint    solana.PublicKey
	auth    ed25519.PrivateKey // mint authority
}

func newRPCWorld(t testing.TB) *rpcWorld {
	clock := newClock()
	return openRPCWorld(t, localnet.Config{BaseSlot: 20 * time.Millisecond, EphemeralSlot: 10 * time.Millisecond,
		FinalityDepth: -1, Now: clock.Now, CrankInterval: 10 * time.Millisecond}, clock)
}

// openRPCWorld serves a pair opened with cfg over loopback HTTP.
func openRPCWorld(t testing.TB, cfg localnet.Config, clock *fakeClock) *rpcWorld {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	p, err := localnet.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	baseSrv, erSrv := httptest.NewServer(p.BaseHandler()), httptest.NewServer(p.EphemeralHandler())
	t.Cleanup(baseSrv.Close)
	t.Cleanup(erSrv.Close)
	client := func(url string) *chainclient.Cached {
		c, err := chainclient.New(url)
		if err != nil {
			t.Fatal(err)
		}
		return chainclient.NewCached(c, chainclient.CacheOptions{BlockhashTTL: -1})
	}
	// The rollup hides private accounts; readers prove who they are with
	// ?token=testToken(wallet).
	p.SetTokenVerifier(testVerifier)
	w := &rpcWorld{t: t, ctx: ctx, p: p, clock: clock, base: client(baseSrv.URL), er: client(erSrv.URL),
		planner: &payments.Planner{Cache: espl.NewCache(1024)}}
	w.chain = &payments.RPCChain{Base: w.base, Ephemeral: w.er, Kind: cluster.Local}
	return w
}

// with returns w reporting to subtest t.
func (w *rpcWorld) with(t *testing.T) *rpcWorld {
	c := *w
	c.t = t
	return &c
}

// waitFor polls cond until it holds (the bridge and the slot clocks are
// asynchronous); only a generous overall timeout bounds it.
func (w *rpcWorld) waitFor(what string, cond func() (bool, error)) {
	w.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ok, err := cond()
		if err != nil {
			w.t.Fatalf("%s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// sendAndConfirm signs a built transaction, sends it where it says and
// confirms it.
func (w *rpcWorld) sendAndConfirm(u *payments.UnsignedTransaction, signers ...ed25519.PrivateKey) solana.Signature {
	w.t.Helper()
	raw, _ := base64.StdEncoding.DecodeString(u.TransactionBase64)
	tx, err := txwire.Decode(raw)
	if err != nil {
		w.t.Fatal(err)
	}
	if err := tx.Sign(signers...); err != nil {
		w.t.Fatal(err)
	}
	c := w.base
	if u.SendTo == payments.Ephemeral {
		c = w.er
	}
	return w.confirm(c, tx.Bytes(), u.LastValidBlockHeight)
}

func (w *rpcWorld) confirm(c *chainclient.Cached, raw []byte, lastValid uint64) solana.Signature {
	w.t.Helper()
	sig, err := c.SendTransaction(w.ctx, raw, chainclient.SendOptions{PreflightCommitment: chainclient.Confirmed})
	if err != nil {
		var rpcErr *chainclient.RPCError
		if errors.As(err, &rpcErr) {
			w.t.Fatalf("send: %v\n%s", err, rpcErr.Data)
		}
		w.t.Fatalf("send: %v", err)
	}
	if _, err := c.Confirm(w.ctx, sig, lastValid, chainclient.Confirmed, chainclient.ConfirmOptions{PollInterval: 5 * time.Millisecond}); err != nil {
		w.t.Fatalf("confirm %s: %v", sig, err)
	}
	return sig
}

// sendIxs builds, signs and confirms instructions on one endpoint.
func (w *rpcWorld) sendIxs(c *chainclient.Cached, payer ed25519.PrivateKey, ixs []txwire.Instruction, signers ...ed25519.PrivateKey) solana.Signature {
	w.t.Helper()
	bh, err := c.GetLatestBlockhash(w.ctx, chainclient.Confirmed)
	if err != nil {
		w.t.Fatal(err)
	}
	msg, err := txwire.Compile(pub(payer), ixs, bh.Hash)
	if err != nil {
		w.t.Fatal(err)
	}
	tx := txwire.NewUnsigned(msg)
	if err := tx.Sign(append([]ed25519.PrivateKey{payer}, signers...)...); err != nil {
		w.t.Fatal(err)
	}
	return w.confirm(c, tx.Bytes(), bh.LastValidBlockHeight)
}

func newKey() ed25519.PrivateKey {
	_, k, _ := ed25519.GenerateKey(rand.Reader)
	return k
}

// funded airdrops SOL on base through requestAirdrop.
func (w *rpcWorld) funded() ed25519.PrivateKey {
	w.t.Helper()
	k := newKey()
	sig, err := w.base.RequestAirdrop(w.ctx, pub(k), 10_000_000_000, chainclient.Confirmed)
	if err != nil {
		w.t.Fatal(err)
	}
	if _, err := w.base.Confirm(w.ctx, sig, ^uint64(0), chainclient.Confirmed, chainclient.ConfirmOptions{PollInterval: 5 * time.Millisecond}); err != nil {
		w.t.Fatal(err)
	}
	return k
}

// createMint creates a 6-decimal mint with w.auth as authority.
func (w *rpcWorld) createMint() {
	w.t.Helper()
	w.auth = w.funded()
	mk := newKey()
	rent, err := w.base.GetMinimumBalanceForRentExemption(w.ctx, spl.MintSize, chainclient.Confirmed)
	if err != nil {
		w.t.Fatal(err)
	}
	w.mint = pub(mk)
	w.sendIxs(w.base, w.auth, []txwire.Instruction{
		spl.SystemCreateAccount(pub(w.auth), w.mint, rent, spl.MintSize, spl.TokenProgramID),
		spl.TokenInitializeMint2(spl.TokenProgramID, w.mint, tokenDecimals, pub(w.auth), nil),
	}, mk)
}

// user is a funded wallet holding tokens on base.
func (w *rpcWorld) user(tokens uint64) ed25519.PrivateKey {
	w.t.Helper()
	k := w.funded()
	if tokens > 0 {
		w.sendIxs(w.base, w.auth, []txwire.Instruction{
			spl.CreateAssociatedTokenAccount(pub(w.auth), pub(k), w.mint, spl.TokenProgramID, true),
			spl.TokenMintTo(spl.TokenProgramID, w.mint, w.ata(pub(k)), pub(w.auth), tokens),
		})
	}
	return k
}

func (w *rpcWorld) ata(owner solana.PublicKey) solana.PublicKey {
	return spl.AssociatedTokenAddress(owner, w.mint, spl.TokenProgramID)
}

// testTokenPrefix marks the tokens testVerifier accepts.
const testTokenPrefix = "test-token-for:"

// testToken is a token of wallet that testVerifier accepts.
func testToken(wallet solana.PublicKey) string { return testTokenPrefix + wallet.String() }

// testVerifier stands in for ferry serve's token check.
func testVerifier(tok string) (string, error) {
	w, ok := strings.CutPrefix(tok, testTokenPrefix)
	if !ok {
		return "", errors.New("not a test token")
	}
	return w, nil
}

// as is the rollup client with the token of wallet.
func (w *rpcWorld) as(wallet solana.PublicKey) *chainclient.Cached {
	return chainclient.NewCached(w.er.Client.WithToken(testToken(wallet)), chainclient.CacheOptions{BlockhashTTL: -1})
}

// balance reads owner's ATA through getTokenAccountBalance (0 if absent).
// On the rollup it reads as owner (the ATA is private there).
func (w *rpcWorld) balance(c *chainclient.Cached, owner solana.PublicKey) (uint64, error) {
	if c == w.er {
		c = w.as(owner)
	}
	a, err := c.GetAccountInfo(w.ctx, w.ata(owner), chainclient.Confirmed)
	if err != nil || a == nil {
		return 0, err
	}
	b, err := c.GetTokenAccountBalance(w.ctx, w.ata(owner), chainclient.Confirmed)
	return b.Amount, err
}

func (w *rpcWorld) mustBalance(c *chainclient.Cached, owner solana.PublicKey) uint64 {
	w.t.Helper()
	b, err := w.balance(c, owner)
	if err != nil {
		w.t.Fatal(err)
	}
	return b
}

func (w *rpcWorld) waitBalance(c *chainclient.Cached, owner solana.PublicKey, want uint64, what string) {
	w.t.Helper()
	w.waitFor(what, func() (bool, error) {
		b, err := w.balance(c, owner)
		return b == want, err
	})
}

func (w *rpcWorld) transfer(k ed25519.PrivateKey, req payments.TransferRequest) solana.Signature {
	w.t.Helper()
	req.From, req.Mint = pub(k).String(), w.mint.String()
	out, err := w.planner.Transfer(w.ctx, w.chain, &req)
	if err != nil {
		w.t.Fatal(err)
	}
	return w.sendAndConfirm(out, k)
}

func (w *rpcWorld) deposit(k ed25519.PrivateKey, amount int64) {
	w.t.Helper()
	before := w.mustBalance(w.er, pub(k))
	out, err := w.planner.Deposit(w.ctx, w.chain, &payments.DepositRequest{Owner: pub(k).String(), Mint: w.mint.String(), Amount: amount})
	if err != nil {
		w.t.Fatal(err)
	}
	w.sendAndConfirm(out, k)
	w.waitBalance(w.er, pub(k), before+uint64(amount), "the deposit on the rollup")
}

// queueEntries reads the transfer queue on the rollup over RPC.
func (w *rpcWorld) queueEntries() []espl.QueuedTransfer {
	w.t.Helper()
	q, _ := espl.FindTransferQueue(w.mint, w.p.Identity())
	// The queue is private to the validator (its permission's member).
	a, err := w.as(w.p.Identity()).GetAccountInfo(w.ctx, q, chainclient.Confirmed)
	if err != nil || a == nil {
		w.t.Fatalf("queue on the rollup: %v", err)
	}
	tq, err := espl.OpenTransferQueue(a.Data)
	if err != nil {
		w.t.Fatal(err)
	}
	out := make([]espl.QueuedTransfer, tq.Len())
	for i := range out {
		out[i] = tq.At(i)
	}
	return out
}

// TestEndToEndOverRPC runs every route of the issue through the two
// JSON-RPC endpoints, in order, on one pair:
//
//   - initialize-mint makes is-mint-initialized true: the queue PDA
//     exists on base, owned by the delegation program;
//   - deposit: the ephemeral balance appears in the owner's ATA on the ER;
//   - public ER → ER: a plain token transfer between projected ATAs;
//   - private base → base, split 3 with a delay window: the recipient
//     receives three pieces on base, none before its ready time, totalling
//     the amount (exactOut) while the sender pays the 10-bps fee on top,
//     and the recipient appears in no base transaction the sender signed;
//   - private base → ER: the recipient's ER balance grows;
//   - private ER → base: the recipient's base balance grows;
//   - withdraw: the base balance comes back and the ER balance drops;
//   - undelegation (ix 5) settles an ER balance back to base.
func TestEndToEndOverRPC(t *testing.T) {
	w := newRPCWorld(t)
	id, err := w.er.GetIdentity(w.ctx)
	if err != nil || id.Identity != w.p.Identity() {
		t.Fatalf("ephemeral getIdentity = %v, %v; want the validator %s", id.Identity, err, w.p.Identity())
	}
	w.createMint()
	queue, _ := espl.FindTransferQueue(w.mint, w.p.Identity())

	t.Run("initialize-mint", func(t *testing.T) {
		w := w.with(t)
		payer := w.funded()
		out, err := w.planner.InitializeMint(w.ctx, w.chain, &payments.InitializeMintRequest{Payer: pub(payer).String(), Mint: w.mint.String()})
		if err != nil {
			t.Fatal(err)
		}
		if out.TransferQueue != queue.String() {
			t.Fatalf("queue %s, want %s", out.TransferQueue, queue)
		}
		w.sendAndConfirm(&out.UnsignedTransaction, payer)
		a, err := w.base.GetAccountInfo(w.ctx, queue, chainclient.Confirmed)
		if err != nil || a == nil || a.Owner != delegation.ProgramID {
			t.Fatalf("is-mint-initialized: queue %+v %v", a, err)
		}
		w.waitFor("the queue on the rollup", func() (bool, error) {
			a, err := w.as(w.p.Identity()).GetAccountInfo(w.ctx, queue, chainclient.Confirmed)
			return a != nil && a.Owner == espl.ProgramID, err
		})
		var st chainclient.DelegationStatus
		if st, err = w.er.GetDelegationStatus(w.ctx, queue); err != nil || !st.IsDelegated {
			t.Fatalf("getDelegationStatus(queue) = %+v, %v", st, err)
		}
	})

	alice, bob := w.user(100_000_000), w.user(1)
	t.Run("deposit", func(t *testing.T) {
		w := w.with(t)
		w.deposit(alice, 40_000_000)
		if got := w.mustBalance(w.base, pub(alice)); got != 60_000_000 {
			t.Fatalf("alice's base balance %d", got)
		}
		w.deposit(bob, 1) // bob's eATA now lives on the rollup too
	})

	t.Run("public ER to ER", func(t *testing.T) {
		w := w.with(t)
		w.transfer(alice, payments.TransferRequest{To: pub(bob).String(), Amount: 5_000_000, Visibility: payments.Public,
			FromBalance: payments.Ephemeral, ToBalance: payments.Ephemeral})
		if a, b := w.mustBalance(w.er, pub(alice)), w.mustBalance(w.er, pub(bob)); a != 35_000_000 || b != 5_000_001 {
			t.Fatalf("alice %d bob %d on the rollup", a, b)
		}
	})

	t.Run("private base to base, split 3, delayed", func(t *testing.T) {
		w := w.with(t)
		carol := w.user(0)
		before := w.mustBalance(w.base, pub(alice))
		sig := w.transfer(alice, payments.TransferRequest{To: pub(carol).String(), Amount: 15_000_000, Visibility: payments.Private,
			FromBalance: payments.Base, ToBalance: payments.Base, Split: ptr(int64(3)), MinDelayMs: "2000", MaxDelayMs: "9000",
			ClientRefID: "1042"})
		fee := espl.PrivacyFee(15_000_000)
		if paid := before - w.mustBalance(w.base, pub(alice)); paid != 15_000_000+fee {
			t.Fatalf("alice paid %d, want amount + 10 bps = %d", paid, 15_000_000+fee)
		}
		var entries []espl.QueuedTransfer
		w.waitFor("three queued pieces", func() (bool, error) {
			entries = w.queueEntries()
			return len(entries) == 3, nil
		})
		var sum uint64
		for _, e := range entries {
			if e.DestinationOwner != pub(carol) || e.ClientRefID != 1042 {
				t.Fatalf("entry %+v", e)
			}
			sum += e.Amount
		}
		if sum != 15_000_000 {
			t.Fatalf("queued %d", sum)
		}
		// The clock stands still: nothing is ready, and after the validator
		// has looked at everything there is, carol still has nothing.
		if err := w.p.Sync(w.ctx); err != nil {
			t.Fatal(err)
		}
		if got := w.mustBalance(w.base, pub(carol)); got != 0 {
			t.Fatalf("carol got %d before any ready time", got)
		}
		w.clock.Advance(10 * time.Second) // past every ready time
		w.waitBalance(w.base, pub(carol), 15_000_000, "carol's three pieces")
		checkPayouts(t, w, pub(carol), entries)
		checkSenderTxs(t, w, alice, pub(carol), sig)
	})

	t.Run("private base to ER", func(t *testing.T) {
		w := w.with(t)
		before := w.mustBalance(w.er, pub(bob))
		w.transfer(alice, payments.TransferRequest{To: pub(bob).String(), Amount: 2_000_000, Visibility: payments.Private,
			FromBalance: payments.Base, ToBalance: payments.Ephemeral})
		w.waitBalance(w.er, pub(bob), before+2_000_000, "bob's rollup balance")
	})

	t.Run("private ER to base", func(t *testing.T) {
		w := w.with(t)
		dave := w.user(0)
		erBefore := w.mustBalance(w.er, pub(bob))
		w.transfer(bob, payments.TransferRequest{To: pub(dave).String(), Amount: 3_000_000, Visibility: payments.Private,
			FromBalance: payments.Ephemeral, ToBalance: payments.Base, Split: ptr(int64(2))})
		w.waitBalance(w.base, pub(dave), 3_000_000, "dave's base balance")
		if got := w.mustBalance(w.er, pub(bob)); got != erBefore-3_000_000 {
			t.Fatalf("bob's rollup balance %d", got)
		}
	})

	t.Run("withdraw", func(t *testing.T) {
		w := w.with(t)
		baseBefore, erBefore := w.mustBalance(w.base, pub(alice)), w.mustBalance(w.er, pub(alice))
		out, err := w.planner.Withdraw(w.ctx, w.chain, &payments.WithdrawRequest{Owner: pub(alice).String(), Mint: w.mint.String(), Amount: 7_000_000})
		if err != nil {
			t.Fatal(err)
		}
		w.sendAndConfirm(out, alice)
		w.waitBalance(w.base, pub(alice), baseBefore+7_000_000, "alice's withdrawal")
		w.waitBalance(w.er, pub(alice), erBefore-7_000_000, "alice's rollup balance after withdrawing")
	})

	t.Run("undelegate settles the ER balance", func(t *testing.T) {
		w := w.with(t)
		bal := w.mustBalance(w.er, pub(bob))
		w.sendIxs(w.er, bob, []txwire.Instruction{espl.UndelegateEphemeralATA(espl.UndelegateEphemeralATAArgs{Owner: pub(bob), Mint: w.mint})})
		eata, _ := espl.FindEphemeralATA(pub(bob), w.mint)
		w.waitFor("bob's eATA back on base", func() (bool, error) {
			a, err := w.base.GetAccountInfo(w.ctx, eata, chainclient.Confirmed)
			if err != nil || a == nil || a.Owner != espl.ProgramID {
				return false, err
			}
			e, err := espl.DecodeEphemeralATA(a.Data)
			return err == nil && e.Amount == bal, err
		})
		if st, err := w.er.GetDelegationStatus(w.ctx, eata); err != nil || st.IsDelegated {
			t.Fatalf("getDelegationStatus after undelegation: %+v %v", st, err)
		}
	})
}

// checkPayouts finds the validator's payout transactions to recipient on
// base and checks there is one per piece, and that the rollup cranked each
// piece no earlier than its ready time. The timing is checked where the
// decision is made: a base payout may legitimately land in a base slot
// opened (and timestamped) a moment before the rollup's clock passed the
// ready time, as on a real validator whose block time is fixed per slot.
func checkPayouts(t *testing.T, w *rpcWorld, recipient solana.PublicKey, entries []espl.QueuedTransfer) {
	t.Helper()
	byTask := map[uint32]espl.QueuedTransfer{}
	for _, e := range entries {
		byTask[e.TaskID] = e
	}
	paid := map[uint32]bool{}
	txLogs(t, w, w.base, w.ata(recipient), func(_ int64, l string) {
		var amount uint64
		var task, group uint32
		var ref uint64
		var to string
		if _, err := fmt.Sscanf(l, "Program log: Paid %d to %s (task %d, group %d, clientRefId %d)", &amount, &to, &task, &group, &ref); err != nil {
			return
		}
		e, ok := byTask[task]
		if !ok || paid[task] || to != recipient.String() || amount != e.Amount || ref != e.ClientRefID {
			t.Fatalf("payout %q does not match a queued piece", l)
		}
		paid[task] = true
	})
	if len(paid) != len(entries) {
		t.Fatalf("%d payout transactions, want %d", len(paid), len(entries))
	}
	queue, _ := espl.FindTransferQueue(w.mint, w.p.Identity())
	cranked := map[uint32]bool{}
	txLogs(t, w, w.er, queue, func(blockTime int64, l string) {
		var task uint32
		if _, err := fmt.Sscanf(l, "Program log: Cranked task %d:", &task); err != nil {
			return
		}
		e, ok := byTask[task]
		if !ok {
			return // another test's piece
		}
		// The block time is in seconds, the ready time in ms.
		if blockTime*1000 < e.ReadyAt {
			t.Fatalf("piece %d cranked at %d s, before its ready time %d ms", task, blockTime, e.ReadyAt)
		}
		cranked[task] = true
	})
	if len(cranked) != len(entries) {
		t.Fatalf("%d pieces cranked on the rollup, want %d", len(cranked), len(entries))
	}
}

// txLogs calls fn with the block time and each log line of every confirmed
// transaction that touched addr on the node behind c.
func txLogs(t *testing.T, w *rpcWorld, c *chainclient.Cached, addr solana.PublicKey, fn func(blockTime int64, line string)) {
	t.Helper()
	sigs, err := c.GetSignaturesForAddress(w.ctx, addr, chainclient.SignaturesOptions{Commitment: chainclient.Confirmed})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sigs {
		raw, err := c.GetTransaction(w.ctx, s.Signature, chainclient.TransactionOptions{Commitment: chainclient.Confirmed})
		if err != nil {
			t.Fatal(err)
		}
		var tx struct {
			BlockTime int64 `json:"blockTime"`
			Meta      struct {
				LogMessages []string `json:"logMessages"`
			} `json:"meta"`
		}
		if err := json.Unmarshal(raw, &tx); err != nil {
			t.Fatal(err)
		}
		for _, l := range tx.Meta.LogMessages {
			fn(tx.BlockTime, l)
		}
	}
}

// checkSenderTxs checks that the recipient (its key or its ATA) appears in
// no base transaction the sender signed, neither among the accounts nor
// in any instruction data.
func checkSenderTxs(t *testing.T, w *rpcWorld, sender ed25519.PrivateKey, recipient solana.PublicKey, private solana.Signature) {
	t.Helper()
	sigs, err := w.base.GetSignaturesForAddress(w.ctx, pub(sender), chainclient.SignaturesOptions{Commitment: chainclient.Confirmed})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range sigs {
		raw, err := w.base.GetTransaction(w.ctx, s.Signature, chainclient.TransactionOptions{Commitment: chainclient.Confirmed, Encoding: "base64"})
		if err != nil {
			t.Fatal(err)
		}
		var res struct {
			Transaction []string `json:"transaction"`
		}
		if err := json.Unmarshal(raw, &res); err != nil || len(res.Transaction) == 0 {
			t.Fatalf("transaction %s: %v", s.Signature, err)
		}
		b, _ := base64.StdEncoding.DecodeString(res.Transaction[0])
		tx, err := txwire.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		signed := false
		for _, k := range tx.Message.Signers() {
			signed = signed || k == pub(sender)
		}
		if !signed {
			continue
		}
		found = found || s.Signature == private
		for _, k := range []solana.PublicKey{recipient, w.ata(recipient)} {
			if bytes.Contains(b, k[:]) {
				t.Fatalf("the recipient's %s appears in sender-signed transaction %s", k, s.Signature)
			}
		}
	}
	if !found {
		t.Fatal("the private transfer is not among the sender's transactions")
	}
}
