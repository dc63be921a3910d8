package rpcserver

import (
	"context"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// Local-only faucet methods (EnableFaucet), ferry's counterpart of
// Surfpool's surfnet_* and Anvil's anvil_* cheat codes. They exist only on
// a node that `ferry serve` runs on its embedded base ledger; a real
// cluster answers -32601 Method not found.
const (
	// MethodFaucetInfo: params [] → {"faucet": ADDRESS, "defaultMint":
	// ADDRESS or null}.
	MethodFaucetInfo = "ferry_faucetInfo"
	// MethodCreateMint: params [{"decimals"?: 0..18 (default 6),
	// "token2022"?: bool}] → {"mint", "signature", "decimals",
	// "tokenProgram"}. The faucet pays and is the mint authority.
	MethodCreateMint = "ferry_createMint"
	// MethodMintTo: params [MINT, OWNER, AMOUNT] → SIGNATURE. Mints AMOUNT
	// base units to OWNER's associated token account (created if
	// missing). The faucet must be the mint's authority.
	MethodMintTo = "ferry_mintTo"
)

// DefaultFaucetMintDecimals is ferry_createMint's default.
const DefaultFaucetMintDecimals = 6

// FaucetOptions configure EnableFaucet.
type FaucetOptions struct {
	// DefaultMint is reported by ferry_faucetInfo (the demo mint of
	// `ferry serve`); nil or zero reports null.
	DefaultMint func() solana.PublicKey
}

// FaucetInfo is the result of ferry_faucetInfo.
type FaucetInfo struct {
	Faucet      string  `json:"faucet"`
	DefaultMint *string `json:"defaultMint"`
}

// CreateMintResult is the result of ferry_createMint.
type CreateMintResult struct {
	Mint         string `json:"mint"`
	Signature    string `json:"signature"`
	Decimals     uint8  `json:"decimals"`
	TokenProgram string `json:"tokenProgram"`
}

// EnableFaucet registers ferry_faucetInfo, ferry_createMint and
// ferry_mintTo, which move funds out of the ledger's faucet with real,
// signed transactions (ledger.Faucet). Only local development nodes
// should enable them. ferry_createMint and ferry_mintTo are local-only
// (HandleLocalOnly): browsers may call them only from
// Options.FaucetOrigins; ferry_faucetInfo only reads.
func (h *Handler) EnableFaucet(o FaucetOptions) {
	h.Handle(MethodFaucetInfo, func(_ context.Context, p Params) (any, error) {
		if err := p.Count(0, 0); err != nil {
			return nil, err
		}
		out := FaucetInfo{Faucet: h.l.Faucet().PublicKey().String()}
		if o.DefaultMint != nil {
			if m := o.DefaultMint(); !m.IsZero() {
				s := m.String()
				out.DefaultMint = &s
			}
		}
		return out, nil
	})
	h.HandleLocalOnly(MethodCreateMint, h.faucetCreateMint)
	h.HandleLocalOnly(MethodMintTo, h.faucetMintTo)
}

func (h *Handler) faucetCreateMint(ctx context.Context, p Params) (any, error) {
	if err := p.Count(0, 1); err != nil {
		return nil, err
	}
	var cfg struct {
		Decimals  *int `json:"decimals"`
		Token2022 bool `json:"token2022"`
	}
	if err := p.Config(0, &cfg); err != nil {
		return nil, err
	}
	decimals := DefaultFaucetMintDecimals
	if cfg.Decimals != nil {
		decimals = *cfg.Decimals
	}
	if decimals < 0 || decimals > 18 {
		return nil, InvalidParam("Invalid param: decimals must be between 0 and 18")
	}
	mint, sig, err := h.l.Faucet().CreateMint(ctx, ledger.MintOptions{Decimals: uint8(decimals), Token2022: cfg.Token2022})
	if err != nil {
		return nil, Errorf(CodeInternalError, "create mint failed: %v", err)
	}
	program := spl.TokenProgramID
	if cfg.Token2022 {
		program = spl.Token2022ProgramID
	}
	return CreateMintResult{Mint: mint.String(), Signature: sig.String(), Decimals: uint8(decimals), TokenProgram: program.String()}, nil
}

func (h *Handler) faucetMintTo(ctx context.Context, p Params) (any, error) {
	if err := p.Count(3, 3); err != nil {
		return nil, err
	}
	mint, err := p.Pubkey(0)
	if err != nil {
		return nil, err
	}
	owner, err := p.Pubkey(1)
	if err != nil {
		return nil, err
	}
	amount, err := p.Uint(2)
	if err != nil {
		return nil, err
	}
	if amount == 0 {
		return nil, InvalidParam("Invalid param: amount must be positive")
	}
	a, _ := h.l.Account(mint, ledger.Processed)
	if a == nil || !spl.IsTokenProgram(a.Owner) {
		return nil, InvalidParam("Invalid param: %s is not a mint", mint)
	}
	m, err := spl.DecodeMint(a.Data)
	if err != nil {
		return nil, InvalidParam("Invalid param: %s is not a mint", mint)
	}
	faucet := h.l.Faucet().PublicKey()
	if m.MintAuthority == nil || *m.MintAuthority != faucet {
		return nil, InvalidParam("Invalid param: the faucet %s is not the mint authority of %s; only mints created by the faucet can be minted", faucet, mint)
	}
	sig, err := h.l.Faucet().MintTo(ctx, mint, owner, amount)
	if err != nil {
		return nil, Errorf(CodeInternalError, "mint request failed: %v", err)
	}
	return sig, nil
}
