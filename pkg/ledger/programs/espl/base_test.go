package espl_test

import (
	"bytes"
	"crypto/rand"
	"testing"

	"github.com/gagliardetto/solana-go"

	es "github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/delegation"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/espl"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/permission"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/programtest"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

func TestInitializeMint(t *testing.T) {
	w := newBase(t)
	w.initializeMint()
	q := w.h.Account(w.queue)
	if q == nil || q.Owner != delegation.ProgramID {
		t.Fatalf("queue %+v: want delegated (owned by DLP)", q)
	}
	tq, err := es.OpenTransferQueue(q.Data)
	if err != nil {
		t.Fatal(err)
	}
	if h := tq.Header(); h.Mint != w.mint || h.Validator != validator || tq.Cap() != es.DefaultTransferQueueCapacity || tq.Len() != 0 {
		t.Fatalf("queue header %+v cap %d", h, tq.Cap())
	}
	if r := w.record(w.queue); r.Authority != validator || r.Owner != espl.ProgramID {
		t.Fatalf("queue record %+v", r)
	}
	qeata := w.eata(w.queue)
	if r := w.record(qeata); r.Authority != validator {
		t.Fatalf("queue eATA record %+v", r)
	}
	if w.record(w.eata(w.vault)).Authority != validator {
		t.Fatal("vault eATA not delegated")
	}
	if w.h.Account(w.ata(w.queue)) == nil || w.h.Account(w.vata) == nil {
		t.Fatal("queue vault ATA or vault ATA missing")
	}
	perm, err := permission.Decode(w.h.Account(permission.Address(w.queue)).Data)
	if err != nil || perm.Account != w.queue {
		t.Fatalf("queue permission %+v %v", perm, err)
	}
	v, err := es.DecodeGlobalVault(w.h.Account(w.vault).Data)
	if err != nil || v.Mint != w.mint || v.TokenAccount != w.vata {
		t.Fatalf("vault %+v %v", v, err)
	}
	if got := w.h.Lamports(w.rent); got != es.RentPDATargetLamports+w.h.Env.Rent.MinimumBalance(0) {
		t.Fatalf("rent PDA holds %d", got)
	}
	// Everything is idempotent: the same list runs again without effect
	// on the queue.
	before := append([]byte(nil), w.h.Account(w.queue).Data...)
	w.initializeMint()
	if !bytes.Equal(before, w.h.Account(w.queue).Data) {
		t.Fatal("re-running initialize-mint changed the queue")
	}
}

func TestInitEphemeralATA(t *testing.T) {
	w := newBase(t)
	ix := es.InitEphemeralATA(es.InitEphemeralATAArgs{Payer: w.user, Owner: w.user, Mint: w.mint})
	w.h.Run(w.user, ix).RequireSuccess(t)
	e := w.decodeEATA(w.user)
	_, bump := es.FindEphemeralATA(w.user, w.mint)
	if e.Owner != w.user || e.Mint != w.mint || e.Amount != 0 || e.Bump != bump {
		t.Fatalf("eATA %+v", e)
	}
	w.h.Run(w.user, ix).RequireSuccess(t) // idempotent

	// A legacy 72-byte eATA is migrated to 80 bytes with its bump.
	other := wallet(t)
	k, _ := es.FindEphemeralATA(other, w.mint)
	legacy := es.EphemeralATA{Owner: other, Mint: w.mint, Amount: 5}.Encode()[:72]
	w.h.SetAccount(k, runtime.Account{Lamports: w.h.Env.Rent.MinimumBalance(72), Owner: espl.ProgramID, Data: legacy})
	w.h.Run(w.user, es.InitEphemeralATA(es.InitEphemeralATAArgs{Payer: w.user, Owner: other, Mint: w.mint})).RequireSuccess(t)
	if e := w.decodeEATA(other); e.Legacy || e.Amount != 5 || len(w.h.Account(k).Data) != 80 {
		t.Fatalf("migrated eATA %+v", e)
	}

	// A wrong address is rejected.
	bad := ix
	bad.Accounts = append([]txwire.AccountMeta(nil), ix.Accounts...)
	bad.Accounts[0] = txwire.Writable(key("not the eATA"))
	w.h.Run(w.user, bad).RequireError(t, 0, runtime.ErrInvalidSeeds)
	// A mint that is not a mint is rejected.
	w.h.Run(w.user, es.InitEphemeralATA(es.InitEphemeralATAArgs{Payer: w.user, Owner: w.user, Mint: key("nope")})).RequireError(t, 0, espl.ErrInvalidMint)
}

func TestLegacyDepositWithdraw(t *testing.T) {
	w := newBase(t)
	w.initializeMint()
	w.h.Run(w.user,
		es.InitEphemeralATA(es.InitEphemeralATAArgs{Owner: w.user, Mint: w.mint}),
		es.DepositSPL(es.DepositSPLArgs{Owner: w.user, Mint: w.mint, Amount: 700}),
	).RequireSuccess(t)
	if w.decodeEATA(w.user).Amount != 700 || w.balance(w.vata) != 700 {
		t.Fatalf("after deposit: eATA %d vault %d", w.decodeEATA(w.user).Amount, w.balance(w.vata))
	}
	w.h.Run(w.user, es.WithdrawSPL(es.WithdrawSPLArgs{Owner: w.user, Mint: w.mint, Amount: 701})).RequireError(t, 0, espl.ErrInsufficientBalance)
	w.h.Run(w.user, es.WithdrawSPL(es.WithdrawSPLArgs{Owner: w.user, Mint: w.mint, Amount: 300})).RequireSuccess(t)
	if w.decodeEATA(w.user).Amount != 400 || w.balance(w.vata) != 400 || w.balance(w.ata(w.user)) != 1_000_000_000-400 {
		t.Fatal("withdraw did not move the tokens")
	}
	// Someone else cannot withdraw from the user's eATA.
	thief := wallet(t)
	w.h.Fund(thief, programtest.SOL)
	ix := es.WithdrawSPL(es.WithdrawSPLArgs{Owner: thief, Mint: w.mint, Amount: 1, Destination: w.ata(w.user)})
	ix.Accounts[1] = txwire.Writable(w.eata(w.user))
	w.h.Run(thief, ix).RequireError(t, 0, espl.ErrInvalidEATA)
	// Once delegated, the legacy paths are closed.
	w.h.Run(w.user, es.DelegateEphemeralATA(es.DelegateEphemeralATAArgs{Owner: w.user, Mint: w.mint, Validator: validator})).RequireSuccess(t)
	w.h.Run(w.user, es.DepositSPL(es.DepositSPLArgs{Owner: w.user, Mint: w.mint, Amount: 1})).RequireError(t, 0, espl.ErrEATADelegated)
	w.h.Run(w.user, es.WithdrawSPL(es.WithdrawSPLArgs{Owner: w.user, Mint: w.mint, Amount: 1})).RequireError(t, 0, espl.ErrEATADelegated)
}

func TestDelegateEATAAndPermission(t *testing.T) {
	w := newBase(t)
	payer := wallet(t)
	w.h.Fund(payer, programtest.SOL)
	w.h.Run(payer,
		es.InitEphemeralATA(es.InitEphemeralATAArgs{Payer: payer, Owner: w.user, Mint: w.mint}),
		es.CreateEphemeralATAPermission(es.CreateEphemeralATAPermissionArgs{Payer: payer, Owner: w.user, Mint: w.mint}),
		es.DelegateEphemeralATA(es.DelegateEphemeralATAArgs{Payer: payer, Owner: w.user, Mint: w.mint}),
	).RequireSuccess(t)
	eata := w.h.Account(w.eata(w.user))
	if eata.Owner != delegation.ProgramID {
		t.Fatal("eATA not delegated")
	}
	if e, _ := es.DecodeEphemeralATA(eata.Data); e.Owner != w.user {
		t.Fatal("delegated eATA lost its data")
	}
	// No validator in the data: DLP uses the local validator.
	if r := w.record(w.eata(w.user)); r.Authority != validator || r.Owner != espl.ProgramID {
		t.Fatalf("record %+v", r)
	}
	md, _ := es.DecodeDelegationMetadata(w.h.Account(func() solana.PublicKey { k, _ := es.FindDelegationMetadata(w.eata(w.user)); return k }()).Data)
	if md.RentPayer != payer {
		t.Fatalf("rent payer %s", md.RentPayer)
	}
	perm, err := permission.Decode(w.h.Account(permission.Address(w.eata(w.user))).Data)
	if err != nil || len(perm.Members) != 1 || perm.Members[0].Key != w.user || perm.Members[0].Flags&permission.FlagAuthority == 0 {
		t.Fatalf("permission %+v %v", perm, err)
	}
	// Both are idempotent on a delegated eATA.
	w.h.Run(payer,
		es.CreateEphemeralATAPermission(es.CreateEphemeralATAPermissionArgs{Payer: payer, Owner: w.user, Mint: w.mint}),
		es.DelegateEphemeralATA(es.DelegateEphemeralATAArgs{Payer: payer, Owner: w.user, Mint: w.mint}),
	).RequireSuccess(t)
	// Flags other than 0 need the owner.
	other := wallet(t)
	w.h.Run(payer, es.InitEphemeralATA(es.InitEphemeralATAArgs{Payer: payer, Owner: other, Mint: w.mint})).RequireSuccess(t)
	w.h.Run(payer, es.CreateEphemeralATAPermission(es.CreateEphemeralATAPermissionArgs{Payer: payer, Owner: other, Mint: w.mint, Flags: 1})).
		RequireError(t, 0, runtime.ErrMissingRequiredSignature)
}

func TestDepositShuttle(t *testing.T) {
	w := newBase(t)
	w.initializeMint()
	const amount = 250_000
	rentBefore, userLamports := w.h.Lamports(w.rent), w.h.Lamports(w.user)
	ix := es.DepositShuttle(es.DepositShuttleArgs{Owner: w.user, Mint: w.mint, Validator: validator, ShuttleID: 7, Amount: amount})
	w.h.Run(w.user,
		es.InitEphemeralATA(es.InitEphemeralATAArgs{Owner: w.user, Mint: w.mint}),
		es.DelegateEphemeralATA(es.DelegateEphemeralATAArgs{Owner: w.user, Mint: w.mint, Validator: validator}),
		ix,
	).RequireSuccess(t)
	if got := w.h.Lamports(w.rent) - rentBefore; got != es.ShuttleSetupLamports {
		t.Fatalf("rent PDA got %d, want the setup fee %d", got, es.ShuttleSetupLamports)
	}
	if w.balance(w.vata) != amount || w.balance(w.ata(w.user)) != 1_000_000_000-amount {
		t.Fatal("tokens did not move into the vault")
	}
	meta, _ := es.FindShuttleMetadata(w.user, w.mint, 7)
	seata, _ := es.FindEphemeralATA(meta, w.mint)
	if a := w.h.Account(seata); a.Owner != delegation.ProgramID {
		t.Fatal("shuttle eATA not delegated")
	}
	if e := w.decodeEATA(meta); e.Amount != amount || e.Owner != meta {
		t.Fatalf("shuttle eATA %+v", e)
	}
	md, _ := es.DecodeShuttleMetadata(w.h.Account(meta).Data)
	if md.Owner != w.user || md.Payer != w.user || md.ID != 7 {
		t.Fatalf("shuttle metadata %+v", md)
	}
	if w.h.Account(spl.AssociatedTokenAddress(meta, w.mint, spl.TokenProgramID)) == nil {
		t.Fatal("shuttle wallet ATA missing")
	}
	if spent := userLamports - w.h.Lamports(w.user); spent < es.ShuttleSetupLamports {
		t.Fatalf("payer spent %d", spent)
	}
	// Replaying the same shuttle is a no-op.
	w.h.Run(w.user, ix).RequireSuccess(t)
	if w.balance(w.vata) != amount {
		t.Fatal("a replayed shuttle moved tokens again")
	}
	// The owner must sign; a wrong vault ATA is rejected.
	bad := es.DepositShuttle(es.DepositShuttleArgs{Owner: w.user, Mint: w.mint, Validator: validator, ShuttleID: 8, Amount: 1})
	bad.Accounts[18] = txwire.Writable(w.ata(w.user))
	w.h.Run(w.user, bad).RequireError(t, 0, espl.ErrInvalidVault)
}

func TestPrivateTransferBase(t *testing.T) {
	w := newBase(t)
	dest := wallet(t)
	ix, err := es.PrivateTransfer(es.PrivateTransferArgs{Owner: w.user, Mint: w.mint, Validator: validator, Destination: dest,
		ShuttleID: 3, Amount: 1_000_000, Split: 3, MinDelayMs: 100, MaxDelayMs: 900})
	if err != nil {
		t.Fatal(err)
	}
	// Without initialize-mint there is no delegated queue.
	w.h.Run(w.user, ix).RequireError(t, 0, espl.ErrInvalidVault)
	w.initializeMint()
	rentBefore := w.h.Lamports(w.rent)
	w.h.Run(w.user, ix).RequireSuccess(t)
	fee := es.PrivacyFee(1_000_000)
	if w.balance(w.vata) != 1_000_000+fee {
		t.Fatalf("vault holds %d, want amount + fee", w.balance(w.vata))
	}
	if got := w.h.Lamports(w.rent) - rentBefore; got != es.PrivateTransferSetupLamports {
		t.Fatalf("rent PDA got %d", got)
	}
	meta, _ := es.FindShuttleMetadata(w.user, w.mint, 3)
	if w.decodeEATA(meta).Amount != 1_000_000+fee {
		t.Fatal("shuttle does not hold amount + fee")
	}
	// The recipient appears nowhere in the instruction.
	for _, m := range ix.Accounts {
		if m.PublicKey == dest || m.PublicKey == w.ata(dest) {
			t.Fatal("recipient in the accounts")
		}
	}
	if bytes.Contains(ix.Data, dest[:]) {
		t.Fatal("recipient in the data")
	}
	// A private transfer to another validator's (missing) queue fails.
	other := wallet(t)
	ix2, _ := es.PrivateTransfer(es.PrivateTransferArgs{Owner: w.user, Mint: w.mint, Validator: other, Destination: dest, ShuttleID: 4, Amount: 10})
	w.h.Run(w.user, ix2).RequireError(t, 0, espl.ErrInvalidQueue)
}

func TestWithdrawShuttleAndClose(t *testing.T) {
	w := newBase(t)
	w.initializeMint()
	w.h.Run(w.user,
		es.InitEphemeralATA(es.InitEphemeralATAArgs{Owner: w.user, Mint: w.mint}),
		es.DelegateEphemeralATA(es.DelegateEphemeralATAArgs{Owner: w.user, Mint: w.mint, Validator: validator}),
		es.DepositShuttle(es.DepositShuttleArgs{Owner: w.user, Mint: w.mint, Validator: validator, ShuttleID: 1, Amount: 5_000}),
		es.WithdrawShuttle(es.WithdrawShuttleArgs{Owner: w.user, Mint: w.mint, Validator: validator, ShuttleID: 2, Amount: 3_000}),
	).RequireSuccess(t)
	meta, _ := es.FindShuttleMetadata(w.user, w.mint, 2)
	seata, _ := es.FindEphemeralATA(meta, w.mint)
	wallet := spl.AssociatedTokenAddress(meta, w.mint, spl.TokenProgramID)
	if w.decodeEATA(meta).Amount != 0 {
		t.Fatal("withdraw shuttle should start empty")
	}
	closeIx := espl.CloseShuttle(espl.CloseShuttleArgs{Validator: validator, RentReimbursement: w.user, ShuttleMetadata: meta,
		ShuttleEphemeralATA: seata, ShuttleWalletATA: wallet, Destination: w.ata(w.user), Mint: w.mint,
		TokenProgram: spl.TokenProgramID, Vault: w.vault, VaultATA: w.vata})
	// Closing needs the shuttle undelegated first.
	w.h.Run(validator, closeIx).RequireError(t, 0, espl.ErrStillDelegated)
	// The validator commits 3 000 (what the rollup moved into the shuttle)
	// and undelegates; CloseShuttle then releases it from the vault.
	committed := w.decodeEATA(meta)
	committed.Amount = 3_000
	lamportsBefore := w.h.Lamports(w.user)
	rent := w.h.Lamports(meta) + w.h.Lamports(seata) + w.h.Lamports(wallet)
	recK, _ := es.FindDelegationRecord(seata)
	metaK, _ := es.FindDelegationMetadata(seata)
	rent += w.h.Lamports(recK) + w.h.Lamports(metaK)
	userTokens := w.balance(w.ata(w.user))
	w.h.Run(validator,
		delegation.CommitAndUndelegate(delegation.CommitAndUndelegateArgs{Validator: validator, Account: seata,
			OwnerProgram: espl.ProgramID, RentPayer: w.user, Data: committed.Encode()}),
		closeIx,
	).RequireSuccess(t)
	if got := w.balance(w.ata(w.user)) - userTokens; got != 3_000 {
		t.Fatalf("released %d, want 3000", got)
	}
	if w.balance(w.vata) != 2_000 {
		t.Fatalf("vault holds %d", w.balance(w.vata))
	}
	for _, k := range []solana.PublicKey{meta, seata, wallet, recK, metaK} {
		if w.h.Account(k) != nil {
			t.Fatalf("%s survived", k)
		}
	}
	if got := w.h.Lamports(w.user) - lamportsBefore; got != rent {
		t.Fatalf("payer refunded %d, want %d", got, rent)
	}
	// Only the validator may close shuttles.
	thief := wallet2(t, w)
	bad := closeIx
	bad.Accounts = append([]txwire.AccountMeta(nil), closeIx.Accounts...)
	bad.Accounts[0] = txwire.WritableSigner(thief)
	w.h.Run(thief, bad).RequireError(t, 0, espl.ErrNotValidator)
}

func wallet2(t *testing.T, w *world) solana.PublicKey {
	k := wallet(t)
	w.h.Fund(k, programtest.SOL)
	return k
}

func TestExecuteReadyQueuedTransfer(t *testing.T) {
	w := newBase(t)
	w.initializeMint()
	w.h.Run(w.user, es.InitEphemeralATA(es.InitEphemeralATAArgs{Owner: w.user, Mint: w.mint}),
		es.DepositSPL(es.DepositSPLArgs{Owner: w.user, Mint: w.mint, Amount: 10_000})).RequireSuccess(t)
	dest := wallet(t)
	entry := es.QueuedTransfer{Source: w.user, DestinationOwner: dest, Amount: 4_000, ClientRefID: 42, TaskID: 9,
		Flags: es.QueuedFlagCreateIdempotentATA, GroupID: 77}
	ix := espl.ExecuteReadyQueuedTransfer(espl.ExecuteReadyArgs{Validator: validator, Mint: w.mint, TokenProgram: spl.TokenProgramID,
		Queue: w.queue, Destination: dest, Entry: entry})
	rentBefore := w.h.Lamports(w.rent)
	res := w.h.Run(validator, ix)
	res.RequireSuccess(t)
	res.RequireLogs(t, "Program log: Paid 4000 to "+dest.String()+" (task 9, group 77, clientRefId 42)")
	if w.balance(w.ata(dest)) != 4_000 || w.balance(w.vata) != 6_000 {
		t.Fatal("payout did not move the tokens")
	}
	if spent := rentBefore - w.h.Lamports(w.rent); spent != w.h.Env.Rent.MinimumBalance(spl.TokenAccountSize) {
		t.Fatalf("rent PDA paid %d for the ATA", spent)
	}
	// A second payout reuses the ATA.
	w.h.Run(validator, ix).RequireSuccess(t)
	if w.balance(w.ata(dest)) != 8_000 {
		t.Fatal("second payout")
	}
	// With the rent PDA at its minimum, the validator sponsors the ATA.
	w.h.Accounts[w.rent].Lamports = w.h.Env.Rent.MinimumBalance(0)
	dest2 := wallet(t)
	entry.DestinationOwner, entry.Amount = dest2, 2_000
	ix2 := espl.ExecuteReadyQueuedTransfer(espl.ExecuteReadyArgs{Validator: validator, Mint: w.mint, TokenProgram: spl.TokenProgramID,
		Queue: w.queue, Destination: dest2, Entry: entry})
	vBefore := w.h.Lamports(validator)
	w.h.Run(validator, ix2).RequireSuccess(t)
	if w.balance(w.ata(dest2)) != 2_000 || vBefore-w.h.Lamports(validator) != w.h.Env.Rent.MinimumBalance(spl.TokenAccountSize) {
		t.Fatal("the validator did not sponsor the ATA")
	}
	d, err := espl.DecodeExecuteReady(ix)
	if err != nil || d.Entry.Amount != 4_000 || d.Entry.ClientRefID != 42 || d.Entry.GroupID != 77 || d.Destination != dest {
		t.Fatalf("decode %+v %v", d, err)
	}
	thief := wallet2(t, w)
	bad := ix
	bad.Accounts = append([]txwire.AccountMeta(nil), ix.Accounts...)
	bad.Accounts[0] = txwire.WritableSigner(thief)
	w.h.Run(thief, bad).RequireError(t, 0, espl.ErrNotValidator)
}

func TestStealthPoolBase(t *testing.T) {
	w := newBase(t)
	auth := wallet2(t, w)
	handle := []byte("alice@ferry.local")
	ix := mustIx(t)(es.EnsureStealthPoolDelegated(es.EnsureStealthPoolDelegatedArgs{Payer: w.user, Authority: auth, Handle: handle, Validator: validator}))
	w.h.Run(w.user, ix).RequireSuccess(t)
	pool, _, _ := es.FindStealthPool(handle)
	a := w.h.Account(pool)
	if a.Owner != delegation.ProgramID || len(a.Data) != es.StealthPoolSize || string(a.Data[:8]) != es.StealthPoolDiscriminator {
		t.Fatalf("pool %+v", a)
	}
	if es.StealthPoolInitialized(a.Data) {
		t.Fatal("a pool without destinations is not initialized")
	}
	if w.h.Account(permission.Address(pool)) == nil {
		t.Fatal("pool permission missing")
	}
	w.h.Run(w.user, ix).RequireSuccess(t) // idempotent
	// Another authority cannot take the handle.
	other := wallet2(t, w)
	ix2 := mustIx(t)(es.EnsureStealthPoolDelegated(es.EnsureStealthPoolDelegatedArgs{Payer: w.user, Authority: other, Handle: handle}))
	w.h.Run(w.user, ix2).RequireError(t, 0, espl.ErrInvalidStealthPool)
	// Handles longer than 32 and 64 bytes use two seeds.
	for _, n := range []int{40, 100} {
		h := bytes.Repeat([]byte("h"), n)
		w.h.Run(w.user, mustIx(t)(es.EnsureStealthPoolDelegated(es.EnsureStealthPoolDelegatedArgs{Payer: w.user, Authority: auth, Handle: h}))).RequireSuccess(t)
	}
}

func TestWrongLayer(t *testing.T) {
	w := newBase(t)
	ix := es.UndelegateEphemeralATA(es.UndelegateEphemeralATAArgs{Owner: w.user, Mint: w.mint})
	w.h.Run(w.user, ix).RequireError(t, 0, espl.ErrWrongLayer)
	e := newEphemeral(t, 4)
	ix0 := es.InitEphemeralATA(es.InitEphemeralATAArgs{Owner: validator, Mint: e.mint})
	e.h.Run(validator, ix0).RequireError(t, 0, espl.ErrWrongLayer)
}

// FuzzBase feeds arbitrary data and accounts to the base-layer program:
// no panics, and successes conserve lamports.
func FuzzBase(f *testing.F) {
	w := newBase(f)
	pool := []solana.PublicKey{w.user, w.eata(w.user), w.mint, spl.SystemProgramID, w.vault, w.vata, w.ata(w.user),
		spl.TokenProgramID, espl.ProgramID, delegation.ProgramID, w.rent, w.queue, validator, spl.AssociatedTokenProgramID,
		permission.ProgramID, key("x")}
	for _, d := range []byte{0, 1, 2, 3, 4, 6, 11, 12, 13, 19, 22, 23, 24, 25, 26, 196, 201, 202} {
		f.Add([]byte{d}, []byte{0x30, 0x21, 2, 3, 4, 5})
	}
	f.Add(es.DepositShuttle(es.DepositShuttleArgs{Owner: w.user, Mint: w.mint, ShuttleID: 1, Amount: 5}).Data, []byte{0x30, 0x2a, 0x20, 0x20, 0x20, 0x30})
	f.Fuzz(func(t *testing.T, data, sel []byte) {
		w := newBase(t)
		w.h.CheckRent = false
		w.h.FuzzInstruction(espl.ProgramID, pool, data, sel)
	})
}

// FuzzEphemeral does the same for the ephemeral program.
func FuzzEphemeral(f *testing.F) {
	e := newEphemeral(f, 4)
	pool := []solana.PublicKey{e.user, e.eata(e.user), e.mint, e.queue, e.ata(e.queue), e.ata(e.user), spl.TokenProgramID,
		validator, key("dest"), solana.PublicKey{}, key("x")}
	for _, d := range []byte{5, 14, 15, 16, 17, 21, 210} {
		f.Add([]byte{d}, []byte{0x30, 0x21, 2, 3, 4, 5, 6, 7})
	}
	ix16 := mustIx(f)(es.DepositAndQueueTransfer(es.DepositAndQueueTransferArgs{Owner: e.user, Mint: e.mint, Validator: validator,
		Destination: key("dest"), Amount: 10, GroupID: 5, Rand: rand.Reader}))
	f.Add(ix16.Data, []byte{0x23, 0x03, 0x02, 0x25, 0x24, 0x08, 0x30, 0x06, 0x25, 0x2a, 0x29, 0x0a})
	f.Fuzz(func(t *testing.T, data, sel []byte) {
		e := newEphemeral(t, 4)
		e.h.CheckRent = false
		e.project(e.user, 100)
		e.h.FuzzInstruction(espl.ProgramID, pool, data, sel)
	})
}
