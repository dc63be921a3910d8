package pubsub

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/rpcserver"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// readerToken is the token of the one caller privacy lets read hidden
// accounts.
const readerToken = "reader"

// privacy is a read filter for tests: the accounts it hides are readable
// only by the caller whose ?token= is readerToken, as a rollup's private
// accounts are by their permission's members. It counts its calls.
type privacy struct {
	mu     sync.Mutex
	hidden map[solana.PublicKey]bool
	calls  atomic.Int64
}

func newPrivacy() *privacy { return &privacy{hidden: map[solana.PublicKey]bool{}} }

func (p *privacy) hide(k solana.PublicKey, hidden bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hidden[k] = hidden
}

func (p *privacy) filter(ctx context.Context, key solana.PublicKey, _ *ledger.Account) error {
	p.calls.Add(1)
	p.mu.Lock()
	hidden := p.hidden[key]
	p.mu.Unlock()
	if !hidden || rpcserver.RequestToken(ctx) == readerToken {
		return nil
	}
	return rpcserver.AccessDenied(key, "test")
}

// TestReadFilterAccountSubscribe: an account hidden from the caller when
// it subscribes is refused with getAccountInfo's error; one that becomes
// hidden later is notified only to the callers that may read it at
// notification time, per connection of one shared subscription, asking
// the filter once per distinct caller.
func TestReadFilterAccountSubscribe(t *testing.T) {
	p := newPrivacy()
	e := newEnv(t, ledger.Config{}, Options{ReadFilter: p.filter})
	secret, _, raw := e.transfer(1_000_000)
	e.process(raw)
	e.advance()
	p.hide(secret, true)

	anon, anon2, other, reader := e.dial(), e.dial(), e.dialAs("someone-else"), e.dialAs(readerToken)
	confirmed := map[string]any{"commitment": "confirmed", "encoding": "base64"}
	want := rpcserver.AccessDenied(secret, "test")
	for name, c := range map[string]*client{"no token": anon, "another token": other} {
		r := c.call("accountSubscribe", secret.String(), confirmed)
		if r.Error == nil || r.Error.Code != rpcserver.CodeAccountAccessDenied || r.Error.Message != want.Message {
			t.Fatalf("%s subscribes to a hidden account: %s", name, r.raw)
		}
	}
	reader.subscribe("accountSubscribe", secret.String(), confirmed)
	if st := e.s.Stats(); st.Subscriptions != 1 || st.Holds != 1 {
		t.Fatalf("refused subscriptions were registered: %+v", st)
	}

	// Public when subscribed, hidden when written.
	later := newKey(t)
	ids := map[uint64]bool{}
	clients := []*client{anon, anon2, other, reader}
	for _, c := range clients {
		ids[c.subscribe("accountSubscribe", later.String(), confirmed)] = true
	}
	if len(ids) != 1 {
		t.Fatalf("identical subscriptions got ids %v", ids)
	}
	p.hide(later, true)
	_, raw = e.signed(spl.SystemTransfer(e.l.Faucet().PublicKey(), later, 2_000_000))
	e.process(raw)
	before := p.calls.Load()
	e.advance()
	if _, v := value(t, reader.note()); !json.Valid(v) || !containsLamports(v, 2_000_000) {
		t.Fatalf("reader's notification: %s", v)
	}
	for name, c := range map[string]*client{"no token": anon, "no token (second connection)": anon2, "another token": other} {
		c.noNotes(name + ": the account became hidden")
	}
	// Three callers (no token, another token, the reader) for four
	// connections: the filter decided three times.
	if n := p.calls.Load() - before; n != 3 {
		t.Fatalf("filter called %d times for one notification to 3 callers", n)
	}

	// Public again: every holder gets the same notification.
	p.hide(later, false)
	_, raw = e.signed(spl.SystemTransfer(e.l.Faucet().PublicKey(), later, 1))
	e.process(raw)
	e.advance()
	var first string
	for i, c := range clients {
		m := c.note()
		if _, v := value(t, m); !containsLamports(v, 2_000_001) {
			t.Fatalf("client %d after the account became public: %s", i, m.raw)
		}
		if i == 0 {
			first = string(m.raw)
		} else if string(m.raw) != first {
			t.Fatalf("client %d got %s, client 0 %s", i, m.raw, first)
		}
	}

	// A deleted account is shown to anyone (getAccountInfo's null is).
	p.hide(later, true)
	if _, err := e.l.Apply(testCtx(t), func(w ledger.AccountWriter) error { w.Set(later, nil); return nil }); err != nil {
		t.Fatal(err)
	}
	e.advance()
	for i, c := range clients {
		if _, v := value(t, c.note()); !containsLamports(v, 0) {
			t.Fatalf("client %d: deletion %s", i, v)
		}
	}
}

func containsLamports(v json.RawMessage, lamports uint64) bool {
	var a struct {
		Lamports *uint64 `json:"lamports"`
	}
	return json.Unmarshal(v, &a) == nil && a.Lamports != nil && *a.Lamports == lamports
}

// TestReadFilterProgramSubscribe: program notifications of an account the
// caller may not read are left out for that caller only.
func TestReadFilterProgramSubscribe(t *testing.T) {
	p := newPrivacy()
	e := newEnv(t, ledger.Config{}, Options{ReadFilter: p.filter})
	hidden, public := newKey(t), newKey(t)
	p.hide(hidden, true)
	anon, reader := e.dial(), e.dialAs(readerToken)
	cfg := map[string]any{"commitment": "confirmed", "encoding": "base64"}
	if a, r := anon.subscribe("programSubscribe", solana.SystemProgramID.String(), cfg), reader.subscribe("programSubscribe", solana.SystemProgramID.String(), cfg); a != r {
		t.Fatalf("ids %d and %d for identical parameters", a, r)
	}
	faucet := e.l.Faucet().PublicKey()
	_, raw := e.signed(spl.SystemTransfer(faucet, hidden, 1_000_000), spl.SystemTransfer(faucet, public, 1_000_000))
	e.process(raw)
	e.advance()
	// The reader's notifications mark the block's end (they come from the
	// same event); the barrier then collects everything anon was sent.
	keys := func(ms []message) []string {
		var out []string
		for _, m := range ms {
			var kv struct {
				Pubkey string `json:"pubkey"`
			}
			_, v := value(t, m)
			json.Unmarshal(v, &kv)
			out = append(out, kv.Pubkey)
		}
		slices.Sort(out)
		return out
	}
	sorted := func(ks ...solana.PublicKey) []string {
		out := make([]string, len(ks))
		for i, k := range ks {
			out[i] = k.String()
		}
		slices.Sort(out)
		return out
	}
	var readerNotes []message
	for len(readerNotes) < 3 {
		readerNotes = append(readerNotes, reader.note())
	}
	if got, want := keys(readerNotes), sorted(faucet, hidden, public); !slices.Equal(got, want) {
		t.Fatalf("reader's program notifications %v, want %v", got, want)
	}
	reader.noNotes("three accounts written")
	if got, want := keys(anon.sync()), sorted(faucet, public); !slices.Equal(got, want) {
		t.Fatalf("anonymous program notifications %v, want %v (hidden %s)", got, want, hidden)
	}
}

// TestReadFilterBlockSubscribe: a block notification shows each caller
// the token balances getBlock shows it (those of hidden accounts left
// out), rendered per caller.
func TestReadFilterBlockSubscribe(t *testing.T) {
	p := newPrivacy()
	e := newEnv(t, ledger.Config{}, Options{ReadFilter: p.filter})
	h := rpcserver.New(e.l, rpcserver.Options{ReadFilter: p.filter})
	ctx := testCtx(t)
	mint, _, err := e.l.Faucet().CreateMint(ctx, ledger.MintOptions{Decimals: 0})
	if err != nil {
		t.Fatal(err)
	}
	e.advance()
	alice, bob := newKey(t), newKey(t)
	hiddenATA := spl.AssociatedTokenAddress(alice, mint, spl.TokenProgramID)
	p.hide(hiddenATA, true)

	cfg := map[string]any{"commitment": "confirmed", "encoding": "json", "transactionDetails": "full", "showRewards": true, "maxSupportedTransactionVersion": 0}
	callers := map[string]*client{"no token": e.dial(), "another token": e.dialAs("someone-else"), "reader": e.dialAs(readerToken)}
	ids := map[uint64]bool{}
	for _, c := range callers {
		ids[c.subscribe("blockSubscribe", "all", cfg)] = true
	}
	if len(ids) != 1 {
		t.Fatalf("ids %v for identical parameters", ids)
	}
	if _, err := e.l.Faucet().MintTo(ctx, mint, alice, 111_111); err != nil {
		t.Fatal(err)
	}
	if _, err := e.l.Faucet().MintTo(ctx, mint, bob, 222_222); err != nil {
		t.Fatal(err)
	}
	slot := e.advance()
	getBlock := func(token string) string {
		t.Helper()
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"getBlock","params":[%d,{"commitment":"confirmed","encoding":"json","maxSupportedTransactionVersion":0}]}`, slot)
		var r struct {
			Result json.RawMessage `json:"result"`
		}
		out := h.HandleBody(rpcserver.WithRequestToken(ctx, token), []byte(body))
		if err := json.Unmarshal(out, &r); err != nil || len(r.Result) == 0 {
			t.Fatalf("getBlock: %s", out)
		}
		return string(r.Result)
	}
	for name, c := range callers {
		token := map[string]string{"another token": "someone-else", "reader": readerToken}[name]
		m := c.note()
		s, v := value(t, m)
		var u struct {
			Block json.RawMessage `json:"block"`
		}
		if err := json.Unmarshal(v, &u); err != nil || s != slot {
			t.Fatalf("%s: %s", name, m.raw)
		}
		jsonEq(t, string(u.Block), getBlock(token))
		visible := name == "reader"
		if hasAmount(t, u.Block, "111111") != visible || !hasAmount(t, u.Block, "222222") {
			t.Fatalf("%s: token balances in %s", name, u.Block)
		}
	}
}

// hasAmount reports whether a rendered block shows a token balance of
// amount (before or after) in any transaction.
func hasAmount(t *testing.T, block json.RawMessage, amount string) bool {
	t.Helper()
	var b struct {
		Transactions []struct {
			Meta struct {
				Pre  []struct{ UITokenAmount struct{ Amount string } } `json:"preTokenBalances"`
				Post []struct{ UITokenAmount struct{ Amount string } } `json:"postTokenBalances"`
			} `json:"meta"`
		} `json:"transactions"`
	}
	if err := json.Unmarshal(block, &b); err != nil {
		t.Fatal(err)
	}
	for _, tx := range b.Transactions {
		for _, tb := range append(tx.Meta.Pre, tx.Meta.Post...) {
			if tb.UITokenAmount.Amount == amount {
				return true
			}
		}
	}
	return false
}
