package router

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/chainclient"
)

var (
	ctx0      = context.Background()
	localID   = solana.MustPublicKeyFromBase58("mAGicPQYBMvcYveUZA5F5UNNwyHvfYh5xkLS2Fr1mev")
	asID      = solana.MustPublicKeyFromBase58("MAS1Dt9qreoRMQ14YQuhg8UTZMMzDdKhmkZMECCzk57")
	euID      = solana.MustPublicKeyFromBase58("MEUGGrYPxKk17hCr7wpT6s8dtNokZj5U2L57vjYMS8e")
	teeID     = solana.MustPublicKeyFromBase58("MTEWGuqxUpYZGFJQcp8tLN7x5v9BSeoFHYWQQ3n3xzo")
	esplID    = solana.MustPublicKeyFromBase58("SPLxh1LVZzEkX99H6rqYizhytLWPZVV296zyYDPagv2")
	eATA      = solana.MustPublicKeyFromBase58("DSLT4neMssXyDn2nHPzn5n9tJHu5Nywhj3dFgYjyyLwp")
	plainAcct = solana.MustPublicKeyFromBase58("HQ6fRTZyj9WYiYmwHsezgqYNsdWe4VaF6TZVsbZXUnzu")
	baseHash  = chainclient.Blockhash{Hash: solana.MustHashFromBase58("EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N"), LastValidBlockHeight: 1150}
	erHash    = chainclient.Blockhash{Hash: solana.MustHashFromBase58("GHtXQBsoZHVnNFa9YevAzFr17DJjgHXk3ycTKD5xD3Zi"), LastValidBlockHeight: 90150}
	euHash    = chainclient.Blockhash{Hash: solana.MustHashFromBase58("4uQeVj5tqViQh7yWWGStvkEG1Zmhx6uasJtWCJziofM"), LastValidBlockHeight: 7150}
)

// memLedger is an in-memory base ledger: an AccountReader (not a
// MultiAccountReader) with an optional failure.
type memLedger struct {
	mu    sync.Mutex
	accts map[solana.PublicKey]*Account
	reads int
	err   error
}

func newLedger() *memLedger { return &memLedger{accts: map[solana.PublicKey]*Account{}} }

func (l *memLedger) GetAccount(_ context.Context, k solana.PublicKey) (*Account, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reads++
	if l.err != nil {
		return nil, l.err
	}
	return l.accts[k], nil
}

func (l *memLedger) put(k solana.PublicKey, a *Account) {
	l.mu.Lock()
	l.accts[k] = a
	l.mu.Unlock()
}

// delegate marks k as delegated to validator, with a record.
func (l *memLedger) delegate(t testing.TB, k, validator solana.PublicKey, slot uint64) {
	t.Helper()
	l.put(k, &Account{Lamports: 1447680, Owner: DelegationProgramID(), Data: make([]byte, 80)})
	pda, err := DelegationRecordAddress(k)
	if err != nil {
		t.Fatal(err)
	}
	rec := EncodeDelegationRecord(chainclient.DelegationRecord{Authority: validator, Owner: esplID, DelegationSlot: slot, Lamports: 1447680}, 30000)
	l.put(pda, &Account{Lamports: 1559040, Owner: DelegationProgramID(), Data: rec})
}

func fixedBlockhash(bh chainclient.Blockhash) BlockhashSource {
	return BlockhashSourceFunc(func(context.Context) (chainclient.Blockhash, error) { return bh, nil })
}

// localRouter serves a local-mode registry over HTTP.
func localRouter(t *testing.T, l *memLedger) (*httptest.Server, *chainclient.Client) {
	t.Helper()
	reg, err := NewLocal(LocalConfig{
		Identity: localID, URL: "http://127.0.0.1:7799/",
		Blockhash: fixedBlockhash(erHash), Base: l, BaseBlockhash: fixedBlockhash(baseHash),
	})
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, reg)
}

func serve(t *testing.T, b Backend) (*httptest.Server, *chainclient.Client) {
	srv := httptest.NewServer(&Handler{Backend: b})
	t.Cleanup(srv.Close)
	c, err := chainclient.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

// post sends body and returns the status and body.
func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func jsonEq(t *testing.T, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("got invalid JSON %q: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want %q: %v", want, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if !bytes.Equal(gb, wb) {
		t.Errorf("JSON mismatch\n got: %s\nwant: %s", gb, wb)
	}
}

func TestLocalGetRoutes(t *testing.T) {
	srv, _ := localRouter(t, newLedger())
	want := `{"jsonrpc":"2.0","id":1,"result":[{"identity":"mAGicPQYBMvcYveUZA5F5UNNwyHvfYh5xkLS2Fr1mev","fqdn":"http://127.0.0.1:7799","baseFee":0,"blockTimeMs":50,"countryCode":"XLC"}]}`
	for _, path := range []string{"/", "/getRoutes", "/anything/else"} {
		code, body := post(t, srv.URL+path, `{"jsonrpc":"2.0","id":1,"method":"getRoutes"}`)
		if code != 200 {
			t.Errorf("%s: HTTP %d", path, code)
		}
		jsonEq(t, body, want)
	}
}

func TestGetIdentity(t *testing.T) {
	srv, c := localRouter(t, newLedger())
	id, err := c.GetIdentity(ctx0)
	if err != nil || id.Identity != localID || id.FQDN != "http://127.0.0.1:7799" {
		t.Errorf("GetIdentity = %+v, %v", id, err)
	}
	_, body := post(t, srv.URL, `{"jsonrpc":"2.0","id":"a","method":"getIdentity","params":[]}`)
	jsonEq(t, body, `{"jsonrpc":"2.0","id":"a","result":{"identity":"mAGicPQYBMvcYveUZA5F5UNNwyHvfYh5xkLS2Fr1mev","fqdn":"http://127.0.0.1:7799"}}`)

	empty, err := New(Config{Base: newLedger(), BaseBlockhash: fixedBlockhash(baseHash)})
	if err != nil {
		t.Fatal(err)
	}
	_, c2 := serve(t, empty)
	_, err = c2.GetIdentity(ctx0)
	var re *chainclient.RPCError
	if !errors.As(err, &re) || re.Code != CodeRouterError {
		t.Errorf("no nodes: err = %v", err)
	}
}

func TestGetDelegationStatus(t *testing.T) {
	l := newLedger()
	l.put(plainAcct, &Account{Lamports: 2039280, Owner: solana.TokenProgramID, Data: make([]byte, 165)})
	l.delegate(t, eATA, localID, 412)
	foreign := solana.MustPublicKeyFromBase58("5e3hfoNiCaNRFQHdrqkkaxABDREexK5zavdwyf2EdkXx")
	l.delegate(t, foreign, teeID, 9)
	noRecord := solana.MustPublicKeyFromBase58("3L41SNpf6toLuaLq1hZEPtWYqF3MLAsK8v9joeyoQkLZ")
	l.put(noRecord, &Account{Lamports: 1, Owner: DelegationProgramID()})
	badRecord := solana.MustPublicKeyFromBase58("C56Rucmm5bUMmVbHskY5XkShzwBhJdUtF4ZB2dSDBXFg")
	l.delegate(t, badRecord, localID, 1)
	pda, _ := DelegationRecordAddress(badRecord)
	l.accts[pda].Data[0] = 99 // wrong discriminator
	// A record left behind for an account that is no longer owned by the
	// delegation program does not make it delegated.
	stale := solana.MustPublicKeyFromBase58("4zdfo3EH645AbjV2dmGq8FesciwFPxh3hrVheqKcn3XG")
	l.delegate(t, stale, localID, 1)
	l.put(stale, &Account{Lamports: 1, Owner: esplID})

	srv, _ := localRouter(t, l)
	for _, tc := range []struct {
		name string
		key  solana.PublicKey
		want string
	}{
		{"missing account", solana.MustPublicKeyFromBase58("4RvdEGaUyChj3AketeBZoY1EotNtPveMFUXL8DVetrAp"), `{"isDelegated":false}`},
		{"not delegated", plainAcct, `{"isDelegated":false}`},
		{"delegated here", eATA, `{"isDelegated":true,"fqdn":"http://127.0.0.1:7799","delegationRecord":{"authority":"mAGicPQYBMvcYveUZA5F5UNNwyHvfYh5xkLS2Fr1mev","owner":"SPLxh1LVZzEkX99H6rqYizhytLWPZVV296zyYDPagv2","delegationSlot":412,"lamports":1447680}}`},
		{"delegated to an unknown node", foreign, `{"isDelegated":true,"delegationRecord":{"authority":"MTEWGuqxUpYZGFJQcp8tLN7x5v9BSeoFHYWQQ3n3xzo","owner":"SPLxh1LVZzEkX99H6rqYizhytLWPZVV296zyYDPagv2","delegationSlot":9,"lamports":1447680}}`},
		{"owned by the delegation program without a record", noRecord, `{"isDelegated":true}`},
		{"malformed record", badRecord, `{"isDelegated":true}`},
		{"stale record", stale, `{"isDelegated":false}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := post(t, srv.URL, `{"jsonrpc":"2.0","id":7,"method":"getDelegationStatus","params":["`+tc.key.String()+`"]}`)
			if code != 200 {
				t.Errorf("HTTP %d", code)
			}
			jsonEq(t, body, `{"jsonrpc":"2.0","id":7,"result":`+tc.want+`}`)
		})
	}
}

func TestGetBlockhashForAccounts(t *testing.T) {
	l := newLedger()
	l.put(plainAcct, &Account{Lamports: 2039280, Owner: solana.TokenProgramID})
	l.delegate(t, eATA, localID, 412)
	foreign := solana.MustPublicKeyFromBase58("5e3hfoNiCaNRFQHdrqkkaxABDREexK5zavdwyf2EdkXx")
	l.delegate(t, foreign, teeID, 9)
	noRecord := solana.MustPublicKeyFromBase58("3L41SNpf6toLuaLq1hZEPtWYqF3MLAsK8v9joeyoQkLZ")
	l.put(noRecord, &Account{Lamports: 1, Owner: DelegationProgramID()})
	srv, c := localRouter(t, l)

	// Bare result shape on the wire.
	_, body := post(t, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"getBlockhashForAccounts","params":[["`+plainAcct.String()+`"]]}`)
	jsonEq(t, body, `{"jsonrpc":"2.0","id":1,"result":{"blockhash":"EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N","lastValidBlockHeight":1150}}`)

	for _, tc := range []struct {
		name string
		keys []solana.PublicKey
		want chainclient.Blockhash
	}{
		{"none delegated", []solana.PublicKey{plainAcct}, baseHash},
		{"empty list", nil, baseHash},
		{"one delegated among others", []solana.PublicKey{plainAcct, eATA, plainAcct}, erHash},
		{"same node twice", []solana.PublicKey{eATA, eATA}, erHash},
	} {
		bh, err := c.GetBlockhashForAccounts(ctx0, tc.keys)
		if err != nil || bh != tc.want {
			t.Errorf("%s: got %+v, %v; want %+v", tc.name, bh, err, tc.want)
		}
	}

	for _, tc := range []struct {
		name string
		keys []solana.PublicKey
		msg  string
	}{
		{"conflicting", []solana.PublicKey{eATA, foreign}, "transaction contains accounts that were delegated to different ER nodes"},
		{"unknown node", []solana.PublicKey{foreign, plainAcct}, "account has been delegated to unknown ER node: " + teeID.String()},
		{"no record", []solana.PublicKey{noRecord}, "account " + noRecord.String() + " is delegated but has no valid delegation record"},
	} {
		_, err := c.GetBlockhashForAccounts(ctx0, tc.keys)
		var re *chainclient.RPCError
		if !errors.As(err, &re) || re.Code != -32604 || re.Message != tc.msg {
			t.Errorf("%s: err = %v; want -32604 %q", tc.name, err, tc.msg)
		}
	}
}

func TestBackendFailure(t *testing.T) {
	l := newLedger()
	l.err = errors.New("ledger closed")
	_, c := localRouter(t, l)
	_, err := c.GetDelegationStatus(ctx0, eATA)
	var re *chainclient.RPCError
	if !errors.As(err, &re) || re.Code != -32604 || !strings.Contains(re.Message, "read delegation state of "+eATA.String()) || !strings.Contains(re.Message, "ledger closed") {
		t.Errorf("err = %v", err)
	}

	failingER := BlockhashSourceFunc(func(context.Context) (chainclient.Blockhash, error) {
		return chainclient.Blockhash{}, errors.New("ER stopped")
	})
	l2 := newLedger()
	l2.delegate(t, eATA, localID, 1)
	reg, _ := NewLocal(LocalConfig{Identity: localID, URL: "http://127.0.0.1:7799", Blockhash: failingER, Base: l2, BaseBlockhash: failingER})
	_, c2 := serve(t, reg)
	_, err = c2.GetBlockhashForAccounts(ctx0, []solana.PublicKey{eATA})
	if !errors.As(err, &re) || re.Code != -32604 || re.Message != "get blockhash of ER node "+localID.String()+": ER stopped" {
		t.Errorf("ER failure: err = %v", err)
	}
	_, err = c2.GetBlockhashForAccounts(ctx0, nil)
	if !errors.As(err, &re) || re.Message != "get base-layer blockhash: ER stopped" {
		t.Errorf("base failure: err = %v", err)
	}
}

// rpcBackend lets a test backend return its own JSON-RPC error.
type rpcBackend struct{ Backend }

func (rpcBackend) Routes(context.Context) ([]chainclient.Route, error) {
	return nil, &chainclient.RPCError{Code: -32005, Message: "Node is unhealthy"}
}

func TestBackendRPCErrorPassesThrough(t *testing.T) {
	srv, _ := serve(t, rpcBackend{})
	_, body := post(t, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"getRoutes"}`)
	jsonEq(t, body, `{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"Node is unhealthy"}}`)
}

func TestEnvelopeErrors(t *testing.T) {
	srv, _ := localRouter(t, newLedger())
	for _, tc := range []struct {
		name, body string
		code       int
		want       string
	}{
		{"parse error", `{"jsonrpc":"2.0",`, 200, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`},
		{"empty body", ``, 200, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`},
		{"not an object", `42`, 200, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request: not a JSON-RPC call object"}}`},
		{"wrong version", `{"jsonrpc":"1.0","id":3,"method":"getRoutes"}`, 200, `{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"Invalid request: jsonrpc must be \"2.0\""}}`},
		{"no method", `{"jsonrpc":"2.0","id":3}`, 200, `{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"Invalid request: method must be a string"}}`},
		{"method not a string", `{"jsonrpc":"2.0","id":3,"method":1}`, 200, `{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"Invalid request: method must be a string"}}`},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"getRoutes"}`, 200, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request: id must be a string, a number or null"}}`},
		{"scalar params", `{"jsonrpc":"2.0","id":3,"method":"getRoutes","params":5}`, 200, `{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"Invalid request: params must be an array or an object"}}`},
		{"unknown method", `{"jsonrpc":"2.0","id":3,"method":"getFoo","params":[]}`, 200, `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found"}}`},
		{"null id is answered", `{"jsonrpc":"2.0","id":null,"method":"getHealth"}`, 200, `{"jsonrpc":"2.0","id":null,"result":"ok"}`},
		{"no params", `{"jsonrpc":"2.0","id":3,"method":"getDelegationStatus"}`, 200, `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params: expected 1 params, got 0"}}`},
		{"two params", `{"jsonrpc":"2.0","id":3,"method":"getDelegationStatus","params":["a","b"]}`, 200, `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params: expected 1 params, got 2"}}`},
		{"object params", `{"jsonrpc":"2.0","id":3,"method":"getDelegationStatus","params":{"pubkey":"x"}}`, 200, `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params: params must be an array"}}`},
		{"number key", `{"jsonrpc":"2.0","id":3,"method":"getDelegationStatus","params":[123]}`, 200, `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params: pubkey must be a base58 string"}}`},
		{"bad key", `{"jsonrpc":"2.0","id":3,"method":"getDelegationStatus","params":["notakey"]}`, 200, `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params: pubkey \"notakey\" is not a public key"}}`},
		{"accounts not an array", `{"jsonrpc":"2.0","id":3,"method":"getBlockhashForAccounts","params":["` + eATA.String() + `"]}`, 200, `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params: expected [[pubkey, …]]"}}`},
		{"bad account", `{"jsonrpc":"2.0","id":3,"method":"getBlockhashForAccounts","params":[["` + eATA.String() + `","x0"]]}`, 200, `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params: account 1 \"x0\" is not a public key"}}`},
		{"empty batch", `[]`, 200, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request: empty batch"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := post(t, srv.URL, tc.body)
			if code != tc.code {
				t.Errorf("HTTP %d, want %d", code, tc.code)
			}
			jsonEq(t, body, tc.want)
		})
	}

	many := `[` + strings.Repeat(`"`+eATA.String()+`",`, MaxAccounts) + `"` + eATA.String() + `"]`
	_, body := post(t, srv.URL, `{"jsonrpc":"2.0","id":3,"method":"getBlockhashForAccounts","params":[`+many+`]}`)
	jsonEq(t, body, `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params: too many accounts: 257, at most 256"}}`)
}

func TestBatch(t *testing.T) {
	srv, _ := localRouter(t, newLedger())
	code, body := post(t, srv.URL, `[
		{"jsonrpc":"2.0","id":1,"method":"getHealth"},
		{"jsonrpc":"2.0","method":"getRoutes"},
		{"jsonrpc":"2.0","id":2,"method":"nope"},
		7,
		{"jsonrpc":"2.0","id":3,"method":"getBlockhashForAccounts","params":[[]]}
	]`)
	if code != 200 {
		t.Errorf("HTTP %d", code)
	}
	jsonEq(t, body, `[
		{"jsonrpc":"2.0","id":1,"result":"ok"},
		{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found"}},
		{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request: not a JSON-RPC call object"}},
		{"jsonrpc":"2.0","id":3,"result":{"blockhash":"EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N","lastValidBlockHeight":1150}}
	]`)

	// Only notifications: nothing to answer.
	code, body = post(t, srv.URL, `[{"jsonrpc":"2.0","method":"getRoutes"},{"jsonrpc":"2.0","method":"getHealth"}]`)
	if code != http.StatusNoContent || body != "" {
		t.Errorf("notifications: HTTP %d %q", code, body)
	}
	code, body = post(t, srv.URL, `{"jsonrpc":"2.0","method":"getRoutes"}`)
	if code != http.StatusNoContent || body != "" {
		t.Errorf("single notification: HTTP %d %q", code, body)
	}

	h := &Handler{Backend: mustLocal(t, newLedger()), MaxBatch: 2}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/", strings.NewReader(`[{"jsonrpc":"2.0","id":1,"method":"getHealth"},{"jsonrpc":"2.0","id":2,"method":"getHealth"},{"jsonrpc":"2.0","id":3,"method":"getHealth"}]`)))
	jsonEq(t, rec.Body.String(), `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request: batch of 3 calls, at most 2 allowed"}}`)
}

func mustLocal(t testing.TB, l *memLedger) *Registry {
	reg, err := NewLocal(LocalConfig{Identity: localID, URL: "http://127.0.0.1:7799", Blockhash: fixedBlockhash(erHash), Base: l, BaseBlockhash: fixedBlockhash(baseHash)})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestHTTPMethodsAndLimits(t *testing.T) {
	h := &Handler{Backend: mustLocal(t, newLedger()), MaxBodyBytes: 64}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != http.StatusMethodNotAllowed || !strings.Contains(rec.Header().Get("Allow"), "POST") {
		t.Errorf("GET: HTTP %d, Allow %q", rec.Code, rec.Header().Get("Allow"))
	}
	jsonEq(t, rec.Body.String(), `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request: the router accepts JSON-RPC over POST"}}`)

	// CORS is the listener's (httpguard.AnyOrigin in ferry serve): the
	// bare handler answers only POST.
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("OPTIONS", "/", nil))
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "POST" || rec.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("OPTIONS: HTTP %d, headers %v", rec.Code, rec.Header())
	}

	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"getRoutes","params":[`+strings.Repeat(" ", 100)+`]}`)))
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("large body: HTTP %d", rec.Code)
	}
	jsonEq(t, rec.Body.String(), `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request: body larger than 64 bytes"}}`)
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
}

// TestBoundedInput: deep JSON, long base58 text and big batches are refused
// before they are decoded, and errors never repeat more than a short
// prefix of the input.
func TestBoundedInput(t *testing.T) {
	h := &Handler{Backend: mustLocal(t, newLedger()), MaxBodyBytes: 8 << 20, MaxBatch: 4}
	long := strings.Repeat("1", 80_000)
	call := `{"jsonrpc":"2.0","id":1,"method":"getHealth"}`
	for _, tc := range []struct {
		name, body, want string
	}{
		{"4 MiB of [", strings.Repeat("[", 4<<20),
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: JSON nested deeper than 127 levels"}}`},
		{"deep params", `{"jsonrpc":"2.0","id":1,"method":"getRoutes","params":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: JSON nested deeper than 127 levels"}}`},
		{"long pubkey", `{"jsonrpc":"2.0","id":2,"method":"getDelegationStatus","params":["` + long + `"]}`,
			`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Invalid params: pubkey \"` + long[:64] + `…\" is not a public key"}}`},
		{"long account", `{"jsonrpc":"2.0","id":3,"method":"getBlockhashForAccounts","params":[["` + long + `"]]}`,
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params: account 0 \"` + long[:64] + `…\" is not a public key"}}`},
		{"batch over the limit", "[" + strings.Repeat(call+",", 4) + call + "]",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request: batch of 5 calls, at most 4 allowed"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("POST", "/", strings.NewReader(tc.body)))
			if rec.Code != http.StatusOK {
				t.Fatalf("HTTP %d", rec.Code)
			}
			jsonEq(t, rec.Body.String(), tc.want)
		})
	}
	// The depth check allocates nothing: refusing 4 MiB of '[' costs the
	// same few allocations as refusing 128 bytes of it.
	deep, shallow := []byte(strings.Repeat("[", 4<<20)), []byte(strings.Repeat("[", 128))
	// The least of three measurements: other goroutines' allocations can
	// only add to one.
	allocs := func(b []byte) float64 {
		m := testing.AllocsPerRun(100, func() { h.handleBody(context.Background(), b) })
		for i := 0; i < 2; i++ {
			m = min(m, testing.AllocsPerRun(100, func() { h.handleBody(context.Background(), b) }))
		}
		return m
	}
	if big, small := allocs(deep), allocs(shallow); big > small {
		t.Errorf("deep body: %v allocations, a short one %v", big, small)
	}
}

func TestPanickingBackend(t *testing.T) {
	srv, _ := serve(t, panicBackend{})
	_, body := post(t, srv.URL, `{"jsonrpc":"2.0","id":9,"method":"getRoutes"}`)
	jsonEq(t, body, `{"jsonrpc":"2.0","id":9,"error":{"code":-32603,"message":"Internal error"}}`)
}

type panicBackend struct{ Backend }

func (panicBackend) Routes(context.Context) ([]chainclient.Route, error) { panic("boom") }

func TestNewValidates(t *testing.T) {
	base, bh := newLedger(), fixedBlockhash(baseHash)
	node := func(id solana.PublicKey, fqdn string) Node {
		return Node{Route: chainclient.Route{Identity: id, FQDN: fqdn}, Blockhash: bh}
	}
	for name, cfg := range map[string]Config{
		"no base":        {BaseBlockhash: bh},
		"no identity":    {Base: base, BaseBlockhash: bh, Nodes: []Node{node(solana.PublicKey{}, "http://x")}},
		"duplicate":      {Base: base, BaseBlockhash: bh, Nodes: []Node{node(asID, "http://x"), node(asID, "http://y")}},
		"bad fqdn":       {Base: base, BaseBlockhash: bh, Nodes: []Node{node(asID, "ftp://x")}},
		"no blockhashes": {Base: base, BaseBlockhash: bh, Nodes: []Node{{Route: chainclient.Route{Identity: asID, FQDN: "http://x"}}}},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New succeeded", name)
		}
	}
	if _, err := NewGateway(GatewayConfig{}); err == nil {
		t.Error("NewGateway without a base client succeeded")
	}
}

func TestDelegationRecord(t *testing.T) {
	pda, err := DelegationRecordAddress(eATA)
	if err != nil || pda.String() != "Er7c8dXTeRDQGSJ7g8b3Adkbid2KM1ZtjrfRYGDYxia" {
		t.Errorf("DelegationRecordAddress = %s, %v (vector from pda-derivations.json)", pda, err)
	}
	in := chainclient.DelegationRecord{Authority: asID, Owner: esplID, DelegationSlot: 1 << 40, Lamports: 1447680}
	b := EncodeDelegationRecord(in, 30000)
	if len(b) != 96 || b[0] != 100 || !bytes.Equal(b[8:40], asID[:]) {
		t.Errorf("encoded = %x", b)
	}
	out, err := ParseDelegationRecord(b)
	if err != nil || out != in {
		t.Errorf("round trip = %+v, %v", out, err)
	}
	if _, err := ParseDelegationRecord(b[:40]); err == nil {
		t.Error("short record parsed")
	}
}

func TestRoutesLists(t *testing.T) {
	d, m := DevnetRoutes(), MainnetRoutes()
	if len(d) != 3 || d[0].FQDN != "https://devnet-as.magicblock.app" || d[0].Identity != asID || d[0].CountryCode != "SGP" || d[2].CountryCode != "USA" {
		t.Errorf("devnet routes = %+v", d)
	}
	if len(m) != 3 || m[1].FQDN != "https://eu.magicblock.app" || m[1].Identity != euID || m[1].BlockTimeMs != 50 {
		t.Errorf("mainnet routes = %+v", m)
	}
	d[0].FQDN = "changed"
	if DevnetRoutes()[0].FQDN == "changed" {
		t.Error("DevnetRoutes shares state between calls")
	}
}
