package localnet_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/auth"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/rpcserver"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// denied asserts the rollup's access-denied error.
func denied(t *testing.T, what string, err error) {
	t.Helper()
	var re *chainclient.RPCError
	if !errors.As(err, &re) || re.Code != rpcserver.CodeAccountAccessDenied {
		t.Fatalf("%s: err = %v, want %d", what, err, rpcserver.CodeAccountAccessDenied)
	}
}

// keyedAddresses reads a getTokenAccountsByOwner / getTokenLargestAccounts
// result's addresses.
func keyedAddresses(t *testing.T, raw json.RawMessage, field string) []string {
	t.Helper()
	var v struct {
		Value []map[string]any `json:"value"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range v.Value {
		out = append(out, e[field].(string))
	}
	return out
}

// privateWorld is a served pair with a mint set up and alice holding
// 4 000 000 of it on the rollup, in an eATA private by default (a deposit
// gives it a permission).
func privateWorld(tb testing.TB) (*rpcWorld, ed25519.PrivateKey) {
	w := newRPCWorld(tb)
	w.createMint()
	payer := w.funded()
	im, err := w.planner.InitializeMint(w.ctx, w.chain, &payments.InitializeMintRequest{Payer: pub(payer).String(), Mint: w.mint.String()})
	if err != nil {
		tb.Fatal(err)
	}
	w.sendAndConfirm(&im.UnsignedTransaction, payer)
	alice := w.user(10_000_000)
	w.deposit(alice, 4_000_000)
	return w, alice
}

// TestPrivateReadsOverRPC: the local rollup hides what a TEE rollup hides
// (accounts with a permission, and the balances projected from a private
// eATA) from everyone but the permission's members, who prove who they
// are with ?token=. Every account-reading method goes through the filter.
func TestPrivateReadsOverRPC(t *testing.T) {
	w, alice := privateWorld(t)
	bob := w.user(1)
	var err error
	ata := w.ata(pub(alice))
	eata, _ := espl.FindEphemeralATA(pub(alice), w.mint)
	ctx := w.ctx

	anon, asAlice, asBob := w.er, w.as(pub(alice)), w.as(pub(bob))
	forged := chainclient.NewCached(w.er.Client.WithToken("forged"), chainclient.CacheOptions{})

	// Single-account reads: the owner sees them, nobody else does.
	if a, err := asAlice.GetAccountInfo(ctx, ata, chainclient.Confirmed); err != nil || a == nil {
		t.Fatalf("alice reads her ATA: %v %v", a, err)
	}
	if b, err := asAlice.GetTokenAccountBalance(ctx, ata, chainclient.Confirmed); err != nil || b.Amount != 4_000_000 {
		t.Fatalf("alice's balance: %+v %v", b, err)
	}
	for name, c := range map[string]*chainclient.Cached{"no token": anon, "bob's token": asBob, "forged token": forged} {
		_, err := c.GetAccountInfo(ctx, ata, chainclient.Confirmed)
		denied(t, name+": getAccountInfo(ATA)", err)
		_, err = c.GetAccountInfo(ctx, eata, chainclient.Confirmed)
		denied(t, name+": getAccountInfo(eATA)", err)
		_, err = c.GetTokenAccountBalance(ctx, ata, chainclient.Confirmed)
		denied(t, name+": getTokenAccountBalance", err)
		_, err = c.GetBalance(ctx, ata, chainclient.Confirmed)
		denied(t, name+": getBalance", err)
		_, err = c.GetMultipleAccounts(ctx, []solana.PublicKey{w.mint, ata}, chainclient.Confirmed)
		denied(t, name+": getMultipleAccounts", err)
	}
	// Public accounts stay public.
	if a, err := anon.GetAccountInfo(ctx, w.mint, chainclient.Confirmed); err != nil || a == nil {
		t.Fatalf("the mint: %v %v", a, err)
	}
	if as, err := asAlice.GetMultipleAccounts(ctx, []solana.PublicKey{w.mint, ata}, chainclient.Confirmed); err != nil || as[1] == nil {
		t.Fatalf("alice's getMultipleAccounts: %v %v", as, err)
	}

	// Scans leave hidden accounts out.
	byOwner := func(c *chainclient.Cached) []string {
		raw, err := c.CallRaw(ctx, "getTokenAccountsByOwner", []any{pub(alice), map[string]any{"mint": w.mint}, map[string]any{"encoding": "base64"}})
		if err != nil {
			t.Fatal(err)
		}
		return keyedAddresses(t, raw, "pubkey")
	}
	largest := func(c *chainclient.Cached) []string {
		raw, err := c.CallRaw(ctx, "getTokenLargestAccounts", []any{w.mint})
		if err != nil {
			t.Fatal(err)
		}
		return keyedAddresses(t, raw, "address")
	}
	byProgram := func(c *chainclient.Cached) []string {
		raw, err := c.CallRaw(ctx, "getProgramAccounts", []any{spl.TokenProgramID, map[string]any{"encoding": "base64", "withContext": true,
			"filters": []any{map[string]any{"dataSize": spl.TokenAccountSize}, map[string]any{"memcmp": map[string]any{"offset": 32, "bytes": pub(alice).String()}}}}})
		if err != nil {
			t.Fatal(err)
		}
		return keyedAddresses(t, raw, "pubkey")
	}
	if got := byOwner(asAlice); !slices.Equal(got, []string{ata.String()}) {
		t.Fatalf("alice's token accounts: %v", got)
	}
	if got := byProgram(asAlice); !slices.Equal(got, []string{ata.String()}) {
		t.Fatalf("alice's token accounts by getProgramAccounts: %v", got)
	}
	for _, c := range []*chainclient.Cached{anon, asBob} {
		if got := byOwner(c); len(got) != 0 {
			t.Fatalf("alice's token accounts seen by another: %v", got)
		}
		if got := byProgram(c); len(got) != 0 {
			t.Fatalf("alice's token accounts seen by another through getProgramAccounts: %v", got)
		}
		if slices.Contains(largest(c), ata.String()) {
			t.Fatal("getTokenLargestAccounts shows alice's private balance")
		}
	}
	if !slices.Contains(largest(asAlice), ata.String()) {
		t.Fatal("alice does not see her own account among the largest")
	}

	// A simulation does not return a private account's state either, nor
	// its token balance; nor does the preflight failure of a transaction
	// that touches it.
	bh, err := w.er.GetLatestBlockhash(ctx, chainclient.Confirmed)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := txwire.Compile(pub(bob), []txwire.Instruction{spl.SystemTransfer(pub(bob), ata, 0)}, bh.Hash)
	if err != nil {
		t.Fatal(err)
	}
	raw := txwire.NewUnsigned(msg).Base64()
	simulate := func(c *chainclient.Cached, withAccounts bool) (json.RawMessage, error) {
		cfg := map[string]any{"encoding": "base64"}
		if withAccounts {
			cfg["accounts"] = map[string]any{"addresses": []string{ata.String()}, "encoding": "base64"}
		}
		return c.CallRaw(ctx, "simulateTransaction", []any{raw, cfg})
	}
	_, err = simulate(asBob, true)
	denied(t, "simulateTransaction returning the ATA", err)
	if out, err := simulate(asAlice, true); err != nil || !strings.Contains(string(out), `"amount":"4000000"`) {
		t.Fatalf("alice's simulation: %s %v", out, err)
	}
	if out, err := simulate(asBob, false); err != nil || strings.Contains(string(out), "4000000") || !strings.Contains(string(out), `"preTokenBalances":[]`) {
		t.Fatalf("bob's simulation shows alice's balance: %s %v", out, err)
	}
	steal, err := txwire.Compile(pub(bob), []txwire.Instruction{spl.TokenTransfer(spl.TokenProgramID, ata, w.ata(pub(bob)), pub(bob), 1)}, bh.Hash)
	if err != nil {
		t.Fatal(err)
	}
	stx := txwire.NewUnsigned(steal)
	if err := stx.Sign(bob); err != nil {
		t.Fatal(err)
	}
	_, err = asBob.SendTransaction(ctx, stx.Bytes(), chainclient.SendOptions{PreflightCommitment: chainclient.Confirmed})
	var re *chainclient.RPCError
	if !errors.As(err, &re) || re.Code != rpcserver.CodePreflightFailure || strings.Contains(string(re.Data), "4000000") {
		t.Fatalf("preflight failure shows alice's balance: %v %s", err, re.Data)
	}

	// A landed transaction that touched the account: its history shows
	// the token balance only to a reader of the account.
	sig := w.sendIxs(w.er, bob, []txwire.Instruction{spl.SystemTransfer(pub(bob), ata, 0)})
	getTx := func(c *chainclient.Cached) string {
		raw, err := c.GetTransaction(ctx, sig, chainclient.TransactionOptions{Commitment: chainclient.Confirmed, Encoding: "json"})
		if err != nil || raw == nil {
			t.Fatalf("getTransaction: %s %v", raw, err)
		}
		return string(raw)
	}
	if tx := getTx(asBob); strings.Contains(tx, "4000000") {
		t.Fatalf("bob sees alice's balance in the history: %s", tx)
	}
	if tx := getTx(asAlice); !strings.Contains(tx, `"amount":"4000000"`) {
		t.Fatalf("alice does not see her balance in the history: %s", tx)
	}

	// In process, a caller that verified the wallet itself (the payments
	// API) reads as that wallet without a token.
	inproc, _ := chainclient.New("http://er.in-process", chainclient.WithHandler(w.p.EphemeralHandler()))
	if _, err := inproc.GetAccountInfo(auth.WithVerifiedWallet(ctx, pub(alice).String()), ata, chainclient.Confirmed); err != nil {
		t.Fatalf("in-process read as alice: %v", err)
	}
	_, err = inproc.GetAccountInfo(auth.WithVerifiedWallet(ctx, pub(bob).String()), ata, chainclient.Confirmed)
	denied(t, "in-process read as bob", err)
	_, err = inproc.GetAccountInfo(context.Background(), ata, chainclient.Confirmed)
	denied(t, "in-process read as nobody", err)

	// Without a verifier no token is accepted.
	w.p.SetTokenVerifier(nil)
	_, err = asAlice.GetAccountInfo(ctx, ata, chainclient.Confirmed)
	denied(t, "no verifier", err)
}

// BenchmarkPrivateRead measures getAccountInfo on the rollup, in process,
// with and without the read filter: a private ATA read by its owner, and
// a public account (the mint).
func BenchmarkPrivateRead(b *testing.B) {
	w, alice := privateWorld(b)
	c, _ := chainclient.New("http://er.in-process", chainclient.WithHandler(w.p.EphemeralHandler()))
	ctx := auth.WithVerifiedWallet(w.ctx, pub(alice).String())
	for _, tc := range []struct {
		name   string
		key    solana.PublicKey
		filter bool
	}{
		{"private ATA, filtered", w.ata(pub(alice)), true},
		{"mint, filtered", w.mint, true},
		{"private ATA, no filter", w.ata(pub(alice)), false},
		{"mint, no filter", w.mint, false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			if !tc.filter {
				filter := w.p.EphemeralRPC
				restore := w.p.ReadFilter()
				filter.SetReadFilter(nil)
				defer filter.SetReadFilter(restore)
			}
			for b.Loop() {
				if _, err := c.GetAccountInfo(ctx, tc.key, chainclient.Confirmed); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
