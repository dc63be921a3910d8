package api

import (
	"encoding/json"
	"fmt"
	"net/url"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/cluster"
	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// TestParityMintLookup: a deposit's mint is decided on one getAccountInfo
// (hosted cases "returns MINT_NOT_FOUND when a deposit mint account is
// missing", "returns UNSUPPORTED_TOKEN_PROGRAM when a deposit mint owner
// is unsupported", "returns RPC_ERROR when resolving a deposit mint token
// program fails").
func TestParityMintLookup(t *testing.T) {
	log := &callLog{}
	base, er := newMockUpstream(t, "base", log), newMockUpstream(t, "er", log)
	devBase, devER := newMockUpstream(t, "devnet-base", log), newMockUpstream(t, "devnet-er", log)
	g := newGateway(t, hostedEnv(base, er, devBase, devER))
	owner, validator := pubOf(seedKey("owner")), pubOf(seedKey("validator"))
	mint := solana.MustPublicKeyFromBase58("2b1kV6DkPAnxd5ixfnxCpjxmKwqjjaYmCZfHsFu24GXo")
	names := map[string]string{mint.String(): "mint"}
	deposit := fmt.Sprintf(`{"owner":%q,"mint":%q,"amount":1,"validator":%q}`, owner, mint, validator)

	base.accounts(map[solana.PublicKey]*acct{})
	wantError(t, g.do("POST", "/v1/spl/deposit", deposit), 400, payments.CodeMintNotFound, "Mint account not found")
	wantCalls(t, log.pattern(names), []string{"base getAccountInfo mint"})

	log.reset()
	base.accounts(map[solana.PublicKey]*acct{mint: {Owner: solana.SystemProgramID, Lamports: 1, Data: make([]byte, 82)}})
	e := wantError(t, g.do("POST", "/v1/spl/deposit", deposit), 400, payments.CodeUnsupportedTokenProgram, "Mint owner is not a supported token program")
	if b, _ := json.Marshal(e["details"]); string(b) != fmt.Sprintf(`{"mint":%q,"owner":%q}`, mint, solana.SystemProgramID) {
		t.Fatalf("details %s", b)
	}
	wantCalls(t, log.pattern(names), []string{"base getAccountInfo mint"})

	log.reset()
	base.on("getAccountInfo", func([]json.RawMessage, url.Values) (any, *rpcFail) {
		return nil, &rpcFail{Code: -32000, Message: "mint lookup failed"}
	})
	e = wantError(t, g.do("POST", "/v1/spl/deposit", deposit), 502, apierr.CodeRPC, "Failed to resolve mint token program")
	d := e["details"].(map[string]any)
	if d["mint"] != mint.String() || d["message"] != "mint lookup failed" || len(d) != 2 {
		t.Fatalf("details %v", d)
	}
	wantCalls(t, log.pattern(names), []string{"base getAccountInfo mint"})
}

// TestParityUndelegateTEEFallback: an eATA the router reports delegated
// without an fqdn, whose delegation record names the TEE validator, is
// undelegated through the TEE rollup; the router is asked before the
// record is read (hosted case "falls back to the hardcoded TEE endpoint
// when router delegation status has no fqdn": mint, router, delegation
// record, blockhash).
func TestParityUndelegateTEEFallback(t *testing.T) {
	log := &callLog{}
	base, er := newMockUpstream(t, "base", log), newMockUpstream(t, "er", log)
	devBase, devER := newMockUpstream(t, "devnet-base", log), newMockUpstream(t, "devnet-er", log)
	router, tee := newMockUpstream(t, "router", log), newMockUpstream(t, "tee", log)
	env := hostedEnv(base, er, devBase, devER)
	env["EPHEMERAL_TEE_RPC_URL"] = tee.URL
	g := newGateway(t, env, gatewayOptions{base: cluster.Overrides{PerCluster: map[string]cluster.Overrides{"mainnet": {Router: router.URL}}}})
	payer := pubOf(seedKey("owner"))
	mint := solana.MustPublicKeyFromBase58("4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU")
	eata, _ := espl.FindEphemeralATA(payer, mint)
	rec, _ := espl.FindDelegationRecord(eata)
	payerRec, _ := espl.FindDelegationRecord(payer)
	base.accounts(map[solana.PublicKey]*acct{
		mint: {Owner: spl.TokenProgramID, Lamports: 1, Data: make([]byte, 82)},
		rec:  {Owner: espl.DelegationProgramID, Lamports: 1, Data: espl.DelegationRecord{Authority: espl.ValidatorTEE, Owner: espl.ProgramID}.Encode()},
	})
	router.result("getDelegationStatus", map[string]any{"isDelegated": true})
	tee.blockhash(solana.Hash{1}, 123)
	names := map[string]string{mint.String(): "mint", eata.String(): "eata", rec.String(): "eata-record", payerRec.String(): "payer-record"}

	out := ok[payments.UndelegateEphemeralATAResponse](t, g.do("POST", "/v1/spl/undelegate-ephemeral-ata", fmt.Sprintf(`{"payer":%q,"mint":%q}`, payer, mint)))
	if out.SendRPCEndpoint != tee.URL || out.SendTo != "ephemeral" || out.RecentBlockhash != (solana.Hash{1}).String() || out.Validator != espl.ValidatorTEE.String() {
		t.Fatalf("%+v", out)
	}
	wantCalls(t, log.pattern(names), []string{
		"base getAccountInfo mint", "router getDelegationStatus eata", "base getAccountInfo eata-record",
		"base getAccountInfo payer-record", "tee getLatestBlockhash",
	})

	// Without EPHEMERAL_TEE_RPC_URL no default TEE host is contacted: the
	// endpoint cannot be resolved (the hosted API would use
	// https://mainnet-tee.magicblock.app).
	delete(env, "EPHEMERAL_TEE_RPC_URL")
	g = newGateway(t, env, gatewayOptions{base: cluster.Overrides{PerCluster: map[string]cluster.Overrides{"mainnet": {Router: router.URL}}}})
	log.reset()
	e := wantError(t, g.do("POST", "/v1/spl/undelegate-ephemeral-ata", fmt.Sprintf(`{"payer":%q,"mint":%q}`, payer, mint)), 400,
		payments.CodeEphemeralEndpointUnresolved, "Ephemeral RPC endpoint cannot be retrieved")
	if d := e["details"].(map[string]any); d["delegatedValidator"] != espl.ValidatorTEE.String() || d["routerError"] != "Delegation router did not return a usable fqdn" {
		t.Fatalf("details %v", d)
	}
	if log.count("", "getLatestBlockhash") != 0 {
		t.Fatalf("blockhash read: %v", log.pattern(names))
	}
}

// TestParityBlockhashPerBuild: against network upstreams every build
// reads its own blockhash (hosted case "caches the private transfer
// lookup table across transfer builds": one getLatestBlockhash per build;
// ferry builds legacy transactions, so no lookup table is read).
func TestParityBlockhashPerBuild(t *testing.T) {
	log := &callLog{}
	base, er := newMockUpstream(t, "base", log), newMockUpstream(t, "er", log)
	devBase, devER := newMockUpstream(t, "devnet-base", log), newMockUpstream(t, "devnet-er", log)
	g := newGateway(t, hostedEnv(base, er, devBase, devER))
	owner, to, validator := pubOf(seedKey("owner")), pubOf(seedKey("bob")), pubOf(seedKey("validator"))
	mint := spl.NativeMintID
	eata, _ := espl.FindEphemeralATA(owner, mint)
	rec, _ := espl.FindDelegationRecord(eata)
	rent, _ := espl.FindRentPDA()
	ata := spl.AssociatedTokenAddress(owner, mint, spl.TokenProgramID)
	data := make([]byte, 165)
	data[64] = 100 // 100 lamports of wSOL: enough, no wrap
	base.accounts(map[solana.PublicKey]*acct{
		mint: {Owner: spl.TokenProgramID, Lamports: 1, Data: make([]byte, 82)},
		ata:  {Owner: spl.TokenProgramID, Lamports: 2_039_280, Data: data},
		rent: {Owner: espl.ProgramID, Lamports: payments.RentPDATargetLamports},
	}).blockhash(solana.Hash{2}, 321)
	names := map[string]string{mint.String(): "mint", rec.String(): "eata-record", rent.String(): "rent-pda", ata.String(): "ata"}
	body := fmt.Sprintf(`{"from":%q,"to":%q,"mint":%q,"amount":2,"visibility":"private","fromBalance":"base","toBalance":"base",`+
		`"validator":%q,"minDelayMs":"0","maxDelayMs":"0","split":1}`, owner, to, mint, validator)

	for range 2 {
		out := ok[payments.UnsignedTransaction](t, g.do("POST", "/v1/spl/transfer", body))
		if out.Version != "legacy" || out.RecentBlockhash != (solana.Hash{2}).String() || out.LastValidBlockHeight != 321 {
			t.Fatalf("%+v", out)
		}
		if _, err := txwire.DecodeBase64(out.TransactionBase64); err != nil {
			t.Fatal(err)
		}
	}
	// The mint's token program is remembered after the first build (the
	// hosted API reads it every time: a documented difference); the rest
	// is read per build.
	build := []string{"base getAccountInfo ata", "base getAccountInfo rent-pda", "base getAccountInfo eata-record", "base getLatestBlockhash"}
	wantCalls(t, log.pattern(names), append(append([]string{"base getAccountInfo mint"}, build...), build...))
}

// TestParityOffCurveGasless: gasless is ignored for an off-curve sender
// and the build fails with the SDK's error (hosted case "ignores gasless
// for off-curve transfer senders").
func TestParityOffCurveGasless(t *testing.T) {
	log := &callLog{}
	base, er := newMockUpstream(t, "base", log), newMockUpstream(t, "er", log)
	devBase, devER := newMockUpstream(t, "devnet-base", log), newMockUpstream(t, "devnet-er", log)
	g := newGateway(t, hostedEnv(base, er, devBase, devER)) // no sponsor: gasless would be a 503
	offCurve, _, err := espl.FindProgramAddress([][]byte{[]byte("off-curve-sender")}, espl.ProgramID)
	if err != nil {
		t.Fatal(err)
	}
	usdc := solana.MustPublicKeyFromBase58("4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU")
	devBase.accounts(map[solana.PublicKey]*acct{usdc: {Owner: spl.TokenProgramID, Lamports: 1, Data: make([]byte, 82)}}).blockhash(solana.Hash{3}, 1)
	devER.identity(pubOf(seedKey("validator")))
	body := fmt.Sprintf(`{"from":%q,"to":%q,"mint":%q,"amount":1,"cluster":"devnet","visibility":"public","fromBalance":"base","toBalance":"base","gasless":true}`,
		offCurve, pubOf(seedKey("bob")), usdc)
	wantError(t, g.do("POST", "/v1/spl/transfer", body), 400, payments.CodeTransactionBuildError, "Owner public key is off-curve")
	wantCalls(t, log.pattern(map[string]string{usdc.String(): "usdc"}), []string{"devnet-base getAccountInfo usdc", "devnet-er getIdentity"})
}
