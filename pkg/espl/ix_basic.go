package espl

import (
	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// ---- ix 0 InitializeEphemeralAta ----

// InitEphemeralATAArgs are the arguments of InitEphemeralATA.
type InitEphemeralATAArgs struct {
	Payer solana.PublicKey // pays the rent; zero → Owner
	Owner solana.PublicKey // eATA owner (does not sign)
	Mint  solana.PublicKey
	Cache *Cache // optional memoisation of the derivations
}

// InitEphemeralATA builds ix 0: idempotently create the 80-byte eATA
// [owner, mint]. Data [0].
func InitEphemeralATA(a InitEphemeralATAArgs) txwire.Instruction {
	eata, _ := a.Cache.FindEphemeralATA(a.Owner, a.Mint)
	return InitEphemeralATAIx{
		EphemeralATA: eata, Payer: orKey(a.Payer, a.Owner), Owner: a.Owner, Mint: a.Mint,
		SystemProgram: spl.SystemProgramID,
	}.Instruction()
}

// InitEphemeralATAIx is ix 0 InitializeEphemeralAta.
type InitEphemeralATAIx struct {
	EphemeralATA  solana.PublicKey // W
	Payer         solana.PublicKey // S W
	Owner         solana.PublicKey // the eATA owner ("user")
	Mint          solana.PublicKey
	SystemProgram solana.PublicKey
}

// Discriminator is IxInitializeEphemeralATA.
func (InitEphemeralATAIx) Discriminator() Discriminator { return IxInitializeEphemeralATA }

// Instruction encodes ix.
func (ix InitEphemeralATAIx) Instruction() txwire.Instruction {
	return build(ix.Discriminator(), ix.refs(), data1(ix.Discriminator()))
}

// Fields is empty: ix 0 has no arguments.
func (ix InitEphemeralATAIx) Fields() []Field { return nil }

// Accounts lists the accounts by role.
func (ix InitEphemeralATAIx) Accounts() []Account { return accountsOf(&ix) }

func (ix *InitEphemeralATAIx) refs() []*solana.PublicKey {
	return []*solana.PublicKey{&ix.EphemeralATA, &ix.Payer, &ix.Owner, &ix.Mint, &ix.SystemProgram}
}

// ---- ix 1 InitializeGlobalVault ----

// InitGlobalVaultArgs are the arguments of InitGlobalVault.
type InitGlobalVaultArgs struct {
	Payer        solana.PublicKey
	Mint         solana.PublicKey
	TokenProgram solana.PublicKey // zero → SPL Token
	Cache        *Cache
}

// InitGlobalVault builds ix 1: idempotently create the vault [mint], the
// vault eATA [vault, mint] and (by CPI) the vault ATA. The SDK follows it
// with an explicit ATA CreateIdempotent of the vault ATA. Data [1].
func InitGlobalVault(a InitGlobalVaultArgs) txwire.Instruction {
	tp := tokenProgramOr(a.TokenProgram)
	vault, _ := a.Cache.FindGlobalVault(a.Mint)
	veata, _ := a.Cache.FindEphemeralATA(vault, a.Mint)
	vata, _ := a.Cache.FindAssociatedTokenAddress(vault, a.Mint, tp)
	return InitGlobalVaultIx{
		Vault: vault, Payer: a.Payer, Mint: a.Mint, VaultEphemeralATA: veata, VaultATA: vata,
		TokenProgram: tp, AssociatedTokenProgram: spl.AssociatedTokenProgramID, SystemProgram: spl.SystemProgramID,
	}.Instruction()
}

// InitGlobalVaultIx is ix 1 InitializeGlobalVault.
type InitGlobalVaultIx struct {
	Vault                  solana.PublicKey // W
	Payer                  solana.PublicKey // S W
	Mint                   solana.PublicKey
	VaultEphemeralATA      solana.PublicKey // W
	VaultATA               solana.PublicKey // W
	TokenProgram           solana.PublicKey
	AssociatedTokenProgram solana.PublicKey
	SystemProgram          solana.PublicKey
}

// Discriminator is IxInitializeGlobalVault.
func (InitGlobalVaultIx) Discriminator() Discriminator { return IxInitializeGlobalVault }

// Instruction encodes ix.
func (ix InitGlobalVaultIx) Instruction() txwire.Instruction {
	return build(ix.Discriminator(), ix.refs(), data1(ix.Discriminator()))
}

// Fields is empty: ix 1 has no arguments.
func (ix InitGlobalVaultIx) Fields() []Field { return nil }

// Accounts lists the accounts by role.
func (ix InitGlobalVaultIx) Accounts() []Account { return accountsOf(&ix) }

func (ix *InitGlobalVaultIx) refs() []*solana.PublicKey {
	return []*solana.PublicKey{&ix.Vault, &ix.Payer, &ix.Mint, &ix.VaultEphemeralATA, &ix.VaultATA,
		&ix.TokenProgram, &ix.AssociatedTokenProgram, &ix.SystemProgram}
}

// ---- ix 2 DepositSplTokens (legacy) ----

// DepositSPLArgs are the arguments of DepositSPL.
type DepositSPLArgs struct {
	Owner        solana.PublicKey // signs; owns the source ATA and the eATA
	Mint         solana.PublicKey
	TokenProgram solana.PublicKey // zero → SPL Token
	Amount       uint64
	Source       solana.PublicKey // zero → ATA(owner, mint)
	Cache        *Cache
}

// DepositSPL builds legacy ix 2: move Amount from the owner's ATA to the
// vault ATA and credit the (undelegated) eATA. Data [2] ‖ u64 amount.
func DepositSPL(a DepositSPLArgs) txwire.Instruction {
	tp := tokenProgramOr(a.TokenProgram)
	eata, _ := a.Cache.FindEphemeralATA(a.Owner, a.Mint)
	vault, _ := a.Cache.FindGlobalVault(a.Mint)
	vata, _ := a.Cache.FindAssociatedTokenAddress(vault, a.Mint, tp)
	src := a.Source
	if src.IsZero() {
		src, _ = a.Cache.FindAssociatedTokenAddress(a.Owner, a.Mint, tp)
	}
	return DepositSPLIx{
		EphemeralATA: eata, Vault: vault, Mint: a.Mint, Source: src, VaultATA: vata, Owner: a.Owner,
		TokenProgram: tp, Amount: a.Amount,
	}.Instruction()
}

// DepositSPLIx is ix 2 DepositSplTokens.
type DepositSPLIx struct {
	EphemeralATA solana.PublicKey // W
	Vault        solana.PublicKey
	Mint         solana.PublicKey
	Source       solana.PublicKey // W, the owner's ATA
	VaultATA     solana.PublicKey // W
	Owner        solana.PublicKey // S
	TokenProgram solana.PublicKey
	Amount       uint64
}

// Discriminator is IxDepositSplTokens.
func (DepositSPLIx) Discriminator() Discriminator { return IxDepositSplTokens }

// Instruction encodes ix.
func (ix DepositSPLIx) Instruction() txwire.Instruction {
	return build(ix.Discriminator(), ix.refs(), appendU64([]byte{byte(ix.Discriminator())}, ix.Amount))
}

// Fields lists amount.
func (ix DepositSPLIx) Fields() []Field { return []Field{fU64("amount", ix.Amount)} }

// Accounts lists the accounts by role.
func (ix DepositSPLIx) Accounts() []Account { return accountsOf(&ix) }

func (ix *DepositSPLIx) refs() []*solana.PublicKey {
	return []*solana.PublicKey{&ix.EphemeralATA, &ix.Vault, &ix.Mint, &ix.Source, &ix.VaultATA, &ix.Owner,
		&ix.TokenProgram}
}

// ---- ix 3 WithdrawSplTokens (legacy) ----

// WithdrawSPLArgs are the arguments of WithdrawSPL.
type WithdrawSPLArgs struct {
	Owner        solana.PublicKey // signs
	Mint         solana.PublicKey
	TokenProgram solana.PublicKey // zero → SPL Token
	Amount       uint64
	Destination  solana.PublicKey // zero → ATA(owner, mint)
	Cache        *Cache
}

// WithdrawSPL builds legacy ix 3: pay Amount from the vault ATA to the
// owner's ATA, debiting the (undelegated) eATA. Data [3] ‖ u64 amount.
func WithdrawSPL(a WithdrawSPLArgs) txwire.Instruction {
	tp := tokenProgramOr(a.TokenProgram)
	eata, _ := a.Cache.FindEphemeralATA(a.Owner, a.Mint)
	vault, _ := a.Cache.FindGlobalVault(a.Mint)
	vata, _ := a.Cache.FindAssociatedTokenAddress(vault, a.Mint, tp)
	dst := a.Destination
	if dst.IsZero() {
		dst, _ = a.Cache.FindAssociatedTokenAddress(a.Owner, a.Mint, tp)
	}
	return WithdrawSPLIx{
		Owner: a.Owner, EphemeralATA: eata, Vault: vault, Mint: a.Mint, VaultATA: vata, Destination: dst,
		TokenProgram: tp, Amount: a.Amount,
	}.Instruction()
}

// WithdrawSPLIx is ix 3 WithdrawSplTokens.
type WithdrawSPLIx struct {
	Owner        solana.PublicKey // S
	EphemeralATA solana.PublicKey // W
	Vault        solana.PublicKey
	Mint         solana.PublicKey
	VaultATA     solana.PublicKey // W
	Destination  solana.PublicKey // W, the owner's ATA
	TokenProgram solana.PublicKey
	Amount       uint64
}

// Discriminator is IxWithdrawSplTokens.
func (WithdrawSPLIx) Discriminator() Discriminator { return IxWithdrawSplTokens }

// Instruction encodes ix.
func (ix WithdrawSPLIx) Instruction() txwire.Instruction {
	return build(ix.Discriminator(), ix.refs(), appendU64([]byte{byte(ix.Discriminator())}, ix.Amount))
}

// Fields lists amount.
func (ix WithdrawSPLIx) Fields() []Field { return []Field{fU64("amount", ix.Amount)} }

// Accounts lists the accounts by role.
func (ix WithdrawSPLIx) Accounts() []Account { return accountsOf(&ix) }

func (ix *WithdrawSPLIx) refs() []*solana.PublicKey {
	return []*solana.PublicKey{&ix.Owner, &ix.EphemeralATA, &ix.Vault, &ix.Mint, &ix.VaultATA, &ix.Destination,
		&ix.TokenProgram}
}

// ---- ix 4 DelegateEphemeralAta ----

// DelegateEphemeralATAArgs are the arguments of DelegateEphemeralATA.
type DelegateEphemeralATAArgs struct {
	Payer     solana.PublicKey // anyone may pay; zero → Owner
	Owner     solana.PublicKey // eATA owner (the vault for the vault eATA)
	Mint      solana.PublicKey
	Validator solana.PublicKey // zero → omitted (data [4])
	Cache     *Cache
}

// DelegateEphemeralATA builds ix 4: delegate the eATA [owner, mint] to the
// validator (a no-op when it is already delegated). Data [4] or
// [4] ‖ validator.
func DelegateEphemeralATA(a DelegateEphemeralATAArgs) txwire.Instruction {
	eata, _ := a.Cache.FindEphemeralATA(a.Owner, a.Mint)
	buf, rec, meta := a.Cache.delegationPDAs(eata, ProgramID)
	return DelegateEphemeralATAIx{
		Payer: orKey(a.Payer, a.Owner), EphemeralATA: eata, OwnerProgram: ProgramID, Buffer: buf,
		DelegationRecord: rec, DelegationMetadata: meta, DelegationProgram: DelegationProgramID,
		SystemProgram: spl.SystemProgramID, Validator: optKey(a.Validator),
	}.Instruction()
}

// DelegateEphemeralATAIx is ix 4 DelegateEphemeralAta.
type DelegateEphemeralATAIx struct {
	Payer              solana.PublicKey // S W
	EphemeralATA       solana.PublicKey // W
	OwnerProgram       solana.PublicKey // ESPL
	Buffer             solana.PublicKey // W, ["buffer", eATA] under ESPL
	DelegationRecord   solana.PublicKey // W
	DelegationMetadata solana.PublicKey // W
	DelegationProgram  solana.PublicKey
	SystemProgram      solana.PublicKey
	Validator          *solana.PublicKey // nil when the data omits it
}

// Discriminator is IxDelegateEphemeralATA.
func (DelegateEphemeralATAIx) Discriminator() Discriminator { return IxDelegateEphemeralATA }

// Instruction encodes ix.
func (ix DelegateEphemeralATAIx) Instruction() txwire.Instruction {
	return build(ix.Discriminator(), ix.refs(), appendOptKey([]byte{byte(ix.Discriminator())}, ix.Validator))
}

// Fields lists validator when present.
func (ix DelegateEphemeralATAIx) Fields() []Field { return fOptKey(nil, "validator", ix.Validator) }

// Accounts lists the accounts by role.
func (ix DelegateEphemeralATAIx) Accounts() []Account { return accountsOf(&ix) }

func (ix *DelegateEphemeralATAIx) refs() []*solana.PublicKey {
	return []*solana.PublicKey{&ix.Payer, &ix.EphemeralATA, &ix.OwnerProgram, &ix.Buffer, &ix.DelegationRecord,
		&ix.DelegationMetadata, &ix.DelegationProgram, &ix.SystemProgram}
}

// ---- ix 5 UndelegateEphemeralAta (ER) ----

// UndelegateEphemeralATAArgs are the arguments of UndelegateEphemeralATA.
type UndelegateEphemeralATAArgs struct {
	Owner solana.PublicKey // signs
	Mint  solana.PublicKey
	// TokenProgram derives the owner ATA (account 1). Zero → SPL Token,
	// which is what the SDK always uses, even for Token-2022 mints (a
	// probable upstream bug, mirrored for parity).
	TokenProgram solana.PublicKey
	// Validator, when set, adds the magic fee vault account and the
	// validator to the data ([5] ‖ validator); the hosted API does so when
	// the payer itself is delegated.
	Validator solana.PublicKey
	Cache     *Cache
}

// UndelegateEphemeralATA builds ix 5 (sent to the ER): commit and
// undelegate the eATA. Data [5], or [5] ‖ validator with the fee vault.
func UndelegateEphemeralATA(a UndelegateEphemeralATAArgs) txwire.Instruction {
	eata, _ := a.Cache.FindEphemeralATA(a.Owner, a.Mint)
	ata, _ := a.Cache.FindAssociatedTokenAddress(a.Owner, a.Mint, tokenProgramOr(a.TokenProgram))
	ix := UndelegateEphemeralATAIx{
		Owner: a.Owner, OwnerATA: ata, EphemeralATA: eata, MagicContext: MagicContextID, MagicProgram: MagicProgramID,
	}
	if !a.Validator.IsZero() {
		ix.HasMagicFeeVault = true
		ix.MagicFeeVault, _ = a.Cache.FindMagicFeeVault(a.Validator)
		ix.Validator = optKey(a.Validator)
	}
	return ix.Instruction()
}

// UndelegateEphemeralATAIx is ix 5 UndelegateEphemeralAta.
type UndelegateEphemeralATAIx struct {
	Owner            solana.PublicKey // S
	OwnerATA         solana.PublicKey // W
	EphemeralATA     solana.PublicKey
	MagicContext     solana.PublicKey // W
	MagicProgram     solana.PublicKey
	HasMagicFeeVault bool
	MagicFeeVault    solana.PublicKey  // W, only with HasMagicFeeVault
	Validator        *solana.PublicKey // nil when the data omits it
}

// Discriminator is IxUndelegateEphemeralATA.
func (UndelegateEphemeralATAIx) Discriminator() Discriminator { return IxUndelegateEphemeralATA }

// Instruction encodes ix.
func (ix UndelegateEphemeralATAIx) Instruction() txwire.Instruction {
	return build(ix.Discriminator(), ix.refs(), appendOptKey([]byte{byte(ix.Discriminator())}, ix.Validator))
}

// Fields lists validator when present.
func (ix UndelegateEphemeralATAIx) Fields() []Field { return fOptKey(nil, "validator", ix.Validator) }

// Accounts lists the accounts by role.
func (ix UndelegateEphemeralATAIx) Accounts() []Account { return accountsOf(&ix) }

func (ix *UndelegateEphemeralATAIx) refs() []*solana.PublicKey {
	r := []*solana.PublicKey{&ix.Owner, &ix.OwnerATA, &ix.EphemeralATA, &ix.MagicContext, &ix.MagicProgram}
	if ix.HasMagicFeeVault {
		r = append(r, &ix.MagicFeeVault)
	}
	return r
}

// ---- ix 6 CreateEphemeralAtaPermission ----

// CreateEphemeralATAPermissionArgs are the arguments of
// CreateEphemeralATAPermission.
type CreateEphemeralATAPermissionArgs struct {
	Payer solana.PublicKey // zero → Owner
	Owner solana.PublicKey // eATA owner
	Mint  solana.PublicKey
	Flags uint8 // 0 (the SDK default) makes the instruction permissionless
	Cache *Cache
}

// CreateEphemeralATAPermission builds ix 6: create the ACL permission of
// the eATA with its owner as AUTHORITY member (idempotent). Data
// [6, flags].
func CreateEphemeralATAPermission(a CreateEphemeralATAPermissionArgs) txwire.Instruction {
	eata, _ := a.Cache.FindEphemeralATA(a.Owner, a.Mint)
	perm, _ := a.Cache.FindPermission(eata)
	return CreateEphemeralATAPermissionIx{
		EphemeralATA: eata, Permission: perm, Payer: orKey(a.Payer, a.Owner), SystemProgram: spl.SystemProgramID,
		PermissionProgram: PermissionProgramID, Flags: a.Flags,
	}.Instruction()
}

// CreateEphemeralATAPermissionIx is ix 6 CreateEphemeralAtaPermission.
type CreateEphemeralATAPermissionIx struct {
	EphemeralATA      solana.PublicKey // W
	Permission        solana.PublicKey // W, ["permission:", eATA] under ACL
	Payer             solana.PublicKey // S W
	SystemProgram     solana.PublicKey
	PermissionProgram solana.PublicKey
	Flags             uint8
}

// Discriminator is IxCreateEphemeralATAPermission.
func (CreateEphemeralATAPermissionIx) Discriminator() Discriminator {
	return IxCreateEphemeralATAPermission
}

// Instruction encodes ix.
func (ix CreateEphemeralATAPermissionIx) Instruction() txwire.Instruction {
	return build(ix.Discriminator(), ix.refs(), []byte{byte(ix.Discriminator()), ix.Flags})
}

// Fields lists flags.
func (ix CreateEphemeralATAPermissionIx) Fields() []Field {
	return []Field{fU64("flags", uint64(ix.Flags))}
}

// Accounts lists the accounts by role.
func (ix CreateEphemeralATAPermissionIx) Accounts() []Account { return accountsOf(&ix) }

func (ix *CreateEphemeralATAPermissionIx) refs() []*solana.PublicKey {
	return []*solana.PublicKey{&ix.EphemeralATA, &ix.Permission, &ix.Payer, &ix.SystemProgram,
		&ix.PermissionProgram}
}

// ---- ix 7 DelegateEphemeralAtaPermission ----

// DelegateEphemeralATAPermissionArgs are the arguments of
// DelegateEphemeralATAPermission.
type DelegateEphemeralATAPermissionArgs struct {
	Payer     solana.PublicKey // zero → Owner
	Owner     solana.PublicKey
	Mint      solana.PublicKey
	Validator solana.PublicKey
	Cache     *Cache
}

// DelegateEphemeralATAPermission builds ix 7: delegate the eATA's
// permission account (buffer under the ACL program). Data [7].
func DelegateEphemeralATAPermission(a DelegateEphemeralATAPermissionArgs) txwire.Instruction {
	eata, _ := a.Cache.FindEphemeralATA(a.Owner, a.Mint)
	perm, _ := a.Cache.FindPermission(eata)
	buf, rec, meta := a.Cache.delegationPDAs(perm, PermissionProgramID)
	return DelegateEphemeralATAPermissionIx{
		Payer: orKey(a.Payer, a.Owner), EphemeralATA: eata, PermissionProgram: PermissionProgramID,
		Permission: perm, SystemProgram: spl.SystemProgramID, Buffer: buf, DelegationRecord: rec,
		DelegationMetadata: meta, DelegationProgram: DelegationProgramID, Validator: a.Validator,
	}.Instruction()
}

// DelegateEphemeralATAPermissionIx is ix 7 DelegateEphemeralAtaPermission.
type DelegateEphemeralATAPermissionIx struct {
	Payer              solana.PublicKey // S W
	EphemeralATA       solana.PublicKey // W
	PermissionProgram  solana.PublicKey
	Permission         solana.PublicKey // W
	SystemProgram      solana.PublicKey
	Buffer             solana.PublicKey // W, ["buffer", permission] under ACL
	DelegationRecord   solana.PublicKey // W
	DelegationMetadata solana.PublicKey // W
	DelegationProgram  solana.PublicKey
	Validator          solana.PublicKey
}

// Discriminator is IxDelegateEphemeralATAPermission.
func (DelegateEphemeralATAPermissionIx) Discriminator() Discriminator {
	return IxDelegateEphemeralATAPermission
}

// Instruction encodes ix.
func (ix DelegateEphemeralATAPermissionIx) Instruction() txwire.Instruction {
	return build(ix.Discriminator(), ix.refs(), data1(ix.Discriminator()))
}

// Fields is empty: ix 7 has no arguments.
func (ix DelegateEphemeralATAPermissionIx) Fields() []Field { return nil }

// Accounts lists the accounts by role.
func (ix DelegateEphemeralATAPermissionIx) Accounts() []Account { return accountsOf(&ix) }

func (ix *DelegateEphemeralATAPermissionIx) refs() []*solana.PublicKey {
	return []*solana.PublicKey{&ix.Payer, &ix.EphemeralATA, &ix.PermissionProgram, &ix.Permission,
		&ix.SystemProgram, &ix.Buffer, &ix.DelegationRecord, &ix.DelegationMetadata, &ix.DelegationProgram,
		&ix.Validator}
}

// ---- ix 8 UndelegateEphemeralAtaPermission (ER) ----

// UndelegateEphemeralATAPermissionArgs are the arguments of
// UndelegateEphemeralATAPermission.
type UndelegateEphemeralATAPermissionArgs struct {
	Owner solana.PublicKey // signs
	Mint  solana.PublicKey
	Cache *Cache
}

// UndelegateEphemeralATAPermission builds ix 8 (sent to the ER). Data [8].
func UndelegateEphemeralATAPermission(a UndelegateEphemeralATAPermissionArgs) txwire.Instruction {
	eata, _ := a.Cache.FindEphemeralATA(a.Owner, a.Mint)
	perm, _ := a.Cache.FindPermission(eata)
	return UndelegateEphemeralATAPermissionIx{
		Owner: a.Owner, EphemeralATA: eata, Permission: perm, PermissionProgram: PermissionProgramID,
		MagicProgram: MagicProgramID, MagicContext: MagicContextID,
	}.Instruction()
}

// UndelegateEphemeralATAPermissionIx is ix 8 UndelegateEphemeralAtaPermission.
type UndelegateEphemeralATAPermissionIx struct {
	Owner             solana.PublicKey // S
	EphemeralATA      solana.PublicKey // W
	Permission        solana.PublicKey // W
	PermissionProgram solana.PublicKey
	MagicProgram      solana.PublicKey
	MagicContext      solana.PublicKey // W
}

// Discriminator is IxUndelegateEphemeralATAPermission.
func (UndelegateEphemeralATAPermissionIx) Discriminator() Discriminator {
	return IxUndelegateEphemeralATAPermission
}

// Instruction encodes ix.
func (ix UndelegateEphemeralATAPermissionIx) Instruction() txwire.Instruction {
	return build(ix.Discriminator(), ix.refs(), data1(ix.Discriminator()))
}

// Fields is empty: ix 8 has no arguments.
func (ix UndelegateEphemeralATAPermissionIx) Fields() []Field { return nil }

// Accounts lists the accounts by role.
func (ix UndelegateEphemeralATAPermissionIx) Accounts() []Account { return accountsOf(&ix) }

func (ix *UndelegateEphemeralATAPermissionIx) refs() []*solana.PublicKey {
	return []*solana.PublicKey{&ix.Owner, &ix.EphemeralATA, &ix.Permission, &ix.PermissionProgram,
		&ix.MagicProgram, &ix.MagicContext}
}

// ---- ix 9 ResetEphemeralAtaPermission ----

// ResetEphemeralATAPermissionArgs are the arguments of
// ResetEphemeralATAPermission.
type ResetEphemeralATAPermissionArgs struct {
	Payer solana.PublicKey // signs (read-only); zero → Owner
	Owner solana.PublicKey
	Mint  solana.PublicKey
	Flags uint8
	Cache *Cache
}

// ResetEphemeralATAPermission builds ix 9. Data [9, flags].
func ResetEphemeralATAPermission(a ResetEphemeralATAPermissionArgs) txwire.Instruction {
	eata, _ := a.Cache.FindEphemeralATA(a.Owner, a.Mint)
	perm, _ := a.Cache.FindPermission(eata)
	return ResetEphemeralATAPermissionIx{
		EphemeralATA: eata, Permission: perm, Payer: orKey(a.Payer, a.Owner), PermissionProgram: PermissionProgramID,
		Flags: a.Flags,
	}.Instruction()
}

// ResetEphemeralATAPermissionIx is ix 9 ResetEphemeralAtaPermission.
type ResetEphemeralATAPermissionIx struct {
	EphemeralATA      solana.PublicKey
	Permission        solana.PublicKey // W
	Payer             solana.PublicKey // S
	PermissionProgram solana.PublicKey
	Flags             uint8
}

// Discriminator is IxResetEphemeralATAPermission.
func (ResetEphemeralATAPermissionIx) Discriminator() Discriminator {
	return IxResetEphemeralATAPermission
}

// Instruction encodes ix.
func (ix ResetEphemeralATAPermissionIx) Instruction() txwire.Instruction {
	return build(ix.Discriminator(), ix.refs(), []byte{byte(ix.Discriminator()), ix.Flags})
}

// Fields lists flags.
func (ix ResetEphemeralATAPermissionIx) Fields() []Field {
	return []Field{fU64("flags", uint64(ix.Flags))}
}

// Accounts lists the accounts by role.
func (ix ResetEphemeralATAPermissionIx) Accounts() []Account { return accountsOf(&ix) }

func (ix *ResetEphemeralATAPermissionIx) refs() []*solana.PublicKey {
	return []*solana.PublicKey{&ix.EphemeralATA, &ix.Permission, &ix.Payer, &ix.PermissionProgram}
}

// ---- ix 23 InitializeRentPda ----

// InitRentPDAArgs are the arguments of InitRentPDA.
type InitRentPDAArgs struct {
	Payer solana.PublicKey
	Cache *Cache
}

// InitRentPDA builds ix 23: create the global rent PDA ["rent"]. Data
// [23].
func InitRentPDA(a InitRentPDAArgs) txwire.Instruction {
	rent, _ := a.Cache.FindRentPDA()
	return InitRentPDAIx{Payer: a.Payer, RentPDA: rent, SystemProgram: spl.SystemProgramID}.Instruction()
}

// InitRentPDAIx is ix 23 InitializeRentPda.
type InitRentPDAIx struct {
	Payer         solana.PublicKey // S W
	RentPDA       solana.PublicKey // W
	SystemProgram solana.PublicKey
}

// Discriminator is IxInitializeRentPDA.
func (InitRentPDAIx) Discriminator() Discriminator { return IxInitializeRentPDA }

// Instruction encodes ix.
func (ix InitRentPDAIx) Instruction() txwire.Instruction {
	return build(ix.Discriminator(), ix.refs(), data1(ix.Discriminator()))
}

// Fields is empty: ix 23 has no arguments.
func (ix InitRentPDAIx) Fields() []Field { return nil }

// Accounts lists the accounts by role.
func (ix InitRentPDAIx) Accounts() []Account { return accountsOf(&ix) }

func (ix *InitRentPDAIx) refs() []*solana.PublicKey {
	return []*solana.PublicKey{&ix.Payer, &ix.RentPDA, &ix.SystemProgram}
}
