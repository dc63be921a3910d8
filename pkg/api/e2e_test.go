package api

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/submit"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// hostedClient is how a client written for payments.magicblock.app talks
// to the API: plain JSON over HTTP, its own signing, nothing ferry-specific.
type hostedClient struct {
	t    *testing.T
	base string
	hc   *http.Client
}

func (c *hostedClient) call(method, path string, in, out any, headers ...string) int {
	c.t.Helper()
	var body io.Reader
	if in != nil {
		b, _ := json.Marshal(in)
		body = bytes.NewReader(b)
	}
	req, _ := http.NewRequestWithContext(c.t.Context(), method, c.base+path, body)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK && out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			c.t.Fatalf("%s %s: %v (%s)", method, path, err, data)
		}
	} else if resp.StatusCode != http.StatusOK {
		c.t.Logf("%s %s: %d %s", method, path, resp.StatusCode, data)
	}
	return resp.StatusCode
}

// signB64 signs a base64 wire transaction the way a wallet adapter does:
// decode, sign the message bytes with each key at its signer slot,
// re-encode.
func signB64(t *testing.T, b64 string, keys ...ed25519.PrivateKey) string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := txwire.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	msg := tx.MessageBytes()
	signers := tx.Message.Signers()
	for _, k := range keys {
		for i, s := range signers {
			if s == solana.PublicKeyFromBytes(k[32:]) {
				copy(raw[1+64*i:], ed25519.Sign(k, msg))
			}
		}
	}
	return base64.StdEncoding.EncodeToString(raw)
}

// TestHostedClientPublicTransfer drives a public base→base transfer end to
// end through the HTTP API only, over real TCP: build, sign locally, send
// with confirm, read balances.
func TestHostedClientPublicTransfer(t *testing.T) {
	h := newHarness(t)
	aliceKey, bobKey := seedKey("alice"), seedKey("bob")
	alice, bob := pubOf(aliceKey), pubOf(bobKey)
	h.fund(alice, 5_000_000)
	h.fund(bob, 1) // the recipient's ATA exists

	srv := httptest.NewServer(h.srv)
	defer srv.Close()
	c := &hostedClient{t: t, base: srv.URL, hc: srv.Client()}

	var bal payments.BalanceResponse
	if st := c.call("GET", fmt.Sprintf("/v1/spl/balance?address=%s&mint=%s", alice, h.mint), nil, &bal); st != 200 || bal.Balance != "5000000" || bal.Location != "base" {
		t.Fatalf("balance %d %+v", st, bal)
	}
	var built payments.UnsignedTransaction
	req := map[string]any{"from": alice, "to": bob, "mint": h.mint, "amount": 1_250_000,
		"visibility": "public", "fromBalance": "base", "toBalance": "base", "memo": "invoice 7"}
	if st := c.call("POST", "/v1/spl/transfer", req, &built); st != 200 {
		t.Fatal(st)
	}
	if built.SendTo != "base" || len(built.RequiredSigners) != 1 || built.RequiredSigners[0] != alice.String() || built.Fees.Tokens != "0" {
		t.Fatalf("%+v", built)
	}
	var sent submit.Response
	send := map[string]any{"transactionBase64": signB64(t, built.TransactionBase64, aliceKey), "sendTo": built.SendTo,
		"confirm": true, "recentBlockhash": built.RecentBlockhash, "lastValidBlockHeight": built.LastValidBlockHeight}
	if st := c.call("POST", "/v1/transaction/send", send, &sent); st != 200 {
		t.Fatal(st)
	}
	if !sent.Confirmed || sent.SendTo != "base" || sent.ConfirmationRPCEndpoint != testBaseURL || sent.ConfirmationRequiresAuthToken || sent.Signature == "" {
		t.Fatalf("%+v", sent)
	}
	for who, want := range map[solana.PublicKey]string{alice: "3750000", bob: "1250001"} {
		if st := c.call("GET", fmt.Sprintf("/v1/spl/balance?address=%s&mint=%s", who, h.mint), nil, &bal); st != 200 || bal.Balance != want {
			t.Fatalf("%s: %d %+v, want %s", who, st, bal, want)
		}
	}
	// The memo landed with it.
	raw, err := h.baseRPC.GetTransaction(t.Context(), solana.MustSignatureFromBase58(sent.Signature), txOpts)
	if err != nil || !strings.Contains(string(raw), "invoice 7") {
		t.Fatalf("getTransaction: %v %s", err, raw)
	}

	// Sending the same bytes again is rejected by the node, as a send
	// error: 400 with the node's error.
	if st := c.call("POST", "/v1/transaction/send", send, nil); st != 400 {
		t.Fatalf("duplicate send %d", st)
	}
}

var txOpts = chainclientTxOpts()
