package devchain_test

import (
	"encoding/json"
	"testing"

	"github.com/ferry-sh/ferry/pkg/devchain"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/rpcserver"
)

// FuzzParseSnapshot: any input either parses into a snapshot that
// survives a round trip, or is an error; never a panic.
func FuzzParseSnapshot(f *testing.F) {
	k := "So11111111111111111111111111111111111111112"
	for _, s := range []string{
		`{"` + k + `":{"lamports":5,"owner":"11111111111111111111111111111111","executable":false,"rentEpoch":18446744073709552000,"data":"AQI=","parsedData":null}}`,
		`{"context":{"slot":1},"value":{}}`,
		`{"pubkey":"` + k + `","account":{"lamports":5,"data":["AQI=","base64"],"owner":"x","executable":false,"rentEpoch":0}}`,
		`[{"pubkey":"a","account":{"data":["5T","base58"]}}]`,
		`{"a":null}`, `[]`, `{}`, `"x"`, `{"value":{"value":{"value":1}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := devchain.ParseSnapshot(b)
		if err != nil {
			return
		}
		out, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("marshal %v: %v", s, err)
		}
		again, err := devchain.ParseSnapshot(out)
		if err != nil && len(s) > 0 {
			t.Fatalf("%s does not parse again: %v", out, err)
		}
		if err == nil && len(again) != len(s) {
			t.Fatalf("round trip changed %d entries into %d", len(s), len(again))
		}
	})
}

// FuzzCheatcodeParams: any parameters to any state cheatcode get a result
// or a JSON-RPC error with a parameter or ledger code, never a panic or
// another code.
func FuzzCheatcodeParams(f *testing.F) {
	l, err := ledger.Open(ledger.Config{Name: "fuzz", ManualSlots: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { l.Close() })
	h := rpcserver.New(l, rpcserver.Options{})
	dev, err := devchain.New(devchain.Config{Ledger: l, Encode: h.AccountEncoder()})
	if err != nil {
		f.Fatal(err)
	}
	h.EnableDevMethods(dev.Methods())
	var names []string
	for _, m := range dev.Methods() {
		if m.Names[0] != devchain.MethodHaltLedger { // halting would end the exploration
			names = append(names, m.Names[0])
		}
	}
	k := "So11111111111111111111111111111111111111112"
	for i, p := range []string{
		`["` + k + `",{"lamports":1,"data":"00"}]`,
		`["` + k + `","` + k + `",{"amount":5,"delegate":"null"}]`,
		`["` + k + `",{"decimals":3}]`,
		`["` + k + `",{"includeOwnedAccounts":true}]`,
		`["AQAB",null,{"depth":"transaction"}]`,
		`["00000000-0000-4000-8000-000000000000"]`,
		`["tag"]`,
		`[{"filter":{"includeAccounts":["` + k + `"]},"scope":"network"}]`,
		`[{"` + k + `":{"lamports":1,"owner":"11111111111111111111111111111111","data":""}}]`,
		`[{"absoluteSlot":5000}]`,
		`[{"seconds":60}]`,
		`["transaction"]`,
		`[3]`,
	} {
		f.Add(uint8(i), []byte(p))
	}
	f.Fuzz(func(t *testing.T, which uint8, params []byte) {
		method := names[int(which)%len(names)]
		raw, _ := json.Marshal(json.RawMessage(params))
		if !json.Valid(params) {
			raw, _ = json.Marshal(string(params))
		}
		body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + string(raw) + `}`
		var resp struct {
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		out := h.HandleBody(t.Context(), []byte(body))
		if err := json.Unmarshal(out, &resp); err != nil {
			t.Fatalf("%s %s: answer %s is not JSON-RPC", method, params, out)
		}
		if resp.Error != nil {
			switch resp.Error.Code {
			case devchain.CodeInvalidParams, devchain.CodeInternalError, rpcserver.CodeInvalidRequest, rpcserver.CodeParseError:
			default:
				t.Fatalf("%s %s: code %d (%s)", method, params, resp.Error.Code, out)
			}
		}
	})
}
