package api

import (
	"crypto/ed25519"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/localnet"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// TestWrappedSOLOnLocalnet drives wrapped SOL through the hosted API on a
// localnet pair, whose ledgers have the native mints from genesis: the
// balance routes resolve wSOL (no MINT_NOT_FOUND), the mint setup works
// for it, a deposit wraps the owner's SOL first (the hosted API's wrap
// prefix: ATA, System transfer, SyncNative) and lands on the rollup, a
// public rollup transfer and a private base → rollup transfer move it
// there, and a withdrawal brings wSOL, backed by lamports, back to base.
func TestWrappedSOLOnLocalnet(t *testing.T) {
	p, err := localnet.Open(localnet.Config{BaseSlot: 20 * time.Millisecond, EphemeralSlot: 10 * time.Millisecond,
		FinalityDepth: -1, CrankInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	h := newHarnessOver(t, p.Base, p.Ephemeral, p.BaseHandler(), p.EphemeralHandler(), p.Identity())
	h.mint = spl.NativeMintID
	h.settle()
	srv := httptest.NewServer(h.srv)
	t.Cleanup(srv.Close)
	f := &flow{t: t, h: h, c: &hostedClient{t: t, base: srv.URL, hc: srv.Client()}, tokens: map[solana.PublicKey]string{},
		keys: map[solana.PublicKey]ed25519.PrivateKey{}}
	mint := spl.NativeMintID

	payerKey, aliceKey := f.user("wsol payer", 0), f.user("wsol alice", 0)
	alice := pubOf(aliceKey)
	var b payments.BalanceResponse
	if st := f.c.call("GET", "/v1/spl/balance?address="+alice.String()+"&mint="+mint.String(), nil, &b); st != 200 ||
		b.Balance != "0" || b.ATA != spl.AssociatedTokenAddress(alice, mint, spl.TokenProgramID).String() {
		t.Fatalf("wSOL balance before wrapping: %d %+v", st, b)
	}

	var im payments.InitializeMintResponse
	f.build("/v1/spl/initialize-mint", map[string]any{"payer": pubOf(payerKey), "mint": mint}, &im, nil)
	f.send(&im.UnsignedTransaction, payerKey)

	solBefore, _ := p.Base.Balance(alice, ledger.Confirmed)
	var u payments.UnsignedTransaction
	f.build("/v1/spl/deposit", map[string]any{"owner": alice, "mint": mint, "amount": 400_000_000}, &u, nil)
	f.send(&u, aliceKey)
	f.waitBalance(alice, true, 400_000_000, "alice's wSOL deposit on the rollup")
	if got := f.balance(alice, false); got != 0 {
		t.Errorf("alice's base wSOL after depositing everything she wrapped: %d", got)
	}
	solAfter, _ := p.Base.Balance(alice, ledger.Confirmed)
	if spent := solBefore - solAfter; spent < 400_000_000 {
		t.Errorf("depositing 0.4 wSOL cost alice only %d lamports", spent)
	}

	// Public rollup → rollup between two depositors.
	bobKey := f.user("wsol bob", 0)
	bob := pubOf(bobKey)
	f.build("/v1/spl/deposit", map[string]any{"owner": bob, "mint": mint, "amount": 1}, &u, nil)
	f.send(&u, bobKey)
	f.waitBalance(bob, true, 1, "bob's wSOL deposit")
	f.build("/v1/spl/transfer", transferReq(alice, bob, mint, 50_000_000, "public", "ephemeral", "ephemeral"), &u, aliceKey)
	f.send(&u, aliceKey)
	if a, b := f.balance(alice, true), f.balance(bob, true); a != 350_000_000 || b != 50_000_001 {
		t.Fatalf("rollup wSOL alice %d bob %d", a, b)
	}

	// Private base → rollup (a shuttle merged into bob's rollup ATA).
	f.build("/v1/spl/transfer", transferReq(alice, bob, mint, 20_000_000, "private", "base", "ephemeral"), &u, nil)
	f.send(&u, aliceKey)
	f.waitBalance(bob, true, 70_000_001, "bob's private wSOL deposit")

	// Withdrawal back to base.
	f.build("/v1/spl/withdraw", map[string]any{"owner": alice, "mint": mint, "amount": 100_000_000}, &u, nil)
	f.send(&u, aliceKey)
	f.waitBalance(alice, false, 100_000_000, "alice's wSOL withdrawal")
	f.waitBalance(alice, true, 250_000_000, "alice's rollup wSOL after withdrawing")
	// The withdrawn wSOL is backed by lamports on base: the owner can
	// unwrap it.
	ata := spl.AssociatedTokenAddress(alice, mint, spl.TokenProgramID)
	acct, _ := p.Base.Account(ata, ledger.Confirmed)
	if ta, err := spl.DecodeTokenAccount(acct.Data); err != nil || ta.IsNative == nil || acct.Lamports != *ta.IsNative+ta.Amount {
		t.Errorf("alice's wSOL account after withdrawing: %+v lamports %d (%v)", ta, acct.Lamports, err)
	}

	// Private rollup → base in 2 queued pieces: the crank burns the claims
	// on the rollup and the validator pays bob from the global vault on
	// base, lamports included.
	bobATA := spl.AssociatedTokenAddress(bob, mint, spl.TokenProgramID)
	bobLamportsBefore, _ := p.Base.Balance(bobATA, ledger.Confirmed)
	req := transferReq(alice, bob, mint, 30_000_000, "private", "ephemeral", "base")
	req["split"] = 2
	f.build("/v1/spl/transfer", req, &u, aliceKey)
	f.send(&u, aliceKey)
	f.waitBalance(bob, false, 30_000_000, "bob's private wSOL payout on base")
	acct, _ = p.Base.Account(bobATA, ledger.Confirmed)
	ta, err := spl.DecodeTokenAccount(acct.Data)
	if err != nil || ta.IsNative == nil || acct.Lamports != *ta.IsNative+ta.Amount || acct.Lamports < bobLamportsBefore+30_000_000 {
		t.Errorf("bob's wSOL account after the payout: %+v lamports %d (before %d) (%v)", ta, acct.Lamports, bobLamportsBefore, err)
	}
}
