package api

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/ferry-sh/ferry/pkg/payments"
)

func stdEncode(t testing.TB, v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

func TestAppendUnsignedTransaction(t *testing.T) {
	cases := []*payments.UnsignedTransaction{
		{},
		{Kind: "transfer", Version: "legacy", TransactionBase64: "AQAB+/==", SendTo: "ephemeral", SendRPCEndpoint: "http://er/x?a=<b>&c",
			From: "ephemeral", RecentBlockhash: "9A4V", LastValidBlockHeight: 1 << 60, InstructionCount: 3,
			RequiredSigners: []string{"a", "b"}, Validator: "MAS1", Fees: &payments.Fees{Lamports: "2039280", Tokens: "0"}},
		{Kind: "k\"\\\b\f\n\r\t\x00\x1f\x7f", Version: "é\u2028\u2029\xff\xfe", RequiredSigners: []string{}},
	}
	for _, c := range cases {
		if got, want := string(appendUnsignedTransaction(nil, c)), stdEncode(t, c); got != want {
			t.Errorf("\n got %s\nwant %s", got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "\"\\/", "\x00\x01\x1f\x7f", "é😀", "\u2028\u2029", "\xff\xc3", "<>&"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tx := &payments.UnsignedTransaction{Kind: s, RequiredSigners: []string{s}, Fees: &payments.Fees{Tokens: s}}
		if got, want := string(appendUnsignedTransaction(nil, tx)), stdEncode(t, tx); got != want {
			t.Fatalf("%q:\n got %s\nwant %s", s, got, want)
		}
	})
}
