package espl

import (
	"crypto/sha256"
	"math/bits"

	"github.com/gagliardetto/solana-go"

	es "github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/delegation"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/internal/progutil"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/permission"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// initEATA is ix 0: idempotently create (or migrate from 72 to 80 bytes)
// the eATA [user, mint]. Accounts: 0 eATA W · 1 payer S W · 2 user ·
// 3 mint · 4 System.
func (p *program) initEATA(ctx *runtime.Context, _ es.Decoded) error {
	a, err := accounts(ctx, 5)
	if err != nil {
		return err
	}
	eata, payer, user, mint, system := a[0], a[1], a[2], a[3], a[4]
	if err := progutil.SignerWritable(ctx, payer, "payer"); err != nil {
		return err
	}
	if err := checkProgram(ctx, system, spl.SystemProgramID, "system program"); err != nil {
		return err
	}
	if !spl.IsTokenProgram(mint.Owner) {
		ctx.Logf("mint %s is not owned by a token program", mint.Key)
		return ErrInvalidMint
	}
	key, bump, err := progutil.Find(ctx, ProgramID, user.Key[:], mint.Key[:])
	if err != nil {
		return err
	}
	if err := progutil.Key(ctx, eata, key, "eATA"); err != nil {
		return err
	}
	switch eata.Owner {
	case es.DelegationProgramID:
		return nil // delegated: it exists
	case ProgramID:
		if len(eata.Data) == es.EphemeralATASize {
			return nil
		}
		e, err := es.DecodeEphemeralATA(eata.Data)
		if err != nil {
			ctx.Log(err.Error())
			return ErrInvalidEATA
		}
		// Migrate a legacy 72-byte eATA: grow it and store the bump.
		if err := progutil.Writable(ctx, eata, "eATA"); err != nil {
			return err
		}
		if need := ctx.Env().Rent.MinimumBalance(es.EphemeralATASize); need > eata.Lamports {
			if err := ctx.Invoke(spl.SystemTransfer(payer.Key, eata.Key, need-eata.Lamports)); err != nil {
				return err
			}
		}
		e.Bump = bump
		eata.Data = e.Encode()
		ctx.Log("Migrated legacy eATA")
		return nil
	}
	if err := progutil.Writable(ctx, eata, "eATA"); err != nil {
		return err
	}
	if err := progutil.CreatePDA(ctx, payer, eata, [][]byte{user.Key[:], mint.Key[:], {bump}}, es.EphemeralATASize, ProgramID); err != nil {
		return err
	}
	copy(eata.Data, es.EphemeralATA{Owner: user.Key, Mint: mint.Key, Bump: bump}.Encode())
	return nil
}

// createEATAFor creates the eATA [owner, mint] if it does not exist yet.
func createEATAFor(ctx *runtime.Context, payer, eata *runtime.AccountRef, owner, mint solana.PublicKey) error {
	if eata.Owner == ProgramID || eata.Owner == es.DelegationProgramID {
		return nil
	}
	key, bump, err := progutil.Find(ctx, ProgramID, owner[:], mint[:])
	if err != nil {
		return err
	}
	if err := progutil.Key(ctx, eata, key, "eATA"); err != nil {
		return err
	}
	if err := progutil.CreatePDA(ctx, payer, eata, [][]byte{owner[:], mint[:], {bump}}, es.EphemeralATASize, ProgramID); err != nil {
		return err
	}
	copy(eata.Data, es.EphemeralATA{Owner: owner, Mint: mint, Bump: bump}.Encode())
	return nil
}

// initVault is ix 1: idempotently create the vault [mint], the vault eATA
// [vault, mint] and (ATA CPI) the vault ATA. Accounts: 0 vault W · 1 payer
// S W · 2 mint · 3 vault eATA W · 4 vault ATA W · 5 token program · 6 ATA
// program · 7 System.
func (p *program) initVault(ctx *runtime.Context, _ es.Decoded) error {
	a, err := accounts(ctx, 8)
	if err != nil {
		return err
	}
	vault, payer, mint, veata, vata, tp, ataProg, system := a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]
	if err := progutil.SignerWritable(ctx, payer, "payer"); err != nil {
		return err
	}
	if err := checkProgram(ctx, ataProg, spl.AssociatedTokenProgramID, "ATA program"); err != nil {
		return err
	}
	if err := checkProgram(ctx, system, spl.SystemProgramID, "system program"); err != nil {
		return err
	}
	mi, err := loadMint(ctx, mint, tp)
	if err != nil {
		return err
	}
	bump, err := vaultAt(ctx, vault, vata, mi, false)
	if err != nil {
		return err
	}
	if vault.Owner != ProgramID {
		if err := progutil.CreatePDA(ctx, payer, vault, vaultSeeds(mi.key, bump), es.GlobalVaultSize, ProgramID); err != nil {
			return err
		}
		copy(vault.Data, es.GlobalVault{Bump: bump, Mint: mi.key, TokenAccount: vata.Key}.Encode())
	}
	if err := createEATAFor(ctx, payer, veata, vault.Key, mi.key); err != nil {
		return err
	}
	return ctx.Invoke(spl.CreateAssociatedTokenAccount(payer.Key, vault.Key, mi.key, mi.program, true))
}

// depositSPL is legacy ix 2: move amount from the owner's ATA into the
// vault and credit the undelegated eATA. Accounts: 0 eATA W · 1 vault ·
// 2 mint · 3 owner ATA W · 4 vault ATA W · 5 owner S · 6 token program.
func (p *program) depositSPL(ctx *runtime.Context, d es.Decoded) error {
	ix := d.(es.DepositSPLIx)
	a, err := accounts(ctx, 7)
	if err != nil {
		return err
	}
	eata, vault, mint, src, vata, owner, tp := a[0], a[1], a[2], a[3], a[4], a[5], a[6]
	if err := progutil.Signer(ctx, owner, "owner"); err != nil {
		return err
	}
	mi, err := loadMint(ctx, mint, tp)
	if err != nil {
		return err
	}
	if _, err := vaultAt(ctx, vault, vata, mi, true); err != nil {
		return err
	}
	e, err := ownedUndelegatedEATA(ctx, eata, owner, mi, "deposit through a shuttle instead")
	if err != nil {
		return err
	}
	sum, carry := bits.Add64(e.Amount, ix.Amount, 0)
	if carry != 0 {
		return ErrAmountOverflow
	}
	if err := transfer(ctx, mi, src.Key, vata.Key, owner.Key, ix.Amount); err != nil {
		return err
	}
	e.Amount = sum
	eata.Data = e.Encode()
	return nil
}

// withdrawSPL is legacy ix 3: pay amount from the vault to the owner's
// token account, debiting the undelegated eATA. Accounts: 0 owner S ·
// 1 eATA W · 2 vault · 3 mint · 4 vault ATA W · 5 owner ATA W · 6 token
// program.
func (p *program) withdrawSPL(ctx *runtime.Context, d es.Decoded) error {
	ix := d.(es.WithdrawSPLIx)
	a, err := accounts(ctx, 7)
	if err != nil {
		return err
	}
	owner, eata, vault, mint, vata, dst, tp := a[0], a[1], a[2], a[3], a[4], a[5], a[6]
	if err := progutil.Signer(ctx, owner, "owner"); err != nil {
		return err
	}
	mi, err := loadMint(ctx, mint, tp)
	if err != nil {
		return err
	}
	bump, err := vaultAt(ctx, vault, vata, mi, true)
	if err != nil {
		return err
	}
	e, err := ownedUndelegatedEATA(ctx, eata, owner, mi, "undelegate it on the ephemeral rollup first")
	if err != nil {
		return err
	}
	if ix.Amount > e.Amount {
		ctx.Logf("eATA holds %d, cannot withdraw %d", e.Amount, ix.Amount)
		return ErrInsufficientBalance
	}
	if _, err := tokenAccount(ctx, dst, mi, "destination"); err != nil {
		return err
	}
	if err := transfer(ctx, mi, vata.Key, dst.Key, vault.Key, ix.Amount, vaultSeeds(mi.key, bump)); err != nil {
		return err
	}
	e.Amount -= ix.Amount
	eata.Data = e.Encode()
	return nil
}

// delegateEATA is ix 4: delegate the eATA (a no-op when it already is).
// Anyone may pay. Accounts: 0 payer S W · 1 eATA W · 2 eSPL · 3 buffer W ·
// 4 delegation record W · 5 delegation metadata W · 6 DLP · 7 System.
func (p *program) delegateEATA(ctx *runtime.Context, d es.Decoded) error {
	ix := d.(es.DelegateEphemeralATAIx)
	a, err := accounts(ctx, 8)
	if err != nil {
		return err
	}
	payer, eata, self, buf, dlp, system := a[0], a[1], a[2], a[3], a[6], a[7]
	if eata.Owner == es.DelegationProgramID {
		ctx.Log("eATA already delegated")
		return nil
	}
	if err := checkDelegationAccounts(ctx, payer, self, dlp, system); err != nil {
		return err
	}
	e, err := eataAt(ctx, eata, false)
	if err != nil {
		return err
	}
	return delegation.DelegateFromOwner(ctx, delegation.OwnerDelegation{
		Payer: payer, Account: eata, Buffer: buf, Seeds: [][]byte{e.Owner[:], e.Mint[:]}, Bump: e.Bump, Validator: ix.Validator,
	})
}

func checkDelegationAccounts(ctx *runtime.Context, payer, self, dlp, system *runtime.AccountRef) error {
	if err := progutil.SignerWritable(ctx, payer, "payer"); err != nil {
		return err
	}
	if err := checkProgram(ctx, self, ProgramID, "owner program"); err != nil {
		return err
	}
	if err := checkProgram(ctx, dlp, es.DelegationProgramID, "delegation program"); err != nil {
		return err
	}
	return checkProgram(ctx, system, spl.SystemProgramID, "system program")
}

// createPermission is ix 6: create the eATA's ACL permission with its
// owner as authority (idempotent; permissionless with flags 0).
// Accounts: 0 eATA W · 1 permission W · 2 payer S W · 3 System · 4 ACL.
func (p *program) createPermission(ctx *runtime.Context, d es.Decoded) error {
	ix := d.(es.CreateEphemeralATAPermissionIx)
	a, err := accounts(ctx, 5)
	if err != nil {
		return err
	}
	eata, perm, payer, system, acl := a[0], a[1], a[2], a[3], a[4]
	if err := progutil.SignerWritable(ctx, payer, "payer"); err != nil {
		return err
	}
	if err := checkProgram(ctx, system, spl.SystemProgramID, "system program"); err != nil {
		return err
	}
	if err := checkProgram(ctx, acl, permission.ProgramID, "permission program"); err != nil {
		return err
	}
	e, err := eataAt(ctx, eata, true)
	if err != nil {
		return err
	}
	if ix.Flags != 0 && payer.Key != e.Owner {
		ctx.Log("a permission with flags must be created by the eATA owner")
		return runtime.ErrMissingRequiredSignature
	}
	if perm.Owner == permission.ProgramID {
		return nil
	}
	members := []permission.Member{{Key: e.Owner, Flags: permission.FlagAuthority | permission.FlagRead}}
	return ctx.Invoke(permission.Create(eata.Key, payer.Key, members, false), [][]byte{e.Owner[:], e.Mint[:], {e.Bump}})
}

// shuttleAt checks the shuttle metadata [owner, mint, id] and shuttle
// eATA [metadata, mint] addresses and returns the metadata's bump.
func shuttleAt(ctx *runtime.Context, meta, seata *runtime.AccountRef, owner, mint solana.PublicKey, id uint32) (metaBump, eataBump uint8, err error) {
	mk, mb, err := progutil.Find(ctx, ProgramID, owner[:], mint[:], u32le(id))
	if err != nil {
		return 0, 0, err
	}
	if err := progutil.Key(ctx, meta, mk, "shuttle metadata"); err != nil {
		return 0, 0, err
	}
	ek, eb, err := progutil.Find(ctx, ProgramID, mk[:], mint[:])
	if err != nil {
		return 0, 0, err
	}
	if err := progutil.Key(ctx, seata, ek, "shuttle eATA"); err != nil {
		return 0, 0, err
	}
	return mb, eb, nil
}

// createShuttle creates the shuttle metadata, shuttle eATA (holding
// amount) and shuttle wallet ATA, all funded by payer (refunded to it when
// the shuttle closes).
func createShuttle(ctx *runtime.Context, payer, meta, seata, wallet *runtime.AccountRef, owner solana.PublicKey, mi mintInfo, id uint32, amount uint64, metaBump, eataBump uint8) error {
	if wallet.Key != spl.AssociatedTokenAddress(meta.Key, mi.key, mi.program) {
		ctx.Logf("shuttle wallet ATA %s does not belong to %s", wallet.Key, meta.Key)
		return ErrInvalidShuttle
	}
	if err := progutil.CreatePDA(ctx, payer, meta, [][]byte{owner[:], mi.key[:], u32le(id), {metaBump}}, es.ShuttleMetadataSize, ProgramID); err != nil {
		return err
	}
	copy(meta.Data, es.ShuttleMetadata{Owner: owner, Payer: payer.Key, ID: id, Bump: metaBump}.Encode())
	if err := progutil.CreatePDA(ctx, payer, seata, [][]byte{meta.Key[:], mi.key[:], {eataBump}}, es.EphemeralATASize, ProgramID); err != nil {
		return err
	}
	copy(seata.Data, es.EphemeralATA{Owner: meta.Key, Mint: mi.key, Amount: amount, Bump: eataBump}.Encode())
	return ctx.Invoke(spl.CreateAssociatedTokenAccount(payer.Key, meta.Key, mi.key, mi.program, true))
}

// initShuttle is ix 11 (zero-amount deposit): create an empty shuttle.
// Accounts: 0 payer S W · 1 shuttle metadata W · 2 shuttle eATA W ·
// 3 shuttle wallet ATA W · 4 owner · 5 mint · 6 token program · 7 ATA
// program · 8 System.
func (p *program) initShuttle(ctx *runtime.Context, d es.Decoded) error {
	ix := d.(es.InitShuttleIx)
	a, err := accounts(ctx, 9)
	if err != nil {
		return err
	}
	payer, meta, seata, wallet, owner, mint, tp, ataProg, system := a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8]
	if err := progutil.SignerWritable(ctx, payer, "payer"); err != nil {
		return err
	}
	if err := checkProgram(ctx, ataProg, spl.AssociatedTokenProgramID, "ATA program"); err != nil {
		return err
	}
	if err := checkProgram(ctx, system, spl.SystemProgramID, "system program"); err != nil {
		return err
	}
	mi, err := loadMint(ctx, mint, tp)
	if err != nil {
		return err
	}
	mb, eb, err := shuttleAt(ctx, meta, seata, owner.Key, mi.key, ix.ShuttleID)
	if err != nil {
		return err
	}
	if meta.Owner == ProgramID {
		return nil // already initialized
	}
	return createShuttle(ctx, payer, meta, seata, wallet, owner.Key, mi, ix.ShuttleID, 0, mb, eb)
}

// delegateShuttle is ix 13: delegate a shuttle eATA (no-op if delegated).
// Accounts: 0 payer S W · 1 shuttle metadata · 2 shuttle eATA W · 3 eSPL ·
// 4 buffer W · 5 record W · 6 metadata W · 7 DLP · 8 System.
func (p *program) delegateShuttle(ctx *runtime.Context, d es.Decoded) error {
	ix := d.(es.DelegateShuttleIx)
	a, err := accounts(ctx, 9)
	if err != nil {
		return err
	}
	payer, meta, seata, self, buf, dlp, system := a[0], a[1], a[2], a[3], a[4], a[7], a[8]
	if seata.Owner == es.DelegationProgramID {
		return nil
	}
	if err := checkDelegationAccounts(ctx, payer, self, dlp, system); err != nil {
		return err
	}
	if err := progutil.Owner(ctx, meta, ProgramID, "shuttle metadata"); err != nil {
		return err
	}
	e, err := eataAt(ctx, seata, false)
	if err != nil {
		return err
	}
	if e.Owner != meta.Key {
		return ErrInvalidShuttle
	}
	return delegation.DelegateFromOwner(ctx, delegation.OwnerDelegation{
		Payer: payer, Account: seata, Buffer: buf, Seeds: [][]byte{meta.Key[:], e.Mint[:]}, Bump: e.Bump, Validator: ix.Validator,
	})
}

// queueAt checks a transfer queue account (owned by eSPL or, if
// delegatedOK, by DLP), decodes its header and re-derives its address
// from the stored mint and validator.
func queueAt(ctx *runtime.Context, q *runtime.AccountRef, delegatedOK bool) (es.TransferQueueHeader, uint8, error) {
	if q.Owner != ProgramID && !(delegatedOK && q.Owner == es.DelegationProgramID) {
		ctx.Logf("transfer queue %s is owned by %s", q.Key, q.Owner)
		return es.TransferQueueHeader{}, 0, ErrInvalidQueue
	}
	tq, err := es.OpenTransferQueue(q.Data)
	if err != nil {
		ctx.Log(err.Error())
		return es.TransferQueueHeader{}, 0, ErrInvalidQueue
	}
	h := tq.Header()
	k, err := solana.CreateProgramAddress([][]byte{[]byte(es.SeedQueue), h.Mint[:], h.Validator[:], {h.Bump}}, ProgramID)
	if err != nil || k != q.Key {
		ctx.Logf("transfer queue %s does not derive from its mint and validator", q.Key)
		return h, 0, ErrInvalidQueue
	}
	return h, h.Bump, nil
}

func queueSeeds(h es.TransferQueueHeader) [][]byte {
	return [][]byte{[]byte(es.SeedQueue), h.Mint[:], h.Validator[:], {h.Bump}}
}

// initQueue is ix 12: create the transfer queue of (mint, validator), its
// permission, the queue eATA and vault ATA, and delegate the queue eATA.
// Each step is skipped when already done, so the instruction is
// idempotent. Accounts: 0 payer S W · 1 queue W · 2 permission W · 3 mint ·
// 4 validator · 5 System · 6 ACL · 7 queue eATA W · 8 queue vault ATA W ·
// 9 token program · 10 ATA program · 11 eSPL · 12 buffer W · 13 record W ·
// 14 metadata W · 15 DLP.
func (p *program) initQueue(ctx *runtime.Context, d es.Decoded) error {
	ix := d.(es.InitTransferQueueIx)
	a, err := accounts(ctx, 16)
	if err != nil {
		return err
	}
	payer, queue, perm, mint, validator, system, acl := a[0], a[1], a[2], a[3], a[4], a[5], a[6]
	qeata, qata, tp, ataProg, self, buf, dlp := a[7], a[8], a[9], a[10], a[11], a[12], a[15]
	if err := checkDelegationAccounts(ctx, payer, self, dlp, system); err != nil {
		return err
	}
	if err := checkProgram(ctx, acl, permission.ProgramID, "permission program"); err != nil {
		return err
	}
	if err := checkProgram(ctx, ataProg, spl.AssociatedTokenProgramID, "ATA program"); err != nil {
		return err
	}
	mi, err := loadMint(ctx, mint, tp)
	if err != nil {
		return err
	}
	key, bump, err := progutil.Find(ctx, ProgramID, []byte(es.SeedQueue), mi.key[:], validator.Key[:])
	if err != nil {
		return err
	}
	if err := progutil.Key(ctx, queue, key, "transfer queue"); err != nil {
		return err
	}
	if qata.Key != spl.AssociatedTokenAddress(queue.Key, mi.key, mi.program) {
		ctx.Logf("queue vault ATA %s does not belong to %s", qata.Key, queue.Key)
		return ErrInvalidQueue
	}
	h := es.TransferQueueHeader{Version: es.TransferQueueVersion, Bump: bump, Mint: mi.key, Validator: validator.Key,
		NextGroupID: queueGroupIDStart, NextTaskID: 1}
	if queue.Owner != ProgramID && queue.Owner != es.DelegationProgramID {
		capacity := es.DefaultTransferQueueCapacity
		if ix.RequestedItems != nil {
			capacity = int(*ix.RequestedItems)
			if capacity == 0 || capacity > es.DefaultTransferQueueCapacity {
				ctx.Logf("requested %d items; the queue holds 1..%d", capacity, es.DefaultTransferQueueCapacity)
				return ErrInvalidArguments
			}
		}
		if err := progutil.CreatePDA(ctx, payer, queue, queueSeeds(h), es.TransferQueueSize(capacity), ProgramID); err != nil {
			return err
		}
		copy(queue.Data, es.NewTransferQueueAccount(h, capacity))
	}
	if perm.Owner != permission.ProgramID {
		members := []permission.Member{{Key: validator.Key, Flags: permission.FlagAuthority | permission.FlagRead}}
		if err := ctx.Invoke(permission.Create(queue.Key, payer.Key, members, false), queueSeeds(h)); err != nil {
			return err
		}
	}
	if err := createEATAFor(ctx, payer, qeata, queue.Key, mi.key); err != nil {
		return err
	}
	if err := ctx.Invoke(spl.CreateAssociatedTokenAccount(payer.Key, queue.Key, mi.key, mi.program, true)); err != nil {
		return err
	}
	if qeata.Owner == es.DelegationProgramID {
		return nil
	}
	e, err := eataAt(ctx, qeata, false)
	if err != nil {
		return err
	}
	v := validator.Key
	return delegation.DelegateFromOwner(ctx, delegation.OwnerDelegation{
		Payer: payer, Account: qeata, Buffer: buf, Seeds: [][]byte{queue.Key[:], mi.key[:]}, Bump: e.Bump, Validator: &v,
	})
}

// delegateQueue is ix 19: delegate the transfer queue to its validator
// (no-op if delegated). Accounts: 0 payer S W · 1 queue W · 2 mint ·
// 3 eSPL · 4 buffer W · 5 record W · 6 metadata W · 7 DLP · 8 System.
func (p *program) delegateQueue(ctx *runtime.Context, _ es.Decoded) error {
	a, err := accounts(ctx, 9)
	if err != nil {
		return err
	}
	payer, queue, mint, self, buf, dlp, system := a[0], a[1], a[2], a[3], a[4], a[7], a[8]
	if queue.Owner == es.DelegationProgramID {
		return nil
	}
	if err := checkDelegationAccounts(ctx, payer, self, dlp, system); err != nil {
		return err
	}
	h, bump, err := queueAt(ctx, queue, false)
	if err != nil {
		return err
	}
	if h.Mint != mint.Key {
		ctx.Logf("queue mint %s, not %s", h.Mint, mint.Key)
		return ErrInvalidQueue
	}
	v := h.Validator
	return delegation.DelegateFromOwner(ctx, delegation.OwnerDelegation{
		Payer: payer, Account: queue, Buffer: buf, Seeds: [][]byte{[]byte(es.SeedQueue), h.Mint[:], h.Validator[:]}, Bump: bump, Validator: &v,
	})
}

// poolSeeds are the stealth pool seeds of §3.1 (bump excluded).
func poolSeeds(handle []byte) [][]byte {
	seeds := [][]byte{[]byte(es.SeedStealthPool)}
	switch n := len(handle); {
	case n <= 32:
		return append(seeds, handle)
	case n <= 64:
		return append(seeds, handle[:32], handle[32:])
	default:
		h := sha256.Sum256(append([]byte(es.StealthHandleHashDomain), handle...))
		return append(seeds, handle[:32], h[:])
	}
}

// Stealth pool field offsets (§4).
const (
	poolFlags     = 9
	poolAuthority = 10
	poolHandle    = 42
	poolCount     = 298
	poolDests     = 299
)

// ensurePool is ix 22: create the stealth pool of a handle (authority =
// the signer, no destinations yet), its permission, and delegate it.
// Accounts: 0 payer S W · 1 pool W · 2 permission W · 3 eSPL · 4 buffer W ·
// 5 record W · 6 metadata W · 7 DLP · 8 System · 9 ACL · 10 authority S.
func (p *program) ensurePool(ctx *runtime.Context, d es.Decoded) error {
	ix := d.(es.EnsureStealthPoolDelegatedIx)
	a, err := accounts(ctx, 11)
	if err != nil {
		return err
	}
	payer, pool, perm, self, buf, dlp, system, acl, auth := a[0], a[1], a[2], a[3], a[4], a[7], a[8], a[9], a[10]
	if err := checkDelegationAccounts(ctx, payer, self, dlp, system); err != nil {
		return err
	}
	if err := checkProgram(ctx, acl, permission.ProgramID, "permission program"); err != nil {
		return err
	}
	if err := progutil.Signer(ctx, auth, "authority"); err != nil {
		return err
	}
	seeds := poolSeeds(ix.Handle)
	key, bump, err := progutil.Find(ctx, ProgramID, seeds...)
	if err != nil {
		return err
	}
	if err := progutil.Key(ctx, pool, key, "stealth pool"); err != nil {
		return err
	}
	switch pool.Owner {
	case ProgramID, es.DelegationProgramID:
		if len(pool.Data) < es.StealthPoolSize || solana.PublicKeyFromBytes(pool.Data[poolAuthority:poolAuthority+32]) != auth.Key {
			ctx.Logf("stealth pool %s belongs to another authority", pool.Key)
			return ErrInvalidStealthPool
		}
	default:
		if err := progutil.CreatePDA(ctx, payer, pool, progutil.WithBump(seeds, bump), es.StealthPoolSize, ProgramID); err != nil {
			return err
		}
		h, _ := es.EncodeHandle(ix.Handle)
		copy(pool.Data, es.StealthPoolDiscriminator)
		pool.Data[8] = bump
		copy(pool.Data[poolAuthority:], auth.Key[:])
		copy(pool.Data[poolHandle:], h[:])
	}
	if perm.Owner != permission.ProgramID {
		members := []permission.Member{{Key: auth.Key, Flags: permission.FlagAuthority | permission.FlagRead}}
		if err := ctx.Invoke(permission.Create(pool.Key, payer.Key, members, false), progutil.WithBump(seeds, bump)); err != nil {
			return err
		}
	}
	if pool.Owner == es.DelegationProgramID {
		return nil
	}
	return delegation.DelegateFromOwner(ctx, delegation.OwnerDelegation{
		Payer: payer, Account: pool, Buffer: buf, Seeds: seeds, Bump: bump, Validator: ix.Validator,
	})
}

// initRent is ix 23: create the rent PDA ["rent"], a data-less System
// account, by funding it to the rent-exempt minimum (idempotent).
// Accounts: 0 payer S W · 1 rent PDA W · 2 System.
func (p *program) initRent(ctx *runtime.Context, _ es.Decoded) error {
	a, err := accounts(ctx, 3)
	if err != nil {
		return err
	}
	payer, rent, system := a[0], a[1], a[2]
	if err := progutil.SignerWritable(ctx, payer, "payer"); err != nil {
		return err
	}
	if err := checkProgram(ctx, system, spl.SystemProgramID, "system program"); err != nil {
		return err
	}
	key, _, err := progutil.Find(ctx, ProgramID, []byte(es.SeedRent))
	if err != nil {
		return err
	}
	if err := progutil.Key(ctx, rent, key, "rent PDA"); err != nil {
		return err
	}
	if err := progutil.Owner(ctx, rent, spl.SystemProgramID, "rent PDA"); err != nil {
		return err
	}
	if need := ctx.Env().Rent.MinimumBalance(0); rent.Lamports < need {
		return ctx.Invoke(spl.SystemTransfer(payer.Key, rent.Key, need-rent.Lamports))
	}
	return nil
}

// ownedUndelegatedEATA loads the writable eATA of owner for the mint, which
// the legacy deposit and withdraw paths may only touch while it is not
// delegated; hint tells the user what to do instead when it is.
func ownedUndelegatedEATA(ctx *runtime.Context, eata, owner *runtime.AccountRef, mi mintInfo, hint string) (es.EphemeralATA, error) {
	if eata.Owner == es.DelegationProgramID {
		ctx.Log("eATA is delegated; " + hint)
		return es.EphemeralATA{}, ErrEATADelegated
	}
	e, err := eataAt(ctx, eata, false)
	if err != nil {
		return es.EphemeralATA{}, err
	}
	if e.Owner != owner.Key || e.Mint != mi.key {
		ctx.Logf("eATA %s belongs to %s/%s", eata.Key, e.Owner, e.Mint)
		return es.EphemeralATA{}, ErrInvalidEATA
	}
	if err := progutil.Writable(ctx, eata, "eATA"); err != nil {
		return es.EphemeralATA{}, err
	}
	return e, nil
}
