package payments

import (
	"context"
	"crypto/ed25519"
	"fmt"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// ERLocator is implemented by chains that can find the ephemeral-rollup
// node an account is delegated to and read blockhashes from any node:
// what undelegation needs (payments-api.md §5.10). Chains without it (the
// offline FixedChain) send undelegations to their own ephemeral endpoint.
type ERLocator interface {
	// DelegationStatus asks the cluster's delegation router whether key is
	// delegated and to which node (fqdn). An error means the router could
	// not answer, including "no router configured".
	DelegationStatus(ctx context.Context, key solana.PublicKey) (delegated bool, fqdn string, err error)
	// TEEEndpoint is the RPC URL of the cluster's TEE rollup (the
	// configured one, else MagicBlock's), or "" when there is none.
	TEEEndpoint() string
	// LatestBlockhashAt returns a "confirmed" blockhash from the rollup
	// node at url, with the request's auth token if any.
	LatestBlockhashAt(ctx context.Context, url string) (Blockhash, error)
}

// atEndpoint is a Chain whose ephemeral layer is one specific rollup node.
type atEndpoint struct {
	Chain
	loc ERLocator
	url string
}

func (a atEndpoint) LatestBlockhash(ctx context.Context, layer string) (Blockhash, error) {
	if layer == Ephemeral && a.loc != nil {
		return a.loc.LatestBlockhashAt(ctx, a.url)
	}
	return a.Chain.LatestBlockhash(ctx, layer)
}

func (a atEndpoint) EphemeralEndpoint() string { return a.url }

// UndelegateEphemeralATA builds POST /v1/spl/undelegate-ephemeral-ata: a
// single ESPL 5 instruction, sent to the rollup node the payer's ephemeral
// ATA is delegated to. That node is found with the delegation router
// (getDelegationStatus); failing that, an account delegated to the TEE
// validator goes to the TEE rollup, and (a ferry extension) one delegated
// to the cluster's own rollup validator goes to the cluster's ephemeral
// RPC; otherwise 400 EPHEMERAL_ENDPOINT_UNRESOLVED. When the payer itself
// is delegated it must be to the same validator (else 400
// VALIDATOR_MISMATCH), and the magic fee vault is added.
func (p *Planner) UndelegateEphemeralATA(ctx context.Context, c Chain, req *UndelegateEphemeralATARequest) (*UndelegateEphemeralATAResponse, error) {
	out, err := p.undelegate(ctx, c, req)
	if err != nil {
		return nil, asAPIError(err)
	}
	return out, nil
}

func (p *Planner) undelegate(ctx context.Context, c Chain, req *UndelegateEphemeralATARequest) (*UndelegateEphemeralATAResponse, error) {
	payer, mint := mustKey(req.Payer), mustKey(req.Mint)
	if _, err := tokenProgram(ctx, c, mint); err != nil {
		return nil, err
	}
	cache := p.cache()
	eata, _ := cache.FindEphemeralATA(payer, mint)
	// The router first, then the records on base, as the hosted API asks
	// them.
	loc, _ := c.(ERLocator)
	var routed routerAnswer
	if loc != nil {
		routed.delegated, routed.fqdn, routed.err = loc.DelegationStatus(ctx, eata)
	}
	eataValidator, eataRecord, eataDelegated, err := delegatedValidator(ctx, c, eata, cache)
	if err != nil {
		return nil, rpcError("Failed to fetch delegation record(s)", err, nil)
	}
	endpoint, err := p.resolveEndpoint(ctx, c, routed, eata, eataRecord, eataValidator, eataDelegated)
	if err != nil {
		return nil, err
	}

	args := espl.UndelegateEphemeralATAArgs{Owner: payer, Mint: mint, Cache: cache}
	payerValidator, _, payerDelegated, err := delegatedValidator(ctx, c, payer, cache)
	if err != nil {
		return nil, rpcError("Failed to fetch delegation record(s)", err, nil)
	}
	if payerDelegated {
		if !eataDelegated || payerValidator != eataValidator {
			ev := ""
			if eataDelegated {
				ev = eataValidator.String()
			}
			return nil, badRequest(CodeValidatorMismatch, "Payer and ephemeral ATA are delegated to different validators").
				WithDetails(map[string]any{"payer": payer.String(), "payerValidator": payerValidator.String(),
					"ephemeralAta": eata.String(), "ephemeralAtaValidator": ev})
		}
		args.Validator = payerValidator
	}
	plan := &Plan{Kind: KindUndelegateEphemeralATA, SendTo: Ephemeral, FeePayer: payer,
		Instructions: []txwire.Instruction{espl.UndelegateEphemeralATA(args)}}
	if eataDelegated {
		plan.Validator = eataValidator
	}
	out, err := p.build(ctx, atEndpoint{Chain: c, loc: loc, url: endpoint}, plan)
	if err != nil {
		return nil, err
	}
	return &UndelegateEphemeralATAResponse{UnsignedTransaction: *out}, nil
}

// routerAnswer is the delegation router's answer about an account.
type routerAnswer struct {
	delegated bool
	fqdn      string
	err       error
}

// resolveEndpoint finds the rollup node holding the delegated eATA
// (payments-api.md §5.10) from the router's answer and the eATA's
// delegation record.
func (p *Planner) resolveEndpoint(ctx context.Context, c Chain, routed routerAnswer, eata, record, validator solana.PublicKey, delegated bool) (string, error) {
	loc, ok := c.(ERLocator)
	if !ok {
		// Offline builds: the chain's own rollup is the only one known.
		if ep := c.EphemeralEndpoint(); ep != "" {
			return ep, nil
		}
		return "", badRequest(CodeEphemeralEndpointUnresolved, "Ephemeral RPC endpoint cannot be retrieved").
			WithDetails(map[string]any{"cluster": string(c.Cluster()), "delegatedAccount": eata.String()})
	}
	routerDelegated, fqdn, err := routed.delegated, routed.fqdn, routed.err
	routerError := ""
	switch {
	case err != nil:
		routerError = apierr.RedactURLs(err.Error())
	case routerDelegated:
		if n, nerr := chainclient.NormalizeFQDN(fqdn); nerr == nil && fqdn != "" {
			return n, nil
		}
		routerError = "Delegation router did not return a usable fqdn"
	}
	if delegated {
		if validator == espl.ValidatorTEE {
			if tee := loc.TEEEndpoint(); tee != "" {
				return tee, nil
			}
		}
		if id, err := c.Identity(ctx); err == nil && id == validator && c.EphemeralEndpoint() != "" {
			return c.EphemeralEndpoint(), nil
		}
	}
	details := map[string]any{
		"cluster": string(c.Cluster()), "delegatedAccount": eata.String(), "delegationRecord": record.String(),
		"delegatedValidator": nil, "routerIsDelegated": routerDelegated && err == nil, "routerError": nil,
	}
	if delegated {
		details["delegatedValidator"] = validator.String()
	}
	if routerError != "" {
		details["routerError"] = routerError
	}
	return "", badRequest(CodeEphemeralEndpointUnresolved, "Ephemeral RPC endpoint cannot be retrieved").WithDetails(details)
}

// StealthPool builds POST /v1/spl/stealth-pool: the base-layer setup
// (ESPL 22, create and delegate the pool) and the rollup update (ESPL 21,
// set flags and destinations). Both are signed by the payer and the
// authority.
func (p *Planner) StealthPool(ctx context.Context, c Chain, req *StealthPoolRequest) (*StealthPoolResponse, error) {
	out, err := p.stealthPool(ctx, c, req)
	if err != nil {
		return nil, asAPIError(err)
	}
	return out, nil
}

func (p *Planner) stealthPool(ctx context.Context, c Chain, req *StealthPoolRequest) (*StealthPoolResponse, error) {
	payer, authority := mustKey(req.Payer), mustKey(req.Authority)
	handle := []byte(req.Handle)
	if err := espl.ValidateHandle(handle); err != nil {
		return nil, badRequest(CodeInvalidStealthHandle, "handle must be between 1 and 255 UTF-8 bytes")
	}
	dests := make([]solana.PublicKey, len(req.Destinations))
	for i, d := range req.Destinations {
		dests[i] = mustKey(d)
		if dests[i].IsZero() {
			return nil, badRequest(CodeInvalidPublicKey, "Invalid destinations[%d]", i)
		}
	}
	var flags uint8
	if boolOr(req.SplitAcrossKeys, false) {
		flags = espl.StealthFlagSplitAcrossKeys
	}
	cache := p.cache()
	pool, _, err := cache.FindStealthPool(handle)
	if err != nil {
		return nil, badRequest(CodeInvalidStealthHandle, "handle must be between 1 and 255 UTF-8 bytes")
	}
	validator := p.resolveValidator(ctx, c, req.Validator)
	setupIx, err := espl.EnsureStealthPoolDelegated(espl.EnsureStealthPoolDelegatedArgs{
		Payer: payer, Authority: authority, Handle: handle, Validator: validator, Cache: cache})
	if err != nil {
		return nil, badRequest(CodeInvalidStealthHandle, "handle must be between 1 and 255 UTF-8 bytes")
	}
	updateIx, err := espl.UpdateStealthPool(espl.UpdateStealthPoolArgs{
		Payer: payer, Authority: authority, Handle: handle, Flags: flags, Destinations: dests, Cache: cache})
	if err != nil {
		return nil, fmt.Errorf("build stealth pool update: %w", err)
	}
	setup, err := p.build(ctx, c, &Plan{Kind: KindStealthPool, SendTo: Base, FeePayer: payer,
		Instructions: []txwire.Instruction{setupIx}, Validator: validator})
	if err != nil {
		return nil, err
	}
	update, err := p.build(ctx, c, &Plan{Kind: KindStealthPool, SendTo: Ephemeral, FeePayer: payer,
		Instructions: []txwire.Instruction{updateIx}, Validator: validator})
	if err != nil {
		return nil, err
	}
	return &StealthPoolResponse{UnsignedTransaction: *update, StealthPool: pool.String(), SetupTransaction: setup}, nil
}

// StealthPoolStatus answers GET /v1/spl/stealth-pool: the handle's pool
// address and whether it exists on base, owned by the eSPL or the
// delegation program.
func (p *Planner) StealthPoolStatus(ctx context.Context, c Chain, req *StealthPoolStatusRequest) (*StealthPoolStatusResponse, error) {
	pool, _, err := p.cache().FindStealthPool([]byte(req.Handle))
	if err != nil {
		return nil, badRequest(CodeInvalidStealthHandle, "handle must be between 1 and 255 UTF-8 bytes")
	}
	a, err := c.Account(ctx, pool)
	if err != nil {
		return nil, rpcError("Failed to fetch stealth pool account", err, nil)
	}
	exists := a != nil && (a.Owner == espl.ProgramID || a.Owner == espl.DelegationProgramID)
	return &StealthPoolStatusResponse{StealthPool: pool.String(), Exists: exists}, nil
}

// IsMintInitialized answers GET /v1/spl/is-mint-initialized: whether the
// transfer queue ["queue", mint, validator] exists on base and is owned by
// the delegation program (that is, initialize-mint ran and the queue was
// delegated). The validator defaults as for the builds.
func (p *Planner) IsMintInitialized(ctx context.Context, c Chain, req *MintInitializationRequest) (*MintInitializationResponse, error) {
	mint := mustKey(req.Mint)
	validator := p.resolveValidator(ctx, c, req.Validator)
	queue, _ := p.cache().FindTransferQueue(mint, validator)
	a, err := c.Account(ctx, queue)
	if err != nil {
		return nil, rpcError("Failed to fetch transfer queue account", err, nil)
	}
	return &MintInitializationResponse{
		Mint: mint.String(), Validator: validator.String(), TransferQueue: queue.String(),
		Initialized: a != nil && a.Owner == espl.DelegationProgramID,
	}, nil
}

// CrankPlan is a checked transfer-queue crank: the queue exists and is
// delegated. Transaction builds the ESPL 17 transaction.
type CrankPlan struct {
	Mint, Validator, Queue solana.PublicKey
	cache                  *espl.Cache
}

// PlanEnsureCrank checks POST /v1/spl/transfer-queue/ensure-crank: the
// queue of (mint, validator) must be owned by the delegation program on
// base, else 400 TRANSFER_QUEUE_NOT_INITIALIZED.
func (p *Planner) PlanEnsureCrank(ctx context.Context, c Chain, req *TransferQueueEnsureCrankRequest) (*CrankPlan, error) {
	mint := mustKey(req.Mint)
	validator := p.resolveValidator(ctx, c, req.Validator)
	queue, _ := p.cache().FindTransferQueue(mint, validator)
	a, err := c.Account(ctx, queue)
	if err != nil {
		return nil, rpcError("Failed to fetch transfer queue account", err, map[string]any{
			"mint": mint.String(), "validator": validator.String(), "transferQueue": queue.String()})
	}
	if a == nil || a.Owner != espl.DelegationProgramID {
		var owner any
		if a != nil {
			owner = a.Owner.String()
		}
		return nil, badRequest(CodeTransferQueueNotInitialized, "Transfer queue is not initialized and delegated").
			WithDetails(map[string]any{"mint": mint.String(), "validator": validator.String(), "transferQueue": queue.String(), "owner": owner})
	}
	return &CrankPlan{Mint: mint, Validator: validator, Queue: queue, cache: p.cache()}, nil
}

// CrankPlanFor is the crank of the queue of (mint, validator), known to be
// initialized (is-mint-initialized said so): no read.
func (p *Planner) CrankPlanFor(mint, validator solana.PublicKey) *CrankPlan {
	queue, _ := p.cache().FindTransferQueue(mint, validator)
	return &CrankPlan{Mint: mint, Validator: validator, Queue: queue, cache: p.cache()}
}

// Transaction returns the signed ESPL 17 (ensureTransferQueueCrank)
// transaction, paid and signed by payer (the hosted API uses a throw-away
// keypair: rollups charge no fees).
func (cp *CrankPlan) Transaction(payer ed25519.PrivateKey, blockhash solana.Hash) ([]byte, error) {
	pk := publicOf(payer)
	ix := espl.EnsureQueueCrank(espl.EnsureQueueCrankArgs{Payer: pk, Mint: cp.Mint, Validator: cp.Validator, Cache: cp.cache})
	m, err := txwire.Compile(pk, []txwire.Instruction{ix}, blockhash)
	if err != nil {
		return nil, fmt.Errorf("compile crank transaction: %w", err)
	}
	tx := txwire.NewUnsigned(m)
	if err := tx.Sign(payer); err != nil {
		return nil, fmt.Errorf("sign crank transaction: %w", err)
	}
	return tx.Bytes(), nil
}

// BaseBalance answers GET /v1/spl/balance: the amount in address's
// associated token account (under the mint's token program; off-curve
// owners allowed) on base, "0" when the account is missing.
func (p *Planner) BaseBalance(ctx context.Context, c Chain, req *BalanceRequest) (*BalanceResponse, error) {
	owner, mint := mustKey(req.Address), mustKey(req.Mint)
	tp, err := tokenProgram(ctx, c, mint)
	if err != nil {
		return nil, err
	}
	ata, _ := p.cache().FindAssociatedTokenAddress(owner, mint, tp)
	a, err := c.Account(ctx, ata)
	if err != nil {
		return nil, rpcError("Failed to fetch token balance", err, map[string]any{"location": Base})
	}
	var amount uint64
	if a != nil {
		amount = spl.TokenAmountOf(a.Data)
	}
	return &BalanceResponse{Address: owner.String(), Mint: mint.String(), ATA: ata.String(), Location: Base, Balance: fmt.Sprint(amount)}, nil
}

// EphemeralReader is what a private-balance read needs beyond Chain: an
// account as the ephemeral rollup sees it (with the caller's token).
type EphemeralReader interface {
	EphemeralAccount(ctx context.Context, key solana.PublicKey) (*Account, error)
}

// PrivateBalance answers GET /v1/spl/private-balance: when address's
// ephemeral ATA is delegated to the cluster's rollup validator, the amount
// of address's ATA as the rollup sees it; "0" when it is not delegated;
// 400 EATA_DELEGATED_ELSEWHERE when it is delegated to another validator.
func (p *Planner) PrivateBalance(ctx context.Context, c Chain, r EphemeralReader, req *BalanceRequest) (*BalanceResponse, error) {
	owner, mint := mustKey(req.Address), mustKey(req.Mint)
	tp, err := tokenProgram(ctx, c, mint)
	if err != nil {
		return nil, err
	}
	cache := p.cache()
	ata, _ := cache.FindAssociatedTokenAddress(owner, mint, tp)
	out := &BalanceResponse{Address: owner.String(), Mint: mint.String(), ATA: ata.String(), Location: Ephemeral, Balance: "0"}
	eata, _ := cache.FindEphemeralATA(owner, mint)
	delegatedTo, _, delegated, err := delegatedValidator(ctx, c, eata, cache)
	if err != nil {
		return nil, rpcError("Failed to fetch delegation record(s)", err, nil)
	}
	if !delegated {
		return out, nil
	}
	selected := p.resolveValidator(ctx, c, "")
	if delegatedTo != selected {
		return nil, badRequest(CodeEATADelegatedElsewhere, "eATA is delegated to a different validator").
			WithDetails(map[string]any{"eata": eata.String(), "delegatedValidator": delegatedTo.String(), "selectedValidator": selected.String()})
	}
	a, err := r.EphemeralAccount(ctx, ata)
	if err != nil {
		return nil, rpcError("Failed to fetch token balance", err, map[string]any{"location": Ephemeral})
	}
	if a != nil {
		out.Balance = fmt.Sprint(spl.TokenAmountOf(a.Data))
	}
	return out, nil
}
