package pubsub

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// TestRequestErrors checks the answers to malformed and invalid requests
// against Agave's (jsonrpc-core's) codes and messages.
func TestRequestErrors(t *testing.T) {
	e := newEnv(t, ledger.Config{}, Options{})
	c := e.dial()
	sig := solana.Signature{1}.String()
	key := solana.PublicKey{2}.String()
	for _, tc := range []struct {
		name, req, want string
	}{
		{"invalid JSON", `{"jsonrpc":"2.0","id":1,"method":`, `{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}`},
		{"not an object", `42`, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request"},"id":null}`},
		{"empty batch", `[]`, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request"},"id":null}`},
		{"no version", `{"id":3,"method":"slotSubscribe"}`, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request"},"id":3}`},
		{"bad id", `{"jsonrpc":"2.0","id":{},"method":"slotSubscribe"}`, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request"},"id":null}`},
		{"unknown method", `{"jsonrpc":"2.0","id":"x","method":"fooSubscribe","params":[]}`, `{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":"x"}`},
		{"vote subscriptions are off", `{"jsonrpc":"2.0","id":4,"method":"voteSubscribe"}`, `{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":4}`},
		{"params object", `{"jsonrpc":"2.0","id":5,"method":"accountSubscribe","params":{"a":1}}`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: invalid type: map, expected a sequence."},"id":5}`},
		{"missing params", `{"jsonrpc":"2.0","id":6,"method":"accountSubscribe"}`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: invalid length 0, expected at least one parameter."},"id":6}`},
		{"bad pubkey", `{"jsonrpc":"2.0","id":7,"method":"accountSubscribe","params":["nope"]}`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid Request: Invalid pubkey provided"},"id":7}`},
		{"bad commitment", `{"jsonrpc":"2.0","id":8,"method":"accountSubscribe","params":["` + key + `",{"commitment":"soon"}]}`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: unknown variant ` + "`soon`, expected one of `processed`, `confirmed`, `finalized`" + `."},"id":8}`},
		{"bad encoding", `{"jsonrpc":"2.0","id":9,"method":"accountSubscribe","params":["` + key + `",{"encoding":"hex"}]}`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: unknown variant ` + "`hex`, expected one of `binary`, `base58`, `base64`, `jsonParsed`, `base64+zstd`" + `."},"id":9}`},
		{"bad signature", `{"jsonrpc":"2.0","id":10,"method":"signatureSubscribe","params":["xyz"]}`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid Request: Invalid signature provided"},"id":10}`},
		{"signature not a string", `{"jsonrpc":"2.0","id":11,"method":"signatureSubscribe","params":[1]}`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: invalid type: number, expected a string."},"id":11}`},
		{"logs two mentions", `{"jsonrpc":"2.0","id":12,"method":"logsSubscribe","params":[{"mentions":["` + key + `","` + key + `"]}]}`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid Request: Only 1 address supported"},"id":12}`},
		{"logs bad mention", `{"jsonrpc":"2.0","id":13,"method":"logsSubscribe","params":[{"mentions":["x"]}]}`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid Request: Invalid mentions provided"},"id":13}`},
		{"logs unknown filter", `{"jsonrpc":"2.0","id":14,"method":"logsSubscribe","params":["some"]}`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: unknown variant ` + "`some`, expected one of `all`, `allWithVotes`, `mentions`" + `."},"id":14}`},
		{"block below confirmed", `{"jsonrpc":"2.0","id":15,"method":"blockSubscribe","params":["all",{"commitment":"processed"}]}`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Method does not support commitment below ` + "`confirmed`" + `"},"id":15}`},
		{"block bad filter", `{"jsonrpc":"2.0","id":16,"method":"blockSubscribe","params":[{"mentionsAccountOrProgram":"x"}]}`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid Request: Invalid mentions_account_or_program provided"},"id":16}`},
		{"too many filters", `{"jsonrpc":"2.0","id":17,"method":"programSubscribe","params":["` + key + `",{"filters":[{"dataSize":1},{"dataSize":1},{"dataSize":1},{"dataSize":1},{"dataSize":1}]}]}`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: Too many filters provided; max 4"},"id":17}`},
		{"memcmp too long", `{"jsonrpc":"2.0","id":18,"method":"programSubscribe","params":["` + key + `",{"filters":[{"memcmp":{"offset":0,"bytes":"` + strings.Repeat("2", 176) + `"}}]}]}`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: Invalid param: DataTooLarge"},"id":18}`},
		{"slot with params", `{"jsonrpc":"2.0","id":19,"method":"slotSubscribe","params":[1]}`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid parameters: No parameters were expected"},"id":19}`},
		{"unknown subscription", `{"jsonrpc":"2.0","id":20,"method":"accountUnsubscribe","params":[999]}`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid subscription id."},"id":20}`},
		{"unsubscribe id not a number", `{"jsonrpc":"2.0","id":21,"method":"slotUnsubscribe","params":["a"]}`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: invalid type: string, expected u64."},"id":21}`},
		{"getVersion", `{"jsonrpc":"2.0","id":22,"method":"getVersion"}`, `{"jsonrpc":"2.0","result":{"solana-core":"3.0.0","feature-set":0},"id":22}`},
		{"batch", `[{"jsonrpc":"2.0","id":23,"method":"getVersion"},{"jsonrpc":"2.0","id":24,"method":"nope"},{"jsonrpc":"2.0","method":"ping"}]`,
			`[{"jsonrpc":"2.0","result":{"solana-core":"3.0.0","feature-set":0},"id":23},{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":24}]`},
		{"signature with a bad config", `{"jsonrpc":"2.0","id":25,"method":"signatureSubscribe","params":["` + sig + `",{"commitment":1}]}`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: invalid type: number, expected a string for field ` + "`commitment`" + `."},"id":25}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.send(tc.req)
			jsonEq(t, c.readRaw(), tc.want)
		})
	}
	// A notification (no id) gets no answer, whatever it asks: the next
	// frame is the answer to the request after it.
	c.send(`{"jsonrpc":"2.0","method":"ping"}`)
	c.send(`{"jsonrpc":"2.0","method":"slotSubscribe","params":[5]}`)
	c.send(`{"jsonrpc":"2.0","id":99,"method":"getVersion"}`)
	jsonEq(t, c.readRaw(), `{"jsonrpc":"2.0","result":{"solana-core":"3.0.0","feature-set":0},"id":99}`)
	if st := e.s.Stats(); st.Subscriptions != 0 || st.Connections != 1 {
		t.Fatalf("stats after refused requests: %+v", st)
	}
}

// TestSignatureSubscribe checks each commitment level: the notification
// comes when the transaction reaches the level and not before, carries
// Agave's shape, and the subscription ends with it.
func TestSignatureSubscribe(t *testing.T) {
	for _, level := range []string{"processed", "confirmed", "finalized"} {
		t.Run(level, func(t *testing.T) {
			e := newEnv(t, ledger.Config{FinalityDepth: 1}, Options{})
			c := e.dial()
			_, sig, raw := e.transfer(1_000_000)
			id := c.subscribe("signatureSubscribe", sig.String(), map[string]any{"commitment": level})
			// Sentinels: when their notification arrives, the notifier has
			// handled the event that carries the transaction at that level.
			sentinel := map[string]uint64{}
			for _, lv := range []string{"processed", "confirmed"} {
				sentinel[lv] = c.subscribe("logsSubscribe", map[string]any{"mentions": []string{e.l.Faucet().PublicKey().String()}}, map[string]any{"commitment": lv})
			}
			waitSentinel := func(lv string) {
				t.Helper()
				m := c.note()
				if m.Params.Subscription != sentinel[lv] {
					t.Fatalf("waiting for the %s event: %s", lv, m.raw)
				}
			}
			rec := e.process(raw)
			if level != "processed" {
				// Processed but not durable: a confirmed or finalized
				// subscription must stay silent.
				waitSentinel("processed")
				c.noNotes("before the slot is confirmed")
				e.advance()
			}
			if level == "finalized" {
				waitSentinel("confirmed")
				c.noNotes("confirmed but not finalized")
				e.advance()
			}
			m := c.note()
			if m.Method != "signatureNotification" || m.Params.Subscription != id {
				t.Fatalf("notification %s", m.raw)
			}
			jsonEq(t, string(m.Params.Result), fmt.Sprintf(`{"context":{"slot":%d},"value":{"err":null}}`, rec.Slot))
			if level == "confirmed" && e.l.Slot(ledger.Confirmed) < rec.Slot {
				t.Fatal("confirmed notification before the slot is durable")
			}
			// One-shot: the subscription is gone.
			if r := c.call("signatureUnsubscribe", id); r.Error == nil || r.Error.Message != "Invalid subscription id." {
				t.Fatalf("unsubscribe after the notification: %s", r.raw)
			}
			for _, lv := range []string{"processed", "confirmed"} {
				c.call("logsUnsubscribe", sentinel[lv])
			}
			c.notes = nil
			e.advance()
			e.advance()
			c.noNotes("after the one-shot notification")
		})
	}
}

// TestSignatureSubscribeLate checks that a subscription made after the
// transaction reached the commitment fires at once, and one made after it
// landed fires when it gets there.
func TestSignatureSubscribeLate(t *testing.T) {
	e := newEnv(t, ledger.Config{FinalityDepth: 1}, Options{})
	c := e.dial()
	_, sig, raw := e.transfer(1_000_000)
	rec := e.process(raw)
	want := fmt.Sprintf(`{"context":{"slot":%d},"value":{"err":null}}`, rec.Slot)

	idp := c.subscribe("signatureSubscribe", sig.String(), map[string]any{"commitment": "processed"})
	idc := c.subscribe("signatureSubscribe", sig.String(), map[string]any{"commitment": "confirmed"})
	m := c.note()
	if m.Params.Subscription != idp {
		t.Fatalf("processed subscription after processing: %s", m.raw)
	}
	jsonEq(t, string(m.Params.Result), want)
	c.noNotes("confirmed subscription before confirmation")
	e.advance()
	m = c.note()
	if m.Params.Subscription != idc {
		t.Fatalf("confirmed notification %s", m.raw)
	}
	jsonEq(t, string(m.Params.Result), want)
	// Finalized is one slot later; a subscription now waits for it.
	idf := c.subscribe("signatureSubscribe", sig.String(), map[string]any{"commitment": "finalized"})
	c.noNotes("finalized subscription before finalization")
	e.advance()
	m = c.note()
	if m.Params.Subscription != idf {
		t.Fatalf("finalized notification %s", m.raw)
	}
	// And once finalized, the default (finalized) fires at subscription.
	id := c.subscribe("signatureSubscribe", sig.String())
	if m := c.note(); m.Params.Subscription != id {
		t.Fatalf("default subscription: %s", m.raw)
	}
}

// TestSignatureReceivedAndFailed checks enableReceivedNotification and a
// transaction that landed but failed.
func TestSignatureReceivedAndFailed(t *testing.T) {
	e := newEnv(t, ledger.Config{}, Options{})
	c := e.dial()
	// More than the faucet holds: lands, pays its fee, fails.
	sig, raw := e.signed(spl.SystemTransfer(e.l.Faucet().PublicKey(), newKey(t), 1<<62))
	id := c.subscribe("signatureSubscribe", sig.String(), map[string]any{"commitment": "confirmed", "enableReceivedNotification": true})
	rec := e.process(raw)
	if rec.Err == nil {
		t.Fatal("transfer should have failed")
	}
	m := c.note()
	jsonEq(t, string(m.Params.Result), fmt.Sprintf(`{"context":{"slot":%d},"value":"receivedSignature"}`, rec.Slot))
	if m.Params.Subscription != id {
		t.Fatalf("received for %d, want %d", m.Params.Subscription, id)
	}
	c.noNotes("received, not yet confirmed")
	e.advance()
	m = c.note()
	errJSON, _ := json.Marshal(rec.Err)
	jsonEq(t, string(m.Params.Result), fmt.Sprintf(`{"context":{"slot":%d},"value":{"err":%s}}`, rec.Slot, errJSON))
}

// TestAccountSubscribe checks account notifications at each level and in
// each encoding, and the notification of a deleted account.
func TestAccountSubscribe(t *testing.T) {
	e := newEnv(t, ledger.Config{FinalityDepth: 1}, Options{})
	c := e.dial()
	to := newKey(t)
	encs := []string{"base64", "base58", "base64+zstd", "jsonParsed", "binary"}
	ids := map[uint64]string{}
	for _, level := range []string{"processed", "confirmed", "finalized"} {
		for _, enc := range encs {
			id := c.subscribe("accountSubscribe", to.String(), map[string]any{"commitment": level, "encoding": enc})
			ids[id] = level + "/" + enc
		}
	}
	const lamports = 3_000_000
	sig, raw := e.signed(spl.SystemTransfer(e.l.Faucet().PublicKey(), to, lamports))
	_ = sig
	rec := e.process(raw)
	check := func(level string) {
		t.Helper()
		got := map[string]bool{}
		for range encs {
			m := c.note()
			slot, v := value(t, m)
			name := ids[m.Params.Subscription]
			if m.Method != "accountNotification" || !strings.HasPrefix(name, level+"/") || slot != rec.Slot {
				t.Fatalf("%s: notification %s for %q", level, m.raw, name)
			}
			enc := strings.TrimPrefix(name, level+"/")
			data := map[string]string{
				"base64": `["","base64"]`, "base58": `["","base58"]`, "binary": `""`, "jsonParsed": `["","base64"]`,
				"base64+zstd": `["` + zstdEmpty(t) + `","base64+zstd"]`,
			}[enc]
			jsonEq(t, string(v), fmt.Sprintf(`{"data":%s,"executable":false,"lamports":%d,"owner":"11111111111111111111111111111111","rentEpoch":18446744073709551615,"space":0}`, data, lamports))
			got[enc] = true
		}
		if len(got) != len(encs) {
			t.Fatalf("%s: encodings %v", level, got)
		}
	}
	check("processed")
	c.noNotes("processed only")
	e.advance()
	check("confirmed")
	c.noNotes("confirmed only")
	e.advance()
	check("finalized")

	// A deleted account is reported as the default account.
	id := c.subscribe("accountSubscribe", to.String(), map[string]any{"commitment": "confirmed", "encoding": "base64"})
	_, err := e.l.Apply(testCtx(t), func(w ledger.AccountWriter) error { w.Set(to, nil); return nil })
	if err != nil {
		t.Fatal(err)
	}
	// The processed subscriptions see the deletion first.
	for range encs {
		if m := c.note(); !strings.HasPrefix(ids[m.Params.Subscription], "processed/") {
			t.Fatalf("deletion at processed: %s", m.raw)
		}
	}
	slot := e.advance()
	for {
		m := c.note()
		if m.Params.Subscription != id {
			continue
		}
		s, v := value(t, m)
		if s != slot {
			t.Fatalf("deletion slot %d, want %d", s, slot)
		}
		jsonEq(t, string(v), `{"data":["","base64"],"executable":false,"lamports":0,"owner":"11111111111111111111111111111111","rentEpoch":0,"space":0}`)
		break
	}
}

func zstdEmpty(t *testing.T) string {
	t.Helper()
	enc := "base64+zstd"
	u, err := encodeForTest(&ledger.Account{}, enc)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestAccountJSONParsed checks jsonParsed token accounts and the base58
// fallback text for data over 128 bytes.
func TestAccountJSONParsed(t *testing.T) {
	e := newEnv(t, ledger.Config{}, Options{})
	ctx := testCtx(t)
	mint, _, err := e.l.Faucet().CreateMint(ctx, ledger.MintOptions{Decimals: 6})
	if err != nil {
		t.Fatal(err)
	}
	owner := newKey(t)
	ata := spl.AssociatedTokenAddress(owner, mint, spl.TokenProgramID)
	c := e.dial()
	idParsed := c.subscribe("accountSubscribe", ata.String(), map[string]any{"commitment": "processed", "encoding": "jsonParsed"})
	idB58 := c.subscribe("accountSubscribe", ata.String(), map[string]any{"commitment": "processed", "encoding": "base58"})
	if _, err := e.l.Faucet().MintTo(ctx, mint, owner, 2_500_000); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for seen < 2 {
		m := c.note()
		_, v := value(t, m)
		var acct struct {
			Data  json.RawMessage `json:"data"`
			Owner string          `json:"owner"`
		}
		json.Unmarshal(v, &acct)
		switch m.Params.Subscription {
		case idParsed:
			var d struct {
				Program string `json:"program"`
				Parsed  struct {
					Type string `json:"type"`
					Info struct {
						Mint        string `json:"mint"`
						Owner       string `json:"owner"`
						TokenAmount struct {
							Amount         string `json:"amount"`
							UIAmountString string `json:"uiAmountString"`
						} `json:"tokenAmount"`
					} `json:"info"`
				} `json:"parsed"`
			}
			if err := json.Unmarshal(acct.Data, &d); err != nil || d.Program != "spl-token" || d.Parsed.Type != "account" ||
				d.Parsed.Info.Mint != mint.String() || d.Parsed.Info.Owner != owner.String() || d.Parsed.Info.TokenAmount.UIAmountString != "2.5" {
				t.Fatalf("jsonParsed %s", v)
			}
		case idB58:
			jsonEq(t, string(acct.Data), `["error: data too large for bs58 encoding","base58"]`)
		default:
			t.Fatalf("notification %s", m.raw)
		}
		seen++
	}
}

// TestProgramSubscribe checks program notifications with filters.
func TestProgramSubscribe(t *testing.T) {
	e := newEnv(t, ledger.Config{}, Options{})
	ctx := testCtx(t)
	mint, _, err := e.l.Faucet().CreateMint(ctx, ledger.MintOptions{Decimals: 2})
	if err != nil {
		t.Fatal(err)
	}
	owner := newKey(t)
	other := newKey(t)
	c := e.dial()
	tokenProg := spl.TokenProgramID.String()
	// Token accounts of owner (memcmp at 32 = the owner field).
	idOwner := c.subscribe("programSubscribe", tokenProg, map[string]any{
		"commitment": "confirmed", "encoding": "base64",
		"filters": []any{map[string]any{"dataSize": 165}, map[string]any{"memcmp": map[string]any{"offset": 32, "bytes": owner.String()}}},
	})
	// Mints only (82 bytes), in raw bytes form of the filter.
	idMints := c.subscribe("programSubscribe", tokenProg, map[string]any{
		"commitment": "confirmed", "encoding": "jsonParsed", "filters": []any{map[string]any{"dataSize": 82}},
	})
	if _, err := e.l.Faucet().MintTo(ctx, mint, owner, 100); err != nil {
		t.Fatal(err)
	}
	if _, err := e.l.Faucet().MintTo(ctx, mint, other, 100); err != nil {
		t.Fatal(err)
	}
	c.noNotes("confirmed subscriptions before confirmation")
	slot := e.advance()
	ownerATA := spl.AssociatedTokenAddress(owner, mint, spl.TokenProgramID)
	got := map[uint64][]string{}
	for len(got[idOwner])+len(got[idMints]) < 2 {
		m := c.note()
		s, v := value(t, m)
		var kv struct {
			Pubkey  string `json:"pubkey"`
			Account struct {
				Data  json.RawMessage `json:"data"`
				Owner string          `json:"owner"`
				Space int             `json:"space"`
			} `json:"account"`
		}
		if err := json.Unmarshal(v, &kv); err != nil || s != slot || m.Method != "programNotification" {
			t.Fatalf("notification %s", m.raw)
		}
		got[m.Params.Subscription] = append(got[m.Params.Subscription], kv.Pubkey)
		if m.Params.Subscription == idMints && !strings.Contains(string(kv.Account.Data), `"type":"mint"`) {
			t.Fatalf("mint not parsed: %s", v)
		}
	}
	if len(got[idOwner]) != 1 || got[idOwner][0] != ownerATA.String() || len(got[idMints]) != 1 || got[idMints][0] != mint.String() {
		t.Fatalf("program notifications %v (owner ATA %s, mint %s)", got, ownerATA, mint)
	}
	c.noNotes("the other owner's account is filtered out")
}

// TestLogsSubscribe checks "all" and "mentions" at processed and
// confirmed.
func TestLogsSubscribe(t *testing.T) {
	e := newEnv(t, ledger.Config{}, Options{})
	c := e.dial()
	to, sig, raw := e.transfer(1_000_000)
	unrelated := newKey(t)
	idAll := c.subscribe("logsSubscribe", "all", map[string]any{"commitment": "processed"})
	idMention := c.subscribe("logsSubscribe", map[string]any{"mentions": []string{to.String()}}, map[string]any{"commitment": "confirmed"})
	idOther := c.subscribe("logsSubscribe", map[string]any{"mentions": []string{unrelated.String()}}, map[string]any{"commitment": "processed"})
	rec := e.process(raw)
	want := fmt.Sprintf(`{"context":{"slot":%d},"value":{"signature":"%s","err":null,"logs":["Program 11111111111111111111111111111111 invoke [1]","Program 11111111111111111111111111111111 success"]}}`, rec.Slot, sig)
	m := c.note()
	if m.Params.Subscription != idAll || m.Method != "logsNotification" {
		t.Fatalf("all: %s", m.raw)
	}
	jsonEq(t, string(m.Params.Result), want)
	c.noNotes("mentions at confirmed before confirmation")
	e.advance()
	m = c.note()
	if m.Params.Subscription != idMention {
		t.Fatalf("mentions: %s", m.raw)
	}
	jsonEq(t, string(m.Params.Result), want)
	c.noNotes("no notification for an unrelated address")
	_ = idOther
}

// TestSlotRootAndUpdates checks slotSubscribe, rootSubscribe and
// slotsUpdatesSubscribe over a few slots.
func TestSlotRootAndUpdates(t *testing.T) {
	e := newEnv(t, ledger.Config{FinalityDepth: 1}, Options{})
	c := e.dial()
	idSlot := c.subscribe("slotSubscribe")
	idRoot := c.subscribe("rootSubscribe")
	idUp := c.subscribe("slotsUpdatesSubscribe")
	_, _, raw := e.transfer(1_000_000)
	e.process(raw)
	s1 := e.advance()
	var kinds []string
	for len(kinds) < 5 { // slot, completed, frozen, createdBank, optimisticConfirmation
		m := c.note()
		switch m.Params.Subscription {
		case idSlot:
			jsonEq(t, string(m.Params.Result), fmt.Sprintf(`{"slot":%d,"parent":%d,"root":%d}`, s1+1, s1, s1-1))
			kinds = append(kinds, "slot")
		case idUp:
			var u map[string]any
			json.Unmarshal(m.Params.Result, &u)
			if u["timestamp"] == nil {
				t.Fatalf("update without timestamp: %s", m.raw)
			}
			delete(u, "timestamp")
			b, _ := json.Marshal(u)
			kinds = append(kinds, u["type"].(string))
			switch u["type"] {
			case "frozen":
				jsonEq(t, string(b), fmt.Sprintf(`{"type":"frozen","slot":%d,"stats":{"numTransactionEntries":1,"numSuccessfulTransactions":1,"numFailedTransactions":0,"maxTransactionsPerEntry":1}}`, s1))
			case "createdBank":
				jsonEq(t, string(b), fmt.Sprintf(`{"type":"createdBank","slot":%d,"parent":%d}`, s1+1, s1))
			case "completed", "optimisticConfirmation":
				jsonEq(t, string(b), fmt.Sprintf(`{"type":%q,"slot":%d}`, u["type"], s1))
			default:
				t.Fatalf("update %s", m.raw)
			}
		default:
			t.Fatalf("before the root: %s", m.raw)
		}
	}
	if strings.Join(kinds, ",") != "slot,completed,frozen,createdBank,optimisticConfirmation" {
		t.Fatalf("order %v", kinds)
	}
	c.noNotes("no root before the next slot")
	s2 := e.advance() // finalizes s1
	var sawRoot, sawRootUpdate bool
	for !sawRoot || !sawRootUpdate {
		m := c.note()
		switch m.Params.Subscription {
		case idRoot:
			jsonEq(t, string(m.Params.Result), fmt.Sprint(s1))
			sawRoot = true
		case idUp:
			if strings.Contains(string(m.Params.Result), `"root"`) {
				if !sawRoot {
					// Agave sends the root slot update before the root.
					jsonEq(t, strings.Split(string(m.Params.Result), `,"timestamp"`)[0]+"}", fmt.Sprintf(`{"type":"root","slot":%d}`, s1))
				}
				sawRootUpdate = true
			}
		}
	}
	_ = s2
}

// TestBlockSubscribe checks block notifications: all, mentions, the
// encodings, and the absence of notifications for blocks not mentioning
// the address.
func TestBlockSubscribe(t *testing.T) {
	e := newEnv(t, ledger.Config{}, Options{})
	c := e.dial()
	to, sig, raw := e.transfer(1_000_000)
	idAll := c.subscribe("blockSubscribe", "all", map[string]any{"commitment": "confirmed", "transactionDetails": "signatures", "showRewards": true})
	idMention := c.subscribe("blockSubscribe", map[string]any{"mentionsAccountOrProgram": to.String()}, map[string]any{
		"commitment": "confirmed", "encoding": "json", "maxSupportedTransactionVersion": 0,
	})
	idDefault := c.subscribe("blockSubscribe", "all", map[string]any{"commitment": "confirmed"})
	rec := e.process(raw)
	slot := e.advance()
	info, _, err := e.l.Block(slot, ledger.Confirmed)
	if err != nil || info == nil {
		t.Fatal(err)
	}
	head := fmt.Sprintf(`"blockhash":"%s","previousBlockhash":"%s","parentSlot":%d,"blockTime":%d,"blockHeight":%d`,
		info.Blockhash, info.PreviousBlockhash, info.ParentSlot, info.Time, info.Height)
	seen := map[uint64]bool{}
	for len(seen) < 3 {
		m := c.note()
		s, v := value(t, m)
		if s != slot || m.Method != "blockNotification" {
			t.Fatalf("notification %s", m.raw)
		}
		seen[m.Params.Subscription] = true
		switch m.Params.Subscription {
		case idAll:
			jsonEq(t, string(v), fmt.Sprintf(`{"slot":%d,"block":{%s,"rewards":[],"signatures":["%s"]},"err":null}`, slot, head, sig))
		case idMention:
			var u struct {
				Block struct {
					Transactions []struct {
						Transaction struct {
							Signatures []string `json:"signatures"`
						} `json:"transaction"`
						Meta    map[string]any `json:"meta"`
						Version any            `json:"version"`
					} `json:"transactions"`
				} `json:"block"`
			}
			if err := json.Unmarshal(v, &u); err != nil || len(u.Block.Transactions) != 1 ||
				u.Block.Transactions[0].Transaction.Signatures[0] != sig.String() || u.Block.Transactions[0].Version != "legacy" {
				t.Fatalf("mentions: %s", v)
			}
		case idDefault:
			// Default encoding base64, full details, no rewards.
			var u struct {
				Block map[string]json.RawMessage `json:"block"`
			}
			json.Unmarshal(v, &u)
			var txs []struct {
				Transaction [2]string `json:"transaction"`
			}
			if _, ok := u.Block["rewards"]; ok || json.Unmarshal(u.Block["transactions"], &txs) != nil || len(txs) != 1 || txs[0].Transaction[1] != "base64" {
				t.Fatalf("default block: %s", v)
			}
			if b, _ := base64.StdEncoding.DecodeString(txs[0].Transaction[0]); string(b) != string(rec.Raw) {
				t.Fatal("base64 transaction differs from the one sent")
			}
		}
	}
	// An empty block: "all" notifies, mentions does not.
	slot = e.advance()
	for range 2 {
		m := c.note()
		if m.Params.Subscription == idMention {
			t.Fatalf("mentions notified an empty block: %s", m.raw)
		}
	}
	c.noNotes("only the two all subscriptions")
}

// TestUnsubscribeAndSharing checks that identical parameters share one id
// across connections (as Agave), that unsubscribing one connection keeps
// the other's, and that any *Unsubscribe method drops any subscription.
func TestUnsubscribeAndSharing(t *testing.T) {
	e := newEnv(t, ledger.Config{}, Options{})
	a, b := e.dial(), e.dial()
	ida := a.subscribe("slotSubscribe")
	idb := b.subscribe("slotSubscribe")
	if ida != idb {
		t.Fatalf("ids %d and %d for identical parameters", ida, idb)
	}
	if again := a.subscribe("slotSubscribe"); again != ida {
		t.Fatalf("resubscribing gave %d", again)
	}
	other := a.subscribe("rootSubscribe")
	if other == ida {
		t.Fatal("different parameters share an id")
	}
	if st := e.s.Stats(); st.Subscriptions != 2 || st.Holds != 3 {
		t.Fatalf("stats %+v", st)
	}
	if r := a.call("rootUnsubscribe", ida); string(r.Result) != "true" {
		t.Fatalf("unsubscribe: %s", r.raw)
	}
	e.advance()
	if m := b.note(); m.Params.Subscription != idb || m.Method != "slotNotification" {
		t.Fatalf("b: %s", m.raw)
	}
	a.noNotes("a unsubscribed from slots")
	if r := a.call("slotUnsubscribe", ida); r.Error == nil {
		t.Fatalf("second unsubscribe: %s", r.raw)
	}
	if r := a.call("accountUnsubscribe", other); string(r.Result) != "true" {
		t.Fatalf("unsubscribe root via accountUnsubscribe: %s", r.raw)
	}
	b.ws.CloseNow()
	waitFor(t, func() bool { return e.s.Stats().Holds == 0 })
	if st := e.s.Stats(); st.Subscriptions != 0 {
		t.Fatalf("after b left: %+v", st)
	}
}

// encodeForTest renders an account's data as a notification would.
func encodeForTest(a *ledger.Account, enc string) (string, error) {
	s := &Server{}
	ui := s.encode(a, enc, func(solana.PublicKey) *ledger.Account { return nil })
	d, ok := ui.Data.([2]string)
	if !ok {
		return "", fmt.Errorf("data %v", ui.Data)
	}
	return d[0], nil
}

// TestFinalizedMatchesConfirmed: the notifier keeps only a slim copy of
// each confirmed block until it is finalized (and reads full blocks back
// from the ledger for block subscriptions); every finalized-level
// notification must still be what the confirmed-level one was.
func TestFinalizedMatchesConfirmed(t *testing.T) {
	e := newEnv(t, ledger.Config{FinalityDepth: 1}, Options{})
	c := e.dial()
	to, _, raw := e.transfer(1_000_000)
	kinds := map[uint64]string{}
	for _, level := range []string{"confirmed", "finalized"} {
		for kind, params := range map[string][]any{
			"blockSubscribe":   {"all", map[string]any{"commitment": level, "encoding": "json", "maxSupportedTransactionVersion": 0}},
			"logsSubscribe":    {map[string]any{"mentions": []string{to.String()}}, map[string]any{"commitment": level}},
			"accountSubscribe": {to.String(), map[string]any{"commitment": level, "encoding": "base64"}},
		} {
			kinds[c.subscribe(kind, params...)] = level + " " + kind
		}
	}
	e.process(raw)
	e.advance()
	e.advance()
	got := map[string]string{}
	for len(got) < 6 {
		m := c.note()
		k, ok := kinds[m.Params.Subscription]
		if !ok {
			t.Fatalf("unexpected notification %s", m.raw)
		}
		if _, dup := got[k]; dup {
			continue // a later block (empty slots notify blocks too)
		}
		got[k] = string(m.Params.Result)
	}
	for _, kind := range []string{"blockSubscribe", "logsSubscribe", "accountSubscribe"} {
		jsonEq(t, got["finalized "+kind], got["confirmed "+kind])
	}
}

// TestFinalizedReadsTransactionsBack: between confirmation and
// finalization the notifier keeps a block's header and final account
// values but none of its transactions; signature and logs subscriptions
// made at finalized level in that window are still notified, from the
// records read back out of the ledger, exactly as the confirmed-level
// ones were.
func TestFinalizedReadsTransactionsBack(t *testing.T) {
	e := newEnv(t, ledger.Config{FinalityDepth: 1}, Options{})
	c := e.dial()
	// More than the faucet holds: the transaction lands with an error and
	// its logs, so the read-back carries both.
	sig, raw := e.signed(spl.SystemTransfer(e.l.Faucet().PublicKey(), newKey(t), 1<<62))
	confirmedLogs := c.subscribe("logsSubscribe", "all", map[string]any{"commitment": "confirmed"})
	rec := e.process(raw)
	if rec.Err == nil {
		t.Fatal("transfer should have failed")
	}
	e.advance()
	m := c.note()
	if m.Params.Subscription != confirmedLogs {
		t.Fatalf("confirmed logs notification %s", m.raw)
	}
	wantLogs := string(m.Params.Result)
	c.sync()
	e.s.mu.Lock()
	var kept *pendingBlock
	for i := range e.s.retained {
		if e.s.retained[i].block.Slot == rec.Slot {
			kept = &e.s.retained[i]
		}
	}
	if kept == nil || kept.txs != 1 || kept.block.Transactions != nil || kept.block.Applied != nil {
		e.s.mu.Unlock()
		t.Fatalf("confirmed, not finalized: kept %+v, want the slot's header with 1 transaction counted and none held", kept)
	}
	e.s.mu.Unlock()

	sigSub := c.subscribe("signatureSubscribe", sig.String(), map[string]any{"commitment": "finalized"})
	logsSub := c.subscribe("logsSubscribe", "all", map[string]any{"commitment": "finalized"})
	c.noNotes("confirmed, not finalized")
	e.advance()
	got := map[uint64]string{}
	for len(got) < 2 {
		m := c.note()
		if m.Params.Subscription == confirmedLogs {
			continue
		}
		got[m.Params.Subscription] = string(m.Params.Result)
	}
	errJSON, _ := json.Marshal(rec.Err)
	jsonEq(t, got[sigSub], fmt.Sprintf(`{"context":{"slot":%d},"value":{"err":%s}}`, rec.Slot, errJSON))
	jsonEq(t, got[logsSub], wantLogs)
}
