package server

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/gagliardetto/solana-go"
	"github.com/mr-tron/base58"

	"github.com/ferry-sh/ferry/pkg/auth"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/keyfile"
	"github.com/ferry-sh/ferry/pkg/rpcserver"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// login runs the API's challenge/login flow for key.
func login(t *testing.T, apiURL string, key ed25519.PrivateKey) string {
	t.Helper()
	pk := solana.PublicKeyFromBytes(key[32:]).String()
	var ch struct{ Challenge string }
	if st := getJSON(t, apiURL+"/v1/spl/challenge?pubkey="+pk, &ch); st != 200 {
		t.Fatalf("challenge %d", st)
	}
	body, _ := json.Marshal(map[string]string{"pubkey": pk, "challenge": ch.Challenge,
		"signature": base58.Encode(ed25519.Sign(key, []byte(ch.Challenge)))})
	var lr struct{ Token string }
	if st := postJSON(t, apiURL+"/v1/spl/login", string(body), &lr); st != 200 {
		t.Fatalf("login %d", st)
	}
	return lr.Token
}

// privateServed is a running ferry serve in which alice (the first demo
// wallet) deposited 5000 of the demo mint, private on the rollup, and
// alice and bob (the second) logged in.
type privateServed struct {
	r                *running
	alice            solana.PublicKey
	mint             string
	aliceTok, bobTok string // the API's "<pubkey>.<token>"
}

// privateBalance asks the API for alice's private balance with tok.
func (p *privateServed) privateBalance(t *testing.T, tok string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, p.r.info.URLs[KeyAPI]+"/v1/spl/private-balance?address="+p.alice.String()+"&mint="+p.mint, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// rollupToken is the part of an API login token the rollup takes as
// ?token= (as for a TEE).
func rollupToken(tok string) string {
	_, inner, _ := strings.Cut(tok, ".")
	return inner
}

func startPrivate(t *testing.T, o Options) *privateServed {
	t.Helper()
	r := start(t, o)
	apiURL := r.info.URLs[KeyAPI]
	aliceKey, err := keyfile.Read(r.info.Demo.Wallets[0].Keypair)
	if err != nil {
		t.Fatal(err)
	}
	bobKey, err := keyfile.Read(r.info.Demo.Wallets[1].Keypair)
	if err != nil {
		t.Fatal(err)
	}
	p := &privateServed{r: r, alice: solana.PublicKeyFromBytes(aliceKey[32:]), mint: r.info.Demo.Mint}

	// Alice deposits through the API.
	var dep struct {
		TransactionBase64, SendTo, RecentBlockhash string
		LastValidBlockHeight                       uint64
	}
	if st := postJSON(t, apiURL+"/v1/spl/deposit", `{"owner":"`+p.alice.String()+`","amount":5000}`, &dep); st != 200 {
		t.Fatalf("deposit %d", st)
	}
	tx, err := txwire.DecodeBase64(dep.TransactionBase64)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Sign(aliceKey); err != nil {
		t.Fatal(err)
	}
	send, _ := json.Marshal(map[string]any{"transactionBase64": tx.Base64(), "sendTo": dep.SendTo, "confirm": true,
		"recentBlockhash": dep.RecentBlockhash, "lastValidBlockHeight": dep.LastValidBlockHeight})
	var sent map[string]any
	if st := postJSON(t, apiURL+"/v1/transaction/send", string(send), &sent); st != 200 || sent["confirmed"] != true {
		t.Fatalf("send %d %v", st, sent)
	}

	p.aliceTok, p.bobTok = login(t, apiURL, aliceKey), login(t, apiURL, bobKey)
	waitFor(t, "alice's deposit on the rollup", func() bool {
		st, out := p.privateBalance(t, p.aliceTok)
		return st == 200 && out["balance"] == "5000"
	})
	return p
}

// TestPrivateReadsServed: in ferry serve, the rollup's private balances
// are readable by their owner (through the API with a login token, or on
// the rollup's RPC with ?token=) and by nobody else.
func TestPrivateReadsServed(t *testing.T) {
	p := startPrivate(t, fast(t.TempDir(), ""))
	erURL, alice, mint, aliceTok, bobTok := p.r.info.URLs[KeyEphemeral], p.alice, p.mint, p.aliceTok, p.bobTok
	if st, out := p.privateBalance(t, bobTok); st != 403 {
		t.Fatalf("bob reads alice's private balance: %d %v", st, out)
	}

	// On the rollup's own RPC: only with alice's token.
	ata := spl.AssociatedTokenAddress(alice, solana.MustPublicKeyFromBase58(mint), spl.TokenProgramID)
	read := func(tok string) error {
		c, err := chainclient.New(erURL)
		if err != nil {
			t.Fatal(err)
		}
		if tok != "" {
			c = c.WithToken(rollupToken(tok))
		}
		_, err = c.GetTokenAccountBalance(context.Background(), ata, chainclient.Confirmed)
		return err
	}
	if err := read(aliceTok); err != nil {
		t.Fatalf("alice reads her rollup ATA: %v", err)
	}
	// The login response's own "<wallet>.<token>" form works as it is; a
	// wallet prefix that is not the token's subject does not.
	c, err := chainclient.New(erURL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WithToken(aliceTok).GetTokenAccountBalance(context.Background(), ata, chainclient.Confirmed); err != nil {
		t.Fatalf("alice reads her rollup ATA with the login response's token: %v", err)
	}
	bobWallet, _ := auth.SplitToken(bobTok)
	_, err = c.WithToken(bobWallet+"."+rollupToken(aliceTok)).GetTokenAccountBalance(context.Background(), ata, chainclient.Confirmed)
	if !chainclient.IsAccessDenied(err) {
		t.Fatalf("alice's token under bob's name: %v", err)
	}
	for name, tok := range map[string]string{"no token": "", "bob's token": bobTok, "garbage": "x.y"} {
		var re *chainclient.RPCError
		if err := read(tok); !errors.As(err, &re) || re.Code != rpcserver.CodeAccountAccessDenied {
			t.Fatalf("%s reads alice's rollup ATA: %v", name, err)
		}
	}
}

// wsCall opens a websocket to wsURL with ?token=token (none when empty),
// sends one request and returns its response's error code (0: a result).
func wsCall(t *testing.T, wsURL, token, method string, params ...any) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if token != "" {
		wsURL += "?token=" + url.QueryEscape(token)
	}
	ws, _, err := websocket.Dial(ctx, wsURL, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", wsURL, err)
	}
	defer ws.CloseNow()
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err := ws.Write(ctx, websocket.MessageText, req); err != nil {
		t.Fatal(err)
	}
	_, b, err := ws.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &resp); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	ws.Close(websocket.StatusNormalClosure, "")
	if resp.Error != nil {
		return resp.Error.Code, string(b)
	}
	return 0, string(b)
}

// TestPrivatePubSubServed: every websocket endpoint of the rollup in
// ferry serve (its own listener, the upgrade on its RPC port, and the
// router's port when shared) takes the caller from the upgrade's ?token=
// (the rollup token the API's login issued) and refuses a subscription
// to alice's private accounts to anyone else; the base node's PubSub
// hides nothing, as its JSON-RPC.
func TestPrivatePubSubServed(t *testing.T) {
	asWS := func(u string) string { return "ws" + strings.TrimPrefix(u, "http") }
	shared := fast(t.TempDir(), "")
	port := freePortPair(t)
	shared.EphemeralAddr = fmt.Sprintf("127.0.0.1:%d", port)
	shared.RouterAddr = fmt.Sprintf("127.0.0.1:%d", port+1)
	for _, tc := range []struct {
		name      string
		o         Options
		endpoints func(info *Info) map[string]string
	}{
		{"own listener", fast(t.TempDir(), ""), func(info *Info) map[string]string {
			return map[string]string{"own listener": info.URLs[KeyEphemeralWS], "RPC port": asWS(info.URLs[KeyEphemeral])}
		}},
		{"router's port", shared, func(info *Info) map[string]string {
			if info.URLs[KeyEphemeralWS] != asWS(info.URLs[KeyRouter]) {
				t.Fatalf("ephemeral websocket %s, router %s: not shared", info.URLs[KeyEphemeralWS], info.URLs[KeyRouter])
			}
			return map[string]string{"router's port": info.URLs[KeyEphemeralWS]}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startPrivate(t, tc.o)
			mint := solana.MustPublicKeyFromBase58(p.mint)
			ata := spl.AssociatedTokenAddress(p.alice, mint, spl.TokenProgramID)
			eata, _ := espl.FindEphemeralATA(p.alice, mint)
			cfg := map[string]any{"commitment": "confirmed", "encoding": "base64"}
			for where, u := range tc.endpoints(p.r.info) {
				for _, k := range []solana.PublicKey{ata, eata} {
					for who, tok := range map[string]string{"no token": "", "bob's token": rollupToken(p.bobTok), "garbage": "x"} {
						if code, resp := wsCall(t, u, tok, "accountSubscribe", k.String(), cfg); code != rpcserver.CodeAccountAccessDenied {
							t.Fatalf("%s, %s: accountSubscribe %s: %s", where, who, k, resp)
						}
					}
					if code, resp := wsCall(t, u, rollupToken(p.aliceTok), "accountSubscribe", k.String(), cfg); code != 0 {
						t.Fatalf("%s, alice: accountSubscribe %s: %s", where, k, resp)
					}
				}
			}
			// On base the eATA is a public (delegated) account.
			for where, u := range map[string]string{"base listener": p.r.info.URLs[KeyRPCWS], "base RPC port": asWS(p.r.info.URLs[KeyRPC])} {
				if code, resp := wsCall(t, u, "", "accountSubscribe", eata.String(), cfg); code != 0 {
					t.Fatalf("%s: accountSubscribe of the eATA without a token: %s", where, resp)
				}
			}
		})
	}
}
