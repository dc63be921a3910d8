package api

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/cluster"
	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// layerOf tells which ledger issued a blockhash.
func (h *harness) layerOf(hash string) string {
	h.t.Helper()
	var valid struct {
		Value bool `json:"value"`
	}
	for name, c := range map[string]*chainclient.Client{"base": h.baseRPC, "ephemeral": h.erRPC} {
		raw, err := c.CallRaw(h.t.Context(), "isBlockhashValid", []any{hash, map[string]string{"commitment": "processed"}})
		if err != nil {
			h.t.Fatal(err)
		}
		json.Unmarshal(raw, &valid)
		if valid.Value {
			return name
		}
	}
	return "none"
}

func instructionLabels(t *testing.T, out *payments.UnsignedTransaction) []string {
	t.Helper()
	tx, err := txwire.DecodeBase64(out.TransactionBase64)
	if err != nil {
		t.Fatal(err)
	}
	var ls []string
	for _, ci := range tx.Message.Instructions {
		pid := tx.Message.AccountKeys[ci.ProgramIDIndex]
		switch pid {
		case espl.ProgramID:
			ls = append(ls, fmt.Sprintf("espl:%d", ci.Data[0]))
		case spl.TokenProgramID:
			in, _ := spl.DecodeToken(ci.Data)
			ls = append(ls, "token:"+in.Op.String())
		case spl.AssociatedTokenProgramID:
			ls = append(ls, "ata")
		case spl.SystemProgramID:
			ls = append(ls, "system")
		case spl.MemoProgramID:
			ls = append(ls, "memo")
		default:
			ls = append(ls, pid.String())
		}
	}
	if len(ls) != out.InstructionCount {
		t.Fatalf("instructionCount %d != %d", out.InstructionCount, len(ls))
	}
	return ls
}

func transferBody(from, to, mint solana.PublicKey, vis, fromBal, toBal string, extra string) string {
	return fmt.Sprintf(`{"from":%q,"to":%q,"mint":%q,"amount":1000,"visibility":%q,"fromBalance":%q,"toBalance":%q%s}`,
		from, to, mint, vis, fromBal, toBal, extra)
}

func TestBuildRoutesAgainstEmbeddedLedger(t *testing.T) {
	h := newHarness(t)
	alice, bob := pubOf(seedKey("alice")), pubOf(seedKey("bob"))
	h.fund(alice, 1_000_000)

	// Deposit: base, validator from the rollup's getIdentity.
	out := ok[payments.UnsignedTransaction](t, h.do("POST", "/v1/spl/deposit", fmt.Sprintf(`{"owner":%q,"amount":5000,"mint":%q}`, alice, h.mint)))
	if out.Kind != "deposit" || out.SendTo != "base" || out.Validator != erIdentity.String() || out.Version != "legacy" ||
		h.layerOf(out.RecentBlockhash) != "base" || out.RequiredSigners[0] != alice.String() {
		t.Fatalf("deposit %+v", out)
	}
	if got := strings.Join(instructionLabels(t, out), " "); got != "espl:0 espl:6 espl:4 espl:24" {
		t.Fatalf("deposit instructions %s", got)
	}

	cases := []struct {
		vis, from, to, extra, want, sendTo string
	}{
		{"public", "base", "base", "", "token:Transfer", "base"},
		{"public", "ephemeral", "ephemeral", `,"memo":"hi"`, "token:Transfer memo", "ephemeral"},
		{"private", "base", "base", `,"minDelayMs":"10","maxDelayMs":"20","split":2`, "espl:0 espl:4 espl:25", "base"},
		{"private", "base", "ephemeral", `,"initIfMissing":true`, "ata espl:0 espl:6 espl:4 espl:24", "base"},
		{"private", "ephemeral", "base", "", "espl:16", "ephemeral"},
		{"private", "ephemeral", "ephemeral", "", "token:Transfer", "ephemeral"},
	}
	for _, c := range cases {
		out := ok[payments.UnsignedTransaction](t, h.do("POST", "/v1/spl/transfer", transferBody(alice, bob, h.mint, c.vis, c.from, c.to, c.extra)))
		if got := strings.Join(instructionLabels(t, out), " "); got != c.want || out.SendTo != c.sendTo || out.From != c.from || out.Fees == nil {
			t.Errorf("%s %s→%s: %s %+v", c.vis, c.from, c.to, got, out)
		}
		if h.layerOf(out.RecentBlockhash) != c.sendTo {
			t.Errorf("%s %s→%s: blockhash from %s", c.vis, c.from, c.to, h.layerOf(out.RecentBlockhash))
		}
		if (c.sendTo == "ephemeral") != (out.SendRPCEndpoint == testERURL) {
			t.Errorf("sendRpcEndpoint %q", out.SendRPCEndpoint)
		}
	}

	out = ok[payments.UnsignedTransaction](t, h.do("POST", "/v1/spl/withdraw", fmt.Sprintf(`{"owner":%q,"amount":5000,"mint":%q}`, alice, h.mint)))
	if out.Kind != "withdraw" || out.SendTo != "base" || strings.Join(instructionLabels(t, out), " ") != "espl:0 espl:4 espl:26" {
		t.Fatalf("withdraw %+v", out)
	}
	im := ok[payments.InitializeMintResponse](t, h.do("POST", "/v1/spl/initialize-mint", fmt.Sprintf(`{"payer":%q,"mint":%q}`, alice, h.mint)))
	queue, _ := espl.FindTransferQueue(h.mint, erIdentity)
	rent, _ := espl.FindRentPDA()
	if im.Kind != "initializeMint" || im.Validator != erIdentity.String() || im.TransferQueue != queue.String() || im.RentPDA != rent.String() ||
		strings.Join(instructionLabels(t, &im.UnsignedTransaction), " ") != "espl:12 espl:23 system espl:19 espl:1 ata espl:4" {
		t.Fatalf("initialize-mint %+v", im)
	}
	// An explicit validator wins over getIdentity.
	other := pubOf(seedKey("other validator"))
	out = ok[payments.UnsignedTransaction](t, h.do("POST", "/v1/spl/deposit", fmt.Sprintf(`{"owner":%q,"amount":5,"mint":%q,"validator":%q}`, alice, h.mint, other)))
	if out.Validator != other.String() {
		t.Fatal(out.Validator)
	}
	// The clients are long-lived: many requests, no new clients.
	n := len(h.clusters.clients)
	for i := 0; i < 20; i++ {
		h.do("POST", "/v1/spl/transfer", transferBody(alice, bob, h.mint, "public", "base", "base", ""))
	}
	if len(h.clusters.clients) != n || n != 3 {
		t.Fatalf("%d clients, then %d", n, len(h.clusters.clients))
	}
	a, _ := h.clusters.Resolve("")
	b, _ := h.clusters.Resolve(" LOCAL ")
	if a != b {
		t.Fatal("clusters are rebuilt per request")
	}
}

func TestBuildErrors(t *testing.T) {
	h := newHarness(t, harnessOptions{overrides: map[string]cluster.Overrides{
		// devnet pointed at the embedded pair, to exercise its gasless rules.
		"devnet": {BaseRPC: testBaseURL, Ephemeral: testERURL, Router: testRouterURL},
	}})
	alice, bob := pubOf(seedKey("alice")), pubOf(seedKey("bob"))
	h.fund(alice, 1_000_000)
	post := func(path, body string) *response { return h.do("POST", path, body) }
	tb := func(vis, from, to, extra string) string {
		return transferBody(alice, bob, h.mint, vis, from, to, extra)
	}

	nomint := pubOf(seedKey("no such mint"))
	apiError(t, post("/v1/spl/transfer", transferBody(alice, bob, nomint, "public", "base", "base", "")), 400, "MINT_NOT_FOUND")
	e := apiError(t, post("/v1/spl/transfer", transferBody(alice, bob, alice, "public", "base", "base", "")), 400, "UNSUPPORTED_TOKEN_PROGRAM")
	if e["details"].(map[string]any)["owner"] != spl.SystemProgramID.String() {
		t.Fatal(e)
	}
	apiError(t, post("/v1/spl/transfer", tb("public", "base", "ephemeral", "")), 400, "UNSUPPORTED_TRANSFER_ROUTE")
	apiError(t, post("/v1/spl/transfer", tb("private", "base", "base", `,"minDelayMs":"5","maxDelayMs":"4"`)), 400, "INVALID_PRIVATE_TRANSFER")
	apiError(t, post("/v1/spl/transfer", tb("private", "base", "base", `,"maxDelayMs":"600001"`)), 400, "INVALID_PRIVATE_TRANSFER")
	apiError(t, post("/v1/spl/transfer", tb("private", "base", "base", `,"clientRefId":"99999999999999999999999"`)), 400, "INVALID_AMOUNT")
	apiError(t, post("/v1/spl/transfer", tb("public", "base", "base", `,"platformFeeBps":10`)), 400, "INVALID_PLATFORM_FEE")
	apiError(t, post("/v1/spl/transfer", tb("private", "base", "base", `,"initVaultIfMissing":true,"initIfMissing":true,"initAtasIfMissing":true`)), 400, "TRANSACTION_TOO_LARGE")
	apiError(t, post("/v1/spl/transfer", transferBody(alice, bob, h.mint, "public", "base", "base", "")[:0]+
		fmt.Sprintf(`{"from":%q,"to":"alice.block","mint":%q,"amount":5,"visibility":"public","fromBalance":"base","toBalance":"base"}`, alice, h.mint)), 400, "INVALID_STEALTH_TRANSFER")
	e = apiError(t, post("/v1/spl/transfer", fmt.Sprintf(`{"from":%q,"to":"alice.block","mint":%q,"amount":5,"visibility":"private","fromBalance":"base","toBalance":"base"}`, alice, h.mint)), 400, "STEALTH_POOL_NOT_FOUND")
	if e["details"].(map[string]any)["handle"] != "alice.block" {
		t.Fatal(e)
	}
	// Off-curve owner (a PDA) where the SDK rejects it.
	pda, _ := espl.FindRentPDA()
	apiError(t, post("/v1/spl/deposit", fmt.Sprintf(`{"owner":%q,"amount":5,"mint":%q}`, pda, h.mint)), 400, "INVALID_OWNER")
	// Gasless on devnet: the allow-list, the minimum, the sponsor.
	apiError(t, post("/v1/spl/transfer", tb("public", "base", "base", `,"gasless":true,"cluster":"devnet"`)), 400, "INVALID_GASLESS_TRANSFER_MINT")
	apiError(t, post("/v1/spl/transfer", transferBody(alice, bob, espl.USDCDevnet, "public", "base", "base", `,"gasless":true,"cluster":"devnet"`)), 400, "INVALID_GASLESS_TRANSFER_AMOUNT")
	apiError(t, post("/v1/spl/transfer", strings.Replace(transferBody(alice, bob, espl.USDCDevnet, "public", "base", "base", `,"gasless":true,"cluster":"devnet"`), `"amount":1000`, `"amount":600000`, 1)), 503, "SPONSOR_UNAVAILABLE")
	// The source eATA is delegated to another validator.
	eata, _ := espl.FindEphemeralATA(alice, h.mint)
	rec, _ := espl.FindDelegationRecord(eata)
	other := pubOf(seedKey("other validator"))
	h.put(h.base, map[solana.PublicKey]*ledger.Account{rec: {Lamports: 1_000_000, Owner: espl.DelegationProgramID,
		Data: espl.DelegationRecord{Authority: other, Owner: espl.ProgramID}.Encode()}})
	e = apiError(t, post("/v1/spl/transfer", tb("private", "base", "base", "")), 400, "EATA_VALIDATOR_MISMATCH")
	if e["details"].(map[string]any)["accounts"].([]any)[0].(map[string]any)["currentValidator"] != other.String() {
		t.Fatal(e)
	}
	// Schema rules of the interface spec: visibility, fromBalance and
	// toBalance are required; amount ≥ 1; split ≤ 15.
	e = apiError(t, post("/v1/spl/transfer", fmt.Sprintf(`{"from":%q,"to":%q,"mint":%q,"amount":1}`, alice, bob, h.mint)), 422, "VALIDATION_ERROR")
	if e["message"] != "Missing required fields: visibility, fromBalance, toBalance" {
		t.Fatal(e["message"])
	}
	apiError(t, post("/v1/spl/transfer", strings.Replace(tb("public", "base", "base", ""), `"amount":1000`, `"amount":0`, 1)), 422, "VALIDATION_ERROR")
	apiError(t, post("/v1/spl/transfer", tb("private", "base", "base", `,"split":16`)), 422, "VALIDATION_ERROR")
}
