package server

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/ferry-sh/ferry/pkg/keyfile"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// TestSendWaitForOutcome: the payments API's send, with the opt-in
// waitForOutcome, answers how the operation ended: a deposit settled on
// the rollup, a withdrawal that the rollup balance does not cover failed.
// Without it the answer has no outcome (the hosted contract).
func TestSendWaitForOutcome(t *testing.T) {
	o := fast("", "")
	serveOnce(t, o, func(info *Info) {
		api := info.URLs[KeyAPI]
		w := info.Demo.Wallets[0]
		key, err := keyfile.Read(w.Keypair)
		if err != nil {
			t.Fatal(err)
		}
		send := func(path, body string, extra string) map[string]any {
			t.Helper()
			var build map[string]any
			if st := postJSON(t, api+path, body, &build); st != 200 {
				t.Fatalf("%s: %d %v", path, st, build)
			}
			tx, err := txwire.DecodeBase64(build["transactionBase64"].(string))
			if err != nil {
				t.Fatal(err)
			}
			if err := tx.Sign(key); err != nil {
				t.Fatal(err)
			}
			req := fmt.Sprintf(`{"transactionBase64":%q,"sendTo":%q,"confirm":true,"recentBlockhash":%q,"lastValidBlockHeight":%v%s}`,
				tx.Base64(), build["sendTo"], build["recentBlockhash"], build["lastValidBlockHeight"], extra)
			var out map[string]any
			if st := postJSON(t, api+"/v1/transaction/send", req, &out); st != 200 {
				t.Fatalf("send: %d %v", st, out)
			}
			return out
		}
		out := send("/v1/spl/deposit", `{"owner":"`+w.Address+`","amount":3000000}`, "")
		if _, ok := out["outcome"]; ok || out["confirmed"] != true {
			t.Fatalf("plain send: %v", out)
		}
		out = send("/v1/spl/deposit", `{"owner":"`+w.Address+`","amount":2000000}`, `,"waitForOutcome":true`)
		oc, _ := out["outcome"].(map[string]any)
		if oc["kind"] != "deposit" || oc["status"] != "settled" {
			t.Fatalf("deposit outcome: %v", out)
		}

		out = send("/v1/spl/withdraw", `{"owner":"`+w.Address+`","mint":"`+info.Demo.Mint+`","amount":900000000}`, `,"waitForOutcome":true`)
		oc, _ = out["outcome"].(map[string]any)
		if oc["kind"] != "withdraw" || oc["status"] != "failed" {
			b, _ := json.Marshal(out)
			t.Fatalf("uncovered withdrawal: %s", b)
		}

		var verr map[string]any
		if st := postJSON(t, api+"/v1/transaction/send", `{"transactionBase64":"AQ==","sendTo":"base","waitForOutcome":true}`, &verr); st != 422 {
			t.Fatalf("waitForOutcome without confirm: %d %v", st, verr)
		}
	})
}
