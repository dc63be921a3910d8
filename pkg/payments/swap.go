package payments

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// Private swap constants of the hosted API (payments-api.md §5.13).
const (
	// ScheduleComputeUnits are the compute units added to an existing
	// SetComputeUnitLimit for the appended ATA creation and ix 29.
	ScheduleComputeUnits = 40_000
	// MaxComputeUnitLimit caps the bumped limit (the runtime's maximum).
	MaxComputeUnitLimit = 1_400_000
	// MaxSwapSplit is the largest split of a private swap.
	MaxSwapSplit = 14
)

// SchedulePrivateTransferArgs are the arguments of SchedulePrivateTransfer.
type SchedulePrivateTransferArgs struct {
	// User signs, pays the crank's rent and owns the stash: the stash is
	// ["stash", User, Mint] and ix 25 later moves its tokens.
	User         solana.PublicKey
	Mint         solana.PublicKey
	TokenProgram solana.PublicKey // zero → SPL Token
	ShuttleID    uint32
	Destination  solana.PublicKey // the recipient's owner key; only travels sealed
	MinDelayMs   uint64
	MaxDelayMs   uint64
	Split        uint32
	ClientRefID  *uint64
	Validator    solana.PublicKey // the transfer queue's, and the encryption recipient
	Rand         io.Reader        // nil → crypto/rand
	Cache        *espl.Cache
}

// SchedulePrivateTransfer builds ix 29 (swap flows; espl-program.md §7):
// accounts user (S W), stash (W), rent PDA (W), Hydra crank (W), Hydra,
// System, token program; data [29] ‖ u32 shuttleId ‖ stash bump ‖ mint ‖
// the bumps of the shuttle metadata, shuttle eATA, shuttle wallet ATA,
// its delegate buffer, delegation record and metadata, the global vault,
// the vault ATA, the stash ATA and the queue ‖ validator ‖ sealed
// destination (80) ‖ len u8 ‖ sealed suffix. When the Hydra crank fires,
// the program re-derives every account of ix 25 from these bumps.
func SchedulePrivateTransfer(a SchedulePrivateTransferArgs) (txwire.Instruction, error) {
	if a.User.IsZero() || a.Mint.IsZero() || a.Destination.IsZero() || a.Validator.IsZero() {
		return txwire.Instruction{}, errors.New("build ix 29: user, mint, destination and validator are required")
	}
	if a.MaxDelayMs < a.MinDelayMs {
		return txwire.Instruction{}, fmt.Errorf("build ix 29: maxDelayMs %d < minDelayMs %d", a.MaxDelayMs, a.MinDelayMs)
	}
	if a.Split == 0 {
		return txwire.Instruction{}, errors.New("build ix 29: split must be at least 1")
	}
	tp := a.TokenProgram
	if tp.IsZero() {
		tp = spl.TokenProgramID
	}
	key, err := a.Cache.SealKey(a.Validator)
	if err != nil {
		return txwire.Instruction{}, fmt.Errorf("build ix 29: %w", err)
	}
	encDest, encSuffix, err := espl.SealPrivateTransfer(key, a.Destination,
		espl.PrivateTransferSuffix{MinDelayMs: a.MinDelayMs, MaxDelayMs: a.MaxDelayMs, Split: a.Split, ClientRefID: a.ClientRefID}, a.Rand)
	if err != nil {
		return txwire.Instruction{}, fmt.Errorf("build ix 29: %w", err)
	}

	stash, stashBump := espl.FindStash(a.User, a.Mint)
	_, stashATABump := spl.AssociatedTokenAddressBump(stash, a.Mint, tp)
	meta, metaBump := espl.FindShuttleMetadata(stash, a.Mint, a.ShuttleID)
	eata, eataBump := espl.FindShuttleEphemeralATA(meta, a.Mint)
	_, walletBump := espl.FindShuttleWalletATA(meta, a.Mint, tp)
	_, bufferBump := espl.FindDelegateBuffer(eata, espl.ProgramID)
	_, recordBump := espl.FindDelegationRecord(eata)
	_, dmetaBump := espl.FindDelegationMetadata(eata)
	_, vaultBump := espl.FindGlobalVault(a.Mint)
	_, vaultATABump := espl.FindVaultATA(a.Mint, tp)
	_, queueBump := espl.FindTransferQueue(a.Mint, a.Validator)
	rent, _ := espl.FindRentPDA()
	crank, _ := espl.FindHydraCrank(stash, a.ShuttleID)

	data := make([]byte, 0, 1+4+1+32+10+32+espl.SealedDestinationSize+1+len(encSuffix))
	data = append(data, byte(espl.IxSchedulePrivateTransfer))
	data = binary.LittleEndian.AppendUint32(data, a.ShuttleID)
	data = append(data, stashBump)
	data = append(data, a.Mint[:]...)
	data = append(data, metaBump, eataBump, walletBump, bufferBump, recordBump, dmetaBump, vaultBump, vaultATABump, stashATABump, queueBump)
	data = append(data, a.Validator[:]...)
	data = append(data, encDest[:]...)
	data = append(data, byte(len(encSuffix)))
	data = append(data, encSuffix...)
	return txwire.Instruction{
		ProgramID: espl.ProgramID,
		Accounts: []txwire.AccountMeta{
			txwire.WritableSigner(a.User), txwire.Writable(stash), txwire.Writable(rent), txwire.Writable(crank),
			txwire.Readonly(espl.HydraProgramID), txwire.Readonly(spl.SystemProgramID), txwire.Readonly(tp),
		},
		Data: data,
	}, nil
}

// PrivateSwap is the private part of a swap (POST /v1/swap/swap with
// visibility private): the upstream's swap transaction, rebuilt so that
// its output, delivered to the stash ATA, is scheduled as a private
// transfer to Destination.
type PrivateSwap struct {
	SchedulePrivateTransferArgs
}

// Stash is the stash PDA, its ATA (the swap's destinationTokenAccount)
// and the Hydra crank PDA of the schedule.
func (s *PrivateSwap) Stash() (stash, stashATA, crank solana.PublicKey) {
	stash, _ = espl.FindStash(s.User, s.Mint)
	stashATA = spl.AssociatedTokenAddress(stash, s.Mint, s.tokenProgram())
	crank, _ = espl.FindHydraCrank(stash, s.ShuttleID)
	return stash, stashATA, crank
}

func (s *PrivateSwap) tokenProgram() solana.PublicKey {
	if s.TokenProgram.IsZero() {
		return spl.TokenProgramID
	}
	return s.TokenProgram
}

// ErrSwapTooLarge is the error of Rebuild for a rebuilt transaction over
// the 1232-byte limit (the caller re-quotes with fewer accounts).
var ErrSwapTooLarge = errors.New("rebuilt private swap transaction exceeds 1232 bytes")

// Rebuild turns the upstream's swap transaction (legacy or v0, its lookup
// tables loaded) into the private swap, as the hosted API does: an
// idempotent creation of the stash ATA first (paid by User), an existing
// SetComputeUnitLimit raised by ScheduleComputeUnits (capped at
// MaxComputeUnitLimit; none is added), ix 29 last; recompiled to v0
// against the same tables, with the upstream's fee payer and blockhash and
// no signatures. It returns the wire bytes, ErrSwapTooLarge, or an error
// wrapping txwire.ErrDecompile for a transaction that does not decompile.
func (s *PrivateSwap) Rebuild(tx *txwire.Transaction, tables []txwire.LookupTable) ([]byte, error) {
	byKey := make(map[solana.PublicKey][]solana.PublicKey, len(tables))
	for _, t := range tables {
		byKey[t.Key] = t.Addresses
	}
	feePayer, ixs, err := txwire.Decompile(&tx.Message, byKey)
	if err != nil {
		return nil, err
	}
	stash, _, _ := s.Stash()
	create := spl.CreateAssociatedTokenAccount(s.User, stash, s.Mint, s.tokenProgram(), true)
	ixs = append([]txwire.Instruction{create}, ixs...)
	bumpComputeUnitLimit(ixs, ScheduleComputeUnits)
	sched, err := SchedulePrivateTransfer(s.SchedulePrivateTransferArgs)
	if err != nil {
		return nil, err
	}
	ixs = append(ixs, sched)
	m, err := txwire.CompileV0(feePayer, ixs, tx.Message.RecentBlockhash, tables)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSwapTooLarge, err)
	}
	out := txwire.NewUnsigned(m)
	if err := out.CheckSize(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSwapTooLarge, err)
	}
	return out.Bytes(), nil
}

// bumpComputeUnitLimit raises the first SetComputeUnitLimit (compute
// budget instruction 2, a u32) by extra, capped at MaxComputeUnitLimit, in
// place. Without one it does nothing: the runtime's default budget covers
// the added instructions, and a second compute-budget instruction of the
// same kind would fail the transaction.
func bumpComputeUnitLimit(ixs []txwire.Instruction, extra uint32) {
	for i := range ixs {
		ix := &ixs[i]
		if ix.ProgramID != spl.ComputeBudgetProgramID || len(ix.Data) != 5 || ix.Data[0] != 2 {
			continue
		}
		limit := min(uint64(binary.LittleEndian.Uint32(ix.Data[1:]))+uint64(extra), MaxComputeUnitLimit)
		data := append([]byte(nil), ix.Data...)
		binary.LittleEndian.PutUint32(data[1:], uint32(limit))
		ix.Data = data
		return
	}
}
