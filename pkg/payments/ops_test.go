package payments

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/schema"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// locatorChain adds a delegation router and per-node blockhashes to
// testChain.
type locatorChain struct {
	*testChain
	routerDelegated bool
	routerFQDN      string
	routerErr       error
	tee             string
	asked           []string // nodes asked for a blockhash
}

func nodeHash(url string) solana.Hash { return solana.Hash(sha256.Sum256([]byte("node:" + url))) }

func (c *locatorChain) DelegationStatus(context.Context, solana.PublicKey) (bool, string, error) {
	return c.routerDelegated, c.routerFQDN, c.routerErr
}
func (c *locatorChain) TEEEndpoint() string { return c.tee }
func (c *locatorChain) LatestBlockhashAt(_ context.Context, url string) (Blockhash, error) {
	c.asked = append(c.asked, url)
	return Blockhash{Hash: nodeHash(url), LastValidBlockHeight: 777}, nil
}

func delegate(ch *testChain, account, to solana.PublicKey) {
	rec, _ := espl.FindDelegationRecord(account)
	ch.accounts[rec] = &Account{Owner: espl.DelegationProgramID, Lamports: 1, Data: espl.DelegationRecord{Authority: to, Owner: espl.ProgramID}.Encode()}
}

func undelegateBody() string { return fmt.Sprintf(`{"payer":%q,"mint":%q}`, alice, mint) }

func TestUndelegateEndpointResolution(t *testing.T) {
	eata, _ := espl.FindEphemeralATA(alice, mint)
	other := pub(keyFromSeed("other"))
	cases := []struct {
		name     string
		setup    func(*locatorChain)
		endpoint string
	}{
		{"router", func(c *locatorChain) {
			c.routerDelegated, c.routerFQDN = true, " HTTPS://Devnet-AS.example/ "
			delegate(c.testChain, eata, other)
		}, "https://devnet-as.example"},
		{"router without fqdn, TEE record", func(c *locatorChain) {
			c.routerDelegated = true
			delegate(c.testChain, eata, espl.ValidatorTEE)
		}, "https://tee.example"},
		{"router down, TEE record", func(c *locatorChain) {
			c.routerErr = errors.New("dial https://router.example: refused")
			delegate(c.testChain, eata, espl.ValidatorTEE)
		}, "https://tee.example"},
		{"own rollup validator", func(c *locatorChain) {
			delegate(c.testChain, eata, validator)
		}, "http://127.0.0.1:7799"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ch := &locatorChain{testChain: newTestChain(), tee: "https://tee.example"}
			c.setup(ch)
			out, err := (&Planner{}).UndelegateEphemeralATA(context.Background(), ch, decodeBody[UndelegateEphemeralATARequest](t, undelegateBody()))
			if err != nil {
				t.Fatal(err)
			}
			got, tx := labels(t, &out.UnsignedTransaction)
			if strings.Join(got, " ") != "espl:5" || len(tx.Message.Instructions[0].Data) != 1 {
				t.Fatalf("instructions %v data %x", got, tx.Message.Instructions[0].Data)
			}
			if out.Kind != KindUndelegateEphemeralATA || out.SendTo != Ephemeral || out.SendRPCEndpoint != c.endpoint || out.InstructionCount != 1 {
				t.Fatalf("response %+v", out)
			}
			if tx.Message.RecentBlockhash != nodeHash(c.endpoint) || out.LastValidBlockHeight != 777 || len(ch.asked) != 1 || ch.asked[0] != c.endpoint {
				t.Fatalf("blockhash not from the resolved node: asked %v", ch.asked)
			}
			if len(out.RequiredSigners) != 1 || out.RequiredSigners[0] != alice.String() {
				t.Fatalf("signers %v", out.RequiredSigners)
			}
			ix, err := espl.Decode(tx.Message.Instructions[0].Data, accountsOf(tx, 0))
			if err != nil {
				t.Fatal(err)
			}
			u := ix.(espl.UndelegateEphemeralATAIx)
			if u.Owner != alice || u.EphemeralATA != eata || u.OwnerATA != spl.AssociatedTokenAddress(alice, mint, spl.TokenProgramID) || u.HasMagicFeeVault {
				t.Fatalf("ix %+v", u)
			}
		})
	}
}

func accountsOf(tx *txwire.Transaction, i int) []solana.PublicKey {
	var ks []solana.PublicKey
	for _, a := range tx.Message.Instructions[i].Accounts {
		ks = append(ks, tx.Message.AccountKeys[a])
	}
	return ks
}

func TestUndelegateErrors(t *testing.T) {
	eata, _ := espl.FindEphemeralATA(alice, mint)
	other := pub(keyFromSeed("other"))
	p := &Planner{}
	req := decodeBody[UndelegateEphemeralATARequest](t, undelegateBody())

	// Not delegated anywhere: unresolved, with the router's error.
	ch := &locatorChain{testChain: newTestChain(), routerErr: errors.New("Delegation router returned HTTP 500 at http://10.0.0.1/x")}
	_, err := p.UndelegateEphemeralATA(context.Background(), ch, req)
	ae := wantAPIError(t, err, 400, CodeEphemeralEndpointUnresolved)
	d := ae.Details.(map[string]any)
	rec, _ := espl.FindDelegationRecord(eata)
	if d["delegatedAccount"] != eata.String() || d["delegationRecord"] != rec.String() || d["routerIsDelegated"] != false ||
		d["delegatedValidator"] != nil || d["routerError"] != "Delegation router returned HTTP 500 at [redacted-url]" || d["cluster"] != "local" {
		t.Fatalf("details %v", d)
	}
	// Delegated to an unknown validator, router silent: unresolved.
	ch = &locatorChain{testChain: newTestChain()}
	delegate(ch.testChain, eata, other)
	_, err = p.UndelegateEphemeralATA(context.Background(), ch, req)
	ae = wantAPIError(t, err, 400, CodeEphemeralEndpointUnresolved)
	if ae.Details.(map[string]any)["delegatedValidator"] != other.String() {
		t.Fatalf("details %v", ae.Details)
	}
	// The payer is delegated to another validator than its eATA.
	ch = &locatorChain{testChain: newTestChain(), routerDelegated: true, routerFQDN: "https://er.example"}
	delegate(ch.testChain, eata, validator)
	delegate(ch.testChain, alice, other)
	_, err = p.UndelegateEphemeralATA(context.Background(), ch, req)
	ae = wantAPIError(t, err, 400, CodeValidatorMismatch)
	if d := ae.Details.(map[string]any); d["payerValidator"] != other.String() || d["ephemeralAtaValidator"] != validator.String() || d["ephemeralAta"] != eata.String() {
		t.Fatalf("details %v", d)
	}
	// Same validator: the fee vault and the validator are appended.
	delegate(ch.testChain, alice, validator)
	out, err := p.UndelegateEphemeralATA(context.Background(), ch, req)
	if err != nil {
		t.Fatal(err)
	}
	_, tx := labels(t, &out.UnsignedTransaction)
	ix := tx.Message.Instructions[0]
	vault, _ := espl.FindMagicFeeVault(validator)
	if len(ix.Data) != 33 || solana.PublicKeyFromBytes(ix.Data[1:]) != validator || accountsOf(tx, 0)[5] != vault || out.Validator != validator.String() {
		t.Fatalf("data %x accounts %v", ix.Data, accountsOf(tx, 0))
	}
	// Mint checks come first.
	ch = &locatorChain{testChain: newTestChain()}
	delete(ch.accounts, mint)
	_, err = p.UndelegateEphemeralATA(context.Background(), ch, req)
	wantAPIError(t, err, 400, CodeMintNotFound)
	ch.failReads = true
	_, err = p.UndelegateEphemeralATA(context.Background(), ch, req)
	wantAPIError(t, err, 502, "RPC_ERROR")
}

func TestUndelegateOffline(t *testing.T) {
	fc := &FixedChain{Blockhash: baseHash, LastValidBlockHeight: 9, TokenProgram: spl.TokenProgramID, Endpoint: "http://er.local:7799"}
	out, err := (&Planner{}).UndelegateEphemeralATA(context.Background(), fc, decodeBody[UndelegateEphemeralATARequest](t, undelegateBody()))
	if err != nil {
		t.Fatal(err)
	}
	if out.SendRPCEndpoint != "http://er.local:7799" || out.RecentBlockhash != baseHash.String() {
		t.Fatalf("%+v", out)
	}
	fc.Endpoint = ""
	_, err = (&Planner{}).UndelegateEphemeralATA(context.Background(), fc, decodeBody[UndelegateEphemeralATARequest](t, undelegateBody()))
	wantAPIError(t, err, 400, CodeEphemeralEndpointUnresolved)
}

func stealthBody(handle string, extra string) string {
	return fmt.Sprintf(`{"payer":%q,"authority":%q,"handle":%q,"destinations":[%q,%q]%s}`, alice, bob, handle, bob, validator, extra)
}

func TestStealthPool(t *testing.T) {
	ch := newTestChain()
	out, err := (&Planner{}).StealthPool(context.Background(), ch, decodeBody[StealthPoolRequest](t, stealthBody("alice.block", `,"splitAcrossKeys":true`)))
	if err != nil {
		t.Fatal(err)
	}
	pool, _, _ := espl.FindStealthPool([]byte("alice.block"))
	if out.StealthPool != pool.String() || out.Kind != KindStealthPool || out.SetupTransaction.Kind != KindStealthPool {
		t.Fatalf("%+v", out)
	}
	// The update goes to the rollup with a rollup blockhash, the setup to base.
	upd, utx := labels(t, &out.UnsignedTransaction)
	setup, stx := labels(t, out.SetupTransaction)
	if strings.Join(upd, " ") != "espl:21" || strings.Join(setup, " ") != "espl:22" {
		t.Fatalf("update %v setup %v", upd, setup)
	}
	if out.SendTo != Ephemeral || utx.Message.RecentBlockhash != ephHash || out.SetupTransaction.SendTo != Base || stx.Message.RecentBlockhash != baseHash {
		t.Fatal("layers")
	}
	if out.SetupTransaction.Validator != validator.String() {
		t.Fatalf("setup validator %q", out.SetupTransaction.Validator)
	}
	for _, tx := range []*UnsignedTransaction{&out.UnsignedTransaction, out.SetupTransaction} {
		if strings.Join(tx.RequiredSigners, ",") != alice.String()+","+bob.String() {
			t.Fatalf("signers %v", tx.RequiredSigners)
		}
	}
	// Instruction contents: the validator in the setup, flags and destinations in the update.
	sd := stx.Message.Instructions[0].Data
	if len(sd) != 1+256+32 || solana.PublicKeyFromBytes(sd[257:]) != validator || sd[1] != byte(len("alice.block")) {
		t.Fatalf("setup data %x", sd)
	}
	ud := utx.Message.Instructions[0].Data
	if len(ud) != 1+256+2+64 || ud[257] != espl.StealthFlagSplitAcrossKeys || ud[258] != 2 || solana.PublicKeyFromBytes(ud[259:291]) != bob {
		t.Fatalf("update data %x", ud)
	}
	// Payer == authority: one signer.
	body := fmt.Sprintf(`{"payer":%q,"authority":%q,"handle":"x","destinations":[%q]}`, alice, alice, bob)
	out, err = (&Planner{}).StealthPool(context.Background(), ch, decodeBody[StealthPoolRequest](t, body))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.RequiredSigners) != 1 || out.StealthPool == "" {
		t.Fatalf("%+v", out)
	}
}

func TestStealthPoolErrors(t *testing.T) {
	ch := newTestChain()
	p := &Planner{}
	// Invalid UTF-8 passes the byte-length schema rule but not the handle rule.
	req := decodeBody[StealthPoolRequest](t, stealthBody("ok", ""))
	req.Handle = "\xff"
	_, err := p.StealthPool(context.Background(), ch, req)
	wantAPIError(t, err, 400, CodeInvalidStealthHandle)
	req = decodeBody[StealthPoolRequest](t, fmt.Sprintf(`{"payer":%q,"authority":%q,"handle":"h","destinations":["11111111111111111111111111111111"]}`, alice, bob))
	_, err = p.StealthPool(context.Background(), ch, req)
	if ae := wantAPIError(t, err, 400, CodeInvalidPublicKey); ae.Message != "Invalid destinations[0]" {
		t.Fatal(ae.Message)
	}
	ch.failReads = true
	_, err = p.StealthPool(context.Background(), ch, decodeBody[StealthPoolRequest](t, stealthBody("h", "")))
	wantAPIError(t, err, 502, "RPC_ERROR")
	// Schema: handle length in bytes, destination count.
	for body, msg := range map[string]string{
		stealthBody(strings.Repeat("é", 128), ""): "Handle must be 255 UTF-8 bytes or fewer.",
		stealthBody("", ""):                       "String must contain at least 1 character(s)",
		fmt.Sprintf(`{"payer":%q,"authority":%q,"handle":"h","destinations":[]}`, alice, bob): "Array must contain at least 1 element(s)",
	} {
		var r StealthPoolRequest
		ae := wantAPIError(t, decodeErr(body, &r), 422, "VALIDATION_ERROR")
		if ae.Issues[0].Message != msg {
			t.Errorf("%s: %q", body, ae.Issues[0].Message)
		}
	}
}

func TestStealthPoolStatus(t *testing.T) {
	ch := newTestChain()
	pool, _, _ := espl.FindStealthPool([]byte("bob.block"))
	req := decodeBody[StealthPoolStatusRequest](t, `{"handle":"bob.block"}`)
	for _, c := range []struct {
		acct   *Account
		exists bool
	}{
		{nil, false},
		{&Account{Owner: spl.SystemProgramID, Lamports: 1}, false},
		{&Account{Owner: espl.ProgramID, Lamports: 1}, true},
		{&Account{Owner: espl.DelegationProgramID, Lamports: 1}, true},
	} {
		ch.accounts[pool] = c.acct
		if c.acct == nil {
			delete(ch.accounts, pool)
		}
		out, err := (&Planner{}).StealthPoolStatus(context.Background(), ch, req)
		if err != nil || out.StealthPool != pool.String() || out.Exists != c.exists {
			t.Fatalf("%+v %v", out, err)
		}
	}
	ch.failReads = true
	_, err := (&Planner{}).StealthPoolStatus(context.Background(), ch, req)
	if ae := wantAPIError(t, err, 502, "RPC_ERROR"); ae.Message != "Failed to fetch stealth pool account" {
		t.Fatal(ae.Message)
	}
}

func TestIsMintInitializedAndCrank(t *testing.T) {
	ch := newTestChain()
	p := &Planner{}
	queue, _ := espl.FindTransferQueue(mint, validator)
	ask := func() *MintInitializationResponse {
		out, err := p.IsMintInitialized(context.Background(), ch, decodeBody[MintInitializationRequest](t, fmt.Sprintf(`{"mint":%q}`, mint)))
		if err != nil {
			t.Fatal(err)
		}
		if out.Mint != mint.String() || out.Validator != validator.String() || out.TransferQueue != queue.String() {
			t.Fatalf("%+v", out)
		}
		return out
	}
	crankReq := decodeBody[TransferQueueEnsureCrankRequest](t, fmt.Sprintf(`{"mint":%q}`, mint))
	if ask().Initialized {
		t.Fatal("missing queue is initialized")
	}
	_, err := p.PlanEnsureCrank(context.Background(), ch, crankReq)
	if d := wantAPIError(t, err, 400, CodeTransferQueueNotInitialized).Details.(map[string]any); d["owner"] != nil || d["transferQueue"] != queue.String() {
		t.Fatalf("details %v", d)
	}
	ch.accounts[queue] = &Account{Owner: espl.ProgramID, Lamports: 1}
	if ask().Initialized {
		t.Fatal("undelegated queue is initialized")
	}
	_, err = p.PlanEnsureCrank(context.Background(), ch, crankReq)
	if d := wantAPIError(t, err, 400, CodeTransferQueueNotInitialized).Details.(map[string]any); d["owner"] != espl.ProgramID.String() {
		t.Fatalf("details %v", d)
	}
	ch.accounts[queue].Owner = espl.DelegationProgramID
	if !ask().Initialized {
		t.Fatal("delegated queue is not initialized")
	}
	plan, err := p.PlanEnsureCrank(context.Background(), ch, crankReq)
	if err != nil {
		t.Fatal(err)
	}
	payer := keyFromSeed("crank payer")
	raw, err := plan.Transaction(payer, ephHash)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := txwire.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.VerifySignatures(); err != nil {
		t.Fatal(err)
	}
	ix, err := espl.Decode(tx.Message.Instructions[0].Data, accountsOf(tx, 0))
	if err != nil {
		t.Fatal(err)
	}
	vault, _ := espl.FindMagicFeeVault(validator)
	if c := ix.(espl.EnsureQueueCrankIx); c.Payer != pub(payer) || c.Queue != queue || c.MagicFeeVault != vault {
		t.Fatalf("%+v", c)
	}
	// An explicit validator, and identity fallback.
	other := pub(keyFromSeed("other"))
	out, err := p.IsMintInitialized(context.Background(), ch, decodeBody[MintInitializationRequest](t, fmt.Sprintf(`{"mint":%q,"validator":%q}`, mint, other)))
	if err != nil || out.Validator != other.String() || out.Initialized {
		t.Fatalf("%+v %v", out, err)
	}
	ch.identErr = true
	out, _ = p.IsMintInitialized(context.Background(), ch, decodeBody[MintInitializationRequest](t, fmt.Sprintf(`{"mint":%q}`, mint)))
	if out.Validator != espl.ValidatorAsia.String() {
		t.Fatalf("fallback %s", out.Validator)
	}
	ch.failReads = true
	_, err = p.IsMintInitialized(context.Background(), ch, decodeBody[MintInitializationRequest](t, fmt.Sprintf(`{"mint":%q}`, mint)))
	wantAPIError(t, err, 502, "RPC_ERROR")
	_, err = p.PlanEnsureCrank(context.Background(), ch, crankReq)
	wantAPIError(t, err, 502, "RPC_ERROR")
}

// ephReader serves rollup accounts.
type ephReader map[solana.PublicKey]*Account

func (r ephReader) EphemeralAccount(_ context.Context, k solana.PublicKey) (*Account, error) {
	if a, ok := r[k]; ok && a == nil {
		return nil, errors.New("dial http://er.example: refused")
	}
	return r[k], nil
}

func TestBalances(t *testing.T) {
	ch := newTestChain()
	p := &Planner{}
	ata := spl.AssociatedTokenAddress(alice, mint, spl.TokenProgramID)
	req := decodeBody[BalanceRequest](t, fmt.Sprintf(`{"address":%q,"mint":%q}`, alice, mint))
	tokenAcct := func(amount uint64) *Account {
		return &Account{Owner: spl.TokenProgramID, Lamports: 1, Data: spl.TokenAccount{Mint: mint, Owner: alice, Amount: amount, State: 1}.Encode()}
	}
	out, err := p.BaseBalance(context.Background(), ch, req)
	if err != nil || out.Balance != "0" || out.ATA != ata.String() || out.Location != Base {
		t.Fatalf("%+v %v", out, err)
	}
	ch.accounts[ata] = tokenAcct(1234)
	if out, _ := p.BaseBalance(context.Background(), ch, req); out.Balance != "1234" {
		t.Fatalf("%+v", out)
	}

	er := ephReader{ata: tokenAcct(99)}
	out, err = p.PrivateBalance(context.Background(), ch, er, req)
	if err != nil || out.Balance != "0" || out.Location != Ephemeral {
		t.Fatalf("undelegated: %+v %v", out, err)
	}
	eata, _ := espl.FindEphemeralATA(alice, mint)
	delegate(ch, eata, validator)
	if out, err = p.PrivateBalance(context.Background(), ch, er, req); err != nil || out.Balance != "99" {
		t.Fatalf("delegated: %+v %v", out, err)
	}
	other := pub(keyFromSeed("other"))
	delegate(ch, eata, other)
	_, err = p.PrivateBalance(context.Background(), ch, er, req)
	if d := wantAPIError(t, err, 400, CodeEATADelegatedElsewhere).Details.(map[string]any); d["delegatedValidator"] != other.String() || d["selectedValidator"] != validator.String() {
		t.Fatalf("details %v", d)
	}
	delegate(ch, eata, validator)
	er[ata] = nil // read error
	_, err = p.PrivateBalance(context.Background(), ch, er, req)
	if ae := wantAPIError(t, err, 502, "RPC_ERROR"); ae.Details.(map[string]any)["location"] != Ephemeral || strings.Contains(fmt.Sprint(ae.Details), "http://") {
		t.Fatalf("details %v", ae.Details)
	}
	ch.failReads = true
	_, err = p.BaseBalance(context.Background(), ch, req)
	wantAPIError(t, err, 502, "RPC_ERROR")
}

func decodeErr(body string, dst any) error {
	return schema.Decode([]byte(body), dst)
}
