package espl

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"slices"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// ---- ix 12 InitializeTransferQueue ----

// InitTransferQueueArgs are the arguments of InitTransferQueue.
type InitTransferQueueArgs struct {
	Payer          solana.PublicKey
	Mint           solana.PublicKey
	Validator      solana.PublicKey
	TokenProgram   solana.PublicKey // zero → SPL Token
	RequestedItems uint32           // 0 → omitted (data [12]), as the API does
	Cache          *Cache
}

// InitTransferQueue builds ix 12: create the transfer queue of (mint,
// validator), its permission, its eATA and vault ATA, and delegate the
// queue eATA. Data [12] or [12] ‖ u32 requestedItems.
func InitTransferQueue(a InitTransferQueueArgs) txwire.Instruction {
	c := a.Cache
	tp := tokenProgramOr(a.TokenProgram)
	queue, _ := c.FindTransferQueue(a.Mint, a.Validator)
	perm, _ := c.FindPermission(queue)
	qeata, _ := c.FindEphemeralATA(queue, a.Mint)
	qata, _ := c.FindAssociatedTokenAddress(queue, a.Mint, tp)
	buf, rec, meta := c.delegationPDAs(qeata, ProgramID)
	ix := InitTransferQueueIx{
		Payer: a.Payer, Queue: queue, Permission: perm, Mint: a.Mint, Validator: a.Validator,
		SystemProgram: spl.SystemProgramID, PermissionProgram: PermissionProgramID, QueueEphemeralATA: qeata,
		QueueVaultATA: qata, TokenProgram: tp, AssociatedTokenProgram: spl.AssociatedTokenProgramID,
		ESPLProgram: ProgramID, Buffer: buf, DelegationRecord: rec, DelegationMetadata: meta,
		DelegationProgram: DelegationProgramID,
	}
	if a.RequestedItems != 0 {
		n := a.RequestedItems
		ix.RequestedItems = &n
	}
	return ix.Instruction()
}

// InitTransferQueueIx is ix 12 InitializeTransferQueue.
type InitTransferQueueIx struct {
	Payer                  solana.PublicKey // S W
	Queue                  solana.PublicKey // W
	Permission             solana.PublicKey // W, permission(queue)
	Mint                   solana.PublicKey
	Validator              solana.PublicKey
	SystemProgram          solana.PublicKey
	PermissionProgram      solana.PublicKey
	QueueEphemeralATA      solana.PublicKey // W
	QueueVaultATA          solana.PublicKey // W
	TokenProgram           solana.PublicKey
	AssociatedTokenProgram solana.PublicKey
	ESPLProgram            solana.PublicKey
	Buffer                 solana.PublicKey // W, buffer(queue eATA)
	DelegationRecord       solana.PublicKey // W, of the queue eATA
	DelegationMetadata     solana.PublicKey // W, of the queue eATA
	DelegationProgram      solana.PublicKey
	RequestedItems         *uint32
}

// Discriminator is IxInitializeTransferQueue.
func (InitTransferQueueIx) Discriminator() Discriminator { return IxInitializeTransferQueue }

// Instruction encodes ix.
func (ix InitTransferQueueIx) Instruction() txwire.Instruction {
	data := []byte{byte(ix.Discriminator())}
	if ix.RequestedItems != nil {
		data = appendU32(data, *ix.RequestedItems)
	}
	return build(ix.Discriminator(), ix.refs(), data)
}

// Fields lists requestedItems when present.
func (ix InitTransferQueueIx) Fields() []Field {
	if ix.RequestedItems == nil {
		return nil
	}
	return []Field{fU64("requestedItems", uint64(*ix.RequestedItems))}
}

// Accounts lists the accounts by role.
func (ix InitTransferQueueIx) Accounts() []Account { return accountsOf(&ix) }

func (ix *InitTransferQueueIx) refs() []*solana.PublicKey {
	return []*solana.PublicKey{&ix.Payer, &ix.Queue, &ix.Permission, &ix.Mint, &ix.Validator, &ix.SystemProgram,
		&ix.PermissionProgram, &ix.QueueEphemeralATA, &ix.QueueVaultATA, &ix.TokenProgram,
		&ix.AssociatedTokenProgram, &ix.ESPLProgram, &ix.Buffer, &ix.DelegationRecord, &ix.DelegationMetadata,
		&ix.DelegationProgram}
}

// ---- ix 16 DepositAndQueueTransfer (ER) ----

// RandomGroupID draws a non-zero 24-bit group id from r (crypto/rand when
// nil), as the SDK does for ix 16.
func RandomGroupID(r io.Reader) (uint32, error) {
	if r == nil {
		r = rand.Reader
	}
	var b [3]byte
	for range 64 {
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return 0, fmt.Errorf("draw group id: %w", err)
		}
		if id := uint24(b[:]); id != 0 {
			return id, nil
		}
	}
	return 0, fmt.Errorf("draw group id: random source keeps returning zero")
}

// DepositAndQueueTransferArgs are the arguments of DepositAndQueueTransfer.
type DepositAndQueueTransferArgs struct {
	Owner        solana.PublicKey // the sender; signs
	Mint         solana.PublicKey
	Validator    solana.PublicKey // required: selects the queue
	TokenProgram solana.PublicKey // zero → SPL Token
	// Destination is the recipient's owner key (not its ATA); the queue
	// pays its ATA on base.
	Destination   solana.PublicKey
	Amount        uint64
	GroupID       uint32 // 1..0xFFFFFF; 0 → random (see RandomGroupID)
	MinDelayMs    uint64
	MaxDelayMs    uint64           // 0 → MinDelayMs
	Split         uint32           // 0 → 1
	ClientRefID   *uint64          // nil → omitted (32-byte data)
	Source        solana.PublicKey // sender's ER token account; zero → ATA(owner, mint)
	Reimbursement solana.PublicKey // refund account if the queue is full; zero → Source
	// VaultAuthority is account 1. Zero → the queue itself (the SDK's
	// choice; the newest program also accepts the global vault).
	VaultAuthority solana.PublicKey
	// WithGroupReceiptPermission appends permission(groupReceipt) and the
	// ACL program (14 accounts), as the hosted API does.
	WithGroupReceiptPermission bool
	Rand                       io.Reader // for the group id; nil → crypto/rand
	Cache                      *Cache
}

// DepositAndQueueTransfer builds ix 16 (sent to the ER; private ER→base):
// move Amount from the sender's ER ATA into the queue vault and enqueue
// Split delayed transfers to Destination. It fails for arguments the
// program rejects (Amount 0, Split > Amount, MaxDelayMs < MinDelayMs, a
// group id over 24 bits) or a zero Validator or Destination.
func DepositAndQueueTransfer(a DepositAndQueueTransferArgs) (txwire.Instruction, error) {
	if a.Validator.IsZero() || a.Destination.IsZero() || a.Owner.IsZero() {
		return txwire.Instruction{}, fmt.Errorf("build ix 16: %w: owner, validator and destination are required", ErrInvalidInstruction)
	}
	c := a.Cache
	tp := tokenProgramOr(a.TokenProgram)
	gid := a.GroupID
	if gid == 0 {
		var err error
		if gid, err = RandomGroupID(a.Rand); err != nil {
			return txwire.Instruction{}, fmt.Errorf("build ix 16: %w", err)
		}
	}
	queue, _ := c.FindTransferQueue(a.Mint, a.Validator)
	qata, _ := c.FindAssociatedTokenAddress(queue, a.Mint, tp)
	src := a.Source
	if src.IsZero() {
		src, _ = c.FindAssociatedTokenAddress(a.Owner, a.Mint, tp)
	}
	receipt, _ := FindGroupReceipt(queue, a.Owner, gid) // random id: not cached
	ix := DepositAndQueueTransferIx{
		Queue: queue, VaultAuthority: orKey(a.VaultAuthority, queue), Mint: a.Mint, Source: src,
		QueueVaultATA: qata, Destination: a.Destination, Owner: a.Owner, TokenProgram: tp,
		Reimbursement: orKey(a.Reimbursement, src), GroupReceipt: receipt, MagicVault: MagicVaultID,
		MagicProgram: MagicProgramID, Amount: a.Amount, GroupID: gid, MinDelayMs: a.MinDelayMs,
		MaxDelayMs: a.MaxDelayMs, Split: a.Split, ClientRefID: a.ClientRefID,
	}
	if ix.MaxDelayMs == 0 {
		ix.MaxDelayMs = ix.MinDelayMs
	}
	if ix.Split == 0 {
		ix.Split = 1
	}
	if a.WithGroupReceiptPermission {
		ix.HasGroupReceiptPermission = true
		ix.GroupReceiptPermission, _ = FindPermission(receipt)
		ix.PermissionProgram = PermissionProgramID
	}
	if err := ix.Validate(); err != nil {
		return txwire.Instruction{}, fmt.Errorf("build ix 16: %w", err)
	}
	return ix.Instruction(), nil
}

// DepositAndQueueTransferIx is ix 16 DepositAndQueueTransfer. Its data is
// [16] ‖ amount u64 ‖ groupId u24 ‖ minDelayMs u64 ‖ maxDelayMs u64 ‖
// split u32 [‖ legacy flags u8] [‖ clientRefId u64] (32, 33, 40 or 41
// bytes).
type DepositAndQueueTransferIx struct {
	Queue          solana.PublicKey // W
	VaultAuthority solana.PublicKey // the queue (SDK) or the global vault
	Mint           solana.PublicKey
	Source         solana.PublicKey // W, sender's ER ATA
	QueueVaultATA  solana.PublicKey // W
	Destination    solana.PublicKey // recipient owner (legacy programs: its ATA)
	Owner          solana.PublicKey // S, sender authority
	TokenProgram   solana.PublicKey
	Reimbursement  solana.PublicKey // W
	GroupReceipt   solana.PublicKey // W
	MagicVault     solana.PublicKey // W
	MagicProgram   solana.PublicKey
	// HasGroupReceiptPermission marks the hosted API's 14-account form.
	HasGroupReceiptPermission bool
	GroupReceiptPermission    solana.PublicKey // W
	PermissionProgram         solana.PublicKey

	Amount      uint64
	GroupID     uint32 // 24-bit
	MinDelayMs  uint64
	MaxDelayMs  uint64
	Split       uint32
	LegacyFlags *uint8 // the legacy 1-byte flags field, when present
	ClientRefID *uint64
}

// Discriminator is IxDepositAndQueueTransfer.
func (DepositAndQueueTransferIx) Discriminator() Discriminator { return IxDepositAndQueueTransfer }

// Validate applies the program's argument checks (§9.4): amount ≠ 0,
// 1 ≤ split ≤ amount, maxDelayMs ≥ minDelayMs and a 24-bit non-zero
// group id.
func (ix DepositAndQueueTransferIx) Validate() error {
	switch {
	case ix.Amount == 0:
		return fmt.Errorf("%w: amount is zero", ErrInvalidInstruction)
	case ix.Split == 0 || uint64(ix.Split) > ix.Amount:
		return fmt.Errorf("%w: split %d outside 1..amount (%d)", ErrInvalidInstruction, ix.Split, ix.Amount)
	case ix.MaxDelayMs < ix.MinDelayMs:
		return fmt.Errorf("%w: maxDelayMs %d < minDelayMs %d", ErrInvalidInstruction, ix.MaxDelayMs, ix.MinDelayMs)
	case !ValidGroupID(ix.GroupID):
		return fmt.Errorf("%w: group id %d outside 1..0xFFFFFF", ErrInvalidInstruction, ix.GroupID)
	}
	return nil
}

// Instruction encodes ix.
func (ix DepositAndQueueTransferIx) Instruction() txwire.Instruction {
	return build(ix.Discriminator(), ix.refs(), ix.data())
}

func (ix *DepositAndQueueTransferIx) data() []byte {
	b := make([]byte, 0, 42)
	b = append(b, byte(IxDepositAndQueueTransfer))
	b = appendU64(b, ix.Amount)
	b = append(b, byte(ix.GroupID), byte(ix.GroupID>>8), byte(ix.GroupID>>16))
	b = appendU64(b, ix.MinDelayMs)
	b = appendU64(b, ix.MaxDelayMs)
	b = appendU32(b, ix.Split)
	if ix.LegacyFlags != nil {
		b = append(b, *ix.LegacyFlags)
	}
	if ix.ClientRefID != nil {
		b = appendU64(b, *ix.ClientRefID)
	}
	return b
}

func (ix *DepositAndQueueTransferIx) decodeData(args []byte) error {
	n := len(args)
	if n != 31 && n != 32 && n != 39 && n != 40 {
		return argLenErr(n, "31, 32, 39 or 40")
	}
	ix.Amount = binary.LittleEndian.Uint64(args)
	ix.GroupID = uint24(args[8:])
	ix.MinDelayMs = binary.LittleEndian.Uint64(args[11:])
	ix.MaxDelayMs = binary.LittleEndian.Uint64(args[19:])
	ix.Split = binary.LittleEndian.Uint32(args[27:])
	rest := args[31:]
	if n == 32 || n == 40 {
		f := rest[0]
		ix.LegacyFlags = &f
		rest = rest[1:]
	}
	if len(rest) == 8 {
		v := binary.LittleEndian.Uint64(rest)
		ix.ClientRefID = &v
	}
	return nil
}

// Fields lists amount, groupId, minDelayMs, maxDelayMs, split and, when
// present, flags and clientRefId.
func (ix DepositAndQueueTransferIx) Fields() []Field {
	f := []Field{fU64("amount", ix.Amount), fU64("groupId", uint64(ix.GroupID)), fU64("minDelayMs", ix.MinDelayMs),
		fU64("maxDelayMs", ix.MaxDelayMs), fU64("split", uint64(ix.Split))}
	if ix.LegacyFlags != nil {
		f = append(f, fU64("flags", uint64(*ix.LegacyFlags)))
	}
	if ix.ClientRefID != nil {
		f = append(f, fU64("clientRefId", *ix.ClientRefID))
	}
	return f
}

// Accounts lists the accounts by role.
func (ix DepositAndQueueTransferIx) Accounts() []Account { return accountsOf(&ix) }

func (ix *DepositAndQueueTransferIx) refs() []*solana.PublicKey {
	r := []*solana.PublicKey{&ix.Queue, &ix.VaultAuthority, &ix.Mint, &ix.Source, &ix.QueueVaultATA,
		&ix.Destination, &ix.Owner, &ix.TokenProgram, &ix.Reimbursement, &ix.GroupReceipt, &ix.MagicVault,
		&ix.MagicProgram}
	if ix.HasGroupReceiptPermission {
		r = append(r, &ix.GroupReceiptPermission, &ix.PermissionProgram)
	}
	return r
}

// WithGroupReceiptPermission mirrors the hosted API's post-processing
// (withGroupReceiptPermissionAccounts): an eSPL ix 16 with exactly 12
// accounts gets permission(groupReceipt) (writable) and the ACL program
// appended. Any other instruction is returned unchanged. The input's
// account slice is not modified.
func WithGroupReceiptPermission(ix txwire.Instruction) txwire.Instruction {
	if ix.ProgramID != ProgramID || len(ix.Data) == 0 || ix.Data[0] != byte(IxDepositAndQueueTransfer) ||
		len(ix.Accounts) != requiredAccounts(IxDepositAndQueueTransfer) {
		return ix
	}
	perm, _ := FindPermission(ix.Accounts[9].PublicKey)
	ix.Accounts = append(slices.Clip(ix.Accounts), txwire.Writable(perm), txwire.Readonly(PermissionProgramID))
	return ix
}

// ---- ix 17 EnsureTransferQueueCrank (ER) ----

// EnsureQueueCrankArgs are the arguments of EnsureQueueCrank.
type EnsureQueueCrankArgs struct {
	Payer     solana.PublicKey // the API uses a throw-away keypair
	Mint      solana.PublicKey
	Validator solana.PublicKey
	Cache     *Cache
}

// EnsureQueueCrank builds ix 17 (sent to the ER): make sure the queue's
// recurring crank task runs. Data [17].
func EnsureQueueCrank(a EnsureQueueCrankArgs) txwire.Instruction {
	queue, _ := a.Cache.FindTransferQueue(a.Mint, a.Validator)
	fv, _ := a.Cache.FindMagicFeeVault(a.Validator)
	return EnsureQueueCrankIx{
		Payer: a.Payer, Queue: queue, MagicFeeVault: fv, MagicContext: MagicContextID, MagicProgram: MagicProgramID,
	}.Instruction()
}

// EnsureQueueCrankIx is ix 17 EnsureTransferQueueCrank.
type EnsureQueueCrankIx struct {
	Payer         solana.PublicKey // S W
	Queue         solana.PublicKey // W
	MagicFeeVault solana.PublicKey // W
	MagicContext  solana.PublicKey // W
	MagicProgram  solana.PublicKey
}

// Discriminator is IxEnsureTransferQueueCrank.
func (EnsureQueueCrankIx) Discriminator() Discriminator { return IxEnsureTransferQueueCrank }

// Instruction encodes ix.
func (ix EnsureQueueCrankIx) Instruction() txwire.Instruction {
	return build(ix.Discriminator(), ix.refs(), data1(ix.Discriminator()))
}

// Fields is empty: ix 17 has no arguments.
func (ix EnsureQueueCrankIx) Fields() []Field { return nil }

// Accounts lists the accounts by role.
func (ix EnsureQueueCrankIx) Accounts() []Account { return accountsOf(&ix) }

func (ix *EnsureQueueCrankIx) refs() []*solana.PublicKey {
	return []*solana.PublicKey{&ix.Payer, &ix.Queue, &ix.MagicFeeVault, &ix.MagicContext, &ix.MagicProgram}
}

// ---- ix 19 DelegateTransferQueue ----

// DelegateTransferQueueArgs are the arguments of DelegateTransferQueue.
type DelegateTransferQueueArgs struct {
	Payer     solana.PublicKey
	Mint      solana.PublicKey
	Validator solana.PublicKey
	Cache     *Cache
}

// DelegateTransferQueue builds ix 19: delegate the transfer queue of
// (mint, validator). Data [19].
func DelegateTransferQueue(a DelegateTransferQueueArgs) txwire.Instruction {
	queue, _ := a.Cache.FindTransferQueue(a.Mint, a.Validator)
	buf, rec, meta := a.Cache.delegationPDAs(queue, ProgramID)
	return DelegateTransferQueueIx{
		Payer: a.Payer, Queue: queue, Mint: a.Mint, OwnerProgram: ProgramID, Buffer: buf, DelegationRecord: rec,
		DelegationMetadata: meta, DelegationProgram: DelegationProgramID, SystemProgram: spl.SystemProgramID,
	}.Instruction()
}

// DelegateTransferQueueIx is ix 19 DelegateTransferQueue.
type DelegateTransferQueueIx struct {
	Payer              solana.PublicKey // S W
	Queue              solana.PublicKey // W
	Mint               solana.PublicKey
	OwnerProgram       solana.PublicKey // ESPL
	Buffer             solana.PublicKey // W
	DelegationRecord   solana.PublicKey // W
	DelegationMetadata solana.PublicKey // W
	DelegationProgram  solana.PublicKey
	SystemProgram      solana.PublicKey
}

// Discriminator is IxDelegateTransferQueue.
func (DelegateTransferQueueIx) Discriminator() Discriminator { return IxDelegateTransferQueue }

// Instruction encodes ix.
func (ix DelegateTransferQueueIx) Instruction() txwire.Instruction {
	return build(ix.Discriminator(), ix.refs(), data1(ix.Discriminator()))
}

// Fields is empty: ix 19 has no arguments.
func (ix DelegateTransferQueueIx) Fields() []Field { return nil }

// Accounts lists the accounts by role.
func (ix DelegateTransferQueueIx) Accounts() []Account { return accountsOf(&ix) }

func (ix *DelegateTransferQueueIx) refs() []*solana.PublicKey {
	return []*solana.PublicKey{&ix.Payer, &ix.Queue, &ix.Mint, &ix.OwnerProgram, &ix.Buffer, &ix.DelegationRecord,
		&ix.DelegationMetadata, &ix.DelegationProgram, &ix.SystemProgram}
}

// ---- ix 27 AllocateTransferQueue ----

// AllocateTransferQueueArgs are the arguments of AllocateTransferQueue.
type AllocateTransferQueueArgs struct {
	Mint      solana.PublicKey
	Validator solana.PublicKey
	Cache     *Cache
}

// AllocateTransferQueue builds ix 27 (ops): grow the queue account. Data
// [27].
func AllocateTransferQueue(a AllocateTransferQueueArgs) txwire.Instruction {
	queue, _ := a.Cache.FindTransferQueue(a.Mint, a.Validator)
	return AllocateTransferQueueIx{Queue: queue, SystemProgram: spl.SystemProgramID}.Instruction()
}

// AllocateTransferQueueIx is ix 27 AllocateTransferQueue.
type AllocateTransferQueueIx struct {
	Queue         solana.PublicKey // W
	SystemProgram solana.PublicKey
}

// Discriminator is IxAllocateTransferQueue.
func (AllocateTransferQueueIx) Discriminator() Discriminator { return IxAllocateTransferQueue }

// Instruction encodes ix.
func (ix AllocateTransferQueueIx) Instruction() txwire.Instruction {
	return build(ix.Discriminator(), ix.refs(), data1(ix.Discriminator()))
}

// Fields is empty: ix 27 has no arguments.
func (ix AllocateTransferQueueIx) Fields() []Field { return nil }

// Accounts lists the accounts by role.
func (ix AllocateTransferQueueIx) Accounts() []Account { return accountsOf(&ix) }

func (ix *AllocateTransferQueueIx) refs() []*solana.PublicKey {
	return []*solana.PublicKey{&ix.Queue, &ix.SystemProgram}
}

// ---- ix 28 ExecutePendingTransferQueueRefill ----

// ExecuteQueueRefillArgs are the arguments of ExecuteQueueRefill.
type ExecuteQueueRefillArgs struct {
	Mint      solana.PublicKey
	Validator solana.PublicKey
	Cache     *Cache
}

// ExecuteQueueRefill builds ix 28 (ops): fund the queue from the rent PDA
// through the refill lamports PDA. Data [28]. The hosted API drops it from
// gasless private base→base transactions.
func ExecuteQueueRefill(a ExecuteQueueRefillArgs) txwire.Instruction {
	c := a.Cache
	queue, _ := c.FindTransferQueue(a.Mint, a.Validator)
	state, _ := c.FindQueueRefillState(queue)
	rent, _ := c.FindRentPDA()
	lam, _ := c.FindLamportsPDA(rent, queue, queue)
	buf, rec, meta := c.delegationPDAs(lam, ProgramID)
	qrec, _ := c.FindDelegationRecord(queue)
	return ExecuteQueueRefillIx{
		RefillState: state, Queue: queue, RentPDA: rent, LamportsPDA: lam, OwnerProgram: ProgramID, Buffer: buf,
		DelegationRecord: rec, DelegationMetadata: meta, DelegationProgram: DelegationProgramID,
		SystemProgram: spl.SystemProgramID, QueueDelegationRecord: qrec,
	}.Instruction()
}

// ExecuteQueueRefillIx is ix 28 ExecutePendingTransferQueueRefill.
type ExecuteQueueRefillIx struct {
	RefillState           solana.PublicKey // W, ["queue-refill", queue]
	Queue                 solana.PublicKey // W
	RentPDA               solana.PublicKey // W
	LamportsPDA           solana.PublicKey // W, ["lamports", rent, queue, queue]
	OwnerProgram          solana.PublicKey // ESPL
	Buffer                solana.PublicKey // W, buffer(lamports PDA)
	DelegationRecord      solana.PublicKey // W, of the lamports PDA
	DelegationMetadata    solana.PublicKey // W, of the lamports PDA
	DelegationProgram     solana.PublicKey
	SystemProgram         solana.PublicKey
	QueueDelegationRecord solana.PublicKey
}

// Discriminator is IxExecutePendingTransferQueueRefill.
func (ExecuteQueueRefillIx) Discriminator() Discriminator { return IxExecutePendingTransferQueueRefill }

// Instruction encodes ix.
func (ix ExecuteQueueRefillIx) Instruction() txwire.Instruction {
	return build(ix.Discriminator(), ix.refs(), data1(ix.Discriminator()))
}

// Fields is empty: ix 28 has no arguments.
func (ix ExecuteQueueRefillIx) Fields() []Field { return nil }

// Accounts lists the accounts by role.
func (ix ExecuteQueueRefillIx) Accounts() []Account { return accountsOf(&ix) }

func (ix *ExecuteQueueRefillIx) refs() []*solana.PublicKey {
	return []*solana.PublicKey{&ix.RefillState, &ix.Queue, &ix.RentPDA, &ix.LamportsPDA, &ix.OwnerProgram,
		&ix.Buffer, &ix.DelegationRecord, &ix.DelegationMetadata, &ix.DelegationProgram, &ix.SystemProgram,
		&ix.QueueDelegationRecord}
}
