package devchain

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// Token-2022 layout of an associated token account: the account type byte
// after the 165-byte base, then the ImmutableOwner extension (type 7,
// length 0), 170 bytes in all, as the ATA program creates it.
const (
	token2022AccountTypeOffset = spl.TokenAccountSize
	token2022ImmutableOwner    = 7
	token2022ATASize           = spl.TokenAccountSize + 1 + 4
)

// TokenAccountUpdate is surfpool's TokenAccountUpdate: the fields of a
// token account to set; absent fields keep their value.
type TokenAccountUpdate struct {
	Amount *uint64 `json:"amount,omitempty" doc:"Balance in base units. The mint's supply moves by the difference, as if minted or burned."`
	// Delegate and CloseAuthority take a base58 key, or "null" to clear
	// them (surfpool's SetSomeAccount).
	Delegate        *string `json:"delegate,omitempty" doc:"Delegate (base58), or \"null\" to clear it."`
	State           *string `json:"state,omitempty" validate:"enum=uninitialized|initialized|frozen" doc:"Account state: initialized, frozen or uninitialized."`
	DelegatedAmount *uint64 `json:"delegatedAmount,omitempty" doc:"Amount the delegate may move, in base units."`
	CloseAuthority  *string `json:"closeAuthority,omitempty" doc:"Close authority (base58), or \"null\" to clear it."`
}

// SetTokenAccountRequest is surfnet_setTokenAccount /
// ferry_setTokenAccount: the associated token account of Owner for Mint.
type SetTokenAccountRequest struct {
	Owner string `json:"owner" validate:"required,pubkey" doc:"Wallet that owns the token account (base58)."`
	Mint  string `json:"mint" validate:"required,pubkey" doc:"Mint of the token account (base58)."`
	// TokenProgram defaults to the mint's owner (surfpool defaults to SPL
	// Token); a program that does not own the mint is refused.
	TokenProgram string `json:"tokenProgram,omitempty" validate:"pubkey" doc:"Token program (base58); default: the mint's owner, SPL Token or Token-2022."`
	TokenAccountUpdate
}

// SetTokenAccount sets the fields of owner's associated token account for
// mint, creating it (rent-exempt, as the ATA program would) if needed. A
// new amount moves the mint's supply by the difference, so getTokenSupply
// and the token programs' burn checks stay consistent; wrapped SOL moves
// the account's lamports instead. On the ephemeral rollup the base layer's
// vault for the mint moves too (TokenBacking), so every rollup balance
// stays backed on base.
func (n *Node) SetTokenAccount(ctx context.Context, req SetTokenAccountRequest) (*WriteResult, error) {
	owner, err := parseKey(req.Owner)
	if err != nil {
		return nil, err
	}
	mint, err := parseKey(req.Mint)
	if err != nil {
		return nil, err
	}
	program, err := tokenProgram(req.TokenProgram)
	if err != nil {
		return nil, err
	}
	upd, err := req.parse()
	if err != nil {
		return nil, err
	}
	if err := n.prefetch(ctx, mint, spl.AssociatedTokenAddress(owner, mint, program)); err != nil {
		return nil, err
	}
	return n.write(ctx, "setTokenAccount", func(w ledger.AccountWriter) ([]solana.PublicKey, error) {
		m := w.Get(mint)
		if m == nil {
			return nil, invalid("Invalid params: mint %s does not exist on the %s node (create it with ferry_setMint)", mint, n.name)
		}
		if !spl.IsTokenProgram(m.Owner) {
			return nil, invalid("Invalid params: %s is not a mint (owner %s)", mint, m.Owner)
		}
		mi, err := spl.DecodeMint(m.Data)
		if err != nil {
			return nil, invalid("Invalid params: %s is not a mint: %v", mint, err)
		}
		if !program.IsZero() && program != m.Owner {
			return nil, invalid("Invalid params: mint %s belongs to the token program %s, not %s", mint, m.Owner, program)
		}
		program := m.Owner
		native := mint == spl.NativeMintID || mint == spl.NativeMint2022ID
		ata := spl.AssociatedTokenAddress(owner, mint, program)
		cur := w.Get(ata)
		acct, ta, err := n.tokenAccountAt(ata, cur, owner, mint, program, native)
		if err != nil {
			return nil, err
		}
		old := ta.Amount
		if cur == nil {
			old = 0
		}
		upd.apply(&ta)
		if native && n.backing != nil && ta.Amount != old {
			return nil, invalid("Invalid params: wrapped SOL balances on the rollup come from deposits; set the balance on base")
		}
		if ta.IsNative != nil {
			// Wrapped SOL: the amount is the lamports above the reserve.
			if acct.Lamports, err = addChecked(*ta.IsNative, ta.Amount); err != nil {
				return nil, invalid("Invalid params: amount %d does not fit in the account's lamports", ta.Amount)
			}
		}
		ta.EncodeInto(acct.Data)
		keys := []solana.PublicKey{ata}
		if ta.Amount != old && !native {
			// The supply moves with the balance, as a mint or burn would.
			if mi.Supply, err = moveSupply(mi.Supply, old, ta.Amount, mint); err != nil {
				return nil, err
			}
			mi.EncodeInto(m.Data)
			w.Set(mint, m)
			keys = append(keys, mint)
			if n.backing != nil {
				if err := n.backing.Back(ctx, mint, ta.Amount > old, absDiff(old, ta.Amount)); err != nil {
					return nil, err
				}
			}
		}
		w.Set(ata, acct)
		return keys, nil
	})
}

// tokenProgram parses an optional token program parameter: zero when
// absent, else SPL Token or Token-2022.
func tokenProgram(s string) (solana.PublicKey, error) {
	if s == "" {
		return solana.PublicKey{}, nil
	}
	p, err := parseKey(s)
	if err != nil {
		return p, err
	}
	if !spl.IsTokenProgram(p) {
		return p, invalid("Invalid params: %s is not a token program (SPL Token %s or Token-2022 %s)", p, spl.TokenProgramID, spl.Token2022ProgramID)
	}
	return p, nil
}

// tokenUpdate is a parsed TokenAccountUpdate.
type tokenUpdate struct {
	req                      TokenAccountUpdate
	delegate, closeAuthority *solana.PublicKey
	state                    spl.TokenState
}

func (r *SetTokenAccountRequest) parse() (*tokenUpdate, error) {
	u := &tokenUpdate{req: r.TokenAccountUpdate}
	var err error
	if r.Delegate != nil {
		if u.delegate, err = optKey(*r.Delegate); err != nil {
			return nil, err
		}
	}
	if r.CloseAuthority != nil {
		if u.closeAuthority, err = optKey(*r.CloseAuthority); err != nil {
			return nil, err
		}
	}
	if r.State != nil {
		switch *r.State {
		case "uninitialized":
			u.state = spl.StateUninitialized
		case "initialized":
			u.state = spl.StateInitialized
		case "frozen":
			u.state = spl.StateFrozen
		default:
			return nil, invalid("Invalid token account state %s", *r.State)
		}
	}
	return u, nil
}

func (u *tokenUpdate) apply(ta *spl.TokenAccount) {
	if u.req.Amount != nil {
		ta.Amount = *u.req.Amount
	}
	if u.req.Delegate != nil {
		ta.Delegate = u.delegate
	}
	if u.req.State != nil {
		ta.State = u.state
	}
	if u.req.DelegatedAmount != nil {
		ta.DelegatedAmount = *u.req.DelegatedAmount
	}
	if u.req.CloseAuthority != nil {
		ta.CloseAuthority = u.closeAuthority
	}
}

// tokenAccountAt returns the token account at ata to update: a copy of the
// existing one, or a new initialized account laid out as the ATA program
// creates it (Token-2022 with ImmutableOwner; wrapped SOL with its
// rent-exempt reserve in is_native).
func (n *Node) tokenAccountAt(ata solana.PublicKey, cur *ledger.Account, owner, mint, program solana.PublicKey, native bool) (*ledger.Account, spl.TokenAccount, error) {
	if cur != nil {
		if cur.Owner != program {
			return nil, spl.TokenAccount{}, invalid("Invalid params: %s is owned by %s, not the token program %s", ata, cur.Owner, program)
		}
		ta, err := spl.DecodeTokenAccount(cur.Data)
		if err != nil {
			return nil, ta, invalid("Invalid params: %s is not a token account: %v", ata, err)
		}
		if ta.Mint != mint || ta.Owner != owner {
			return nil, ta, invalid("Invalid params: %s is a token account of %s for mint %s", ata, ta.Owner, ta.Mint)
		}
		return cur, ta, nil
	}
	size := spl.TokenAccountSize
	if program == spl.Token2022ProgramID {
		size = token2022ATASize
	}
	data := make([]byte, size)
	if size > spl.TokenAccountSize {
		data[token2022AccountTypeOffset] = spl.AccountTypeAccount
		binary.LittleEndian.PutUint16(data[token2022AccountTypeOffset+1:], token2022ImmutableOwner)
	}
	rent := n.l.MinimumBalanceForRentExemption(size)
	ta := spl.TokenAccount{Mint: mint, Owner: owner, State: spl.StateInitialized}
	if native {
		ta.IsNative = &rent
	}
	return &ledger.Account{Lamports: rent, Owner: program, Data: data}, ta, nil
}

// moveSupply is a mint's supply after one of its accounts went from old to
// amount.
func moveSupply(supply, old, amount uint64, mint solana.PublicKey) (uint64, error) {
	if amount >= old {
		s, err := addChecked(supply, amount-old)
		if err != nil {
			return 0, invalid("Invalid params: the supply of %s would exceed u64", mint)
		}
		return s, nil
	}
	if d := old - amount; d > supply {
		return 0, invalid("Invalid params: the supply of %s (%d) is lower than the %d this would remove; set the supply first (ferry_setMint)", mint, supply, d)
	}
	return supply - (old - amount), nil
}

func addChecked(a, b uint64) (uint64, error) {
	if b > math.MaxUint64-a {
		return 0, fmt.Errorf("%d + %d overflows u64", a, b)
	}
	return a + b, nil
}

func absDiff(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}

// SetMintRequest is ferry_setMint: set a mint's supply, decimals and
// authorities, or create a mint at any address (with Decimals).
type SetMintRequest struct {
	Mint   string  `json:"mint" validate:"required,pubkey" doc:"Mint address (base58). A mint that does not exist is created when decimals is given."`
	Supply *uint64 `json:"supply,omitempty" doc:"Supply in base units."`
	// Decimals is a u8; it is required to create a mint.
	Decimals *uint32 `json:"decimals,omitempty" validate:"max=255" doc:"Decimals (0..255); required to create a mint."`
	// MintAuthority and FreezeAuthority take a base58 key, or "null" to
	// remove the authority.
	MintAuthority   *string `json:"mintAuthority,omitempty" doc:"Mint authority (base58), or \"null\" to remove it (fixed supply)."`
	FreezeAuthority *string `json:"freezeAuthority,omitempty" doc:"Freeze authority (base58), or \"null\" to remove it."`
	// TokenProgram owns a created mint (default SPL Token); for an
	// existing mint it must be the mint's owner.
	TokenProgram string `json:"tokenProgram,omitempty" validate:"pubkey" doc:"Token program (base58) of a mint to create; default SPL Token."`
}

// SetMint sets the fields of an SPL Token or Token-2022 mint, creating an
// 82-byte initialized mint (rent-exempt) when none exists and Decimals is
// given; creating one at a real cluster's address (USDC's, say) makes that
// address usable locally. The supply is set as given: balances are not
// touched.
func (n *Node) SetMint(ctx context.Context, req SetMintRequest) (*WriteResult, error) {
	mint, err := parseKey(req.Mint)
	if err != nil {
		return nil, err
	}
	program, err := tokenProgram(req.TokenProgram)
	if err != nil {
		return nil, err
	}
	if req.Decimals != nil && *req.Decimals > math.MaxUint8 {
		return nil, invalid("Invalid params: decimals %d exceeds 255", *req.Decimals)
	}
	var mintAuth, freezeAuth *solana.PublicKey
	if req.MintAuthority != nil {
		if mintAuth, err = optKey(*req.MintAuthority); err != nil {
			return nil, err
		}
	}
	if req.FreezeAuthority != nil {
		if freezeAuth, err = optKey(*req.FreezeAuthority); err != nil {
			return nil, err
		}
	}
	if err := n.prefetch(ctx, mint); err != nil {
		return nil, err
	}
	return n.write(ctx, "setMint", func(w ledger.AccountWriter) ([]solana.PublicKey, error) {
		a := w.Get(mint)
		var mi spl.Mint
		switch {
		case a == nil && req.Decimals == nil:
			return nil, invalid("Invalid params: mint %s does not exist on the %s node; give decimals to create it", mint, n.name)
		case a == nil:
			if program.IsZero() {
				program = spl.TokenProgramID
			}
			a = &ledger.Account{Lamports: n.l.MinimumBalanceForRentExemption(spl.MintSize), Owner: program, Data: make([]byte, spl.MintSize)}
			mi.IsInitialized = true
		default:
			if err := refuseSysvar(mint, a); err != nil {
				return nil, err
			}
			if !spl.IsTokenProgram(a.Owner) {
				return nil, invalid("Invalid params: %s is not a mint (owner %s)", mint, a.Owner)
			}
			if !program.IsZero() && program != a.Owner {
				return nil, invalid("Invalid params: mint %s belongs to the token program %s, not %s", mint, a.Owner, program)
			}
			if mi, err = spl.DecodeMint(a.Data); err != nil {
				return nil, invalid("Invalid params: %s is not a mint: %v", mint, err)
			}
		}
		if req.Supply != nil {
			mi.Supply = *req.Supply
		}
		if req.Decimals != nil {
			mi.Decimals = uint8(*req.Decimals)
		}
		if req.MintAuthority != nil {
			mi.MintAuthority = mintAuth
		}
		if req.FreezeAuthority != nil {
			mi.FreezeAuthority = freezeAuth
		}
		mi.EncodeInto(a.Data)
		w.Set(mint, a)
		return []solana.PublicKey{mint}, nil
	})
}

// TokenBacking keeps the base layer in step with token balances a
// cheatcode changes on the ephemeral rollup. Every rollup balance is a
// claim on the mint's global vault on base (docs/localnet.md §4, I2): a
// rollup balance raised without raising the vault could be withdrawn from
// a vault that does not hold it, and the validator would retry that payout
// forever. Back moves the vault (and the base mint's supply) by amount, up
// or down, in one base-layer privileged write.
type TokenBacking interface {
	Back(ctx context.Context, mint solana.PublicKey, increase bool, amount uint64) error
}

// VaultBacking is the TokenBacking of a local pair: it writes the mint's
// global vault ATA on the base ledger.
type VaultBacking struct {
	// Base is the base-layer ledger.
	Base *ledger.Ledger
	// Logger receives one line per vault change (default: discard).
	Logger *slog.Logger
}

// Back moves the vault of mint on base by amount (see TokenBacking). It
// refuses a mint without a vault on base (never deposited nor
// initialized for the rollup) and a decrease below the vault's balance.
func (v *VaultBacking) Back(ctx context.Context, mint solana.PublicKey, increase bool, amount uint64) error {
	var vault solana.PublicKey
	var ferr error
	slot, err := v.Base.Apply(ctx, func(w ledger.AccountWriter) error {
		m := w.Get(mint)
		if m == nil || !spl.IsTokenProgram(m.Owner) {
			ferr = invalid("Invalid params: mint %s does not exist on base, so no vault backs its rollup balances", mint)
			return ferr
		}
		mi, err := spl.DecodeMint(m.Data)
		if err != nil {
			ferr = invalid("Invalid params: %s is not a mint on base: %v", mint, err)
			return ferr
		}
		vault, _ = espl.FindVaultATA(mint, m.Owner)
		va := w.Get(vault)
		var ta spl.TokenAccount
		if va != nil {
			ta, err = spl.DecodeTokenAccount(va.Data)
		}
		if va == nil || err != nil {
			ferr = invalid("Invalid params: mint %s has no vault on base (%s): deposit it into the rollup once (or initialize it) before setting rollup balances", mint, vault)
			return ferr
		}
		old := ta.Amount
		if increase {
			ta.Amount, err = addChecked(old, amount)
		} else if amount > old {
			err = fmt.Errorf("the vault holds %d", old)
		} else {
			ta.Amount = old - amount
		}
		if err != nil {
			ferr = invalid("Invalid params: the base vault %s of %s cannot move by %d: %v", vault, mint, amount, err)
			return ferr
		}
		if mi.Supply, ferr = moveSupply(mi.Supply, old, ta.Amount, mint); ferr != nil {
			return ferr
		}
		ta.EncodeInto(va.Data)
		mi.EncodeInto(m.Data)
		w.Set(vault, va)
		w.Set(mint, m)
		return nil
	})
	if ferr != nil {
		return ferr
	}
	if err != nil {
		return internal("write the base vault", err)
	}
	log := v.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log.Info("cheatcode", "component", "cheatcodes", "node", NodeBase, "method", "setTokenAccount (rollup backing)",
		"slot", slot, "accounts", []string{vault.String(), mint.String()}, "increase", increase, "amount", amount)
	return nil
}
