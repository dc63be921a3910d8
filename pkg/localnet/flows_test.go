package localnet_test

import (
	"crypto/ed25519"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/delegation"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// TestDepositFlowInProcess drives the deposit route deterministically
// (manual slots, in process) and checks every stage the validator goes
// through.
func TestDepositFlowInProcess(t *testing.T) {
	h := newHarness(t, "", nil)
	h.setupMint()
	q, _ := espl.FindTransferQueue(h.mint, h.p.Identity())
	if a, _ := h.p.Base.Account(q, ledger.Confirmed); a == nil || a.Owner != delegation.ProgramID {
		t.Fatal("initialize-mint did not delegate the queue")
	}
	if a, _ := h.p.Ephemeral.Account(q, ledger.Confirmed); a == nil || a.Owner != espl.ProgramID {
		t.Fatal("queue not cloned to the rollup")
	}
	alice := h.wallet(10_000_000)
	h.deposit(alice, 4_000_000)
	if got := h.erBalance(pub(alice)); got != 4_000_000 {
		t.Fatalf("ER balance %d, want 4000000", got)
	}
	if got := h.baseBalance(pub(alice)); got != 6_000_000 {
		t.Fatalf("base balance %d", got)
	}
	vault, _ := espl.FindGlobalVault(h.mint)
	if got := balanceOn(h.p.Base, h.ata(vault)); got != 4_000_000 {
		t.Fatalf("vault holds %d", got)
	}

	// ER → ER public transfer to bob (who deposits once to be on the rollup).
	bob := h.wallet(1)
	h.deposit(bob, 1)
	h.transfer(alice, payments.TransferRequest{To: pub(bob).String(), Amount: 1_500_000, Visibility: payments.Public,
		FromBalance: payments.Ephemeral, ToBalance: payments.Ephemeral})
	if h.erBalance(pub(alice)) != 2_500_000 || h.erBalance(pub(bob)) != 1_500_001 {
		t.Fatalf("after ER transfer: alice %d bob %d", h.erBalance(pub(alice)), h.erBalance(pub(bob)))
	}

	// Withdraw brings alice's tokens back to base.
	out, err := h.planner.Withdraw(h.ctx, h.chain, &payments.WithdrawRequest{Owner: pub(alice).String(), Mint: h.mint.String(), Amount: 2_000_000})
	if err != nil {
		t.Fatal(err)
	}
	h.submit(out, alice)
	h.sync()
	if h.baseBalance(pub(alice)) != 8_000_000 || h.erBalance(pub(alice)) != 500_000 {
		t.Fatalf("after withdraw: base %d ER %d", h.baseBalance(pub(alice)), h.erBalance(pub(alice)))
	}
	if got := balanceOn(h.p.Base, h.ata(vault)); got != 2_000_001 {
		t.Fatalf("vault holds %d", got)
	}
}

// queueEntries lists the pending entries of the mint's transfer queue on
// the rollup.
func (h *harness) queueEntries() []espl.QueuedTransfer {
	h.t.Helper()
	q, _ := espl.FindTransferQueue(h.mint, h.p.Identity())
	a, _ := h.p.Ephemeral.Account(q, ledger.Confirmed)
	tq, err := espl.OpenTransferQueue(append([]byte(nil), a.Data...))
	if err != nil {
		h.t.Fatal(err)
	}
	out := make([]espl.QueuedTransfer, tq.Len())
	for i := range out {
		out[i] = tq.At(i)
	}
	return out
}

func TestPrivateBaseToBaseInProcess(t *testing.T) {
	h := newHarness(t, "", nil)
	h.setupMint()
	alice, bob := h.wallet(100_000_000), h.wallet(0)
	before := h.baseBalance(pub(alice))
	h.transfer(alice, payments.TransferRequest{To: pub(bob).String(), Amount: 15_000_000, Visibility: payments.Private,
		FromBalance: payments.Base, ToBalance: payments.Base, Split: ptr(int64(3)), MinDelayMs: "1000", MaxDelayMs: "20000",
		ClientRefID: "77"})
	fee := espl.PrivacyFee(15_000_000)
	if got := before - h.baseBalance(pub(alice)); got != 15_000_000+fee {
		t.Fatalf("sender paid %d, want amount + fee %d", got, 15_000_000+fee)
	}
	entries := h.queueEntries()
	if len(entries) != 3 {
		t.Fatalf("%d queued entries", len(entries))
	}
	for _, e := range entries {
		if e.ClientRefID != 77 || e.DestinationOwner != pub(bob) {
			t.Fatalf("entry %+v", e)
		}
	}
	// Step the clock a second at a time: after each sync bob holds exactly
	// the pieces whose ready time has come (the rollup's clock has second
	// resolution), never one early.
	var total uint64
	for step := 0; step < 25; step++ {
		h.clock.Advance(time.Second)
		h.sync()
		nowMs := h.clock.Now().Unix() * 1000
		total = h.baseBalance(pub(bob))
		if due := dueBy(entries, nowMs); total != due {
			t.Fatalf("at %d ms bob holds %d, want exactly the %d due", nowMs, total, due)
		}
	}
	if total != 15_000_000 {
		t.Fatalf("bob received %d, want 15000000", total)
	}
	if len(h.queueEntries()) != 0 {
		t.Fatal("queue not drained")
	}
}

func ptr[T any](v T) *T { return &v }

// dueBy sums the entries ready at nowMs.
func dueBy(es []espl.QueuedTransfer, nowMs int64) uint64 {
	var s uint64
	for _, e := range es {
		if e.ReadyAt <= nowMs {
			s += e.Amount
		}
	}
	return s
}

func TestPrivateRoutesInProcess(t *testing.T) {
	h := newHarness(t, "", nil)
	h.setupMint()
	alice, bob, carol := h.wallet(50_000_000), h.wallet(0), h.wallet(0)

	// Private base → ER with initIfMissing sets bob up on the rollup.
	h.transfer(alice, payments.TransferRequest{To: pub(bob).String(), Amount: 3_000_000, Visibility: payments.Private,
		FromBalance: payments.Base, ToBalance: payments.Ephemeral, InitIfMissing: ptr(true)})
	if got := h.erBalance(pub(bob)); got != 3_000_000 {
		t.Fatalf("bob's ER balance %d", got)
	}
	if h.baseBalance(pub(alice)) != 47_000_000 {
		t.Fatalf("alice's base balance %d", h.baseBalance(pub(alice)))
	}

	// Private ER → base: bob pays carol from the rollup, split 2, no delay.
	h.transfer(bob, payments.TransferRequest{To: pub(carol).String(), Amount: 2_000_000, Visibility: payments.Private,
		FromBalance: payments.Ephemeral, ToBalance: payments.Base, Split: ptr(int64(2)), ClientRefID: "9"})
	if h.erBalance(pub(bob)) != 1_000_000 || h.baseBalance(pub(carol)) != 2_000_000 {
		t.Fatalf("after ER→base: bob ER %d carol base %d", h.erBalance(pub(bob)), h.baseBalance(pub(carol)))
	}

	// Private base → ER to someone not on the rollup (no initIfMissing):
	// the merge has nowhere to land, so the shuttle refunds alice.
	dave := h.wallet(0)
	h.transfer(alice, payments.TransferRequest{To: pub(dave).String(), Amount: 1_000_000, Visibility: payments.Private,
		FromBalance: payments.Base, ToBalance: payments.Ephemeral})
	if h.baseBalance(pub(alice)) != 47_000_000 || h.erBalance(pub(dave)) != 0 {
		t.Fatalf("refund: alice %d dave ER %d", h.baseBalance(pub(alice)), h.erBalance(pub(dave)))
	}

	// Legacy undelegation: bob undelegates on the rollup (ix 5), then
	// withdraws on base (ix 3).
	ix := espl.UndelegateEphemeralATA(espl.UndelegateEphemeralATAArgs{Owner: pub(bob), Mint: h.mint})
	h.sendIx(h.p.Ephemeral, bob, ix)
	h.sync()
	eata, _ := espl.FindEphemeralATA(pub(bob), h.mint)
	a, _ := h.p.Base.Account(eata, ledger.Confirmed)
	if a == nil || a.Owner != espl.ProgramID {
		t.Fatal("eATA not back with eSPL on base")
	}
	if e, _ := espl.DecodeEphemeralATA(a.Data); e.Amount != 1_000_000 {
		t.Fatalf("committed eATA amount %d", e.Amount)
	}
	if x, _ := h.p.Ephemeral.Account(h.ata(pub(bob)), ledger.Confirmed); x != nil {
		t.Fatal("bob's projection survived undelegation")
	}
	out, err := h.planner.Withdraw(h.ctx, h.chain, &payments.WithdrawRequest{Owner: pub(bob).String(), Mint: h.mint.String(),
		Amount: 1_000_000, Idempotent: ptr(false), InitAtasIfMissing: ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	h.submit(out, bob)
	if h.baseBalance(pub(bob)) != 1_000_000 {
		t.Fatalf("bob's base balance %d", h.baseBalance(pub(bob)))
	}
}

// sendIx signs ixs with k as fee payer and processes them on l.
func (h *harness) sendIx(l *ledger.Ledger, k ed25519.PrivateKey, ixs ...txwire.Instruction) *ledger.TxRecord {
	h.t.Helper()
	bh, _ := l.LatestBlockhash(ledger.Confirmed)
	msg, err := txwire.Compile(pub(k), ixs, bh.Blockhash)
	if err != nil {
		h.t.Fatal(err)
	}
	tx := txwire.NewUnsigned(msg)
	if err := tx.Sign(k); err != nil {
		h.t.Fatal(err)
	}
	rec, err := l.Process(h.ctx, tx.Bytes())
	if err != nil {
		h.t.Fatal(err)
	}
	if rec.Err != nil {
		h.t.Fatalf("%v\n%v", rec.Err, rec.Meta.Logs)
	}
	h.settle()
	return rec
}

func TestStealthPoolInProcess(t *testing.T) {
	h := newHarness(t, "", nil)
	h.setupMint()
	alice, auth := h.wallet(100_000_000), h.wallet(0)
	d1, d2 := h.wallet(0), h.wallet(0)
	handle := []byte("dana.block")
	setup, err := espl.EnsureStealthPoolDelegated(espl.EnsureStealthPoolDelegatedArgs{Payer: pub(auth), Authority: pub(auth), Handle: handle, Validator: h.p.Identity()})
	if err != nil {
		t.Fatal(err)
	}
	h.sendIx(h.p.Base, auth, setup)
	h.sync()
	update, err := espl.UpdateStealthPool(espl.UpdateStealthPoolArgs{Payer: pub(auth), Authority: pub(auth), Handle: handle,
		Flags: espl.StealthFlagSplitAcrossKeys, Destinations: []solana.PublicKey{pub(d1), pub(d2)}})
	if err != nil {
		t.Fatal(err)
	}
	h.sendIx(h.p.Ephemeral, auth, update)
	h.transfer(alice, payments.TransferRequest{To: string(handle), Amount: 20_000_000, Visibility: payments.Private,
		FromBalance: payments.Base, ToBalance: payments.Base, Split: ptr(int64(4))})
	// Four 5-token pieces, round-robin over the two keys.
	if h.baseBalance(pub(d1)) != 10_000_000 || h.baseBalance(pub(d2)) != 10_000_000 {
		t.Fatalf("pool payouts: %d and %d", h.baseBalance(pub(d1)), h.baseBalance(pub(d2)))
	}
}

// TestFullQueueRefundsInProcess: with a two-entry queue, an ER→base
// private transfer that needs three entries is refunded to the sender's
// rollup balance (the reimbursement account) instead of being queued.
func TestFullQueueRefundsInProcess(t *testing.T) {
	h := newHarness(t, "", nil)
	mint, _, err := h.p.Base.Faucet().CreateMint(h.ctx, ledger.MintOptions{Decimals: tokenDecimals})
	if err != nil {
		t.Fatal(err)
	}
	h.mint = mint
	payer := h.wallet(0)
	v := h.p.Identity()
	rent, _ := espl.FindRentPDA()
	vault, _ := espl.FindGlobalVault(mint)
	h.sendIx(h.p.Base, payer,
		espl.InitTransferQueue(espl.InitTransferQueueArgs{Payer: pub(payer), Mint: mint, Validator: v, RequestedItems: 2}),
		espl.InitRentPDA(espl.InitRentPDAArgs{Payer: pub(payer)}),
		spl.SystemTransfer(pub(payer), rent, espl.RentPDATargetLamports),
		espl.DelegateTransferQueue(espl.DelegateTransferQueueArgs{Payer: pub(payer), Mint: mint, Validator: v}),
		espl.InitGlobalVault(espl.InitGlobalVaultArgs{Payer: pub(payer), Mint: mint}),
		spl.CreateAssociatedTokenAccount(pub(payer), vault, mint, spl.TokenProgramID, true),
	)
	h.sync()
	alice, bob := h.wallet(10_000_000), h.wallet(0)
	h.deposit(alice, 9_000_000)
	h.transfer(alice, payments.TransferRequest{To: pub(bob).String(), Amount: 3_000_000, Visibility: payments.Private,
		FromBalance: payments.Ephemeral, ToBalance: payments.Base, Split: ptr(int64(3)), MinDelayMs: "60000"})
	if got := h.erBalance(pub(alice)); got != 9_000_000 {
		t.Fatalf("alice's rollup balance %d: the full queue did not refund", got)
	}
	if n := len(h.queueEntries()); n != 0 {
		t.Fatalf("%d entries queued in a full queue", n)
	}
	// Two pieces fit.
	h.transfer(alice, payments.TransferRequest{To: pub(bob).String(), Amount: 2_000_000, Visibility: payments.Private,
		FromBalance: payments.Ephemeral, ToBalance: payments.Base, Split: ptr(int64(2))})
	if h.baseBalance(pub(bob)) != 2_000_000 || h.erBalance(pub(alice)) != 7_000_000 {
		t.Fatalf("bob %d alice %d", h.baseBalance(pub(bob)), h.erBalance(pub(alice)))
	}
}
