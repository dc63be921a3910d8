package txwire

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"

	"github.com/gagliardetto/solana-go"
)

type vectorFile struct {
	Cases []struct {
		Name            string `json:"name"`
		FeePayer        string `json:"feePayer"`
		RecentBlockhash string `json:"recentBlockhash"`
		Instructions    []struct {
			ProgramID string `json:"programId"`
			Accounts  []struct {
				Pubkey     string `json:"pubkey"`
				IsSigner   bool   `json:"isSigner"`
				IsWritable bool   `json:"isWritable"`
			} `json:"accounts"`
			DataHex string `json:"dataHex"`
		} `json:"instructions"`
		Expected struct {
			Header struct {
				NumRequiredSignatures       uint8 `json:"numRequiredSignatures"`
				NumReadonlySignedAccounts   uint8 `json:"numReadonlySignedAccounts"`
				NumReadonlyUnsignedAccounts uint8 `json:"numReadonlyUnsignedAccounts"`
			} `json:"header"`
			AccountKeys       []string `json:"accountKeys"`
			MessageBase64     string   `json:"messageBase64"`
			TransactionBase64 string   `json:"transactionBase64"`
			WireSize          int      `json:"wireSize"`
			RequiredSigners   []string `json:"requiredSigners"`
		} `json:"expected"`
	} `json:"cases"`
	LocaleCompareCases []struct {
		A   string `json:"a"`
		B   string `json:"b"`
		Cmp int    `json:"cmp"`
	} `json:"localeCompareCases"`
}

func loadVectors(t testing.TB) *vectorFile {
	t.Helper()
	b, err := os.ReadFile("testdata/legacy-messages.json")
	if err != nil {
		t.Fatal(err)
	}
	var v vectorFile
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Cases) != 6 || len(v.LocaleCompareCases) == 0 {
		t.Fatalf("vector file has %d cases and %d comparator cases", len(v.Cases), len(v.LocaleCompareCases))
	}
	return &v
}

// vectorInstructions converts a vector case into instructions.
func vectorInstructions(t testing.TB, v *vectorFile, i int) (solana.PublicKey, []Instruction, solana.Hash) {
	c := v.Cases[i]
	var ixs []Instruction
	for _, vi := range c.Instructions {
		data, err := hex.DecodeString(vi.DataHex)
		if err != nil {
			t.Fatal(err)
		}
		ix := Instruction{ProgramID: solana.MustPublicKeyFromBase58(vi.ProgramID), Data: data}
		for _, a := range vi.Accounts {
			ix.Accounts = append(ix.Accounts, Meta(solana.MustPublicKeyFromBase58(a.Pubkey), a.IsSigner, a.IsWritable))
		}
		ixs = append(ixs, ix)
	}
	return solana.MustPublicKeyFromBase58(c.FeePayer), ixs, solana.MustHashFromBase58(c.RecentBlockhash)
}

func TestGoldenVectors(t *testing.T) {
	v := loadVectors(t)
	for i, c := range v.Cases {
		t.Run(c.Name, func(t *testing.T) {
			payer, ixs, bh := vectorInstructions(t, v, i)
			before := make([]Instruction, len(ixs))
			for j, ix := range ixs {
				before[j] = ix
				before[j].Accounts = append([]AccountMeta(nil), ix.Accounts...)
			}
			m, err := Compile(payer, ixs, bh)
			if err != nil {
				t.Fatal(err)
			}
			for j := range ixs {
				for k := range ixs[j].Accounts {
					if ixs[j].Accounts[k] != before[j].Accounts[k] {
						t.Fatalf("Compile modified instruction %d account %d", j, k)
					}
				}
			}
			h := c.Expected.Header
			if m.Header != (Header{h.NumRequiredSignatures, h.NumReadonlySignedAccounts, h.NumReadonlyUnsignedAccounts}) {
				t.Errorf("header = %+v, want %+v", m.Header, h)
			}
			for j, k := range m.AccountKeys {
				if k.String() != c.Expected.AccountKeys[j] {
					t.Errorf("key %d = %s, want %s", j, k, c.Expected.AccountKeys[j])
				}
			}
			if got := base64.StdEncoding.EncodeToString(m.Bytes()); got != c.Expected.MessageBase64 {
				t.Errorf("message differs\n got %s\nwant %s", got, c.Expected.MessageBase64)
			}
			tx := NewUnsigned(m)
			if got := tx.Base64(); got != c.Expected.TransactionBase64 {
				t.Errorf("transaction differs\n got %s\nwant %s", got, c.Expected.TransactionBase64)
			}
			if len(tx.Bytes()) != c.Expected.WireSize {
				t.Errorf("wire size %d, want %d", len(tx.Bytes()), c.Expected.WireSize)
			}
			rs := RequiredSigners(payer, ixs)
			if len(rs) != len(c.Expected.RequiredSigners) {
				t.Fatalf("requiredSigners = %v, want %v", rs, c.Expected.RequiredSigners)
			}
			for j := range rs {
				if rs[j].String() != c.Expected.RequiredSigners[j] {
					t.Errorf("requiredSigners[%d] = %s, want %s", j, rs[j], c.Expected.RequiredSigners[j])
				}
			}

			// Round trip: decoding the golden bytes gives back the same message.
			raw, _ := base64.StdEncoding.DecodeString(c.Expected.TransactionBase64)
			dec, err := Decode(raw)
			if err != nil {
				t.Fatal(err)
			}
			if err := dec.Message.Sanitize(); err != nil {
				t.Fatal(err)
			}
			if string(dec.Bytes()) != string(raw) || string(dec.Message.Bytes()) != string(m.Bytes()) {
				t.Fatal("decode/encode round trip changed the bytes")
			}
		})
	}
}

func TestCompareBase58(t *testing.T) {
	v := loadVectors(t)
	for _, c := range v.LocaleCompareCases {
		if got := CompareBase58(c.A, c.B); got != c.Cmp {
			t.Errorf("CompareBase58(%q, %q) = %d, want %d", c.A, c.B, got, c.Cmp)
		}
	}
}
