package api

import (
	"crypto/ed25519"
	"fmt"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/mr-tron/base58"

	"github.com/ferry-sh/ferry/pkg/auth"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/localnet"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/submit"
)

// flow is a hosted-API client (plain HTTP, local signing) working against
// the API served over a localnet pair, which settles deposits,
// withdrawals, private transfers and undelegations like MagicBlock's
// validator.
type flow struct {
	t      *testing.T
	h      *harness
	c      *hostedClient
	tokens map[solana.PublicKey]string
	keys   map[solana.PublicKey]ed25519.PrivateKey
}

func (f *flow) user(label string, tokens uint64) ed25519.PrivateKey {
	f.t.Helper()
	k := seedKey(label)
	ctx := f.t.Context()
	if _, err := f.h.base.Faucet().Airdrop(ctx, pubOf(k), 10_000_000_000); err != nil {
		f.t.Fatal(err)
	}
	if tokens > 0 {
		if _, err := f.h.base.Faucet().MintTo(ctx, f.h.mint, pubOf(k), tokens); err != nil {
			f.t.Fatal(err)
		}
	}
	f.h.settle()
	f.keys[pubOf(k)] = k
	return k
}

// login runs challenge → sign → login over HTTP.
func (f *flow) login(k ed25519.PrivateKey) string {
	f.t.Helper()
	pk := pubOf(k)
	if tok, ok := f.tokens[pk]; ok {
		return tok
	}
	var ch auth.ChallengeResponse
	if st := f.c.call("GET", "/v1/spl/challenge?pubkey="+pk.String(), nil, &ch); st != 200 {
		f.t.Fatalf("challenge %d", st)
	}
	var lr auth.LoginResponse
	sig := base58.Encode(ed25519.Sign(k, []byte(ch.Challenge)))
	if st := f.c.call("POST", "/v1/spl/login", map[string]string{"pubkey": pk.String(), "challenge": ch.Challenge, "signature": sig}, &lr); st != 200 {
		f.t.Fatalf("login %d", st)
	}
	f.tokens[pk] = lr.Token
	return lr.Token
}

// build POSTs a build request and returns the unsigned transaction.
func (f *flow) build(path string, body any, out any, k ed25519.PrivateKey) {
	f.t.Helper()
	var headers []string
	if k != nil {
		headers = []string{"Authorization", "Bearer " + f.login(k)}
	}
	if st := f.c.call("POST", path, body, out, headers...); st != 200 {
		f.t.Fatalf("%s: %d", path, st)
	}
}

// send signs u with keys and submits it with confirm (ephemeral sends
// carry the first signer's token).
func (f *flow) send(u *payments.UnsignedTransaction, keys ...ed25519.PrivateKey) *submit.Response {
	f.t.Helper()
	body := map[string]any{"transactionBase64": signB64(f.t, u.TransactionBase64, keys...), "sendTo": u.SendTo, "confirm": true,
		"recentBlockhash": u.RecentBlockhash, "lastValidBlockHeight": u.LastValidBlockHeight}
	var headers []string
	if u.SendTo == "ephemeral" {
		headers = []string{"Authorization", "Bearer " + f.login(keys[0])}
		if u.SendRPCEndpoint != "" {
			body["sendRpcEndpoint"] = u.SendRPCEndpoint
		}
	}
	var out submit.Response
	if st := f.c.call("POST", "/v1/transaction/send", body, &out, headers...); st != 200 || !out.Confirmed {
		f.t.Fatalf("send %s (%s): %d %+v", u.Kind, u.SendTo, st, out)
	}
	return &out
}

// trySend is send that reports a failure instead of failing the test.
func (f *flow) trySend(u *payments.UnsignedTransaction, keys ...ed25519.PrivateKey) bool {
	f.t.Helper()
	body := map[string]any{"transactionBase64": signB64(f.t, u.TransactionBase64, keys...), "sendTo": u.SendTo, "confirm": true,
		"recentBlockhash": u.RecentBlockhash, "lastValidBlockHeight": u.LastValidBlockHeight}
	var out submit.Response
	st := f.c.call("POST", "/v1/transaction/send", body, &out, "Authorization", "Bearer "+f.login(keys[0]))
	return st == 200 && out.Confirmed
}

func (f *flow) balance(who solana.PublicKey, private bool) uint64 {
	f.t.Helper()
	path, headers := "/v1/spl/balance", []string(nil)
	if private {
		path = "/v1/spl/private-balance"
		k, ok := f.keys[who]
		if !ok {
			f.t.Fatalf("no key for %s", who)
		}
		headers = []string{"Authorization", "Bearer " + f.login(k)}
	}
	var b payments.BalanceResponse
	if st := f.c.call("GET", fmt.Sprintf("%s?address=%s&mint=%s", path, who, f.h.mint), nil, &b, headers...); st != 200 {
		f.t.Fatalf("%s: %d", path, st)
	}
	n, err := strconv.ParseUint(b.Balance, 10, 64)
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

func (f *flow) waitBalance(who solana.PublicKey, private bool, want uint64, what string) {
	f.t.Helper()
	waitFor(f.t, what, func() bool { return f.balance(who, private) == want })
}

func transferReq(from, to solana.PublicKey, mint solana.PublicKey, amount int64, vis, fromBal, toBal string) map[string]any {
	return map[string]any{"from": from, "to": to, "mint": mint, "amount": amount, "visibility": vis, "fromBalance": fromBal, "toBalance": toBal}
}

// TestHostedClientFullFlowOnLocalnet drives every settling flow through
// the HTTP API only, as a client of payments.magicblock.app would: mint
// setup, deposits, a public rollup transfer, private transfers (base to
// base with a split, base to rollup, rollup to base), a withdrawal, an
// undelegation and a stealth pool, each built by the API, signed locally,
// sent with /v1/transaction/send {confirm:true} and observed with the
// balance routes while localnet settles it.
func TestHostedClientFullFlowOnLocalnet(t *testing.T) {
	p, err := localnet.Open(localnet.Config{BaseSlot: 20 * time.Millisecond, EphemeralSlot: 10 * time.Millisecond,
		FinalityDepth: -1, CrankInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	h := newHarnessOver(t, p.Base, p.Ephemeral, p.BaseHandler(), p.EphemeralHandler(), p.Identity())
	mint, _, err := p.Base.Faucet().CreateMint(t.Context(), ledger.MintOptions{Decimals: 6, Key: seedKey("mint")})
	if err != nil {
		t.Fatal(err)
	}
	h.mint = mint
	h.settle()
	srv := httptest.NewServer(h.srv)
	t.Cleanup(srv.Close)
	f := &flow{t: t, h: h, c: &hostedClient{t: t, base: srv.URL, hc: srv.Client()}, tokens: map[solana.PublicKey]string{}, keys: map[solana.PublicKey]ed25519.PrivateKey{}}

	// Mint setup.
	payerKey := f.user("payer", 0)
	var st payments.MintInitializationResponse
	if f.c.call("GET", "/v1/spl/is-mint-initialized?mint="+mint.String(), nil, &st); st.Initialized || st.Validator != p.Identity().String() {
		t.Fatalf("before setup: %+v", st)
	}
	var im payments.InitializeMintResponse
	f.build("/v1/spl/initialize-mint", map[string]any{"payer": pubOf(payerKey), "mint": mint}, &im, nil)
	f.send(&im.UnsignedTransaction, payerKey)
	if f.c.call("GET", "/v1/spl/is-mint-initialized?mint="+mint.String(), nil, &st); !st.Initialized {
		t.Fatalf("after setup: %+v", st)
	}

	aliceKey, bobKey := f.user("alice", 100_000_000), f.user("bob", 1)
	alice, bob := pubOf(aliceKey), pubOf(bobKey)

	// Deposits.
	var u payments.UnsignedTransaction
	f.build("/v1/spl/deposit", map[string]any{"owner": alice, "mint": mint, "amount": 40_000_000}, &u, nil)
	f.send(&u, aliceKey)
	f.waitBalance(alice, true, 40_000_000, "alice's deposit on the rollup")
	if got := f.balance(alice, false); got != 60_000_000 {
		t.Fatalf("alice's base balance %d", got)
	}
	f.build("/v1/spl/deposit", map[string]any{"owner": bob, "mint": mint, "amount": 1}, &u, nil)
	f.send(&u, bobKey)
	f.waitBalance(bob, true, 1, "bob's deposit")

	// Public rollup → rollup, sent to the rollup with alice's token.
	f.build("/v1/spl/transfer", transferReq(alice, bob, mint, 5_000_000, "public", "ephemeral", "ephemeral"), &u, aliceKey)
	f.send(&u, aliceKey)
	if a, b := f.balance(alice, true), f.balance(bob, true); a != 35_000_000 || b != 5_000_001 {
		t.Fatalf("rollup balances alice %d bob %d", a, b)
	}

	// Private base → base, split in three, paid out by the queue crank.
	carol := pubOf(seedKey("carol"))
	req := transferReq(alice, carol, mint, 15_000_000, "private", "base", "base")
	req["split"] = 3
	f.build("/v1/spl/transfer", req, &u, nil)
	if u.Fees.Lamports != "2039280" || u.Fees.Tokens != "15000" {
		t.Fatalf("fees %+v", u.Fees)
	}
	f.send(&u, aliceKey)
	var crank payments.TransferQueueEnsureCrankResponse
	f.c.call("POST", "/v1/spl/transfer-queue/ensure-crank", map[string]any{"mint": mint}, &crank) // best effort, as clients do
	f.waitBalance(carol, false, 15_000_000, "carol's private payout")

	// Private base → rollup.
	f.build("/v1/spl/transfer", transferReq(alice, bob, mint, 2_000_000, "private", "base", "ephemeral"), &u, nil)
	f.send(&u, aliceKey)
	f.waitBalance(bob, true, 7_000_001, "bob's private deposit")

	// Private rollup → base.
	dave := pubOf(seedKey("dave"))
	f.build("/v1/spl/transfer", transferReq(bob, dave, mint, 3_000_000, "private", "ephemeral", "base"), &u, bobKey)
	f.send(&u, bobKey)
	f.waitBalance(dave, false, 3_000_000, "dave's payout")
	f.waitBalance(bob, true, 4_000_001, "bob's rollup balance")

	// Withdrawal.
	baseBefore := f.balance(alice, false)
	f.build("/v1/spl/withdraw", map[string]any{"owner": alice, "mint": mint, "amount": 7_000_000}, &u, nil)
	f.send(&u, aliceKey)
	f.waitBalance(alice, false, baseBefore+7_000_000, "alice's withdrawal")
	f.waitBalance(alice, true, 28_000_000, "alice's rollup balance after withdrawing")

	// Undelegation: bob's rollup balance goes back to base.
	var und payments.UndelegateEphemeralATAResponse
	f.build("/v1/spl/undelegate-ephemeral-ata", map[string]any{"payer": bob, "mint": mint}, &und, bobKey)
	f.send(&und.UnsignedTransaction, bobKey)
	f.waitBalance(bob, true, 0, "bob's eATA undelegated")

	// Stealth pool: create it, then pay the handle privately.
	poolDest := pubOf(seedKey("pool destination"))
	var sp payments.StealthPoolResponse
	f.build("/v1/spl/stealth-pool", map[string]any{"payer": alice, "authority": alice, "handle": "alice.block", "destinations": []any{poolDest}}, &sp, aliceKey)
	f.send(sp.SetupTransaction, aliceKey)
	// The rollup clones the pool once it sees the delegation; until then
	// the update fails preflight. Clients retry with a fresh build.
	waitFor(t, "the pool update on the rollup", func() bool {
		f.build("/v1/spl/stealth-pool", map[string]any{"payer": alice, "authority": alice, "handle": "alice.block", "destinations": []any{poolDest}}, &sp, aliceKey)
		return f.trySend(&sp.UnsignedTransaction, aliceKey)
	})
	var ps payments.StealthPoolStatusResponse
	waitFor(t, "the stealth pool", func() bool {
		f.c.call("GET", "/v1/spl/stealth-pool?handle=alice.block", nil, &ps)
		return ps.Exists
	})
	req = transferReq(alice, alice, mint, 1_000_000, "private", "base", "base")
	req["to"] = "alice.block"
	f.build("/v1/spl/transfer", req, &u, nil)
	f.send(&u, aliceKey)
	f.waitBalance(poolDest, false, 1_000_000, "the pool destination's payout")
}
