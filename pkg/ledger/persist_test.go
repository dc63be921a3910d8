package ledger

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	rt "github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

func TestRestartResumesState(t *testing.T) {
	dir := t.TempDir()
	ctx := ctxT(t)
	l, err := Open(Config{Name: "base", DataDir: dir, ManualSlots: true, FinalityDepth: 1})
	if err != nil {
		t.Fatal(err)
	}
	s := setupToken(t, l, 10_000)
	raw := buildTx(t, l, s.alice, []txwire.Instruction{
		spl.TokenTransferChecked(spl.TokenProgramID, s.aliceAta, s.mint, s.bobA, pubkeyOf(s.alice), 2_500, 6),
	})
	rec := mustProcess(t, l, raw)
	if _, err := l.AdvanceSlot(ctx); err != nil {
		t.Fatal(err)
	}
	slot := l.Slot(Confirmed)
	genesis, identity, faucet := l.GenesisHash(), l.Identity(), l.Faucet().PublicKey()
	count := l.TransactionCount(Confirmed)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	l2, err := Open(Config{Name: "base", DataDir: dir, ManualSlots: true, FinalityDepth: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if l2.GenesisHash() != genesis || l2.Identity() != identity || l2.Faucet().PublicKey() != faucet {
		t.Fatal("identity, faucet or genesis changed across restart")
	}
	if got := l2.Slot(Finalized); got != slot {
		t.Fatalf("finalized slot after restart = %d, want %d", got, slot)
	}
	if got := l2.Slot(Processed); got != slot+1 {
		t.Fatalf("working slot after restart = %d", got)
	}
	if got := l2.TransactionCount(Processed); got != count {
		t.Fatalf("transaction count %d, want %d", got, count)
	}
	if got := tokenAmount(t, l2, s.bobA, Finalized); got != 2_500 {
		t.Fatalf("bob = %d", got)
	}
	r, err := l2.Transaction(rec.Signature, Finalized)
	if err != nil || r == nil || r.Meta.Fee != 5000 || len(r.Meta.PostTokenBalances) != 2 {
		t.Fatalf("transaction after restart = %+v, %v", r, err)
	}
	st, _ := l2.SignatureStatuses([]solana.Signature{rec.Signature})
	if st[0] == nil || st[0].Status != Finalized {
		t.Fatalf("status after restart = %+v", st[0])
	}
	// The status cache survived: the same bytes are still a duplicate.
	if _, err := l2.Process(ctx, raw); !errors.Is(err, rt.ErrAlreadyProcessed) {
		t.Fatalf("replay after restart: %v", err)
	}
	owned, _ := l2.TokenAccountsByOwner(pubkeyOf(s.alice), TokenFilter{}, Finalized)
	if len(owned) != 1 {
		t.Fatalf("token index after restart: %+v", owned)
	}
	// And the chain goes on.
	mustProcess(t, l2, buildTx(t, l2, s.alice, []txwire.Instruction{
		spl.TokenTransferChecked(spl.TokenProgramID, s.aliceAta, s.mint, s.bobA, pubkeyOf(s.alice), 1, 6),
	}))
	if _, err := l2.AdvanceSlot(ctx); err != nil {
		t.Fatal(err)
	}
	if got := tokenAmount(t, l2, s.bobA, Confirmed); got != 2_501 {
		t.Fatalf("bob = %d", got)
	}
}

func TestDataDirLocked(t *testing.T) {
	dir := t.TempDir()
	openTest(t, Config{DataDir: dir})
	_, err := Open(Config{DataDir: dir, ManualSlots: true})
	if err == nil || !strings.Contains(err.Error(), "locked") {
		t.Fatalf("second open: %v", err)
	}
}

func TestCommitmentReadsAndIndexes(t *testing.T) {
	l := openTest(t, Config{FinalityDepth: 3})
	ctx := ctxT(t)
	s := setupToken(t, l, 100)
	if _, err := l.AdvanceSlots(ctx, 4); err != nil {
		t.Fatal(err)
	}
	// Close alice's account in slot N: it disappears at processed, stays at
	// confirmed until N is durable and at finalized until N is final.
	mustProcess(t, l, buildTx(t, l, s.alice, []txwire.Instruction{
		spl.TokenTransferChecked(spl.TokenProgramID, s.aliceAta, s.mint, s.bobA, pubkeyOf(s.alice), 100, 6),
		spl.TokenCloseAccount(spl.TokenProgramID, s.aliceAta, pubkeyOf(s.alice), pubkeyOf(s.alice)),
	}))
	count := func(c Commitment) int {
		a, _ := l.TokenAccountsByOwner(pubkeyOf(s.alice), TokenFilter{}, c)
		return len(a)
	}
	if count(Processed) != 0 || count(Confirmed) != 1 || count(Finalized) != 1 {
		t.Fatalf("processed %d confirmed %d finalized %d", count(Processed), count(Confirmed), count(Finalized))
	}
	if _, err := l.AdvanceSlot(ctx); err != nil {
		t.Fatal(err)
	}
	if count(Confirmed) != 0 || count(Finalized) != 1 {
		t.Fatalf("after durable: confirmed %d finalized %d", count(Confirmed), count(Finalized))
	}
	if _, err := l.AdvanceSlots(ctx, 4); err != nil {
		t.Fatal(err)
	}
	if count(Finalized) != 0 {
		t.Fatal("closed account still listed at finalized")
	}
	if _, ok := l.owners.m[pubkeyOf(s.alice)]; ok {
		t.Fatal("stale owner index entry not removed after finalization")
	}
	holders, _ := l.TokenAccountsByMint(s.mint, Finalized)
	if len(holders) != 1 || holders[0].Key != s.bobA {
		t.Fatalf("holders %+v", holders)
	}
}

func TestApplyAndSubscribe(t *testing.T) {
	l := openTest(t, Config{})
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	blocks := l.Subscribe(ctx)
	payer := fundedWallet(t, l, 1_000_000_000)
	cloned := pubkeyOf(newKey(t))
	slot, err := l.Apply(ctx, func(w AccountWriter) error {
		if w.Get(cloned) != nil {
			t.Error("account exists before Apply")
		}
		w.Set(cloned, &Account{Lamports: 2_000_000, Owner: spl.TokenProgramID, Data: []byte{1, 2, 3}})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := l.Account(cloned, Processed); a == nil || a.Lamports != 2_000_000 {
		t.Fatalf("applied account = %+v", a)
	}
	// A failing Apply writes nothing.
	boom := errors.New("boom")
	if _, err := l.Apply(ctx, func(w AccountWriter) error {
		w.Set(cloned, nil)
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if a, _ := l.Account(cloned, Processed); a == nil {
		t.Fatal("failed Apply deleted the account")
	}
	rec := mustProcess(t, l, buildTx(t, l, payer, []txwire.Instruction{spl.SystemTransfer(pubkeyOf(payer), cloned, 5)}))
	if _, err := l.AdvanceSlot(ctx); err != nil {
		t.Fatal(err)
	}
	var b *Block
	for b == nil || b.Slot < slot {
		select {
		case b = <-blocks:
		case <-time.After(10 * time.Second):
			t.Fatal("no block delivered")
		}
	}
	if b.Slot != slot || len(b.Applied) != 1 || b.Applied[0][0].Key != cloned {
		t.Fatalf("block %d applied %+v", b.Slot, b.Applied)
	}
	var found bool
	for _, tx := range b.Transactions {
		if tx.Signature == rec.Signature {
			found = true
			if len(tx.Writes) != 2 {
				t.Errorf("writes %+v", tx.Writes)
			}
		}
	}
	if !found {
		t.Fatal("transaction missing from delivered block")
	}
	if l.Slot(Confirmed) < b.Slot {
		t.Fatal("block delivered before it was confirmed")
	}
}

func TestTwoLedgersInOneProcess(t *testing.T) {
	base := openTest(t, Config{Name: "base", SlotDuration: 400 * time.Millisecond})
	er := openTest(t, Config{Name: "ephemeral", SlotDuration: 50 * time.Millisecond, LamportsPerSignature: -1})
	if base.GenesisHash() == er.GenesisHash() {
		t.Fatal("two ledgers share a genesis hash")
	}
	k := fundedWallet(t, base, 5_000_000)
	if a, _ := er.Account(pubkeyOf(k), Processed); a != nil {
		t.Fatal("account leaked between ledgers")
	}
	if _, err := base.AdvanceSlots(ctxT(t), 3); err != nil {
		t.Fatal(err)
	}
	if er.Slot(Processed) != 1 || base.Slot(Processed) != 4 {
		t.Fatalf("slots %d / %d", base.Slot(Processed), er.Slot(Processed))
	}
}

func TestSlotClock(t *testing.T) {
	l, err := Open(Config{SlotDuration: 10 * time.Millisecond, FinalityDepth: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := ctxT(t)
	if err := l.WaitForSlot(ctx, 5, Finalized); err != nil {
		t.Fatal(err)
	}
	payer := fundedWallet(t, l, 1_000_000_000)
	rec := mustProcess(t, l, buildTx(t, l, payer, []txwire.Instruction{spl.Memo("tick")}))
	st, err := l.WaitForStatus(ctx, rec.Signature, Finalized)
	if err != nil || st.Status != Finalized {
		t.Fatalf("status %+v, %v", st, err)
	}
}

func TestSimulate(t *testing.T) {
	l := openTest(t, Config{})
	ctx := ctxT(t)
	s := setupToken(t, l, 50)
	tx := func(amount uint64) []byte {
		return buildTx(t, l, s.alice, []txwire.Instruction{
			spl.TokenTransferChecked(spl.TokenProgramID, s.aliceAta, s.mint, s.bobA, pubkeyOf(s.alice), amount, 6),
		})
	}
	sim, err := l.Simulate(ctx, tx(20), SimulateOptions{Commitment: Processed, SigVerify: true, Accounts: []solana.PublicKey{s.bobA, pubkeyOf(newKey(t))}})
	if err != nil || sim.Err != nil {
		t.Fatalf("simulate: %+v, %v", sim, err)
	}
	if len(sim.Accounts) != 2 || sim.Accounts[1] != nil || sim.Accounts[0] == nil || spl.TokenAmountOf(sim.Accounts[0].Data) != 20 {
		t.Fatalf("accounts %+v", sim.Accounts)
	}
	if tokenAmount(t, l, s.bobA, Processed) != 0 {
		t.Fatal("simulation changed state")
	}
	sim, _ = l.Simulate(ctx, tx(51), SimulateOptions{Commitment: Processed})
	if !errors.Is(sim.Err, rt.InstructionFailed(0, rt.Custom(1))) || len(sim.Logs) == 0 {
		t.Fatalf("failing simulation = %+v", sim)
	}
	// At finalized nothing of the setup exists yet: no fee payer.
	sim, _ = l.Simulate(ctx, tx(1), SimulateOptions{Commitment: Finalized})
	if !errors.Is(sim.Err, rt.ErrAccountNotFound) {
		t.Fatalf("finalized simulation = %+v", sim.Err)
	}
	sim, _ = l.Simulate(ctx, buildTxWith(t, solana.Hash{9}, s.alice, []txwire.Instruction{spl.Memo("x")}), SimulateOptions{Commitment: Finalized, ReplaceRecentBlockhash: true})
	if sim.Err == nil || sim.Replacement == nil {
		// The payer does not exist at finalized.
		t.Fatalf("replace blockhash: %+v", sim)
	}
	// Unsigned transactions simulate fine without sigVerify.
	msg, _ := txwire.Compile(pubkeyOf(s.alice), []txwire.Instruction{spl.Memo("unsigned")}, sim.Replacement.Blockhash)
	sim, err = l.Simulate(ctx, txwire.NewUnsigned(msg).Bytes(), SimulateOptions{Commitment: Processed, ReplaceRecentBlockhash: true})
	if err != nil || sim.Err != nil {
		t.Fatalf("unsigned: %+v %v", sim, err)
	}
	if _, err := l.Simulate(ctx, txwire.NewUnsigned(msg).Bytes(), SimulateOptions{SigVerify: true}); !errors.Is(err, ErrSignatureVerification) {
		t.Fatalf("sigVerify: %v", err)
	}
}

func TestSendPreflight(t *testing.T) {
	l := openTest(t, Config{})
	ctx := ctxT(t)
	s := setupToken(t, l, 10)
	over := buildTx(t, l, s.alice, []txwire.Instruction{
		spl.TokenTransferChecked(spl.TokenProgramID, s.aliceAta, s.mint, s.bobA, pubkeyOf(s.alice), 11, 6),
	})
	before, _ := l.Balance(pubkeyOf(s.alice), Processed)
	_, err := l.Send(ctx, over, SendOptions{PreflightCommitment: Processed})
	var pe *PreflightError
	if !errors.As(err, &pe) || pe.Error() != "Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1" {
		t.Fatalf("err = %v", err)
	}
	if after, _ := l.Balance(pubkeyOf(s.alice), Processed); after != before {
		t.Fatal("a failed preflight charged a fee")
	}
	// With skipPreflight the same transaction lands, fails and pays.
	sig, err := l.Send(ctx, over, SendOptions{SkipPreflight: true})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := l.SignatureStatuses([]solana.Signature{sig})
	if st[0] == nil || st[0].Err == nil {
		t.Fatalf("status = %+v", st[0])
	}
	bad := buildTx(t, l, s.alice, []txwire.Instruction{spl.Memo("x")})
	bad[10] ^= 1
	if _, err := l.Send(ctx, bad, SendOptions{PreflightCommitment: Processed}); !errors.Is(err, ErrSignatureVerification) {
		t.Fatalf("bad signature: %v", err)
	}
	if _, err := l.Send(ctx, bad, SendOptions{SkipPreflight: true}); err != nil {
		t.Fatalf("bad signature, skip preflight: %v", err)
	}
	// Preflight at confirmed sees the confirmed state only.
	if _, err := l.AdvanceSlot(ctx); err != nil {
		t.Fatal(err)
	}
	ok := buildTx(t, l, s.alice, []txwire.Instruction{
		spl.TokenTransferChecked(spl.TokenProgramID, s.aliceAta, s.mint, s.bobA, pubkeyOf(s.alice), 10, 6),
	})
	if _, err := l.Send(ctx, ok, SendOptions{PreflightCommitment: Confirmed}); err != nil {
		t.Fatal(err)
	}
	if tokenAmount(t, l, s.bobA, Processed) != 10 {
		t.Fatal("transfer did not land")
	}
}

func TestSignaturesForAddress(t *testing.T) {
	for _, store := range []string{"memory", "bbolt"} {
		t.Run(store, func(t *testing.T) {
			cfg := Config{}
			if store == "bbolt" {
				cfg.DataDir = t.TempDir()
			}
			testSignaturesForAddress(t, openTest(t, cfg))
		})
	}
}

func testSignaturesForAddress(t *testing.T, l *Ledger) {
	ctx := ctxT(t)
	payer := fundedWallet(t, l, 1_000_000_000)
	watched := pubkeyOf(newKey(t))
	var sigs []solana.Signature
	for i := 0; i < 5; i++ {
		rec := mustProcess(t, l, buildTx(t, l, payer, []txwire.Instruction{
			spl.SystemTransfer(pubkeyOf(payer), watched, 1_000_000+uint64(i)),
			spl.Memo("n" + string(rune('0'+i))),
		}))
		sigs = append(sigs, rec.Signature)
		if i%2 == 0 {
			if _, err := l.AdvanceSlot(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := l.AdvanceSlot(ctx); err != nil {
		t.Fatal(err)
	}
	all, err := l.SignaturesForAddress(watched, AddressQuery{}, Confirmed)
	if err != nil || len(all) != 5 || all[0].Signature != sigs[4] || all[4].Signature != sigs[0] {
		t.Fatalf("all = %d, %v", len(all), err)
	}
	page, _ := l.SignaturesForAddress(watched, AddressQuery{Before: &sigs[3], Limit: 2}, Confirmed)
	if len(page) != 2 || page[0].Signature != sigs[2] || page[1].Signature != sigs[1] {
		t.Fatalf("before page = %+v", page)
	}
	page, _ = l.SignaturesForAddress(watched, AddressQuery{Until: &sigs[1]}, Confirmed)
	if len(page) != 3 || page[2].Signature != sigs[2] {
		t.Fatalf("until page = %d", len(page))
	}
	unknown := solana.Signature{1}
	if page, _ := l.SignaturesForAddress(watched, AddressQuery{Before: &unknown}, Confirmed); len(page) != 0 {
		t.Fatal("unknown before should give nothing")
	}
	if memo := all[0].Memo(); memo == nil || *memo != "[2] n4" {
		t.Fatalf("memo = %v", memo)
	}
	// Paging through with before visits each transaction once.
	var before *solana.Signature
	var paged []solana.Signature
	for {
		page, err := l.SignaturesForAddress(watched, AddressQuery{Before: before, Limit: 2}, Confirmed)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		for _, r := range page {
			paged = append(paged, r.Signature)
		}
		before = &paged[len(paged)-1]
	}
	if len(paged) != 5 || paged[0] != sigs[4] || paged[4] != sigs[0] {
		t.Fatalf("paged %v", paged)
	}
	page, _ = l.SignaturesForAddress(watched, AddressQuery{Before: &sigs[4], Until: &sigs[0]}, Confirmed)
	if len(page) != 3 || page[0].Signature != sigs[3] || page[2].Signature != sigs[1] {
		t.Fatalf("before+until page = %d", len(page))
	}
	// before may name a transaction that does not involve the address:
	// the listing starts at its position.
	other := mustProcess(t, l, buildTx(t, l, payer, []txwire.Instruction{spl.Memo("unrelated")}))
	later := mustProcess(t, l, buildTx(t, l, payer, []txwire.Instruction{spl.SystemTransfer(pubkeyOf(payer), watched, 1_000_000)}))
	if _, err := l.AdvanceSlot(ctx); err != nil {
		t.Fatal(err)
	}
	page, _ = l.SignaturesForAddress(watched, AddressQuery{Before: &other.Signature}, Confirmed)
	if len(page) != 5 || page[0].Signature != sigs[4] {
		t.Fatalf("before an unrelated transaction: %d entries", len(page))
	}
	if page, _ = l.SignaturesForAddress(watched, AddressQuery{Limit: 1}, Confirmed); page[0].Signature != later.Signature {
		t.Fatal("newest transaction missing")
	}
}

func TestBlocks(t *testing.T) {
	l := openTest(t, Config{})
	ctx := ctxT(t)
	payer := fundedWallet(t, l, 1_000_000_000)
	if _, err := l.AdvanceSlots(ctx, 3); err != nil {
		t.Fatal(err)
	}
	slots, err := l.Blocks(0, 100, 10, Confirmed)
	if err != nil || len(slots) != 4 || slots[0] != 0 || slots[3] != 3 {
		t.Fatalf("blocks = %v, %v", slots, err)
	}
	info, txs, err := l.Block(1, Confirmed)
	if err != nil || info == nil || len(txs) != 1 || info.Height != 1 || info.ParentSlot != 0 {
		t.Fatalf("block 1 = %+v (%d txs), %v", info, len(txs), err)
	}
	if txs[0].Meta.PreBalances[1] != 0 || txs[0].Meta.PostBalances[1] == 0 {
		t.Fatalf("airdrop meta %+v", txs[0].Meta)
	}
	prev, _, _ := l.Block(0, Confirmed)
	if info.PreviousBlockhash != prev.Blockhash {
		t.Fatal("blockhash chain broken")
	}
	if info, _, _ := l.Block(10, Confirmed); info != nil {
		t.Fatal("future block")
	}
	_ = payer
}

func TestSubscribeFromResumes(t *testing.T) {
	dir := t.TempDir()
	ctx := ctxT(t)
	l, err := Open(Config{DataDir: dir, ManualSlots: true})
	if err != nil {
		t.Fatal(err)
	}
	payer := fundedWallet(t, l, 1_000_000_000)
	var sigs []solana.Signature
	for i := 0; i < 4; i++ {
		rec := mustProcess(t, l, buildTx(t, l, payer, []txwire.Instruction{spl.Memo(fmt.Sprint("m", i))}))
		sigs = append(sigs, rec.Signature)
		if _, err := l.AdvanceSlot(ctx); err != nil {
			t.Fatal(err)
		}
	}
	cursor := l.Slot(Confirmed) - 1 // pretend the consumer saw up to here
	l.Close()

	l2, err := Open(Config{DataDir: dir, ManualSlots: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	sub := l2.SubscribeFrom(ctx, cursor)
	var got []*Block
	receive := func(n int) {
		for len(got) < n {
			select {
			case b := <-sub:
				got = append(got, b)
			case <-time.After(10 * time.Second):
				t.Fatalf("got %d blocks", len(got))
			}
		}
	}
	// Once the replay is delivered, the subscription has read its tip, so
	// the next block comes live.
	receive(2)
	live := mustProcess(t, l2, buildTx(t, l2, payer, []txwire.Instruction{spl.Memo("live")}))
	if _, err := l2.AdvanceSlot(ctx); err != nil {
		t.Fatal(err)
	}
	receive(3)
	if got[0].Slot != cursor || !got[0].Replayed || got[1].Slot != cursor+1 || !got[1].Replayed || got[2].Replayed {
		t.Fatalf("blocks %d/%v %d/%v %d/%v", got[0].Slot, got[0].Replayed, got[1].Slot, got[1].Replayed, got[2].Slot, got[2].Replayed)
	}
	if len(got[1].Transactions) != 1 || got[1].Transactions[0].Signature != sigs[3] {
		t.Fatalf("replayed transactions %+v", got[1].Transactions)
	}
	if len(got[2].Transactions) != 1 || got[2].Transactions[0].Signature != live.Signature || got[2].Slot != got[1].Slot+1 {
		t.Fatalf("live block %d %+v", got[2].Slot, got[2].Transactions)
	}
}
