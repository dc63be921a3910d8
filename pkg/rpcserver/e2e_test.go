package rpcserver

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/token"
	"github.com/gagliardetto/solana-go/rpc"
	"github.com/gagliardetto/solana-go/rpc/jsonrpc"

	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// node is a ledger served over real HTTP.
type node struct {
	l      *ledger.Ledger
	h      *Handler
	url    string
	client *rpc.Client
}

func startNode(t testing.TB, cfg ledger.Config) *node {
	t.Helper()
	l, err := ledger.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := New(l, Options{})
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		if err := l.Close(); err != nil {
			t.Error(err)
		}
	})
	return &node{l: l, h: h, url: srv.URL, client: rpc.New(srv.URL)}
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newKey(t testing.TB) ed25519.PrivateKey {
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func pub(k ed25519.PrivateKey) solana.PublicKey { return solana.PublicKeyFromBytes(k[32:]) }

// signed compiles and signs ixs against a blockhash.
func signed(t testing.TB, bh solana.Hash, payer ed25519.PrivateKey, ixs []txwire.Instruction, signers ...ed25519.PrivateKey) []byte {
	t.Helper()
	msg, err := txwire.Compile(pub(payer), ixs, bh)
	if err != nil {
		t.Fatal(err)
	}
	tx := txwire.NewUnsigned(msg)
	if err := tx.Sign(append([]ed25519.PrivateKey{payer}, signers...)...); err != nil {
		t.Fatal(err)
	}
	return tx.Bytes()
}

func (n *node) blockhash(t testing.TB) solana.Hash {
	t.Helper()
	r, err := n.client.GetLatestBlockhash(ctxT(t), rpc.CommitmentConfirmed)
	if err != nil {
		t.Fatal(err)
	}
	return r.Value.Blockhash
}

// send submits over HTTP (base64, preflight at confirmed).
func (n *node) send(t testing.TB, raw []byte) solana.Signature {
	t.Helper()
	sig, err := n.client.SendRawTransactionWithOpts(ctxT(t), raw, rpc.TransactionOpts{PreflightCommitment: rpc.CommitmentProcessed})
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	return sig
}

// confirm polls getSignatureStatuses until the transaction is confirmed,
// as the web3.js confirmation loop does (a failed transaction is reported
// with its error once confirmed too, so tests can read its effects).
func (n *node) confirm(t testing.TB, sig solana.Signature) *rpc.SignatureStatusesResult {
	t.Helper()
	ctx := ctxT(t)
	for {
		res, err := n.client.GetSignatureStatuses(ctx, false, sig)
		if err != nil {
			t.Fatal(err)
		}
		if st := res.Value[0]; st != nil && (st.ConfirmationStatus == rpc.ConfirmationStatusConfirmed || st.ConfirmationStatus == rpc.ConfirmationStatusFinalized) {
			return st
		}
		select {
		case <-ctx.Done():
			t.Fatalf("transaction %s not confirmed", sig)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func TestEndToEndWithSolanaGo(t *testing.T) {
	n := startNode(t, ledger.Config{Name: "e2e", SlotDuration: 20 * time.Millisecond, FinalityDepth: 3})
	ctx := ctxT(t)
	c := n.client

	if h, err := c.GetHealth(ctx); err != nil || h != "ok" {
		t.Fatalf("health %q %v", h, err)
	}
	if v, err := c.GetVersion(ctx); err != nil || v.SolanaCore == "" {
		t.Fatalf("version %+v %v", v, err)
	}
	if g, err := c.GetGenesisHash(ctx); err != nil || g != n.l.GenesisHash() {
		t.Fatalf("genesis %s %v", g, err)
	}
	if id, err := c.GetIdentity(ctx); err != nil || id.Identity != n.l.Identity() {
		t.Fatalf("identity %+v %v", id, err)
	}
	if r, err := c.GetMinimumBalanceForRentExemption(ctx, 165, rpc.CommitmentFinalized); err != nil || r != 2_039_280 {
		t.Fatalf("rent %d %v", r, err)
	}

	// Airdrops are real, confirmable transactions.
	alice, bob, mintKey := newKey(t), newKey(t), newKey(t)
	for _, k := range []ed25519.PrivateKey{alice, bob} {
		sig, err := c.RequestAirdrop(ctx, pub(k), 10_000_000_000, rpc.CommitmentConfirmed)
		if err != nil {
			t.Fatal(err)
		}
		if st := n.confirm(t, sig); st.Err != nil {
			t.Fatalf("airdrop failed: %v", st.Err)
		}
	}
	if b, err := c.GetBalance(ctx, pub(alice), rpc.CommitmentConfirmed); err != nil || b.Value != 10_000_000_000 {
		t.Fatalf("balance %+v %v", b, err)
	}

	// Mint and token accounts.
	mint := pub(mintKey)
	aliceAta := spl.AssociatedTokenAddress(pub(alice), mint, spl.TokenProgramID)
	bobAta := spl.AssociatedTokenAddress(pub(bob), mint, spl.TokenProgramID)
	n.confirm(t, n.send(t, signed(t, n.blockhash(t), alice, []txwire.Instruction{
		spl.SystemCreateAccount(pub(alice), mint, 1_461_600, spl.MintSize, spl.TokenProgramID),
		spl.TokenInitializeMint2(spl.TokenProgramID, mint, 6, pub(alice), nil),
		spl.CreateAssociatedTokenAccount(pub(alice), pub(alice), mint, spl.TokenProgramID, true),
		spl.CreateAssociatedTokenAccount(pub(alice), pub(bob), mint, spl.TokenProgramID, true),
		spl.TokenMintTo(spl.TokenProgramID, mint, aliceAta, pub(alice), 5_000_000),
	}, mintKey)))

	// TransferChecked built with solana-go's own instruction builder and
	// transaction type, sent with SendTransactionWithOpts.
	ix := token.NewTransferCheckedInstruction(1_500_000, 6, aliceAta, mint, bobAta, pub(alice), nil).Build()
	stx, err := solana.NewTransaction([]solana.Instruction{ix}, n.blockhash(t), solana.TransactionPayer(pub(alice)))
	if err != nil {
		t.Fatal(err)
	}
	aliceKey := solana.PrivateKey(alice)
	if _, err := stx.Sign(func(k solana.PublicKey) *solana.PrivateKey {
		if k == pub(alice) {
			return &aliceKey
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sig, err := c.SendTransactionWithOpts(ctx, stx, rpc.TransactionOpts{PreflightCommitment: rpc.CommitmentConfirmed})
	if err != nil {
		t.Fatal(err)
	}
	if st := n.confirm(t, sig); st.Err != nil {
		t.Fatalf("transfer failed: %v", st.Err)
	}

	v0 := uint64(0)
	txr, err := c.GetTransaction(ctx, sig, &rpc.GetTransactionOpts{Commitment: rpc.CommitmentConfirmed, MaxSupportedTransactionVersion: &v0})
	if err != nil {
		t.Fatal(err)
	}
	if txr.Version != rpc.LegacyTransactionVersion || txr.BlockTime == nil || txr.Meta.Err != nil || txr.Meta.Fee != 5000 {
		t.Fatalf("getTransaction %+v meta %+v", txr, txr.Meta)
	}
	post := map[solana.PublicKey]string{}
	for _, tb := range txr.Meta.PostTokenBalances {
		if tb.Mint != mint || tb.UiTokenAmount.Decimals != 6 || tb.ProgramId == nil || *tb.ProgramId != spl.TokenProgramID {
			t.Errorf("token balance %+v", tb)
		}
		post[*tb.Owner] = tb.UiTokenAmount.Amount
	}
	if post[pub(alice)] != "3500000" || post[pub(bob)] != "1500000" {
		t.Fatalf("post token balances %v", post)
	}
	if len(txr.Meta.PreTokenBalances) != 2 || txr.Meta.ComputeUnitsConsumed == nil || len(txr.Meta.LogMessages) == 0 {
		t.Fatalf("meta %+v", txr.Meta)
	}
	decoded, err := txr.Transaction.GetTransaction()
	if err != nil || decoded.Signatures[0] != sig {
		t.Fatalf("json transaction: %v", err)
	}
	b64, err := c.GetTransaction(ctx, sig, &rpc.GetTransactionOpts{Encoding: solana.EncodingBase64, Commitment: rpc.CommitmentConfirmed})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := stx.MarshalBinary()
	if !bytes.Equal(b64.Transaction.GetBinary(), want) {
		t.Fatal("base64 transaction differs from the sent bytes")
	}

	// Token reads.
	bal, err := c.GetTokenAccountBalance(ctx, bobAta, rpc.CommitmentConfirmed)
	if err != nil || bal.Value.Amount != "1500000" || bal.Value.UiAmountString != "1.5" {
		t.Fatalf("token balance %+v %v", bal, err)
	}
	owned, err := c.GetTokenAccountsByOwner(ctx, pub(bob), &rpc.GetTokenAccountsConfig{Mint: &mint}, &rpc.GetTokenAccountsOpts{Encoding: solana.EncodingBase64, Commitment: rpc.CommitmentConfirmed})
	if err != nil || len(owned.Value) != 1 || owned.Value[0].Pubkey != bobAta {
		t.Fatalf("token accounts %+v %v", owned, err)
	}
	if ta, err := spl.DecodeTokenAccount(owned.Value[0].Account.Data.GetBinary()); err != nil || ta.Amount != 1_500_000 {
		t.Fatalf("decoded token account %+v %v", ta, err)
	}
	supply, err := c.GetTokenSupply(ctx, mint, rpc.CommitmentConfirmed)
	if err != nil || supply.Value.Amount != "5000000" {
		t.Fatalf("supply %+v %v", supply, err)
	}
	largest, err := c.GetTokenLargestAccounts(ctx, mint, rpc.CommitmentConfirmed)
	if err != nil || len(largest.Value) != 2 || largest.Value[0].Address != aliceAta {
		t.Fatalf("largest %+v %v", largest, err)
	}
	parsed, err := c.GetAccountInfoWithOpts(ctx, bobAta, &rpc.GetAccountInfoOpts{Encoding: solana.EncodingJSONParsed, Commitment: rpc.CommitmentConfirmed})
	if err != nil {
		t.Fatal(err)
	}
	if js := string(parsed.Value.Data.GetRawJSON()); !strings.Contains(js, `"uiAmountString":"1.5"`) || !strings.Contains(js, `"program":"spl-token"`) {
		t.Fatalf("jsonParsed %s", js)
	}

	// A transfer that cannot succeed: with preflight it is refused with
	// -32002; without, it lands, fails with Custom(1) and keeps the fee.
	over := signed(t, n.blockhash(t), bob, []txwire.Instruction{
		spl.TokenTransferChecked(spl.TokenProgramID, bobAta, mint, aliceAta, pub(bob), 1_500_001, 6),
	})
	_, err = c.SendRawTransactionWithOpts(ctx, over, rpc.TransactionOpts{PreflightCommitment: rpc.CommitmentConfirmed})
	var rerr *jsonrpc.RPCError
	if !errors.As(err, &rerr) || rerr.Code != -32002 || rerr.Message != "Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1" {
		t.Fatalf("preflight error %v", err)
	}
	if data, _ := json.Marshal(rerr.Data); !strings.Contains(string(data), `"err":{"InstructionError":[0,{"Custom":1}]}`) || !strings.Contains(string(data), "insufficient funds") {
		t.Fatalf("preflight data %s", data)
	}
	before, _ := c.GetBalance(ctx, pub(bob), rpc.CommitmentConfirmed)
	fsig, err := c.SendRawTransactionWithOpts(ctx, over, rpc.TransactionOpts{SkipPreflight: true})
	if err != nil {
		t.Fatal(err)
	}
	st := n.confirm(t, fsig)
	if j, _ := json.Marshal(st.Err); string(j) != `{"InstructionError":[0,{"Custom":1}]}` {
		t.Fatalf("status err %s", j)
	}
	// The deprecated "status" field, as Agave renders it, for a failure
	// and a success, in statuses and in the transaction's meta.
	for _, tc := range []struct {
		sig  solana.Signature
		want string
	}{
		{fsig, `"status":{"Err":{"InstructionError":[0,{"Custom":1}]}}`},
		{n.send(t, signed(t, n.blockhash(t), alice, []txwire.Instruction{spl.Memo("status")})), `"status":{"Ok":null}`},
	} {
		n.confirm(t, tc.sig)
		raw, rpcErr := call(t, n.h, "getSignatureStatuses", []string{tc.sig.String()})
		if rpcErr != nil || !strings.Contains(string(raw), tc.want) {
			t.Fatalf("getSignatureStatuses %s: %s %v, want %s", tc.sig, raw, rpcErr, tc.want)
		}
		raw, rpcErr = call(t, n.h, "getTransaction", tc.sig.String(), map[string]string{"commitment": "confirmed", "encoding": "json"})
		if rpcErr != nil || !strings.Contains(string(raw), tc.want) {
			t.Fatalf("getTransaction %s: %s %v, want %s", tc.sig, raw, rpcErr, tc.want)
		}
	}
	after, _ := c.GetBalance(ctx, pub(bob), rpc.CommitmentConfirmed)
	if before.Value-after.Value != 5000 {
		t.Fatalf("fee %d", before.Value-after.Value)
	}
	ftx, err := c.GetTransaction(ctx, fsig, &rpc.GetTransactionOpts{Commitment: rpc.CommitmentConfirmed})
	if err != nil || ftx.Meta.Fee != 5000 || ftx.Meta.Err == nil {
		t.Fatalf("failed tx %+v %v", ftx, err)
	}
	if bal, _ := c.GetTokenAccountBalance(ctx, bobAta, rpc.CommitmentConfirmed); bal.Value.Amount != "1500000" {
		t.Fatal("failed transfer moved tokens")
	}

	// History with a memo.
	msig := n.send(t, signed(t, n.blockhash(t), alice, []txwire.Instruction{spl.Memo("invoice 42")}))
	n.confirm(t, msig)
	sigs, err := c.GetSignaturesForAddressWithOpts(ctx, pub(alice), &rpc.GetSignaturesForAddressOpts{Commitment: rpc.CommitmentConfirmed})
	if err != nil || len(sigs) < 3 || sigs[0].Signature != msig || sigs[0].Memo == nil || *sigs[0].Memo != "[10] invoice 42" {
		t.Fatalf("signatures %+v %v", sigs, err)
	}

	// Blocks, slots and friends.
	slot, err := c.GetSlot(ctx, rpc.CommitmentConfirmed)
	if err != nil || slot == 0 {
		t.Fatal(slot, err)
	}
	blocks, err := c.GetBlocksWithLimit(ctx, 0, 5, rpc.CommitmentConfirmed)
	if err != nil || len(*blocks) != 5 || (*blocks)[0] != 0 {
		t.Fatalf("blocks %v %v", blocks, err)
	}
	blk, err := c.GetBlockWithOpts(ctx, txr.Slot, &rpc.GetBlockOpts{Commitment: rpc.CommitmentConfirmed, MaxSupportedTransactionVersion: &v0})
	if err != nil || len(blk.Transactions) == 0 || blk.BlockHeight == nil {
		t.Fatalf("block %+v %v", blk, err)
	}
	if bt, err := c.GetBlockTime(ctx, txr.Slot); err != nil || bt == nil || int64(*bt) != int64(*txr.BlockTime) {
		t.Fatalf("block time %v %v", bt, err)
	}
	ei, err := c.GetEpochInfo(ctx, rpc.CommitmentConfirmed)
	if err != nil || ei.SlotsInEpoch != ledger.DefaultSlotsPerEpoch || ei.TransactionCount == nil || *ei.TransactionCount < 5 {
		t.Fatalf("epoch info %+v %v", ei, err)
	}
	bh, err := c.GetLatestBlockhash(ctx, rpc.CommitmentFinalized)
	if err != nil {
		t.Fatal(err)
	}
	valid, err := c.IsBlockhashValid(ctx, bh.Value.Blockhash, rpc.CommitmentFinalized)
	if err != nil || !valid.Value {
		t.Fatalf("isBlockhashValid %+v %v", valid, err)
	}
	msg, _ := txwire.Compile(pub(alice), []txwire.Instruction{spl.Memo("fee")}, bh.Value.Blockhash)
	fee, err := c.GetFeeForMessage(ctx, base64.StdEncoding.EncodeToString(msg.Bytes()), rpc.CommitmentFinalized)
	if err != nil || fee.Value == nil || *fee.Value != 5000 {
		t.Fatalf("fee for message %+v %v", fee, err)
	}
	sim, err := c.SimulateRawTransactionWithOpts(ctx, signed(t, n.blockhash(t), alice, []txwire.Instruction{spl.Memo("sim")}),
		&rpc.SimulateTransactionOpts{Commitment: rpc.CommitmentConfirmed, SigVerify: true})
	if err != nil || sim.Value.Err != nil || len(sim.Value.Logs) == 0 || sim.Value.UnitsConsumed == nil {
		t.Fatalf("simulate %+v %v", sim, err)
	}
	count, err := c.GetTransactionCount(ctx, rpc.CommitmentConfirmed)
	if err != nil || count < 6 {
		t.Fatalf("count %d %v", count, err)
	}
	// Finalized eventually, with confirmations null.
	for {
		res, err := c.GetSignatureStatuses(ctx, true, sig)
		if err != nil {
			t.Fatal(err)
		}
		if st := res.Value[0]; st.ConfirmationStatus == rpc.ConfirmationStatusFinalized {
			if st.Confirmations != nil {
				t.Fatal("confirmations should be null when finalized")
			}
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// rawCall posts body and decodes the JSON response.
func rawCall(t testing.TB, url, body string) (int, any) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if len(b) == 0 {
		return resp.StatusCode, nil
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("response is not JSON: %q", b)
	}
	return resp.StatusCode, v
}
