package server

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/mr-tron/base58"

	"github.com/ferry-sh/ferry/pkg/chainclient"
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

// TestPrivateReadsServed: in ferry serve, the rollup's private balances
// are readable by their owner (through the API with a login token, or on
// the rollup's RPC with ?token=) and by nobody else.
func TestPrivateReadsServed(t *testing.T) {
	r := start(t, fast(t.TempDir(), ""))
	apiURL, erURL := r.info.URLs[KeyAPI], r.info.URLs[KeyEphemeral]
	aliceKey, err := keyfile.Read(r.info.Demo.Wallets[0].Keypair)
	if err != nil {
		t.Fatal(err)
	}
	bobKey, err := keyfile.Read(r.info.Demo.Wallets[1].Keypair)
	if err != nil {
		t.Fatal(err)
	}
	alice := solana.PublicKeyFromBytes(aliceKey[32:])
	mint := r.info.Demo.Mint

	// Alice deposits through the API.
	var dep struct {
		TransactionBase64, SendTo, RecentBlockhash string
		LastValidBlockHeight                       uint64
	}
	if st := postJSON(t, apiURL+"/v1/spl/deposit", `{"owner":"`+alice.String()+`","amount":5000}`, &dep); st != 200 {
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

	aliceTok, bobTok := login(t, apiURL, aliceKey), login(t, apiURL, bobKey)
	privateBalance := func(tok string) (int, map[string]any) {
		req, _ := http.NewRequest(http.MethodGet, apiURL+"/v1/spl/private-balance?address="+alice.String()+"&mint="+mint, nil)
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
	waitFor(t, "alice's deposit on the rollup", func() bool {
		st, out := privateBalance(aliceTok)
		return st == 200 && out["balance"] == "5000"
	})
	if st, out := privateBalance(bobTok); st != 403 {
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
			_, inner, _ := strings.Cut(tok, ".")
			c = c.WithToken(inner)
		}
		_, err = c.GetTokenAccountBalance(context.Background(), ata, chainclient.Confirmed)
		return err
	}
	if err := read(aliceTok); err != nil {
		t.Fatalf("alice reads her rollup ATA: %v", err)
	}
	for name, tok := range map[string]string{"no token": "", "bob's token": bobTok, "garbage": "x.y"} {
		var re *chainclient.RPCError
		if err := read(tok); !errors.As(err, &re) || re.Code != rpcserver.CodeAccountAccessDenied {
			t.Fatalf("%s reads alice's rollup ATA: %v", name, err)
		}
	}
}
