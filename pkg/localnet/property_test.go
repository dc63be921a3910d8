package localnet_test

import (
	"crypto/ed25519"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/delegation"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// TestSupplyInvariant runs random sequences of the pair's operations
// (deposits, public ER transfers, private base→base / base→ER / ER→base
// transfers with random splits, delays and exactOut, withdrawals — some
// for more than the rollup balance, which refunds —, undelegations with
// legacy withdrawals and re-delegations, and clock moves) and checks,
// after every operation once the validator has caught up (Pair.Sync):
//
//	(I1) base conservation: the sum of every base token account of the
//	     mint (users, global vault ATA, queue vault ATA, shuttle wallets)
//	     equals the mint's supply, which equals everything the test minted;
//	(I2) backing: the global vault ATA's balance on base equals the sum of
//	     every token account of the mint on the ephemeral ledger (projected
//	     ATAs, the queue vault ATA holding queued payouts and privacy fees,
//	     shuttle wallets) plus the amounts recorded in undelegated eATAs on
//	     base (claims the legacy withdrawal pays from the vault);
//	(I3) nothing is in flight: the Magic context holds no intent that the
//	     base intent guard has not executed.
//
// I2 is docs/localnet.md §4 at rest: every token deposited on base sits
// in the vault exactly once, as one rollup balance or one eATA claim.
func TestSupplyInvariant(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4, 5, 6, 7, 8}
	steps := 80
	if testing.Short() {
		seeds, steps = seeds[:1], 15
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			runInvariant(t, seed, steps)
		})
	}
}

type model struct {
	h      *harness
	rng    *rand.Rand
	users  []ed25519.PrivateKey
	minted uint64
	log    []string
}

func runInvariant(t *testing.T, seed uint64, steps int) {
	h := newHarness(t, "", nil)
	h.setupMint()
	m := &model{h: h, rng: rand.New(rand.NewPCG(seed, 42))}
	for i := 0; i < 4; i++ {
		amount := uint64(50_000_000 + m.rng.IntN(50_000_000))
		m.users = append(m.users, h.wallet(amount))
		m.minted += amount
	}
	m.check("setup")
	for i := 0; i < steps; i++ {
		op := m.step()
		m.log = append(m.log, op)
		m.checkBase(op) // I1 holds at every point, even with work in flight
		h.sync()
		m.check(op)
	}
	t.Logf("operations: %q", m.log)
	// Let every queued payout become ready, then check once more.
	h.clock.Advance(time.Hour)
	h.sync()
	m.check("drain")
	q, _ := espl.FindTransferQueue(h.mint, h.p.Identity())
	if n := len(h.queueEntries()); n != 0 {
		t.Fatalf("%d entries still queued in %s after an hour", n, q)
	}
}

func (m *model) pick() ed25519.PrivateKey { return m.users[m.rng.IntN(len(m.users))] }

func (m *model) other(k ed25519.PrivateKey) ed25519.PrivateKey {
	for {
		if o := m.pick(); pub(o) != pub(k) {
			return o
		}
	}
}

// delegated reports whether k's eATA is delegated (k is on the rollup).
func (m *model) delegated(k ed25519.PrivateKey) bool {
	eata, _ := espl.FindEphemeralATA(pub(k), m.h.mint)
	a, _ := m.h.p.Base.Account(eata, ledger.Confirmed)
	return a != nil && a.Owner == espl.DelegationProgramID
}

func (m *model) eataAmount(k ed25519.PrivateKey) uint64 {
	eata, _ := espl.FindEphemeralATA(pub(k), m.h.mint)
	a, _ := m.h.p.Base.Account(eata, ledger.Confirmed)
	if a == nil || a.Owner != espl.ProgramID {
		return 0
	}
	e, _ := espl.DecodeEphemeralATA(a.Data)
	return e.Amount
}

func (m *model) amount(limit uint64) uint64 {
	if limit == 0 {
		return 0
	}
	return 1 + m.rng.Uint64N(limit)
}

// submit builds with the planner and submits; planner rejections and
// failed transactions are legitimate outcomes (the invariant must hold
// either way), so they are only logged.
func (m *model) submit(desc string, build func() (*payments.UnsignedTransaction, error), k ed25519.PrivateKey) string {
	out, err := build()
	if err != nil {
		return desc + " (rejected: " + err.Error() + ")"
	}
	rec, err := m.h.trySubmit(out, k)
	switch {
	case err != nil:
		return desc + " (not landed: " + err.Error() + ")"
	case rec.Err != nil:
		return desc + " (failed: " + rec.Err.Error() + ")"
	}
	return desc
}

func (m *model) transfer(k ed25519.PrivateKey, req payments.TransferRequest) string {
	req.From, req.Mint = pub(k).String(), m.h.mint.String()
	desc := fmt.Sprintf("%s %s→%s %d", req.Visibility, req.FromBalance, req.ToBalance, req.Amount)
	return m.submit(desc, func() (*payments.UnsignedTransaction, error) {
		return m.h.planner.Transfer(m.h.ctx, m.h.chain, &req)
	}, k)
}

func (m *model) step() string {
	h := m.h
	u := m.pick()
	base, er := h.baseBalance(pub(u)), h.erBalance(pub(u))
	switch m.rng.IntN(10) {
	case 0, 1: // deposit
		a := m.amount(base / 2)
		if a == 0 {
			return "deposit skipped"
		}
		return m.submit(fmt.Sprintf("deposit %d", a), func() (*payments.UnsignedTransaction, error) {
			return h.planner.Deposit(h.ctx, h.chain, &payments.DepositRequest{Owner: pub(u).String(), Mint: h.mint.String(), Amount: int64(a)})
		}, u)
	case 2: // public ER → ER
		v := m.other(u)
		if er == 0 || !m.delegated(v) {
			return "ER transfer skipped"
		}
		return m.transfer(u, payments.TransferRequest{To: pub(v).String(), Amount: int64(m.amount(er)), Visibility: payments.Public,
			FromBalance: payments.Ephemeral, ToBalance: payments.Ephemeral})
	case 3: // private base → base
		a := m.amount(base / 4)
		if a < 3 {
			return "private base→base skipped"
		}
		minD := m.rng.IntN(2000)
		return m.transfer(u, payments.TransferRequest{To: pub(m.other(u)).String(), Amount: int64(a), Visibility: payments.Private,
			FromBalance: payments.Base, ToBalance: payments.Base, Split: ptr(int64(1 + m.rng.IntN(3))),
			MinDelayMs: strconv.Itoa(minD), MaxDelayMs: strconv.Itoa(minD + m.rng.IntN(3000)), ExactOut: ptr(m.rng.IntN(2) == 0)})
	case 4: // private base → ER, to someone on the rollup or not (refund)
		a := m.amount(base / 4)
		if a == 0 {
			return "private base→ER skipped"
		}
		return m.transfer(u, payments.TransferRequest{To: pub(m.other(u)).String(), Amount: int64(a), Visibility: payments.Private,
			FromBalance: payments.Base, ToBalance: payments.Ephemeral, InitIfMissing: ptr(m.rng.IntN(2) == 0)})
	case 5: // private ER → base
		a := m.amount(er)
		if a < 3 {
			return "private ER→base skipped"
		}
		return m.transfer(u, payments.TransferRequest{To: pub(m.other(u)).String(), Amount: int64(a), Visibility: payments.Private,
			FromBalance: payments.Ephemeral, ToBalance: payments.Base, Split: ptr(int64(1 + m.rng.IntN(3))),
			MinDelayMs: strconv.Itoa(m.rng.IntN(1500))})
	case 6: // withdraw, sometimes more than the rollup holds
		if !m.delegated(u) {
			return "withdraw skipped"
		}
		a := m.amount(er + 5)
		return m.submit(fmt.Sprintf("withdraw %d of %d", a, er), func() (*payments.UnsignedTransaction, error) {
			return h.planner.Withdraw(h.ctx, h.chain, &payments.WithdrawRequest{Owner: pub(u).String(), Mint: h.mint.String(), Amount: int64(a)})
		}, u)
	case 7: // undelegate on the rollup (ix 5)
		if !m.delegated(u) {
			return "undelegate skipped"
		}
		ix := espl.UndelegateEphemeralATA(espl.UndelegateEphemeralATAArgs{Owner: pub(u), Mint: h.mint})
		h.sendIx(h.p.Ephemeral, u, ix)
		return "undelegate"
	case 8: // legacy withdraw of an undelegated eATA's claim
		claim := m.eataAmount(u)
		if claim == 0 || m.delegated(u) {
			return "legacy withdraw skipped"
		}
		a := m.amount(claim)
		return m.submit(fmt.Sprintf("legacy withdraw %d of %d", a, claim), func() (*payments.UnsignedTransaction, error) {
			return h.planner.Withdraw(h.ctx, h.chain, &payments.WithdrawRequest{Owner: pub(u).String(), Mint: h.mint.String(),
				Amount: int64(a), Idempotent: ptr(false)})
		}, u)
	default:
		d := time.Duration(m.rng.IntN(4000)) * time.Millisecond
		h.clock.Advance(d)
		return "clock +" + d.String()
	}
}

// checkBase asserts I1 alone.
func (m *model) checkBase(after string) {
	h := m.h
	h.t.Helper()
	var sum uint64
	accts, _ := h.p.Base.TokenAccountsByMint(h.mint, ledger.Processed)
	for _, a := range accts {
		sum += spl.TokenAmountOf(a.Account.Data)
	}
	ma, _ := h.p.Base.Account(h.mint, ledger.Processed)
	mint, _ := spl.DecodeMint(ma.Data)
	if sum != mint.Supply || mint.Supply != m.minted {
		h.t.Fatalf("after %q (in flight): I1: base accounts hold %d, supply %d, minted %d", after, sum, mint.Supply, m.minted)
	}
}

// check asserts I1–I3 (see TestSupplyInvariant).
func (m *model) check(after string) {
	h := m.h
	h.t.Helper()
	fail := func(format string, args ...any) {
		h.t.Helper()
		h.t.Fatalf("after %q: "+format+"\nhistory: %q", append(append([]any{after}, args...), m.log)...)
	}
	sum := func(l *ledger.Ledger) uint64 {
		var s uint64
		accts, _ := l.TokenAccountsByMint(h.mint, ledger.Confirmed)
		for _, a := range accts {
			s += spl.TokenAmountOf(a.Account.Data)
		}
		return s
	}
	ma, _ := h.p.Base.Account(h.mint, ledger.Confirmed)
	mint, err := spl.DecodeMint(ma.Data)
	if err != nil {
		fail("%v", err)
	}
	if base := sum(h.p.Base); base != mint.Supply || mint.Supply != m.minted {
		fail("I1: base accounts hold %d, supply %d, minted %d", base, mint.Supply, m.minted)
	}
	vault, _ := espl.FindGlobalVault(h.mint)
	var claims uint64
	for _, u := range m.users {
		claims += m.eataAmount(u)
	}
	if v, er := balanceOn(h.p.Base, h.ata(vault)), sum(h.p.Ephemeral); v != er+claims {
		fail("I2: vault %d != rollup balances %d + eATA claims %d (diff %d)", v, er, claims, int64(v)-int64(er+claims))
	}
	guard := h.guard()
	for _, it := range h.magicContext().Intents {
		if it.ID > guard {
			fail("I3: intent %d (%s of %s) not executed", it.ID, it.Kind, it.Account)
		}
	}
}

// guard is the id of the last intent executed on base.
func (h *harness) guard() uint64 {
	a, _ := h.p.Base.Account(delegation.GuardAddress(h.p.Identity()), ledger.Confirmed)
	if a == nil {
		return 0
	}
	g, err := delegation.DecodeGuard(a.Data)
	if err != nil {
		h.t.Fatal(err)
	}
	return g.LastIntentID
}
