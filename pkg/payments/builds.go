package payments

import (
	"context"
	"fmt"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/cluster"
	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

func (p *Planner) defaultMint(kind cluster.Kind) (solana.PublicKey, bool) {
	if m, ok := p.DefaultMints[kind]; ok {
		return m, true
	}
	switch kind {
	case cluster.Devnet:
		return espl.USDCDevnet, true
	case cluster.Mainnet, cluster.Custom:
		return espl.USDCMainnet, true
	}
	return solana.PublicKey{}, false
}

// Deposit builds POST /v1/spl/deposit: MagicBlock's delegateSpl. The
// default (idempotent) path creates and delegates the owner's eATA and
// moves the tokens through a shuttle (ESPL 24) that merges into the owner's
// ATA on the ephemeral rollup.
func (p *Planner) Deposit(ctx context.Context, c Chain, req *DepositRequest) (*UnsignedTransaction, error) {
	return apiResult(p.deposit(ctx, c, req))
}

func (p *Planner) deposit(ctx context.Context, c Chain, req *DepositRequest) (*UnsignedTransaction, error) {
	owner := mustKey(req.Owner)
	var mint, tp solana.PublicKey
	if req.Mint == "" {
		m, ok := p.defaultMint(c.Cluster())
		if !ok {
			return nil, badRequest(CodeMintNotFound, "mint is required on this cluster (it has no default mint)")
		}
		// Like the hosted API, an omitted mint is assumed to be SPL Token.
		mint, tp = m, spl.TokenProgramID
	} else {
		mint = mustKey(req.Mint)
		var err error
		if tp, err = tokenProgram(ctx, c, mint); err != nil {
			return nil, err
		}
	}
	validator := p.resolveValidator(ctx, c, req.Validator)
	ownerATA, err := p.ownerATA(owner, mint, tp)
	if err != nil {
		return nil, err
	}
	cache, amount := p.cache(), uint64(req.Amount)
	initIfMissing := boolOr(req.InitIfMissing, true)
	private := boolOr(req.Private, true)

	var ixs []txwire.Instruction
	if mint == spl.NativeMintID && tp == spl.TokenProgramID {
		wrap, err := p.wrapSOL(ctx, c, owner, owner, ownerATA, amount)
		if err != nil {
			return nil, err
		}
		ixs = append(ixs, wrap...)
	}
	initEATA := espl.InitEphemeralATA(espl.InitEphemeralATAArgs{Payer: owner, Owner: owner, Mint: mint, Cache: cache})
	permission := espl.CreateEphemeralATAPermission(espl.CreateEphemeralATAPermissionArgs{Payer: owner, Owner: owner, Mint: mint, Cache: cache})
	delegate := espl.DelegateEphemeralATA(espl.DelegateEphemeralATAArgs{Payer: owner, Owner: owner, Mint: mint, Validator: validator, Cache: cache})

	if boolOr(req.Idempotent, true) {
		if boolOr(req.InitVaultIfMissing, false) {
			ixs = append(ixs, p.vaultInit(owner, mint, tp)...)
		}
		if boolOr(req.InitAtasIfMissing, false) {
			ixs = append(ixs, spl.CreateAssociatedTokenAccount(owner, owner, mint, tp, true))
		}
		if initIfMissing {
			ixs = append(ixs, initEATA)
		}
		if private {
			ixs = append(ixs, permission)
		}
		shuttleID, err := espl.RandomShuttleID(p.rand())
		if err != nil {
			return nil, fmt.Errorf("shuttle id: %w", err)
		}
		ixs = append(ixs, delegate, espl.DepositShuttle(espl.DepositShuttleArgs{
			Payer: owner, Owner: owner, Mint: mint, TokenProgram: tp, Validator: validator,
			ShuttleID: shuttleID, Amount: amount, Source: ownerATA, Destination: ownerATA, Cache: cache,
		}))
	} else {
		// Legacy path: deposit into the vault while the eATA is undelegated,
		// then delegate. Here initVaultIfMissing defaults to initIfMissing.
		if initIfMissing {
			ixs = append(ixs, initEATA)
		}
		if boolOr(req.InitVaultIfMissing, initIfMissing) {
			ixs = append(ixs, p.vaultInit(owner, mint, tp)...)
		}
		ixs = append(ixs, espl.DepositSPL(espl.DepositSPLArgs{Owner: owner, Mint: mint, TokenProgram: tp, Amount: amount, Source: ownerATA, Cache: cache}))
		if private {
			ixs = append(ixs, permission)
		}
		ixs = append(ixs, delegate)
	}
	return p.build(ctx, c, &Plan{Kind: KindDeposit, SendTo: Base, FeePayer: owner, Instructions: ixs, Validator: validator})
}

// Withdraw builds POST /v1/spl/withdraw: MagicBlock's withdrawSpl. The
// default path sends a shuttle (ESPL 26) whose ephemeral post-actions move
// the tokens out of the owner's rollup balance; the vault then pays the
// owner's base ATA. It is sent to base.
func (p *Planner) Withdraw(ctx context.Context, c Chain, req *WithdrawRequest) (*UnsignedTransaction, error) {
	return apiResult(p.withdraw(ctx, c, req))
}

func (p *Planner) withdraw(ctx context.Context, c Chain, req *WithdrawRequest) (*UnsignedTransaction, error) {
	owner, mint := mustKey(req.Owner), mustKey(req.Mint)
	tp, err := tokenProgram(ctx, c, mint)
	if err != nil {
		return nil, err
	}
	validator := p.resolveValidator(ctx, c, req.Validator)
	ownerATA, err := p.ownerATA(owner, mint, tp)
	if err != nil {
		return nil, err
	}
	cache, amount := p.cache(), uint64(req.Amount)
	var ixs []txwire.Instruction
	if boolOr(req.InitAtasIfMissing, false) {
		ixs = append(ixs, spl.CreateAssociatedTokenAccount(owner, owner, mint, tp, true))
	}
	if boolOr(req.Idempotent, true) {
		if boolOr(req.InitIfMissing, true) {
			ixs = append(ixs, espl.InitEphemeralATA(espl.InitEphemeralATAArgs{Payer: owner, Owner: owner, Mint: mint, Cache: cache}))
		}
		shuttleID, err := espl.RandomShuttleID(p.rand())
		if err != nil {
			return nil, fmt.Errorf("shuttle id: %w", err)
		}
		ixs = append(ixs,
			espl.DelegateEphemeralATA(espl.DelegateEphemeralATAArgs{Payer: owner, Owner: owner, Mint: mint, Validator: validator, Cache: cache}),
			espl.WithdrawShuttle(espl.WithdrawShuttleArgs{Payer: owner, Owner: owner, Mint: mint, TokenProgram: tp,
				Validator: validator, ShuttleID: shuttleID, Amount: amount, OwnerATA: ownerATA, Cache: cache}))
	} else {
		// Legacy path: the eATA must already be undelegated (ESPL 5 on the
		// rollup, see undelegate-ephemeral-ata).
		ixs = append(ixs, espl.WithdrawSPL(espl.WithdrawSPLArgs{Owner: owner, Mint: mint, TokenProgram: tp, Amount: amount, Destination: ownerATA, Cache: cache}))
		if mint == spl.NativeMintID && tp == spl.TokenProgramID {
			ixs = append(ixs, spl.TokenCloseAccount(tp, ownerATA, owner, owner))
		}
	}
	return p.build(ctx, c, &Plan{Kind: KindWithdraw, SendTo: Base, FeePayer: owner, Instructions: ixs, Validator: validator})
}

// InitializeMint builds POST /v1/spl/initialize-mint: the one-time setup of
// a (mint, validator) pair — transfer queue, rent PDA (funded with 0.02 SOL),
// queue delegation, global vault and its ATA, and the vault eATA's
// delegation (espl-program.md §8.8).
func (p *Planner) InitializeMint(ctx context.Context, c Chain, req *InitializeMintRequest) (*InitializeMintResponse, error) {
	return apiResult(p.initializeMint(ctx, c, req))
}

func (p *Planner) initializeMint(ctx context.Context, c Chain, req *InitializeMintRequest) (*InitializeMintResponse, error) {
	payer, mint := mustKey(req.Payer), mustKey(req.Mint)
	tp, err := tokenProgram(ctx, c, mint)
	if err != nil {
		return nil, err
	}
	validator := p.resolveValidator(ctx, c, req.Validator)
	cache := p.cache()
	queue, _ := cache.FindTransferQueue(mint, validator)
	rent, _ := cache.FindRentPDA()
	vault, _ := cache.FindGlobalVault(mint)
	ixs := []txwire.Instruction{
		espl.InitTransferQueue(espl.InitTransferQueueArgs{Payer: payer, Mint: mint, Validator: validator, TokenProgram: tp, Cache: cache}),
		espl.InitRentPDA(espl.InitRentPDAArgs{Payer: payer, Cache: cache}),
		spl.SystemTransfer(payer, rent, RentPDATargetLamports),
		espl.DelegateTransferQueue(espl.DelegateTransferQueueArgs{Payer: payer, Mint: mint, Validator: validator, Cache: cache}),
	}
	ixs = append(ixs, p.vaultInit(payer, mint, tp)...)
	ixs = append(ixs, espl.DelegateEphemeralATA(espl.DelegateEphemeralATAArgs{Payer: payer, Owner: vault, Mint: mint, Validator: validator, Cache: cache}))
	out, err := p.build(ctx, c, &Plan{Kind: KindInitializeMint, SendTo: Base, FeePayer: payer, Instructions: ixs, Validator: validator})
	if err != nil {
		return nil, err
	}
	return &InitializeMintResponse{UnsignedTransaction: *out, TransferQueue: queue.String(), RentPDA: rent.String()}, nil
}
