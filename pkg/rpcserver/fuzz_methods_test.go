package rpcserver

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// FuzzProgramAccountsConfig feeds arbitrary configs (filters, encodings,
// slices, flags) to getProgramAccounts. No input may panic, every answer
// is a JSON-RPC envelope, and every account a successful answer lists is
// owned by the program and passes a dataSize filter it was given.
func FuzzProgramAccountsConfig(f *testing.F) {
	l := fuzzLedger(f)
	program := solana.PublicKey{0x70}
	if _, err := l.Apply(context.Background(), func(w ledger.AccountWriter) error {
		for i, d := range [][]byte{[]byte("hello world"), {1, 2, 3}, bytes.Repeat([]byte{9}, 300), make([]byte, 165)} {
			w.Set(solana.PublicKey{0x70, byte(i + 1)}, &ledger.Account{Lamports: 1_000_000, Owner: program, Data: d})
		}
		return nil
	}); err != nil {
		f.Fatal(err)
	}
	h := New(l, Options{MaxProgramAccounts: 3})
	for _, s := range []string{
		`{"encoding":"base64","filters":[{"dataSize":11},{"memcmp":{"offset":0,"bytes":"Cn8eVZg"}}]}`,
		`{"encoding":"base58","dataSlice":{"offset":1,"length":2},"filters":[{"memcmp":{"offset":2,"bytes":"AwQ=","encoding":"base64"}}]}`,
		`{"filters":["tokenAccountState",{"memcmp":{"offset":32,"bytes":[1,2,3]}}],"withContext":true,"sortResults":false}`,
		`{"encoding":"jsonParsed","commitment":"processed","minContextSlot":0}`,
		`{"filters":[{"memcmp":{"offset":18446744073709551615,"bytes":"1"}}]}`,
		`{"filters":[{"memcmp":{"offset":0,"bytes":"=","encoding":"base64"}},{"tokenAccountState":null}]}`,
		`{"filters":[{}]}`, `{"filters":[{"dataSize":1,"memcmp":{}}]}`, `{"filters":null}`, `{"filters":[[]]}`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, cfg []byte, token bool) {
		prog := program
		if token {
			prog = spl.TokenProgramID
		}
		var params []json.RawMessage
		if json.Valid(cfg) {
			params = []json.RawMessage{json.RawMessage(`"` + prog.String() + `"`), cfg}
		} else {
			params = []json.RawMessage{json.RawMessage(`"` + prog.String() + `"`)}
		}
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "getProgramAccounts", "params": params})
		out := h.HandleBody(context.Background(), body)
		checkEnvelope(t, out)
		var resp struct{ Result json.RawMessage }
		if json.Unmarshal(out, &resp) != nil || resp.Result == nil {
			return
		}
		var list []keyed
		if json.Unmarshal(resp.Result, &list) != nil {
			var wrapped struct{ Value []keyed }
			if err := json.Unmarshal(resp.Result, &wrapped); err != nil {
				t.Fatalf("result %s: %v", resp.Result, err)
			}
			list = wrapped.Value
		}
		if len(list) > 3 {
			t.Fatalf("%d accounts over MaxProgramAccounts", len(list))
		}
		var c struct {
			Filters []map[string]json.RawMessage `json:"filters"`
		}
		json.Unmarshal(cfg, &c)
		for _, k := range list {
			if k.Account.Owner != prog {
				t.Fatalf("%s owned by %s", k.Pubkey, k.Account.Owner)
			}
			for _, fl := range c.Filters {
				var size uint64
				if d, ok := fl["dataSize"]; ok && json.Unmarshal(d, &size) == nil && k.Account.Space != size {
					t.Fatalf("%s has %d bytes, filter asks %d", k.Pubkey, k.Account.Space, size)
				}
			}
		}
	})
}

// FuzzNewMethodParams sends arbitrary parameter arrays to the methods
// added for Agave parity. No input may panic and every answer is a
// JSON-RPC envelope.
func FuzzNewMethodParams(f *testing.F) {
	l := fuzzLedger(f)
	h := New(l, Options{})
	methods := []string{
		"getTokenAccountsByDelegate", "getSupply", "getLargestAccounts", "getInflationGovernor", "getInflationRate",
		"getInflationReward", "getStakeMinimumDelegation", "getRecentPrioritizationFees", "getClusterNodes",
		"getVoteAccounts", "getLeaderSchedule", "getSlotLeaders", "getBlockProduction", "getBlockCommitment",
		"getRecentPerformanceSamples", "getHighestSnapshotSlot", "getMaxRetransmitSlot", "getMaxShredInsertSlot",
	}
	key := l.Identity().String()
	for i, s := range []string{
		`["` + key + `",{"mint":"` + key + `"}]`, `[{"commitment":"confirmed","excludeNonCirculatingAccountsList":true}]`,
		`[{"filter":"circulating"}]`, `[{"commitment":"processed"}]`, `[]`, `[["` + key + `"],{"epoch":0}]`,
		`[{"minContextSlot":5}]`, `[["` + key + `"]]`, `[]`, `[{"votePubkey":"` + key + `","keepUnstakedDelinquents":true}]`,
		`[0,{"identity":"` + key + `"}]`, `[0,10]`, `[{"range":{"firstSlot":0,"lastSlot":0}}]`, `[0]`, `[5]`, `[]`, `[]`, `[]`,
	} {
		f.Add(uint8(i), []byte(s))
	}
	f.Fuzz(func(t *testing.T, m uint8, params []byte) {
		if !json.Valid(params) {
			params = []byte("[]")
		}
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": methods[int(m)%len(methods)], "params": json.RawMessage(params)})
		checkEnvelope(t, h.HandleBody(context.Background(), body))
	})
}
