package localnet_test

import (
	"crypto/ed25519"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/delegation"
	esplprog "github.com/ferry-sh/ferry/pkg/ledger/programs/espl"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/magic"
	"github.com/ferry-sh/ferry/pkg/localnet"
	"github.com/ferry-sh/ferry/pkg/payments"
)

// reopen closes h's pair and opens the same data directory again with the
// same clock (as a restarted `ferry serve` would).
func (h *harness) reopen(dir string) {
	h.t.Helper()
	if err := h.p.Close(); err != nil {
		h.t.Fatal(err)
	}
	p, err := localnet.Open(localnet.Config{DataDir: dir, ManualSlots: true, Now: h.clock.Now, FinalityDepth: -1, NoSync: true})
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { p.Close() })
	h.p, h.chain = p, p.Chain("")
}

// privateToBob queues a private base→base transfer of 15 tokens in three
// pieces, ready 5 to 9 seconds from now, and returns bob.
func (h *harness) privateToBob(alice ed25519.PrivateKey) ed25519.PrivateKey {
	h.t.Helper()
	bob := h.wallet(0)
	h.transfer(alice, payments.TransferRequest{To: pub(bob).String(), Amount: 15_000_000, Visibility: payments.Private,
		FromBalance: payments.Base, ToBalance: payments.Base, Split: ptr(int64(3)), MinDelayMs: "5000", MaxDelayMs: "9000"})
	if n := len(h.queueEntries()); n != 3 {
		h.t.Fatalf("%d entries queued", n)
	}
	return bob
}

// TestRestartKeepsPendingPayouts: payouts queued before a restart are paid
// after it, in full and once.
func TestRestartKeepsPendingPayouts(t *testing.T) {
	dir := t.TempDir()
	h := newHarness(t, dir, nil)
	h.setupMint()
	id := h.p.Identity()
	alice := h.wallet(50_000_000)
	bob := h.privateToBob(alice)
	h.reopen(dir)
	if h.p.Identity() != id {
		t.Fatal("the validator identity changed across the restart")
	}
	if got := h.baseBalance(pub(bob)); got != 0 {
		t.Fatalf("bob paid %d before the delays", got)
	}
	h.clock.Advance(10 * time.Second)
	h.sync()
	if got := h.baseBalance(pub(bob)); got != 15_000_000 {
		t.Fatalf("bob holds %d after the restart, want 15000000", got)
	}
	// Further passes pay nothing more.
	h.clock.Advance(time.Minute)
	h.sync()
	if got := h.baseBalance(pub(bob)); got != 15_000_000 {
		t.Fatalf("bob holds %d: paid twice", got)
	}
}

// validatorKey reads the identity the pair stored in its data directory.
func validatorKey(t *testing.T, dir string) ed25519.PrivateKey {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, localnet.KeypairFile))
	if err != nil {
		t.Fatal(err)
	}
	var ints []int
	if err := json.Unmarshal(b, &ints); err != nil {
		t.Fatal(err)
	}
	k := make([]byte, len(ints))
	for i, v := range ints {
		k[i] = byte(v)
	}
	return ed25519.PrivateKey(k)
}

// TestRestartMidPayout stops the validator at the two points where a
// payout is half done — popped on the rollup but not paid on base, and
// paid on base but not yet accepted on the rollup — and checks that after
// a restart every piece is paid exactly once.
func TestRestartMidPayout(t *testing.T) {
	for _, stage := range []string{"popped", "paid but not accepted"} {
		t.Run(stage, func(t *testing.T) {
			dir := t.TempDir()
			h := newHarness(t, dir, nil)
			h.setupMint()
			key := validatorKey(t, dir)
			alice := h.wallet(50_000_000)
			bob := h.privateToBob(alice)
			h.clock.Advance(10 * time.Second)
			h.settle() // the rollup's clock moves on; the validator does not run

			q, _ := espl.FindTransferQueue(h.mint, h.p.Identity())
			var entries []esplprog.CrankEntry
			for _, e := range h.queueEntries() {
				entries = append(entries, esplprog.CrankEntry{Source: e.Source, GroupID: e.GroupID, Destination: e.DestinationOwner})
			}
			crank, err := esplprog.CrankReadyTransfers(pub(key), q, h.mint, tokenProgram(t, h), entries)
			if err != nil {
				t.Fatal(err)
			}
			h.sendIx(h.p.Ephemeral, key, crank)
			mc := h.magicContext()
			if len(mc.Intents) != 3 {
				t.Fatalf("%d intents pending", len(mc.Intents))
			}
			if stage == "paid but not accepted" {
				for _, it := range mc.Intents {
					h.sendIx(h.p.Base, key, delegation.IntentGuard(pub(key), it.ID), it.Action.Instruction())
				}
				if got := h.baseBalance(pub(bob)); got != 15_000_000 {
					t.Fatalf("bob holds %d", got)
				}
			}
			h.reopen(dir)
			h.sync()
			if got := h.baseBalance(pub(bob)); got != 15_000_000 {
				t.Fatalf("bob holds %d after the restart, want exactly 15000000", got)
			}
			if mc := h.magicContext(); len(mc.Intents) != 0 {
				t.Fatalf("%d intents left in the magic context", len(mc.Intents))
			}
			if len(h.queueEntries()) != 0 {
				t.Fatal("queue not empty")
			}
		})
	}
}

func tokenProgram(t *testing.T, h *harness) solana.PublicKey {
	a, _ := h.p.Base.Account(h.mint, ledger.Confirmed)
	if a == nil {
		t.Fatal("mint missing")
	}
	return a.Owner
}

func (h *harness) magicContext() *magic.Context {
	h.t.Helper()
	a, _ := h.p.Ephemeral.Account(magic.ContextID, ledger.Confirmed)
	c, err := magic.DecodeContext(a.Data)
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}

// TestRestartBeforeTheValidatorRuns: a private transfer confirmed on base
// while the validator is down is processed after the restart, once.
func TestRestartBeforeTheValidatorRuns(t *testing.T) {
	dir := t.TempDir()
	h := newHarness(t, dir, nil)
	h.setupMint()
	alice, bob := h.wallet(50_000_000), h.wallet(0)
	out, err := h.planner.Transfer(h.ctx, h.chain, &payments.TransferRequest{From: pub(alice).String(), To: pub(bob).String(),
		Mint: h.mint.String(), Amount: 15_000_000, Visibility: payments.Private, FromBalance: payments.Base, ToBalance: payments.Base,
		Split: ptr(int64(3))})
	if err != nil {
		t.Fatal(err)
	}
	h.submit(out, alice) // confirmed on base; the validator has not looked yet
	h.reopen(dir)
	h.sync()
	h.sync()
	if got := h.baseBalance(pub(bob)); got != 15_000_000 {
		t.Fatalf("bob holds %d, want exactly 15000000", got)
	}
}

// TestShutdownSavesScanPosition: with the slot clocks running, the
// validator walks base blocks as the subscription delivers them; a clean
// shutdown records how far it got, so the next start does not read those
// blocks again from history.
func TestShutdownSavesScanPosition(t *testing.T) {
	dir := t.TempDir()
	cfg := localnet.Config{DataDir: dir, BaseSlot: 5 * time.Millisecond, EphemeralSlot: 5 * time.Millisecond, NoSync: true}
	p, err := localnet.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	// Fewer base slots than the idle flush interval: without the save at
	// shutdown the cursor would stay where it started.
	start := p.Base.Slot(ledger.Confirmed)
	if err := p.Base.WaitForSlot(ctx, start+10, ledger.Confirmed); err != nil {
		t.Fatal(err)
	}
	if err := p.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	walked := p.Base.Slot(ledger.Confirmed)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	p, err = localnet.Open(localnet.Config{DataDir: dir, ManualSlots: true, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	a, _ := p.Ephemeral.Account(magic.BridgeStateID, ledger.Processed)
	st, err := magic.DecodeBridgeState(a.Data)
	if err != nil {
		t.Fatal(err)
	}
	if st.Cursor.Slot < walked {
		t.Fatalf("cursor saved at slot %d, the validator had walked to %d", st.Cursor.Slot, walked)
	}
}
