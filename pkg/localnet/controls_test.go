package localnet_test

import (
	"crypto/ed25519"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/devchain"
	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/delegation"
	esplprog "github.com/ferry-sh/ferry/pkg/ledger/programs/espl"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/magic"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// controls enables the rollup controls on the pair's ephemeral node and
// calls them through its JSON-RPC handler.
func (h *harness) controls() {
	h.t.Helper()
	h.p.EphemeralRPC.EnableDevMethods(devchain.NewRollup(h.p, nil).Methods())
}

type rpcErr struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (h *harness) control(method, params string, out any) *rpcErr {
	h.t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`
	var resp struct {
		Result json.RawMessage `json:"result"`
		Error  *rpcErr         `json:"error"`
	}
	if err := json.Unmarshal(h.p.EphemeralRPC.HandleBody(h.ctx, []byte(body)), &resp); err != nil {
		h.t.Fatal(err)
	}
	if resp.Error == nil && out != nil {
		if err := json.Unmarshal(resp.Result, out); err != nil {
			h.t.Fatalf("%s: %s: %v", method, resp.Result, err)
		}
	}
	return resp.Error
}

func (h *harness) queueView(params string) devchain.QueueView {
	h.t.Helper()
	var v devchain.QueueView
	if e := h.control(devchain.MethodGetQueue, params, &v); e != nil {
		h.t.Fatalf("getQueue: %+v", e)
	}
	return v
}

// checkConservation asserts docs/localnet.md §4's I1–I3 for the mint:
// base token accounts sum to the supply; the vault holds the rollup's
// balances plus the undelegated eATAs' claims; every intent ran.
func (h *harness) checkConservation(users ...solana.PublicKey) {
	h.t.Helper()
	sum := func(l *ledger.Ledger) uint64 {
		var s uint64
		accts, _ := l.TokenAccountsByMint(h.mint, ledger.Confirmed)
		for _, a := range accts {
			s += spl.TokenAmountOf(a.Account.Data)
		}
		return s
	}
	ma, _ := h.p.Base.Account(h.mint, ledger.Confirmed)
	m, _ := spl.DecodeMint(ma.Data)
	if b := sum(h.p.Base); b != m.Supply {
		h.t.Fatalf("I1: base accounts hold %d, supply %d", b, m.Supply)
	}
	var claims uint64
	for _, u := range users {
		k, _ := espl.FindEphemeralATA(u, h.mint)
		if a, _ := h.p.Base.Account(k, ledger.Confirmed); a != nil && a.Owner == esplprog.ProgramID {
			e, err := espl.DecodeEphemeralATA(a.Data)
			if err != nil {
				h.t.Fatal(err)
			}
			claims += e.Amount
		}
	}
	vault, _ := espl.FindGlobalVault(h.mint)
	if v, er := balanceOn(h.p.Base, h.ata(vault)), sum(h.p.Ephemeral); v != er+claims {
		h.t.Fatalf("I2: vault %d != rollup balances %d + eATA claims %d", v, er, claims)
	}
	g := h.guard()
	for _, it := range h.magicContext().Intents {
		if it.ID > g {
			h.t.Fatalf("I3: intent %d (%s) not executed", it.ID, it.Kind)
		}
	}
}

// TestCrankNowSettlesDelayedPayouts: private payouts queued for ten
// minutes are shown in the queue, settled at once by ferry_crankQueue
// (the rollup clock never moves), and paid on base by the validator's own
// transactions; the queue rewrite is a privileged write in the rollup's
// block.
func TestCrankNowSettlesDelayedPayouts(t *testing.T) {
	h := newHarness(t, "", nil)
	h.setupMint()
	h.controls()
	alice, bob := h.wallet(10_000_000), h.wallet(0)
	h.deposit(alice, 9_000_000)
	h.transfer(alice, payments.TransferRequest{To: pub(bob).String(), Amount: 3_000_000, Visibility: payments.Private,
		FromBalance: payments.Ephemeral, ToBalance: payments.Base, Split: ptr(int64(3)), MinDelayMs: "600000", ClientRefID: "42"})
	if h.baseBalance(pub(bob)) != 0 {
		t.Fatal("paid before its delay")
	}

	v := h.queueView(`[]`)
	nowMs := h.clock.Now().Unix() * 1000
	q, _ := espl.FindTransferQueue(h.mint, h.p.Identity())
	if v.NowMs != nowMs || len(v.Queues) != 1 || v.Queues[0].Address != q.String() || v.Queues[0].Mint != h.mint.String() || len(v.Queues[0].Entries) != 3 {
		t.Fatalf("queue view %+v", v)
	}
	seen := map[int]bool{}
	var total uint64
	for _, e := range v.Queues[0].Entries {
		if e.State != devchain.StatePending || e.ReadyAt < nowMs+600_000 || e.ClientRefID != "42" || e.Destination != pub(bob).String() ||
			e.Source != pub(alice).String() || e.Split == nil || e.Split.Of != 3 || e.Split.Paid != 0 || e.Split.Index == nil {
			t.Fatalf("entry %+v split %+v", e, e.Split)
		}
		seen[*e.Split.Index] = true
		var amt uint64
		json.Unmarshal([]byte(e.Amount), &amt)
		total += amt
	}
	if len(seen) != 3 || total != 3_000_000 {
		t.Fatalf("split indexes %v, total %d", seen, total)
	}
	if got := h.queueView(`[{"mint":"` + solana.SystemProgramID.String() + `"}]`); len(got.Queues) != 0 {
		t.Fatalf("another mint's view %+v", got)
	}

	// A filter matching nothing settles nothing.
	var none devchain.CrankResult
	if e := h.control(devchain.MethodCrankQueue, `[{"clientRefId":"7"}]`, &none); e != nil || len(none.Settled) != 0 {
		t.Fatalf("crank of clientRefId 7: %+v %+v", none, e)
	}
	if n := len(h.queueEntries()); n != 3 {
		t.Fatalf("%d entries after a crank that matched nothing", n)
	}

	blocks := h.p.Ephemeral.Subscribe(h.ctx)
	var out devchain.CrankResult
	if e := h.control(devchain.MethodCrankQueue, `[{"clientRefId":"42","mint":"`+h.mint.String()+`"}]`, &out); e != nil {
		t.Fatalf("crank: %+v", e)
	}
	if len(out.Settled) != 3 {
		t.Fatalf("settled %+v", out.Settled)
	}
	if got := h.baseBalance(pub(bob)); got != 3_000_000 {
		t.Fatalf("bob holds %d after crank now, want 3000000", got)
	}
	if n := len(h.queueEntries()); n != 0 {
		t.Fatalf("%d entries left", n)
	}
	steps := map[string]int{}
	for _, tx := range out.Transactions {
		steps[tx.Node+"/"+tx.Step]++
		if tx.Err != nil {
			t.Fatalf("validator transaction failed: %+v", tx)
		}
		l := h.p.Base
		if tx.Node == devchain.NodeEphemeral {
			l = h.p.Ephemeral
		}
		sig := solana.MustSignatureFromBase58(tx.Signature)
		if rec, err := l.Transaction(sig, ledger.Confirmed); err != nil || rec == nil || rec.Err != nil {
			t.Fatalf("%s transaction %s: %+v %v", tx.Node, tx.Signature, rec, err)
		}
	}
	if steps["ephemeral/crank"] != 1 || steps["base/payout"] != 3 {
		t.Fatalf("transactions %v", steps)
	}
	// The ready-time rewrite is in a rollup block's privileged writes.
	found := false
	for !found {
		select {
		case b := <-blocks:
			for _, apply := range b.Applied {
				for _, w := range apply {
					found = found || w.Key == q
				}
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no rollup block lists the queue rewrite")
		}
	}
	h.checkConservation(pub(alice), pub(bob))
}

// TestQueueSplitsAndPaying: once a piece of a split transfer is paid the
// remaining pieces keep their index when it is still determined, and a
// cranked payout waiting for base shows as paying with its intent.
func TestQueueSplitsAndPaying(t *testing.T) {
	h := newHarness(t, "", nil)
	h.setupMint()
	h.controls()
	alice := h.wallet(10_000_000)
	// The pieces' delays follow from the recipient (espl.Delay), and the
	// rollup's clock has whole seconds: the clock below pays exactly the
	// earliest piece only if no other is due within 2 s of it, so draw
	// recipients until none is (about one in 75 is not).
	const minDelay, maxDelay = 2000, 600000
	var bob ed25519.PrivateKey
	for apart := false; !apart; {
		bob = h.wallet(0)
		d := []uint64{espl.Delay(pub(bob), 0, minDelay, maxDelay), espl.Delay(pub(bob), 1, minDelay, maxDelay), espl.Delay(pub(bob), 2, minDelay, maxDelay)}
		slices.Sort(d)
		apart = d[1]-d[0] >= 2000 && d[2]-d[1] >= 2000
	}
	h.deposit(alice, 9_000_000)
	h.transfer(alice, payments.TransferRequest{To: pub(bob).String(), Amount: 3_000_000, Visibility: payments.Private,
		FromBalance: payments.Ephemeral, ToBalance: payments.Base, Split: ptr(int64(3)), MinDelayMs: strconv.Itoa(minDelay), MaxDelayMs: strconv.Itoa(maxDelay)})
	first := h.queueView(`[]`).Queues[0].Entries
	index := map[uint32]int{}
	earliest := first[0] // entries are sorted by ready time
	for _, e := range first {
		index[e.TaskID] = *e.Split.Index
	}
	// Pay the earliest piece by moving the clock to it.
	h.clock.Advance(time.Duration(earliest.ReadyAt-h.clock.Now().Unix()*1000)*time.Millisecond + time.Second)
	h.sync()
	left := h.queueView(`[]`).Queues[0].Entries
	if len(left) != 2 {
		t.Fatalf("%d entries left", len(left))
	}
	for _, e := range left {
		if e.Split.Paid != 1 || e.Split.Of != 3 {
			t.Fatalf("split %+v", e.Split)
		}
		if e.Split.Index != nil && *e.Split.Index != index[e.TaskID] {
			t.Fatalf("task %d index %d, truly %d", e.TaskID, *e.Split.Index, index[e.TaskID])
		}
		if index[earliest.TaskID] == 1 && e.Split.Index == nil {
			t.Fatalf("with the middle piece paid the others' indexes are known: %+v", e)
		}
		if index[earliest.TaskID] != 1 && e.Split.Index != nil {
			t.Fatalf("with an end piece paid the indexes are ambiguous: %+v", e)
		}
	}

	// A cranked payout not yet run on base is "paying".
	q, _ := espl.FindTransferQueue(h.mint, h.p.Identity())
	entry := espl.QueuedTransfer{Source: pub(alice), DestinationOwner: pub(bob), Amount: 5, TaskID: 99, GroupID: 7}
	action := esplprog.ExecuteReadyQueuedTransfer(esplprog.ExecuteReadyArgs{Validator: h.p.Identity(), Mint: h.mint,
		TokenProgram: spl.TokenProgramID, Queue: q, Destination: pub(bob), Entry: entry})
	if _, err := h.p.Ephemeral.Apply(h.ctx, func(w ledger.AccountWriter) error {
		a := w.Get(magic.ContextID)
		mc, err := magic.DecodeContext(a.Data)
		if err != nil {
			return err
		}
		mc.Intents = append(mc.Intents, magic.Intent{ID: mc.NextID, Kind: magic.KindBaseAction, Owner: esplprog.ProgramID, Action: magic.ActionOf(action)})
		mc.NextID++
		if a.Data, err = mc.Encode(); err != nil {
			return err
		}
		w.Set(magic.ContextID, a)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var paying *devchain.QueueEntry
	for _, e := range h.queueView(`[]`).Queues[0].Entries {
		if e.State == devchain.StatePaying {
			paying = &e
		}
	}
	if paying == nil || paying.TaskID != 99 || paying.Amount != "5" || paying.Intent == 0 || paying.Destination != pub(bob).String() {
		t.Fatalf("paying entry %+v", paying)
	}
}

// TestCommitAndUndelegateNow: commit now writes the eATA's rollup balance
// to base and keeps it delegated; undelegate now returns it to base
// without its owner's signature, as ix 5 would; both are the validator's
// signed base transactions, and the supply invariants hold.
func TestCommitAndUndelegateNow(t *testing.T) {
	h := newHarness(t, "", nil)
	h.setupMint()
	h.controls()
	alice, bob := h.wallet(10_000_000), h.wallet(1)
	h.deposit(alice, 9_000_000)
	h.deposit(bob, 1)
	h.transfer(alice, payments.TransferRequest{To: pub(bob).String(), Amount: 2_000_000, Visibility: payments.Public,
		FromBalance: payments.Ephemeral, ToBalance: payments.Ephemeral})
	eata, _ := espl.FindEphemeralATA(pub(alice), h.mint)
	baseEATA := func() (*ledger.Account, espl.EphemeralATA) {
		a, _ := h.p.Base.Account(eata, ledger.Confirmed)
		e, err := espl.DecodeEphemeralATA(a.Data)
		if err != nil {
			t.Fatal(err)
		}
		return a, e
	}
	if _, e := baseEATA(); e.Amount == 7_000_000 {
		t.Fatal("base already shows the rollup balance")
	}

	var res devchain.RollupResult
	if e := h.control(devchain.MethodCommitAccount, `["`+pub(alice).String()+`",{"mint":"`+h.mint.String()+`"}]`, &res); e != nil {
		t.Fatalf("commit: %+v", e)
	}
	if res.Account != eata.String() || res.Owner != pub(alice).String() || res.Amount != "7000000" || res.Intent == 0 {
		t.Fatalf("commit result %+v", res)
	}
	if a, e := baseEATA(); a.Owner != delegation.ProgramID || e.Amount != 7_000_000 {
		t.Fatalf("base eATA after commit: owner %s amount %d", a.Owner, e.Amount)
	}
	if !hasStep(res.Transactions, devchain.NodeBase, "commit") {
		t.Fatalf("commit transactions %+v", res.Transactions)
	}
	if h.erBalance(pub(alice)) != 7_000_000 {
		t.Fatal("commit changed the rollup balance")
	}
	// Still delegated: the rollup balance keeps moving.
	h.transfer(alice, payments.TransferRequest{To: pub(bob).String(), Amount: 1_000_000, Visibility: payments.Public,
		FromBalance: payments.Ephemeral, ToBalance: payments.Ephemeral})
	h.checkConservation(pub(alice), pub(bob))

	if e := h.control(devchain.MethodUndelegateAccount, `["`+eata.String()+`"]`, &res); e != nil {
		t.Fatalf("undelegate: %+v", e)
	}
	if res.Amount != "6000000" || !hasStep(res.Transactions, devchain.NodeBase, "undelegate") {
		t.Fatalf("undelegate result %+v", res)
	}
	if a, e := baseEATA(); a.Owner != esplprog.ProgramID || e.Amount != 6_000_000 {
		t.Fatalf("base eATA after undelegation: owner %s amount %d", a.Owner, e.Amount)
	}
	if a, _ := h.p.Ephemeral.Account(eata, ledger.Confirmed); a != nil {
		t.Fatal("the eATA is still on the rollup")
	}
	if a, _ := h.p.Ephemeral.Account(h.ata(pub(alice)), ledger.Confirmed); a != nil {
		t.Fatal("the drained projection is still on the rollup")
	}
	h.checkConservation(pub(alice), pub(bob))

	// Refusals: not delegated any more, not an eATA, a bad key.
	for _, c := range []struct{ method, params, msg string }{
		{devchain.MethodUndelegateAccount, `["` + eata.String() + `"]`, "is not delegated to this validator"},
		{devchain.MethodCommitAccount, `["` + pub(bob).String() + `"]`, "is not delegated to this validator"},
		{devchain.MethodCommitAccount, `["nope!"]`, "Invalid pubkey"},
		{devchain.MethodCommitAccount, `["` + eata.String() + `",{"mint":"` + h.mint.String() + `","extra":1}]`, "unknown field `extra`"},
	} {
		e := h.control(c.method, c.params, nil)
		if e == nil || e.Code != devchain.CodeInvalidParams || !strings.Contains(e.Message, c.msg) {
			t.Fatalf("%s %s: %+v, want %q", c.method, c.params, e, c.msg)
		}
	}
	// The queue's and the vault's eATAs are not a wallet's to move.
	q, _ := espl.FindTransferQueue(h.mint, h.p.Identity())
	qe, _ := espl.FindEphemeralATA(q, h.mint)
	if a, _ := h.p.Ephemeral.Account(qe, ledger.Confirmed); a != nil {
		if e := h.control(devchain.MethodCommitAccount, `["`+qe.String()+`"]`, nil); e == nil || !strings.Contains(e.Message, "not a wallet") {
			t.Fatalf("commit of the queue's eATA: %+v", e)
		}
	}
}

func hasStep(txs []devchain.RollupTx, node, step string) bool {
	for _, tx := range txs {
		if tx.Node == node && tx.Step == step && tx.Err == nil {
			return true
		}
	}
	return false
}
