package system

import (
	"fmt"

	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// sysvarAccount is get_sysvar_with_account_check: instruction account i
// must be the given sysvar.
func sysvarAccount(ctx *runtime.Context, i int, id [32]byte) error {
	a, err := ctx.Account(i)
	if err != nil {
		return err
	}
	if a.Key != id {
		return runtime.ErrInvalidArgument
	}
	return nil
}

// nonceState is get_state::<Versions>: an account whose data does not
// decode is InvalidAccountData.
func nonceState(a *runtime.AccountRef) (spl.NonceState, error) {
	n, err := spl.DecodeNonce(a.Data)
	if err != nil {
		return n, runtime.ErrInvalidAccountData
	}
	return n, nil
}

// setNonceState is set_state: the account's data must be writable by the
// System program and large enough; the state is written over its start.
func setNonceState(a *runtime.AccountRef, n spl.NonceState) error {
	size := 8
	if n.Initialized {
		size = spl.NonceAccountSize
	}
	if err := canChangeData(a); err != nil {
		return err
	}
	if len(a.Data) < size {
		return runtime.ErrAccountDataTooSmall
	}
	n.EncodeInto(a.Data)
	return nil
}

func advanceNonce(ctx *runtime.Context, sig signers) error {
	me, err := ctx.Account(0)
	if err != nil {
		return err
	}
	if err := sysvarAccount(ctx, 1, spl.SysvarRecentBlockhashesID); err != nil {
		return err
	}
	if !me.IsWritable {
		ctx.LogRaw(fmt.Sprintf("Advance nonce account: Account %s must be writeable", me.Key))
		return runtime.ErrInvalidArgument
	}
	state, err := nonceState(me)
	if err != nil {
		return err
	}
	if !state.Initialized {
		ctx.LogRaw(fmt.Sprintf("Advance nonce account: Account %s state is invalid", me.Key))
		return runtime.ErrInvalidAccountData
	}
	if !sig[state.Authority] {
		ctx.LogRaw(fmt.Sprintf("Advance nonce account: Account %s must be a signer", state.Authority))
		return runtime.ErrMissingRequiredSignature
	}
	env := ctx.Env()
	next := spl.DurableNonce(env.Blockhash)
	if state.Nonce == next {
		ctx.LogRaw("Advance nonce account: nonce can only advance once per slot")
		return ErrNonceBlockhashNotExpired
	}
	return setNonceState(me, spl.NonceState{Version: spl.NonceVersionCurrent, Initialized: true,
		Authority: state.Authority, Nonce: next, LamportsPerSignature: env.LamportsPerSignature})
}

func withdrawNonce(ctx *runtime.Context, lamports uint64, sig signers) error {
	if _, err := ctx.Accounts(2); err != nil {
		return err
	}
	if err := sysvarAccount(ctx, 2, spl.SysvarRecentBlockhashesID); err != nil {
		return err
	}
	if err := sysvarAccount(ctx, 3, spl.SysvarRentID); err != nil {
		return err
	}
	from, _ := ctx.Account(0)
	to, _ := ctx.Account(1)
	if !from.IsWritable {
		ctx.LogRaw(fmt.Sprintf("Withdraw nonce account: Account %s must be writeable", from.Key))
		return runtime.ErrInvalidArgument
	}
	state, err := nonceState(from)
	if err != nil {
		return err
	}
	signer := from.Key
	if !state.Initialized {
		if lamports > from.Lamports {
			ctx.LogRaw(fmt.Sprintf("Withdraw nonce account: insufficient lamports %d, need %d", from.Lamports, lamports))
			return runtime.ErrInsufficientFunds
		}
	} else {
		if lamports == from.Lamports {
			if state.Nonce == spl.DurableNonce(ctx.Env().Blockhash) {
				ctx.LogRaw("Withdraw nonce account: nonce can only advance once per slot")
				return ErrNonceBlockhashNotExpired
			}
			if err := setNonceState(from, spl.NonceState{Version: spl.NonceVersionCurrent}); err != nil {
				return err
			}
		} else {
			need := lamports + ctx.Env().Rent.MinimumBalance(len(from.Data))
			if need < lamports || need > from.Lamports {
				ctx.LogRaw(fmt.Sprintf("Withdraw nonce account: insufficient lamports %d, need %d", from.Lamports, need))
				return runtime.ErrInsufficientFunds
			}
		}
		signer = state.Authority
	}
	if !sig[signer] {
		ctx.LogRaw(fmt.Sprintf("Withdraw nonce account: Account %s must sign", signer))
		return runtime.ErrMissingRequiredSignature
	}
	if err := subLamports(from, lamports); err != nil {
		return err
	}
	return addLamports(to, lamports)
}

func initializeNonce(ctx *runtime.Context, authority [32]byte) error {
	me, err := ctx.Account(0)
	if err != nil {
		return err
	}
	if err := sysvarAccount(ctx, 1, spl.SysvarRecentBlockhashesID); err != nil {
		return err
	}
	if err := sysvarAccount(ctx, 2, spl.SysvarRentID); err != nil {
		return err
	}
	if !me.IsWritable {
		ctx.LogRaw(fmt.Sprintf("Initialize nonce account: Account %s must be writeable", me.Key))
		return runtime.ErrInvalidArgument
	}
	state, err := nonceState(me)
	if err != nil {
		return err
	}
	if state.Initialized {
		ctx.LogRaw(fmt.Sprintf("Initialize nonce account: Account %s state is invalid", me.Key))
		return runtime.ErrInvalidAccountData
	}
	env := ctx.Env()
	if minimum := env.Rent.MinimumBalance(len(me.Data)); me.Lamports < minimum {
		ctx.LogRaw(fmt.Sprintf("Initialize nonce account: insufficient lamports %d, need %d", me.Lamports, minimum))
		return runtime.ErrInsufficientFunds
	}
	return setNonceState(me, spl.NonceState{Version: spl.NonceVersionCurrent, Initialized: true,
		Authority: authority, Nonce: spl.DurableNonce(env.Blockhash), LamportsPerSignature: env.LamportsPerSignature})
}

func authorizeNonce(ctx *runtime.Context, newAuthority [32]byte, sig signers) error {
	me, err := ctx.Account(0)
	if err != nil {
		return err
	}
	if !me.IsWritable {
		ctx.LogRaw(fmt.Sprintf("Authorize nonce account: Account %s must be writeable", me.Key))
		return runtime.ErrInvalidArgument
	}
	state, err := nonceState(me)
	if err != nil {
		return err
	}
	if !state.Initialized {
		ctx.LogRaw(fmt.Sprintf("Authorize nonce account: Account %s state is invalid", me.Key))
		return runtime.ErrInvalidAccountData
	}
	if !sig[state.Authority] {
		ctx.LogRaw(fmt.Sprintf("Authorize nonce account: Account %s must sign", state.Authority))
		return runtime.ErrMissingRequiredSignature
	}
	// The version is kept (a legacy account stays legacy).
	state.Authority = newAuthority
	return setNonceState(me, state)
}

func upgradeNonce(ctx *runtime.Context) error {
	me, err := ctx.Account(0)
	if err != nil {
		return err
	}
	if me.Owner != ProgramID {
		return runtime.ErrInvalidAccountOwner
	}
	if !me.IsWritable {
		return runtime.ErrInvalidArgument
	}
	state, err := nonceState(me)
	if err != nil {
		return err
	}
	if state.Version != spl.NonceVersionLegacy || !state.Initialized {
		return runtime.ErrInvalidArgument
	}
	state.Version = spl.NonceVersionCurrent
	state.Nonce = spl.DurableNonce(state.Nonce)
	return setNonceState(me, state)
}
