package espl_test

import (
	"testing"

	"github.com/gagliardetto/solana-go"

	es "github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/espl"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/magic"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/permission"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/programtest"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

func (e *ephemeralWorld) queueTransfer(t *testing.T, owner, dest solana.PublicKey, amount uint64, split uint32, minMs, maxMs uint64, group uint32, ref *uint64, withPerm bool) *programtest.Result {
	t.Helper()
	ix := mustIx(t)(es.DepositAndQueueTransfer(es.DepositAndQueueTransferArgs{Owner: owner, Mint: e.mint, Validator: validator,
		Destination: dest, Amount: amount, Split: split, MinDelayMs: minMs, MaxDelayMs: maxMs, GroupID: group, ClientRefID: ref,
		WithGroupReceiptPermission: withPerm}))
	// Any keypair pays on the rollup; here the sender does.
	return e.h.Run(owner, ix)
}

func TestDepositAndQueueTransfer(t *testing.T) {
	e := newEphemeral(t, 8)
	e.project(e.user, 50_000_000) // 50 tokens
	dest := wallet(t)
	ref := uint64(42)
	vaultBefore := e.h.Lamports(magic.VaultID)
	res := e.queueTransfer(t, e.user, dest, 16_000_000, 3, 1_000, 9_000, 0xABCDEF, &ref, true)
	res.RequireSuccess(t)
	if e.balance(e.ata(e.user)) != 34_000_000 || e.balance(e.ata(e.queue)) != 16_000_000 {
		t.Fatal("tokens did not move to the queue vault")
	}
	q := e.queueState()
	if q.Len() != 3 {
		t.Fatalf("%d entries", q.Len())
	}
	plan := es.SplitPlan(16_000_000, 3, decimals) // 5, 5, 6 tokens
	now := e.h.Env.UnixTimestamp
	seen := map[uint64]int{}
	for i := 0; i < q.Len(); i++ {
		en := q.At(i)
		if en.DestinationOwner != dest || en.ClientRefID != 42 || en.GroupID != 0xABCDEF || en.Source != e.user ||
			en.Flags&es.QueuedFlagCreateIdempotentATA == 0 {
			t.Fatalf("entry %+v", en)
		}
		seen[en.Amount]++
		pos := uint64(en.TaskID - 1)
		if want := es.ReadyAt(now, es.Delay(dest, pos, 1_000, 9_000)); en.ReadyAt != want {
			t.Fatalf("task %d ready at %d, want %d", en.TaskID, en.ReadyAt, want)
		}
	}
	if seen[plan[0]] != 2 || seen[plan[2]] != 1 {
		t.Fatalf("pieces %v, plan %v", seen, plan)
	}
	rk, _ := es.FindGroupReceipt(e.queue, e.user, 0xABCDEF)
	r := e.h.Account(rk)
	if r == nil || r.Owner != espl.ProgramID {
		t.Fatal("group receipt missing")
	}
	g, err := es.DecodeGroupReceipt(r.Data)
	if err != nil || g.Amount != 16_000_000 || g.ClientRefID != 42 || g.Split != 3 || g.DestinationOwner != dest || g.Executed != 0 {
		t.Fatalf("receipt %+v %v", g, err)
	}
	if e.h.Account(permission.Address(rk)) == nil {
		t.Fatal("receipt permission missing")
	}
	if paid := vaultBefore - e.h.Lamports(magic.VaultID); paid != r.Lamports+e.h.Lamports(permission.Address(rk)) {
		t.Fatalf("the ephemeral vault paid %d", paid)
	}
	// The same group cannot be queued twice.
	e.queueTransfer(t, e.user, dest, 1, 1, 0, 0, 0xABCDEF, nil, false).RequireError(t, 0, runtime.ErrAccountAlreadyInitialized)

	// Argument checks (§9.4).
	for _, c := range []struct {
		amount     uint64
		split      uint32
		minMs, max uint64
	}{{0, 1, 0, 0}, {5, 6, 0, 0}} {
		ix := mustIx(t)(es.DepositAndQueueTransfer(es.DepositAndQueueTransferArgs{Owner: e.user, Mint: e.mint, Validator: validator,
			Destination: dest, Amount: 1, GroupID: 9}))
		d, _ := es.Decode(ix.Data, keysOf(ix))
		q := d.(es.DepositAndQueueTransferIx)
		q.Amount, q.Split, q.MinDelayMs, q.MaxDelayMs = c.amount, c.split, c.minMs, c.max
		e.h.Run(e.user, q.Instruction()).RequireError(t, 0, espl.ErrInvalidArguments)
	}
	// Nobody else can spend the sender's balance.
	thief := wallet(t)
	ix := mustIx(t)(es.DepositAndQueueTransfer(es.DepositAndQueueTransferArgs{Owner: thief, Mint: e.mint, Validator: validator,
		Destination: dest, Amount: 1, GroupID: 9, Source: e.ata(e.user), Reimbursement: e.ata(e.user)}))
	if res := e.h.Run(thief, ix); res.Err == nil {
		t.Fatal("thief queued the sender's tokens")
	}
}

func keysOf(ix txwire.Instruction) []solana.PublicKey {
	out := make([]solana.PublicKey, len(ix.Accounts))
	for i, m := range ix.Accounts {
		out[i] = m.PublicKey
	}
	return out
}

func TestQueueFullRefunds(t *testing.T) {
	e := newEphemeral(t, 2)
	e.project(e.user, 1_000)
	dest := wallet(t)
	e.queueTransfer(t, e.user, dest, 100, 2, 0, 0, 1, nil, false).RequireSuccess(t)
	// No room for two more: the amount goes back to the reimbursement
	// account (here a separate one, to see the refund).
	refund := e.ata(key("refund owner"))
	e.h.AddTokenAccount(refund, spl.TokenProgramID, spl.TokenAccount{Mint: e.mint, Owner: key("refund owner")})
	ix := mustIx(t)(es.DepositAndQueueTransfer(es.DepositAndQueueTransferArgs{Owner: e.user, Mint: e.mint, Validator: validator,
		Destination: dest, Amount: 300, Split: 2, GroupID: 2, Reimbursement: refund}))
	res := e.h.Run(e.user, ix)
	res.RequireSuccess(t)
	if e.queueState().Len() != 2 || e.balance(refund) != 300 || e.balance(e.ata(e.queue)) != 100 {
		t.Fatalf("full queue: len %d refund %d queue vault %d", e.queueState().Len(), e.balance(refund), e.balance(e.ata(e.queue)))
	}
	rk, _ := es.FindGroupReceipt(e.queue, e.user, 2)
	if e.h.Account(rk) != nil {
		t.Fatal("a refunded group has no receipt")
	}
}

func TestCrankReadyTransfers(t *testing.T) {
	e := newEphemeral(t, 8)
	e.project(e.user, 30_000_000)
	dest := wallet(t)
	e.queueTransfer(t, e.user, dest, 15_000_000, 3, 0, 2_000, 5, nil, false).RequireSuccess(t)
	entries := func(n int) []espl.CrankEntry {
		out := make([]espl.CrankEntry, n)
		for i := range out {
			out[i] = espl.CrankEntry{Source: e.user, GroupID: 5, Destination: dest}
		}
		return out
	}
	crank := func(n int) *programtest.Result {
		ix := mustIx(t)(espl.CrankReadyTransfers(validator, e.queue, e.mint, spl.TokenProgramID, entries(n)))
		return e.h.Run(validator, ix)
	}
	// Nothing is ready before the earliest ready_at.
	q := e.queueState()
	first, _ := q.Peek()
	if first.ReadyAt > e.h.Env.UnixTimestamp*1000 {
		crank(1).RequireError(t, 0, espl.ErrNothingReady)
	}
	e.h.Env.UnixTimestamp += 2 // every delay is at most 2 s
	crank(3).RequireSuccess(t)
	if e.queueState().Len() != 0 || e.balance(e.ata(e.queue)) != 0 {
		t.Fatal("crank did not drain the queue")
	}
	c := e.context()
	if len(c.Intents) != 3 {
		t.Fatalf("%d intents", len(c.Intents))
	}
	var total uint64
	for _, it := range c.Intents {
		if it.Kind != magic.KindBaseAction || it.Owner != espl.ProgramID {
			t.Fatalf("intent %+v", it)
		}
		rt, err := espl.DecodeExecuteReady(it.Action.Instruction())
		if err != nil || rt.Destination != dest {
			t.Fatalf("action %+v %v", rt, err)
		}
		total += rt.Entry.Amount
	}
	if total != 15_000_000 {
		t.Fatalf("payouts total %d", total)
	}
	rk, _ := es.FindGroupReceipt(e.queue, e.user, 5)
	if g, _ := es.DecodeGroupReceipt(e.h.Account(rk).Data); g.Executed != 3 {
		t.Fatalf("receipt executed %d", g.Executed)
	}
	// Only the validator cranks.
	e.queueTransfer(t, e.user, dest, 1, 1, 0, 0, 6, nil, false).RequireSuccess(t)
	thief := wallet(t)
	ix := mustIx(t)(espl.CrankReadyTransfers(thief, e.queue, e.mint, spl.TokenProgramID, []espl.CrankEntry{{Source: e.user, GroupID: 6, Destination: dest}}))
	e.h.Run(thief, ix).RequireError(t, 0, espl.ErrNotValidator)
}

func TestStealthPoolResolution(t *testing.T) {
	for _, split := range []bool{false, true} {
		e := newEphemeral(t, 8)
		e.project(e.user, 30_000_000)
		auth := wallet(t)
		handle := []byte("bob.block")
		pool, bump, _ := es.FindStealthPool(handle)
		h, _ := es.EncodeHandle(handle)
		data := make([]byte, es.StealthPoolSize)
		copy(data, es.StealthPoolDiscriminator)
		data[8] = bump
		copy(data[10:], auth[:])
		copy(data[42:], h[:])
		e.h.SetAccount(pool, runtime.Account{Lamports: e.h.Env.Rent.MinimumBalance(len(data)), Owner: espl.ProgramID, Data: data})
		keys := []solana.PublicKey{wallet(t), wallet(t)}
		var flags uint8
		if split {
			flags = es.StealthFlagSplitAcrossKeys
		}
		upd := mustIx(t)(es.UpdateStealthPool(es.UpdateStealthPoolArgs{Payer: auth, Authority: auth, Handle: handle, Flags: flags, Destinations: keys}))
		e.h.Run(auth, upd).RequireSuccess(t)
		// Another authority cannot update it.
		other := wallet(t)
		bad := mustIx(t)(es.UpdateStealthPool(es.UpdateStealthPoolArgs{Payer: other, Authority: other, Handle: handle, Destinations: keys[:1]}))
		e.h.Run(other, bad).RequireError(t, 0, espl.ErrInvalidStealthPool)

		e.queueTransfer(t, e.user, pool, 15_000_000, 3, 0, 0, 8, nil, false).RequireSuccess(t)
		entries := make([]espl.CrankEntry, 3)
		for i := range entries {
			entries[i] = espl.CrankEntry{Source: e.user, GroupID: 8, Destination: pool}
		}
		e.h.Run(validator, mustIx(t)(espl.CrankReadyTransfers(validator, e.queue, e.mint, spl.TokenProgramID, entries))).RequireSuccess(t)
		got := map[solana.PublicKey]int{}
		for _, it := range e.context().Intents {
			rt, _ := espl.DecodeExecuteReady(it.Action.Instruction())
			got[rt.Destination]++
		}
		if split && (got[keys[0]] != 2 || got[keys[1]] != 1) {
			t.Fatalf("split across keys: %v", got)
		}
		if !split && got[keys[0]] != 3 {
			t.Fatalf("first key only: %v", got)
		}
		if got[pool] != 0 {
			t.Fatal("paid the pool itself")
		}
	}
}

func TestUndelegateEATAEphemeral(t *testing.T) {
	e := newEphemeral(t, 4)
	e.project(e.user, 1_234)
	ix := es.UndelegateEphemeralATA(es.UndelegateEphemeralATAArgs{Owner: e.user, Mint: e.mint})
	e.h.Run(e.user, ix).RequireSuccess(t)
	c := e.context()
	if len(c.Intents) != 1 {
		t.Fatalf("%d intents", len(c.Intents))
	}
	it := c.Intents[0]
	committed, _ := es.DecodeEphemeralATA(it.Data)
	if it.Kind != magic.KindCommitAndUndelegate || it.Account != e.eata(e.user) || committed.Amount != 1_234 || it.Evict[0] != e.ata(e.user) {
		t.Fatalf("intent %+v", it)
	}
	ta, _ := spl.DecodeTokenAccount(e.h.Account(e.ata(e.user)).Data)
	if ta.Amount != 0 || ta.State != spl.StateFrozen {
		t.Fatalf("projection after undelegation %+v", ta)
	}
	// A second request is refused while the first is pending.
	e.h.Run(e.user, ix).RequireError(t, 0, espl.ErrInvalidTokenAccount)
	// A drained, frozen projection cannot move tokens.
	bob := wallet(t)
	e.project(bob, 10)
	if res := e.h.Run(bob, spl.TokenTransfer(spl.TokenProgramID, e.ata(bob), e.ata(e.user), bob, 5)); res.Err == nil {
		t.Fatal("transfer into a frozen projection succeeded")
	}
	// Someone else cannot undelegate the user's eATA.
	e.project(e.user, 0)
	thief := wallet(t)
	bad := es.UndelegateEphemeralATA(es.UndelegateEphemeralATAArgs{Owner: thief, Mint: e.mint})
	bad.Accounts[1] = txwire.Writable(e.ata(e.user))
	bad.Accounts[2] = txwire.Readonly(e.eata(e.user))
	e.h.Run(thief, bad).RequireError(t, 0, espl.ErrInvalidEATA)
}

// shuttleOnER sets up a shuttle as the validator clones it: metadata,
// delegated eATA and its projection (the wallet ATA) holding amount.
func (e *ephemeralWorld) shuttleOnER(owner, payer solana.PublicKey, id uint32, amount uint64) (meta, seata, wallet solana.PublicKey) {
	meta, mb := es.FindShuttleMetadata(owner, e.mint, id)
	md := es.ShuttleMetadata{Owner: owner, Payer: payer, ID: id, Bump: mb}.Encode()
	e.h.SetAccount(meta, runtime.Account{Lamports: e.h.Env.Rent.MinimumBalance(len(md)), Owner: espl.ProgramID, Data: md})
	e.project(meta, amount)
	seata, _ = es.FindEphemeralATA(meta, e.mint)
	return meta, seata, e.ata(meta)
}

func TestShuttleActions(t *testing.T) {
	e := newEphemeral(t, 4)
	owner, payer := wallet(t), wallet(t)
	e.project(owner, 10)
	meta, seata, wallet := e.shuttleOnER(owner, payer, 3, 500)
	merge := es.MergeShuttle(es.MergeShuttleArgs{Owner: owner, Mint: e.mint, ShuttleID: 3})
	// Through the action executor, the owner's signature is granted by the
	// validator (the registered action signer); nobody else may grant it.
	closeIx := es.UndelegateAndCloseShuttle(es.UndelegateAndCloseShuttleArgs{Payer: validator, RentReimbursement: payer,
		Owner: owner, Mint: e.mint, ShuttleID: 3})
	exec := mustIx(t)(magic.ExecuteActions(validator, []solana.PublicKey{owner}, []txwire.Instruction{merge, closeIx}))
	stranger := wallet2e(t)
	forged := mustIx(t)(magic.ExecuteActions(stranger, []solana.PublicKey{owner}, []txwire.Instruction{merge}))
	e.h.Run(stranger, forged).RequireError(t, 0, magic.ErrNotValidator)
	noGrant := mustIx(t)(magic.ExecuteActions(validator, nil, []txwire.Instruction{merge}))
	e.h.Run(validator, noGrant).RequireError(t, 0, magic.ErrInvalidAction)

	e.h.Run(validator, exec).RequireSuccess(t)
	if e.balance(e.ata(owner)) != 510 || e.balance(wallet) != 0 {
		t.Fatal("merge did not move the shuttle's tokens")
	}
	c := e.context()
	it := c.Intents[len(c.Intents)-1]
	committed, _ := es.DecodeEphemeralATA(it.Data)
	if it.Kind != magic.KindCommitAndUndelegate || it.Account != seata || committed.Amount != 0 || it.Action == nil {
		t.Fatalf("intent %+v", it)
	}
	if it.Action.ProgramID != espl.ProgramID || it.Action.Data[0] != byte(espl.IxCloseShuttle) {
		t.Fatalf("base action %+v", it.Action)
	}
	if !containsKey(it.Evict, meta) || !containsKey(it.Evict, wallet) {
		t.Fatalf("evictions %v", it.Evict)
	}
	// The rent goes back only to the shuttle's payer.
	_, _, _ = e.shuttleOnER(owner, payer, 4, 1)
	bad := es.UndelegateAndCloseShuttle(es.UndelegateAndCloseShuttleArgs{Payer: validator, RentReimbursement: stranger,
		Owner: owner, Mint: e.mint, ShuttleID: 4})
	e.h.Run(validator, bad).RequireError(t, 0, espl.ErrInvalidShuttle)
}

func wallet2e(t *testing.T) solana.PublicKey { return wallet(t) }

func containsKey(ks []solana.PublicKey, k solana.PublicKey) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

func TestEnsureCrank(t *testing.T) {
	e := newEphemeral(t, 4)
	payer := wallet(t) // a throw-away key with no lamports
	ix := es.EnsureQueueCrank(es.EnsureQueueCrankArgs{Payer: payer, Mint: e.mint, Validator: validator})
	e.h.Run(payer, ix).RequireSuccess(t)
	if h := e.queueState().Header(); h.CrankTaskID == 0 {
		t.Fatal("crank task not recorded")
	}
	e.h.Run(payer, ix).RequireSuccess(t) // repeatable
}

func TestMagicCursorAndAccept(t *testing.T) {
	e := newEphemeral(t, 4)
	pos := magic.Position{Slot: 5, Tx: 1, Step: 2}
	e.h.Run(validator, magic.AdvanceBaseCursor(validator, pos)).RequireSuccess(t)
	e.h.Run(validator, magic.AdvanceBaseCursor(validator, pos)).RequireError(t, 0, magic.ErrCursorNotAdvanced)
	e.h.Run(validator, magic.AdvanceBaseCursor(validator, magic.Position{Slot: 5, Tx: 1, Step: 1})).RequireError(t, 0, magic.ErrCursorNotAdvanced)
	e.h.Run(validator, magic.AdvanceBaseCursor(validator, magic.Position{Slot: 5, Tx: 2})).RequireSuccess(t)
	st, _ := magic.DecodeBridgeState(e.h.Account(magic.BridgeStateID).Data)
	if st.Cursor != (magic.Position{Slot: 5, Tx: 2}) {
		t.Fatalf("cursor %+v", st.Cursor)
	}
	e.project(e.user, 1)
	e.h.Run(e.user, es.UndelegateEphemeralATA(es.UndelegateEphemeralATAArgs{Owner: e.user, Mint: e.mint})).RequireSuccess(t)
	thief := wallet(t)
	e.h.Run(thief, magic.AcceptIntents(thief, 10)).RequireError(t, 0, magic.ErrNotValidator)
	e.h.Run(validator, magic.AcceptIntents(validator, 10)).RequireSuccess(t)
	if c := e.context(); len(c.Intents) != 0 || c.NextID != 2 {
		t.Fatalf("context %+v", c)
	}
	// Schedule instructions are CPI-only.
	sched := mustIx(t)(magic.Schedule(magic.ScheduleArgs{Payer: validator, Account: e.eata(e.user)}))
	e.h.Run(validator, sched).RequireError(t, 0, magic.ErrCPIOnly)
	e.h.Run(validator, magic.CreateEphemeralAccount(wallet(t), 10)).RequireError(t, 0, magic.ErrCPIOnly)
}
