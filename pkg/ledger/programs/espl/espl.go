// Package espl is ferry's native implementation of MagicBlock's Ephemeral
// SPL Token program (SPLxh1LVZzEkX99H6rqYizhytLWPZVV296zyYDPagv2) for the
// embedded base ledger and ephemeral rollup, following espl-program.md and
// docs/localnet.md. Byte layouts, PDAs and instruction decoders come from
// pkg/espl; this package executes them.
//
// One Registration serves either layer (Config.Ephemeral):
//
//   - base: 0 InitializeEphemeralAta, 1 InitializeGlobalVault, 2/3 the
//     legacy deposit and withdraw, 4 DelegateEphemeralAta, 6
//     CreateEphemeralAtaPermission, 11 InitializeShuttleEphemeralAta, 12
//     InitializeTransferQueue, 13 DelegateShuttleEphemeralAta, 19
//     DelegateTransferQueue, 22 EnsureStealthPoolDelegated, 23
//     InitializeRentPda, 24/25/26 the shuttle deposit, private transfer
//     and withdraw, 196 the delegation program's undelegation callback,
//     and the validator's internal instructions 201 CloseShuttle and 202
//     ExecuteReadyQueuedTransfer;
//   - ephemeral: 5 UndelegateEphemeralAta, 14
//     UndelegateAndCloseShuttleToOwner, 15 MergeShuttleIntoEphemeralAta,
//     16 DepositAndQueueTransfer, 17 EnsureTransferQueueCrank, 21
//     UpdateStealthPool and the validator's internal 210
//     CrankReadyTransfers.
//
// Instructions of the other layer fail with ErrWrongLayer. Every
// instruction checks its accounts (signers, writability, owners, PDA
// derivations) and moves lamports and tokens only through CPIs into the
// System, Token and ATA programs, delegation through the delegation
// program, and ephemeral commits through the Magic program.
package espl

import (
	"github.com/gagliardetto/solana-go"

	es "github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/delegation"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/internal/progutil"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// ProgramID is the eSPL program id.
var ProgramID = es.ProgramID

// BaseCost is the compute units one instruction charges besides CPIs.
const BaseCost = 6_000

// Internal instruction discriminators (the 201–255 range, §2). They are
// ferry-local: the validator sends them, see the builders in internal.go.
const (
	IxCloseShuttle                es.Discriminator = 201
	IxExecuteReadyQueuedTransfer  es.Discriminator = 202
	IxCrankReadyTransfers         es.Discriminator = 210
	maxCrankEntries                                = 8
	queueFlags                                     = es.QueuedFlagCreateIdempotentATA
	queueGroupIDStart                              = 1
	undelegationCallbackFirstByte                  = 196
)

// Config configures the program.
type Config struct {
	// Validator is the local validator's identity: the only key allowed to
	// sign the internal instructions.
	Validator solana.PublicKey
	// Ephemeral selects the ephemeral-rollup instruction set.
	Ephemeral bool
}

// Registration returns the program's registration for one layer.
func Registration(cfg Config) *runtime.Registration {
	return &runtime.Registration{ID: ProgramID, Name: "Ephemeral SPL Token", Program: &program{cfg: cfg}, BaseCost: BaseCost}
}

// Errors. The codes are ferry-local (the reference does not list the
// program's); logs say what failed.
var (
	ErrWrongLayer          = runtime.Custom(100) // instruction runs on the other layer
	ErrInvalidMint         = runtime.Custom(101) // not an initialized mint of the token program
	ErrInvalidEATA         = runtime.Custom(102) // eATA missing, malformed or not the owner's
	ErrEATADelegated       = runtime.Custom(103) // the eATA is delegated (legacy paths need it undelegated)
	ErrInsufficientBalance = runtime.Custom(104) // eATA balance below the amount
	ErrInvalidVault        = runtime.Custom(105) // global vault or vault ATA mismatch
	ErrInvalidQueue        = runtime.Custom(106) // transfer queue missing, malformed or not delegated
	ErrInvalidShuttle      = runtime.Custom(107) // shuttle accounts mismatch
	ErrInvalidArguments    = runtime.Custom(108) // amount, split, delays or group id rejected
	ErrNotValidator        = runtime.Custom(109) // internal instruction not signed by the validator
	ErrInvalidStealthPool  = runtime.Custom(110) // stealth pool mismatch or bad contents
	ErrNothingReady        = runtime.Custom(111) // the crank found fewer ready entries than asked
	ErrStillDelegated      = runtime.Custom(112) // the account has not been undelegated yet
	ErrAmountOverflow      = runtime.Custom(113)
	ErrInvalidTokenAccount = runtime.Custom(114) // token account of another mint or owner
)

type program struct{ cfg Config }

// handler runs one instruction with its decoded form (nil for the
// internal and callback instructions, which decode themselves).
type handler func(p *program, ctx *runtime.Context, ix es.Decoded) error

var baseHandlers = map[es.Discriminator]handler{
	es.IxInitializeEphemeralATA:                                           (*program).initEATA,
	es.IxInitializeGlobalVault:                                            (*program).initVault,
	es.IxDepositSplTokens:                                                 (*program).depositSPL,
	es.IxWithdrawSplTokens:                                                (*program).withdrawSPL,
	es.IxDelegateEphemeralATA:                                             (*program).delegateEATA,
	es.IxCreateEphemeralATAPermission:                                     (*program).createPermission,
	es.IxInitializeShuttleEphemeralATA:                                    (*program).initShuttle,
	es.IxInitializeTransferQueue:                                          (*program).initQueue,
	es.IxDelegateShuttleEphemeralATA:                                      (*program).delegateShuttle,
	es.IxDelegateTransferQueue:                                            (*program).delegateQueue,
	es.IxEnsureStealthPoolDelegated:                                       (*program).ensurePool,
	es.IxInitializeRentPDA:                                                (*program).initRent,
	es.IxSetupAndDelegateShuttleEphemeralATAWithMerge:                     (*program).depositShuttle,
	es.IxDepositAndDelegateShuttleEphemeralATAWithMergeAndPrivateTransfer: (*program).privateTransfer,
	es.IxWithdrawThroughDelegatedShuttleWithMerge:                         (*program).withdrawShuttle,
	IxCloseShuttle:                                                        (*program).closeShuttle,
	IxExecuteReadyQueuedTransfer:                                          (*program).executeReady,
}

var ephemeralHandlers = map[es.Discriminator]handler{
	es.IxUndelegateEphemeralATA:           (*program).undelegateEATA,
	es.IxUndelegateAndCloseShuttleToOwner: (*program).undelegateShuttle,
	es.IxMergeShuttleIntoEphemeralATA:     (*program).mergeShuttle,
	es.IxDepositAndQueueTransfer:          (*program).depositAndQueue,
	es.IxEnsureTransferQueueCrank:         (*program).ensureCrank,
	es.IxUpdateStealthPool:                (*program).updatePool,
	IxCrankReadyTransfers:                 (*program).crank,
}

func (p *program) Execute(ctx *runtime.Context) error {
	if err := ctx.Consume(BaseCost); err != nil {
		return err
	}
	data := ctx.Data()
	if len(data) == 0 {
		ctx.Log("empty instruction data")
		return runtime.ErrInvalidInstructionData
	}
	d := es.Discriminator(data[0])
	if d == undelegationCallbackFirstByte {
		if p.cfg.Ephemeral {
			return wrongLayer(ctx, d)
		}
		ctx.Log("Instruction: UndelegationCallback")
		return delegation.TakeBack(ctx)
	}
	mine, other := baseHandlers, ephemeralHandlers
	if p.cfg.Ephemeral {
		mine, other = ephemeralHandlers, baseHandlers
	}
	h, ok := mine[d]
	if !ok {
		if _, there := other[d]; there {
			return wrongLayer(ctx, d)
		}
		ctx.Logf("unsupported instruction %d (%s)", uint8(d), es.Name(uint8(d)))
		return runtime.ErrInvalidInstructionData
	}
	ctx.Logf("Instruction: %s", name(d))
	var decoded es.Decoded
	if d < 196 {
		keys := make([]solana.PublicKey, ctx.NumAccounts())
		for i := range keys {
			a, _ := ctx.Account(i)
			keys[i] = a.Key
		}
		var err error
		if decoded, err = es.Decode(data, keys); err != nil {
			ctx.Log(err.Error())
			if ctx.NumAccounts() < len(es.AccountSpecs(d)) {
				return runtime.ErrNotEnoughAccountKeys
			}
			return runtime.ErrInvalidInstructionData
		}
	}
	return h(p, ctx, decoded)
}

func name(d es.Discriminator) string {
	switch d {
	case IxCloseShuttle:
		return "CloseShuttle"
	case IxExecuteReadyQueuedTransfer:
		return "ExecuteReadyQueuedTransfer"
	case IxCrankReadyTransfers:
		return "CrankReadyTransfers"
	}
	return d.String()
}

func wrongLayer(ctx *runtime.Context, d es.Discriminator) error {
	ctx.Logf("instruction %d (%s) does not run on this layer", uint8(d), name(d))
	return ErrWrongLayer
}

// accounts returns the instruction's first n accounts.
func accounts(ctx *runtime.Context, n int) ([]*runtime.AccountRef, error) { return ctx.Accounts(n) }

// mintInfo is a checked mint and its token program.
type mintInfo struct {
	key, program solana.PublicKey
	decimals     uint8
}

// loadMint checks that mint is an initialized mint owned by the token
// program account tp.
func loadMint(ctx *runtime.Context, mint, tp *runtime.AccountRef) (mintInfo, error) {
	if !spl.IsTokenProgram(tp.Key) {
		ctx.Logf("%s is not a token program", tp.Key)
		return mintInfo{}, runtime.ErrIncorrectProgramID
	}
	if mint.Owner != tp.Key {
		ctx.Logf("mint %s is owned by %s, not %s", mint.Key, mint.Owner, tp.Key)
		return mintInfo{}, ErrInvalidMint
	}
	m, err := spl.DecodeMint(mint.Data)
	if err != nil || !m.IsInitialized {
		ctx.Logf("%s is not an initialized mint", mint.Key)
		return mintInfo{}, ErrInvalidMint
	}
	return mintInfo{key: mint.Key, program: tp.Key, decimals: m.Decimals}, nil
}

// tokenAccount decodes an initialized token account of mint mi.
func tokenAccount(ctx *runtime.Context, a *runtime.AccountRef, mi mintInfo, role string) (spl.TokenAccount, error) {
	if a.Owner != mi.program {
		ctx.Logf("%s %s is not a token account of %s", role, a.Key, mi.program)
		return spl.TokenAccount{}, ErrInvalidTokenAccount
	}
	ta, err := spl.DecodeTokenAccount(a.Data)
	if err != nil || ta.State == spl.StateUninitialized || ta.Mint != mi.key {
		ctx.Logf("%s %s is not an initialized token account of mint %s", role, a.Key, mi.key)
		return spl.TokenAccount{}, ErrInvalidTokenAccount
	}
	return ta, nil
}

// transfer moves tokens with TransferChecked, signed by authority (a
// signer, or a PDA of this program when seeds are given).
func transfer(ctx *runtime.Context, mi mintInfo, from, to, authority solana.PublicKey, amount uint64, seeds ...[][]byte) error {
	if amount == 0 {
		return nil
	}
	return ctx.Invoke(spl.TokenTransferChecked(mi.program, from, mi.key, to, authority, amount, mi.decimals), seeds...)
}

// eataAt checks that a is the eATA [owner, mint] and decodes it. It
// accepts an eATA owned by eSPL or, if delegated is set, by DLP.
func eataAt(ctx *runtime.Context, a *runtime.AccountRef, delegatedOK bool) (es.EphemeralATA, error) {
	if a.Owner != ProgramID && !(delegatedOK && a.Owner == es.DelegationProgramID) {
		ctx.Logf("eATA %s is owned by %s", a.Key, a.Owner)
		return es.EphemeralATA{}, ErrInvalidEATA
	}
	e, err := es.DecodeEphemeralATA(a.Data)
	if err != nil {
		ctx.Log(err.Error())
		return e, ErrInvalidEATA
	}
	want, bump, err := progutil.Find(ctx, ProgramID, e.Owner[:], e.Mint[:])
	if err != nil {
		return e, err
	}
	if want != a.Key {
		ctx.Logf("eATA %s does not derive from its owner %s and mint %s", a.Key, e.Owner, e.Mint)
		return e, ErrInvalidEATA
	}
	e.Bump = bump
	return e, nil
}

// vaultAt checks the global vault [mint] and its ATA.
func vaultAt(ctx *runtime.Context, vault, vaultATA *runtime.AccountRef, mi mintInfo, needVault bool) (uint8, error) {
	key, bump, err := progutil.Find(ctx, ProgramID, mi.key[:])
	if err != nil {
		return 0, err
	}
	if vault.Key != key || (needVault && vault.Owner != ProgramID) {
		ctx.Logf("global vault %s is not the initialized vault %s of mint %s", vault.Key, key, mi.key)
		return 0, ErrInvalidVault
	}
	if vaultATA != nil && vaultATA.Key != spl.AssociatedTokenAddress(key, mi.key, mi.program) {
		ctx.Logf("vault ATA %s does not belong to vault %s", vaultATA.Key, key)
		return 0, ErrInvalidVault
	}
	return bump, nil
}

func vaultSeeds(mint solana.PublicKey, bump uint8) [][]byte { return [][]byte{mint[:], {bump}} }

func checkProgram(ctx *runtime.Context, a *runtime.AccountRef, want solana.PublicKey, role string) error {
	return progutil.ProgramKey(ctx, a, want, role)
}

func u32le(v uint32) []byte { return []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)} }
