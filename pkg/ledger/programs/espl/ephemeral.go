package espl

import (
	"github.com/gagliardetto/solana-go"

	es "github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/internal/progutil"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/magic"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/permission"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// On the ephemeral rollup, a delegated eATA [owner, mint] is projected
// into the owner's ATA (same address as on base), where its balance lives
// and moves by ordinary token transfers (docs/localnet.md §3). Committing
// the eATA therefore commits the projection's balance, which the Magic
// program drains and freezes atomically with the request.

// projection checks that ata is the projection of eATA e (the owner's ATA
// for the mint under some token program) and returns its balance.
func projection(ctx *runtime.Context, ata *runtime.AccountRef, e es.EphemeralATA) (uint64, error) {
	if !spl.IsTokenProgram(ata.Owner) || ata.Key != spl.AssociatedTokenAddress(e.Owner, e.Mint, ata.Owner) {
		ctx.Logf("%s is not the projection of the eATA of %s for %s", ata.Key, e.Owner, e.Mint)
		return 0, ErrInvalidTokenAccount
	}
	ta, err := spl.DecodeTokenAccount(ata.Data)
	if err != nil || ta.Mint != e.Mint || ta.Owner != e.Owner || ta.State != spl.StateInitialized {
		ctx.Logf("projection %s is not an active token account of %s", ata.Key, e.Owner)
		return 0, ErrInvalidTokenAccount
	}
	return ta.Amount, nil
}

func checkMagic(ctx *runtime.Context, mc, mp *runtime.AccountRef) error {
	if err := progutil.Key(ctx, mc, magic.ContextID, "magic context"); err != nil {
		return err
	}
	return checkProgram(ctx, mp, magic.ProgramID, "magic program")
}

// undelegateEATA is ix 5 (ephemeral): commit the eATA with its
// projection's balance and undelegate it. Accounts: 0 owner S · 1 owner
// ATA W · 2 eATA · 3 magic context W · 4 magic program · [5 magic fee
// vault W].
func (p *program) undelegateEATA(ctx *runtime.Context, d es.Decoded) error {
	ix := d.(es.UndelegateEphemeralATAIx)
	a, err := accounts(ctx, 5)
	if err != nil {
		return err
	}
	owner, ata, eata, mc, mp := a[0], a[1], a[2], a[3], a[4]
	if err := progutil.Signer(ctx, owner, "owner"); err != nil {
		return err
	}
	if err := checkMagic(ctx, mc, mp); err != nil {
		return err
	}
	if ix.HasMagicFeeVault {
		if ix.Validator == nil || ix.MagicFeeVault != mustFeeVault(*ix.Validator) {
			ctx.Log("magic fee vault does not match the validator")
			return ErrInvalidArguments
		}
	}
	e, err := eataAt(ctx, eata, false)
	if err != nil {
		return err
	}
	if e.Owner != owner.Key {
		ctx.Logf("eATA %s belongs to %s", eata.Key, e.Owner)
		return ErrInvalidEATA
	}
	if err := progutil.Writable(ctx, ata, "owner ATA"); err != nil {
		return err
	}
	bal, err := projection(ctx, ata, e)
	if err != nil {
		return err
	}
	e.Amount = bal
	sched, err := magic.Schedule(magic.ScheduleArgs{Payer: owner.Key, Account: eata.Key, Undelegate: true, Data: e.Encode(), Drain: []solana.PublicKey{ata.Key}})
	if err != nil {
		return err
	}
	ctx.Logf("Undelegating eATA of %s with %d", e.Owner, bal)
	return ctx.Invoke(sched)
}

func mustFeeVault(validator solana.PublicKey) solana.PublicKey {
	k, _ := es.FindMagicFeeVault(validator)
	return k
}

// ephemeralShuttle checks a shuttle's metadata, eATA and wallet ATA on the
// ephemeral rollup and returns the decoded metadata and eATA.
func ephemeralShuttle(ctx *runtime.Context, meta, seata, wallet *runtime.AccountRef) (es.ShuttleMetadata, es.EphemeralATA, error) {
	var md es.ShuttleMetadata
	if err := progutil.Owner(ctx, meta, ProgramID, "shuttle metadata"); err != nil {
		return md, es.EphemeralATA{}, err
	}
	md, err := es.DecodeShuttleMetadata(meta.Data)
	if err != nil {
		ctx.Log(err.Error())
		return md, es.EphemeralATA{}, ErrInvalidShuttle
	}
	e, err := eataAt(ctx, seata, false)
	if err != nil {
		return md, e, err
	}
	if e.Owner != meta.Key {
		ctx.Logf("shuttle eATA %s does not belong to %s", seata.Key, meta.Key)
		return md, e, ErrInvalidShuttle
	}
	mk, err := solana.CreateProgramAddress([][]byte{md.Owner[:], e.Mint[:], u32le(md.ID), {md.Bump}}, ProgramID)
	if err != nil || mk != meta.Key {
		return md, e, ErrInvalidShuttle
	}
	if !spl.IsTokenProgram(wallet.Owner) || wallet.Key != spl.AssociatedTokenAddress(meta.Key, e.Mint, wallet.Owner) {
		ctx.Logf("%s is not the shuttle's wallet", wallet.Key)
		return md, e, ErrInvalidShuttle
	}
	return md, e, nil
}

// undelegateShuttle is ix 14 UndelegateAndCloseShuttleToOwner
// (ephemeral, a post-delegation action): commit the shuttle with what is
// left in its wallet and undelegate it, scheduling CloseShuttle on base,
// which releases that remainder to the destination (the owner's account)
// and refunds the shuttle's rent to its payer (the rent reimbursement).
// Accounts: 0 payer S W · 1 rent reimbursement W · 2 shuttle metadata ·
// 3 shuttle eATA · 4 shuttle wallet ATA W · 5 destination W · 6 token
// program · 7 magic context W · 8 magic program.
func (p *program) undelegateShuttle(ctx *runtime.Context, _ es.Decoded) error {
	a, err := accounts(ctx, 9)
	if err != nil {
		return err
	}
	payer, reimb, meta, seata, wallet, dst, tp, mc, mp := a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8]
	if err := progutil.Signer(ctx, payer, "payer"); err != nil {
		return err
	}
	if err := checkMagic(ctx, mc, mp); err != nil {
		return err
	}
	md, e, err := ephemeralShuttle(ctx, meta, seata, wallet)
	if err != nil {
		return err
	}
	if reimb.Key != md.Payer {
		ctx.Logf("rent reimbursement %s is not the shuttle's payer %s", reimb.Key, md.Payer)
		return ErrInvalidShuttle
	}
	if wallet.Owner != tp.Key {
		return runtime.ErrIncorrectProgramID
	}
	ta, err := spl.DecodeTokenAccount(wallet.Data)
	if err != nil || ta.State != spl.StateInitialized {
		ctx.Logf("shuttle wallet %s is not an active token account", wallet.Key)
		return ErrInvalidShuttle
	}
	e.Amount = ta.Amount
	vault, _ := es.FindGlobalVault(e.Mint)
	vata := spl.AssociatedTokenAddress(vault, e.Mint, tp.Key)
	closeIx := CloseShuttle(CloseShuttleArgs{
		Validator: p.cfg.Validator, RentReimbursement: reimb.Key, ShuttleMetadata: meta.Key, ShuttleEphemeralATA: seata.Key,
		ShuttleWalletATA: wallet.Key, Destination: dst.Key, Mint: e.Mint, TokenProgram: tp.Key, Vault: vault, VaultATA: vata,
	})
	sched, err := magic.Schedule(magic.ScheduleArgs{
		Payer: payer.Key, Account: seata.Key, Undelegate: true, Data: e.Encode(),
		Drain: []solana.PublicKey{wallet.Key}, Evict: []solana.PublicKey{meta.Key}, Action: magic.ActionOf(closeIx),
	})
	if err != nil {
		return err
	}
	ctx.Logf("Closing shuttle %d of %s with %d left", md.ID, md.Owner, ta.Amount)
	return ctx.Invoke(sched)
}

// mergeShuttle is ix 15 MergeShuttleIntoEphemeralAta (ephemeral, a
// post-delegation action): move everything in the shuttle wallet to the
// destination token account. Accounts: 0 owner S · 1 destination W ·
// 2 shuttle metadata · 3 shuttle wallet ATA W · 4 mint · 5 token program.
func (p *program) mergeShuttle(ctx *runtime.Context, _ es.Decoded) error {
	a, err := accounts(ctx, 6)
	if err != nil {
		return err
	}
	owner, dst, meta, wallet, mint, tp := a[0], a[1], a[2], a[3], a[4], a[5]
	if err := progutil.Signer(ctx, owner, "owner"); err != nil {
		return err
	}
	mi, err := loadMint(ctx, mint, tp)
	if err != nil {
		return err
	}
	if err := progutil.Owner(ctx, meta, ProgramID, "shuttle metadata"); err != nil {
		return err
	}
	md, err := es.DecodeShuttleMetadata(meta.Data)
	if err != nil {
		ctx.Log(err.Error())
		return ErrInvalidShuttle
	}
	if md.Owner != owner.Key {
		ctx.Logf("shuttle belongs to %s, not %s", md.Owner, owner.Key)
		return ErrInvalidShuttle
	}
	if wallet.Key != spl.AssociatedTokenAddress(meta.Key, mi.key, mi.program) {
		return ErrInvalidShuttle
	}
	wta, err := tokenAccount(ctx, wallet, mi, "shuttle wallet")
	if err != nil {
		return err
	}
	if _, err := tokenAccount(ctx, dst, mi, "destination"); err != nil {
		return err
	}
	seeds := [][]byte{md.Owner[:], mi.key[:], u32le(md.ID), {md.Bump}}
	ctx.Logf("Merging %d into %s", wta.Amount, dst.Key)
	return transfer(ctx, mi, wallet.Key, dst.Key, meta.Key, wta.Amount, seeds)
}

// depositAndQueue is ix 16 DepositAndQueueTransfer (ephemeral): move
// amount from the sender's account into the queue vault and push split
// entries, paid out on base when ready; record a group receipt (and, in
// the hosted API's 14-account form, its permission). A queue without room
// for split entries refunds the amount to the reimbursement account
// instead. Accounts: 0 queue W · 1 vault authority · 2 mint · 3 source W ·
// 4 queue vault ATA W · 5 destination owner · 6 owner S · 7 token program ·
// 8 reimbursement W · 9 group receipt W · 10 magic vault W · 11 magic
// program · [12 receipt permission W · 13 ACL].
func (p *program) depositAndQueue(ctx *runtime.Context, d es.Decoded) error {
	ix := d.(es.DepositAndQueueTransferIx)
	a, err := accounts(ctx, 12)
	if err != nil {
		return err
	}
	queue, vaultAuth, mint, src, qata, dest, owner, tp, reimb, receipt, mvault, mp :=
		a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11]
	if err := progutil.Signer(ctx, owner, "owner"); err != nil {
		return err
	}
	if err := ix.Validate(); err != nil {
		ctx.Log(err.Error())
		return ErrInvalidArguments
	}
	if err := checkProgram(ctx, mp, magic.ProgramID, "magic program"); err != nil {
		return err
	}
	if err := progutil.Key(ctx, mvault, magic.VaultID, "magic vault"); err != nil {
		return err
	}
	mi, err := loadMint(ctx, mint, tp)
	if err != nil {
		return err
	}
	for _, w := range []*runtime.AccountRef{queue, src, qata, reimb, receipt} {
		if err := progutil.Writable(ctx, w, "account"); err != nil {
			return err
		}
	}
	h, _, err := queueAt(ctx, queue, false)
	if err != nil {
		return err
	}
	if h.Mint != mi.key {
		ctx.Logf("queue serves mint %s", h.Mint)
		return ErrInvalidQueue
	}
	if vk, _ := es.FindGlobalVault(mi.key); vaultAuth.Key != queue.Key && vaultAuth.Key != vk {
		ctx.Logf("vault authority %s is neither the queue nor the global vault", vaultAuth.Key)
		return ErrInvalidVault
	}
	if qata.Key != spl.AssociatedTokenAddress(queue.Key, mi.key, mi.program) {
		ctx.Logf("queue vault ATA %s does not belong to %s", qata.Key, queue.Key)
		return ErrInvalidQueue
	}
	if _, err := tokenAccount(ctx, src, mi, "source"); err != nil {
		return err
	}
	if _, err := tokenAccount(ctx, reimb, mi, "reimbursement"); err != nil {
		return err
	}
	rk, rbump, err := progutil.Find(ctx, ProgramID, []byte(es.SeedGroupReceipt), queue.Key[:], owner.Key[:], u32le(ix.GroupID))
	if err != nil {
		return err
	}
	if err := progutil.Key(ctx, receipt, rk, "group receipt"); err != nil {
		return err
	}
	tq, _ := es.OpenTransferQueue(queue.Data)
	if free := tq.Cap() - tq.Len(); uint64(ix.Split) > uint64(free) {
		ctx.Logf("transfer queue full (%d free, %d needed): refunding %d to %s", free, ix.Split, ix.Amount, reimb.Key)
		if reimb.Key == src.Key {
			return nil
		}
		return transfer(ctx, mi, src.Key, reimb.Key, owner.Key, ix.Amount)
	}
	if !progutil.Empty(receipt) {
		ctx.Logf("group %d of %s already queued", ix.GroupID, owner.Key)
		return runtime.ErrAccountAlreadyInitialized
	}
	if err := transfer(ctx, mi, src.Key, qata.Key, owner.Key, ix.Amount); err != nil {
		return err
	}
	nowSec := ctx.Env().UnixTimestamp
	var ref uint64
	if ix.ClientRefID != nil {
		ref = *ix.ClientRefID
	}
	h = tq.Header()
	for i, piece := range es.SplitPlan(ix.Amount, ix.Split, mi.decimals) {
		delay := es.Delay(dest.Key, uint64(i), ix.MinDelayMs, ix.MaxDelayMs)
		e := es.QueuedTransfer{
			Source: owner.Key, DestinationOwner: dest.Key, Amount: piece, ReadyAt: es.ReadyAt(nowSec, delay),
			ClientRefID: ref, TaskID: h.NextTaskID, Flags: queueFlags, GroupID: ix.GroupID,
		}
		h.NextTaskID++
		if err := tq.Push(e); err != nil {
			return ErrInvalidQueue // unreachable: room was checked
		}
		ctx.Logf("Queued %d to %s ready at %d (task %d)", piece, dest.Key, e.ReadyAt, e.TaskID)
	}
	h.Length = uint32(tq.Len())
	if err := tq.SetHeader(h); err != nil {
		return ErrInvalidQueue
	}
	rseeds := [][]byte{[]byte(es.SeedGroupReceipt), queue.Key[:], owner.Key[:], u32le(ix.GroupID), {rbump}}
	if err := ctx.Invoke(magic.CreateEphemeralAccount(receipt.Key, es.GroupReceiptSize), rseeds); err != nil {
		return err
	}
	copy(receipt.Data, es.GroupReceipt{
		Bump: rbump, GroupID: ix.GroupID, Queue: queue.Key, Source: owner.Key, DestinationOwner: dest.Key,
		Amount: ix.Amount, ClientRefID: ref, CreatedAt: nowSec * 1000, Split: ix.Split,
	}.Encode())
	if ix.HasGroupReceiptPermission {
		extra, err := accounts(ctx, 14)
		if err != nil {
			return err
		}
		perm, acl := extra[12], extra[13]
		if err := checkProgram(ctx, acl, permission.ProgramID, "permission program"); err != nil {
			return err
		}
		if perm.Key != permission.Address(receipt.Key) {
			return runtime.ErrInvalidSeeds
		}
		members := []permission.Member{{Key: owner.Key, Flags: permission.FlagAuthority | permission.FlagRead}}
		if err := ctx.Invoke(permission.Create(receipt.Key, owner.Key, members, true), rseeds); err != nil {
			return err
		}
	}
	return nil
}

// ensureCrank is ix 17 EnsureTransferQueueCrank (ephemeral): record that
// the queue's crank runs. The local validator's crank is always on (a
// timer in localnet), so this only stamps the queue with a crank task id,
// which also makes the queue appear in getSignaturesForAddress as the
// hosted API's ensure-crank expects. Accounts: 0 payer S W · 1 queue W ·
// 2 magic fee vault W · 3 magic context W · 4 magic program.
func (p *program) ensureCrank(ctx *runtime.Context, _ es.Decoded) error {
	a, err := accounts(ctx, 5)
	if err != nil {
		return err
	}
	payer, queue, fv, mc, mp := a[0], a[1], a[2], a[3], a[4]
	if err := progutil.Signer(ctx, payer, "payer"); err != nil {
		return err
	}
	if err := checkMagic(ctx, mc, mp); err != nil {
		return err
	}
	if err := progutil.Writable(ctx, queue, "queue"); err != nil {
		return err
	}
	h, _, err := queueAt(ctx, queue, false)
	if err != nil {
		return err
	}
	if fv.Key != mustFeeVault(h.Validator) {
		ctx.Logf("magic fee vault %s does not belong to validator %s", fv.Key, h.Validator)
		return ErrInvalidArguments
	}
	if h.CrankTaskID == 0 {
		tq, _ := es.OpenTransferQueue(queue.Data)
		h.CrankTaskID = int64(h.NextTaskID)
		h.NextTaskID++
		if err := tq.SetHeader(h); err != nil {
			return ErrInvalidQueue
		}
	}
	ctx.Logf("Transfer queue crank running (task %d, %d queued)", h.CrankTaskID, h.Length)
	return nil
}

// updatePool is ix 21 UpdateStealthPool (ephemeral): the pool's authority
// sets its flags and destinations. Accounts: 0 payer S W · 1 pool W ·
// 2 authority S · 3 System.
func (p *program) updatePool(ctx *runtime.Context, d es.Decoded) error {
	ix := d.(es.UpdateStealthPoolIx)
	a, err := accounts(ctx, 4)
	if err != nil {
		return err
	}
	payer, pool, auth := a[0], a[1], a[2]
	if err := progutil.Signer(ctx, payer, "payer"); err != nil {
		return err
	}
	if err := progutil.Signer(ctx, auth, "authority"); err != nil {
		return err
	}
	if err := ix.Validate(); err != nil {
		ctx.Log(err.Error())
		return ErrInvalidStealthPool
	}
	if err := progutil.Owner(ctx, pool, ProgramID, "stealth pool"); err != nil {
		return err
	}
	if err := progutil.Writable(ctx, pool, "stealth pool"); err != nil {
		return err
	}
	key, _, err := progutil.Find(ctx, ProgramID, poolSeeds(ix.Handle)...)
	if err != nil {
		return err
	}
	if err := progutil.Key(ctx, pool, key, "stealth pool"); err != nil {
		return err
	}
	if len(pool.Data) != es.StealthPoolSize || solana.PublicKeyFromBytes(pool.Data[poolAuthority:poolAuthority+32]) != auth.Key {
		ctx.Logf("stealth pool %s belongs to another authority", pool.Key)
		return ErrInvalidStealthPool
	}
	pool.Data[poolFlags] = ix.Flags
	pool.Data[poolCount] = byte(len(ix.Destinations))
	clear(pool.Data[poolDests:])
	for i, k := range ix.Destinations {
		copy(pool.Data[poolDests+32*i:], k[:])
	}
	ctx.Logf("Stealth pool updated: %d destinations, flags %d", len(ix.Destinations), ix.Flags)
	return nil
}

// resolveDestination turns a queued destination into the key to pay: a
// stealth pool resolves to one of its destination keys (round-robin over
// the pieces of a group when SplitAcrossKeys is set, else the first), any
// other key is paid as is.
func resolveDestination(dest *runtime.AccountRef, piece uint32) solana.PublicKey {
	if dest.Owner != ProgramID || !es.StealthPoolInitialized(dest.Data) {
		return dest.Key
	}
	pool, err := es.DecodeStealthPool(dest.Data)
	if err != nil {
		return dest.Key
	}
	if pool.SplitAcrossKeys() {
		return pool.Destinations[int(piece)%len(pool.Destinations)]
	}
	return pool.Destinations[0]
}

// crank is internal ix 210 CrankReadyTransfers (ephemeral, validator):
// pop count ready entries off the queue; for each, burn its amount from
// the queue vault ATA (the claim leaves the rollup), count it in its group
// receipt and schedule ExecuteReadyQueuedTransfer on base, which pays it
// from the global vault. Accounts: 0 validator S W · 1 queue W · 2 queue
// vault ATA W · 3 mint W · 4 token program · 5 magic context W · 6 magic
// program · then per entry: group receipt W · destination owner.
func (p *program) crank(ctx *runtime.Context, _ es.Decoded) error {
	data := ctx.Data()
	if len(data) != 2 || data[1] == 0 || data[1] > maxCrankEntries {
		ctx.Log("crank takes 1..8 entries")
		return runtime.ErrInvalidInstructionData
	}
	n := int(data[1])
	a, err := accounts(ctx, 7+2*n)
	if err != nil {
		return err
	}
	v, queue, qata, mint, tp, mc, mp := a[0], a[1], a[2], a[3], a[4], a[5], a[6]
	if err := p.requireValidator(ctx, v); err != nil {
		return err
	}
	if err := checkMagic(ctx, mc, mp); err != nil {
		return err
	}
	mi, err := loadMint(ctx, mint, tp)
	if err != nil {
		return err
	}
	h, _, err := queueAt(ctx, queue, false)
	if err != nil {
		return err
	}
	if h.Validator != v.Key || h.Mint != mi.key {
		ctx.Logf("queue %s belongs to %s/%s", queue.Key, h.Validator, h.Mint)
		return ErrInvalidQueue
	}
	if qata.Key != spl.AssociatedTokenAddress(queue.Key, mi.key, mi.program) {
		return ErrInvalidQueue
	}
	for _, w := range []*runtime.AccountRef{queue, qata, mint} {
		if err := progutil.Writable(ctx, w, "account"); err != nil {
			return err
		}
	}
	tq, _ := es.OpenTransferQueue(queue.Data)
	nowMs := ctx.Env().UnixTimestamp * 1000
	for i := 0; i < n; i++ {
		e, ok := tq.PopReady(nowMs)
		if !ok {
			ctx.Logf("only %d of %d entries are ready at %d", i, n, nowMs)
			return ErrNothingReady
		}
		receipt, dest := a[7+2*i], a[8+2*i]
		if dest.Key != e.DestinationOwner {
			ctx.Logf("entry %d pays %s, not %s", e.TaskID, e.DestinationOwner, dest.Key)
			return runtime.ErrInvalidArgument
		}
		rk, err := solana.CreateProgramAddress([][]byte{[]byte(es.SeedGroupReceipt), queue.Key[:], e.Source[:], u32le(e.GroupID), {receiptBump(receipt)}}, ProgramID)
		if err != nil || rk != receipt.Key || receipt.Owner != ProgramID {
			ctx.Logf("group receipt %s does not match entry %d", receipt.Key, e.TaskID)
			return runtime.ErrInvalidArgument
		}
		if err := progutil.Writable(ctx, receipt, "group receipt"); err != nil {
			return err
		}
		g, err := es.DecodeGroupReceipt(receipt.Data)
		if err != nil {
			return runtime.ErrInvalidAccountData
		}
		to := resolveDestination(dest, g.Executed)
		g.Executed++
		copy(receipt.Data, g.Encode())
		if err := ctx.Invoke(spl.TokenBurn(mi.program, qata.Key, mi.key, queue.Key, e.Amount), queueSeeds(h)); err != nil {
			return err
		}
		action := ExecuteReadyQueuedTransfer(ExecuteReadyArgs{
			Validator: v.Key, Mint: mi.key, TokenProgram: mi.program, Queue: queue.Key, Destination: to,
			Entry: e,
		})
		sched, err := magic.ScheduleBaseAction(v.Key, magic.ActionOf(action))
		if err != nil {
			return err
		}
		if err := ctx.Invoke(sched); err != nil {
			return err
		}
		ctx.Logf("Cranked task %d: %d to %s (group %d, clientRefId %d)", e.TaskID, e.Amount, to, e.GroupID, e.ClientRefID)
	}
	return nil
}

func receiptBump(a *runtime.AccountRef) uint8 {
	if len(a.Data) >= es.GroupReceiptSize {
		return a.Data[1]
	}
	return 0
}
