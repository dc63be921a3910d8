package localnet

import (
	"context"
	"sync/atomic"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/auth"
	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/permission"
	"github.com/ferry-sh/ferry/pkg/rpcserver"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// PrivateCacheSize bounds the PDA derivations the ephemeral node's read
// filter remembers (eATA and permission addresses).
const PrivateCacheSize = 8192

// TokenVerifier turns the ?token= of a request to the ephemeral node into
// the wallet it was issued to, or fails (an invalid, expired or foreign
// token). ferry serve verifies the tokens its payments API issues for
// this rollup.
type TokenVerifier func(token string) (wallet string, err error)

// privateReads is the ephemeral node's read filter: what a MagicBlock TEE
// rollup hides, the local rollup hides too (docs/localnet.md §7).
//
// An account is private when the permission program holds a permission
// for it (["permission:", account], created on base by eSPL ix 6 for an
// eATA, 12 for a queue, 22 for a stealth pool, or on the rollup by ix 16
// for a group receipt), or when it is a token account whose owner's eATA
// for its mint has one: the ATA the rollup projects an eATA balance into,
// the private balance itself. Only the permission's members with the
// authority or read flag may read it: a wallet is known from a token this
// rollup's issuer verified (?token=), or from an in-process caller that
// verified it (auth.WithVerifiedWallet, the payments API). Anyone else
// gets rpcserver.CodeAccountAccessDenied; scans leave the account out.
type privateReads struct {
	p      *Pair
	cache  *espl.Cache
	verify atomic.Pointer[TokenVerifier]
}

// SetTokenVerifier tells the ephemeral node how to check the ?token= of
// requests (nil: no token is accepted, so private accounts are readable
// only by in-process callers that verified the wallet themselves).
func (p *Pair) SetTokenVerifier(v TokenVerifier) {
	if v == nil {
		p.private.verify.Store(nil)
		return
	}
	p.private.verify.Store(&v)
}

// ReadFilter is the ephemeral node's read filter (installed by Open), for
// code that serves the rollup through another handler.
func (p *Pair) ReadFilter() rpcserver.ReadFilter { return p.private.filter }

func (r *privateReads) filter(ctx context.Context, key solana.PublicKey, a *ledger.Account) error {
	members, private := r.readers(key, a)
	if !private {
		return nil
	}
	wallet, why := r.reader(ctx)
	if wallet == "" {
		return rpcserver.AccessDenied(key, why)
	}
	for _, m := range members {
		if m.Key.String() == wallet && m.Flags&(permission.FlagAuthority|permission.FlagRead) != 0 {
			return nil
		}
	}
	return rpcserver.AccessDenied(key, "the token's wallet may not read it")
}

// reader is the wallet the request acts for, or why there is none.
func (r *privateReads) reader(ctx context.Context) (wallet, why string) {
	if w, ok := auth.VerifiedWallet(ctx); ok {
		return w, ""
	}
	tok := rpcserver.RequestToken(ctx)
	if tok == "" {
		return "", "no token"
	}
	v := r.verify.Load()
	if v == nil {
		return "", "this node accepts no tokens"
	}
	w, err := (*v)(tok)
	if err != nil || w == "" {
		return "", "the token is not valid for this rollup"
	}
	return w, ""
}

// readers returns the members of the permission that makes the account
// private, if any.
func (r *privateReads) readers(key solana.PublicKey, a *ledger.Account) ([]permission.Member, bool) {
	if m, ok := r.permission(key); ok {
		return m, true
	}
	if !spl.IsTokenProgram(a.Owner) {
		return nil, false
	}
	ta, err := spl.DecodeTokenAccount(a.Data)
	if err != nil || ta.State == spl.StateUninitialized {
		return nil, false
	}
	eata, _ := r.cache.FindEphemeralATA(ta.Owner, ta.Mint)
	return r.permission(eata)
}

// permission reads account's permission on the rollup, else on base
// (where eSPL creates most of them; they are not cloned).
func (r *privateReads) permission(account solana.PublicKey) ([]permission.Member, bool) {
	pk, _ := r.cache.FindPermission(account)
	pa, _ := r.p.Ephemeral.Account(pk, ledger.Processed)
	if !isPermission(pa) {
		pa, _ = r.p.Base.Account(pk, ledger.Confirmed)
	}
	if !isPermission(pa) {
		return nil, false
	}
	perm, err := permission.Decode(pa.Data)
	if err != nil {
		// A permission account that does not decode still marks the
		// account private; nobody is listed to read it.
		return nil, true
	}
	return perm.Members, true
}

// isPermission reports whether a is a permission account: owned by the
// permission program, or by the delegation program while delegated (the
// address is the permission program's PDA, so nothing else can hold it).
func isPermission(a *ledger.Account) bool {
	return a != nil && len(a.Data) > 0 && (a.Owner == permission.ProgramID || a.Owner == espl.DelegationProgramID)
}
