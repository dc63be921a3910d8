package devchain_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/devchain"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/rpcserver"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// node is a manual-slot ledger behind its JSON-RPC handler with the
// cheatcodes enabled: every test talks to it through JSON-RPC, as a
// client of ferry serve does.
type node struct {
	t   *testing.T
	ctx context.Context
	l   *ledger.Ledger
	h   *rpcserver.Handler
	dev *devchain.Node
}

func newNode(t *testing.T, name string) *node {
	t.Helper()
	l, err := ledger.Open(ledger.Config{Name: name, ManualSlots: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return newNodeOn(t, l, nil)
}

func newNodeOn(t *testing.T, l *ledger.Ledger, backing devchain.TokenBacking) *node {
	t.Helper()
	h := rpcserver.New(l, rpcserver.Options{})
	dev, err := devchain.New(devchain.Config{Ledger: l, Encode: h.AccountEncoder(), Backing: backing})
	if err != nil {
		t.Fatal(err)
	}
	h.EnableDevMethods(dev.Methods())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return &node{t: t, ctx: ctx, l: l, h: h, dev: dev}
}

type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// call sends one JSON-RPC request; params is the JSON params array.
func (n *node) call(method, params string) (json.RawMessage, *rpcError) {
	n.t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`
	var resp struct {
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if err := json.Unmarshal(n.h.HandleBody(n.ctx, []byte(body)), &resp); err != nil {
		n.t.Fatal(err)
	}
	return resp.Result, resp.Error
}

// ok calls a method that must succeed and decodes its result into out
// (unless nil).
func (n *node) ok(method, params string, out any) json.RawMessage {
	n.t.Helper()
	res, e := n.call(method, params)
	if e != nil {
		n.t.Fatalf("%s %s: %d %s %s", method, params, e.Code, e.Message, e.Data)
	}
	if out != nil {
		if err := json.Unmarshal(res, out); err != nil {
			n.t.Fatalf("%s: %s: %v", method, res, err)
		}
	}
	return res
}

// fails calls a method that must fail with code and a message containing
// msg.
func (n *node) fails(method, params string, code int, msg string) *rpcError {
	n.t.Helper()
	res, e := n.call(method, params)
	if e == nil {
		n.t.Fatalf("%s %s succeeded: %s", method, params, res)
	}
	if e.Code != code || !strings.Contains(e.Message, msg) {
		n.t.Fatalf("%s %s: %d %q, want %d containing %q", method, params, e.Code, e.Message, code, msg)
	}
	return e
}

// account reads an account at processed commitment (nil if none).
func (n *node) account(k solana.PublicKey) *ledger.Account {
	a, _ := n.l.Account(k, ledger.Processed)
	return a
}

// parsed reads an account as jsonParsed getAccountInfo shows it.
func (n *node) parsed(k solana.PublicKey) map[string]any {
	n.t.Helper()
	var out struct {
		Value *struct {
			Data struct {
				Parsed struct {
					Info map[string]any `json:"info"`
				} `json:"parsed"`
			} `json:"data"`
		} `json:"value"`
	}
	n.ok("getAccountInfo", `["`+k.String()+`",{"encoding":"jsonParsed","commitment":"processed"}]`, &out)
	if out.Value == nil {
		n.t.Fatalf("%s does not exist", k)
	}
	return out.Value.Data.Parsed.Info
}

// advance ends the working slot (it becomes confirmed).
func (n *node) advance() {
	n.t.Helper()
	if _, err := n.l.AdvanceSlot(n.ctx); err != nil {
		n.t.Fatal(err)
	}
}

func newKey() (solana.PublicKey, ed25519.PrivateKey) {
	_, k, _ := ed25519.GenerateKey(rand.Reader)
	return solana.PublicKeyFromBytes(k[32:]), k
}

// mint creates a mint with the faucet as its authority.
func (n *node) mint(token2022 bool) solana.PublicKey {
	n.t.Helper()
	m, _, err := n.l.Faucet().CreateMint(n.ctx, ledger.MintOptions{Decimals: 6, Token2022: token2022})
	if err != nil {
		n.t.Fatal(err)
	}
	return m
}

// fund gives k lamports through the faucet.
func (n *node) fund(k solana.PublicKey, lamports uint64) {
	n.t.Helper()
	if _, err := n.l.Faucet().Airdrop(n.ctx, k, lamports); err != nil {
		n.t.Fatal(err)
	}
}

// send signs and processes ixs paid by payer; it returns the record.
func (n *node) send(payer ed25519.PrivateKey, ixs ...txwire.Instruction) *ledger.TxRecord {
	n.t.Helper()
	tx := n.build(payer, ixs...)
	if err := tx.Sign(payer); err != nil {
		n.t.Fatal(err)
	}
	rec, err := n.l.Process(n.ctx, tx.Bytes())
	if err != nil {
		n.t.Fatal(err)
	}
	return rec
}

// build compiles an unsigned transaction paid by payer.
func (n *node) build(payer ed25519.PrivateKey, ixs ...txwire.Instruction) *txwire.Transaction {
	n.t.Helper()
	bh, _ := n.l.LatestBlockhash(ledger.Processed)
	msg, err := txwire.Compile(solana.PublicKeyFromBytes(payer[32:]), ixs, bh.Blockhash)
	if err != nil {
		n.t.Fatal(err)
	}
	return txwire.NewUnsigned(msg)
}

func tokenAmount(a *ledger.Account) uint64 {
	if a == nil {
		return 0
	}
	return spl.TokenAmountOf(a.Data)
}

func supplyOf(t *testing.T, a *ledger.Account) uint64 {
	t.Helper()
	m, err := spl.DecodeMint(a.Data)
	if err != nil {
		t.Fatal(err)
	}
	return m.Supply
}
