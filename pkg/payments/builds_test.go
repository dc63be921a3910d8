package payments

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/cluster"
	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/schema"
	"github.com/ferry-sh/ferry/pkg/spl"
)

func TestDepositInstructions(t *testing.T) {
	cases := []struct {
		name, extra, want string
	}{
		{"defaults", "", "espl:0 espl:6 espl:4 espl:24"},
		{"not private", `,"private":false`, "espl:0 espl:4 espl:24"},
		{"no init", `,"initIfMissing":false,"private":false`, "espl:4 espl:24"},
		{"all init", `,"initVaultIfMissing":true,"initAtasIfMissing":true`, "espl:1 ata:CreateIdempotent ata:CreateIdempotent espl:0 espl:6 espl:4 espl:24"},
		{"legacy path", `,"idempotent":false`, "espl:0 espl:1 ata:CreateIdempotent espl:2 espl:6 espl:4"},
		{"legacy path, no init", `,"idempotent":false,"initIfMissing":false,"private":false`, "espl:2 espl:4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := decodeBody[DepositRequest](t, fmt.Sprintf(`{"owner":%q,"mint":%q,"amount":250%s}`, alice, mint, c.extra))
			out, err := (&Planner{}).Deposit(context.Background(), newTestChain(), req)
			if err != nil {
				t.Fatal(err)
			}
			got, tx := labels(t, out)
			if strings.Join(got, " ") != c.want {
				t.Fatalf("instructions %v, want %s", got, c.want)
			}
			if out.Kind != KindDeposit || out.SendTo != Base || out.Validator != validator.String() || out.Fees != nil || out.From != "" {
				t.Fatalf("%+v", out)
			}
			if out.RecentBlockhash != baseHash.String() || tx.Message.AccountKeys[0] != alice {
				t.Fatal("deposit must use the base blockhash with the owner as fee payer")
			}
			if got[len(got)-1] == "espl:24" {
				last := tx.Message.Instructions[len(got)-1]
				if len(last.Data) != 45 {
					t.Fatalf("ix 24 data is %d bytes, want 45 (validator included)", len(last.Data))
				}
			}
		})
	}
}

func TestDepositDefaultMint(t *testing.T) {
	body := fmt.Sprintf(`{"owner":%q,"amount":1}`, alice)
	ch := newTestChain()
	_, err := (&Planner{}).Deposit(context.Background(), ch, decodeBody[DepositRequest](t, body))
	wantAPIError(t, err, 400, CodeMintNotFound) // local has no default mint

	p := &Planner{DefaultMints: map[cluster.Kind]solana.PublicKey{cluster.Local: mint}}
	if _, err := p.Deposit(context.Background(), ch, decodeBody[DepositRequest](t, body)); err != nil {
		t.Fatal(err)
	}
	// Devnet defaults to devnet USDC without looking the mint up.
	ch.kind = cluster.Devnet
	out, err := (&Planner{}).Deposit(context.Background(), ch, decodeBody[DepositRequest](t, body))
	if err != nil {
		t.Fatal(err)
	}
	_, tx := labels(t, out)
	found := false
	for _, k := range tx.Message.AccountKeys {
		found = found || k == espl.USDCDevnet
	}
	if !found {
		t.Fatal("devnet deposit does not use devnet USDC")
	}
}

func TestWrappedSOLDeposit(t *testing.T) {
	ch := newTestChain()
	ch.accounts[spl.NativeMintID] = &Account{Owner: spl.TokenProgramID, Data: spl.Mint{Decimals: 9, IsInitialized: true}.Encode()}
	out, err := (&Planner{}).Deposit(context.Background(), ch, decodeBody[DepositRequest](t, fmt.Sprintf(`{"owner":%q,"mint":%q,"amount":5000,"private":false}`, alice, spl.NativeMintID)))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := labels(t, out)
	want := "ata:CreateIdempotent system:Transfer token:SyncNative system:Transfer espl:0 espl:4 espl:24"
	if strings.Join(got, " ") != want {
		t.Fatalf("%v, want %s", got, want)
	}
}

func TestWithdrawInstructions(t *testing.T) {
	cases := []struct{ name, extra, want string }{
		{"defaults", "", "espl:0 espl:4 espl:26"},
		{"atas", `,"initAtasIfMissing":true`, "ata:CreateIdempotent espl:0 espl:4 espl:26"},
		{"no init", `,"initIfMissing":false`, "espl:4 espl:26"},
		{"legacy", `,"idempotent":false`, "espl:3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := decodeBody[WithdrawRequest](t, fmt.Sprintf(`{"owner":%q,"mint":%q,"amount":7%s}`, alice, mint, c.extra))
			out, err := (&Planner{}).Withdraw(context.Background(), newTestChain(), req)
			if err != nil {
				t.Fatal(err)
			}
			got, tx := labels(t, out)
			if strings.Join(got, " ") != c.want {
				t.Fatalf("%v, want %s", got, c.want)
			}
			if out.Kind != KindWithdraw || out.SendTo != Base || out.RecentBlockhash != baseHash.String() {
				t.Fatalf("%+v", out)
			}
			if c.name == "defaults" {
				ix := tx.Message.Instructions[2]
				if len(ix.Accounts) != 16 || tx.Message.AccountKeys[ix.Accounts[15]] != spl.TokenProgramID || len(ix.Data) != 45 {
					t.Fatal("ix 26 must have 16 accounts, the token program last, and 45-byte data")
				}
			}
		})
	}
}

func TestInitializeMint(t *testing.T) {
	out, err := (&Planner{}).InitializeMint(context.Background(), newTestChain(), decodeBody[InitializeMintRequest](t, fmt.Sprintf(`{"payer":%q,"mint":%q}`, alice, mint)))
	if err != nil {
		t.Fatal(err)
	}
	got, tx := labels(t, &out.UnsignedTransaction)
	if strings.Join(got, " ") != "espl:12 espl:23 system:Transfer espl:19 espl:1 ata:CreateIdempotent espl:4" {
		t.Fatal(got)
	}
	queue, _ := espl.FindTransferQueue(mint, validator)
	rent, _ := espl.FindRentPDA()
	if out.Kind != KindInitializeMint || out.TransferQueue != queue.String() || out.RentPDA != rent.String() || out.Validator != validator.String() {
		t.Fatalf("%+v", out)
	}
	fund, _ := spl.DecodeSystem(tx.Message.Instructions[2].Data)
	if fund.Lamports != 20_000_000 || tx.Message.AccountKeys[tx.Message.Instructions[2].Accounts[1]] != rent {
		t.Fatal("rent PDA funding")
	}
	// ESPL 4 delegates the vault eATA with the validator in its data.
	vault, _ := espl.FindGlobalVault(mint)
	vaultEATA, _ := espl.FindEphemeralATA(vault, mint)
	last := tx.Message.Instructions[6]
	if tx.Message.AccountKeys[last.Accounts[1]] != vaultEATA || len(last.Data) != 33 {
		t.Fatal("last instruction must delegate the vault eATA to the validator")
	}
}

// TestSchemaValidation covers the 422 rules of the four build requests.
func TestSchemaValidation(t *testing.T) {
	cases := []struct {
		name    string
		decode  func([]byte) error
		body    string
		message string
		paths   string
	}{
		{"transfer missing all", decodeInto[TransferRequest], `{}`, "Missing required fields: from, to, mint, amount, visibility, fromBalance, toBalance", "from to mint amount visibility fromBalance toBalance"},
		{"transfer bad values", decodeInto[TransferRequest], fmt.Sprintf(`{"from":"x","to":"","mint":%q,"amount":0,"visibility":"secret","fromBalance":"base","toBalance":"rollup"}`, mint), "Request validation failed", "from to amount visibility toBalance"},
		{"transfer split and delays", decodeInto[TransferRequest], transferBody(Private, Base, Base, `,"split":16,"minDelayMs":"1.5","maxDelayMs":5,"clientRefId":"-1"`), "Request validation failed", "minDelayMs maxDelayMs clientRefId split"},
		{"transfer amount float and string", decodeInto[TransferRequest], strings.Replace(transferBody(Public, Base, Base, `,"platformFeeBps":10001,"exactOut":"yes"`), "1000000", "1.5", 1), "Request validation failed", "amount exactOut platformFeeBps"},
		{"transfer handle too long", decodeInto[TransferRequest], strings.Replace(transferBody(Private, Base, Base, ""), bob.String(), strings.Repeat("h", 256), 1), "Request validation failed", "to"},
		{"deposit missing", decodeInto[DepositRequest], `{"mint":"nope"}`, "Request validation failed", "owner amount mint"},
		{"deposit amount unsafe", decodeInto[DepositRequest], fmt.Sprintf(`{"owner":%q,"amount":9007199254740993}`, alice), "Request validation failed", "amount"},
		{"withdraw missing", decodeInto[WithdrawRequest], `{}`, "Missing required fields: owner, mint, amount", "owner mint amount"},
		{"withdraw escrow", decodeInto[WithdrawRequest], fmt.Sprintf(`{"owner":%q,"mint":%q,"amount":1,"escrowIndex":-1}`, alice, mint), "Request validation failed", "escrowIndex"},
		{"init-mint missing", decodeInto[InitializeMintRequest], `{}`, "Missing required fields: payer, mint", "payer mint"},
		{"init-mint bad validator", decodeInto[InitializeMintRequest], fmt.Sprintf(`{"payer":%q,"mint":%q,"validator":"0OIl"}`, alice, mint), "Request validation failed", "validator"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ae := wantAPIError(t, c.decode([]byte(c.body)), 422, apierr.CodeValidation)
			if ae.Message != c.message {
				t.Errorf("message %q, want %q", ae.Message, c.message)
			}
			var paths []string
			for _, is := range ae.Issues {
				paths = append(paths, fmt.Sprint(is.Path...))
			}
			if strings.Join(paths, " ") != c.paths {
				t.Errorf("issue paths %v, want %s (%+v)", paths, c.paths, ae.Issues)
			}
		})
	}
}

func decodeInto[T any](b []byte) error { return schema.Decode(b, new(T)) }

// FuzzTransferRequest feeds arbitrary bodies through validation and the
// planner: every outcome is a response or an API error, never a panic.
func FuzzTransferRequest(f *testing.F) {
	f.Add([]byte(transferBody(Private, Base, Base, `,"split":3,"minDelayMs":"10","maxDelayMs":"20","clientRefId":"7"`)))
	f.Add([]byte(transferBody(Public, Ephemeral, Ephemeral, `,"memo":"hi"`)))
	f.Add([]byte(`{"from":1}`))
	p := &Planner{}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req TransferRequest
		if err := schema.Decode(body, &req); err != nil {
			return
		}
		out, err := p.Transfer(context.Background(), newTestChain(), &req)
		if err != nil {
			if _, ok := err.(*apierr.Error); !ok {
				t.Fatalf("non-API error %T: %v", err, err)
			}
			return
		}
		if out.TransactionBase64 == "" || len(out.RequiredSigners) == 0 {
			t.Fatal("empty response")
		}
	})
}
