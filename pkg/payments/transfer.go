package payments

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"net/http"
	"strconv"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/cluster"
	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/schema"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// Route is a transfer's (visibility, fromBalance, toBalance).
type Route struct {
	Visibility, From, To string
}

func (r Route) String() string {
	return fmt.Sprintf("visibility=%s, fromBalance=%s, toBalance=%s", r.Visibility, r.From, r.To)
}

// Supported reports whether ferry (like MagicBlock's SDK) can build the
// route: every combination except public base↔ephemeral.
func (r Route) Supported() bool {
	return !(r.Visibility == Public && r.From != r.To)
}

// SendTo is where the route's transaction goes: its source balance's layer.
func (r Route) SendTo() string { return r.From }

// transferPlan is a validated transfer with parsed values.
type transferPlan struct {
	req         *TransferRequest
	route       Route
	from, mint  solana.PublicKey
	to          solana.PublicKey // recipient owner, or the stealth pool
	handle      string           // stealth handle, when `to` is not a key
	tp          solana.PublicKey
	validator   solana.PublicKey
	hasVal      bool
	exactOut    bool
	transferAmt uint64 // what the SDK instructions move
	platformFee uint64
	privacyFee  uint64
	relayFee    uint64
	minDelay    uint64
	maxDelay    uint64
	split       uint32
	clientRef   *uint64
	payer       solana.PublicKey
	gasless     bool
}

// checkParams applies the runtime rules that need no chain access, in the
// hosted API's order.
func (p *Planner) checkParams(req *TransferRequest, kind cluster.Kind) (*transferPlan, error) {
	t := &transferPlan{req: req, route: Route{req.Visibility, req.FromBalance, req.ToBalance}}
	t.from, t.mint = mustKey(req.From), mustKey(req.Mint)
	t.exactOut = boolOr(req.ExactOut, true)
	amount := uint64(req.Amount)

	var err error
	if t.minDelay, err = parseDelay("minDelayMs", req.MinDelayMs); err != nil {
		return nil, err
	}
	t.maxDelay = t.minDelay
	if req.MaxDelayMs != "" {
		if t.maxDelay, err = parseDelay("maxDelayMs", req.MaxDelayMs); err != nil {
			return nil, err
		}
	}
	if req.ClientRefID != "" {
		v, ok := schema.ParseU64(req.ClientRefID)
		if !ok {
			return nil, badRequest(CodeInvalidAmount, "clientRefId must be an integer string")
		}
		t.clientRef = &v
	}
	if t.maxDelay < t.minDelay {
		return nil, privateTransferError("maxDelayMs must be greater than or equal to minDelayMs")
	}
	private := req.Visibility == Private
	if private && t.maxDelay > MaxDelayMs {
		return nil, privateTransferError("maxDelayMs must be less than or equal to 600000")
	}

	bps := int64(0)
	if req.PlatformFeeBps != nil {
		bps = *req.PlatformFeeBps
	}
	if bps > 0 {
		if req.PlatformFeeAccount == "" {
			return nil, badRequest(CodeInvalidPlatformFee, "platformFeeAccount is required when platformFeeBps is greater than 0")
		}
		if req.FromBalance != Base {
			return nil, badRequest(CodeInvalidPlatformFee, `platform fees are supported only when fromBalance is "base"`)
		}
		t.platformFee = espl.BasisPointFee(amount, uint64(bps))
		if !t.exactOut && t.platformFee >= amount {
			return nil, badRequest(CodeInvalidPlatformFee, "platform fee must be less than amount when exactOut is false")
		}
	}
	t.transferAmt = amount
	if !t.exactOut {
		t.transferAmt = amount - t.platformFee
	}
	t.split = 1
	if req.Split != nil {
		t.split = uint32(*req.Split)
	}
	if private && uint64(t.split) > t.transferAmt {
		return nil, privateTransferError("split cannot exceed transfer amount")
	}

	if boolOr(req.Gasless, false) && t.from.IsOnCurve() {
		if !p.gaslessMintAllowed(kind, t.mint) {
			return nil, badRequest(CodeInvalidGaslessMint, "gasless is supported only for approved stablecoin mints")
		}
		if amount < GaslessMinAmount {
			return nil, badRequest(CodeInvalidGaslessAmount, "gasless amount must be at least 0.5 USDC/USDT")
		}
		if p.Sponsor == nil {
			return nil, apierr.New(http.StatusServiceUnavailable, CodeSponsorUnavailable, "Gasless transfers are not configured")
		}
		t.gasless, t.relayFee = true, GaslessRelayFee
	}
	t.payer = t.from
	if t.gasless {
		t.payer = publicOf(p.Sponsor)
	}
	return t, nil
}

func publicOf(k []byte) solana.PublicKey {
	var p solana.PublicKey
	copy(p[:], k[32:])
	return p
}

func (p *Planner) gaslessMintAllowed(kind cluster.Kind, mint solana.PublicKey) bool {
	list, ok := p.GaslessMints[kind]
	if !ok {
		switch kind {
		case cluster.Devnet:
			list = []solana.PublicKey{espl.USDCDevnet}
		case cluster.Mainnet:
			list = []solana.PublicKey{espl.USDCMainnet, espl.USDTMainnet}
		default:
			return true
		}
	}
	for _, m := range list {
		if m == mint {
			return true
		}
	}
	return false
}

// Plan is a transaction before compilation: its instructions, fee payer
// and what the response reports besides the transaction itself.
type Plan struct {
	Kind         string
	SendTo       string
	FeePayer     solana.PublicKey
	Instructions []txwire.Instruction
	// Signers partially sign the transaction (the gasless sponsor).
	Signers   []ed25519.PrivateKey
	From      string           // transfers: the request's fromBalance
	Validator solana.PublicKey // zero when the route resolved none
	Fees      *Fees
}

// Transfer builds POST /v1/spl/transfer. req must already have passed
// schema validation (schema.Decode).
func (p *Planner) Transfer(ctx context.Context, c Chain, req *TransferRequest) (*UnsignedTransaction, error) {
	plan, err := p.PlanTransfer(ctx, c, req)
	if err != nil {
		return nil, err
	}
	return p.Build(ctx, c, plan)
}

// PlanTransfer resolves a transfer into its instructions without fetching a
// blockhash or compiling.
func (p *Planner) PlanTransfer(ctx context.Context, c Chain, req *TransferRequest) (*Plan, error) {
	return apiResult(p.planTransfer(ctx, c, req))
}

func (p *Planner) planTransfer(ctx context.Context, c Chain, req *TransferRequest) (*Plan, error) {
	t, err := p.checkParams(req, c.Cluster())
	if err != nil {
		return nil, err
	}
	if !t.route.Supported() {
		return nil, badRequest(CodeUnsupportedTransferRoute, "transferSpl route not implemented: %s", t.route)
	}
	if err := p.resolveDestination(ctx, c, t); err != nil {
		return nil, err
	}
	if t.tp, err = tokenProgram(ctx, c, t.mint); err != nil {
		return nil, err
	}
	private := req.Visibility == Private
	if req.Validator != "" || private || req.FromBalance == Base || boolOr(req.InitVaultIfMissing, false) {
		t.validator, t.hasVal = p.resolveValidator(ctx, c, req.Validator), true
	}

	plan := &Plan{Kind: KindTransfer, SendTo: t.route.SendTo(), FeePayer: t.payer, From: req.FromBalance}
	if req.FromBalance == Base {
		pre, err := p.transferPrefix(ctx, c, t)
		if err != nil {
			return nil, err
		}
		plan.Instructions = append(plan.Instructions, pre...)
	}
	routeIxs, err := p.routeInstructions(ctx, c, t)
	if err != nil {
		return nil, err
	}
	plan.Instructions = append(plan.Instructions, routeIxs...)
	if req.Memo != "" {
		plan.Instructions = append(plan.Instructions, spl.Memo(req.Memo))
	}
	if t.gasless {
		plan.Signers = append(plan.Signers, p.Sponsor)
	}
	if t.hasVal {
		plan.Validator = t.validator
	}
	fees := Fees{Lamports: "0"}
	tokens := t.platformFee + t.relayFee
	if private && t.route.From == Base && t.route.To == Base {
		fees.Lamports = strconv.FormatUint(espl.PrivateTransferSetupLamports, 10)
		t.privacyFee = espl.PrivacyFee(t.transferAmt)
		tokens += t.privacyFee
	}
	fees.Tokens = strconv.FormatUint(tokens, 10)
	plan.Fees = &fees
	return plan, nil
}

// resolveDestination parses `to`: a public key, or a stealth handle whose
// pool must exist on base (private base→base only).
func (p *Planner) resolveDestination(ctx context.Context, c Chain, t *transferPlan) error {
	if schema.IsPubkey(t.req.To) {
		t.to = mustKey(t.req.To)
		return nil
	}
	t.handle = t.req.To
	if t.route != (Route{Private, Base, Base}) {
		return badRequest(CodeInvalidStealthTransfer, "Stealth handle transfers require visibility=private, fromBalance=base, and toBalance=base").
			WithDetails(map[string]any{"to": t.req.To})
	}
	pool, _, err := p.cache().FindStealthPool([]byte(t.handle))
	if err != nil {
		return badRequest(CodeInvalidStealthHandle, "handle must be between 1 and 255 UTF-8 bytes")
	}
	a, err := c.Account(ctx, pool)
	if err != nil {
		return rpcError("Failed to fetch stealth pool account", err, nil)
	}
	if a == nil || (a.Owner != espl.ProgramID && a.Owner != espl.DelegationProgramID) {
		owner := ""
		if a != nil {
			owner = a.Owner.String()
		}
		return badRequest(CodeStealthPoolNotFound, "Stealth handle is not initialized").
			WithDetails(map[string]any{"handle": t.handle, "stealthPool": pool.String(), "owner": owner})
	}
	t.to = pool
	return nil
}

// transferPrefix is the hosted API's wSOL wrap, rent top-up, relay fee and
// platform fee, which precede the route's instructions.
func (p *Planner) transferPrefix(ctx context.Context, c Chain, t *transferPlan) ([]txwire.Instruction, error) {
	wrap := t.mint == spl.NativeMintID && t.tp == spl.TokenProgramID && t.req.Visibility == Private
	if !wrap && !t.gasless && t.platformFee == 0 {
		return nil, nil // the sender's ATA is the SDK's to derive (routeInstructions)
	}
	var ixs []txwire.Instruction
	fromATA, err := p.ownerATA(t.from, t.mint, t.tp)
	if err != nil {
		return nil, err
	}
	if wrap {
		required := t.transferAmt + t.platformFee
		if t.route.To == Base && t.exactOut {
			required += espl.PrivacyFee(t.transferAmt)
		}
		wrap, err := p.wrapSOL(ctx, c, t.payer, t.from, fromATA, required)
		if err != nil {
			return nil, err
		}
		ixs = append(ixs, wrap...)
	}
	if t.gasless {
		sponsor := publicOf(p.Sponsor)
		sponsorATA, _ := p.cache().FindAssociatedTokenAddress(sponsor, t.mint, t.tp)
		ixs = append(ixs, spl.TokenTransfer(t.tp, fromATA, sponsorATA, t.from, t.relayFee))
	}
	if t.platformFee > 0 {
		ixs = append(ixs, spl.TokenTransfer(t.tp, fromATA, mustKey(t.req.PlatformFeeAccount), t.from, t.platformFee))
	}
	return ixs, nil
}

// sdkATA derives an ATA of the transfer itself as MagicBlock's SDK
// (transferSpl) derives it: an off-curve owner fails the build with the
// SDK's error, which the hosted API passes on as 400
// TRANSACTION_BUILD_ERROR "Owner public key is off-curve" (the API's own
// derivations, e.g. for the platform fee, answer INVALID_OWNER).
func (p *Planner) sdkATA(owner, mint, tp solana.PublicKey) (solana.PublicKey, error) {
	if !isOnCurve(owner) {
		return solana.PublicKey{}, badRequest(CodeTransactionBuildError, "Owner public key is off-curve")
	}
	k, _ := p.cache().FindAssociatedTokenAddress(owner, mint, tp)
	return k, nil
}

// routeInstructions is MagicBlock's transferSpl for each supported route
// (espl-program.md §8.1).
func (p *Planner) routeInstructions(ctx context.Context, c Chain, t *transferPlan) ([]txwire.Instruction, error) {
	req, cache := t.req, p.cache()
	initVault := boolOr(req.InitVaultIfMissing, false)
	initATAs := boolOr(req.InitAtasIfMissing, false)
	fromATA, err := p.sdkATA(t.from, t.mint, t.tp)
	if err != nil {
		return nil, err
	}
	var ixs []txwire.Instruction
	switch t.route {
	case Route{Public, Base, Base}, Route{Public, Ephemeral, Ephemeral}, Route{Private, Ephemeral, Ephemeral}:
		toATA, err := p.sdkATA(t.to, t.mint, t.tp)
		if err != nil {
			return nil, err
		}
		if t.route.From == Base {
			if initVault {
				ixs = append(ixs, p.vaultInit(t.payer, t.mint, t.tp)...)
			}
			if initATAs {
				ixs = append(ixs, spl.CreateAssociatedTokenAccount(t.payer, t.from, t.mint, t.tp, true))
			}
		}
		return append(ixs, spl.TokenTransfer(t.tp, fromATA, toATA, t.from, t.transferAmt)), nil

	case Route{Private, Base, Base}:
		eata, _ := cache.FindEphemeralATA(t.from, t.mint)
		current, rec, ok, err := delegatedValidator(ctx, c, eata, cache)
		if err != nil {
			return nil, rpcError("Failed to fetch delegation record(s)", err, nil)
		}
		if ok && current != t.validator {
			return nil, badRequest(CodeEATAValidatorMismatch, "Projected token account is delegated to another validator").
				WithDetails(map[string]any{"accounts": []map[string]any{{
					"role": "source", "owner": t.from.String(), "mint": t.mint.String(), "ata": fromATA.String(),
					"eata": eata.String(), "delegationRecord": rec.String(),
					"currentValidator": current.String(), "selectedValidator": t.validator.String(),
				}}})
		}
		if initVault {
			ixs = append(ixs, p.vaultInit(t.payer, t.mint, t.tp)...)
			ixs = append(ixs, espl.InitTransferQueue(espl.InitTransferQueueArgs{Payer: t.payer, Mint: t.mint, Validator: t.validator, TokenProgram: t.tp, Cache: cache}))
		}
		if initATAs {
			ixs = append(ixs, spl.CreateAssociatedTokenAccount(t.payer, t.from, t.mint, t.tp, true))
		}
		shuttleID, err := espl.RandomShuttleID(p.rand())
		if err != nil {
			return nil, fmt.Errorf("shuttle id: %w", err)
		}
		ix25, err := espl.PrivateTransfer(espl.PrivateTransferArgs{
			Payer: t.payer, Owner: t.from, Mint: t.mint, TokenProgram: t.tp, Validator: t.validator,
			Destination: t.to, ShuttleID: shuttleID, Amount: t.transferAmt, DeductFee: !t.exactOut,
			MinDelayMs: t.minDelay, MaxDelayMs: t.maxDelay, Split: t.split, ClientRefID: t.clientRef,
			Source: fromATA, Rand: p.rand(), Cache: cache,
		})
		if err != nil {
			return nil, fmt.Errorf("build private transfer: %w", err)
		}
		return append(ixs,
			espl.InitEphemeralATA(espl.InitEphemeralATAArgs{Payer: t.payer, Owner: t.from, Mint: t.mint, Cache: cache}),
			espl.DelegateEphemeralATA(espl.DelegateEphemeralATAArgs{Payer: t.payer, Owner: t.from, Mint: t.mint, Validator: t.validator, Cache: cache}),
			ix25), nil

	case Route{Private, Base, Ephemeral}:
		toATA, err := p.sdkATA(t.to, t.mint, t.tp)
		if err != nil {
			return nil, err
		}
		if initVault {
			ixs = append(ixs, p.vaultInit(t.payer, t.mint, t.tp)...)
		}
		if initATAs {
			ixs = append(ixs, spl.CreateAssociatedTokenAccount(t.payer, t.from, t.mint, t.tp, true))
		}
		if boolOr(req.InitIfMissing, false) {
			ixs = append(ixs,
				spl.CreateAssociatedTokenAccount(t.payer, t.to, t.mint, t.tp, true),
				espl.InitEphemeralATA(espl.InitEphemeralATAArgs{Payer: t.payer, Owner: t.to, Mint: t.mint, Cache: cache}),
				espl.CreateEphemeralATAPermission(espl.CreateEphemeralATAPermissionArgs{Payer: t.payer, Owner: t.to, Mint: t.mint, Cache: cache}),
				espl.DelegateEphemeralATA(espl.DelegateEphemeralATAArgs{Payer: t.payer, Owner: t.to, Mint: t.mint, Validator: t.validator, Cache: cache}))
		}
		shuttleID, err := espl.RandomShuttleID(p.rand())
		if err != nil {
			return nil, fmt.Errorf("shuttle id: %w", err)
		}
		return append(ixs, espl.DepositShuttle(espl.DepositShuttleArgs{
			Payer: t.payer, Owner: t.from, Mint: t.mint, TokenProgram: t.tp, Validator: t.validator,
			ShuttleID: shuttleID, Amount: t.transferAmt, Source: fromATA, Destination: toATA, Cache: cache,
		})), nil

	case Route{Private, Ephemeral, Base}:
		if initVault {
			ixs = append(ixs, espl.InitTransferQueue(espl.InitTransferQueueArgs{Payer: t.payer, Mint: t.mint, Validator: t.validator, TokenProgram: t.tp, Cache: cache}))
		}
		ix16, err := espl.DepositAndQueueTransfer(espl.DepositAndQueueTransferArgs{
			Owner: t.from, Mint: t.mint, Validator: t.validator, TokenProgram: t.tp, Destination: t.to,
			Amount: t.transferAmt, MinDelayMs: t.minDelay, MaxDelayMs: t.maxDelay, Split: t.split,
			ClientRefID: t.clientRef, Source: fromATA, WithGroupReceiptPermission: true, Rand: p.rand(), Cache: cache,
		})
		if err != nil {
			return nil, fmt.Errorf("build queued transfer: %w", err)
		}
		return append(ixs, ix16), nil
	}
	return nil, badRequest(CodeUnsupportedTransferRoute, "transferSpl route not implemented: %s", t.route)
}
