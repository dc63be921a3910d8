package explorer

import (
	"context"
	"net/url"
	"strconv"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// AccountView is the account view: the account on each layer, decoded
// where ferry knows the layout, its delegation, and for a wallet its
// token accounts, private balances and latest transactions.
type AccountView struct {
	Address string `json:"address"`
	// Label is a well-known name ("SPL Token program", "Magic context").
	Label     string        `json:"label,omitempty"`
	Base      *AccountState `json:"base"`
	Ephemeral *AccountState `json:"ephemeral"`
	// EphemeralPrivate says why the rollup does not show the account to
	// an anonymous reader (it is private: its owner reads it with a login
	// token). Ephemeral is then nil.
	EphemeralPrivate string          `json:"ephemeralPrivate,omitempty"`
	Delegation       *DelegationView `json:"delegation,omitempty"`
	// TokenAccounts are a wallet's token accounts on both layers (the
	// rollup leaves private ones out), PrivateBalances its eATAs.
	TokenAccounts   []Holding        `json:"tokenAccounts"`
	PrivateBalances []PrivateBalance `json:"privateBalances"`
	// History is the latest transactions naming the account on each layer,
	// newest first.
	History []HistoryEntry `json:"history"`
}

// AccountState is the account on one layer.
type AccountState struct {
	Lamports   uint64   `json:"lamports,string"`
	Owner      string   `json:"owner"`
	OwnerName  string   `json:"ownerName,omitempty"`
	Executable bool     `json:"executable"`
	DataLen    int      `json:"dataLen"`
	Decoded    *Decoded `json:"decoded,omitempty"`
}

// DelegationView is an account's delegation to a rollup, from its
// delegation record on base.
type DelegationView struct {
	Record string `json:"record"`
	// Validator is the rollup validator holding the account; ThisRollup
	// reports it is ferry serve's own rollup.
	Validator         string `json:"validator"`
	ValidatorName     string `json:"validatorName,omitempty"`
	ThisRollup        bool   `json:"thisRollup"`
	OwnerProgram      string `json:"ownerProgram"`
	OwnerName         string `json:"ownerName,omitempty"`
	Slot              uint64 `json:"slot"`
	CommitFrequencyMs uint64 `json:"commitFrequencyMs"`
}

// Holding is one token account of a wallet.
type Holding struct {
	Layer    string `json:"layer"`
	Account  string `json:"account"`
	Mint     string `json:"mint"`
	Amount   string `json:"amount"`
	Decimals uint8  `json:"decimals"`
	UI       string `json:"ui"`
}

// PrivateBalance is a wallet's eATA for a mint: a private balance on the
// rollup. Its amount is shown only to the owner (with a login token on
// the rollup's RPC); the explorer reads anonymously.
type PrivateBalance struct {
	Mint         string `json:"mint"`
	EphemeralATA string `json:"ephemeralAta"`
	// Balance is the token account the rollup projects the balance into
	// (the wallet's ATA address on the rollup).
	Balance   string `json:"balance"`
	Delegated bool   `json:"delegated"`
	// Visible is false when the rollup hides the balance (the usual case:
	// it is private to its owner); Amount is then empty.
	Visible bool   `json:"visible"`
	Amount  string `json:"amount,omitempty"`
}

// HistoryEntry is one transaction naming an account.
type HistoryEntry struct {
	Layer     string `json:"layer"`
	Signature string `json:"signature"`
	Slot      uint64 `json:"slot"`
	BlockTime *int64 `json:"blockTime,omitempty"`
	Failed    bool   `json:"failed"`
}

// accountView answers GET /explorer/api/account?address=A.
func (e *Explorer) accountView(ctx context.Context, q url.Values) (any, error) {
	key, err := parseAddress(q.Get("address"))
	if err != nil {
		return nil, err
	}
	v := &AccountView{Address: key.String(), Label: labelOf(key), TokenAccounts: []Holding{}, PrivateBalances: []PrivateBalance{}, History: []HistoryEntry{}}
	base, err := e.cfg.Base.GetAccountInfo(ctx, key, chainclient.Confirmed)
	if err != nil {
		return nil, chainError(LayerBase, err)
	}
	eph, err := e.cfg.Ephemeral.GetAccountInfo(ctx, key, chainclient.Confirmed)
	switch {
	case chainclient.IsAccessDenied(err):
		v.EphemeralPrivate = "private: the rollup shows it only to the members of its permission (its owner), who read it with their login token"
	case err != nil:
		return nil, chainError(LayerEphemeral, err)
	}
	v.Base, v.Ephemeral = state(key, base), state(key, eph)
	if base != nil && base.Owner == espl.DelegationProgramID {
		if err := e.delegation(ctx, v, key, base); err != nil {
			return nil, err
		}
	}
	if base == nil || (base.Owner == spl.SystemProgramID && len(base.Data) == 0) {
		if err := e.walletHoldings(ctx, v, key); err != nil {
			return nil, err
		}
	}
	for _, ly := range []string{LayerBase, LayerEphemeral} {
		sigs, err := e.client(ly).GetSignaturesForAddress(ctx, key, chainclient.SignaturesOptions{Limit: e.opts.AccountHistory, Commitment: chainclient.Confirmed})
		if err != nil {
			return nil, chainError(ly, err)
		}
		for _, s := range sigs {
			v.History = append(v.History, HistoryEntry{Layer: ly, Signature: s.Signature.String(), Slot: s.Slot, BlockTime: s.BlockTime, Failed: len(s.Err) > 0})
		}
	}
	return v, nil
}

func state(key solana.PublicKey, a *chainclient.Account) *AccountState {
	if a == nil {
		return nil
	}
	return &AccountState{Lamports: a.Lamports, Owner: a.Owner.String(), OwnerName: labelOf(a.Owner), Executable: a.Executable,
		DataLen: len(a.Data), Decoded: decodeAccount(key, a.Owner, a.Data)}
}

// delegation reads the delegation record of key (delegated: its base
// owner is the delegation program) and decodes the base data with the
// layout of the program that owned it before.
func (e *Explorer) delegation(ctx context.Context, v *AccountView, key solana.PublicKey, base *chainclient.Account) error {
	rk, _ := espl.FindDelegationRecord(key)
	ra, err := e.cfg.Base.GetAccountInfo(ctx, rk, chainclient.Confirmed)
	if err != nil {
		return chainError(LayerBase, err)
	}
	if ra == nil || ra.Owner != espl.DelegationProgramID {
		return nil // a delegation program account that is not delegated (a record, metadata, …)
	}
	r, err := espl.DecodeDelegationRecord(ra.Data)
	if err != nil {
		return nil
	}
	v.Delegation = &DelegationView{
		Record: rk.String(), Validator: r.Authority.String(), ValidatorName: labelOf(r.Authority), ThisRollup: r.Authority == e.cfg.Validator,
		OwnerProgram: r.Owner.String(), OwnerName: labelOf(r.Owner), Slot: r.DelegationSlot, CommitFrequencyMs: r.CommitFrequencyMs,
	}
	if d := decodeAccount(key, r.Owner, base.Data); d != nil {
		d.Kind += " (delegated; the base copy of its data)"
		v.Base.Decoded = d
	}
	return nil
}

// rpcKeyedAccount is one entry of getTokenAccountsByOwner.
type rpcKeyedAccount struct {
	Pubkey  solana.PublicKey    `json:"pubkey"`
	Account chainclient.Account `json:"account"`
}

// tokenAccountsByOwner lists owner's token accounts of both token
// programs on c (the owner index; at most max).
func tokenAccountsByOwner(ctx context.Context, c *chainclient.Client, owner solana.PublicKey, max int) ([]rpcKeyedAccount, error) {
	var out []rpcKeyedAccount
	for _, tp := range []solana.PublicKey{spl.TokenProgramID, spl.Token2022ProgramID} {
		var res struct {
			Value []rpcKeyedAccount `json:"value"`
		}
		err := c.Call(ctx, "getTokenAccountsByOwner", []any{owner, map[string]any{"programId": tp},
			map[string]any{"encoding": "base64", "commitment": "confirmed"}}, &res)
		if err != nil {
			return nil, err
		}
		out = append(out, res.Value...)
		if len(out) >= max {
			return out[:max], nil
		}
	}
	return out, nil
}

// walletHoldings fills a wallet's token accounts on both layers and its
// private balances: the eATAs on base of the mints it holds (and the demo
// mint), each with the rollup balance it projects, if the rollup shows it.
func (e *Explorer) walletHoldings(ctx context.Context, v *AccountView, owner solana.PublicKey) error {
	type mintInfo struct {
		program  solana.PublicKey
		decimals uint8
	}
	mints := map[solana.PublicKey]*mintInfo{}
	var order []solana.PublicKey
	for _, ly := range []string{LayerBase, LayerEphemeral} {
		accts, err := tokenAccountsByOwner(ctx, e.client(ly), owner, e.opts.MaxTokenAccounts)
		if err != nil {
			return chainError(ly, err)
		}
		for _, ka := range accts {
			ta, err := spl.DecodeTokenAccount(ka.Account.Data)
			if err != nil {
				continue
			}
			if mints[ta.Mint] == nil {
				mints[ta.Mint] = &mintInfo{program: ka.Account.Owner}
				order = append(order, ta.Mint)
			}
			v.TokenAccounts = append(v.TokenAccounts, Holding{Layer: ly, Account: ka.Pubkey.String(), Mint: ta.Mint.String(), Amount: strconv.FormatUint(ta.Amount, 10)})
		}
	}
	if !e.cfg.Mint.IsZero() && mints[e.cfg.Mint] == nil {
		mints[e.cfg.Mint] = &mintInfo{}
		order = append(order, e.cfg.Mint)
	}
	if len(order) == 0 {
		return nil
	}
	// One read for the mints (decimals, token program), one for the eATAs.
	eatas := make([]solana.PublicKey, len(order))
	for i, m := range order {
		eatas[i], _ = espl.FindEphemeralATA(owner, m)
	}
	ms, err := e.cfg.Base.GetMultipleAccounts(ctx, order, chainclient.Confirmed)
	if err != nil {
		return chainError(LayerBase, err)
	}
	for i, m := range order {
		if i < len(ms) && ms[i] != nil {
			if mi, err := spl.DecodeMint(ms[i].Data); err == nil {
				mints[m].decimals, mints[m].program = mi.Decimals, ms[i].Owner
			}
		}
	}
	for i := range v.TokenAccounts {
		h := &v.TokenAccounts[i]
		mi := mints[solana.MustPublicKeyFromBase58(h.Mint)]
		n, _ := strconv.ParseUint(h.Amount, 10, 64)
		h.Decimals, h.UI = mi.decimals, spl.UIAmountString(n, mi.decimals)
	}
	es, err := e.cfg.Base.GetMultipleAccounts(ctx, eatas, chainclient.Confirmed)
	if err != nil {
		return chainError(LayerBase, err)
	}
	for i, m := range order {
		if i >= len(es) || es[i] == nil || (es[i].Owner != espl.ProgramID && es[i].Owner != espl.DelegationProgramID) {
			continue
		}
		mi := mints[m]
		if mi.program.IsZero() {
			continue
		}
		ata := spl.AssociatedTokenAddress(owner, m, mi.program)
		pb := PrivateBalance{Mint: m.String(), EphemeralATA: eatas[i].String(), Balance: ata.String(), Delegated: es[i].Owner == espl.DelegationProgramID}
		a, err := e.cfg.Ephemeral.GetAccountInfo(ctx, ata, chainclient.Confirmed)
		switch {
		case chainclient.IsAccessDenied(err):
		case err != nil:
			return chainError(LayerEphemeral, err)
		case a != nil:
			if ta, err := spl.DecodeTokenAccount(a.Data); err == nil {
				pb.Visible, pb.Amount = true, spl.UIAmountString(ta.Amount, mi.decimals)
			}
		default:
			pb.Visible, pb.Amount = true, "0"
		}
		v.PrivateBalances = append(v.PrivateBalances, pb)
	}
	return nil
}
