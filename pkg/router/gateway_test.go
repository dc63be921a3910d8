package router

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/chainclient"
)

// rpcNode is a fake chain node: base accounts from a ledger, a fixed
// blockhash, and a log of the calls it received.
type rpcNode struct {
	srv    *httptest.Server
	ledger *memLedger
	bh     chainclient.Blockhash
	mu     sync.Mutex
	calls  []string
	params []string
}

func newRPCNode(t *testing.T, l *memLedger, bh chainclient.Blockhash) *rpcNode {
	n := &rpcNode{ledger: l, bh: bh}
	n.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage
			Method string
			Params []json.RawMessage
		}
		json.Unmarshal(body, &req)
		n.mu.Lock()
		n.calls = append(n.calls, req.Method)
		ps, _ := json.Marshal(req.Params)
		n.params = append(n.params, string(ps))
		n.mu.Unlock()
		resp := map[string]any{"jsonrpc": "2.0", "id": req.ID}
		switch req.Method {
		case "getLatestBlockhash":
			resp["result"] = map[string]any{"context": map[string]any{"slot": 1}, "value": n.bh}
		case "getMultipleAccounts":
			var keys []solana.PublicKey
			json.Unmarshal(req.Params[0], &keys)
			vals := make([]any, len(keys))
			for i, k := range keys {
				if a, _ := n.ledger.GetAccount(t.Context(), k); a != nil {
					vals[i] = chainclient.Account{Lamports: a.Lamports, Owner: a.Owner, Data: a.Data}
				}
			}
			resp["result"] = map[string]any{"context": map[string]any{"slot": 1}, "value": vals}
		default:
			resp["error"] = chainclient.RPCError{Code: -32601, Message: "Method not found"}
		}
		json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(n.srv.Close)
	return n
}

func (n *rpcNode) count(method string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := 0
	for _, m := range n.calls {
		if m == method {
			c++
		}
	}
	return c
}

func TestGatewayMode(t *testing.T) {
	l := newLedger()
	l.put(plainAcct, &Account{Lamports: 2039280, Owner: solana.TokenProgramID})
	l.delegate(t, eATA, euID, 412)
	asAcct := solana.MustPublicKeyFromBase58("5e3hfoNiCaNRFQHdrqkkaxABDREexK5zavdwyf2EdkXx")
	l.delegate(t, asAcct, asID, 7)

	base := newRPCNode(t, l, baseHash)
	as := newRPCNode(t, newLedger(), erHash)
	eu := newRPCNode(t, newLedger(), euHash)
	baseClient, _ := chainclient.New(base.srv.URL)
	reg, err := NewGateway(GatewayConfig{
		Routes: []chainclient.Route{
			{Identity: asID, FQDN: as.srv.URL + "/", BlockTimeMs: 50, CountryCode: "SGP"},
			{Identity: euID, FQDN: eu.srv.URL, BlockTimeMs: 50, CountryCode: "DEU"},
		},
		Base:  baseClient,
		Cache: chainclient.CacheOptions{BlockhashTTL: -1},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, c := serve(t, reg)

	routes, err := c.GetRoutes(ctx0)
	if err != nil || len(routes) != 2 || routes[0].FQDN != as.srv.URL || routes[1].CountryCode != "DEU" {
		t.Errorf("routes = %+v, %v", routes, err)
	}
	id, err := c.GetIdentity(ctx0)
	if err != nil || id.Identity != asID || id.FQDN != as.srv.URL {
		t.Errorf("identity = %+v, %v", id, err)
	}

	ds, err := c.GetDelegationStatus(ctx0, eATA)
	if err != nil || !ds.IsDelegated || ds.FQDN != eu.srv.URL || ds.DelegationRecord.Authority != euID || ds.DelegationRecord.DelegationSlot != 412 {
		t.Errorf("delegation status = %+v, %v", ds, err)
	}
	// Account and record in one getMultipleAccounts, at confirmed.
	base.mu.Lock()
	lastParams := base.params[len(base.params)-1]
	base.mu.Unlock()
	pda, _ := DelegationRecordAddress(eATA)
	var ps []json.RawMessage
	json.Unmarshal([]byte(lastParams), &ps)
	var cfg map[string]string
	json.Unmarshal(ps[1], &cfg)
	var keys []string
	json.Unmarshal(ps[0], &keys)
	if len(keys) != 2 || keys[0] != eATA.String() || keys[1] != pda.String() || cfg["commitment"] != "confirmed" || cfg["encoding"] != "base64" {
		t.Errorf("base read params = %s", lastParams)
	}

	for _, tc := range []struct {
		keys []solana.PublicKey
		want chainclient.Blockhash
	}{
		{[]solana.PublicKey{plainAcct}, baseHash},
		{[]solana.PublicKey{plainAcct, eATA}, euHash},
		{[]solana.PublicKey{asAcct}, erHash},
	} {
		bh, err := c.GetBlockhashForAccounts(ctx0, tc.keys)
		if err != nil || bh != tc.want {
			t.Errorf("blockhash for %v = %+v, %v; want %+v", tc.keys, bh, err, tc.want)
		}
	}
	if base.count("getLatestBlockhash") != 1 || eu.count("getLatestBlockhash") != 1 || as.count("getLatestBlockhash") != 1 {
		t.Errorf("blockhash requests: base %d, eu %d, as %d", base.count("getLatestBlockhash"), eu.count("getLatestBlockhash"), as.count("getLatestBlockhash"))
	}
	_, err = c.GetBlockhashForAccounts(ctx0, []solana.PublicKey{eATA, asAcct})
	var re *chainclient.RPCError
	if !errors.As(err, &re) || re.Code != -32604 || re.Message != ErrConflictingDelegations.Error() {
		t.Errorf("conflict: err = %v", err)
	}

	// The base RPC going away is a -32604 router error naming the read.
	base.srv.Close()
	_, err = c.GetDelegationStatus(ctx0, eATA)
	if !errors.As(err, &re) || re.Code != -32604 {
		t.Errorf("base down: err = %v", err)
	}
}

func TestSingleAccountReaderPath(t *testing.T) {
	l := newLedger()
	l.delegate(t, eATA, localID, 3)
	reg := mustLocal(t, l)
	if _, err := reg.BlockhashForAccounts(ctx0, []solana.PublicKey{eATA, plainAcct, eATA}); err != nil {
		t.Fatal(err)
	}
	// Two distinct accounts, each read with its record.
	if l.reads != 4 {
		t.Errorf("%d reads, want 4", l.reads)
	}
}
