package espl

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// Discriminator is the first data byte of an eSPL instruction (§6).
type Discriminator uint8

// eSPL instruction discriminators (§6). Values below 196 are public
// instructions, 196 is the DLP undelegation callback, 201–255 are
// internal.
const (
	IxInitializeEphemeralATA                                           Discriminator = 0
	IxInitializeGlobalVault                                            Discriminator = 1
	IxDepositSplTokens                                                 Discriminator = 2
	IxWithdrawSplTokens                                                Discriminator = 3
	IxDelegateEphemeralATA                                             Discriminator = 4
	IxUndelegateEphemeralATA                                           Discriminator = 5
	IxCreateEphemeralATAPermission                                     Discriminator = 6
	IxDelegateEphemeralATAPermission                                   Discriminator = 7
	IxUndelegateEphemeralATAPermission                                 Discriminator = 8
	IxResetEphemeralATAPermission                                      Discriminator = 9
	IxCloseEphemeralATA                                                Discriminator = 10
	IxInitializeShuttleEphemeralATA                                    Discriminator = 11
	IxInitializeTransferQueue                                          Discriminator = 12
	IxDelegateShuttleEphemeralATA                                      Discriminator = 13
	IxUndelegateAndCloseShuttleToOwner                                 Discriminator = 14
	IxMergeShuttleIntoEphemeralATA                                     Discriminator = 15
	IxDepositAndQueueTransfer                                          Discriminator = 16
	IxEnsureTransferQueueCrank                                         Discriminator = 17
	IxDelegateTransferQueue                                            Discriminator = 19
	IxSponsoredLamportsTransfer                                        Discriminator = 20
	IxUpdateStealthPool                                                Discriminator = 21
	IxEnsureStealthPoolDelegated                                       Discriminator = 22
	IxInitializeRentPDA                                                Discriminator = 23
	IxSetupAndDelegateShuttleEphemeralATAWithMerge                     Discriminator = 24
	IxDepositAndDelegateShuttleEphemeralATAWithMergeAndPrivateTransfer Discriminator = 25
	IxWithdrawThroughDelegatedShuttleWithMerge                         Discriminator = 26
	IxAllocateTransferQueue                                            Discriminator = 27
	IxExecutePendingTransferQueueRefill                                Discriminator = 28
	IxSchedulePrivateTransfer                                          Discriminator = 29
	IxExecuteScheduledPrivateTransfer                                  Discriminator = 30
	IxPrivateTransferAndCloseStash                                     Discriminator = 31
	IxUndelegationCallback                                             Discriminator = 196
)

// discNames are the upstream instruction names (§6), indexed by
// discriminator. Ix 31 has no upstream name in the reference; ferry labels
// it after what it does.
var discNames = [...]string{
	0:  "InitializeEphemeralAta",
	1:  "InitializeGlobalVault",
	2:  "DepositSplTokens",
	3:  "WithdrawSplTokens",
	4:  "DelegateEphemeralAta",
	5:  "UndelegateEphemeralAta",
	6:  "CreateEphemeralAtaPermission",
	7:  "DelegateEphemeralAtaPermission",
	8:  "UndelegateEphemeralAtaPermission",
	9:  "ResetEphemeralAtaPermission",
	10: "CloseEphemeralAta",
	11: "InitializeShuttleEphemeralAta",
	12: "InitializeTransferQueue",
	13: "DelegateShuttleEphemeralAta",
	14: "UndelegateAndCloseShuttleToOwner",
	15: "MergeShuttleIntoEphemeralAta",
	16: "DepositAndQueueTransfer",
	17: "EnsureTransferQueueCrank",
	18: "Unused18",
	19: "DelegateTransferQueue",
	20: "SponsoredLamportsTransfer",
	21: "UpdateStealthPool",
	22: "EnsureStealthPoolDelegated",
	23: "InitializeRentPda",
	24: "SetupAndDelegateShuttleEphemeralAtaWithMerge",
	25: "DepositAndDelegateShuttleEphemeralAtaWithMergeAndPrivateTransfer",
	26: "WithdrawThroughDelegatedShuttleWithMerge",
	27: "AllocateTransferQueue",
	28: "ExecutePendingTransferQueueRefill",
	29: "SchedulePrivateTransfer",
	30: "ExecuteScheduledPrivateTransfer",
	31: "PrivateTransferAndCloseStash",
}

// Name returns the upstream name of discriminator d, e.g.
// "DepositAndQueueTransfer"; "UndelegationCallback" for 196,
// "Internal(N)" for 201–255 and "Unknown(N)" otherwise.
func Name(d uint8) string {
	switch {
	case int(d) < len(discNames):
		return discNames[d]
	case d == uint8(IxUndelegationCallback):
		return "UndelegationCallback"
	case d >= 201:
		return "Internal(" + strconv.Itoa(int(d)) + ")"
	}
	return "Unknown(" + strconv.Itoa(int(d)) + ")"
}

// String is Name(d).
func (d Discriminator) String() string { return Name(uint8(d)) }

// Instruction errors.
var (
	// ErrInvalidInstruction wraps every failure to decode instruction
	// data or accounts, and invalid builder arguments.
	ErrInvalidInstruction = errors.New("invalid eSPL instruction")
	// ErrUnsupportedInstruction is returned by Decode for discriminators
	// this package names but does not decode (10, 18, 20, 29–31, 196,
	// internal ones).
	ErrUnsupportedInstruction = errors.New("unsupported eSPL instruction")
)

// AccountSpec describes one account position of an instruction: its role
// name and the flags the program expects (§7). Optional accounts may be
// omitted from the end of the list.
type AccountSpec struct {
	Name     string
	Signer   bool
	Writable bool
	Optional bool
}

func r(name string) AccountSpec  { return AccountSpec{Name: name} }
func w(name string) AccountSpec  { return AccountSpec{Name: name, Writable: true} }
func s(name string) AccountSpec  { return AccountSpec{Name: name, Signer: true} }
func sw(name string) AccountSpec { return AccountSpec{Name: name, Signer: true, Writable: true} }
func opt(a AccountSpec) AccountSpec {
	a.Optional = true
	return a
}

// accountSpecs is the account table of §7, indexed by discriminator. It is
// never modified.
var accountSpecs = [...][]AccountSpec{
	IxInitializeEphemeralATA: {w("ephemeralAta"), sw("payer"), r("user"), r("mint"), r("systemProgram")},
	IxInitializeGlobalVault: {w("vault"), sw("payer"), r("mint"), w("vaultEphemeralAta"), w("vaultAta"),
		r("tokenProgram"), r("associatedTokenProgram"), r("systemProgram")},
	IxDepositSplTokens: {w("ephemeralAta"), r("vault"), r("mint"), w("ownerAta"), w("vaultAta"), s("owner"),
		r("tokenProgram")},
	IxWithdrawSplTokens: {s("owner"), w("ephemeralAta"), r("vault"), r("mint"), w("vaultAta"), w("ownerAta"),
		r("tokenProgram")},
	IxDelegateEphemeralATA: {sw("payer"), w("ephemeralAta"), r("ownerProgram"), w("buffer"), w("delegationRecord"),
		w("delegationMetadata"), r("delegationProgram"), r("systemProgram")},
	IxUndelegateEphemeralATA: {s("owner"), w("ownerAta"), r("ephemeralAta"), w("magicContext"), r("magicProgram"),
		opt(w("magicFeeVault"))},
	IxCreateEphemeralATAPermission: {w("ephemeralAta"), w("permission"), sw("payer"), r("systemProgram"),
		r("permissionProgram")},
	IxDelegateEphemeralATAPermission: {sw("payer"), w("ephemeralAta"), r("permissionProgram"), w("permission"),
		r("systemProgram"), w("buffer"), w("delegationRecord"), w("delegationMetadata"), r("delegationProgram"),
		r("validator")},
	IxUndelegateEphemeralATAPermission: {s("owner"), w("ephemeralAta"), w("permission"), r("permissionProgram"),
		r("magicProgram"), w("magicContext")},
	IxResetEphemeralATAPermission: {r("ephemeralAta"), w("permission"), s("payer"), r("permissionProgram")},
	IxInitializeShuttleEphemeralATA: {sw("payer"), w("shuttleMetadata"), w("shuttleEphemeralAta"),
		w("shuttleWalletAta"), r("owner"), r("mint"), r("tokenProgram"), r("associatedTokenProgram"),
		r("systemProgram")},
	IxInitializeTransferQueue: {sw("payer"), w("queue"), w("permission"), r("mint"), r("validator"),
		r("systemProgram"), r("permissionProgram"), w("queueEphemeralAta"), w("queueVaultAta"), r("tokenProgram"),
		r("associatedTokenProgram"), r("esplProgram"), w("buffer"), w("delegationRecord"), w("delegationMetadata"),
		r("delegationProgram")},
	IxDelegateShuttleEphemeralATA: {sw("payer"), r("shuttleMetadata"), w("shuttleEphemeralAta"), r("ownerProgram"),
		w("buffer"), w("delegationRecord"), w("delegationMetadata"), r("delegationProgram"), r("systemProgram")},
	IxUndelegateAndCloseShuttleToOwner: {sw("payer"), w("rentReimbursement"), r("shuttleMetadata"),
		r("shuttleEphemeralAta"), w("shuttleWalletAta"), w("destinationAta"), r("tokenProgram"), w("magicContext"),
		r("magicProgram")},
	IxMergeShuttleIntoEphemeralATA: {s("owner"), w("destinationAta"), r("shuttleMetadata"), w("shuttleWalletAta"),
		r("mint"), r("tokenProgram")},
	IxDepositAndQueueTransfer: {w("queue"), r("vault"), r("mint"), w("source"), w("queueVaultAta"),
		r("destination"), s("owner"), r("tokenProgram"), w("reimbursement"), w("groupReceipt"), w("magicVault"),
		r("magicProgram"), opt(w("groupReceiptPermission")), opt(r("permissionProgram"))},
	IxEnsureTransferQueueCrank: {sw("payer"), w("queue"), w("magicFeeVault"), w("magicContext"), r("magicProgram")},
	IxDelegateTransferQueue: {sw("payer"), w("queue"), r("mint"), r("ownerProgram"), w("buffer"),
		w("delegationRecord"), w("delegationMetadata"), r("delegationProgram"), r("systemProgram")},
	IxUpdateStealthPool: {sw("payer"), w("pool"), s("authority"), r("systemProgram")},
	IxEnsureStealthPoolDelegated: {sw("payer"), w("pool"), w("permission"), r("ownerProgram"), w("buffer"),
		w("delegationRecord"), w("delegationMetadata"), r("delegationProgram"), r("systemProgram"),
		r("permissionProgram"), s("authority")},
	IxInitializeRentPDA: {sw("payer"), w("rentPda"), r("systemProgram")},
	IxSetupAndDelegateShuttleEphemeralATAWithMerge: {sw("payer"), w("rentPda"), w("shuttleMetadata"),
		w("shuttleEphemeralAta"), w("shuttleWalletAta"), s("owner"), r("ownerProgram"), w("buffer"),
		w("delegationRecord"), w("delegationMetadata"), r("delegationProgram"), r("associatedTokenProgram"),
		r("systemProgram"), w("destination"), r("mint"), r("tokenProgram"), r("vault"), w("source"), w("vaultAta")},
	IxDepositAndDelegateShuttleEphemeralATAWithMergeAndPrivateTransfer: {sw("payer"), w("rentPda"),
		w("shuttleMetadata"), w("shuttleEphemeralAta"), w("shuttleWalletAta"), s("owner"), r("ownerProgram"),
		w("buffer"), w("delegationRecord"), w("delegationMetadata"), r("delegationProgram"),
		r("associatedTokenProgram"), r("systemProgram"), r("mint"), r("tokenProgram"), r("vault"), w("source"),
		w("vaultAta"), w("queue")},
	IxWithdrawThroughDelegatedShuttleWithMerge: {sw("payer"), w("rentPda"), w("shuttleMetadata"),
		w("shuttleEphemeralAta"), w("shuttleWalletAta"), s("owner"), r("ownerProgram"), w("buffer"),
		w("delegationRecord"), w("delegationMetadata"), r("delegationProgram"), r("associatedTokenProgram"),
		r("systemProgram"), w("ownerAta"), r("mint"), r("tokenProgram")},
	IxAllocateTransferQueue: {w("queue"), r("systemProgram")},
	IxExecutePendingTransferQueueRefill: {w("refillState"), w("queue"), w("rentPda"), w("lamportsPda"),
		r("ownerProgram"), w("buffer"), w("delegationRecord"), w("delegationMetadata"), r("delegationProgram"),
		r("systemProgram"), r("queueDelegationRecord")},
}

// AccountSpecs returns the account layout of instruction d as §7 gives it,
// or nil when this package does not encode d. The slice is a copy.
func AccountSpecs(d Discriminator) []AccountSpec {
	if int(d) >= len(accountSpecs) {
		return nil
	}
	return slices.Clone(accountSpecs[d])
}

// Account is one account of a decoded instruction: its role, its key and
// the flags the program expects for that role.
type Account struct {
	Name     string
	Key      solana.PublicKey
	Signer   bool
	Writable bool
}

// Field is one named argument of a decoded instruction, formatted for
// display (keys in base58, integers in decimal).
type Field struct {
	Name  string
	Value string
}

// Decoded is a decoded eSPL instruction. The concrete types are the *Ix
// structs of this package (InitEphemeralATAIx, …, PrivateTransferIx); use a
// type switch to reach the typed fields.
type Decoded interface {
	// Discriminator is the instruction's first data byte.
	Discriminator() Discriminator
	// Instruction encodes the value back into an instruction.
	Instruction() txwire.Instruction
	// Fields lists the data arguments in layout order.
	Fields() []Field
	// Accounts lists the accounts by role, in instruction order.
	Accounts() []Account
}

// ixType is what every *Ix struct implements.
type ixType interface {
	Decoded
	refs() []*solana.PublicKey // account fields in instruction order
}

// build assembles an instruction from account references and data, taking
// the flags from the spec table.
func build(d Discriminator, refs []*solana.PublicKey, data []byte) txwire.Instruction {
	spec := accountSpecs[d]
	metas := make([]txwire.AccountMeta, len(refs))
	for i, p := range refs {
		metas[i] = txwire.AccountMeta{PublicKey: *p, IsSigner: spec[i].Signer, IsWritable: spec[i].Writable}
	}
	return txwire.Instruction{ProgramID: ProgramID, Accounts: metas, Data: data}
}

func accountsOf(ix ixType) []Account {
	spec := accountSpecs[ix.Discriminator()]
	refs := ix.refs()
	out := make([]Account, len(refs))
	for i, p := range refs {
		out[i] = Account{Name: spec[i].Name, Key: *p, Signer: spec[i].Signer, Writable: spec[i].Writable}
	}
	return out
}

// assign copies keys into the account fields; extra keys are ignored, as
// the program ignores trailing accounts.
func assign(d Discriminator, refs []*solana.PublicKey, keys []solana.PublicKey) error {
	if len(keys) < len(refs) {
		return fmt.Errorf("%w: %s needs %d accounts, got %d", ErrInvalidInstruction, d, len(refs), len(keys))
	}
	for i, p := range refs {
		*p = keys[i]
	}
	return nil
}

// requiredAccounts is the number of non-optional accounts of d.
func requiredAccounts(d Discriminator) int {
	n := 0
	for _, a := range accountSpecs[d] {
		if !a.Optional {
			n++
		}
	}
	return n
}

// Summary formats d for humans, e.g.
// "ESPL 24 SetupAndDelegateShuttleEphemeralAtaWithMerge: shuttleId=7, amount=1000000, validator=MAS1…".
func Summary(d Decoded) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ESPL %d %s", uint8(d.Discriminator()), d.Discriminator())
	for i, f := range d.Fields() {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(f.Name)
		b.WriteByte('=')
		b.WriteString(f.Value)
	}
	return b.String()
}

// DecodeInstruction decodes an eSPL instruction; it fails unless
// ix.ProgramID is ProgramID.
func DecodeInstruction(ix txwire.Instruction) (Decoded, error) {
	if ix.ProgramID != ProgramID {
		return nil, fmt.Errorf("decode eSPL instruction: program %s is not %s: %w", ix.ProgramID, ProgramID, ErrInvalidInstruction)
	}
	keys := make([]solana.PublicKey, len(ix.Accounts))
	for i, m := range ix.Accounts {
		keys[i] = m.PublicKey
	}
	return Decode(ix.Data, keys)
}

// Decode decodes eSPL instruction data and its account keys (in
// instruction order) into one of the *Ix types. Data layouts are checked
// strictly (every accepted length of §7 / §9.1, nothing else); accounts
// beyond the known ones are ignored, as the program ignores them. It does
// not apply the program's semantic checks (see the Validate methods).
func Decode(data []byte, keys []solana.PublicKey) (Decoded, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("decode eSPL instruction: %w: empty data", ErrInvalidInstruction)
	}
	d := Discriminator(data[0])
	var (
		ix  ixType
		err error
	)
	args := data[1:]
	switch d {
	case IxInitializeEphemeralATA:
		ix, err = noArgs(args, &InitEphemeralATAIx{})
	case IxInitializeGlobalVault:
		ix, err = noArgs(args, &InitGlobalVaultIx{})
	case IxDepositSplTokens:
		v := &DepositSPLIx{}
		v.Amount, err = u64Arg(args)
		ix = v
	case IxWithdrawSplTokens:
		v := &WithdrawSPLIx{}
		v.Amount, err = u64Arg(args)
		ix = v
	case IxDelegateEphemeralATA:
		v := &DelegateEphemeralATAIx{}
		v.Validator, err = optKeyArg(args)
		ix = v
	case IxUndelegateEphemeralATA:
		v := &UndelegateEphemeralATAIx{HasMagicFeeVault: len(keys) > requiredAccounts(d)}
		v.Validator, err = optKeyArg(args)
		ix = v
	case IxCreateEphemeralATAPermission:
		v := &CreateEphemeralATAPermissionIx{}
		v.Flags, err = u8Arg(args)
		ix = v
	case IxDelegateEphemeralATAPermission:
		ix, err = noArgs(args, &DelegateEphemeralATAPermissionIx{})
	case IxUndelegateEphemeralATAPermission:
		ix, err = noArgs(args, &UndelegateEphemeralATAPermissionIx{})
	case IxResetEphemeralATAPermission:
		v := &ResetEphemeralATAPermissionIx{}
		v.Flags, err = u8Arg(args)
		ix = v
	case IxInitializeShuttleEphemeralATA:
		v := &InitShuttleIx{}
		v.ShuttleID, err = u32Arg(args)
		ix = v
	case IxInitializeTransferQueue:
		v := &InitTransferQueueIx{}
		v.RequestedItems, err = optU32Arg(args)
		ix = v
	case IxDelegateShuttleEphemeralATA:
		v := &DelegateShuttleIx{}
		v.Validator, err = optKeyArg(args)
		ix = v
	case IxUndelegateAndCloseShuttleToOwner:
		v := &UndelegateAndCloseShuttleIx{}
		v.EscrowIndex, err = optU8Arg(args)
		ix = v
	case IxMergeShuttleIntoEphemeralATA:
		ix, err = noArgs(args, &MergeShuttleIx{})
	case IxDepositAndQueueTransfer:
		v := &DepositAndQueueTransferIx{HasGroupReceiptPermission: len(keys) > requiredAccounts(d)+1}
		err = v.decodeData(args)
		ix = v
	case IxEnsureTransferQueueCrank:
		ix, err = noArgs(args, &EnsureQueueCrankIx{})
	case IxDelegateTransferQueue:
		ix, err = noArgs(args, &DelegateTransferQueueIx{})
	case IxUpdateStealthPool:
		v := &UpdateStealthPoolIx{}
		err = v.decodeData(args)
		ix = v
	case IxEnsureStealthPoolDelegated:
		v := &EnsureStealthPoolDelegatedIx{}
		err = v.decodeData(args)
		ix = v
	case IxInitializeRentPDA:
		ix, err = noArgs(args, &InitRentPDAIx{})
	case IxSetupAndDelegateShuttleEphemeralATAWithMerge:
		v := &DepositShuttleIx{}
		v.ShuttleID, v.Amount, v.Validator, err = shuttleArgs(args)
		ix = v
	case IxDepositAndDelegateShuttleEphemeralATAWithMergeAndPrivateTransfer:
		v := &PrivateTransferIx{}
		err = v.decodeData(args)
		ix = v
	case IxWithdrawThroughDelegatedShuttleWithMerge:
		v := &WithdrawShuttleIx{}
		v.ShuttleID, v.Amount, v.Validator, err = shuttleArgs(args)
		ix = v
	case IxAllocateTransferQueue:
		ix, err = noArgs(args, &AllocateTransferQueueIx{})
	case IxExecutePendingTransferQueueRefill:
		ix, err = noArgs(args, &ExecuteQueueRefillIx{})
	default:
		return nil, fmt.Errorf("decode eSPL instruction %d (%s): %w", uint8(d), d, ErrUnsupportedInstruction)
	}
	if err != nil {
		return nil, fmt.Errorf("decode ix %d (%s): %w", uint8(d), d, err)
	}
	if err := assign(d, ix.refs(), keys); err != nil {
		return nil, fmt.Errorf("decode ix %d (%s): %w", uint8(d), d, err)
	}
	return derefIx(ix), nil
}

// derefIx returns the value behind the pointer so that callers type-switch
// on value types.
func derefIx(ix ixType) Decoded {
	switch v := ix.(type) {
	case *InitEphemeralATAIx:
		return *v
	case *InitGlobalVaultIx:
		return *v
	case *DepositSPLIx:
		return *v
	case *WithdrawSPLIx:
		return *v
	case *DelegateEphemeralATAIx:
		return *v
	case *UndelegateEphemeralATAIx:
		return *v
	case *CreateEphemeralATAPermissionIx:
		return *v
	case *DelegateEphemeralATAPermissionIx:
		return *v
	case *UndelegateEphemeralATAPermissionIx:
		return *v
	case *ResetEphemeralATAPermissionIx:
		return *v
	case *InitShuttleIx:
		return *v
	case *InitTransferQueueIx:
		return *v
	case *DelegateShuttleIx:
		return *v
	case *UndelegateAndCloseShuttleIx:
		return *v
	case *MergeShuttleIx:
		return *v
	case *DepositAndQueueTransferIx:
		return *v
	case *EnsureQueueCrankIx:
		return *v
	case *DelegateTransferQueueIx:
		return *v
	case *UpdateStealthPoolIx:
		return *v
	case *EnsureStealthPoolDelegatedIx:
		return *v
	case *InitRentPDAIx:
		return *v
	case *DepositShuttleIx:
		return *v
	case *PrivateTransferIx:
		return *v
	case *WithdrawShuttleIx:
		return *v
	case *AllocateTransferQueueIx:
		return *v
	case *ExecuteQueueRefillIx:
		return *v
	}
	panic(fmt.Sprintf("espl: unhandled instruction type %T", ix))
}

// Data argument decoding helpers. Each checks the exact accepted lengths.

func argLenErr(got int, want string) error {
	return fmt.Errorf("%w: %d argument bytes, want %s", ErrInvalidInstruction, got, want)
}

func noArgs(args []byte, ix ixType) (ixType, error) {
	if len(args) != 0 {
		return nil, argLenErr(len(args), "0")
	}
	return ix, nil
}

func u8Arg(args []byte) (uint8, error) {
	if len(args) != 1 {
		return 0, argLenErr(len(args), "1")
	}
	return args[0], nil
}

func optU8Arg(args []byte) (*uint8, error) {
	switch len(args) {
	case 0:
		return nil, nil
	case 1:
		v := args[0]
		return &v, nil
	}
	return nil, argLenErr(len(args), "0 or 1")
}

func u32Arg(args []byte) (uint32, error) {
	if len(args) != 4 {
		return 0, argLenErr(len(args), "4")
	}
	return binary.LittleEndian.Uint32(args), nil
}

func optU32Arg(args []byte) (*uint32, error) {
	switch len(args) {
	case 0:
		return nil, nil
	case 4:
		v := binary.LittleEndian.Uint32(args)
		return &v, nil
	}
	return nil, argLenErr(len(args), "0 or 4")
}

func u64Arg(args []byte) (uint64, error) {
	if len(args) != 8 {
		return 0, argLenErr(len(args), "8")
	}
	return binary.LittleEndian.Uint64(args), nil
}

func optKeyArg(args []byte) (*solana.PublicKey, error) {
	switch len(args) {
	case 0:
		return nil, nil
	case 32:
		k := solana.PublicKeyFromBytes(args)
		return &k, nil
	}
	return nil, argLenErr(len(args), "0 or 32")
}

// shuttleArgs decodes DepositAndDelegateShuttleArgs (ix 24 and 26):
// shuttleId u32 ‖ amount u64 ‖ [validator 32] (12 or 44 bytes).
func shuttleArgs(args []byte) (uint32, uint64, *solana.PublicKey, error) {
	if len(args) != 12 && len(args) != 44 {
		return 0, 0, nil, argLenErr(len(args), "12 or 44")
	}
	v, _ := optKeyArg(args[12:])
	return binary.LittleEndian.Uint32(args), binary.LittleEndian.Uint64(args[4:]), v, nil
}

// Data encoding helpers.

func data1(d Discriminator) []byte { return []byte{byte(d)} }

func appendU32(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }
func appendU64(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }

func appendOptKey(b []byte, k *solana.PublicKey) []byte {
	if k == nil {
		return b
	}
	return append(b, k[:]...)
}

func shuttleData(d Discriminator, id uint32, amount uint64, validator *solana.PublicKey) []byte {
	b := make([]byte, 1, 45)
	b[0] = byte(d)
	b = appendU32(b, id)
	b = appendU64(b, amount)
	return appendOptKey(b, validator)
}

// Field formatting helpers.

func fKey(name string, k solana.PublicKey) Field { return Field{name, k.String()} }
func fU64(name string, v uint64) Field           { return Field{name, strconv.FormatUint(v, 10)} }
func fBool(name string, v bool) Field            { return Field{name, strconv.FormatBool(v)} }
func fOptKey(out []Field, name string, k *solana.PublicKey) []Field {
	if k == nil {
		return out
	}
	return append(out, fKey(name, *k))
}

// Defaults shared by the builders.

func orKey(k, def solana.PublicKey) solana.PublicKey {
	if k.IsZero() {
		return def
	}
	return k
}

func tokenProgramOr(tp solana.PublicKey) solana.PublicKey { return orKey(tp, spl.TokenProgramID) }

func optKey(k solana.PublicKey) *solana.PublicKey {
	if k.IsZero() {
		return nil
	}
	return &k
}
