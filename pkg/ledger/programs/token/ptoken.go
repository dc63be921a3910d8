package token

import (
	"encoding/binary"
	"unicode/utf8"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// ptoken is one execution of the SPL Token program. Mainnet's SPL Token
// is p-token (solana-program/token, pinocchio/program), a byte-for-byte
// reimplementation that works on the account bytes in place: its check
// order, errors and written bytes are what this follows. Notable
// consequences: a cleared COption keeps its old key bytes (only the tag's
// first byte is written), initialization writes only the fields it sets,
// an account's owner is checked only where the program does (writes to an
// account it does not own fail in the runtime instead), and a delegate may
// revoke its own approval.
type ptoken struct {
	*Program
	ctx *runtime.Context
}

// p-token instruction discriminators beyond the classic set.
const (
	opWithdrawExcessLamports = 38
	opUnwrapLamports         = 45
	opBatch                  = 255
)

func (p *ptoken) account(i int) (*runtime.AccountRef, error) { return p.ctx.Account(i) }

// accounts returns instruction accounts [0, n) or NotEnoughAccountKeys.
func (p *ptoken) accounts(n int) ([]*runtime.AccountRef, error) { return p.ctx.Accounts(n) }

// rest returns the instruction accounts from i on.
func (p *ptoken) rest(i int) []*runtime.AccountRef {
	var out []*runtime.AccountRef
	for ; i < p.ctx.NumAccounts(); i++ {
		a, _ := p.ctx.Account(i)
		out = append(out, a)
	}
	return out
}

// pOpt reads a p-token COption<Pubkey>: only the tag's first byte counts.
func pOpt(b []byte, off int) (solana.PublicKey, bool) {
	if b[off] != 1 {
		return solana.PublicKey{}, false
	}
	return keyAt(b, off+4), true
}

func pSetOpt(b []byte, off int, k solana.PublicKey) {
	b[off] = 1
	putKey(b, off+4, k)
}

// pClearOpt clears a p-token COption: the key bytes stay.
func pClearOpt(b []byte, off int) { b[off] = 0 }

// pIsNative reads is_native's tag byte.
func pIsNative(a accountState) bool { return a[accIsNative] == 1 }

// loadAccount is load::<Account>: 165 bytes, a valid, initialized state.
func (p *ptoken) loadAccount(ref *runtime.AccountRef) (accountState, error) {
	if len(ref.Data) != spl.TokenAccountSize {
		return nil, runtime.ErrInvalidAccountData
	}
	a := accountState(ref.Data)
	switch a.state() {
	case stateUninitialized:
		return nil, runtime.ErrUninitializedAccount
	case stateInitialized, stateFrozen:
		return a, nil
	}
	return nil, runtime.ErrInvalidAccountData
}

// loadMint is load::<Mint>: 82 bytes, is_initialized 1 (0: uninitialized,
// anything else: invalid).
func (p *ptoken) loadMint(ref *runtime.AccountRef) (mintState, error) {
	if len(ref.Data) != spl.MintSize {
		return nil, runtime.ErrInvalidAccountData
	}
	switch ref.Data[mintInit] {
	case 0:
		return nil, runtime.ErrUninitializedAccount
	case 1:
		return mintState(ref.Data), nil
	}
	return nil, runtime.ErrInvalidAccountData
}

func (p *ptoken) checkOwner(ref *runtime.AccountRef) error {
	if ref.Owner != p.id {
		return runtime.ErrIncorrectProgramID
	}
	return nil
}

// validateOwner is p-token's validate_owner: the authority must be the
// expected key and sign, or be an initialized multisig of either token
// program whose signers include at least M of the given signer accounts,
// each of them signing.
func (p *ptoken) validateOwner(expected solana.PublicKey, auth *runtime.AccountRef, signers []*runtime.AccountRef) error {
	if expected != auth.Key {
		return ErrOwnerMismatch
	}
	if len(auth.Data) == spl.MultisigSize && spl.IsTokenProgram(auth.Owner) {
		return checkMultisig(auth.Data, signers, true)
	}
	if !auth.IsSigner {
		return runtime.ErrMissingRequiredSignature
	}
	return nil
}

// checkMultisig counts the multisig's signers among signers. strictInit
// is p-token's reading of is_initialized (0 or 1, anything else invalid);
// Token-2022 takes any non-zero value.
func checkMultisig(data []byte, signers []*runtime.AccountRef, strictInit bool) error {
	switch data[msInit] {
	case 0:
		return runtime.ErrUninitializedAccount
	case 1:
	default:
		if strictInit {
			return runtime.ErrInvalidAccountData
		}
	}
	n := min(int(data[msN]), spl.MaxSigners)
	var matched [spl.MaxSigners]bool
	var count uint8
	for _, s := range signers {
		for pos := 0; pos < n; pos++ {
			if keyAt(data, msSigners+32*pos) == s.Key && !matched[pos] {
				if !s.IsSigner {
					return runtime.ErrMissingRequiredSignature
				}
				matched[pos] = true
				count++
			}
		}
	}
	if count < data[msM] {
		return runtime.ErrMissingRequiredSignature
	}
	return nil
}

// rentFrom reads the Rent sysvar passed as an account (from_account_info:
// the key must be the sysvar's).
func (p *ptoken) rentFrom(ref *runtime.AccountRef) (runtime.Rent, error) {
	if ref.Key != spl.SysvarRentID {
		return runtime.Rent{}, runtime.ErrInvalidArgument
	}
	return p.ctx.Env().Rent, nil
}

func unpackAmount(d []byte) (uint64, error) {
	if len(d) < 8 {
		return 0, ErrInvalidInstruction
	}
	return binary.LittleEndian.Uint64(d), nil
}

func unpackAmountDecimals(d []byte) (uint64, uint8, error) {
	if len(d) < 9 {
		return 0, 0, ErrInvalidInstruction
	}
	return binary.LittleEndian.Uint64(d), d[8], nil
}

// process runs one p-token instruction (data includes the discriminator).
// batch is false inside a Batch, where another Batch is not allowed.
func (p *ptoken) process(data []byte, batch bool) error {
	if len(data) == 0 {
		return ErrInvalidInstruction
	}
	op, d := data[0], data[1:]
	if op == opBatch {
		if !batch {
			return ErrInvalidInstruction
		}
		return p.batch(d)
	}
	if name := spl.TokenOp(op).String(); op <= byte(spl.TokenUiAmountToAmountOp) || op == opWithdrawExcessLamports || op == opUnwrapLamports {
		p.ctx.Log("Instruction: " + name)
	}
	switch spl.TokenOp(op) {
	case spl.TokenInitializeMintOp:
		return p.initializeMint(d, true)
	case spl.TokenInitializeMint2Op:
		return p.initializeMint(d, false)
	case spl.TokenInitializeAccountOp:
		return p.initializeAccount(nil, true)
	case spl.TokenInitializeAccount2Op, spl.TokenInitializeAccount3Op:
		if len(d) < 32 {
			return runtime.ErrInvalidInstructionData
		}
		owner := solana.PublicKeyFromBytes(d[:32])
		return p.initializeAccount(&owner, spl.TokenOp(op) == spl.TokenInitializeAccount2Op)
	case spl.TokenInitializeMultisigOp, spl.TokenInitializeMultisig2Op:
		if len(d) < 1 {
			return runtime.ErrInvalidInstructionData
		}
		return p.initializeMultisig(d[0], spl.TokenOp(op) == spl.TokenInitializeMultisigOp)
	case spl.TokenTransferOp:
		amount, err := unpackAmount(d)
		if err != nil {
			return err
		}
		return p.transfer(amount, nil)
	case spl.TokenTransferCheckedOp:
		amount, dec, err := unpackAmountDecimals(d)
		if err != nil {
			return err
		}
		return p.transfer(amount, &dec)
	case spl.TokenApproveOp:
		amount, err := unpackAmount(d)
		if err != nil {
			return err
		}
		return p.approve(amount, nil)
	case spl.TokenApproveCheckedOp:
		amount, dec, err := unpackAmountDecimals(d)
		if err != nil {
			return err
		}
		return p.approve(amount, &dec)
	case spl.TokenRevokeOp:
		return p.revoke()
	case spl.TokenSetAuthorityOp:
		return p.setAuthority(d)
	case spl.TokenMintToOp:
		amount, err := unpackAmount(d)
		if err != nil {
			return err
		}
		return p.mintTo(amount, nil)
	case spl.TokenMintToCheckedOp:
		amount, dec, err := unpackAmountDecimals(d)
		if err != nil {
			return err
		}
		return p.mintTo(amount, &dec)
	case spl.TokenBurnOp:
		amount, err := unpackAmount(d)
		if err != nil {
			return err
		}
		return p.burn(amount, nil)
	case spl.TokenBurnCheckedOp:
		amount, dec, err := unpackAmountDecimals(d)
		if err != nil {
			return err
		}
		return p.burn(amount, &dec)
	case spl.TokenCloseAccountOp:
		return p.closeAccount()
	case spl.TokenFreezeAccountOp:
		return p.toggleFreeze(true)
	case spl.TokenThawAccountOp:
		return p.toggleFreeze(false)
	case spl.TokenSyncNativeOp:
		return p.syncNative()
	case spl.TokenGetAccountDataSizeOp:
		return p.getAccountDataSize()
	case spl.TokenInitializeImmutableOwnerOp:
		return p.initializeImmutableOwner()
	case spl.TokenAmountToUiAmountOp:
		if len(d) != 8 {
			return runtime.ErrInvalidInstructionData
		}
		return p.amountToUiAmount(binary.LittleEndian.Uint64(d))
	case spl.TokenUiAmountToAmountOp:
		if !utf8.Valid(d) {
			return ErrInvalidInstruction
		}
		return p.uiAmountToAmount(string(d))
	case opWithdrawExcessLamports:
		return p.withdrawExcessLamports()
	case opUnwrapLamports:
		return p.unwrapLamports(d)
	}
	return ErrInvalidInstruction
}

// batch is p-token's Batch (255): a sequence of [accounts count, data
// length, data] headers, each run on the next accounts.
func (p *ptoken) batch(d []byte) error {
	first := 0
	for {
		if len(d) < 2 {
			return runtime.ErrInvalidInstructionData
		}
		n, end := int(d[0]), 2+int(d[1])
		if len(d) < end {
			return runtime.ErrInvalidInstructionData
		}
		if p.ctx.NumAccounts()-first < n {
			return runtime.ErrNotEnoughAccountKeys
		}
		sub := &ptoken{Program: p.Program, ctx: p.ctx.Sub(first, n)}
		if err := sub.process(d[2:end], false); err != nil {
			return err
		}
		if end == len(d) {
			return nil
		}
		first += n
		d = d[end:]
	}
}

func (p *ptoken) initializeMint(d []byte, rentSysvar bool) error {
	if len(d) < 34 {
		return ErrInvalidInstruction
	}
	decimals, authority := d[0], solana.PublicKeyFromBytes(d[1:33])
	var freeze *solana.PublicKey
	switch {
	case d[33] == 0:
	case d[33] == 1 && len(d) >= 66:
		k := solana.PublicKeyFromBytes(d[34:66])
		freeze = &k
	default:
		return ErrInvalidInstruction
	}
	n := 1
	if rentSysvar {
		n = 2
	}
	accts, err := p.accounts(n)
	if err != nil {
		return err
	}
	mint := accts[0]
	rent := p.ctx.Env().Rent
	if rentSysvar {
		if rent, err = p.rentFrom(accts[1]); err != nil {
			return err
		}
	}
	exempt := mint.Lamports >= rent.MinimumBalance(len(mint.Data))
	if len(mint.Data) != spl.MintSize {
		return runtime.ErrInvalidAccountData
	}
	switch mint.Data[mintInit] {
	case 0:
	case 1:
		return ErrAlreadyInUse
	default:
		return runtime.ErrInvalidAccountData
	}
	if !exempt {
		return ErrNotRentExempt
	}
	mint.Data[mintInit] = 1
	pSetOpt(mint.Data, mintAuthority, authority)
	mint.Data[mintDecimals] = decimals
	if freeze != nil {
		pSetOpt(mint.Data, mintFreeze, *freeze)
	}
	return nil
}

func (p *ptoken) initializeAccount(owner *solana.PublicKey, rentSysvar bool) error {
	n := 2
	if owner == nil {
		n = 3
	}
	accts, err := p.accounts(n)
	if err != nil {
		return err
	}
	acct, mint := accts[0], accts[1]
	if owner == nil {
		owner = &accts[2].Key
	}
	rent := p.ctx.Env().Rent
	if rentSysvar {
		r, err := p.account(n)
		if err != nil {
			return err
		}
		if rent, err = p.rentFrom(r); err != nil {
			return err
		}
	}
	minimum := rent.MinimumBalance(len(acct.Data))
	native := mint.Key == p.nativeMint
	if len(acct.Data) != spl.TokenAccountSize {
		return runtime.ErrInvalidAccountData
	}
	a := accountState(acct.Data)
	switch a.state() {
	case stateUninitialized:
	case stateInitialized, stateFrozen:
		return ErrAlreadyInUse
	default:
		return runtime.ErrInvalidAccountData
	}
	if acct.Lamports < minimum {
		return ErrNotRentExempt
	}
	if !native {
		if err := p.checkOwner(mint); err != nil {
			return err
		}
		if _, err := p.loadMint(mint); err != nil {
			return ErrInvalidMint
		}
	}
	a[accState] = stateInitialized
	putKey(a, accMint, mint.Key)
	putKey(a, accOwner, *owner)
	if native {
		a[accIsNative] = 1
		putU64(a, accIsNative+4, minimum)
		a.setAmount(acct.Lamports - minimum)
	}
	return nil
}

func (p *ptoken) initializeMultisig(m uint8, rentSysvar bool) error {
	n := 1
	if rentSysvar {
		n = 2
	}
	accts, err := p.accounts(n)
	if err != nil {
		return err
	}
	ms := accts[0]
	rent := p.ctx.Env().Rent
	if rentSysvar {
		if rent, err = p.rentFrom(accts[1]); err != nil {
			return err
		}
	}
	exempt := ms.Lamports >= rent.MinimumBalance(len(ms.Data))
	if len(ms.Data) != spl.MultisigSize {
		return runtime.ErrInvalidAccountData
	}
	switch ms.Data[msInit] {
	case 0:
	case 1:
		return ErrAlreadyInUse
	default:
		return runtime.ErrInvalidAccountData
	}
	if !exempt {
		return ErrNotRentExempt
	}
	return initMultisig(ms.Data, m, p.rest(n))
}

// transferRefs are the accounts of a transfer instruction.
type transferRefs struct {
	src, mint, dst, auth *runtime.AccountRef // mint is nil for Transfer
	signers              []*runtime.AccountRef
}

// transferAccounts reads the accounts of Transfer (source, destination,
// authority) or, when checked, of TransferChecked (source, mint,
// destination, authority), and the multisig signers after them. Both token
// programs lay them out alike.
func (p *ptoken) transferAccounts(checked bool) (transferRefs, error) {
	n := 3
	if checked {
		n = 4
	}
	accts, err := p.accounts(n)
	if err != nil {
		return transferRefs{}, err
	}
	r := transferRefs{src: accts[0], dst: accts[1], auth: accts[2], signers: p.rest(n)}
	if checked {
		r.mint, r.dst, r.auth = accts[1], accts[2], accts[3]
	}
	return r, nil
}

func (p *ptoken) transfer(amount uint64, decimals *uint8) error {
	r, err := p.transferAccounts(decimals != nil)
	if err != nil {
		return err
	}
	srcRef, mintRef, dstRef, auth, signers := r.src, r.mint, r.dst, r.auth, r.signers
	src, err := p.loadAccount(srcRef)
	if err != nil {
		return err
	}
	self := srcRef.Key == dstRef.Key
	var dst accountState
	if self {
		if src.state() == stateFrozen {
			return ErrAccountFrozen
		}
		if src.amount() < amount {
			return ErrInsufficientFunds
		}
	} else {
		if dst, err = p.loadAccount(dstRef); err != nil {
			return err
		}
		if src.state() == stateFrozen || dst.state() == stateFrozen {
			return ErrAccountFrozen
		}
		if src.amount() < amount {
			return ErrInsufficientFunds
		}
		if src.mint() != dst.mint() {
			return ErrMintMismatch
		}
	}
	if decimals != nil {
		if mintRef.Key != src.mint() {
			return ErrMintMismatch
		}
		m, err := p.loadMint(mintRef)
		if err != nil {
			return err
		}
		if *decimals != m.decimals() {
			return ErrMintDecimalsMismatch
		}
	}
	if d, ok := pOpt(src, accDelegate); ok && d == auth.Key {
		if err := p.validateOwner(auth.Key, auth, signers); err != nil {
			return err
		}
		if src.delegatedAmount() < amount {
			return ErrInsufficientFunds
		}
		if !self {
			left := src.delegatedAmount() - amount
			src.setDelegatedAmount(left)
			if left == 0 {
				pClearOpt(src, accDelegate)
			}
		}
	} else if err := p.validateOwner(src.owner(), auth, signers); err != nil {
		return err
	}
	if self || amount == 0 {
		if err := p.checkOwner(srcRef); err != nil {
			return err
		}
		return p.checkOwner(dstRef)
	}
	src.setAmount(src.amount() - amount)
	sum, err := checkedAdd(dst.amount(), amount)
	if err != nil {
		return err
	}
	dst.setAmount(sum)
	if pIsNative(src) {
		if srcRef.Lamports, err = checkedSub(srcRef.Lamports, amount); err != nil {
			return err
		}
		if dstRef.Lamports, err = checkedAdd(dstRef.Lamports, amount); err != nil {
			return err
		}
	}
	return nil
}

func (p *ptoken) approve(amount uint64, decimals *uint8) error {
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
	src, err := p.loadAccount(srcRef)
	if err != nil {
		return err
	}
	if src.state() == stateFrozen {
		return ErrAccountFrozen
	}
	if decimals != nil {
		if mintRef.Key != src.mint() {
			return ErrMintMismatch
		}
		m, err := p.loadMint(mintRef)
		if err != nil {
			return err
		}
		if *decimals != m.decimals() {
			return ErrMintDecimalsMismatch
		}
	}
	if err := p.validateOwner(src.owner(), owner, p.rest(n)); err != nil {
		return err
	}
	pSetOpt(src, accDelegate, delegate.Key)
	src.setDelegatedAmount(amount)
	return nil
}

func (p *ptoken) revoke() error {
	srcRef, err := p.account(0)
	if err != nil {
		return err
	}
	src, err := p.loadAccount(srcRef)
	if err != nil {
		return err
	}
	auth, err := p.account(1)
	if err != nil {
		return err
	}
	if src.state() == stateFrozen {
		return ErrAccountFrozen
	}
	expected := src.owner()
	if d, ok := pOpt(src, accDelegate); ok && d == auth.Key {
		expected = auth.Key
	}
	if err := p.validateOwner(expected, auth, p.rest(2)); err != nil {
		return err
	}
	pClearOpt(src, accDelegate)
	src.setDelegatedAmount(0)
	return nil
}

func (p *ptoken) setAuthority(d []byte) error {
	if len(d) < 2 {
		return ErrInvalidInstruction
	}
	kind := spl.AuthorityType(d[0])
	if kind > spl.AuthorityCloseAccount {
		return ErrInvalidInstruction
	}
	var newAuth *solana.PublicKey
	switch {
	case d[1] == 0:
	case d[1] == 1 && len(d) >= 34:
		k := solana.PublicKeyFromBytes(d[2:34])
		newAuth = &k
	default:
		return ErrInvalidInstruction
	}
	accts, err := p.accounts(2)
	if err != nil {
		return err
	}
	target, auth := accts[0], accts[1]
	signers := p.rest(2)
	switch len(target.Data) {
	case spl.TokenAccountSize:
		a, err := p.loadAccount(target)
		if err != nil {
			return err
		}
		if a.state() == stateFrozen {
			return ErrAccountFrozen
		}
		switch kind {
		case spl.AuthorityAccountOwner:
			if err := p.validateOwner(a.owner(), auth, signers); err != nil {
				return err
			}
			if newAuth == nil {
				return ErrInvalidInstruction
			}
			putKey(a, accOwner, *newAuth)
			pClearOpt(a, accDelegate)
			a.setDelegatedAmount(0)
			if pIsNative(a) {
				pClearOpt(a, accClose)
			}
		case spl.AuthorityCloseAccount:
			expected := a.owner()
			if c, ok := pOpt(a, accClose); ok {
				expected = c
			}
			if err := p.validateOwner(expected, auth, signers); err != nil {
				return err
			}
			if newAuth != nil {
				pSetOpt(a, accClose, *newAuth)
			} else {
				pClearOpt(a, accClose)
			}
		default:
			return ErrAuthorityTypeNotSupported
		}
		return nil
	case spl.MintSize:
		m, err := p.loadMint(target)
		if err != nil {
			return err
		}
		var off int
		switch kind {
		case spl.AuthorityMintTokens:
			off = mintAuthority
		case spl.AuthorityFreezeAccount:
			off = mintFreeze
		default:
			return ErrAuthorityTypeNotSupported
		}
		cur, ok := pOpt(m, off)
		if !ok {
			if kind == spl.AuthorityMintTokens {
				return ErrFixedSupply
			}
			return ErrMintCannotFreeze
		}
		if err := p.validateOwner(cur, auth, signers); err != nil {
			return err
		}
		if newAuth != nil {
			pSetOpt(m, off, *newAuth)
		} else {
			pClearOpt(m, off)
		}
		return nil
	}
	return runtime.ErrInvalidArgument
}

func (p *ptoken) mintTo(amount uint64, decimals *uint8) error {
	accts, err := p.accounts(3)
	if err != nil {
		return err
	}
	mintRef, dstRef, auth := accts[0], accts[1], accts[2]
	dst, err := p.loadAccount(dstRef)
	if err != nil {
		return err
	}
	if dst.state() == stateFrozen {
		return ErrAccountFrozen
	}
	if pIsNative(dst) {
		return ErrNativeNotSupported
	}
	if mintRef.Key != dst.mint() {
		return ErrMintMismatch
	}
	m, err := p.loadMint(mintRef)
	if err != nil {
		return err
	}
	if decimals != nil && *decimals != m.decimals() {
		return ErrMintDecimalsMismatch
	}
	ma, ok := pOpt(m, mintAuthority)
	if !ok {
		return ErrFixedSupply
	}
	if err := p.validateOwner(ma, auth, p.rest(3)); err != nil {
		return err
	}
	if amount == 0 {
		if err := p.checkOwner(mintRef); err != nil {
			return err
		}
		return p.checkOwner(dstRef)
	}
	supply, err := checkedAdd(m.supply(), amount)
	if err != nil {
		return err
	}
	m.setSupply(supply)
	dst.setAmount(dst.amount() + amount)
	return nil
}

func (p *ptoken) burn(amount uint64, decimals *uint8) error {
	accts, err := p.accounts(3)
	if err != nil {
		return err
	}
	srcRef, mintRef, auth := accts[0], accts[1], accts[2]
	src, err := p.loadAccount(srcRef)
	if err != nil {
		return err
	}
	m, err := p.loadMint(mintRef)
	if err != nil {
		return err
	}
	if src.state() == stateFrozen {
		return ErrAccountFrozen
	}
	if pIsNative(src) {
		return ErrNativeNotSupported
	}
	if src.amount() < amount {
		return ErrInsufficientFunds
	}
	if mintRef.Key != src.mint() {
		return ErrMintMismatch
	}
	if decimals != nil && *decimals != m.decimals() {
		return ErrMintDecimalsMismatch
	}
	if o := src.owner(); o != runtime.SystemProgramID && o != spl.IncineratorID {
		signers := p.rest(3)
		if d, ok := pOpt(src, accDelegate); ok && d == auth.Key {
			if err := p.validateOwner(d, auth, signers); err != nil {
				return err
			}
			if src.delegatedAmount() < amount {
				return ErrInsufficientFunds
			}
			left := src.delegatedAmount() - amount
			src.setDelegatedAmount(left)
			if left == 0 {
				pClearOpt(src, accDelegate)
			}
		} else if err := p.validateOwner(o, auth, signers); err != nil {
			return err
		}
	}
	if amount == 0 {
		if err := p.checkOwner(srcRef); err != nil {
			return err
		}
		return p.checkOwner(mintRef)
	}
	src.setAmount(src.amount() - amount)
	m.setSupply(m.supply() - amount)
	return nil
}

func (p *ptoken) closeAccount() error {
	accts, err := p.accounts(3)
	if err != nil {
		return err
	}
	srcRef, dstRef, auth := accts[0], accts[1], accts[2]
	if srcRef.Key == dstRef.Key {
		return runtime.ErrInvalidAccountData
	}
	src, err := p.loadAccount(srcRef)
	if err != nil {
		return err
	}
	if !pIsNative(src) && src.amount() != 0 {
		return ErrNonNativeHasBalance
	}
	expected := src.owner()
	if c, ok := pOpt(src, accClose); ok {
		expected = c
	}
	if o := src.owner(); o != runtime.SystemProgramID && o != spl.IncineratorID {
		if err := p.validateOwner(expected, auth, p.rest(3)); err != nil {
			return err
		}
	} else if dstRef.Key != spl.IncineratorID {
		return runtime.ErrInvalidAccountData
	}
	if dstRef.Lamports, err = checkedAdd(dstRef.Lamports, srcRef.Lamports); err != nil {
		return err
	}
	closeAccount(srcRef)
	return nil
}

// closeAccount deletes an account the program owns: no lamports, no data,
// owned by the System program.
func closeAccount(ref *runtime.AccountRef) {
	ref.Lamports = 0
	ref.Owner = runtime.SystemProgramID
	ref.Data = []byte{}
}

func (p *ptoken) toggleFreeze(freeze bool) error {
	accts, err := p.accounts(3)
	if err != nil {
		return err
	}
	srcRef, mintRef, auth := accts[0], accts[1], accts[2]
	src, err := p.loadAccount(srcRef)
	if err != nil {
		return err
	}
	if freeze == (src.state() == stateFrozen) {
		return ErrInvalidState
	}
	if pIsNative(src) {
		return ErrNativeNotSupported
	}
	if mintRef.Key != src.mint() {
		return ErrMintMismatch
	}
	m, err := p.loadMint(mintRef)
	if err != nil {
		return err
	}
	fa, ok := pOpt(m, mintFreeze)
	if !ok {
		return ErrMintCannotFreeze
	}
	if err := p.validateOwner(fa, auth, p.rest(3)); err != nil {
		return err
	}
	if freeze {
		src[accState] = stateFrozen
	} else {
		src[accState] = stateInitialized
	}
	return nil
}

// syncNative recounts a wrapped-SOL account: the reserve is recomputed
// from the current rent and the amount is the lamports above it.
func (p *ptoken) syncNative() error {
	ref, err := p.account(0)
	if err != nil {
		return err
	}
	if err := p.checkOwner(ref); err != nil {
		return err
	}
	reserve := p.ctx.Env().Rent.MinimumBalance(len(ref.Data))
	a, err := p.loadAccount(ref)
	if err != nil {
		return err
	}
	if !pIsNative(a) {
		return ErrNonNativeNotSupported
	}
	amount, err := checkedSub(ref.Lamports, reserve)
	if err != nil {
		return err
	}
	putU64(a, accIsNative+4, reserve)
	a.setAmount(amount)
	return nil
}

func (p *ptoken) getAccountDataSize() error {
	mint, err := p.account(0)
	if err != nil {
		return err
	}
	if err := p.checkOwner(mint); err != nil {
		return err
	}
	if _, err := p.loadMint(mint); err != nil {
		return ErrInvalidMint
	}
	return p.ctx.SetReturnData(binary.LittleEndian.AppendUint64(nil, spl.TokenAccountSize))
}

func (p *ptoken) initializeImmutableOwner() error {
	ref, err := p.account(0)
	if err != nil {
		return err
	}
	if len(ref.Data) != spl.TokenAccountSize {
		return runtime.ErrInvalidAccountData
	}
	switch ref.Data[accState] {
	case stateUninitialized:
	case stateInitialized, stateFrozen:
		return ErrAlreadyInUse
	default:
		return runtime.ErrInvalidAccountData
	}
	p.ctx.Log("Please upgrade to SPL Token 2022 for immutable owner support")
	return nil
}

func (p *ptoken) amountToUiAmount(amount uint64) error {
	mint, err := p.account(0)
	if err != nil {
		return err
	}
	if err := p.checkOwner(mint); err != nil {
		return err
	}
	m, err := p.loadMint(mint)
	if err != nil {
		return ErrInvalidMint
	}
	return p.ctx.SetReturnData([]byte(spl.UIAmountString(amount, m.decimals())))
}

func (p *ptoken) uiAmountToAmount(ui string) error {
	mint, err := p.account(0)
	if err != nil {
		return err
	}
	if err := p.checkOwner(mint); err != nil {
		return err
	}
	m, err := p.loadMint(mint)
	if err != nil {
		return ErrInvalidMint
	}
	// p-token bounds the digits it assembles (u8::MAX decimals + 2).
	whole, _, _ := cutDot(ui)
	if len(whole)+int(m.decimals()) > 257 {
		return runtime.ErrInvalidArgument
	}
	amount, err := ParseUiAmount(ui, m.decimals())
	if err != nil {
		return err
	}
	return p.ctx.SetReturnData(binary.LittleEndian.AppendUint64(nil, amount))
}

// withdrawExcessLamports moves the lamports above the rent-exempt minimum
// out of a token account, mint or multisig, signed by its authority.
func (p *ptoken) withdrawExcessLamports() error {
	accts, err := p.accounts(3)
	if err != nil {
		return err
	}
	srcRef, dstRef, auth := accts[0], accts[1], accts[2]
	signers := p.rest(3)
	switch len(srcRef.Data) {
	case spl.TokenAccountSize:
		a, err := p.loadAccount(srcRef)
		if err != nil {
			return err
		}
		if pIsNative(a) {
			return ErrNativeNotSupported
		}
		if err := p.validateOwner(a.owner(), auth, signers); err != nil {
			return err
		}
	case spl.MintSize:
		m, err := p.loadMint(srcRef)
		if err != nil {
			return err
		}
		if ma, ok := pOpt(m, mintAuthority); ok {
			if err := p.validateOwner(ma, auth, signers); err != nil {
				return err
			}
		} else if srcRef.Key == auth.Key {
			if !auth.IsSigner {
				return runtime.ErrMissingRequiredSignature
			}
		} else {
			return ErrAuthorityTypeNotSupported
		}
	case spl.MultisigSize:
		if err := p.validateOwner(srcRef.Key, auth, signers); err != nil {
			return err
		}
	default:
		return ErrInvalidState
	}
	excess, err := checkedSub(srcRef.Lamports, p.ctx.Env().Rent.MinimumBalance(len(srcRef.Data)))
	if err != nil {
		return ErrNotRentExempt
	}
	srcRef.Lamports -= excess
	dstRef.Lamports += excess
	return nil
}

// unwrapLamports moves lamports (and the same token amount) out of a
// wrapped-SOL account: the given amount, or everything.
func (p *ptoken) unwrapLamports(d []byte) error {
	if len(d) == 0 {
		return ErrInvalidInstruction
	}
	var amount *uint64
	switch d[0] {
	case 0:
	case 1:
		v, err := unpackAmount(d[1:])
		if err != nil {
			return err
		}
		amount = &v
	default:
		return ErrInvalidInstruction
	}
	accts, err := p.accounts(3)
	if err != nil {
		return err
	}
	srcRef, dstRef, auth := accts[0], accts[1], accts[2]
	a, err := p.loadAccount(srcRef)
	if err != nil {
		return err
	}
	if !pIsNative(a) {
		return ErrNonNativeNotSupported
	}
	if err := p.validateOwner(a.owner(), auth, p.rest(3)); err != nil {
		return err
	}
	move, left := a.amount(), uint64(0)
	if amount != nil {
		if a.amount() < *amount {
			return ErrInsufficientFunds
		}
		move, left = *amount, a.amount()-*amount
	}
	if move == 0 {
		return p.checkOwner(srcRef)
	}
	a.setAmount(left)
	if srcRef.Key != dstRef.Key {
		srcRef.Lamports -= move
		dstRef.Lamports += move
	}
	return nil
}

// initMultisig records an InitializeMultisig's m and signers in a
// multisig account whose state and rent the caller has checked: both token
// programs share the signer-count rules, their order and the layout.
func initMultisig(data []byte, m uint8, signers []*runtime.AccountRef) error {
	if len(signers) < spl.MinSigners || len(signers) > spl.MaxSigners {
		return ErrInvalidNumberOfProvidedSigners
	}
	if m < spl.MinSigners || m > spl.MaxSigners {
		return ErrInvalidNumberOfRequiredSigners
	}
	data[msM], data[msN] = m, uint8(len(signers))
	for i, s := range signers {
		putKey(data, msSigners+32*i, s.Key)
	}
	data[msInit] = 1
	return nil
}
