package espl

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gagliardetto/solana-go"

	es "github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/internal/progutil"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/magic"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// CloseShuttleArgs are the arguments of CloseShuttle.
type CloseShuttleArgs struct {
	Validator           solana.PublicKey // signs and pays the fee
	RentReimbursement   solana.PublicKey // the shuttle's payer
	ShuttleMetadata     solana.PublicKey
	ShuttleEphemeralATA solana.PublicKey
	ShuttleWalletATA    solana.PublicKey
	Destination         solana.PublicKey // token account of the shuttle's owner
	Mint                solana.PublicKey
	TokenProgram        solana.PublicKey
	Vault               solana.PublicKey
	VaultATA            solana.PublicKey
}

// CloseShuttle builds internal ix 201 (base; scheduled by ix 14 as the
// base action of a shuttle's undelegation). Data [201]. Accounts:
// 0 validator S W · 1 rent reimbursement W · 2 shuttle metadata W ·
// 3 shuttle eATA W · 4 shuttle wallet ATA W · 5 destination W · 6 mint ·
// 7 token program · 8 vault · 9 vault ATA W.
func CloseShuttle(a CloseShuttleArgs) txwire.Instruction {
	return txwire.Instruction{ProgramID: ProgramID, Data: []byte{byte(IxCloseShuttle)}, Accounts: []txwire.AccountMeta{
		txwire.WritableSigner(a.Validator), txwire.Writable(a.RentReimbursement), txwire.Writable(a.ShuttleMetadata),
		txwire.Writable(a.ShuttleEphemeralATA), txwire.Writable(a.ShuttleWalletATA), txwire.Writable(a.Destination),
		txwire.Readonly(a.Mint), txwire.Readonly(a.TokenProgram), txwire.Readonly(a.Vault), txwire.Writable(a.VaultATA),
	}}
}

// ExecuteReadyArgs are the arguments of ExecuteReadyQueuedTransfer.
type ExecuteReadyArgs struct {
	Validator    solana.PublicKey // the queue's validator; signs
	Mint         solana.PublicKey
	TokenProgram solana.PublicKey
	Queue        solana.PublicKey
	// Destination is the key paid: the entry's destination owner, or the
	// stealth-pool destination it resolved to.
	Destination solana.PublicKey
	Entry       es.QueuedTransfer
}

// executeReadyDataSize is 202 ‖ amount u64 ‖ flags u8 ‖ clientRefId u64 ‖
// groupId u24 ‖ taskId u32 ‖ source[32].
const executeReadyDataSize = 1 + 8 + 1 + 8 + 3 + 4 + 32

// ExecuteReadyQueuedTransfer builds internal ix 202 (base; scheduled by
// the crank as a base action): create the destination's ATA if the entry
// asks for it (rent from the rent PDA) and pay the entry's amount from the
// global vault ATA. Data: [202] ‖ amount u64 ‖ flags u8 ‖ clientRefId u64 ‖
// groupId u24 ‖ taskId u32 ‖ source authority[32]. Accounts: 0 validator
// S W · 1 rent PDA W · 2 queue · 3 destination owner · 4 destination ATA W ·
// 5 mint · 6 token program · 7 vault · 8 vault ATA W · 9 ATA program ·
// 10 System.
func ExecuteReadyQueuedTransfer(a ExecuteReadyArgs) txwire.Instruction {
	e := a.Entry
	data := make([]byte, 0, executeReadyDataSize)
	data = append(data, byte(IxExecuteReadyQueuedTransfer))
	data = binary.LittleEndian.AppendUint64(data, e.Amount)
	data = append(data, e.Flags)
	data = binary.LittleEndian.AppendUint64(data, e.ClientRefID)
	data = append(data, byte(e.GroupID), byte(e.GroupID>>8), byte(e.GroupID>>16))
	data = binary.LittleEndian.AppendUint32(data, e.TaskID)
	data = append(data, e.Source[:]...)
	rent, _ := es.FindRentPDA()
	vault, _ := es.FindGlobalVault(a.Mint)
	return txwire.Instruction{ProgramID: ProgramID, Data: data, Accounts: []txwire.AccountMeta{
		txwire.WritableSigner(a.Validator), txwire.Writable(rent), txwire.Readonly(a.Queue), txwire.Readonly(a.Destination),
		txwire.Writable(spl.AssociatedTokenAddress(a.Destination, a.Mint, a.TokenProgram)), txwire.Readonly(a.Mint),
		txwire.Readonly(a.TokenProgram), txwire.Readonly(vault),
		txwire.Writable(spl.AssociatedTokenAddress(vault, a.Mint, a.TokenProgram)),
		txwire.Readonly(spl.AssociatedTokenProgramID), txwire.Readonly(spl.SystemProgramID),
	}}
}

// ReadyTransfer is a decoded ExecuteReadyQueuedTransfer.
type ReadyTransfer struct {
	Destination solana.PublicKey
	Entry       es.QueuedTransfer // Source, Amount, Flags, ClientRefID, GroupID, TaskID
}

// ErrNotInternal is returned by the internal decoders for other data.
var ErrNotInternal = errors.New("not an internal eSPL instruction")

// DecodeExecuteReady parses an ExecuteReadyQueuedTransfer instruction.
func DecodeExecuteReady(ix txwire.Instruction) (ReadyTransfer, error) {
	d := ix.Data
	if ix.ProgramID != ProgramID || len(d) != executeReadyDataSize || d[0] != byte(IxExecuteReadyQueuedTransfer) || len(ix.Accounts) < 11 {
		return ReadyTransfer{}, fmt.Errorf("decode ExecuteReadyQueuedTransfer: %w", ErrNotInternal)
	}
	return ReadyTransfer{Destination: ix.Accounts[3].PublicKey, Entry: es.QueuedTransfer{
		Amount: binary.LittleEndian.Uint64(d[1:]), Flags: d[9], ClientRefID: binary.LittleEndian.Uint64(d[10:]),
		GroupID: uint32(d[18]) | uint32(d[19])<<8 | uint32(d[20])<<16, TaskID: binary.LittleEndian.Uint32(d[21:]),
		Source: solana.PublicKeyFromBytes(d[25:57]), DestinationOwner: ix.Accounts[3].PublicKey,
	}}, nil
}

// CrankEntry names the accounts of one entry the crank pops.
type CrankEntry struct {
	Source      solana.PublicKey // the entry's source authority
	GroupID     uint32
	Destination solana.PublicKey // the entry's destination owner (maybe a stealth pool)
}

// CrankReadyTransfers builds internal ix 210 (ephemeral, validator): pop
// len(entries) ready entries (1..8, in the queue's heap order) and
// schedule their payouts. Data [210, n]. Accounts: 0 validator S W ·
// 1 queue W · 2 queue vault ATA W · 3 mint W · 4 token program · 5 magic
// context W · 6 magic program · per entry: group receipt W · destination.
func CrankReadyTransfers(validator, queue, mint, tokenProgram solana.PublicKey, entries []CrankEntry) (txwire.Instruction, error) {
	if len(entries) == 0 || len(entries) > maxCrankEntries {
		return txwire.Instruction{}, fmt.Errorf("crank ready transfers: %d entries, want 1..%d", len(entries), maxCrankEntries)
	}
	metas := []txwire.AccountMeta{
		txwire.WritableSigner(validator), txwire.Writable(queue),
		txwire.Writable(spl.AssociatedTokenAddress(queue, mint, tokenProgram)), txwire.Writable(mint),
		txwire.Readonly(tokenProgram), txwire.Writable(magic.ContextID), txwire.Readonly(magic.ProgramID),
	}
	for _, e := range entries {
		r, _ := es.FindGroupReceipt(queue, e.Source, e.GroupID)
		metas = append(metas, txwire.Writable(r), txwire.Readonly(e.Destination))
	}
	return txwire.Instruction{ProgramID: ProgramID, Data: []byte{byte(IxCrankReadyTransfers), byte(len(entries))}, Accounts: metas}, nil
}

// MaxCrankEntries is the most entries one CrankReadyTransfers pops.
const MaxCrankEntries = maxCrankEntries

// executeReady is internal ix 202 (base): see ExecuteReadyQueuedTransfer.
func (p *program) executeReady(ctx *runtime.Context, _ es.Decoded) error {
	a, err := accounts(ctx, 11)
	if err != nil {
		return err
	}
	keys := make([]txwire.AccountMeta, len(a))
	for i, r := range a {
		keys[i] = txwire.AccountMeta{PublicKey: r.Key}
	}
	rt, err := DecodeExecuteReady(txwire.Instruction{ProgramID: ProgramID, Data: ctx.Data(), Accounts: keys})
	if err != nil {
		ctx.Log(err.Error())
		return runtime.ErrInvalidInstructionData
	}
	v, rent, queue, dest, dstATA, mint, tp, vault, vata, ataProg, system := a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10]
	if err := p.requireValidator(ctx, v); err != nil {
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
	h, _, err := queueAt(ctx, queue, true)
	if err != nil {
		return err
	}
	if h.Validator != v.Key || h.Mint != mi.key {
		ctx.Logf("queue %s belongs to %s/%s", queue.Key, h.Validator, h.Mint)
		return ErrInvalidQueue
	}
	vbump, err := vaultAt(ctx, vault, vata, mi, true)
	if err != nil {
		return err
	}
	if dstATA.Key != spl.AssociatedTokenAddress(dest.Key, mi.key, mi.program) {
		ctx.Logf("%s is not the ATA of %s", dstATA.Key, dest.Key)
		return ErrInvalidTokenAccount
	}
	e := rt.Entry
	if e.Flags&es.QueuedFlagCreateIdempotentATA != 0 {
		rk, rbump, err := progutil.Find(ctx, ProgramID, []byte(es.SeedRent))
		if err != nil {
			return err
		}
		if err := progutil.Key(ctx, rent, rk, "rent PDA"); err != nil {
			return err
		}
		// The rent PDA sponsors the recipient's ATA. When it cannot (it is
		// funded by initialize-mint and the private setup fees, and ER→base
		// payouts pay none), the local validator does, so a payout never
		// fails for lack of lamports (a ferry-local choice).
		payer, seeds := rent.Key, [][][]byte{{[]byte(es.SeedRent), {rbump}}}
		size := spl.TokenAccountSize
		if mi.program == spl.Token2022ProgramID {
			size += 5 // account type and the ImmutableOwner extension
		}
		rentEnv := ctx.Env().Rent
		if dstATA.Lamports == 0 && rent.Lamports < rentEnv.MinimumBalance(size)+rentEnv.MinimumBalance(0) {
			ctx.Log("rent PDA short of lamports: the validator sponsors the recipient's ATA")
			payer, seeds = v.Key, nil
		}
		create := spl.CreateAssociatedTokenAccount(payer, dest.Key, mi.key, mi.program, true)
		if err := ctx.Invoke(create, seeds...); err != nil {
			return err
		}
	}
	if err := transfer(ctx, mi, vata.Key, dstATA.Key, vault.Key, e.Amount, vaultSeeds(mi.key, vbump)); err != nil {
		return err
	}
	ctx.Logf("Paid %d to %s (task %d, group %d, clientRefId %d)", e.Amount, dest.Key, e.TaskID, e.GroupID, e.ClientRefID)
	return nil
}
