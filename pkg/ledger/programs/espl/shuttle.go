package espl

import (
	"github.com/gagliardetto/solana-go"

	es "github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/delegation"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/internal/progutil"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// shuttle is the account set ix 24, 25 and 26 share (accounts 0–12 plus
// the mint and token program).
type shuttle struct {
	payer, rent, meta, seata, wallet, owner, self, buf, dlp, ataProg, system *runtime.AccountRef
	mi                                                                       mintInfo
	metaBump, eataBump                                                       uint8
}

// loadShuttle checks the common shuttle accounts. mintIdx and tpIdx are
// the positions of the mint and token program in the instruction.
func loadShuttle(ctx *runtime.Context, id uint32, mintIdx, tpIdx int) (*shuttle, error) {
	a, err := accounts(ctx, 13)
	if err != nil {
		return nil, err
	}
	mint, err := ctx.Account(mintIdx)
	if err != nil {
		return nil, err
	}
	tp, err := ctx.Account(tpIdx)
	if err != nil {
		return nil, err
	}
	s := &shuttle{payer: a[0], rent: a[1], meta: a[2], seata: a[3], wallet: a[4], owner: a[5], self: a[6], buf: a[7],
		dlp: a[10], ataProg: a[11], system: a[12]}
	if err := checkDelegationAccounts(ctx, s.payer, s.self, s.dlp, s.system); err != nil {
		return nil, err
	}
	if err := checkProgram(ctx, s.ataProg, spl.AssociatedTokenProgramID, "ATA program"); err != nil {
		return nil, err
	}
	if err := progutil.Signer(ctx, s.owner, "owner"); err != nil {
		return nil, err
	}
	rentKey, _, err := progutil.Find(ctx, ProgramID, []byte(es.SeedRent))
	if err != nil {
		return nil, err
	}
	if err := progutil.Key(ctx, s.rent, rentKey, "rent PDA"); err != nil {
		return nil, err
	}
	if s.mi, err = loadMint(ctx, mint, tp); err != nil {
		return nil, err
	}
	if s.metaBump, s.eataBump, err = shuttleAt(ctx, s.meta, s.seata, s.owner.Key, s.mi.key, id); err != nil {
		return nil, err
	}
	return s, nil
}

// open creates the shuttle holding amount, after the payer pays the
// setup fee to the rent PDA, and delegates its eATA to validator with the
// payer as rent payer. The caller moves the tokens in between (fund).
func (s *shuttle) open(ctx *runtime.Context, id uint32, amount, setupLamports uint64, validator *solana.PublicKey, fund func() error) error {
	if err := ctx.Invoke(spl.SystemTransfer(s.payer.Key, s.rent.Key, setupLamports)); err != nil {
		return err
	}
	if err := createShuttle(ctx, s.payer, s.meta, s.seata, s.wallet, s.owner.Key, s.mi, id, amount, s.metaBump, s.eataBump); err != nil {
		return err
	}
	if err := fund(); err != nil {
		return err
	}
	return delegation.DelegateFromOwner(ctx, delegation.OwnerDelegation{
		Payer: s.payer, Account: s.seata, Buffer: s.buf, Seeds: [][]byte{s.meta.Key[:], s.mi.key[:]}, Bump: s.eataBump,
		Validator: validator,
	})
}

// shuttleDelegated reports (and logs) that the shuttle eATA of ixs 24–26,
// account 3, is already delegated; those instructions then succeed and do
// nothing (espl-program.md).
func shuttleDelegated(ctx *runtime.Context) bool {
	if a, err := ctx.Account(3); err == nil && a.Owner == es.DelegationProgramID {
		ctx.Log("shuttle already delegated")
		return true
	}
	return false
}

// depositShuttle is ix 24 SetupAndDelegateShuttleEphemeralAtaWithMerge:
// move amount from the owner's source account into the global vault,
// credit it to a new shuttle and delegate the shuttle; the validator then
// merges it into the destination account on the ephemeral rollup. It is
// a no-op when the shuttle is already delegated. Accounts 13–18:
// destination W · mint · token program · vault · source W · vault ATA W.
func (p *program) depositShuttle(ctx *runtime.Context, d es.Decoded) error {
	ix := d.(es.DepositShuttleIx)
	if shuttleDelegated(ctx) {
		return nil
	}
	s, err := loadShuttle(ctx, ix.ShuttleID, 14, 15)
	if err != nil {
		return err
	}
	a, err := accounts(ctx, 19)
	if err != nil {
		return err
	}
	dst, vault, src, vata := a[13], a[16], a[17], a[18]
	if _, err := vaultAt(ctx, vault, vata, s.mi, true); err != nil {
		return err
	}
	if err := progutil.Writable(ctx, dst, "destination"); err != nil {
		return err
	}
	return s.open(ctx, ix.ShuttleID, ix.Amount, es.ShuttleSetupLamports, ix.Validator, func() error {
		return transfer(ctx, s.mi, src.Key, vata.Key, s.owner.Key, ix.Amount)
	})
}

// privateTransfer is ix 25: like ix 24, but the shuttle holds the queued
// amount plus the 10-bps privacy fee, the payer pays the private setup
// lamports, and the validator's post-actions (decrypted from the sealed
// fields) queue the transfer. The queue (account 18) must be delegated
// and re-derive from its stored bump and validator. Accounts 13–18: mint ·
// token program · vault · source W · vault ATA W · queue W.
func (p *program) privateTransfer(ctx *runtime.Context, d es.Decoded) error {
	ix := d.(es.PrivateTransferIx)
	if shuttleDelegated(ctx) {
		return nil
	}
	s, err := loadShuttle(ctx, ix.ShuttleID, 13, 14)
	if err != nil {
		return err
	}
	a, err := accounts(ctx, 19)
	if err != nil {
		return err
	}
	vault, src, vata, queue := a[15], a[16], a[17], a[18]
	if _, err := vaultAt(ctx, vault, vata, s.mi, true); err != nil {
		return err
	}
	if ix.Validator == nil {
		ctx.Log("validator is required for encrypted private transfers")
		return ErrInvalidArguments
	}
	if queue.Owner != es.DelegationProgramID {
		ctx.Logf("transfer queue %s is not delegated", queue.Key)
		return ErrInvalidQueue
	}
	h, _, err := queueAt(ctx, queue, true)
	if err != nil {
		return err
	}
	if h.Mint != s.mi.key || h.Validator != *ix.Validator {
		ctx.Logf("transfer queue %s serves %s/%s, not %s/%s", queue.Key, h.Mint, h.Validator, s.mi.key, *ix.Validator)
		return ErrInvalidQueue
	}
	if n := len(ix.EncryptedSuffix); n != es.PrivateTransferSuffixSize+es.EncryptionOverhead && n != es.PrivateTransferSuffixRefSize+es.EncryptionOverhead {
		ctx.Logf("encrypted suffix of %d bytes", n)
		return ErrInvalidArguments
	}
	if !es.ValidGroupID(ix.GroupID()) {
		ctx.Log("group id 0 (re-seal the destination)")
		return ErrInvalidArguments
	}
	_, _, debit, ok := es.PrivateTransferAmounts(ix.Amount, ix.ExactOut)
	if !ok || ix.Amount == 0 {
		ctx.Logf("amount %d rejected", ix.Amount)
		return ErrInvalidArguments
	}
	return s.open(ctx, ix.ShuttleID, debit, es.PrivateTransferSetupLamports, ix.Validator, func() error {
		return transfer(ctx, s.mi, src.Key, vata.Key, s.owner.Key, debit)
	})
}

// withdrawShuttle is ix 26: create and delegate an empty shuttle whose
// ephemeral post-actions move amount out of the owner's rollup balance;
// once its undelegation lands, CloseShuttle pays the owner's account
// (account 13) from the vault. Accounts 13–15: owner ATA W · mint · token
// program.
func (p *program) withdrawShuttle(ctx *runtime.Context, d es.Decoded) error {
	ix := d.(es.WithdrawShuttleIx)
	if shuttleDelegated(ctx) {
		return nil
	}
	s, err := loadShuttle(ctx, ix.ShuttleID, 14, 15)
	if err != nil {
		return err
	}
	dst, err := ctx.Account(13)
	if err != nil {
		return err
	}
	ta, err := tokenAccount(ctx, dst, s.mi, "owner ATA")
	if err != nil {
		return err
	}
	if ta.Owner != s.owner.Key {
		ctx.Logf("owner ATA %s belongs to %s", dst.Key, ta.Owner)
		return ErrInvalidTokenAccount
	}
	if ix.Amount == 0 {
		ctx.Log("amount is zero")
		return ErrInvalidArguments
	}
	return s.open(ctx, ix.ShuttleID, 0, es.ShuttleSetupLamports, ix.Validator, func() error { return nil })
}

// closeShuttle is internal ix 201 (base, validator): after a shuttle's
// undelegation landed, pay its committed amount from the vault to the
// destination (the owner's account: a refund of an unmerged deposit, or a
// withdrawal), close the shuttle wallet ATA, eATA and metadata, and refund
// their rent to the shuttle's payer. Accounts: 0 validator S W · 1 rent
// reimbursement W · 2 shuttle metadata W · 3 shuttle eATA W · 4 shuttle
// wallet ATA W · 5 destination W · 6 mint · 7 token program · 8 vault ·
// 9 vault ATA W.
func (p *program) closeShuttle(ctx *runtime.Context, _ es.Decoded) error {
	if len(ctx.Data()) != 1 {
		return runtime.ErrInvalidInstructionData
	}
	a, err := accounts(ctx, 10)
	if err != nil {
		return err
	}
	v, reimb, meta, seata, wallet, dst, mint, tp, vault, vata := a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9]
	if err := p.requireValidator(ctx, v); err != nil {
		return err
	}
	mi, err := loadMint(ctx, mint, tp)
	if err != nil {
		return err
	}
	vbump, err := vaultAt(ctx, vault, vata, mi, true)
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
	if _, _, err := shuttleAt(ctx, meta, seata, md.Owner, mi.key, md.ID); err != nil {
		return err
	}
	if seata.Owner == es.DelegationProgramID {
		ctx.Log("shuttle is still delegated")
		return ErrStillDelegated
	}
	e, err := eataAt(ctx, seata, false)
	if err != nil {
		return err
	}
	if reimb.Key != md.Payer {
		ctx.Logf("rent goes back to the shuttle's payer %s, not %s", md.Payer, reimb.Key)
		return ErrInvalidShuttle
	}
	if wallet.Key != spl.AssociatedTokenAddress(meta.Key, mi.key, mi.program) {
		return ErrInvalidShuttle
	}
	dta, err := tokenAccount(ctx, dst, mi, "destination")
	if err != nil {
		return err
	}
	if dta.Owner != md.Owner {
		ctx.Logf("destination %s belongs to %s, not the shuttle owner %s", dst.Key, dta.Owner, md.Owner)
		return ErrInvalidTokenAccount
	}
	for _, w := range []*runtime.AccountRef{reimb, meta, seata, wallet, dst, vata} {
		if err := progutil.Writable(ctx, w, "account"); err != nil {
			return err
		}
	}
	if err := transfer(ctx, mi, vata.Key, dst.Key, vault.Key, e.Amount, vaultSeeds(mi.key, vbump)); err != nil {
		return err
	}
	metaSeeds := [][]byte{md.Owner[:], mi.key[:], u32le(md.ID), {md.Bump}}
	if wallet.Owner == mi.program {
		if wta, err := tokenAccount(ctx, wallet, mi, "shuttle wallet"); err == nil && wta.Amount > 0 {
			// Tokens sent to the shuttle wallet on base belong to the owner.
			if err := transfer(ctx, mi, wallet.Key, dst.Key, meta.Key, wta.Amount, metaSeeds); err != nil {
				return err
			}
		}
		if err := ctx.Invoke(spl.TokenCloseAccount(mi.program, wallet.Key, reimb.Key, meta.Key), metaSeeds); err != nil {
			return err
		}
	}
	progutil.Close(seata, reimb)
	progutil.Close(meta, reimb)
	ctx.Logf("Closed shuttle %d of %s, released %d to %s", md.ID, md.Owner, e.Amount, dst.Key)
	return nil
}

func (p *program) requireValidator(ctx *runtime.Context, v *runtime.AccountRef) error {
	if v.Key != p.cfg.Validator || !v.IsSigner {
		ctx.Logf("%s is not the validator %s", v.Key, p.cfg.Validator)
		return ErrNotValidator
	}
	return nil
}
