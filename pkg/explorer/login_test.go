package explorer_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/mr-tron/base58"

	"github.com/ferry-sh/ferry/pkg/keyfile"
)

// loginToken logs the wallet of keypair file path in through the payments
// API, as a wallet would (challenge, ed25519 signature, login), and returns
// the "<wallet>.<token>" the page is given.
func loginToken(t *testing.T, api, path string) string {
	t.Helper()
	key, err := keyfile.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	pub := solana.PublicKeyFromBytes(key.Public().(ed25519.PublicKey)).String()
	resp, err := http.Get(api + "/v1/spl/challenge?pubkey=" + url.QueryEscape(pub))
	if err != nil {
		t.Fatal(err)
	}
	var ch struct{ Challenge string }
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err := json.Unmarshal(b, &ch); err != nil || ch.Challenge == "" {
		t.Fatalf("challenge: %s %v", b, err)
	}
	body, _ := json.Marshal(map[string]string{"pubkey": pub, "challenge": ch.Challenge, "signature": base58.Encode(ed25519.Sign(key, []byte(ch.Challenge)))})
	resp, err = http.Post(api+"/v1/spl/login", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var lr struct{ Token string }
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err := json.Unmarshal(b, &lr); err != nil || lr.Token == "" {
		t.Fatalf("login: %s %v", b, err)
	}
	return lr.Token
}

// privateBalance is the owner's rollup balance of mint in base units, as
// the payments API tells the owner (token from loginToken); "" until the
// API answers 200.
func privateBalance(t *testing.T, api, owner, mint, token string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, api+"/v1/spl/private-balance?address="+url.QueryEscape(owner)+"&mint="+url.QueryEscape(mint), nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Balance string }
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&out) != nil {
		return ""
	}
	return out.Balance
}
