package payments

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/cluster"
	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/spl"
)

func transferBody(vis, from, to string, extra string) string {
	return fmt.Sprintf(`{"from":%q,"to":%q,"mint":%q,"amount":1000000,"visibility":%q,"fromBalance":%q,"toBalance":%q%s}`,
		alice, bob, mint, vis, from, to, extra)
}

func TestTransferRouteMatrix(t *testing.T) {
	cases := []struct {
		name, vis, from, to, extra string
		want                       string
		sendTo                     string
		validator                  bool
		lamports                   string
		tokens                     string
		tooLarge                   bool
	}{
		{"public base→base", Public, Base, Base, "", "token:Transfer", Base, true, "0", "0", false},
		{"public base→base +atas", Public, Base, Base, `,"initAtasIfMissing":true`, "ata:CreateIdempotent token:Transfer", Base, true, "0", "0", false},
		{"public base→base +vault", Public, Base, Base, `,"initVaultIfMissing":true`, "espl:1 ata:CreateIdempotent token:Transfer", Base, true, "0", "0", false},
		{"public base→base +memo", Public, Base, Base, `,"initAtasIfMissing":true,"memo":"invoice 42"`, "ata:CreateIdempotent token:Transfer memo", Base, true, "0", "0", false},
		{"public base→base initIfMissing ignored", Public, Base, Base, `,"initIfMissing":true`, "token:Transfer", Base, true, "0", "0", false},
		{"public eph→eph", Public, Ephemeral, Ephemeral, "", "token:Transfer", Ephemeral, false, "0", "0", false},
		{"public eph→eph init flags ignored", Public, Ephemeral, Ephemeral, `,"initAtasIfMissing":true,"initIfMissing":true`, "token:Transfer", Ephemeral, false, "0", "0", false},
		{"public eph→eph +memo", Public, Ephemeral, Ephemeral, `,"memo":"m"`, "token:Transfer memo", Ephemeral, false, "0", "0", false},
		{"private base→base", Private, Base, Base, "", "espl:0 espl:4 espl:25", Base, true, "2039280", "1000", false},
		{"private base→base +vault", Private, Base, Base, `,"initVaultIfMissing":true,"initIfMissing":true`, "espl:1 ata:CreateIdempotent espl:12 espl:0 espl:4 espl:25", Base, true, "2039280", "1000", true},
		{"private base→base +atas +memo", Private, Base, Base, `,"initAtasIfMissing":true,"memo":"x"`, "ata:CreateIdempotent espl:0 espl:4 espl:25 memo", Base, true, "2039280", "1000", false},
		{"private base→eph", Private, Base, Ephemeral, "", "espl:24", Base, true, "0", "0", false},
		{"private base→eph +init", Private, Base, Ephemeral, `,"initIfMissing":true`, "ata:CreateIdempotent espl:0 espl:6 espl:4 espl:24", Base, true, "0", "0", false},
		{"private base→eph +all", Private, Base, Ephemeral, `,"initIfMissing":true,"initAtasIfMissing":true,"initVaultIfMissing":true`, "espl:1 ata:CreateIdempotent ata:CreateIdempotent ata:CreateIdempotent espl:0 espl:6 espl:4 espl:24", Base, true, "0", "0", false},
		{"private eph→base", Private, Ephemeral, Base, "", "espl:16", Ephemeral, true, "0", "0", false},
		{"private eph→base +vault", Private, Ephemeral, Base, `,"initVaultIfMissing":true,"initAtasIfMissing":true`, "espl:12 espl:16", Ephemeral, true, "0", "0", false},
		{"private eph→eph", Private, Ephemeral, Ephemeral, `,"memo":"hi"`, "token:Transfer memo", Ephemeral, true, "0", "0", false},
	}
	p := &Planner{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := decodeBody[TransferRequest](t, transferBody(c.vis, c.from, c.to, c.extra))
			plan, err := p.PlanTransfer(context.Background(), newTestChain(), req)
			if err != nil {
				t.Fatal(err)
			}
			if got := planLabels(t, plan); strings.Join(got, " ") != c.want {
				t.Fatalf("planned instructions = %v, want %s", got, c.want)
			}
			out, err := p.Transfer(context.Background(), newTestChain(), req)
			if c.tooLarge {
				// Without a v0 lookup table this route exceeds 1232 bytes,
				// as it does for the hosted API with legacy:true.
				wantAPIError(t, err, 400, CodeTransactionTooLarge)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, tx := labels(t, out)
			if strings.Join(got, " ") != c.want {
				t.Fatalf("instructions = %v, want %s", got, c.want)
			}
			if out.Kind != KindTransfer || out.Version != "legacy" || out.SendTo != c.sendTo || out.From != c.from {
				t.Fatalf("response %+v", out)
			}
			wantHash, wantLVB := baseHash, uint64(1150)
			if c.sendTo == Ephemeral {
				wantHash, wantLVB = ephHash, 2150
				if out.SendRPCEndpoint != "http://127.0.0.1:7799" {
					t.Fatalf("sendRpcEndpoint %q", out.SendRPCEndpoint)
				}
			} else if out.SendRPCEndpoint != "" {
				t.Fatalf("base send has sendRpcEndpoint %q", out.SendRPCEndpoint)
			}
			if tx.Message.RecentBlockhash != wantHash || out.RecentBlockhash != wantHash.String() || out.LastValidBlockHeight != wantLVB {
				t.Fatalf("blockhash from the wrong layer: %s / %d", out.RecentBlockhash, out.LastValidBlockHeight)
			}
			if (out.Validator != "") != c.validator || (c.validator && out.Validator != validator.String()) {
				t.Fatalf("validator %q", out.Validator)
			}
			if out.Fees == nil || out.Fees.Lamports != c.lamports || out.Fees.Tokens != c.tokens {
				t.Fatalf("fees %+v", out.Fees)
			}
			if len(out.RequiredSigners) != 1 || out.RequiredSigners[0] != alice.String() || tx.Message.AccountKeys[0] != alice {
				t.Fatalf("signers %v", out.RequiredSigners)
			}
			if len(tx.Signatures) != 1 || !tx.Signatures[0].IsZero() {
				t.Fatal("transaction must be unsigned")
			}
			if got[len(got)-1] == "memo" && string(tx.Message.Instructions[len(got)-1].Data) != decodeMemoText(c.extra) {
				t.Fatal("memo text")
			}
		})
	}
}

func decodeMemoText(extra string) string {
	_, after, _ := strings.Cut(extra, `"memo":"`)
	text, _, _ := strings.Cut(after, `"`)
	return text
}

func TestPublicTransferAccounts(t *testing.T) {
	req := decodeBody[TransferRequest](t, transferBody(Public, Base, Base, ""))
	out, err := (&Planner{}).Transfer(context.Background(), newTestChain(), req)
	if err != nil {
		t.Fatal(err)
	}
	_, tx := labels(t, out)
	ix := tx.Message.Instructions[0]
	keys := tx.Message.AccountKeys
	if keys[ix.Accounts[0]] != spl.AssociatedTokenAddress(alice, mint, spl.TokenProgramID) ||
		keys[ix.Accounts[1]] != spl.AssociatedTokenAddress(bob, mint, spl.TokenProgramID) || keys[ix.Accounts[2]] != alice {
		t.Fatal("transfer accounts are not fromATA → toATA signed by from")
	}
	in, _ := spl.DecodeToken(ix.Data)
	if in.Amount != 1_000_000 {
		t.Fatalf("amount %d", in.Amount)
	}
}

func TestUnsupportedRoutes(t *testing.T) {
	for _, r := range []Route{{Public, Base, Ephemeral}, {Public, Ephemeral, Base}} {
		req := decodeBody[TransferRequest](t, transferBody(r.Visibility, r.From, r.To, ""))
		_, err := (&Planner{}).Transfer(context.Background(), newTestChain(), req)
		ae := wantAPIError(t, err, 400, CodeUnsupportedTransferRoute)
		if ae.Message != "transferSpl route not implemented: "+r.String() {
			t.Fatal(ae.Message)
		}
	}
}

func TestPrivateBaseToBasePayload(t *testing.T) {
	for _, withRef := range []bool{false, true} {
		extra := `,"minDelayMs":"1000","maxDelayMs":"5000","split":3`
		if withRef {
			extra += `,"clientRefId":"42"`
		}
		req := decodeBody[TransferRequest](t, transferBody(Private, Base, Base, extra))
		out, err := (&Planner{}).Transfer(context.Background(), newTestChain(), req)
		if err != nil {
			t.Fatal(err)
		}
		_, tx := labels(t, out)
		// The recipient must not appear anywhere in cleartext.
		raw := tx.Bytes()
		if bytes.Contains(raw, bob[:]) {
			t.Fatal("recipient appears in the transaction bytes")
		}
		for _, k := range tx.Message.AccountKeys {
			if k == bob || k == spl.AssociatedTokenAddress(bob, mint, spl.TokenProgramID) {
				t.Fatal("recipient (or its ATA) is an account of the base transaction")
			}
		}
		ci := tx.Message.Instructions[2]
		keys := make([]solana.PublicKey, len(ci.Accounts))
		for i, a := range ci.Accounts {
			keys[i] = tx.Message.AccountKeys[a]
		}
		dec, err := espl.Decode(ci.Data, keys)
		if err != nil {
			t.Fatal(err)
		}
		ix, ok := dec.(espl.PrivateTransferIx)
		if !ok {
			t.Fatalf("ix 25 decoded as %T", dec)
		}
		if !ix.ExactOut || ix.Amount != 1_000_000 || ix.Validator == nil || *ix.Validator != validator {
			t.Fatalf("%+v", ix)
		}
		payload, err := espl.OpenPrivateTransfer(validatorKey, ix)
		if err != nil {
			t.Fatal(err)
		}
		if payload.Destination != bob || payload.MinDelayMs != 1000 || payload.MaxDelayMs != 5000 || payload.Split != 3 {
			t.Fatalf("payload %+v", payload)
		}
		if withRef != (payload.ClientRefID != nil) || (withRef && *payload.ClientRefID != 42) {
			t.Fatalf("clientRefId %v", payload.ClientRefID)
		}
		if _, err := espl.OpenPrivateTransfer(keyFromSeed("someone else"), ix); err == nil {
			t.Fatal("payload opened with the wrong key")
		}
	}
}

func TestExactOutFalseDeductsFees(t *testing.T) {
	pf := pub(keyFromSeed("platform"))
	req := decodeBody[TransferRequest](t, transferBody(Private, Base, Base, fmt.Sprintf(`,"exactOut":false,"platformFeeBps":100,"platformFeeAccount":%q`, pf)))
	out, err := (&Planner{}).Transfer(context.Background(), newTestChain(), req)
	if err != nil {
		t.Fatal(err)
	}
	got, tx := labels(t, out)
	if strings.Join(got, " ") != "token:Transfer espl:0 espl:4 espl:25" {
		t.Fatal(got)
	}
	fee, _ := spl.DecodeToken(tx.Message.Instructions[0].Data)
	if fee.Amount != 10_000 || tx.Message.AccountKeys[tx.Message.Instructions[0].Accounts[1]] != pf {
		t.Fatalf("platform fee transfer %+v", fee)
	}
	// transferAmount = 990 000; privacy fee = 990; tokens = 10 000 + 990.
	if out.Fees.Tokens != "10990" || out.Fees.Lamports != "2039280" {
		t.Fatalf("fees %+v", out.Fees)
	}
}

func TestValidatorResolution(t *testing.T) {
	other := pub(keyFromSeed("other validator"))
	cases := []struct {
		name  string
		chain func(*testChain)
		extra string
		want  solana.PublicKey
	}{
		{"getIdentity", func(*testChain) {}, "", validator},
		{"explicit wins", func(*testChain) {}, fmt.Sprintf(`,"validator":%q`, other), other},
		{"fallback when getIdentity fails", func(c *testChain) { c.identErr = true }, "", espl.ValidatorAsia},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ch := newTestChain()
			c.chain(ch)
			req := decodeBody[TransferRequest](t, transferBody(Private, Base, Base, c.extra))
			out, err := (&Planner{}).Transfer(context.Background(), ch, req)
			if err != nil {
				t.Fatal(err)
			}
			if out.Validator != c.want.String() {
				t.Fatalf("validator %s, want %s", out.Validator, c.want)
			}
			queue, _ := espl.FindTransferQueue(mint, c.want)
			_, tx := labels(t, out)
			found := false
			for _, k := range tx.Message.AccountKeys {
				found = found || k == queue
			}
			if !found {
				t.Fatal("ix 25 does not use the resolved validator's queue")
			}
		})
	}
}

func TestStealthHandleTransfer(t *testing.T) {
	handle := "alice@ferry.test"
	pool, _, _ := espl.FindStealthPool([]byte(handle))
	body := fmt.Sprintf(`{"from":%q,"to":%q,"mint":%q,"amount":5,"visibility":"private","fromBalance":"base","toBalance":"base"}`, alice, handle, mint)

	ch := newTestChain()
	_, err := (&Planner{}).Transfer(context.Background(), ch, decodeBody[TransferRequest](t, body))
	ae := wantAPIError(t, err, 400, CodeStealthPoolNotFound)
	if d := ae.Details.(map[string]any); d["stealthPool"] != pool.String() || d["handle"] != handle {
		t.Fatalf("details %v", d)
	}

	ch.accounts[pool] = &Account{Owner: espl.DelegationProgramID, Lamports: 1}
	out, err := (&Planner{}).Transfer(context.Background(), ch, decodeBody[TransferRequest](t, body))
	if err != nil {
		t.Fatal(err)
	}
	_, tx := labels(t, out)
	ci := tx.Message.Instructions[2]
	keys := make([]solana.PublicKey, len(ci.Accounts))
	for i, a := range ci.Accounts {
		keys[i] = tx.Message.AccountKeys[a]
	}
	dec, _ := espl.Decode(ci.Data, keys)
	payload, err := espl.OpenPrivateTransfer(validatorKey, dec.(espl.PrivateTransferIx))
	if err != nil || payload.Destination != pool {
		t.Fatalf("destination %s, want pool %s (%v)", payload.Destination, pool, err)
	}

	pubBody := strings.Replace(body, `"visibility":"private"`, `"visibility":"public"`, 1)
	_, err = (&Planner{}).Transfer(context.Background(), ch, decodeBody[TransferRequest](t, pubBody))
	wantAPIError(t, err, 400, CodeInvalidStealthTransfer)
}

func TestEATAValidatorMismatch(t *testing.T) {
	ch := newTestChain()
	eata, _ := espl.FindEphemeralATA(alice, mint)
	rec, _ := espl.FindDelegationRecord(eata)
	other := pub(keyFromSeed("other"))
	ch.accounts[rec] = &Account{Owner: espl.DelegationProgramID, Lamports: 1, Data: espl.DelegationRecord{Authority: other, Owner: espl.ProgramID}.Encode()}
	_, err := (&Planner{}).Transfer(context.Background(), ch, decodeBody[TransferRequest](t, transferBody(Private, Base, Base, "")))
	ae := wantAPIError(t, err, 400, CodeEATAValidatorMismatch)
	acct := ae.Details.(map[string]any)["accounts"].([]map[string]any)[0]
	if acct["currentValidator"] != other.String() || acct["selectedValidator"] != validator.String() || acct["role"] != "source" {
		t.Fatalf("details %v", acct)
	}
	// Delegated to the selected validator: fine.
	ch.accounts[rec].Data = espl.DelegationRecord{Authority: validator, Owner: espl.ProgramID}.Encode()
	if _, err := (&Planner{}).Transfer(context.Background(), ch, decodeBody[TransferRequest](t, transferBody(Private, Base, Base, ""))); err != nil {
		t.Fatal(err)
	}
}

func TestTransferRuntimeErrors(t *testing.T) {
	offCurve, _ := espl.FindRentPDA()
	spl2022 := pub(keyFromSeed("mint-2022"))
	weird := pub(keyFromSeed("mint-weird"))
	cases := []struct {
		name   string
		body   string
		chain  func(*testChain)
		p      *Planner
		status int
		code   string
		msg    string
	}{
		{"max < min", transferBody(Private, Base, Base, `,"minDelayMs":"10","maxDelayMs":"5"`), nil, nil, 400, CodeInvalidPrivateTransfer, "maxDelayMs must be greater than or equal to minDelayMs"},
		{"max > 600000", transferBody(Private, Base, Base, `,"maxDelayMs":"600001"`), nil, nil, 400, CodeInvalidPrivateTransfer, "maxDelayMs must be less than or equal to 600000"},
		{"min alone > 600000", transferBody(Private, Base, Base, `,"minDelayMs":"700000"`), nil, nil, 400, CodeInvalidPrivateTransfer, "maxDelayMs must be less than or equal to 600000"},
		{"max < min on public", transferBody(Public, Base, Base, `,"minDelayMs":"10","maxDelayMs":"5"`), nil, nil, 400, CodeInvalidPrivateTransfer, "maxDelayMs must be greater than or equal to minDelayMs"},
		{"delay overflow", transferBody(Private, Base, Base, `,"minDelayMs":"99999999999999999999"`), nil, nil, 400, CodeInvalidAmount, "minDelayMs must be an integer string"},
		{"clientRefId overflow", transferBody(Private, Base, Base, `,"clientRefId":"18446744073709551616"`), nil, nil, 400, CodeInvalidAmount, "clientRefId must be an integer string"},
		{"split > amount", strings.Replace(transferBody(Private, Base, Base, `,"split":5`), "1000000", "4", 1), nil, nil, 400, CodeInvalidPrivateTransfer, "split cannot exceed transfer amount"},
		{"platform fee without account", transferBody(Public, Base, Base, `,"platformFeeBps":5`), nil, nil, 400, CodeInvalidPlatformFee, "platformFeeAccount is required when platformFeeBps is greater than 0"},
		{"platform fee from ephemeral", transferBody(Public, Ephemeral, Ephemeral, fmt.Sprintf(`,"platformFeeBps":5,"platformFeeAccount":%q`, bob)), nil, nil, 400, CodeInvalidPlatformFee, `platform fees are supported only when fromBalance is "base"`},
		{"platform fee eats amount", transferBody(Public, Base, Base, fmt.Sprintf(`,"platformFeeBps":10000,"exactOut":false,"platformFeeAccount":%q`, bob)), nil, nil, 400, CodeInvalidPlatformFee, "platform fee must be less than amount when exactOut is false"},
		{"gasless without sponsor", transferBody(Public, Base, Base, `,"gasless":true`), nil, nil, 503, CodeSponsorUnavailable, "Gasless transfers are not configured"},
		{"gasless mint not allowed", transferBody(Public, Base, Base, `,"gasless":true`), func(c *testChain) { c.kind = cluster.Mainnet }, nil, 400, CodeInvalidGaslessMint, "gasless is supported only for approved stablecoin mints"},
		{"gasless amount too small", strings.Replace(transferBody(Public, Base, Base, `,"gasless":true`), "1000000", "400000", 1), nil, nil, 400, CodeInvalidGaslessAmount, "gasless amount must be at least 0.5 USDC/USDT"},
		{"mint not found", strings.Replace(transferBody(Public, Base, Base, ""), mint.String(), weird.String(), 1), nil, nil, 400, CodeMintNotFound, "Mint account not found"},
		{"unsupported token program", strings.Replace(transferBody(Public, Base, Base, ""), mint.String(), spl2022.String(), 1), func(c *testChain) {
			c.accounts[spl2022] = &Account{Owner: espl.ProgramID}
		}, nil, 400, CodeUnsupportedTokenProgram, "Mint owner is not a supported token program"},
		{"rpc failure", transferBody(Public, Base, Base, ""), func(c *testChain) { c.failReads = true }, nil, 502, "RPC_ERROR", "Failed to resolve mint token program"},
		// The SDK derives the transfer's own ATAs: its error passes through
		// as a build error.
		{"off-curve recipient", strings.Replace(transferBody(Public, Base, Base, ""), bob.String(), offCurve.String(), 1), nil, nil, 400, CodeTransactionBuildError, "Owner public key is off-curve"},
		{"off-curve sender", strings.Replace(transferBody(Private, Base, Base, ""), alice.String(), offCurve.String(), 1), nil, nil, 400, CodeTransactionBuildError, "Owner public key is off-curve"},
		// gasless is silently ignored for an off-curve sender (no 503
		// without a sponsor), and the build then fails the same way.
		{"off-curve sender, gasless", strings.Replace(transferBody(Public, Base, Base, `,"gasless":true`), alice.String(), offCurve.String(), 1), nil, nil, 400, CodeTransactionBuildError, "Owner public key is off-curve"},
		// The API's own derivation (the platform fee's source) answers
		// INVALID_OWNER.
		{"off-curve sender, platform fee", strings.Replace(transferBody(Public, Base, Base, fmt.Sprintf(`,"platformFeeBps":5,"platformFeeAccount":%q`, bob)), alice.String(), offCurve.String(), 1), nil, nil, 400, CodeInvalidOwner, "Owner public key " + offCurve.String() + " is off-curve"},
		{"too large", transferBody(Public, Base, Base, `,"memo":"`+strings.Repeat("x", 1100)+`"`), nil, nil, 400, CodeTransactionTooLarge, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ch := newTestChain()
			if c.chain != nil {
				c.chain(ch)
			}
			p := c.p
			if p == nil {
				p = &Planner{}
			}
			_, err := p.Transfer(context.Background(), ch, decodeBody[TransferRequest](t, c.body))
			ae := wantAPIError(t, err, c.status, c.code)
			if c.msg != "" && ae.Message != c.msg {
				t.Fatalf("message %q, want %q", ae.Message, c.msg)
			}
			if strings.Contains(string(ae.Body()), "10.0.0.1") {
				t.Fatal("RPC URL leaked into the error body")
			}
		})
	}
}

func TestGaslessTransfer(t *testing.T) {
	sponsorKey := keyFromSeed("sponsor")
	p := &Planner{Sponsor: sponsorKey}
	out, err := p.Transfer(context.Background(), newTestChain(), decodeBody[TransferRequest](t, transferBody(Public, Base, Base, `,"gasless":true`)))
	if err != nil {
		t.Fatal(err)
	}
	got, tx := labels(t, out)
	if strings.Join(got, " ") != "token:Transfer token:Transfer" {
		t.Fatal(got)
	}
	sponsor := pub(sponsorKey)
	if out.RequiredSigners[0] != sponsor.String() || out.RequiredSigners[1] != alice.String() || out.Fees.Tokens != "200000" {
		t.Fatalf("%+v %+v", out.RequiredSigners, out.Fees)
	}
	if tx.Signatures[0].IsZero() || !tx.Signatures[1].IsZero() || tx.Message.AccountKeys[0] != sponsor {
		t.Fatal("sponsor must be fee payer and partially sign")
	}
}
