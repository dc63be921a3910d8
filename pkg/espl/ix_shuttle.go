package espl

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// RandomShuttleID draws a shuttle id the way the hosted API does: a random
// u32 with the top bit cleared. r defaults to crypto/rand.
func RandomShuttleID(r io.Reader) (uint32, error) {
	if r == nil {
		r = rand.Reader
	}
	var b [4]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, fmt.Errorf("draw shuttle id: %w", err)
	}
	return binary.LittleEndian.Uint32(b[:]) & 0x7fffffff, nil
}

// Shuttle accounts are keyed by a per-transfer random id, so the builders
// derive them without the cache (see Cache).

func shuttleMetaAndEATA(owner, mint solana.PublicKey, id uint32) (meta, eata solana.PublicKey) {
	meta, _ = FindShuttleMetadata(owner, mint, id)
	eata, _ = FindEphemeralATA(meta, mint)
	return meta, eata
}

type shuttleAccounts struct {
	meta, eata, wallet, buffer, record, dmeta solana.PublicKey
}

func deriveShuttle(owner, mint, tokenProgram solana.PublicKey, id uint32) shuttleAccounts {
	var s shuttleAccounts
	s.meta, s.eata = shuttleMetaAndEATA(owner, mint, id)
	s.wallet = spl.AssociatedTokenAddress(s.meta, mint, tokenProgram)
	s.buffer, s.record, s.dmeta = (*Cache)(nil).delegationPDAs(s.eata, ProgramID)
	return s
}

// ---- ix 11 InitializeShuttleEphemeralAta ----

// InitShuttleArgs are the arguments of InitShuttle.
type InitShuttleArgs struct {
	Payer        solana.PublicKey // zero → Owner
	Owner        solana.PublicKey
	Mint         solana.PublicKey
	TokenProgram solana.PublicKey // zero → SPL Token
	ShuttleID    uint32
}

// InitShuttle builds ix 11 (zero-amount deposit): create the shuttle
// metadata, shuttle eATA and shuttle wallet ATA. Data [11] ‖ u32 id.
func InitShuttle(a InitShuttleArgs) txwire.Instruction {
	tp := tokenProgramOr(a.TokenProgram)
	meta, eata := shuttleMetaAndEATA(a.Owner, a.Mint, a.ShuttleID)
	return InitShuttleIx{
		Payer: orKey(a.Payer, a.Owner), ShuttleMetadata: meta, ShuttleEphemeralATA: eata,
		ShuttleWalletATA: spl.AssociatedTokenAddress(meta, a.Mint, tp), Owner: a.Owner, Mint: a.Mint,
		TokenProgram: tp, AssociatedTokenProgram: spl.AssociatedTokenProgramID, SystemProgram: spl.SystemProgramID,
		ShuttleID: a.ShuttleID,
	}.Instruction()
}

// InitShuttleIx is ix 11 InitializeShuttleEphemeralAta.
type InitShuttleIx struct {
	Payer                  solana.PublicKey // S W
	ShuttleMetadata        solana.PublicKey // W
	ShuttleEphemeralATA    solana.PublicKey // W
	ShuttleWalletATA       solana.PublicKey // W
	Owner                  solana.PublicKey
	Mint                   solana.PublicKey
	TokenProgram           solana.PublicKey
	AssociatedTokenProgram solana.PublicKey
	SystemProgram          solana.PublicKey
	ShuttleID              uint32
}

// Discriminator is IxInitializeShuttleEphemeralATA.
func (InitShuttleIx) Discriminator() Discriminator { return IxInitializeShuttleEphemeralATA }

// Instruction encodes ix.
func (ix InitShuttleIx) Instruction() txwire.Instruction {
	return build(ix.Discriminator(), ix.refs(), appendU32([]byte{byte(ix.Discriminator())}, ix.ShuttleID))
}

// Fields lists shuttleId.
func (ix InitShuttleIx) Fields() []Field { return []Field{fU64("shuttleId", uint64(ix.ShuttleID))} }

// Accounts lists the accounts by role.
func (ix InitShuttleIx) Accounts() []Account { return accountsOf(&ix) }

func (ix *InitShuttleIx) refs() []*solana.PublicKey {
	return []*solana.PublicKey{&ix.Payer, &ix.ShuttleMetadata, &ix.ShuttleEphemeralATA, &ix.ShuttleWalletATA,
		&ix.Owner, &ix.Mint, &ix.TokenProgram, &ix.AssociatedTokenProgram, &ix.SystemProgram}
}

// ---- ix 13 DelegateShuttleEphemeralAta ----

// DelegateShuttleArgs are the arguments of DelegateShuttle.
type DelegateShuttleArgs struct {
	Payer     solana.PublicKey // zero → Owner
	Owner     solana.PublicKey
	Mint      solana.PublicKey
	ShuttleID uint32
	Validator solana.PublicKey // zero → omitted (data [13])
}

// DelegateShuttle builds ix 13 (zero-amount deposit): delegate the shuttle
// eATA. Data [13] or [13] ‖ validator.
func DelegateShuttle(a DelegateShuttleArgs) txwire.Instruction {
	meta, eata := shuttleMetaAndEATA(a.Owner, a.Mint, a.ShuttleID)
	buf, rec, dmeta := (*Cache)(nil).delegationPDAs(eata, ProgramID)
	return DelegateShuttleIx{
		Payer: orKey(a.Payer, a.Owner), ShuttleMetadata: meta, ShuttleEphemeralATA: eata, OwnerProgram: ProgramID,
		Buffer: buf, DelegationRecord: rec, DelegationMetadata: dmeta, DelegationProgram: DelegationProgramID,
		SystemProgram: spl.SystemProgramID, Validator: optKey(a.Validator),
	}.Instruction()
}

// DelegateShuttleIx is ix 13 DelegateShuttleEphemeralAta.
type DelegateShuttleIx struct {
	Payer               solana.PublicKey // S W
	ShuttleMetadata     solana.PublicKey
	ShuttleEphemeralATA solana.PublicKey // W
	OwnerProgram        solana.PublicKey // ESPL
	Buffer              solana.PublicKey // W
	DelegationRecord    solana.PublicKey // W
	DelegationMetadata  solana.PublicKey // W
	DelegationProgram   solana.PublicKey
	SystemProgram       solana.PublicKey
	Validator           *solana.PublicKey
}

// Discriminator is IxDelegateShuttleEphemeralATA.
func (DelegateShuttleIx) Discriminator() Discriminator { return IxDelegateShuttleEphemeralATA }

// Instruction encodes ix.
func (ix DelegateShuttleIx) Instruction() txwire.Instruction {
	return build(ix.Discriminator(), ix.refs(), appendOptKey([]byte{byte(ix.Discriminator())}, ix.Validator))
}

// Fields lists validator when present.
func (ix DelegateShuttleIx) Fields() []Field { return fOptKey(nil, "validator", ix.Validator) }

// Accounts lists the accounts by role.
func (ix DelegateShuttleIx) Accounts() []Account { return accountsOf(&ix) }

func (ix *DelegateShuttleIx) refs() []*solana.PublicKey {
	return []*solana.PublicKey{&ix.Payer, &ix.ShuttleMetadata, &ix.ShuttleEphemeralATA, &ix.OwnerProgram,
		&ix.Buffer, &ix.DelegationRecord, &ix.DelegationMetadata, &ix.DelegationProgram, &ix.SystemProgram}
}

// ---- ix 14 UndelegateAndCloseShuttleToOwner (ER post-action) ----

// UndelegateAndCloseShuttleArgs are the arguments of
// UndelegateAndCloseShuttle.
type UndelegateAndCloseShuttleArgs struct {
	Payer             solana.PublicKey
	RentReimbursement solana.PublicKey // receives the rent refund
	Owner             solana.PublicKey // shuttle owner (seeds)
	Mint              solana.PublicKey
	TokenProgram      solana.PublicKey // zero → SPL Token
	ShuttleID         uint32
	Destination       solana.PublicKey // token account; zero → ATA(owner, mint)
	EscrowIndex       *uint8           // nil → data [14]
}

// UndelegateAndCloseShuttle builds ix 14, the post-delegation action that
// undelegates the shuttle and closes it to its owner. Data [14] or
// [14, escrowIndex].
func UndelegateAndCloseShuttle(a UndelegateAndCloseShuttleArgs) txwire.Instruction {
	tp := tokenProgramOr(a.TokenProgram)
	meta, eata := shuttleMetaAndEATA(a.Owner, a.Mint, a.ShuttleID)
	dst := a.Destination
	if dst.IsZero() {
		dst = spl.AssociatedTokenAddress(a.Owner, a.Mint, tp)
	}
	return UndelegateAndCloseShuttleIx{
		Payer: a.Payer, RentReimbursement: a.RentReimbursement, ShuttleMetadata: meta, ShuttleEphemeralATA: eata,
		ShuttleWalletATA: spl.AssociatedTokenAddress(meta, a.Mint, tp), Destination: dst, TokenProgram: tp,
		MagicContext: MagicContextID, MagicProgram: MagicProgramID, EscrowIndex: a.EscrowIndex,
	}.Instruction()
}

// UndelegateAndCloseShuttleIx is ix 14 UndelegateAndCloseShuttleToOwner.
type UndelegateAndCloseShuttleIx struct {
	Payer               solana.PublicKey // S W
	RentReimbursement   solana.PublicKey // W
	ShuttleMetadata     solana.PublicKey
	ShuttleEphemeralATA solana.PublicKey
	ShuttleWalletATA    solana.PublicKey // W
	Destination         solana.PublicKey // W, destination ATA
	TokenProgram        solana.PublicKey
	MagicContext        solana.PublicKey // W
	MagicProgram        solana.PublicKey
	EscrowIndex         *uint8
}

// Discriminator is IxUndelegateAndCloseShuttleToOwner.
func (UndelegateAndCloseShuttleIx) Discriminator() Discriminator {
	return IxUndelegateAndCloseShuttleToOwner
}

// Instruction encodes ix.
func (ix UndelegateAndCloseShuttleIx) Instruction() txwire.Instruction {
	data := []byte{byte(ix.Discriminator())}
	if ix.EscrowIndex != nil {
		data = append(data, *ix.EscrowIndex)
	}
	return build(ix.Discriminator(), ix.refs(), data)
}

// Fields lists escrowIndex when present.
func (ix UndelegateAndCloseShuttleIx) Fields() []Field {
	if ix.EscrowIndex == nil {
		return nil
	}
	return []Field{fU64("escrowIndex", uint64(*ix.EscrowIndex))}
}

// Accounts lists the accounts by role.
func (ix UndelegateAndCloseShuttleIx) Accounts() []Account { return accountsOf(&ix) }

func (ix *UndelegateAndCloseShuttleIx) refs() []*solana.PublicKey {
	return []*solana.PublicKey{&ix.Payer, &ix.RentReimbursement, &ix.ShuttleMetadata, &ix.ShuttleEphemeralATA,
		&ix.ShuttleWalletATA, &ix.Destination, &ix.TokenProgram, &ix.MagicContext, &ix.MagicProgram}
}

// ---- ix 15 MergeShuttleIntoEphemeralAta (ER post-action) ----

// MergeShuttleArgs are the arguments of MergeShuttle.
type MergeShuttleArgs struct {
	Owner        solana.PublicKey // signs; shuttle owner (seeds)
	Mint         solana.PublicKey
	TokenProgram solana.PublicKey // zero → SPL Token
	ShuttleID    uint32
	Destination  solana.PublicKey // token account; zero → ATA(owner, mint)
}

// MergeShuttle builds ix 15, the post-delegation action that moves the
// shuttle wallet's tokens into the destination ATA on the ER. Data [15].
func MergeShuttle(a MergeShuttleArgs) txwire.Instruction {
	tp := tokenProgramOr(a.TokenProgram)
	meta, _ := FindShuttleMetadata(a.Owner, a.Mint, a.ShuttleID)
	dst := a.Destination
	if dst.IsZero() {
		dst = spl.AssociatedTokenAddress(a.Owner, a.Mint, tp)
	}
	return MergeShuttleIx{
		Owner: a.Owner, Destination: dst, ShuttleMetadata: meta,
		ShuttleWalletATA: spl.AssociatedTokenAddress(meta, a.Mint, tp), Mint: a.Mint, TokenProgram: tp,
	}.Instruction()
}

// MergeShuttleIx is ix 15 MergeShuttleIntoEphemeralAta.
type MergeShuttleIx struct {
	Owner            solana.PublicKey // S
	Destination      solana.PublicKey // W, destination ATA
	ShuttleMetadata  solana.PublicKey
	ShuttleWalletATA solana.PublicKey // W
	Mint             solana.PublicKey
	TokenProgram     solana.PublicKey
}

// Discriminator is IxMergeShuttleIntoEphemeralATA.
func (MergeShuttleIx) Discriminator() Discriminator { return IxMergeShuttleIntoEphemeralATA }

// Instruction encodes ix.
func (ix MergeShuttleIx) Instruction() txwire.Instruction {
	return build(ix.Discriminator(), ix.refs(), data1(ix.Discriminator()))
}

// Fields is empty: ix 15 has no arguments.
func (ix MergeShuttleIx) Fields() []Field { return nil }

// Accounts lists the accounts by role.
func (ix MergeShuttleIx) Accounts() []Account { return accountsOf(&ix) }

func (ix *MergeShuttleIx) refs() []*solana.PublicKey {
	return []*solana.PublicKey{&ix.Owner, &ix.Destination, &ix.ShuttleMetadata, &ix.ShuttleWalletATA, &ix.Mint,
		&ix.TokenProgram}
}

// ---- ix 24 SetupAndDelegateShuttleEphemeralAtaWithMerge ----

// DepositShuttleArgs are the arguments of DepositShuttle.
type DepositShuttleArgs struct {
	Payer        solana.PublicKey // pays fees and the 500 000-lamport setup; zero → Owner
	Owner        solana.PublicKey // token authority; signs; shuttle seeds use it
	Mint         solana.PublicKey
	TokenProgram solana.PublicKey // zero → SPL Token
	Validator    solana.PublicKey // zero → omitted (13-byte data); API flows always set it
	ShuttleID    uint32           // see RandomShuttleID
	Amount       uint64
	Source       solana.PublicKey // owner's source token account; zero → ATA(owner, mint)
	// Destination is the token account the ER merge credits: the owner's
	// ATA for a deposit (zero → Source), the recipient's ATA for a private
	// base→ER transfer.
	Destination solana.PublicKey
	Cache       *Cache // used for the vault, rent PDA and ATAs
}

// DepositShuttle builds ix 24 SetupAndDelegateShuttleEphemeralAtaWithMerge
// (deposit and private base→ER): move Amount into the vault, create and
// delegate a shuttle whose post-actions merge it into Destination on the
// ER. Data [24] ‖ u32 shuttleId ‖ u64 amount [‖ validator].
func DepositShuttle(a DepositShuttleArgs) txwire.Instruction {
	tp := tokenProgramOr(a.TokenProgram)
	sh := deriveShuttle(a.Owner, a.Mint, tp, a.ShuttleID)
	rent, _ := a.Cache.FindRentPDA()
	vault, _ := a.Cache.FindGlobalVault(a.Mint)
	vata, _ := a.Cache.FindAssociatedTokenAddress(vault, a.Mint, tp)
	src := a.Source
	if src.IsZero() {
		src, _ = a.Cache.FindAssociatedTokenAddress(a.Owner, a.Mint, tp)
	}
	return DepositShuttleIx{
		Payer: orKey(a.Payer, a.Owner), RentPDA: rent, ShuttleMetadata: sh.meta, ShuttleEphemeralATA: sh.eata,
		ShuttleWalletATA: sh.wallet, Owner: a.Owner, OwnerProgram: ProgramID, Buffer: sh.buffer,
		DelegationRecord: sh.record, DelegationMetadata: sh.dmeta, DelegationProgram: DelegationProgramID,
		AssociatedTokenProgram: spl.AssociatedTokenProgramID, SystemProgram: spl.SystemProgramID,
		Destination: orKey(a.Destination, src), Mint: a.Mint, TokenProgram: tp, Vault: vault, Source: src,
		VaultATA: vata, ShuttleID: a.ShuttleID, Amount: a.Amount, Validator: optKey(a.Validator),
	}.Instruction()
}

// DepositShuttleIx is ix 24 SetupAndDelegateShuttleEphemeralAtaWithMerge.
type DepositShuttleIx struct {
	Payer                  solana.PublicKey // S W
	RentPDA                solana.PublicKey // W
	ShuttleMetadata        solana.PublicKey // W
	ShuttleEphemeralATA    solana.PublicKey // W
	ShuttleWalletATA       solana.PublicKey // W
	Owner                  solana.PublicKey // S
	OwnerProgram           solana.PublicKey // ESPL
	Buffer                 solana.PublicKey // W
	DelegationRecord       solana.PublicKey // W
	DelegationMetadata     solana.PublicKey // W
	DelegationProgram      solana.PublicKey
	AssociatedTokenProgram solana.PublicKey
	SystemProgram          solana.PublicKey
	Destination            solana.PublicKey // W, where the ER merge lands
	Mint                   solana.PublicKey
	TokenProgram           solana.PublicKey
	Vault                  solana.PublicKey
	Source                 solana.PublicKey // W, owner's source ATA
	VaultATA               solana.PublicKey // W
	ShuttleID              uint32
	Amount                 uint64
	Validator              *solana.PublicKey
}

// Discriminator is IxSetupAndDelegateShuttleEphemeralATAWithMerge.
func (DepositShuttleIx) Discriminator() Discriminator {
	return IxSetupAndDelegateShuttleEphemeralATAWithMerge
}

// Instruction encodes ix.
func (ix DepositShuttleIx) Instruction() txwire.Instruction {
	return build(ix.Discriminator(), ix.refs(), shuttleData(ix.Discriminator(), ix.ShuttleID, ix.Amount, ix.Validator))
}

// Fields lists shuttleId, amount and validator.
func (ix DepositShuttleIx) Fields() []Field {
	return fOptKey([]Field{fU64("shuttleId", uint64(ix.ShuttleID)), fU64("amount", ix.Amount)}, "validator", ix.Validator)
}

// Accounts lists the accounts by role.
func (ix DepositShuttleIx) Accounts() []Account { return accountsOf(&ix) }

func (ix *DepositShuttleIx) refs() []*solana.PublicKey {
	return []*solana.PublicKey{&ix.Payer, &ix.RentPDA, &ix.ShuttleMetadata, &ix.ShuttleEphemeralATA,
		&ix.ShuttleWalletATA, &ix.Owner, &ix.OwnerProgram, &ix.Buffer, &ix.DelegationRecord, &ix.DelegationMetadata,
		&ix.DelegationProgram, &ix.AssociatedTokenProgram, &ix.SystemProgram, &ix.Destination, &ix.Mint,
		&ix.TokenProgram, &ix.Vault, &ix.Source, &ix.VaultATA}
}

// ---- ix 26 WithdrawThroughDelegatedShuttleWithMerge ----

// WithdrawShuttleArgs are the arguments of WithdrawShuttle.
type WithdrawShuttleArgs struct {
	Payer        solana.PublicKey // zero → Owner
	Owner        solana.PublicKey // signs
	Mint         solana.PublicKey
	TokenProgram solana.PublicKey // zero → SPL Token
	Validator    solana.PublicKey // zero → omitted (13-byte data)
	ShuttleID    uint32
	Amount       uint64
	OwnerATA     solana.PublicKey // zero → ATA(owner, mint)
	Cache        *Cache
}

// WithdrawShuttle builds ix 26 WithdrawThroughDelegatedShuttleWithMerge
// (withdraw): a delegated shuttle pulls Amount from the owner's ER ATA and
// the vault pays it out on base. Data [26] ‖ u32 shuttleId ‖ u64 amount
// [‖ validator].
func WithdrawShuttle(a WithdrawShuttleArgs) txwire.Instruction {
	tp := tokenProgramOr(a.TokenProgram)
	sh := deriveShuttle(a.Owner, a.Mint, tp, a.ShuttleID)
	rent, _ := a.Cache.FindRentPDA()
	ata := a.OwnerATA
	if ata.IsZero() {
		ata, _ = a.Cache.FindAssociatedTokenAddress(a.Owner, a.Mint, tp)
	}
	return WithdrawShuttleIx{
		Payer: orKey(a.Payer, a.Owner), RentPDA: rent, ShuttleMetadata: sh.meta, ShuttleEphemeralATA: sh.eata,
		ShuttleWalletATA: sh.wallet, Owner: a.Owner, OwnerProgram: ProgramID, Buffer: sh.buffer,
		DelegationRecord: sh.record, DelegationMetadata: sh.dmeta, DelegationProgram: DelegationProgramID,
		AssociatedTokenProgram: spl.AssociatedTokenProgramID, SystemProgram: spl.SystemProgramID, OwnerATA: ata,
		Mint: a.Mint, TokenProgram: tp, ShuttleID: a.ShuttleID, Amount: a.Amount, Validator: optKey(a.Validator),
	}.Instruction()
}

// WithdrawShuttleIx is ix 26 WithdrawThroughDelegatedShuttleWithMerge.
type WithdrawShuttleIx struct {
	Payer                  solana.PublicKey // S W
	RentPDA                solana.PublicKey // W
	ShuttleMetadata        solana.PublicKey // W
	ShuttleEphemeralATA    solana.PublicKey // W
	ShuttleWalletATA       solana.PublicKey // W
	Owner                  solana.PublicKey // S
	OwnerProgram           solana.PublicKey // ESPL
	Buffer                 solana.PublicKey // W
	DelegationRecord       solana.PublicKey // W
	DelegationMetadata     solana.PublicKey // W
	DelegationProgram      solana.PublicKey
	AssociatedTokenProgram solana.PublicKey
	SystemProgram          solana.PublicKey
	OwnerATA               solana.PublicKey // W
	Mint                   solana.PublicKey
	TokenProgram           solana.PublicKey
	ShuttleID              uint32
	Amount                 uint64
	Validator              *solana.PublicKey
}

// Discriminator is IxWithdrawThroughDelegatedShuttleWithMerge.
func (WithdrawShuttleIx) Discriminator() Discriminator {
	return IxWithdrawThroughDelegatedShuttleWithMerge
}

// Instruction encodes ix.
func (ix WithdrawShuttleIx) Instruction() txwire.Instruction {
	return build(ix.Discriminator(), ix.refs(), shuttleData(ix.Discriminator(), ix.ShuttleID, ix.Amount, ix.Validator))
}

// Fields lists shuttleId, amount and validator.
func (ix WithdrawShuttleIx) Fields() []Field {
	return fOptKey([]Field{fU64("shuttleId", uint64(ix.ShuttleID)), fU64("amount", ix.Amount)}, "validator", ix.Validator)
}

// Accounts lists the accounts by role.
func (ix WithdrawShuttleIx) Accounts() []Account { return accountsOf(&ix) }

func (ix *WithdrawShuttleIx) refs() []*solana.PublicKey {
	return []*solana.PublicKey{&ix.Payer, &ix.RentPDA, &ix.ShuttleMetadata, &ix.ShuttleEphemeralATA,
		&ix.ShuttleWalletATA, &ix.Owner, &ix.OwnerProgram, &ix.Buffer, &ix.DelegationRecord, &ix.DelegationMetadata,
		&ix.DelegationProgram, &ix.AssociatedTokenProgram, &ix.SystemProgram, &ix.OwnerATA, &ix.Mint,
		&ix.TokenProgram}
}
