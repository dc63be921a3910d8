// Package e2e runs chainclient and the router against ferry's embedded chain
// node (pkg/ledger served by pkg/rpcserver) over real HTTP.
package e2e

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/router"
	"github.com/ferry-sh/ferry/pkg/rpcserver"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// node is one embedded chain served over HTTP.
type node struct {
	l      *ledger.Ledger
	url    string
	client *chainclient.Client
}

func startNode(t *testing.T, name string) *node {
	t.Helper()
	l, err := ledger.Open(ledger.Config{Name: name, SlotDuration: 10 * time.Millisecond, FinalityDepth: 2})
	if err != nil {
		t.Fatalf("open ledger %s: %v", name, err)
	}
	t.Cleanup(func() { l.Close() })
	srv := httptest.NewServer(rpcserver.New(l, rpcserver.Options{}))
	t.Cleanup(srv.Close)
	c, err := chainclient.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return &node{l: l, url: srv.URL, client: c}
}

func newKey(t *testing.T) ed25519.PrivateKey {
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func pub(k ed25519.PrivateKey) solana.PublicKey {
	var p solana.PublicKey
	copy(p[:], k[32:])
	return p
}

var fast = chainclient.ConfirmOptions{PollInterval: 10 * time.Millisecond}

// fund airdrops lamports through the RPC and waits for confirmation.
func fund(t *testing.T, c *chainclient.Client, to solana.PublicKey, lamports uint64) {
	t.Helper()
	ctx := t.Context()
	bh, err := c.GetLatestBlockhash(ctx, chainclient.Confirmed)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := c.RequestAirdrop(ctx, to, lamports, chainclient.Confirmed)
	if err != nil {
		t.Fatalf("requestAirdrop: %v", err)
	}
	if _, err := c.Confirm(ctx, sig, bh.LastValidBlockHeight, chainclient.Confirmed, fast); err != nil {
		t.Fatalf("confirm airdrop: %v", err)
	}
}

// transfer builds and signs a System transfer with a fresh blockhash.
func transfer(t *testing.T, c *chainclient.Client, from ed25519.PrivateKey, to solana.PublicKey, lamports uint64) ([]byte, chainclient.Blockhash) {
	t.Helper()
	bh, err := c.GetLatestBlockhash(t.Context(), chainclient.Confirmed)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := txwire.Compile(pub(from), []txwire.Instruction{spl.SystemTransfer(pub(from), to, lamports)}, bh.Hash)
	if err != nil {
		t.Fatal(err)
	}
	tx := txwire.NewUnsigned(msg)
	if err := tx.Sign(from); err != nil {
		t.Fatal(err)
	}
	return tx.Bytes(), bh
}

func TestClientAgainstEmbeddedNode(t *testing.T) {
	n := startNode(t, "e2e-base")
	c := n.client
	ctx := t.Context()

	id, err := c.GetIdentity(ctx)
	if err != nil || id.Identity != n.l.Identity() {
		t.Errorf("GetIdentity = %+v, %v; want %s", id, err, n.l.Identity())
	}
	if v, err := c.GetMinimumBalanceForRentExemption(ctx, 165, ""); err != nil || v != 2039280 {
		t.Errorf("rent for 165 bytes = %d, %v", v, err)
	}
	if _, err := c.GetSlot(ctx, chainclient.Processed); err != nil {
		t.Error(err)
	}
	if _, err := c.GetEpochInfo(ctx, ""); err != nil {
		t.Error(err)
	}

	alice, bob := newKey(t), newKey(t)
	fund(t, c, pub(alice), 2_000_000_000)
	if bal, err := c.GetBalance(ctx, pub(alice), chainclient.Confirmed); err != nil || bal != 2_000_000_000 {
		t.Fatalf("balance after airdrop = %d, %v", bal, err)
	}
	acct, err := c.GetAccountInfo(ctx, pub(alice), chainclient.Confirmed)
	if err != nil || acct == nil || acct.Owner != solana.SystemProgramID || acct.Lamports != 2_000_000_000 {
		t.Errorf("account = %+v, %v", acct, err)
	}
	if missing, err := c.GetAccountInfo(ctx, pub(bob), chainclient.Confirmed); err != nil || missing != nil {
		t.Errorf("missing account = %+v, %v", missing, err)
	}

	// A good transfer, sent and confirmed.
	raw, bh := transfer(t, c, alice, pub(bob), 1_000_000_000)
	sig, err := c.SendTransaction(ctx, raw, chainclient.SendOptions{PreflightCommitment: chainclient.Confirmed})
	if err != nil {
		t.Fatalf("sendTransaction: %v", err)
	}
	st, err := c.Confirm(ctx, sig, bh.LastValidBlockHeight, chainclient.Confirmed, fast)
	if err != nil || !st.ConfirmationStatus.AtLeast(chainclient.Confirmed) {
		t.Fatalf("confirm = %+v, %v", st, err)
	}
	st, err = c.Confirm(ctx, sig, bh.LastValidBlockHeight, chainclient.Finalized, fast)
	if err != nil || st.ConfirmationStatus != chainclient.Finalized {
		t.Fatalf("confirm finalized = %+v, %v", st, err)
	}
	accts, err := c.GetMultipleAccounts(ctx, []solana.PublicKey{pub(alice), pub(bob), pub(newKey(t))}, chainclient.Confirmed)
	if err != nil || len(accts) != 3 || accts[0] == nil || accts[1] == nil || accts[1].Lamports != 1_000_000_000 || accts[2] != nil {
		t.Errorf("accounts = %+v, %v", accts, err)
	}
	txJSON, err := c.GetTransaction(ctx, sig, chainclient.TransactionOptions{Commitment: chainclient.Confirmed})
	if err != nil || txJSON == nil {
		t.Fatalf("getTransaction = %s, %v", txJSON, err)
	}
	var tx struct {
		Meta struct {
			Err json.RawMessage `json:"err"`
			Fee uint64          `json:"fee"`
		} `json:"meta"`
	}
	if err := json.Unmarshal(txJSON, &tx); err != nil || tx.Meta.Fee != 5000 || string(tx.Meta.Err) != "null" {
		t.Errorf("transaction meta = %+v, %v", tx.Meta, err)
	}
	infos, err := c.GetSignaturesForAddress(ctx, pub(bob), chainclient.SignaturesOptions{Limit: 5, Commitment: chainclient.Confirmed})
	if err != nil || len(infos) != 1 || infos[0].Signature != sig {
		t.Errorf("signatures for bob = %+v, %v", infos, err)
	}
	sts, err := c.GetSignatureStatuses(ctx, []solana.Signature{sig, {}}, true)
	if err != nil || len(sts) != 2 || sts[0] == nil || sts[1] != nil {
		t.Errorf("statuses = %+v, %v", sts, err)
	}

	// Simulation of a transfer that cannot pay.
	raw, _ = transfer(t, c, bob, pub(alice), 5_000_000_000)
	sim, err := c.SimulateTransaction(ctx, raw, chainclient.SimulateOptions{Commitment: chainclient.Confirmed})
	if err != nil || len(sim.Err) == 0 || len(sim.Logs) == 0 {
		t.Errorf("simulate = %+v, %v", sim, err)
	}
	// Preflight rejects it with -32002...
	_, err = c.SendTransaction(ctx, raw, chainclient.SendOptions{PreflightCommitment: chainclient.Confirmed})
	var re *chainclient.RPCError
	if !errors.As(err, &re) || re.Code != -32002 || !strings.Contains(re.Message, "Transaction simulation failed") {
		t.Errorf("preflight failure: err = %v", err)
	}
	// ...and without preflight it lands, fails and Confirm says so.
	raw, bh = transfer(t, c, bob, pub(alice), 5_000_000_000)
	sig, err = c.SendTransaction(ctx, raw, chainclient.SendOptions{SkipPreflight: true})
	if err != nil {
		t.Fatalf("send without preflight: %v", err)
	}
	_, err = c.Confirm(ctx, sig, bh.LastValidBlockHeight, chainclient.Confirmed, fast)
	var tf *chainclient.TransactionFailedError
	if !errors.As(err, &tf) || string(tf.Err) != `{"InstructionError":[0,{"Custom":1}]}` {
		t.Errorf("failed transaction: err = %v", err)
	}

	// A signature that never lands expires once the block height passes.
	h, err := c.GetBlockHeight(ctx, chainclient.Confirmed)
	if err != nil {
		t.Fatal(err)
	}
	var ghost solana.Signature
	ghost[0] = 1
	_, err = c.Confirm(ctx, ghost, h+2, chainclient.Confirmed, fast)
	if !errors.Is(err, chainclient.ErrBlockhashExpired) {
		t.Errorf("ghost signature: err = %v, want ErrBlockhashExpired", err)
	}
}

func TestCachedAgainstEmbeddedNode(t *testing.T) {
	n := startNode(t, "e2e-cache")
	ctx := t.Context()
	mint, _, err := n.l.Faucet().CreateMint(ctx, ledger.MintOptions{Decimals: 6})
	if err != nil {
		t.Fatal(err)
	}
	c := chainclient.NewCached(n.client, chainclient.CacheOptions{})
	var prog solana.PublicKey
	for prog.IsZero() {
		prog, err = c.MintProgram(ctx, mint)
		if errors.Is(err, chainclient.ErrAccountNotFound) { // not confirmed yet
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if prog != solana.TokenProgramID {
		t.Errorf("mint program = %s", prog)
	}
	a, err := c.GetLatestBlockhash(ctx, chainclient.Confirmed)
	if err != nil {
		t.Fatal(err)
	}
	if valid, err := n.client.CallRaw(ctx, "isBlockhashValid", []any{a.Hash, map[string]string{"commitment": "confirmed"}}); err != nil || !strings.Contains(string(valid), `"value":true`) {
		t.Errorf("cached blockhash not valid on the node: %s, %v", valid, err)
	}
	if id, err := c.GetIdentity(ctx); err != nil || id.Identity != n.l.Identity() {
		t.Errorf("identity = %+v, %v", id, err)
	}
}

// ledgerAccounts adapts a ledger to router.AccountReader, as the serve
// wiring does.
func ledgerAccounts(l *ledger.Ledger) router.AccountReader {
	return router.AccountReaderFunc(func(_ context.Context, k solana.PublicKey) (*router.Account, error) {
		a, _ := l.Account(k, ledger.Confirmed)
		if a == nil {
			return nil, nil
		}
		return &router.Account{Lamports: a.Lamports, Owner: a.Owner, Data: a.Data}, nil
	})
}

func ledgerBlockhash(l *ledger.Ledger) router.BlockhashSource {
	return router.BlockhashSourceFunc(func(context.Context) (chainclient.Blockhash, error) {
		info, _ := l.LatestBlockhash(ledger.Confirmed)
		return chainclient.Blockhash{Hash: info.Blockhash, LastValidBlockHeight: info.LastValidBlockHeight}, nil
	})
}

func TestLocalRouterOnEmbeddedLedgers(t *testing.T) {
	base, er := startNode(t, "e2e-router-base"), startNode(t, "e2e-router-er")
	ctx := t.Context()
	reg, err := router.NewLocal(router.LocalConfig{
		Identity: er.l.Identity(), URL: er.url,
		Blockhash: ledgerBlockhash(er.l), Base: ledgerAccounts(base.l), BaseBlockhash: ledgerBlockhash(base.l),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(&router.Handler{Backend: reg})
	t.Cleanup(srv.Close)
	rc, _ := chainclient.New(srv.URL)

	// Delegate an account on the base ledger the way the delegation
	// program leaves it: owned by DLP, with a record naming the ER.
	acct := pub(newKey(t))
	pda, err := router.DelegationRecordAddress(acct)
	if err != nil {
		t.Fatal(err)
	}
	esplOwner := solana.MustPublicKeyFromBase58("SPLxh1LVZzEkX99H6rqYizhytLWPZVV296zyYDPagv2")
	slot, err := base.l.Apply(ctx, func(w ledger.AccountWriter) error {
		w.Set(acct, &ledger.Account{Lamports: 1447680, Owner: router.DelegationProgramID(), Data: make([]byte, 80)})
		w.Set(pda, &ledger.Account{Lamports: 1559040, Owner: router.DelegationProgramID(),
			Data: router.EncodeDelegationRecord(chainclient.DelegationRecord{Authority: er.l.Identity(), Owner: esplOwner, DelegationSlot: w.Slot(), Lamports: 1447680}, 30000)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := base.l.WaitForSlot(ctx, slot, ledger.Confirmed); err != nil {
		t.Fatal(err)
	}

	routes, err := rc.GetRoutes(ctx)
	if err != nil || len(routes) != 1 || routes[0].Identity != er.l.Identity() || routes[0].FQDN != er.url {
		t.Fatalf("routes = %+v, %v", routes, err)
	}
	ds, err := rc.GetDelegationStatus(ctx, acct)
	if err != nil || !ds.IsDelegated || ds.FQDN != er.url || ds.DelegationRecord == nil || ds.DelegationRecord.DelegationSlot != slot {
		t.Errorf("delegation status = %+v, %v", ds, err)
	}
	if ds, err := rc.GetDelegationStatus(ctx, pub(newKey(t))); err != nil || ds.IsDelegated {
		t.Errorf("undelegated status = %+v, %v", ds, err)
	}

	// The blockhash for the delegated account is the ER's: valid there.
	bh, err := rc.GetBlockhashForAccounts(ctx, []solana.PublicKey{acct, pub(newKey(t))})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		node *node
		want string
	}{{er, `"value":true`}, {base, `"value":false`}} {
		v, err := tc.node.client.CallRaw(ctx, "isBlockhashValid", []any{bh.Hash, map[string]string{"commitment": "processed"}})
		if err != nil || !strings.Contains(string(v), tc.want) {
			t.Errorf("isBlockhashValid on %s = %s, %v; want %s", tc.node.l.Name(), v, err, tc.want)
		}
	}
	// The ER accepts a transaction built with it.
	payer := newKey(t)
	fund(t, er.client, pub(payer), 1_000_000_000)
	msg, _ := txwire.Compile(pub(payer), []txwire.Instruction{spl.SystemTransfer(pub(payer), pub(newKey(t)), 1_000_000)}, bh.Hash)
	tx := txwire.NewUnsigned(msg)
	tx.Sign(payer)
	// The router's blockhashes are confirmed ones, so preflight at confirmed
	// (the default, finalized, may not know them yet), as the hosted API does.
	sig, err := er.client.SendTransaction(ctx, tx.Bytes(), chainclient.SendOptions{PreflightCommitment: chainclient.Confirmed})
	if err != nil {
		t.Fatalf("send on the ER with the router's blockhash: %v", err)
	}
	if _, err := er.client.Confirm(ctx, sig, bh.LastValidBlockHeight, chainclient.Confirmed, fast); err != nil {
		t.Errorf("confirm on the ER: %v", err)
	}
}
