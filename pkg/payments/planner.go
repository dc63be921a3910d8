package payments

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/cluster"
	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// Amount limits and constants of the hosted API.
const (
	MaxDelayMs            = 600_000
	MaxSplit              = espl.APIMaxSplit
	GaslessMinAmount      = 500_000
	GaslessRelayFee       = 200_000
	RentPDATargetLamports = espl.RentPDATargetLamports // LAMPORTS_PER_SOL / 50
)

// Planner turns validated requests into unsigned transactions. Its zero
// value works; the fields tune caching, randomness and defaults. A Planner is
// safe for concurrent use.
type Planner struct {
	// Cache memoises PDA derivations across requests; nil uses a private
	// cache created on first use.
	Cache *espl.Cache
	// Rand supplies shuttle ids, group ids and sealed-box keys; nil means
	// crypto/rand. Tests inject a deterministic reader.
	Rand io.Reader
	// FallbackValidator is used when getIdentity fails; zero means MAS1…
	// (the hosted API's fallback).
	FallbackValidator solana.PublicKey
	// DefaultMints are the deposit mints used when a request omits mint,
	// per cluster kind. Mainnet, devnet and custom default to USDC.
	DefaultMints map[cluster.Kind]solana.PublicKey
	// Sponsor pays fees for gasless transfers; nil disables gasless
	// (503 SPONSOR_UNAVAILABLE).
	Sponsor ed25519.PrivateKey
	// GaslessMints overrides the gasless allow-list per cluster kind; a kind
	// missing from the map uses the hosted API's list (custom and local: any
	// mint).
	GaslessMints map[cluster.Kind][]solana.PublicKey
}

var defaultCache = espl.NewCache(4096)

func (p *Planner) cache() *espl.Cache {
	if p.Cache != nil {
		return p.Cache
	}
	return defaultCache
}

// RandReader is the planner's source of randomness (Rand, else
// crypto/rand).
func (p *Planner) RandReader() io.Reader { return p.rand() }

func (p *Planner) rand() io.Reader {
	if p.Rand != nil {
		return p.Rand
	}
	return rand.Reader
}

func (p *Planner) fallbackValidator() solana.PublicKey {
	if p.FallbackValidator.IsZero() {
		return espl.ValidatorAsia
	}
	return p.FallbackValidator
}

func mustKey(s string) solana.PublicKey {
	k, err := solana.PublicKeyFromBase58(s)
	if err != nil {
		// Callers pass only schema-validated public keys.
		panic("payments: unvalidated public key " + s)
	}
	return k
}

func optKey(s string) solana.PublicKey {
	if s == "" {
		return solana.PublicKey{}
	}
	return mustKey(s)
}

// resolveValidator returns the request's validator, else the ephemeral
// rollup's identity, else the fallback (failures are not fatal, as in the
// hosted API).
func (p *Planner) resolveValidator(ctx context.Context, c Chain, given string) solana.PublicKey {
	if given != "" {
		return mustKey(given)
	}
	if id, err := c.Identity(ctx); err == nil && !id.IsZero() {
		return id
	}
	return p.fallbackValidator()
}

// tokenProgram resolves a mint's token program from its owner: one read
// of the mint (none when cached) decides, as on the hosted API.
func tokenProgram(ctx context.Context, c Chain, mint solana.PublicKey) (solana.PublicKey, error) {
	var owner solana.PublicKey
	var found bool
	if r, ok := c.(MintProgramResolver); ok {
		o, err := r.MintProgram(ctx, mint)
		switch {
		case errors.Is(err, ErrNoAccount):
		case err != nil:
			return owner, rpcError("Failed to resolve mint token program", err, map[string]any{"mint": mint.String()})
		default:
			owner, found = o, true
		}
	} else {
		a, err := c.Account(ctx, mint)
		if err != nil {
			return owner, rpcError("Failed to resolve mint token program", err, map[string]any{"mint": mint.String()})
		}
		if a != nil {
			owner, found = a.Owner, true
		}
	}
	if !found {
		return owner, badRequest(CodeMintNotFound, "Mint account not found").WithDetails(map[string]any{"mint": mint.String()})
	}
	if !spl.IsTokenProgram(owner) {
		return owner, badRequest(CodeUnsupportedTokenProgram, "Mint owner is not a supported token program").
			WithDetails(map[string]any{"mint": mint.String(), "owner": owner.String()})
	}
	return owner, nil
}

// ownerATA derives a wallet's ATA the way @solana/spl-token does with
// allowOwnerOffCurve=false: PDAs are rejected (400 INVALID_OWNER).
func (p *Planner) ownerATA(owner, mint, tp solana.PublicKey) (solana.PublicKey, error) {
	if !isOnCurve(owner) {
		return solana.PublicKey{}, badRequest(CodeInvalidOwner, "Owner public key %s is off-curve", owner)
	}
	k, _ := p.cache().FindAssociatedTokenAddress(owner, mint, tp)
	return k, nil
}

// Build compiles a plan into the response: the blockhash comes from the
// layer the transaction is sent to, keys are ordered as web3.js orders them,
// and the 1232-byte limit is enforced.
func (p *Planner) Build(ctx context.Context, c Chain, plan *Plan) (*UnsignedTransaction, error) {
	return apiResult(p.build(ctx, c, plan))
}

func (p *Planner) build(ctx context.Context, c Chain, plan *Plan) (*UnsignedTransaction, error) {
	bh, err := c.LatestBlockhash(ctx, plan.SendTo)
	if err != nil {
		return nil, rpcError("Failed to fetch recent blockhash", err, map[string]any{"source": plan.SendTo})
	}
	m, err := txwire.Compile(plan.FeePayer, plan.Instructions, bh.Hash)
	if err != nil {
		return nil, badRequest(CodeTransactionTooLarge, "%s", err.Error())
	}
	tx := txwire.NewUnsigned(m)
	if err := tx.CheckSize(); err != nil {
		return nil, badRequest(CodeTransactionTooLarge, "%s", err.Error()).WithDetails(map[string]any{
			"hint": "build fewer instructions: set up the mint once (initialize-mint) and drop the init flags",
		})
	}
	if len(plan.Signers) > 0 {
		if err := tx.Sign(plan.Signers...); err != nil {
			return nil, fmt.Errorf("partially sign: %w", err)
		}
	}
	req := txwire.RequiredSigners(plan.FeePayer, plan.Instructions)
	out := &UnsignedTransaction{
		Kind:                 plan.Kind,
		Version:              txwire.Legacy.String(),
		TransactionBase64:    base64.StdEncoding.EncodeToString(tx.Bytes()),
		SendTo:               plan.SendTo,
		From:                 plan.From,
		RecentBlockhash:      bh.Hash.String(),
		LastValidBlockHeight: bh.LastValidBlockHeight,
		InstructionCount:     len(plan.Instructions),
		RequiredSigners:      make([]string, len(req)),
		Fees:                 plan.Fees,
	}
	for i, k := range req {
		out.RequiredSigners[i] = k.String()
	}
	if plan.SendTo == Ephemeral {
		out.SendRPCEndpoint = c.EphemeralEndpoint()
	}
	if !plan.Validator.IsZero() {
		out.Validator = plan.Validator.String()
	}
	return out, nil
}

func parseDelay(name, v string) (uint64, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, badRequest(CodeInvalidAmount, "%s must be an integer string", name)
	}
	return n, nil
}

// delegatedValidator reads an account's delegation record on base and
// returns the validator it is delegated to, if any. Like the hosted API, a
// record counts only if it exists, has lamports, is owned by the
// delegation program and holds at least the authority.
func delegatedValidator(ctx context.Context, c Chain, account solana.PublicKey, cache *espl.Cache) (solana.PublicKey, solana.PublicKey, bool, error) {
	rec, _ := cache.FindDelegationRecord(account)
	a, err := c.Account(ctx, rec)
	if err != nil {
		return solana.PublicKey{}, rec, false, err
	}
	if a == nil || a.Lamports == 0 || a.Owner != espl.DelegationProgramID {
		return solana.PublicKey{}, rec, false, nil
	}
	v, ok := espl.DelegationRecordValidator(a.Data)
	return v, rec, ok, nil
}

// wrapSOL returns the wSOL wrap and rent-PDA top-up prefix of the hosted
// API (payments-api.md §8.11 items 1–2) when the sender's wrapped-SOL ATA
// holds less than required.
func (p *Planner) wrapSOL(ctx context.Context, c Chain, payer, owner, ata solana.PublicKey, required uint64) ([]txwire.Instruction, error) {
	acct, err := c.Account(ctx, ata)
	if err != nil {
		return nil, rpcError("Failed to fetch wrapped SOL balance", err, nil)
	}
	var have uint64
	if acct != nil {
		have = spl.TokenAmountOf(acct.Data)
	}
	var ixs []txwire.Instruction
	if have < required {
		ixs = append(ixs,
			spl.CreateAssociatedTokenAccount(payer, owner, spl.NativeMintID, spl.TokenProgramID, true),
			spl.SystemTransfer(owner, ata, required-have),
			spl.TokenSyncNative(spl.TokenProgramID, ata))
	}
	rent, _ := p.cache().FindRentPDA()
	ra, err := c.Account(ctx, rent)
	if err != nil {
		return nil, rpcError("Failed to fetch rent PDA balance", err, nil)
	}
	var lamports uint64
	if ra != nil {
		lamports = ra.Lamports
	}
	if lamports < RentPDATargetLamports {
		ixs = append(ixs, spl.SystemTransfer(payer, rent, RentPDATargetLamports-lamports))
	}
	return ixs, nil
}

func (p *Planner) vaultInit(payer, mint, tp solana.PublicKey) []txwire.Instruction {
	vault, _ := p.cache().FindGlobalVault(mint)
	return []txwire.Instruction{
		espl.InitGlobalVault(espl.InitGlobalVaultArgs{Payer: payer, Mint: mint, TokenProgram: tp, Cache: p.cache()}),
		spl.CreateAssociatedTokenAccount(payer, vault, mint, tp, true),
	}
}
