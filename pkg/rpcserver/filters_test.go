package rpcserver

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mr-tron/base58"

	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/spl"
)

func TestFilters(t *testing.T) {
	data := []byte{1, 2, 3, 4, 5}
	acct := &ledger.Account{Lamports: 1, Data: data}
	token := make([]byte, spl.TokenAccountSize)
	token[108] = 1 // initialized
	uninit := make([]byte, spl.TokenAccountSize)
	ext := make([]byte, spl.TokenAccountSize+2)
	ext[spl.TokenAccountSize] = spl.AccountTypeAccount
	for _, tc := range []struct {
		name    string
		json    string
		account *ledger.Account
		allow   bool
		err     string // decode or verify error (substring)
	}{
		{name: "data size match", json: `[{"dataSize":5}]`, account: acct, allow: true},
		{name: "data size mismatch", json: `[{"dataSize":6}]`, account: acct},
		{name: "memcmp base58 default", json: `[{"memcmp":{"offset":1,"bytes":"` + base58.Encode([]byte{2, 3}) + `"}}]`, account: acct, allow: true},
		{name: "memcmp base58 mismatch", json: `[{"memcmp":{"offset":0,"bytes":"` + base58.Encode([]byte{2}) + `"}}]`, account: acct},
		{name: "memcmp base64", json: `[{"memcmp":{"offset":3,"bytes":"BAU=","encoding":"base64"}}]`, account: acct, allow: true},
		{name: "memcmp raw bytes", json: `[{"memcmp":{"offset":4,"bytes":[5]}}]`, account: acct, allow: true},
		{name: "memcmp overrun", json: `[{"memcmp":{"offset":4,"bytes":[5,6]}}]`, account: acct},
		{name: "memcmp offset past end", json: `[{"memcmp":{"offset":6,"bytes":[]}}]`, account: acct},
		{name: "memcmp empty at end", json: `[{"memcmp":{"offset":5,"bytes":[]}}]`, account: acct, allow: true},
		{name: "both must hold", json: `[{"dataSize":5},{"memcmp":{"offset":0,"bytes":[9]}}]`, account: acct},
		{name: "token state initialized", json: `["tokenAccountState"]`, account: &ledger.Account{Data: token}, allow: true},
		{name: "token state uninitialized", json: `["tokenAccountState"]`, account: &ledger.Account{Data: uninit}},
		{name: "token state extension layout", json: `["tokenAccountState"]`, account: &ledger.Account{Data: ext}, allow: true},
		{name: "token state other size", json: `["tokenAccountState"]`, account: acct},
		{name: "too many", json: `[{"dataSize":1},{"dataSize":1},{"dataSize":1},{"dataSize":1},{"dataSize":1}]`, err: "Too many filters provided; max 4"},
		{name: "too long base58", json: `[{"memcmp":{"offset":0,"bytes":"` + strings.Repeat("1", 176) + `"}}]`, err: "Invalid param: DataTooLarge"},
		{name: "129 raw bytes", json: `[{"memcmp":{"offset":0,"bytes":[` + strings.Repeat("1,", 128) + `1]}}]`, err: "Invalid param: DataTooLarge"},
		{name: "bad base58", json: `[{"memcmp":{"offset":0,"bytes":"0OIl"}}]`, err: "Invalid param: Base58DecodeError"},
		{name: "bad base64", json: `[{"memcmp":{"offset":0,"bytes":"!!","encoding":"base64"}}]`, err: "Invalid param: Base64DecodeError"},
		{name: "unknown variant", json: `[{"size":1}]`, err: "unknown variant `size`"},
		{name: "unknown string variant", json: `["all"]`, err: "unknown variant `all`"},
		{name: "unknown encoding", json: `[{"memcmp":{"offset":0,"bytes":"1","encoding":"hex"}}]`, err: "unknown variant `hex`"},
		{name: "missing offset", json: `[{"memcmp":{"bytes":"1"}}]`, err: "missing field `offset`"},
		{name: "bytes of wrong type", json: `[{"memcmp":{"offset":0,"bytes":7}}]`, err: "untagged enum DataType"},
		{name: "two keys", json: `[{"dataSize":1,"memcmp":{"offset":0,"bytes":"1"}}]`, err: "single key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var fs []Filter
			err := json.Unmarshal([]byte(tc.json), &fs)
			if err == nil {
				err = VerifyFilters(fs)
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				var e *Error
				if errors.As(err, &e) && e.Code != CodeInvalidParams {
					t.Fatalf("code %d", e.Code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := FiltersAllow(fs, tc.account); got != tc.allow {
				t.Fatalf("allows %v, want %v", got, tc.allow)
			}
		})
	}
}
