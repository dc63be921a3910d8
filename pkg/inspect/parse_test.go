package inspect

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mr-tron/base58"

	"github.com/ferry-sh/ferry/pkg/txwire"
)

func TestParseTransactionFormats(t *testing.T) {
	tx, err := txwire.DecodeBase64(goldenPublicTransfer)
	if err != nil {
		t.Fatal(err)
	}
	raw := tx.Bytes()
	js, _ := json.Marshal(map[string]any{"kind": "transfer", "transactionBase64": goldenPublicTransfer})
	for name, in := range map[string]string{
		"base64":        goldenPublicTransfer,
		"base64 spaced": "\n  " + goldenPublicTransfer + "\n",
		"base58":        base58.Encode(raw),
		"build JSON":    string(js),
	} {
		got, err := ParseTransaction(in)
		if err != nil || string(got.Bytes()) != string(raw) {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, tc := range []struct {
		in   string
		want error
		text string
	}{
		{"!!!", ErrNotATransaction, ""},
		{"", ErrNotATransaction, ""},
		{`{"kind":"transfer"}`, ErrNoTransactionField, ""},
		{"AQID", nil, "decode transaction"},
	} {
		_, err := ParseTransaction(tc.in)
		if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("%q: err = %v", tc.in, err)
		}
	}
}

// TestParseTransactionBase58ThatIsBase64: base58 text only uses base64
// characters, so about one base58 transaction in four also decodes as
// base64 (into bytes that are not a transaction). It must still parse.
func TestParseTransactionBase58ThatIsBase64(t *testing.T) {
	tx, err := txwire.DecodeBase64(goldenPublicTransfer)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for i := 0; i < 64 && found < 4; i++ {
		tx.Message.RecentBlockhash[0] = byte(i) // vary the encoding
		b58 := base58.Encode(tx.Bytes())
		if _, err := base64.StdEncoding.DecodeString(b58); err != nil {
			continue
		}
		found++
		got, err := ParseTransaction(b58)
		if err != nil || string(got.Bytes()) != string(tx.Bytes()) {
			t.Errorf("base58 %s…: %v", b58[:16], err)
		}
	}
	if found == 0 {
		t.Fatal("no base58 encoding was valid base64; the test checks nothing")
	}
}

// TestParseTransactionLongText: text longer than any transaction's base58
// form is refused without running the (quadratic) base58 decoder on it:
// 100 001 base58 characters (not base64: the length is not a multiple of
// four) are "not a transaction", where decoding them would have produced a
// transaction decode error.
func TestParseTransactionLongText(t *testing.T) {
	_, err := ParseTransaction(strings.Repeat("z", 100_001))
	if !errors.Is(err, ErrNotATransaction) {
		t.Fatalf("100 KB of base58: %v, want ErrNotATransaction", err)
	}
	// At the limit the decoder still runs (and finds no transaction).
	_, err = ParseTransaction(strings.Repeat("z", 1683))
	if err == nil || errors.Is(err, ErrNotATransaction) {
		t.Fatalf("1683 base58 characters: %v, want a decode error", err)
	}
}
