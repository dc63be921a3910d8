package token

import (
	"encoding/binary"
	"unicode/utf8"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// t22 is one execution of Token-2022. It follows the deployed program:
// every account it reads as token state is checked to be owned by
// Token-2022 before anything else is checked about it (IncorrectProgramId),
// states are unpacked with their TLV extensions, cleared options are
// written as all zeros, and the extensions change what the core
// instructions do (transfer fees, required memos, CPI guard, permanent
// delegate, non-transferable and pausable mints, default account state).
type t22 struct {
	*Program
	ctx *runtime.Context
}

// Token-2022 instruction discriminators beyond the shared 0..24.
const (
	op22InitializeMintCloseAuthority  = 25
	op22TransferFeeExtension          = 26
	op22ConfidentialTransfer          = 27
	op22DefaultAccountStateExtension  = 28
	op22Reallocate                    = 29
	op22MemoTransferExtension         = 30
	op22CreateNativeMint              = 31
	op22InitializeNonTransferableMint = 32
	op22InterestBearingMintExtension  = 33
	op22CpiGuardExtension             = 34
	op22InitializePermanentDelegate   = 35
	op22TransferHookExtension         = 36
	op22ConfidentialTransferFee       = 37
	op22WithdrawExcessLamports        = 38
	op22MetadataPointerExtension      = 39
	op22GroupPointerExtension         = 40
	op22GroupMemberPointerExtension   = 41
	op22ConfidentialMintBurn          = 42
	op22ScaledUiAmountExtension       = 43
	op22PausableExtension             = 44
	op22UnwrapLamports                = 45
	op22PermissionedBurnExtension     = 46
	op22Batch                         = 255
)

// Token-2022 authority types (AuthorityType) beyond the core four.
const (
	authTransferFeeConfig = 4 + iota
	authWithheldWithdraw
	authCloseMint
	authInterestRate
	authPermanentDelegate
	authConfidentialTransferMint
	authTransferHookProgramID
	authConfidentialTransferFeeConfig
	authMetadataPointer
	authGroupPointer
	authGroupMemberPointer
	authScaledUiAmount
	authPause
	authPermissionedBurn
)

func (p *t22) account(i int) (*runtime.AccountRef, error)    { return p.ctx.Account(i) }
func (p *t22) accounts(n int) ([]*runtime.AccountRef, error) { return p.ctx.Accounts(n) }
func (p *t22) inCPI() bool                                   { return p.ctx.StackHeight() > 1 }
func (p *t22) rest(i int) []*runtime.AccountRef              { return (&ptoken{ctx: p.ctx}).rest(i) }
func (p *t22) log(msg string)                                { p.ctx.Log(msg) }
func (p *t22) own(ref *runtime.AccountRef) error             { return ownedBy(ref, p.id) }
func ownedBy(ref *runtime.AccountRef, id solana.PublicKey) error {
	if ref.Owner != id {
		return runtime.ErrIncorrectProgramID
	}
	return nil
}

// PodCOption<Pubkey> of Token-2022: Some only for the exact tag 1,0,0,0.
func tOpt(b []byte, off int) (solana.PublicKey, bool) {
	if b[off] != 1 || b[off+1] != 0 || b[off+2] != 0 || b[off+3] != 0 {
		return solana.PublicKey{}, false
	}
	return keyAt(b, off+4), true
}

// tOptUnwrapOr is PodCOption::unwrap_or: any non-zero tag counts as set.
func tOptUnwrapOr(b []byte, off int, def solana.PublicKey) solana.PublicKey {
	if b[off] == 0 && b[off+1] == 0 && b[off+2] == 0 && b[off+3] == 0 {
		return def
	}
	return keyAt(b, off+4)
}

// tSetOpt writes a PodCOption<Pubkey>; nil writes none: 36 zero bytes.
func tSetOpt(b []byte, off int, k *solana.PublicKey) {
	clear(b[off : off+36])
	if k != nil {
		b[off] = 1
		putKey(b, off+4, *k)
	}
}

func tIsNative(a []byte) bool {
	return a[accIsNative] == 1 && a[accIsNative+1] == 0 && a[accIsNative+2] == 0 && a[accIsNative+3] == 0
}

// nonZero reads an OptionalNonZeroPubkey / MaybeNull<Pubkey>.
func nonZero(b []byte) (solana.PublicKey, bool) {
	k := solana.PublicKeyFromBytes(b[:32])
	return k, !k.IsZero()
}

// validateOwner is Token-2022's validate_owner: like p-token's, but a
// multisig of either token program is read with is_initialized any
// non-zero byte.
func (p *t22) validateOwner(expected solana.PublicKey, auth *runtime.AccountRef, signers []*runtime.AccountRef) error {
	if expected != auth.Key {
		return ErrOwnerMismatch
	}
	if len(auth.Data) == spl.MultisigSize && spl.IsTokenProgram(auth.Owner) {
		if auth.Data[msInit] == 0 {
			return runtime.ErrUninitializedAccount
		}
		return checkMultisig(auth.Data, signers, false)
	}
	if !auth.IsSigner {
		return runtime.ErrMissingRequiredSignature
	}
	return nil
}

// decodeExact is decode_instruction_data: the instruction is exactly the
// discriminator plus n bytes.
func decodeExact(data []byte, n int) ([]byte, error) {
	if len(data) != n+1 {
		return nil, runtime.ErrInvalidInstructionData
	}
	return data[1:], nil
}

// decodeWithOption is decode_instruction_data_with_coption_pubkey: n
// fixed bytes, then a 1-byte-tagged optional key (trailing bytes ignored).
func decodeWithOption(data []byte, n int) ([]byte, *solana.PublicKey, error) {
	if len(data) < n+1 {
		return nil, nil, runtime.ErrInvalidInstructionData
	}
	rest := data[n+1:]
	switch {
	case len(rest) > 0 && rest[0] == 0:
		return data[1 : n+1], nil, nil
	case len(rest) > 0 && rest[0] == 1 && len(rest) >= 33:
		k := solana.PublicKeyFromBytes(rest[1:33])
		return data[1 : n+1], &k, nil
	}
	return nil, nil, runtime.ErrInvalidInstructionData
}

// parseExtTypes reads the u16 extension types of GetAccountDataSize and
// Reallocate; a short or unknown type is InvalidAccountData.
func parseExtTypes(d []byte) ([]uint16, error) {
	var out []uint16
	for i := 0; i < len(d); i += 2 {
		if i+2 > len(d) {
			return nil, runtime.ErrInvalidAccountData
		}
		t := binary.LittleEndian.Uint16(d[i:])
		if !knownExt(t) {
			return nil, runtime.ErrInvalidAccountData
		}
		out = append(out, t)
	}
	return out, nil
}

// Token metadata and token group interface discriminators: the first 8
// bytes of sha256 of their namespaced names.
var (
	discMetaInitialize      = [8]byte{210, 225, 30, 162, 88, 184, 77, 141}
	discMetaUpdateField     = [8]byte{221, 233, 49, 45, 181, 202, 220, 200}
	discMetaRemoveKey       = [8]byte{234, 18, 32, 56, 89, 141, 37, 181}
	discMetaUpdateAuthority = [8]byte{215, 228, 166, 228, 84, 100, 86, 123}
	discMetaEmit            = [8]byte{250, 166, 180, 250, 13, 12, 184, 70}
	discGroupInitialize     = [8]byte{121, 113, 108, 39, 54, 51, 0, 4}
	discGroupUpdateMaxSize  = [8]byte{108, 37, 171, 143, 248, 30, 18, 110}
	discGroupUpdateAuth     = [8]byte{161, 105, 88, 1, 237, 221, 216, 203}
	discGroupInitMember     = [8]byte{152, 32, 222, 176, 223, 237, 116, 134}
)

// process runs one Token-2022 instruction.
func (p *t22) process(data []byte) error {
	if len(data) > 0 {
		op := data[0]
		if op <= op22PermissionedBurnExtension {
			return p.dispatch(op, data)
		}
		if op == op22Batch {
			// Batch is in the interface but refused by the deployed program.
			return ErrInvalidInstruction
		}
	}
	if len(data) >= 8 {
		var d [8]byte
		copy(d[:], data)
		switch d {
		case discMetaInitialize, discMetaUpdateField, discMetaRemoveKey, discMetaUpdateAuthority, discMetaEmit:
			return p.tokenMetadata(d, data[8:])
		case discGroupInitialize, discGroupUpdateMaxSize, discGroupUpdateAuth, discGroupInitMember:
			return p.tokenGroup(d, data[8:])
		}
	}
	return ErrInvalidInstruction
}

func (p *t22) dispatch(op byte, data []byte) error {
	if op <= byte(spl.TokenUiAmountToAmountOp) || op == op22InitializeMintCloseAuthority || op == op22Reallocate ||
		op == op22CreateNativeMint || op == op22InitializeNonTransferableMint || op == op22InitializePermanentDelegate ||
		op == op22WithdrawExcessLamports || op == op22UnwrapLamports {
		p.log("Instruction: " + spl.TokenOp(op).String())
	}
	switch op {
	case byte(spl.TokenInitializeMintOp), byte(spl.TokenInitializeMint2Op):
		d, freeze, err := decodeWithOption(data, 33)
		if err != nil {
			return err
		}
		return p.initializeMint(d[0], solana.PublicKeyFromBytes(d[1:33]), freeze, op == byte(spl.TokenInitializeMintOp))
	case byte(spl.TokenInitializeAccountOp):
		return p.initializeAccount(nil, true)
	case byte(spl.TokenInitializeAccount2Op), byte(spl.TokenInitializeAccount3Op):
		d, err := decodeExact(data, 32)
		if err != nil {
			return err
		}
		owner := solana.PublicKeyFromBytes(d)
		return p.initializeAccount(&owner, op == byte(spl.TokenInitializeAccount2Op))
	case byte(spl.TokenInitializeMultisigOp), byte(spl.TokenInitializeMultisig2Op):
		d, err := decodeExact(data, 1)
		if err != nil {
			return err
		}
		return p.initializeMultisig(d[0], op == byte(spl.TokenInitializeMultisigOp))
	case byte(spl.TokenTransferOp):
		d, err := decodeExact(data, 8)
		if err != nil {
			return err
		}
		return p.transfer(binary.LittleEndian.Uint64(d), nil, nil)
	case byte(spl.TokenTransferCheckedOp):
		d, err := decodeExact(data, 9)
		if err != nil {
			return err
		}
		return p.transfer(binary.LittleEndian.Uint64(d), &d[8], nil)
	case byte(spl.TokenApproveOp), byte(spl.TokenApproveCheckedOp):
		n := 8
		if op == byte(spl.TokenApproveCheckedOp) {
			n = 9
		}
		d, err := decodeExact(data, n)
		if err != nil {
			return err
		}
		var dec *uint8
		if n == 9 {
			dec = &d[8]
		}
		return p.approve(binary.LittleEndian.Uint64(d), dec)
	case byte(spl.TokenRevokeOp):
		return p.revoke()
	case byte(spl.TokenSetAuthorityOp):
		d, newAuth, err := decodeWithOption(data, 1)
		if err != nil {
			return err
		}
		if d[0] > authPermissionedBurn {
			return ErrInvalidInstruction
		}
		return p.setAuthority(d[0], newAuth)
	case byte(spl.TokenMintToOp), byte(spl.TokenMintToCheckedOp):
		n := 8
		if op == byte(spl.TokenMintToCheckedOp) {
			n = 9
		}
		d, err := decodeExact(data, n)
		if err != nil {
			return err
		}
		var dec *uint8
		if n == 9 {
			dec = &d[8]
		}
		return p.mintTo(binary.LittleEndian.Uint64(d), dec)
	case byte(spl.TokenBurnOp), byte(spl.TokenBurnCheckedOp):
		n := 8
		if op == byte(spl.TokenBurnCheckedOp) {
			n = 9
		}
		d, err := decodeExact(data, n)
		if err != nil {
			return err
		}
		var dec *uint8
		if n == 9 {
			dec = &d[8]
		}
		return p.burn(binary.LittleEndian.Uint64(d), dec, false)
	case byte(spl.TokenCloseAccountOp):
		return p.closeAccount()
	case byte(spl.TokenFreezeAccountOp):
		return p.toggleFreeze(true)
	case byte(spl.TokenThawAccountOp):
		return p.toggleFreeze(false)
	case byte(spl.TokenSyncNativeOp):
		return p.syncNative()
	case byte(spl.TokenGetAccountDataSizeOp):
		exts, err := parseExtTypes(data[1:])
		if err != nil {
			return err
		}
		return p.getAccountDataSize(exts)
	case byte(spl.TokenInitializeImmutableOwnerOp):
		return p.initializeImmutableOwner()
	case byte(spl.TokenAmountToUiAmountOp):
		d, err := decodeExact(data, 8)
		if err != nil {
			return err
		}
		return p.amountToUiAmount(binary.LittleEndian.Uint64(d))
	case byte(spl.TokenUiAmountToAmountOp):
		if !utf8.Valid(data[1:]) {
			return ErrInvalidInstruction
		}
		return p.uiAmountToAmount(string(data[1:]))
	case op22InitializeMintCloseAuthority:
		_, auth, err := decodeWithOption(data, 0)
		if err != nil {
			return err
		}
		return p.initMintExt(extMintCloseAuthority, func(v []byte) error { return putNonZero(v, auth) })
	case op22TransferFeeExtension:
		return p.transferFeeExtension(data[1:])
	case op22DefaultAccountStateExtension:
		return p.defaultAccountStateExtension(data[1:])
	case op22Reallocate:
		exts, err := parseExtTypes(data[1:])
		if err != nil {
			return err
		}
		return p.reallocate(exts)
	case op22MemoTransferExtension:
		return p.toggleAccountFlag(data[1:], extMemoTransfer, "RequiredMemoTransfersInstruction")
	case op22CreateNativeMint:
		return p.createNativeMint()
	case op22InitializeNonTransferableMint:
		return p.initMintExt(extNonTransferable, nil)
	case op22InterestBearingMintExtension:
		return p.interestBearingExtension(data[1:])
	case op22CpiGuardExtension:
		return p.toggleAccountFlag(data[1:], extCpiGuard, "CpiGuardInstruction")
	case op22InitializePermanentDelegate:
		d, err := decodeExact(data, 32)
		if err != nil {
			return err
		}
		k := solana.PublicKeyFromBytes(d)
		return p.initMintExt(extPermanentDelegate, func(v []byte) error { return putNonZero(v, &k) })
	case op22TransferHookExtension:
		return p.pointerExtension(data[1:], extTransferHook, authTransferHookProgramID, "TransferHookInstruction")
	case op22WithdrawExcessLamports:
		return p.withdrawExcessLamports()
	case op22MetadataPointerExtension:
		return p.pointerExtension(data[1:], extMetadataPointer, authMetadataPointer, "MetadataPointerInstruction")
	case op22GroupPointerExtension:
		return p.pointerExtension(data[1:], extGroupPointer, authGroupPointer, "GroupPointerInstruction")
	case op22GroupMemberPointerExtension:
		return p.pointerExtension(data[1:], extGroupMemberPointer, authGroupMemberPointer, "GroupMemberPointerInstruction")
	case op22ScaledUiAmountExtension:
		return p.scaledUiAmountExtension(data[1:])
	case op22PausableExtension:
		return p.pausableExtension(data[1:])
	case op22UnwrapLamports:
		d, amount, err := decodeU64Option(data)
		if err != nil {
			return err
		}
		_ = d
		return p.unwrapLamports(amount)
	case op22PermissionedBurnExtension:
		return p.permissionedBurnExtension(data[1:])
	}
	// Confidential transfers, confidential transfer fees and confidential
	// mint/burn need zero-knowledge proof verification.
	p.log("Error: Token-2022 instruction " + spl.TokenOp(op).String() + " (confidential transfers) is not supported by the ferry ledger")
	return runtime.ErrInvalidInstructionData
}

// decodeU64Option is decode_instruction_data_with_coption_u64::<()>.
func decodeU64Option(data []byte) ([]byte, *uint64, error) {
	rest := data[1:]
	switch {
	case len(rest) > 0 && rest[0] == 0:
		return nil, nil, nil
	case len(rest) > 0 && rest[0] == 1 && len(rest) >= 9:
		v := binary.LittleEndian.Uint64(rest[1:])
		return nil, &v, nil
	}
	return nil, nil, runtime.ErrInvalidInstructionData
}

// putNonZero writes an OptionalNonZeroPubkey from a COption: a Some of the
// zero key is InvalidArgument.
func putNonZero(v []byte, k *solana.PublicKey) error {
	if k == nil {
		clear(v[:32])
		return nil
	}
	if k.IsZero() {
		return runtime.ErrInvalidArgument
	}
	copy(v[:32], k[:])
	return nil
}

// rentOf reads the Rent sysvar passed as an account.
func (p *t22) rentOf(ref *runtime.AccountRef) (runtime.Rent, error) {
	if ref.Key != spl.SysvarRentID {
		return runtime.Rent{}, runtime.ErrInvalidArgument
	}
	return p.ctx.Env().Rent, nil
}

func (p *t22) initializeMint(decimals uint8, authority solana.PublicKey, freeze *solana.PublicKey, rentSysvar bool) error {
	mint, err := p.account(0)
	if err != nil {
		return err
	}
	if err := p.own(mint); err != nil {
		return err
	}
	rent := p.ctx.Env().Rent
	if rentSysvar {
		r, err := p.account(1)
		if err != nil {
			return err
		}
		if rent, err = p.rentOf(r); err != nil {
			return err
		}
	}
	if mint.Lamports < rent.MinimumBalance(len(mint.Data)) {
		return ErrNotRentExempt
	}
	s, err := unpackUninitialized(mint.Data, acctTypeMint)
	if err != nil {
		return err
	}
	types, _, err := s.types()
	if err != nil {
		return err
	}
	if n, err := accountLen(acctTypeMint, types); err != nil {
		return err
	} else if n != len(mint.Data) {
		return runtime.ErrInvalidAccountData
	}
	if err := checkMintExtensionCombination(types); err != nil {
		return err
	}
	if v, err := s.ext(extDefaultAccountState, acctTypeMint); err == nil {
		if v[0] > stateFrozen {
			return runtime.ErrInvalidAccountData
		}
		if v[0] == stateFrozen && freeze == nil {
			return ErrMintCannotFreeze
		}
	}
	tSetOpt(s.base, mintAuthority, &authority)
	s.base[mintDecimals] = decimals
	s.base[mintInit] = 1
	tSetOpt(s.base, mintFreeze, freeze)
	return s.initAccountType(acctTypeMint)
}

// requiredAccountExtensions lists the account extensions a mint's
// extensions require.
func requiredAccountExtensions(mint *tstate) ([]uint16, error) {
	types, _, err := mint.types()
	if err != nil {
		return nil, err
	}
	var out []uint16
	for _, t := range types {
		out = append(out, requiredAccountExts(t)...)
	}
	return out, nil
}

func (p *t22) initializeAccount(owner *solana.PublicKey, rentSysvar bool) error {
	n := 2
	if owner == nil {
		n = 3
	}
	accts, err := p.accounts(n)
	if err != nil {
		return err
	}
	acct, mintRef := accts[0], accts[1]
	if owner == nil {
		owner = &accts[2].Key
	}
	if err := p.own(acct); err != nil {
		return err
	}
	if err := p.own(mintRef); err != nil {
		return err
	}
	rent := p.ctx.Env().Rent
	if rentSysvar {
		r, err := p.account(n)
		if err != nil {
			return err
		}
		if rent, err = p.rentOf(r); err != nil {
			return err
		}
	}
	s, err := unpackUninitialized(acct.Data, acctTypeAccount)
	if err != nil {
		return err
	}
	if acct.Lamports < rent.MinimumBalance(len(acct.Data)) {
		return ErrNotRentExempt
	}
	m, err := unpackState(mintRef.Data, acctTypeMint)
	if err != nil {
		return ErrInvalidMint
	}
	if v, err := m.ext(extPermanentDelegate, acctTypeMint); err == nil {
		if _, ok := nonZero(v); ok {
			p.log("Warning: Mint has a permanent delegate, so tokens in this account may be seized at any time")
		}
	}
	required, err := requiredAccountExtensions(m)
	if err != nil {
		return err
	}
	if need, err := accountLen(acctTypeAccount, required); err != nil {
		return err
	} else if need > len(acct.Data) {
		return runtime.ErrInvalidAccountData
	}
	for _, t := range required {
		if _, err := s.initExt(t, acctTypeAccount, true); err != nil {
			return err
		}
	}
	state := byte(stateInitialized)
	if v, err := m.ext(extDefaultAccountState, acctTypeMint); err == nil {
		if v[0] > stateFrozen {
			return runtime.ErrInvalidAccountData
		}
		state = v[0]
	}
	a := s.base
	putKey(a, accMint, mintRef.Key)
	putKey(a, accOwner, *owner)
	tSetOpt(a, accClose, nil)
	tSetOpt(a, accDelegate, nil)
	putU64(a, accDelegatedAmt, 0)
	a[accState] = state
	if mintRef.Key == p.nativeMint {
		reserve := rent.MinimumBalance(len(acct.Data))
		amount, err := checkedSub(acct.Lamports, reserve)
		if err != nil {
			return err
		}
		clear(a[accIsNative : accIsNative+12])
		a[accIsNative] = 1
		putU64(a, accIsNative+4, reserve)
		putU64(a, accAmount, amount)
	} else {
		clear(a[accIsNative : accIsNative+12])
		putU64(a, accAmount, 0)
	}
	return s.initAccountType(acctTypeAccount)
}

func (p *t22) initializeMultisig(m uint8, rentSysvar bool) error {
	ms, err := p.account(0)
	if err != nil {
		return err
	}
	if err := p.own(ms); err != nil {
		return err
	}
	rent := p.ctx.Env().Rent
	next := 1
	if rentSysvar {
		r, err := p.account(1)
		if err != nil {
			return err
		}
		if rent, err = p.rentOf(r); err != nil {
			return err
		}
		next = 2
	}
	if len(ms.Data) != spl.MultisigSize {
		return runtime.ErrInvalidArgument
	}
	if ms.Data[msInit] != 0 {
		return ErrAlreadyInUse
	}
	if ms.Lamports < rent.MinimumBalance(len(ms.Data)) {
		return ErrNotRentExempt
	}
	return initMultisig(ms.Data, m, p.rest(next))
}

// transferFee computes a TransferFeeConfig's fee for amount in epoch
// (calculate_epoch_fee); ok is false on overflow.
func transferFee(cfg []byte, epoch, amount uint64) (uint64, bool) {
	fee := cfg[90:108] // newer
	if epoch < u64At(cfg, 90) {
		fee = cfg[72:90] // older
	}
	maxFee, bps := u64At(fee, 8), uint64(binary.LittleEndian.Uint16(fee[16:]))
	if bps == 0 || amount == 0 {
		return 0, true
	}
	hi, lo := mulWide(amount, bps)
	// ceil((hi:lo) / 10_000); the quotient fits u64 since bps ≤ 65535.
	q, r := divWide(hi, lo, 10_000)
	if r != 0 {
		q++
	}
	return min(q, maxFee), true
}

func (p *t22) memoRequired(s *tstate) bool {
	v, err := s.ext(extMemoTransfer, acctTypeAccount)
	return err == nil && v[0] != 0
}

func (p *t22) checkMemo() error {
	if id, ok := p.ctx.PreviousSiblingProgram(); ok && (id == spl.MemoProgramID || id == spl.MemoV1ProgramID) {
		return nil
	}
	return ErrNoMemo
}

// transfer is process_transfer: decimals is set for TransferChecked,
// withFee for TransferCheckedWithFee.
func (p *t22) transfer(amount uint64, decimals *uint8, withFee *uint64) error {
	r, err := (&ptoken{ctx: p.ctx}).transferAccounts(decimals != nil)
	if err != nil {
		return err
	}
	srcRef, mintRef, dstRef, auth, signers := r.src, r.mint, r.dst, r.auth, r.signers
	if err := p.own(srcRef); err != nil {
		return err
	}
	if err := p.own(dstRef); err != nil {
		return err
	}
	src, err := unpackState(srcRef.Data, acctTypeAccount)
	if err != nil {
		return err
	}
	if src.base[accState] == stateFrozen {
		return ErrAccountFrozen
	}
	srcAmount := u64At(src.base, accAmount)
	if srcAmount < amount {
		return ErrInsufficientFunds
	}
	if src.has(extNonTransferableAccount, acctTypeAccount) {
		return ErrNonTransferable
	}
	var fee uint64
	var permanent *solana.PublicKey
	var hook *solana.PublicKey
	if decimals != nil {
		if err := p.own(mintRef); err != nil {
			return err
		}
		if keyAt(src.base, accMint) != mintRef.Key {
			return ErrMintMismatch
		}
		m, err := unpackState(mintRef.Data, acctTypeMint)
		if err != nil {
			return err
		}
		if *decimals != m.base[mintDecimals] {
			return ErrMintDecimalsMismatch
		}
		if cfg, err := m.ext(extTransferFeeConfig, acctTypeMint); err == nil {
			var ok bool
			if fee, ok = transferFee(cfg, p.ctx.Env().Epoch, amount); !ok {
				return ErrOverflow
			}
		}
		if v, err := m.ext(extPausable, acctTypeMint); err == nil && v[32] != 0 {
			return ErrMintPaused
		}
		if v, err := m.ext(extPermanentDelegate, acctTypeMint); err == nil {
			if k, ok := nonZero(v); ok {
				permanent = &k
			}
		}
		if v, err := m.ext(extTransferHook, acctTypeMint); err == nil {
			if k, ok := nonZero(v[32:]); ok {
				hook = &k
			}
		}
	} else if src.has(extTransferHookAccount, acctTypeAccount) || src.has(extTransferFeeAmount, acctTypeAccount) ||
		src.has(extPausableAccount, acctTypeAccount) {
		return ErrMintRequiredForTransfer
	}
	if withFee != nil && *withFee != fee {
		p.ctx.Logf("Calculated fee %d, received %d", fee, *withFee)
		return ErrFeeMismatch
	}
	self := srcRef.Key == dstRef.Key
	owner := keyAt(src.base, accOwner)
	if v, err := src.ext(extCpiGuard, acctTypeAccount); err == nil {
		if auth.Key == owner && v[0] != 0 && p.inCPI() {
			return ErrCpiGuardTransferBlocked
		}
	}
	delegate, hasDelegate := tOpt(src.base, accDelegate)
	switch {
	case permanent != nil && auth.Key == *permanent:
		if err := p.validateOwner(*permanent, auth, signers); err != nil {
			return err
		}
	case hasDelegate && auth.Key == delegate:
		if err := p.validateOwner(delegate, auth, signers); err != nil {
			return err
		}
		delegated := u64At(src.base, accDelegatedAmt)
		if delegated < amount {
			return ErrInsufficientFunds
		}
		if !self {
			putU64(src.base, accDelegatedAmt, delegated-amount)
			if delegated == amount {
				tSetOpt(src.base, accDelegate, nil)
			}
		}
	default:
		if err := p.validateOwner(owner, auth, signers); err != nil {
			return err
		}
	}
	if self {
		if p.memoRequired(src) {
			return p.checkMemo()
		}
		return nil
	}
	dst, err := unpackState(dstRef.Data, acctTypeAccount)
	if err != nil {
		return err
	}
	if dst.base[accState] == stateFrozen {
		return ErrAccountFrozen
	}
	if keyAt(src.base, accMint) != keyAt(dst.base, accMint) {
		return ErrMintMismatch
	}
	if p.memoRequired(dst) {
		if err := p.checkMemo(); err != nil {
			return err
		}
	}
	putU64(src.base, accAmount, srcAmount-amount)
	credited, err := checkedSub(amount, fee)
	if err != nil {
		return err
	}
	sum, err := checkedAdd(u64At(dst.base, accAmount), credited)
	if err != nil {
		return err
	}
	putU64(dst.base, accAmount, sum)
	if fee > 0 {
		v, err := dst.ext(extTransferFeeAmount, acctTypeAccount)
		if err != nil {
			return ErrInvalidState
		}
		withheld, err := checkedAdd(u64At(v, 0), fee)
		if err != nil {
			return err
		}
		putU64(v, 0, withheld)
	}
	if tIsNative(src.base) {
		if srcRef.Lamports, err = checkedSub(srcRef.Lamports, amount); err != nil {
			return err
		}
		if dstRef.Lamports, err = checkedAdd(dstRef.Lamports, amount); err != nil {
			return err
		}
	}
	if hook != nil {
		return p.invokeTransferHook(*hook, srcRef, mintRef, dstRef, auth, amount, signers)
	}
	return nil
}

// invokeTransferHook is where Token-2022 calls the mint's transfer-hook
// program (spl-transfer-hook-interface Execute). Hook programs are SBF
// programs, which this ledger cannot run: the transfer fails with a log
// line saying so, unless the hook program is missing from the
// transaction, which fails as it does on a cluster.
func (p *t22) invokeTransferHook(program solana.PublicKey, src, mint, dst, auth *runtime.AccountRef, amount uint64, extra []*runtime.AccountRef) error {
	for _, a := range extra {
		if a.Key == program {
			p.ctx.Logf("Error: transfer hook program %s cannot run on the ferry ledger (SBF programs are not supported)", program)
			return runtime.ErrUnsupportedProgramID
		}
	}
	p.ctx.Logf("Error: transfer hook program %s is not among the instruction's accounts", program)
	return runtime.ErrMissingAccount
}

func (p *t22) approve(amount uint64, decimals *uint8) error {
	n := 3
	if decimals != nil {
		n = 4
	}
	accts, err := p.accounts(n)
	if err != nil {
		return err
	}
	srcRef, mintRef, delegate, owner := accts[0], (*runtime.AccountRef)(nil), accts[1], accts[2]
	if decimals != nil {
		mintRef, delegate, owner = accts[1], accts[2], accts[3]
	}
	if err := p.own(srcRef); err != nil {
		return err
	}
	src, err := unpackState(srcRef.Data, acctTypeAccount)
	if err != nil {
		return err
	}
	if src.base[accState] == stateFrozen {
		return ErrAccountFrozen
	}
	if decimals != nil {
		if err := p.own(mintRef); err != nil {
			return err
		}
		if keyAt(src.base, accMint) != mintRef.Key {
			return ErrMintMismatch
		}
		m, err := unpackState(mintRef.Data, acctTypeMint)
		if err != nil {
			return err
		}
		if *decimals != m.base[mintDecimals] {
			return ErrMintDecimalsMismatch
		}
	}
	if err := p.validateOwner(keyAt(src.base, accOwner), owner, p.rest(n)); err != nil {
		return err
	}
	if v, err := src.ext(extCpiGuard, acctTypeAccount); err == nil && v[0] != 0 && p.inCPI() {
		return ErrCpiGuardApproveBlocked
	}
	d := delegate.Key
	tSetOpt(src.base, accDelegate, &d)
	putU64(src.base, accDelegatedAmt, amount)
	return nil
}

func (p *t22) revoke() error {
	accts, err := p.accounts(2)
	if err != nil {
		return err
	}
	srcRef, auth := accts[0], accts[1]
	if err := p.own(srcRef); err != nil {
		return err
	}
	src, err := unpackState(srcRef.Data, acctTypeAccount)
	if err != nil {
		return err
	}
	if src.base[accState] == stateFrozen {
		return ErrAccountFrozen
	}
	expected := keyAt(src.base, accOwner)
	if d, ok := tOpt(src.base, accDelegate); ok && d == auth.Key {
		expected = d
	}
	if err := p.validateOwner(expected, auth, p.rest(2)); err != nil {
		return err
	}
	tSetOpt(src.base, accDelegate, nil)
	putU64(src.base, accDelegatedAmt, 0)
	return nil
}

// mintAuthorityExt maps the extension authority types to the extension
// holding them and the offset of the authority in its value.
var mintAuthorityExt = map[uint8]struct {
	ext uint16
	off int
}{
	authTransferFeeConfig: {extTransferFeeConfig, 0}, authWithheldWithdraw: {extTransferFeeConfig, 32},
	authCloseMint: {extMintCloseAuthority, 0}, authInterestRate: {extInterestBearingConfig, 0},
	authPermanentDelegate: {extPermanentDelegate, 0}, authConfidentialTransferMint: {extConfidentialTransferMint, 0},
	authTransferHookProgramID: {extTransferHook, 0}, authConfidentialTransferFeeConfig: {extConfidentialTransferFeeConfig, 0},
	authMetadataPointer: {extMetadataPointer, 0}, authGroupPointer: {extGroupPointer, 0},
	authGroupMemberPointer: {extGroupMemberPointer, 0}, authScaledUiAmount: {extScaledUiAmount, 0},
	authPause: {extPausable, 0}, authPermissionedBurn: {extPermissionedBurn, 0},
}

func (p *t22) setAuthority(kind uint8, newAuth *solana.PublicKey) error {
	accts, err := p.accounts(2)
	if err != nil {
		return err
	}
	target, auth := accts[0], accts[1]
	signers := p.rest(2)
	if err := p.own(target); err != nil {
		return err
	}
	if a, err := unpackState(target.Data, acctTypeAccount); err == nil {
		if a.base[accState] == stateFrozen {
			return ErrAccountFrozen
		}
		switch spl.AuthorityType(kind) {
		case spl.AuthorityAccountOwner:
			if err := p.validateOwner(keyAt(a.base, accOwner), auth, signers); err != nil {
				return err
			}
			if a.has(extImmutableOwner, acctTypeAccount) {
				return ErrImmutableOwner
			}
			if v, err := a.ext(extCpiGuard, acctTypeAccount); err == nil && v[0] != 0 {
				if p.inCPI() {
					return ErrCpiGuardSetAuthorityBlocked
				}
				return ErrCpiGuardOwnerChangeBlocked
			}
			if newAuth == nil {
				return ErrInvalidInstruction
			}
			putKey(a.base, accOwner, *newAuth)
			tSetOpt(a.base, accDelegate, nil)
			putU64(a.base, accDelegatedAmt, 0)
			if tIsNative(a.base) {
				tSetOpt(a.base, accClose, nil)
			}
		case spl.AuthorityCloseAccount:
			expected := tOptUnwrapOr(a.base, accClose, keyAt(a.base, accOwner))
			if err := p.validateOwner(expected, auth, signers); err != nil {
				return err
			}
			if v, err := a.ext(extCpiGuard, acctTypeAccount); err == nil && v[0] != 0 && p.inCPI() && newAuth != nil {
				return ErrCpiGuardSetAuthorityBlocked
			}
			tSetOpt(a.base, accClose, newAuth)
		default:
			return ErrAuthorityTypeNotSupported
		}
		return nil
	}
	m, err := unpackState(target.Data, acctTypeMint)
	if err != nil {
		return runtime.ErrInvalidAccountData
	}
	switch kind {
	case uint8(spl.AuthorityMintTokens), uint8(spl.AuthorityFreezeAccount):
		off := mintAuthority
		if kind == uint8(spl.AuthorityFreezeAccount) {
			off = mintFreeze
		}
		cur, ok := tOpt(m.base, off)
		if !ok {
			if off == mintAuthority {
				return ErrFixedSupply
			}
			return ErrMintCannotFreeze
		}
		if err := p.validateOwner(cur, auth, signers); err != nil {
			return err
		}
		tSetOpt(m.base, off, newAuth)
		return nil
	}
	loc, ok := mintAuthorityExt[kind]
	if !ok {
		return ErrAuthorityTypeNotSupported
	}
	v, err := m.ext(loc.ext, acctTypeMint)
	if err != nil {
		return err
	}
	cur, ok := nonZero(v[loc.off:])
	if !ok {
		return ErrAuthorityTypeNotSupported
	}
	if err := p.validateOwner(cur, auth, signers); err != nil {
		return err
	}
	return putNonZero(v[loc.off:], newAuth)
}

func (p *t22) mintTo(amount uint64, decimals *uint8) error {
	accts, err := p.accounts(3)
	if err != nil {
		return err
	}
	mintRef, dstRef, auth := accts[0], accts[1], accts[2]
	if err := p.own(mintRef); err != nil {
		return err
	}
	if err := p.own(dstRef); err != nil {
		return err
	}
	dst, err := unpackState(dstRef.Data, acctTypeAccount)
	if err != nil {
		return err
	}
	if dst.base[accState] == stateFrozen {
		return ErrAccountFrozen
	}
	if tIsNative(dst.base) {
		return ErrNativeNotSupported
	}
	if mintRef.Key != keyAt(dst.base, accMint) {
		return ErrMintMismatch
	}
	m, err := unpackState(mintRef.Data, acctTypeMint)
	if err != nil {
		return err
	}
	if m.has(extNonTransferable, acctTypeMint) &&
		(!dst.has(extImmutableOwner, acctTypeAccount) || !dst.has(extNonTransferableAccount, acctTypeAccount)) {
		return ErrNonTransferableNeedsImmutableOwnership
	}
	if v, err := m.ext(extPausable, acctTypeMint); err == nil && v[32] != 0 {
		return ErrMintPaused
	}
	if m.has(extConfidentialMintBurn, acctTypeMint) {
		return runtime.Custom(65) // IllegalMintBurnConversion
	}
	if decimals != nil && *decimals != m.base[mintDecimals] {
		return ErrMintDecimalsMismatch
	}
	ma, ok := tOpt(m.base, mintAuthority)
	if !ok {
		return ErrFixedSupply
	}
	if err := p.validateOwner(ma, auth, p.rest(3)); err != nil {
		return err
	}
	sum, err := checkedAdd(u64At(dst.base, accAmount), amount)
	if err != nil {
		return err
	}
	supply, err := checkedAdd(u64At(m.base, mintSupply), amount)
	if err != nil {
		return err
	}
	putU64(dst.base, accAmount, sum)
	putU64(m.base, mintSupply, supply)
	return nil
}

// burn is process_burn; permissioned is PermissionedBurn's variant, whose
// third account is the burn authority that must sign.
func (p *t22) burn(amount uint64, decimals *uint8, permissioned bool) error {
	n, ai := 3, 2
	if permissioned {
		n, ai = 4, 3
	}
	accts, err := p.accounts(n)
	if err != nil {
		return err
	}
	srcRef, mintRef, auth := accts[0], accts[1], accts[ai]
	if err := p.own(srcRef); err != nil {
		return err
	}
	if err := p.own(mintRef); err != nil {
		return err
	}
	m, err := unpackState(mintRef.Data, acctTypeMint)
	if err != nil {
		return err
	}
	pb, pbErr := m.ext(extPermissionedBurn, acctTypeMint)
	var pbAuth solana.PublicKey
	pbSet := false
	if pbErr == nil {
		pbAuth, pbSet = nonZero(pb)
	}
	if !permissioned {
		if pbSet {
			return ErrInvalidInstruction
		}
	} else {
		if pbErr != nil {
			return ErrInvalidInstruction
		}
		if !pbSet {
			p.log("Permissioned burn authority is None; use the standard burn")
			return ErrInvalidInstruction
		}
		approver := accts[2]
		if !approver.IsSigner {
			return runtime.ErrMissingRequiredSignature
		}
		if approver.Key != pbAuth {
			return runtime.ErrInvalidAccountData
		}
	}
	src, err := unpackState(srcRef.Data, acctTypeAccount)
	if err != nil {
		return err
	}
	if src.base[accState] == stateFrozen {
		return ErrAccountFrozen
	}
	if tIsNative(src.base) {
		return ErrNativeNotSupported
	}
	if u64At(src.base, accAmount) < amount {
		return ErrInsufficientFunds
	}
	if mintRef.Key != keyAt(src.base, accMint) {
		return ErrMintMismatch
	}
	if decimals != nil && *decimals != m.base[mintDecimals] {
		return ErrMintDecimalsMismatch
	}
	if v, err := m.ext(extPausable, acctTypeMint); err == nil && v[32] != 0 {
		return ErrMintPaused
	}
	var permanent *solana.PublicKey
	if v, err := m.ext(extPermanentDelegate, acctTypeMint); err == nil {
		if k, ok := nonZero(v); ok {
			permanent = &k
		}
	}
	owner := keyAt(src.base, accOwner)
	if v, err := src.ext(extCpiGuard, acctTypeAccount); err == nil && auth.Key == owner && v[0] != 0 && p.inCPI() {
		return ErrCpiGuardBurnBlocked
	}
	if owner != runtime.SystemProgramID && owner != spl.IncineratorID {
		signers := p.rest(n)
		delegate, hasDelegate := tOpt(src.base, accDelegate)
		switch {
		case permanent != nil && auth.Key == *permanent:
			if err := p.validateOwner(*permanent, auth, signers); err != nil {
				return err
			}
		case hasDelegate && auth.Key == delegate:
			if err := p.validateOwner(delegate, auth, signers); err != nil {
				return err
			}
			delegated := u64At(src.base, accDelegatedAmt)
			if delegated < amount {
				return ErrInsufficientFunds
			}
			putU64(src.base, accDelegatedAmt, delegated-amount)
			if delegated == amount {
				tSetOpt(src.base, accDelegate, nil)
			}
		default:
			if err := p.validateOwner(owner, auth, signers); err != nil {
				return err
			}
		}
	}
	supply, err := checkedSub(u64At(m.base, mintSupply), amount)
	if err != nil {
		return err
	}
	putU64(src.base, accAmount, u64At(src.base, accAmount)-amount)
	putU64(m.base, mintSupply, supply)
	return nil
}

func (p *t22) closeAccount() error {
	accts, err := p.accounts(3)
	if err != nil {
		return err
	}
	srcRef, dstRef, auth := accts[0], accts[1], accts[2]
	if srcRef.Key == dstRef.Key {
		return runtime.ErrInvalidAccountData
	}
	if err := p.own(srcRef); err != nil {
		return err
	}
	signers := p.rest(3)
	if a, err := unpackState(srcRef.Data, acctTypeAccount); err == nil {
		if !tIsNative(a.base) && u64At(a.base, accAmount) != 0 {
			return ErrNonNativeHasBalance
		}
		owner := keyAt(a.base, accOwner)
		expected := tOptUnwrapOr(a.base, accClose, owner)
		if owner != runtime.SystemProgramID && owner != spl.IncineratorID {
			if v, err := a.ext(extCpiGuard, acctTypeAccount); err == nil && v[0] != 0 && p.inCPI() && dstRef.Key != owner {
				return ErrCpiGuardCloseAccountBlocked
			}
			if err := p.validateOwner(expected, auth, signers); err != nil {
				return err
			}
		} else if dstRef.Key != spl.IncineratorID {
			return runtime.ErrInvalidAccountData
		}
		if v, err := a.ext(extTransferFeeAmount, acctTypeAccount); err == nil && u64At(v, 0) != 0 {
			return ErrAccountHasWithheldTransferFees
		}
	} else if m, err := unpackState(srcRef.Data, acctTypeMint); err == nil {
		v, err := m.ext(extMintCloseAuthority, acctTypeMint)
		if err != nil {
			return err
		}
		closer, ok := nonZero(v)
		if !ok {
			return ErrAuthorityTypeNotSupported
		}
		if err := p.validateOwner(closer, auth, signers); err != nil {
			return err
		}
		if u64At(m.base, mintSupply) != 0 {
			return ErrMintHasSupply
		}
	} else {
		return runtime.ErrUninitializedAccount
	}
	if dstRef.Lamports, err = checkedAdd(dstRef.Lamports, srcRef.Lamports); err != nil {
		return err
	}
	closeAccount(srcRef)
	return nil
}

func (p *t22) toggleFreeze(freeze bool) error {
	accts, err := p.accounts(3)
	if err != nil {
		return err
	}
	srcRef, mintRef, auth := accts[0], accts[1], accts[2]
	if err := p.own(srcRef); err != nil {
		return err
	}
	if err := p.own(mintRef); err != nil {
		return err
	}
	src, err := unpackState(srcRef.Data, acctTypeAccount)
	if err != nil {
		return err
	}
	if freeze == (src.base[accState] == stateFrozen) {
		return ErrInvalidState
	}
	if tIsNative(src.base) {
		return ErrNativeNotSupported
	}
	if mintRef.Key != keyAt(src.base, accMint) {
		return ErrMintMismatch
	}
	m, err := unpackState(mintRef.Data, acctTypeMint)
	if err != nil {
		return err
	}
	fa, ok := tOpt(m.base, mintFreeze)
	if !ok {
		return ErrMintCannotFreeze
	}
	if err := p.validateOwner(fa, auth, p.rest(3)); err != nil {
		return err
	}
	if freeze {
		src.base[accState] = stateFrozen
	} else {
		src.base[accState] = stateInitialized
	}
	return nil
}

// syncNative recounts a wrapped-SOL account from its lamports, with the
// reserve recomputed from the rent (the Rent sysvar when passed second).
func (p *t22) syncNative() error {
	ref, err := p.account(0)
	if err != nil {
		return err
	}
	if err := p.own(ref); err != nil {
		return err
	}
	rent := p.ctx.Env().Rent
	if p.ctx.NumAccounts() > 1 {
		r, _ := p.account(1)
		if rent, err = p.rentOf(r); err != nil {
			return err
		}
	}
	reserve := rent.MinimumBalance(len(ref.Data))
	a, err := unpackState(ref.Data, acctTypeAccount)
	if err != nil {
		return err
	}
	if !tIsNative(a.base) {
		return ErrNonNativeNotSupported
	}
	amount, err := checkedSub(ref.Lamports, reserve)
	if err != nil {
		return err
	}
	putU64(a.base, accIsNative+4, reserve)
	putU64(a.base, accAmount, amount)
	return nil
}

func (p *t22) getAccountDataSize(exts []uint16) error {
	for _, t := range exts {
		if extAccountType(t) != acctTypeAccount {
			return ErrExtensionTypeMismatch
		}
	}
	mint, err := p.account(0)
	if err != nil {
		return err
	}
	if err := p.own(mint); err != nil {
		return err
	}
	m, err := unpackState(mint.Data, acctTypeMint)
	if err != nil {
		return ErrInvalidMint
	}
	required, err := requiredAccountExtensions(m)
	if err != nil {
		return err
	}
	n, err := accountLen(acctTypeAccount, append(required, exts...))
	if err != nil {
		return err
	}
	return p.ctx.SetReturnData(binary.LittleEndian.AppendUint64(nil, uint64(n)))
}

func (p *t22) initializeImmutableOwner() error {
	ref, err := p.account(0)
	if err != nil {
		return err
	}
	if err := p.own(ref); err != nil {
		return err
	}
	s, err := unpackUninitialized(ref.Data, acctTypeAccount)
	if err != nil {
		return err
	}
	_, err = s.initExt(extImmutableOwner, acctTypeAccount, true)
	return err
}

// uiMint loads the mint of AmountToUiAmount / UiAmountToAmount.
func (p *t22) uiMint() (*tstate, error) {
	ref, err := p.account(0)
	if err != nil {
		return nil, err
	}
	if err := p.own(ref); err != nil {
		return nil, err
	}
	m, err := unpackState(ref.Data, acctTypeMint)
	if err != nil {
		return nil, ErrInvalidMint
	}
	return m, nil
}

func (p *t22) amountToUiAmount(amount uint64) error {
	m, err := p.uiMint()
	if err != nil {
		return err
	}
	ui, ok := uiAmountOf(m, amount, p.ctx.Env().UnixTimestamp)
	if !ok {
		return runtime.ErrInvalidArgument
	}
	return p.ctx.SetReturnData([]byte(ui))
}

func (p *t22) uiAmountToAmount(ui string) error {
	m, err := p.uiMint()
	if err != nil {
		return err
	}
	amount, err := amountOfUi(m, ui, p.ctx.Env().UnixTimestamp)
	if err != nil {
		return err
	}
	return p.ctx.SetReturnData(binary.LittleEndian.AppendUint64(nil, amount))
}

// initMintExt initializes a mint extension before InitializeMint: the
// mint must be uninitialized; set fills the value.
func (p *t22) initMintExt(t uint16, set func(v []byte) error) error {
	ref, err := p.account(0)
	if err != nil {
		return err
	}
	if err := p.own(ref); err != nil {
		return err
	}
	s, err := unpackUninitialized(ref.Data, acctTypeMint)
	if err != nil {
		return err
	}
	v, err := s.initExt(t, acctTypeMint, true)
	if err != nil {
		return err
	}
	if set != nil {
		return set(v)
	}
	return nil
}

// mintExtUpdate loads an initialized mint's extension t and checks its
// authority at authOff (absent: missing), for the extension updates.
func (p *t22) mintExtUpdate(t uint16, authOff int, missing error) ([]byte, error) {
	accts, err := p.accounts(2)
	if err != nil {
		return nil, err
	}
	mint, auth := accts[0], accts[1]
	if err := p.own(mint); err != nil {
		return nil, err
	}
	m, err := unpackState(mint.Data, acctTypeMint)
	if err != nil {
		return nil, err
	}
	v, err := m.ext(t, acctTypeMint)
	if err != nil {
		return nil, err
	}
	a, ok := nonZero(v[authOff:])
	if !ok {
		return nil, missing
	}
	if err := p.validateOwner(a, auth, p.rest(2)); err != nil {
		return nil, err
	}
	return v, nil
}

// subInstruction reads an extension instruction's sub-discriminator.
func subInstruction(d []byte, n byte) (byte, error) {
	if len(d) == 0 || d[0] >= n {
		return 0, runtime.ErrInvalidInstructionData
	}
	return d[0], nil
}

func (p *t22) transferFeeExtension(d []byte) error {
	if len(d) == 0 || d[0] > 5 {
		return ErrInvalidInstruction
	}
	rest := d[1:]
	optKey := func(b []byte) (*solana.PublicKey, []byte, error) {
		switch {
		case len(b) > 0 && b[0] == 0:
			return nil, b[1:], nil
		case len(b) >= 33 && b[0] == 1:
			k := solana.PublicKeyFromBytes(b[1:33])
			return &k, b[33:], nil
		}
		return nil, nil, ErrInvalidInstruction
	}
	switch d[0] {
	case 0: // InitializeTransferFeeConfig
		cfgAuth, r, err := optKey(rest)
		if err != nil {
			return err
		}
		withdrawAuth, r, err := optKey(r)
		if err != nil {
			return err
		}
		if len(r) < 10 {
			return ErrInvalidInstruction
		}
		bps, maxFee := binary.LittleEndian.Uint16(r), binary.LittleEndian.Uint64(r[2:])
		epoch := p.ctx.Env().Epoch
		return p.initMintExt(extTransferFeeConfig, func(v []byte) error {
			if err := putNonZero(v[0:], cfgAuth); err != nil {
				return err
			}
			if err := putNonZero(v[32:], withdrawAuth); err != nil {
				return err
			}
			putU64(v, 64, 0)
			if bps > 10_000 {
				return ErrTransferFeeExceedsMaximum
			}
			for _, off := range []int{72, 90} {
				putU64(v, off, epoch)
				putU64(v, off+8, maxFee)
				binary.LittleEndian.PutUint16(v[off+16:], bps)
			}
			return nil
		})
	case 1: // TransferCheckedWithFee
		if len(rest) < 17 {
			return ErrInvalidInstruction
		}
		amount, dec, fee := binary.LittleEndian.Uint64(rest), rest[8], binary.LittleEndian.Uint64(rest[9:])
		p.log("TransferFeeInstruction: TransferCheckedWithFee")
		return p.transfer(amount, &dec, &fee)
	case 2:
		p.log("TransferFeeInstruction: WithdrawWithheldTokensFromMint")
		return p.withdrawWithheldFromMint()
	case 3:
		if len(rest) < 1 {
			return ErrInvalidInstruction
		}
		p.log("TransferFeeInstruction: WithdrawWithheldTokensFromAccounts")
		return p.withdrawWithheldFromAccounts(rest[0])
	case 4:
		p.log("TransferFeeInstruction: HarvestWithheldTokensToMint")
		return p.harvestToMint()
	default: // 5 SetTransferFee
		if len(rest) < 10 {
			return ErrInvalidInstruction
		}
		p.log("TransferFeeInstruction: SetTransferFee")
		bps, maxFee := binary.LittleEndian.Uint16(rest), binary.LittleEndian.Uint64(rest[2:])
		v, err := p.mintExtUpdate(extTransferFeeConfig, 0, ErrNoAuthorityExists)
		if err != nil {
			return err
		}
		if bps > 10_000 {
			return ErrTransferFeeExceedsMaximum
		}
		epoch := p.ctx.Env().Epoch
		if u64At(v, 90) <= epoch {
			copy(v[72:90], v[90:108])
		}
		putU64(v, 90, epoch+2)
		putU64(v, 98, maxFee)
		binary.LittleEndian.PutUint16(v[106:], bps)
		return nil
	}
}

// withheldWithdrawal makes the checks both withheld-fee withdrawals start
// with, in the program's order: the destination's owner first, then the
// mint, its TransferFeeConfig and the withdraw-withheld authority's
// signature, and only then the destination's data. It returns the mint's
// TransferFeeConfig value and the destination.
func (p *t22) withheldWithdrawal(mintRef, dstRef, auth *runtime.AccountRef, signers []*runtime.AccountRef) ([]byte, *tstate, error) {
	if err := p.own(dstRef); err != nil {
		return nil, nil, err
	}
	if err := p.own(mintRef); err != nil {
		return nil, nil, err
	}
	m, err := unpackState(mintRef.Data, acctTypeMint)
	if err != nil {
		return nil, nil, err
	}
	v, err := m.ext(extTransferFeeConfig, acctTypeMint)
	if err != nil {
		return nil, nil, err
	}
	wa, ok := nonZero(v[32:])
	if !ok {
		return nil, nil, ErrNoAuthorityExists
	}
	if err := p.validateOwner(wa, auth, signers); err != nil {
		return nil, nil, err
	}
	dst, err := p.withheldDestination(dstRef, mintRef.Key)
	if err != nil {
		return nil, nil, err
	}
	return v, dst, nil
}

// withheldDestination loads the destination of a withheld-fee withdrawal
// (its owner already checked).
func (p *t22) withheldDestination(dstRef *runtime.AccountRef, mint solana.PublicKey) (*tstate, error) {
	dst, err := unpackState(dstRef.Data, acctTypeAccount)
	if err != nil {
		return nil, err
	}
	if keyAt(dst.base, accMint) != mint {
		return nil, ErrMintMismatch
	}
	if dst.base[accState] == stateFrozen {
		return nil, ErrAccountFrozen
	}
	return dst, nil
}

func (p *t22) withdrawWithheldFromMint() error {
	accts, err := p.accounts(3)
	if err != nil {
		return err
	}
	mintRef, dstRef := accts[0], accts[1]
	v, dst, err := p.withheldWithdrawal(mintRef, dstRef, accts[2], p.rest(3))
	if err != nil {
		return err
	}
	withheld := u64At(v, 64)
	putU64(v, 64, 0)
	sum, err := checkedAdd(u64At(dst.base, accAmount), withheld)
	if err != nil {
		return err
	}
	putU64(dst.base, accAmount, sum)
	return nil
}

// harvest moves an account's withheld fees out (harvest_from_account);
// failures are reported, not returned, by the callers.
func (p *t22) harvest(mint solana.PublicKey, ref *runtime.AccountRef) (uint64, error) {
	a, err := unpackState(ref.Data, acctTypeAccount)
	if err != nil {
		return 0, ErrInvalidState
	}
	if keyAt(a.base, accMint) != mint {
		return 0, ErrMintMismatch
	}
	if ref.Owner != p.id {
		return 0, ErrInvalidState
	}
	v, err := a.ext(extTransferFeeAmount, acctTypeAccount)
	if err != nil {
		return 0, ErrInvalidState
	}
	w := u64At(v, 0)
	putU64(v, 0, 0)
	return w, nil
}

func (p *t22) harvestToMint() error {
	mintRef, err := p.account(0)
	if err != nil {
		return err
	}
	if err := p.own(mintRef); err != nil {
		return err
	}
	m, err := unpackState(mintRef.Data, acctTypeMint)
	if err != nil {
		return err
	}
	v, err := m.ext(extTransferFeeConfig, acctTypeMint)
	if err != nil {
		return err
	}
	for _, a := range p.rest(1) {
		w, err := p.harvest(mintRef.Key, a)
		if err != nil {
			p.ctx.Logf("Error harvesting from %s: %s", a.Key, errorText[err.(*runtime.InstructionError).Code])
			continue
		}
		sum, err := checkedAdd(u64At(v, 64), w)
		if err != nil {
			return err
		}
		putU64(v, 64, sum)
	}
	return nil
}

func (p *t22) withdrawWithheldFromAccounts(numAccounts uint8) error {
	accts, err := p.accounts(3)
	if err != nil {
		return err
	}
	mintRef, dstRef := accts[0], accts[1]
	others := p.rest(3)
	numSigners := max(len(others)-int(numAccounts), 0)
	_, dst, err := p.withheldWithdrawal(mintRef, dstRef, accts[2], others[:numSigners])
	if err != nil {
		return err
	}
	for _, a := range others[numSigners:] {
		var w uint64
		if a.Key == dstRef.Key {
			fv, err := dst.ext(extTransferFeeAmount, acctTypeAccount)
			if err != nil {
				return ErrInvalidState
			}
			w = u64At(fv, 0)
			putU64(fv, 0, 0)
		} else if w, err = p.harvest(mintRef.Key, a); err != nil {
			p.ctx.Logf("Error harvesting from %s: %s", a.Key, errorText[err.(*runtime.InstructionError).Code])
			continue
		}
		sum, err := checkedAdd(u64At(dst.base, accAmount), w)
		if err != nil {
			return err
		}
		putU64(dst.base, accAmount, sum)
	}
	return nil
}

func (p *t22) defaultAccountStateExtension(d []byte) error {
	// The program decodes the sub-instruction and the state together:
	// any malformed input is InvalidInstruction.
	if len(d) != 2 || d[0] > 1 || d[1] > stateFrozen {
		return ErrInvalidInstruction
	}
	state := d[1]
	if d[0] == 0 {
		p.log("DefaultAccountStateInstruction::Initialize")
	} else {
		p.log("DefaultAccountStateInstruction::Update")
	}
	if state == stateUninitialized {
		return ErrInvalidState
	}
	if d[0] == 0 {
		return p.initMintExt(extDefaultAccountState, func(v []byte) error { v[0] = state; return nil })
	}
	accts, err := p.accounts(2)
	if err != nil {
		return err
	}
	mint, auth := accts[0], accts[1]
	if err := p.own(mint); err != nil {
		return err
	}
	m, err := unpackState(mint.Data, acctTypeMint)
	if err != nil {
		return err
	}
	fa, ok := tOpt(m.base, mintFreeze)
	if !ok {
		return ErrNoAuthorityExists
	}
	if err := p.validateOwner(fa, auth, p.rest(2)); err != nil {
		return err
	}
	v, err := m.ext(extDefaultAccountState, acctTypeMint)
	if err != nil {
		return err
	}
	v[0] = state
	return nil
}

// toggleAccountFlag is MemoTransfer's and CpiGuard's Enable / Disable: the
// account's owner signs and the 1-byte extension is set, created if
// there is room for it.
func (p *t22) toggleAccountFlag(d []byte, t uint16, name string) error {
	sub, err := subInstruction(d, 2)
	if err != nil {
		return err
	}
	enable := sub == 0
	if enable {
		p.log(name + "::Enable")
	} else {
		p.log(name + "::Disable")
	}
	accts, err := p.accounts(2)
	if err != nil {
		return err
	}
	ref, owner := accts[0], accts[1]
	if err := p.own(ref); err != nil {
		return err
	}
	a, err := unpackState(ref.Data, acctTypeAccount)
	if err != nil {
		return err
	}
	if err := p.validateOwner(keyAt(a.base, accOwner), owner, p.rest(2)); err != nil {
		return err
	}
	if t == extCpiGuard && p.inCPI() {
		return ErrCpiGuardSettingsLocked
	}
	v, err := a.ext(t, acctTypeAccount)
	if err != nil {
		if v, err = a.initExt(t, acctTypeAccount, true); err != nil {
			return err
		}
	}
	v[0] = 0
	if enable {
		v[0] = 1
	}
	return nil
}

func (p *t22) interestBearingExtension(d []byte) error {
	sub, err := subInstruction(d, 2)
	if err != nil {
		return err
	}
	now := p.ctx.Env().UnixTimestamp
	if sub == 0 {
		p.log("InterestBearingMintInstruction::Initialize")
		data, err := decodeExact(d, 34)
		if err != nil {
			return err
		}
		return p.initMintExt(extInterestBearingConfig, func(v []byte) error {
			copy(v[0:32], data[0:32])
			putU64(v, 32, uint64(now))
			copy(v[40:42], data[32:34])
			putU64(v, 42, uint64(now))
			copy(v[50:52], data[32:34])
			return nil
		})
	}
	p.log("InterestBearingMintInstruction::UpdateRate")
	data, err := decodeExact(d, 2)
	if err != nil {
		return err
	}
	v, err := p.mintExtUpdate(extInterestBearingConfig, 0, ErrNoAuthorityExists)
	if err != nil {
		return err
	}
	avg, ok := timeWeightedAverageRate(v, now)
	if !ok {
		return ErrOverflow
	}
	binary.LittleEndian.PutUint16(v[40:], uint16(avg))
	putU64(v, 42, uint64(now))
	copy(v[50:52], data)
	return nil
}

// pointerExtension handles the pointer-style extensions (MetadataPointer,
// GroupPointer, GroupMemberPointer, TransferHook): Initialize writes the
// authority and address, Update (by the authority) the address.
func (p *t22) pointerExtension(d []byte, t uint16, _ uint8, name string) error {
	sub, err := subInstruction(d, 2)
	if err != nil {
		return err
	}
	if sub == 0 {
		p.log(name + "::Initialize")
		data, err := decodeExact(d, 64)
		if err != nil {
			return err
		}
		return p.initMintExt(t, func(v []byte) error {
			copy(v[0:32], data[0:32])
			_, hasAuth := nonZero(data[0:32])
			addr, hasAddr := nonZero(data[32:64])
			if t == extTransferHook {
				if hasAddr && addr == p.id {
					return runtime.ErrIncorrectProgramID
				}
				if !hasAddr && !hasAuth {
					p.log("The transfer hook extension requires at least an authority or a program id for initialization, neither was provided")
					return ErrInvalidInstruction
				}
			} else if !hasAuth && !hasAddr {
				p.log("The " + name + " extension requires at least an authority or an address for initialization, neither was provided")
				return ErrInvalidInstruction
			}
			copy(v[32:64], data[32:64])
			return nil
		})
	}
	p.log(name + "::Update")
	data, err := decodeExact(d, 32)
	if err != nil {
		return err
	}
	v, err := p.mintExtUpdate(t, 0, ErrNoAuthorityExists)
	if err != nil {
		return err
	}
	if t == extTransferHook {
		if addr, ok := nonZero(data); ok && addr == p.id {
			return runtime.ErrIncorrectProgramID
		}
	}
	copy(v[32:64], data)
	return nil
}

func (p *t22) scaledUiAmountExtension(d []byte) error {
	sub, err := subInstruction(d, 2)
	if err != nil {
		return err
	}
	if sub == 0 {
		p.log("ScaledUiAmountMintInstruction::Initialize")
		data, err := decodeExact(d, 40)
		if err != nil {
			return err
		}
		return p.initMintExt(extScaledUiAmount, func(v []byte) error {
			copy(v[0:32], data[0:32])
			if !validMultiplier(data[32:40]) {
				return ErrInvalidScale
			}
			copy(v[32:40], data[32:40])
			putU64(v, 40, 0)
			copy(v[48:56], data[32:40])
			return nil
		})
	}
	p.log("ScaledUiAmountMintInstruction::UpdateScale")
	data, err := decodeExact(d, 16)
	if err != nil {
		return err
	}
	v, err := p.mintExtUpdate(extScaledUiAmount, 0, ErrNoAuthorityExists)
	if err != nil {
		return err
	}
	if !validMultiplier(data[0:8]) {
		return ErrInvalidScale
	}
	now := p.ctx.Env().UnixTimestamp
	if now >= int64(u64At(v, 40)) {
		copy(v[32:40], v[48:56])
	}
	copy(v[48:56], data[0:8])
	ts := int64(binary.LittleEndian.Uint64(data[8:]))
	putU64(v, 40, uint64(max(ts, 0)))
	if now >= ts {
		copy(v[32:40], data[0:8])
	}
	return nil
}

func (p *t22) pausableExtension(d []byte) error {
	sub, err := subInstruction(d, 3)
	if err != nil {
		return err
	}
	if sub == 0 {
		p.log("PausableInstruction::Initialize")
		data, err := decodeExact(d, 32)
		if err != nil {
			return err
		}
		return p.initMintExt(extPausable, func(v []byte) error {
			k := solana.PublicKeyFromBytes(data)
			return putNonZero(v, &k)
		})
	}
	if sub == 1 {
		p.log("PausableInstruction::Pause")
	} else {
		p.log("PausableInstruction::Resume")
	}
	v, err := p.mintExtUpdate(extPausable, 0, ErrAuthorityTypeNotSupported)
	if err != nil {
		return err
	}
	v[32] = 0
	if sub == 1 {
		v[32] = 1
	}
	return nil
}

func (p *t22) permissionedBurnExtension(d []byte) error {
	sub, err := subInstruction(d, 4)
	if err != nil {
		return err
	}
	switch sub {
	case 0:
		p.log("PermissionedBurnInstruction::Initialize")
		data, err := decodeExact(d, 32)
		if err != nil {
			return err
		}
		return p.initMintExt(extPermissionedBurn, func(v []byte) error {
			k := solana.PublicKeyFromBytes(data)
			return putNonZero(v, &k)
		})
	case 1, 2:
		n := 8
		if sub == 2 {
			n = 9
		}
		p.log("PermissionedBurnInstruction::Burn")
		data, err := decodeExact(d, n)
		if err != nil {
			return err
		}
		var dec *uint8
		if n == 9 {
			dec = &data[8]
		}
		return p.burn(binary.LittleEndian.Uint64(data), dec, true)
	}
	p.log("PermissionedBurnInstruction::ConfidentialBurn")
	return runtime.ErrInvalidInstructionData
}

// reallocate grows a token account to fit more account extensions, the
// payer covering the extra rent through the System program.
func (p *t22) reallocate(exts []uint16) error {
	accts, err := p.accounts(4)
	if err != nil {
		return err
	}
	ref, payer, auth := accts[0], accts[1], accts[3]
	if err := p.own(ref); err != nil {
		return err
	}
	a, err := unpackState(ref.Data, acctTypeAccount)
	if err != nil {
		return err
	}
	if err := checkStrictAccount(a.base); err != nil {
		return err
	}
	if err := p.validateOwner(keyAt(a.base, accOwner), auth, p.rest(4)); err != nil {
		return err
	}
	native := tIsNative(a.base)
	nativeAmount := u64At(a.base, accAmount)
	current, _, err := a.types()
	if err != nil {
		return err
	}
	for _, t := range exts {
		if extAccountType(t) != acctTypeAccount {
			return ErrInvalidState
		}
	}
	need, err := accountLen(acctTypeAccount, append(current, exts...))
	if err != nil {
		return err
	}
	if len(ref.Data) >= need {
		return nil
	}
	p.ctx.Logf("account needs resize, +%d bytes", need-len(ref.Data))
	grown := make([]byte, need)
	copy(grown, ref.Data)
	ref.Data = grown
	reserve := p.ctx.Env().Rent.MinimumBalance(need)
	held := ref.Lamports
	if native {
		if held, err = checkedSub(held, nativeAmount); err != nil {
			return err
		}
	}
	if diff := reserve - min(reserve, held); diff > 0 {
		if err := p.ctx.Invoke(spl.SystemTransfer(payer.Key, ref.Key, diff)); err != nil {
			return err
		}
	}
	ref.Data[accountTypeOffset] = acctTypeAccount
	if native {
		if ref.Lamports < reserve+nativeAmount || reserve+nativeAmount < reserve {
			return ErrInvalidState
		}
		clear(ref.Data[accIsNative : accIsNative+12])
		ref.Data[accIsNative] = 1
		putU64(ref.Data, accIsNative+4, reserve)
	}
	return nil
}

// checkStrictAccount is the strict Account::unpack of the non-Pod state
// (Reallocate uses it): option tags must be 0 or 1.
func checkStrictAccount(a []byte) error {
	for _, off := range []int{accDelegate, accIsNative, accClose} {
		if tag := binary.LittleEndian.Uint32(a[off:]); tag > 1 {
			return runtime.ErrInvalidAccountData
		}
	}
	return nil
}

// createNativeMint creates Token-2022's wrapped-SOL mint at its fixed
// address through the System program.
func (p *t22) createNativeMint() error {
	accts, err := p.accounts(3)
	if err != nil {
		return err
	}
	payer, mint := accts[0], accts[1]
	if mint.Key != p.nativeMint {
		return ErrInvalidMint
	}
	minimum := p.ctx.Env().Rent.MinimumBalance(spl.MintSize)
	diff := minimum - min(minimum, mint.Lamports)
	if err := p.ctx.Invoke(spl.SystemTransfer(payer.Key, mint.Key, diff)); err != nil {
		return err
	}
	seeds := [][]byte{[]byte("native-mint"), {255}}
	if err := p.ctx.Invoke(spl.SystemAllocate(mint.Key, spl.MintSize), seeds); err != nil {
		return err
	}
	if err := p.ctx.Invoke(spl.SystemAssign(mint.Key, p.id), seeds); err != nil {
		return err
	}
	clear(mint.Data)
	mint.Data[mintDecimals] = 9
	mint.Data[mintInit] = 1
	return nil
}

func (p *t22) withdrawExcessLamports() error {
	accts, err := p.accounts(3)
	if err != nil {
		return err
	}
	srcRef, dstRef, auth := accts[0], accts[1], accts[2]
	signers := p.rest(3)
	if err := p.own(srcRef); err != nil {
		return err
	}
	if a, err := unpackState(srcRef.Data, acctTypeAccount); err == nil {
		if tIsNative(a.base) {
			return ErrNativeNotSupported
		}
		if err := p.validateOwner(keyAt(a.base, accOwner), auth, signers); err != nil {
			return err
		}
	} else if m, err := unpackState(srcRef.Data, acctTypeMint); err == nil {
		if ma, ok := tOpt(m.base, mintAuthority); ok {
			if err := p.validateOwner(ma, auth, signers); err != nil {
				return err
			}
		} else if tOptUnwrapOr(m.base, mintAuthority, solana.PublicKey{}).IsZero() && srcRef.Key == auth.Key {
			if !auth.IsSigner {
				return runtime.ErrMissingRequiredSignature
			}
		} else {
			return ErrAuthorityTypeNotSupported
		}
	} else if len(srcRef.Data) == spl.MultisigSize {
		if err := p.validateOwner(srcRef.Key, auth, signers); err != nil {
			return err
		}
	} else {
		return ErrInvalidState
	}
	excess, err := checkedSub(srcRef.Lamports, p.ctx.Env().Rent.MinimumBalance(len(srcRef.Data)))
	if err != nil {
		return ErrNotRentExempt
	}
	srcRef.Lamports -= excess
	if dstRef.Lamports, err = checkedAdd(dstRef.Lamports, excess); err != nil {
		return err
	}
	return nil
}

func (p *t22) unwrapLamports(amount *uint64) error {
	accts, err := p.accounts(3)
	if err != nil {
		return err
	}
	srcRef, dstRef, auth := accts[0], accts[1], accts[2]
	if err := p.own(srcRef); err != nil {
		return err
	}
	a, err := unpackState(srcRef.Data, acctTypeAccount)
	if err != nil {
		return err
	}
	move, left := u64At(a.base, accAmount), uint64(0)
	if amount != nil {
		if u64At(a.base, accAmount) < *amount {
			return ErrInsufficientFunds
		}
		move, left = *amount, u64At(a.base, accAmount)-*amount
	}
	if !tIsNative(a.base) {
		return ErrNonNativeNotSupported
	}
	signers := p.rest(3)
	if d, ok := tOpt(a.base, accDelegate); ok && d == auth.Key {
		if err := p.validateOwner(d, auth, signers); err != nil {
			return err
		}
		delegated := u64At(a.base, accDelegatedAmt)
		if delegated < move {
			return ErrInsufficientFunds
		}
		putU64(a.base, accDelegatedAmt, delegated-move)
		if delegated == move {
			tSetOpt(a.base, accDelegate, nil)
		}
	} else if err := p.validateOwner(keyAt(a.base, accOwner), auth, signers); err != nil {
		return err
	}
	if v, err := a.ext(extCpiGuard, acctTypeAccount); err == nil && v[0] != 0 && p.inCPI() {
		return ErrCpiGuardTransferBlocked
	}
	if move == 0 {
		return nil
	}
	putU64(a.base, accAmount, left)
	if srcRef.Key != dstRef.Key {
		srcRef.Lamports -= move
		if dstRef.Lamports, err = checkedAdd(dstRef.Lamports, move); err != nil {
			return err
		}
	}
	return nil
}
