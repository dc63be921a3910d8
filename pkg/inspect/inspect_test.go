package inspect

import (
	"crypto/ed25519"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// goldenPublicTransfer is the "public-base-to-base-ata-memo" vector from
// pkg/txwire/testdata: CreateIdempotent, Transfer 1 500 000, Memo "invoice 42".
const goldenPublicTransfer = "AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAABAAUICGe1SE2nhNzZWZVUcIXOH72bgEJWVlzgy7LL5AG6s59VqMwTdXxQyxZR7YyKtrvRXQjjX+YYqUT91QI6YDj8NukCd5PmC4AFgASM55aQUVaasEIJXuGbSTXw8C8S4fvaAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAACMlyWPTiSJ8bs9ECkUjg2DC1oTmdr/EIQEjnvY2+n4Wcb6evO+2606PWXzaqvJdDGxu+TC0vbg5HymAgNFL11hBUpTWpkpIQZNJOhxYNo4fHw1td28kruB5B+oQEEFRI0G3fbh12Whk9nL4UbO63msHLSF7V9bN5E6jPWFfv8AqSB8mF504IUAqFum95vxrIYIFbCrNSaIS3PvWhEhWyjvAwQGAAIABQMHAQEHAwIBAAkDYOMWAAAAAAAGAAppbnZvaWNlIDQy"

func TestDescribeGolden(t *testing.T) {
	tx, err := txwire.DecodeBase64(goldenPublicTransfer)
	if err != nil {
		t.Fatal(err)
	}
	d := New().Describe(tx)
	if d.Version != "legacy" || d.Size != 396 || d.FeePayer != "Zoyw3Re2L3uBquhivujoKgD5CKwXHubhLm1EsfcwjFk" || len(d.Warnings) != 0 {
		t.Fatalf("%+v", d)
	}
	if len(d.Signatures) != 1 || d.Signatures[0].Signed {
		t.Fatalf("signatures %+v", d.Signatures)
	}
	want := []struct{ program, name, params, roles string }{
		{"Associated Token Account program", "CreateIdempotent", "", "payer,associated token account,wallet,mint,system program,token program"},
		{"SPL Token program", "Transfer", "amount=1500000", "source,destination,authority"},
		{"Memo program", "Memo", "text=invoice 42", ""},
	}
	if len(d.Instructions) != len(want) {
		t.Fatalf("%d instructions", len(d.Instructions))
	}
	for i, w := range want {
		ins := d.Instructions[i]
		var params, roles []string
		for _, p := range ins.Params {
			params = append(params, p.Name+"="+p.Value)
		}
		for _, a := range ins.Accounts {
			roles = append(roles, a.Role)
		}
		if ins.Program != w.program || ins.Name != w.name || strings.Join(params, ",") != w.params || strings.Join(roles, ",") != w.roles {
			t.Errorf("instruction %d = %s %s %v %v", i, ins.Program, ins.Name, params, roles)
		}
	}
	// The transfer's authority is the fee payer, a writable signer.
	auth := d.Instructions[1].Accounts[2]
	if auth.Pubkey != d.FeePayer || !auth.Signer || !auth.Writable {
		t.Fatalf("authority %+v", auth)
	}
}

func TestDescribeSignedAndWarnings(t *testing.T) {
	payer := solana.NewWallet()
	m, err := txwire.Compile(payer.PublicKey(), []txwire.Instruction{
		spl.SystemTransfer(payer.PublicKey(), solana.NewWallet().PublicKey(), 42),
		{ProgramID: solana.NewWallet().PublicKey(), Data: []byte{1, 2}},
		{ProgramID: spl.TokenProgramID, Data: []byte{3, 1}},
	}, solana.Hash{1})
	if err != nil {
		t.Fatal(err)
	}
	tx := txwire.NewUnsigned(m)
	if err := tx.Sign(ed25519.PrivateKey(payer.PrivateKey)); err != nil {
		t.Fatal(err)
	}
	d := New().Describe(tx)
	if !d.Signatures[0].Signed || d.Signatures[0].Signature != tx.ID().String() {
		t.Fatalf("%+v", d.Signatures)
	}
	if d.Instructions[0].Name != "Transfer" || d.Instructions[0].Params[0].Value != "42" {
		t.Fatalf("%+v", d.Instructions[0])
	}
	if d.Instructions[1].Program != "unknown program" || d.Instructions[1].Name != "unknown instruction" {
		t.Fatalf("%+v", d.Instructions[1])
	}
	if d.Instructions[2].Error == "" || len(d.Warnings) != 1 {
		t.Fatalf("short token data not reported: %+v %v", d.Instructions[2], d.Warnings)
	}
}

func FuzzDescribe(f *testing.F) {
	raw, _ := base64.StdEncoding.DecodeString(goldenPublicTransfer)
	f.Add(raw)
	f.Add([]byte{1})
	in := New()
	f.Fuzz(func(t *testing.T, b []byte) {
		tx, err := txwire.Decode(b)
		if err != nil {
			return
		}
		d := in.Describe(tx)
		if d == nil || len(d.Instructions) != len(tx.Message.Instructions) {
			t.Fatal("instructions lost")
		}
	})
}
