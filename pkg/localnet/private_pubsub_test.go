package localnet_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/pubsub"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// wsMessage is a frame a PubSub server sends: a response or a
// notification.
type wsMessage struct {
	ID     *int            `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Method string `json:"method"`
	Params struct {
		Result       json.RawMessage `json:"result"`
		Subscription uint64          `json:"subscription"`
	} `json:"params"`
	raw string
}

// wsCaller is a PubSub client that reads in the background and keeps
// every notification, in order.
type wsCaller struct {
	t    testing.TB
	name string
	ws   *websocket.Conn

	mu     sync.Mutex
	notes  []wsMessage
	resps  map[int]wsMessage
	nextID int
	got    chan struct{} // a frame arrived
	err    error
}

func dialPubSub(t testing.TB, ctx context.Context, name, wsURL, token string) *wsCaller {
	t.Helper()
	if token != "" {
		wsURL += "?token=" + url.QueryEscape(token)
	}
	ws, _, err := websocket.Dial(ctx, wsURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(-1)
	t.Cleanup(func() { ws.CloseNow() })
	c := &wsCaller{t: t, name: name, ws: ws, resps: map[int]wsMessage{}, nextID: 1, got: make(chan struct{}, 1)}
	go c.read(ctx)
	return c
}

func (c *wsCaller) read(ctx context.Context) {
	for {
		_, b, err := c.ws.Read(ctx)
		c.mu.Lock()
		if err != nil {
			c.err = err
			c.mu.Unlock()
			c.signal()
			return
		}
		var m wsMessage
		if jerr := json.Unmarshal(b, &m); jerr != nil {
			c.err = fmt.Errorf("frame %s: %w", b, jerr)
		}
		m.raw = string(b)
		if m.Method != "" {
			c.notes = append(c.notes, m)
		} else if m.ID != nil {
			c.resps[*m.ID] = m
		}
		c.mu.Unlock()
		c.signal()
	}
}

func (c *wsCaller) signal() {
	select {
	case c.got <- struct{}{}:
	default:
	}
}

// wait blocks until cond (checked under the lock) holds.
func (c *wsCaller) wait(what string, cond func() bool) {
	c.t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		c.mu.Lock()
		ok, err := cond(), c.err
		c.mu.Unlock()
		if ok {
			return
		}
		if err != nil {
			c.t.Fatalf("%s: %s: connection: %v", c.name, what, err)
		}
		select {
		case <-c.got:
		case <-deadline:
			c.t.Fatalf("%s: timed out waiting for %s", c.name, what)
		}
	}
}

// call sends a request and returns its response.
func (c *wsCaller) call(method string, params ...any) wsMessage {
	c.t.Helper()
	c.mu.Lock()
	id := c.nextID
	c.nextID++
	c.mu.Unlock()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err := c.ws.Write(context.Background(), websocket.MessageText, b); err != nil {
		c.t.Fatalf("%s: %v", c.name, err)
	}
	var resp wsMessage
	c.wait(method+" response", func() bool {
		var ok bool
		resp, ok = c.resps[id]
		return ok
	})
	return resp
}

func (c *wsCaller) subscribe(method string, params ...any) uint64 {
	c.t.Helper()
	r := c.call(method, params...)
	var id uint64
	if r.Error != nil || json.Unmarshal(r.Result, &id) != nil {
		c.t.Fatalf("%s: %s: %s", c.name, method, r.raw)
	}
	return id
}

// barrier returns every notification the server queued for c before it
// answered a request that takes its registry lock, which the notifier
// holds while it turns a batch of ledger events into notifications: all
// notifications of events it had started on are in.
func (c *wsCaller) barrier() []wsMessage {
	c.t.Helper()
	if r := c.call("accountUnsubscribe", uint64(1)<<60); r.Error == nil {
		c.t.Fatalf("%s: barrier: %s", c.name, r.raw)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]wsMessage(nil), c.notes...)
}

// notesOf returns the notifications of subscription id so far.
func (c *wsCaller) notesOf(id uint64) []wsMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []wsMessage
	for _, m := range c.notes {
		if m.Params.Subscription == id {
			out = append(out, m)
		}
	}
	return out
}

// noteValue decodes a notification's {"context","value"}.
func noteValue(t testing.TB, m wsMessage) (uint64, json.RawMessage) {
	t.Helper()
	var r struct {
		Context struct {
			Slot uint64 `json:"slot"`
		} `json:"context"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(m.Params.Result, &r); err != nil {
		t.Fatalf("notification %s: %v", m.raw, err)
	}
	return r.Context.Slot, r.Value
}

// parsedAmount is the token amount of a jsonParsed account ("" when it is
// not a parsed token account).
func parsedAmount(v json.RawMessage) string {
	var a struct {
		Data struct {
			Parsed struct {
				Info struct {
					TokenAmount struct {
						Amount string `json:"amount"`
					} `json:"tokenAmount"`
				} `json:"info"`
			} `json:"parsed"`
		} `json:"data"`
	}
	json.Unmarshal(v, &a)
	return a.Data.Parsed.Info.TokenAmount.Amount
}

// blockTokenBalances returns, for the transaction sig of a block
// notification, its pre- and postTokenBalances by account key; ok is
// false when the block does not hold sig.
func blockTokenBalances(t testing.TB, v json.RawMessage, sig solana.Signature) (map[string][]string, bool) {
	t.Helper()
	type balance struct {
		AccountIndex  int `json:"accountIndex"`
		UITokenAmount struct {
			Amount string `json:"amount"`
		} `json:"uiTokenAmount"`
	}
	var u struct {
		Block struct {
			Transactions []struct {
				Transaction struct {
					Signatures []string `json:"signatures"`
					Message    struct {
						AccountKeys []string `json:"accountKeys"`
					} `json:"message"`
				} `json:"transaction"`
				Meta struct {
					Pre  []balance `json:"preTokenBalances"`
					Post []balance `json:"postTokenBalances"`
				} `json:"meta"`
			} `json:"transactions"`
		} `json:"block"`
	}
	if err := json.Unmarshal(v, &u); err != nil {
		t.Fatalf("block notification %s: %v", v, err)
	}
	for _, tx := range u.Block.Transactions {
		if len(tx.Transaction.Signatures) == 0 || tx.Transaction.Signatures[0] != sig.String() {
			continue
		}
		out := map[string][]string{}
		for _, b := range append(tx.Meta.Pre, tx.Meta.Post...) {
			k := tx.Transaction.Message.AccountKeys[b.AccountIndex]
			out[k] = append(out[k], b.UITokenAmount.Amount)
		}
		return out, true
	}
	return nil, false
}

// TestPrivatePubSub: the rollup's PubSub enforces the read rules of its
// JSON-RPC. Over websockets without a token, with another wallet's token
// and with a forged one, accountSubscribe of alice's private ATA or eATA
// is refused with getAccountInfo's error; no account, program or block
// notification shows those accounts or their balance; an account that
// becomes private after the subscription stops being notified to others.
// Alice, with her token, subscribes and receives all of it.
func TestPrivatePubSub(t *testing.T) {
	w, alice := privateWorld(t)
	bob, carol := w.user(1), w.user(10_000_000)
	ctx := w.ctx
	ata, carolATA := w.ata(pub(alice)), w.ata(pub(carol))
	eata, _ := espl.FindEphemeralATA(pub(alice), w.mint)
	carolEATA, _ := espl.FindEphemeralATA(pub(carol), w.mint)
	private := map[string]bool{ata.String(): true, eata.String(): true, carolATA.String(): true, carolEATA.String(): true}

	srv := pubsub.New(w.p.Ephemeral, pubsub.Options{ReadFilter: w.p.ReadFilter()})
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { srv.Close(); hs.Close() })
	wsURL := "ws" + strings.TrimPrefix(hs.URL, "http")

	asAlice := dialPubSub(t, ctx, "alice", wsURL, testToken(pub(alice)))
	asCarol := dialPubSub(t, ctx, "carol", wsURL, testToken(pub(carol)))
	others := []*wsCaller{
		dialPubSub(t, ctx, "no token", wsURL, ""),
		dialPubSub(t, ctx, "bob's token", wsURL, testToken(pub(bob))),
		dialPubSub(t, ctx, "forged token", wsURL, "forged"),
	}
	httpClient := map[string]*chainclient.Cached{
		"no token": w.er, "bob's token": w.as(pub(bob)),
		"forged token": chainclient.NewCached(w.er.Client.WithToken("forged"), chainclient.CacheOptions{}),
	}

	// Subscribing to a private account: refused as getAccountInfo is.
	confirmedParsed := map[string]any{"commitment": "confirmed", "encoding": "jsonParsed"}
	for _, c := range others {
		for _, k := range []solana.PublicKey{ata, eata} {
			r := c.call("accountSubscribe", k.String(), confirmedParsed)
			_, httpErr := httpClient[c.name].GetAccountInfo(ctx, k, chainclient.Confirmed)
			var re *chainclient.RPCError
			if !errors.As(httpErr, &re) || r.Error == nil || r.Error.Code != re.Code || r.Error.Message != re.Message {
				t.Fatalf("%s: accountSubscribe %s: %s; getAccountInfo: %v", c.name, k, r.raw, httpErr)
			}
		}
	}
	ataSub := asAlice.subscribe("accountSubscribe", ata.String(), confirmedParsed)
	asAlice.subscribe("accountSubscribe", eata.String(), map[string]any{"commitment": "confirmed", "encoding": "base64"})

	// Carol's rollup ATA does not exist yet: anyone may subscribe, and
	// everyone holds the same subscription.
	carolSub := asCarol.subscribe("accountSubscribe", carolATA.String(), confirmedParsed)
	for _, c := range others {
		if id := c.subscribe("accountSubscribe", carolATA.String(), confirmedParsed); id != carolSub {
			t.Fatalf("%s: subscription %d, carol's %d", c.name, id, carolSub)
		}
	}
	// Programs of the private accounts, and the blocks that touch alice's
	// ATA, for everyone.
	programCfg := map[string]any{"commitment": "confirmed", "encoding": "base64"}
	blockCfg := map[string]any{"commitment": "confirmed", "encoding": "json", "transactionDetails": "full", "maxSupportedTransactionVersion": 0}
	type subs struct{ token, espl, block uint64 }
	subscribeAll := func(c *wsCaller) subs {
		return subs{
			token: c.subscribe("programSubscribe", spl.TokenProgramID.String(), programCfg),
			espl:  c.subscribe("programSubscribe", espl.ProgramID.String(), programCfg),
			block: c.subscribe("blockSubscribe", map[string]any{"mentionsAccountOrProgram": ata.String()}, blockCfg),
		}
	}
	aliceSubs := subscribeAll(asAlice)
	for _, c := range others {
		if s := subscribeAll(c); s != aliceSubs {
			t.Fatalf("%s: subscriptions %+v, alice's %+v", c.name, s, aliceSubs)
		}
	}

	// Carol deposits: her rollup ATA appears, private. She is notified of
	// her balance; nobody else hears of it.
	w.deposit(carol, 3_000_000)
	asCarol.wait("carol's balance", func() bool {
		for _, m := range asCarol.notes {
			if _, v := noteValue(t, m); m.Params.Subscription == carolSub && parsedAmount(v) == "3000000" {
				return true
			}
		}
		return false
	})

	// Alice pays carol 1 000 on the rollup, a plain token transfer between
	// their projected ATAs: a write of both private ATAs, and a
	// transaction whose metadata carries both balances.
	sig := w.sendIxs(w.er, alice, []txwire.Instruction{spl.TokenTransfer(spl.TokenProgramID, ata, carolATA, pub(alice), 1_000)})
	asAlice.wait("alice's ATA notification", func() bool {
		for _, m := range asAlice.notes {
			if _, v := noteValue(t, m); m.Params.Subscription == ataSub && parsedAmount(v) == "3999000" {
				return true
			}
		}
		return false
	})
	var aliceSaw map[string][]string
	asAlice.wait("the block of the transfer", func() bool {
		for _, m := range asAlice.notes {
			if m.Params.Subscription != aliceSubs.block {
				continue
			}
			_, v := noteValue(t, m)
			if tbs, ok := blockTokenBalances(t, v, sig); ok {
				aliceSaw = tbs
				return true
			}
		}
		return false
	})
	// Her own balance, not carol's: as getBlock shows it to her.
	if got := aliceSaw[ata.String()]; len(got) != 2 || got[0] != "4000000" || got[1] != "3999000" || len(aliceSaw) != 1 {
		t.Fatalf("alice's block notification: token balances %v", aliceSaw)
	}
	programKeys := func(c *wsCaller, id uint64) map[string]bool {
		out := map[string]bool{}
		for _, m := range c.notesOf(id) {
			var kv struct {
				Pubkey string `json:"pubkey"`
			}
			_, v := noteValue(t, m)
			json.Unmarshal(v, &kv)
			out[kv.Pubkey] = true
		}
		return out
	}
	asAlice.barrier()
	if !programKeys(asAlice, aliceSubs.token)[ata.String()] {
		t.Fatal("alice got no token-program notification of her ATA")
	}

	// The events above reached alice and carol, so each other caller's
	// barrier collects everything it was sent for them.
	for _, c := range others {
		notes := c.barrier()
		if n := c.notesOf(carolSub); len(n) > 0 {
			t.Fatalf("%s: notified of carol's private ATA: %s", c.name, n[0].raw)
		}
		for _, id := range []uint64{aliceSubs.token, aliceSubs.espl} {
			for k := range programKeys(c, id) {
				if private[k] {
					t.Fatalf("%s: program notification of private account %s", c.name, k)
				}
			}
		}
		var sawBlock bool
		for _, m := range c.notesOf(aliceSubs.block) {
			_, v := noteValue(t, m)
			tbs, ok := blockTokenBalances(t, v, sig)
			if !ok {
				continue
			}
			sawBlock = true
			if len(tbs) != 0 {
				t.Fatalf("%s: token balances of the transfer: %v", c.name, tbs)
			}
		}
		if !sawBlock {
			t.Fatalf("%s: no block notification of the transfer", c.name)
		}
		for _, m := range notes {
			for _, amount := range []string{`"4000000"`, `"3999000"`, `"3000000"`, `"3001000"`} {
				if strings.Contains(m.raw, amount) {
					t.Fatalf("%s: a notification shows a private balance (%s): %s", c.name, amount, m.raw)
				}
			}
		}
	}
}
