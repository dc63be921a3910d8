package rpcserver

import (
	"context"
	"encoding/base64"
	"errors"
	"slices"

	"github.com/gagliardetto/solana-go"
	"github.com/mr-tron/base58"

	"github.com/ferry-sh/ferry/pkg/inputlimit"
	"github.com/ferry-sh/ferry/pkg/ledger"
	rt "github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// Input limits (Agave).
const (
	maxMultipleAccounts = 100
	maxSignatureQueries = 256
	maxSignaturesLimit  = 1000
	maxBlockRange       = 500_000
	maxLargestAccounts  = 20
	maxBase58TxLen      = inputlimit.MaxTransactionBase58
	maxBase64TxLen      = inputlimit.MaxTransactionBase64
	maxAccountDataLen   = 10 << 20 // MAX_PERMITTED_DATA_LENGTH
)

func (h *Handler) registerStandard() {
	for name, m := range map[string]Method{
		"getAccountInfo":                    h.getAccountInfo,
		"getMultipleAccounts":               h.getMultipleAccounts,
		"getBalance":                        h.getBalance,
		"getTokenAccountBalance":            h.getTokenAccountBalance,
		"getTokenAccountsByOwner":           h.getTokenAccountsByOwner,
		"getTokenSupply":                    h.getTokenSupply,
		"getTokenLargestAccounts":           h.getTokenLargestAccounts,
		"getLatestBlockhash":                h.getLatestBlockhash,
		"isBlockhashValid":                  h.isBlockhashValid,
		"getFeeForMessage":                  h.getFeeForMessage,
		"getSlot":                           h.getSlot,
		"getBlockHeight":                    h.getBlockHeight,
		"getTransactionCount":               h.getTransactionCount,
		"getEpochInfo":                      h.getEpochInfo,
		"getEpochSchedule":                  h.getEpochSchedule,
		"getMinimumBalanceForRentExemption": h.getMinimumBalanceForRentExemption,
		"getBlock":                          h.getBlock,
		"getBlockTime":                      h.getBlockTime,
		"getBlocks":                         h.getBlocks,
		"getBlocksWithLimit":                h.getBlocksWithLimit,
		"getFirstAvailableBlock":            h.noParams(func() any { return h.l.FirstAvailableBlock() }),
		"minimumLedgerSlot":                 h.noParams(func() any { return h.l.FirstAvailableBlock() }),
		"getSignatureStatuses":              h.getSignatureStatuses,
		"getSignaturesForAddress":           h.getSignaturesForAddress,
		"getTransaction":                    h.getTransaction,
		"sendTransaction":                   h.sendTransaction,
		"simulateTransaction":               h.simulateTransaction,
		"requestAirdrop":                    h.requestAirdrop,
		"getHealth":                         h.getHealth,
		"getVersion": h.noParams(func() any {
			return map[string]any{"solana-core": h.opts.Version, "feature-set": h.opts.FeatureSet}
		}),
		"getIdentity":    h.noParams(func() any { return map[string]any{"identity": h.l.Identity()} }),
		"getGenesisHash": h.noParams(func() any { return h.l.GenesisHash() }),
		"getSlotLeader":  h.withCommitment(func(ledger.Commitment) any { return h.l.Identity() }),

		"getProgramAccounts":          h.getProgramAccounts,
		"getTokenAccountsByDelegate":  h.getTokenAccountsByDelegate,
		"getSupply":                   h.getSupply,
		"getLargestAccounts":          h.getLargestAccounts,
		"getInflationGovernor":        h.getInflationGovernor,
		"getInflationRate":            h.getInflationRate,
		"getInflationReward":          h.getInflationReward,
		"getStakeMinimumDelegation":   h.getStakeMinimumDelegation,
		"getRecentPrioritizationFees": h.getRecentPrioritizationFees,
		"getClusterNodes":             h.getClusterNodes,
		"getVoteAccounts":             h.getVoteAccounts,
		"getLeaderSchedule":           h.getLeaderSchedule,
		"getSlotLeaders":              h.getSlotLeaders,
		"getBlockProduction":          h.getBlockProduction,
		"getBlockCommitment":          h.getBlockCommitment,
		"getRecentPerformanceSamples": h.getRecentPerformanceSamples,
		"getHighestSnapshotSlot":      h.getHighestSnapshotSlot,
		"getMaxRetransmitSlot":        h.getShredWatermark,
		"getMaxShredInsertSlot":       h.getShredWatermark,
	} {
		h.Handle(name, m)
	}
}

// contextResult is Agave's RpcResponse: {"context":{...},"value":...}.
type contextResult struct {
	Context struct {
		Slot       uint64 `json:"slot"`
		APIVersion string `json:"apiVersion"`
	} `json:"context"`
	Value any `json:"value"`
}

func (h *Handler) wrap(slot uint64, v any) *contextResult {
	r := &contextResult{Value: v}
	r.Context.Slot, r.Context.APIVersion = slot, h.opts.Version
	return r
}

func (h *Handler) noParams(fn func() any) Method {
	return func(ctx context.Context, p Params) (any, error) {
		if err := p.Count(0, 0); err != nil {
			return nil, err
		}
		return fn(), nil
	}
}

// withCommitment is a method whose only (optional) parameter is a
// commitment config.
func (h *Handler) withCommitment(fn func(ledger.Commitment) any) Method {
	return func(ctx context.Context, p Params) (any, error) {
		c, err := h.commitmentOnly(p, 0)
		if err != nil {
			return nil, err
		}
		return fn(c), nil
	}
}

func (h *Handler) commitmentOnly(p Params, i int) (ledger.Commitment, error) {
	if err := p.Count(i, i+1); err != nil {
		return 0, err
	}
	var cfg commitmentConfig
	if err := p.Config(i, &cfg); err != nil {
		return 0, err
	}
	c, err := cfg.level()
	if err != nil {
		return 0, err
	}
	return c, h.minContext(c, cfg.MinContextSlot)
}

// minContext enforces minContextSlot (-32016).
func (h *Handler) minContext(c ledger.Commitment, minSlot *uint64) error {
	if minSlot == nil {
		return nil
	}
	if s := h.l.Slot(c); s < *minSlot {
		return &Error{Code: CodeMinContextSlotNotReached, Message: "Minimum context slot has not been reached", Data: map[string]uint64{"contextSlot": s}}
	}
	return nil
}

func (h *Handler) mintReader(c ledger.Commitment) func(solana.PublicKey) *ledger.Account {
	return func(k solana.PublicKey) *ledger.Account {
		a, _ := h.l.Account(k, c)
		return a
	}
}

// --- accounts ---

func (h *Handler) accountArgs(p Params, i int) (accountConfig, ledger.Commitment, string, error) {
	var cfg accountConfig
	if err := p.Config(i, &cfg); err != nil {
		return cfg, 0, "", err
	}
	c, err := cfg.level()
	if err != nil {
		return cfg, 0, "", err
	}
	enc, err := cfg.encoding()
	if err != nil {
		return cfg, 0, "", err
	}
	return cfg, c, enc, h.minContext(c, cfg.MinContextSlot)
}

func (h *Handler) getAccountInfo(ctx context.Context, p Params) (any, error) {
	if err := p.Count(1, 2); err != nil {
		return nil, err
	}
	key, err := p.Pubkey(0)
	if err != nil {
		return nil, err
	}
	cfg, c, enc, err := h.accountArgs(p, 1)
	if err != nil {
		return nil, err
	}
	a, slot, err := h.ReadAccount(ctx, key, c)
	if err != nil {
		return nil, err
	}
	if a == nil {
		return h.wrap(slot, nil), nil
	}
	if err := chargeAccount(ctx, a, enc, cfg.DataSlice); err != nil {
		return nil, err
	}
	ui, err := encodeAccount(a, enc, cfg.DataSlice, h.mintReader(c))
	if err != nil {
		return nil, err
	}
	return h.wrap(slot, ui), nil
}

func (h *Handler) getMultipleAccounts(ctx context.Context, p Params) (any, error) {
	if err := p.Count(1, 2); err != nil {
		return nil, err
	}
	var strs []string
	if err := p.Decode(0, &strs); err != nil {
		return nil, err
	}
	if len(strs) > maxMultipleAccounts {
		return nil, InvalidParam("Too many inputs provided; max %d", maxMultipleAccounts)
	}
	keys := make([]solana.PublicKey, len(strs))
	for i, s := range strs {
		k, err := ParsePubkey(s)
		if err != nil {
			return nil, err
		}
		keys[i] = k
	}
	cfg, c, enc, err := h.accountArgs(p, 1)
	if err != nil {
		return nil, err
	}
	accts, slot, err := h.ReadAccounts(ctx, keys, c)
	if err != nil {
		return nil, err
	}
	out := make([]*UIAccount, len(keys))
	for i, a := range accts {
		if a == nil {
			continue
		}
		if err := chargeAccount(ctx, a, enc, cfg.DataSlice); err != nil {
			return nil, err
		}
		if out[i], err = encodeAccount(a, enc, cfg.DataSlice, h.mintReader(c)); err != nil {
			return nil, err
		}
	}
	return h.wrap(slot, out), nil
}

func (h *Handler) getBalance(ctx context.Context, p Params) (any, error) {
	if err := p.Count(1, 2); err != nil {
		return nil, err
	}
	key, err := p.Pubkey(0)
	if err != nil {
		return nil, err
	}
	c, err := h.commitmentOnly(p, 1)
	if err != nil {
		return nil, err
	}
	if h.filter.Load() != nil {
		a, slot, err := h.ReadAccount(ctx, key, c)
		if err != nil {
			return nil, err
		}
		var bal uint64
		if a != nil {
			bal = a.Lamports
		}
		return h.wrap(slot, bal), nil
	}
	bal, slot := h.l.Balance(key, c)
	return h.wrap(slot, bal), nil
}

// tokenAccountAt reads (through the read filter) and decodes a token
// account and its mint.
func (h *Handler) tokenAccountAt(ctx context.Context, key solana.PublicKey, c ledger.Commitment) (spl.TokenAccount, spl.Mint, uint64, error) {
	a, slot, err := h.ReadAccount(ctx, key, c)
	if err != nil {
		return spl.TokenAccount{}, spl.Mint{}, slot, err
	}
	if a == nil {
		return spl.TokenAccount{}, spl.Mint{}, slot, InvalidParam("Invalid param: could not find account")
	}
	ta, err := spl.DecodeTokenAccount(a.Data)
	if !spl.IsTokenProgram(a.Owner) || err != nil {
		return ta, spl.Mint{}, slot, InvalidParam("Invalid param: not a Token account")
	}
	m, _ := h.l.Account(ta.Mint, c)
	if m == nil {
		return ta, spl.Mint{}, slot, InvalidParam("Invalid param: could not find mint")
	}
	mint, err := spl.DecodeMint(m.Data)
	if err != nil {
		return ta, mint, slot, InvalidParam("Invalid param: mint could not be unpacked")
	}
	return ta, mint, slot, nil
}

func (h *Handler) getTokenAccountBalance(ctx context.Context, p Params) (any, error) {
	if err := p.Count(1, 2); err != nil {
		return nil, err
	}
	key, err := p.Pubkey(0)
	if err != nil {
		return nil, err
	}
	c, err := h.commitmentOnly(p, 1)
	if err != nil {
		return nil, err
	}
	ta, mint, slot, err := h.tokenAccountAt(ctx, key, c)
	if err != nil {
		return nil, err
	}
	return h.wrap(slot, h.mintUIAt(ta.Mint, mint.Decimals, c).amount(ta.Amount)), nil
}

func (h *Handler) mintAt(key solana.PublicKey, c ledger.Commitment) (spl.Mint, uint64, error) {
	a, slot := h.l.Account(key, c)
	if a == nil {
		return spl.Mint{}, slot, InvalidParam("Invalid param: could not find account")
	}
	if !spl.IsTokenProgram(a.Owner) {
		return spl.Mint{}, slot, InvalidParam("Invalid param: not a Token mint")
	}
	m, err := spl.DecodeMint(a.Data)
	if err != nil {
		return m, slot, InvalidParam("Invalid param: mint could not be unpacked")
	}
	return m, slot, nil
}

func (h *Handler) getTokenSupply(ctx context.Context, p Params) (any, error) {
	if err := p.Count(1, 2); err != nil {
		return nil, err
	}
	key, err := p.Pubkey(0)
	if err != nil {
		return nil, err
	}
	c, err := h.commitmentOnly(p, 1)
	if err != nil {
		return nil, err
	}
	m, slot, err := h.mintAt(key, c)
	if err != nil {
		return nil, err
	}
	return h.wrap(slot, h.mintUIAt(key, m.Decimals, c).amount(m.Supply)), nil
}

type uiLargestAccount struct {
	Address solana.PublicKey `json:"address"`
	UITokenAmount
}

func (h *Handler) getTokenLargestAccounts(ctx context.Context, p Params) (any, error) {
	if err := p.Count(1, 2); err != nil {
		return nil, err
	}
	key, err := p.Pubkey(0)
	if err != nil {
		return nil, err
	}
	c, err := h.commitmentOnly(p, 1)
	if err != nil {
		return nil, err
	}
	m, _, err := h.mintAt(key, c)
	if err != nil {
		return nil, err
	}
	accts, slot := h.l.TokenAccountsByMint(key, c)
	accts = h.VisibleAccounts(ctx, accts)
	slices.SortStableFunc(accts, func(a, b ledger.KeyedAccount) int {
		x, y := spl.TokenAmountOf(a.Account.Data), spl.TokenAmountOf(b.Account.Data)
		switch {
		case x > y:
			return -1
		case x < y:
			return 1
		}
		return 0
	})
	out := make([]uiLargestAccount, 0, maxLargestAccounts)
	ui := h.mintUIAt(key, m.Decimals, c)
	for _, a := range accts[:min(len(accts), maxLargestAccounts)] {
		out = append(out, uiLargestAccount{Address: a.Key, UITokenAmount: ui.amount(spl.TokenAmountOf(a.Account.Data))})
	}
	return h.wrap(slot, out), nil
}

type uiKeyedAccount struct {
	Pubkey  solana.PublicKey `json:"pubkey"`
	Account *UIAccount       `json:"account"`
}

// --- blockhashes, slots, fees ---

func (h *Handler) getLatestBlockhash(ctx context.Context, p Params) (any, error) {
	c, err := h.commitmentOnly(p, 0)
	if err != nil {
		return nil, err
	}
	bh, slot := h.l.LatestBlockhash(c)
	return h.wrap(slot, map[string]any{"blockhash": bh.Blockhash, "lastValidBlockHeight": bh.LastValidBlockHeight}), nil
}

func (h *Handler) isBlockhashValid(ctx context.Context, p Params) (any, error) {
	if err := p.Count(1, 2); err != nil {
		return nil, err
	}
	s, err := p.String(0)
	if err != nil {
		return nil, err
	}
	hash, err := ParseHash(s)
	if err != nil {
		return nil, err
	}
	c, err := h.commitmentOnly(p, 1)
	if err != nil {
		return nil, err
	}
	ok, slot := h.l.IsBlockhashValid(hash, c)
	return h.wrap(slot, ok), nil
}

func (h *Handler) getFeeForMessage(ctx context.Context, p Params) (any, error) {
	if err := p.Count(1, 2); err != nil {
		return nil, err
	}
	s, err := p.String(0)
	if err != nil {
		return nil, err
	}
	c, err := h.commitmentOnly(p, 1)
	if err != nil {
		return nil, err
	}
	if len(s) > maxBase64TxLen {
		return nil, InvalidParam("base64 encoded solana_message::VersionedMessage too large: %d bytes (max: encoded/raw %d/%d)", len(s), maxBase64TxLen, txwire.MaxWireSize)
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, InvalidParam("invalid base64 encoding: %v", err)
	}
	if len(b) > txwire.MaxWireSize {
		return nil, InvalidParam("base64 encoded solana_message::VersionedMessage too large: %d bytes (max: encoded/raw %d/%d)", len(s), maxBase64TxLen, txwire.MaxWireSize)
	}
	msg, err := txwire.DecodeMessage(b)
	if err != nil {
		return nil, InvalidParam("failed to deserialize solana_message::VersionedMessage: %v", err)
	}
	if err := msg.Sanitize(); err != nil {
		return nil, InvalidParam("invalid transaction message: %v", err)
	}
	fee, slot := h.l.FeeForMessage(msg, c)
	if fee == nil {
		return h.wrap(slot, nil), nil
	}
	return h.wrap(slot, *fee), nil
}

func (h *Handler) getSlot(ctx context.Context, p Params) (any, error) {
	c, err := h.commitmentOnly(p, 0)
	if err != nil {
		return nil, err
	}
	return h.l.Slot(c), nil
}

func (h *Handler) getBlockHeight(ctx context.Context, p Params) (any, error) {
	c, err := h.commitmentOnly(p, 0)
	if err != nil {
		return nil, err
	}
	return h.l.BlockHeight(c), nil
}

func (h *Handler) getTransactionCount(ctx context.Context, p Params) (any, error) {
	c, err := h.commitmentOnly(p, 0)
	if err != nil {
		return nil, err
	}
	return h.l.TransactionCount(c), nil
}

func (h *Handler) getEpochInfo(ctx context.Context, p Params) (any, error) {
	c, err := h.commitmentOnly(p, 0)
	if err != nil {
		return nil, err
	}
	e := h.l.EpochInfo(c)
	return map[string]uint64{
		"absoluteSlot": e.AbsoluteSlot, "blockHeight": e.BlockHeight, "epoch": e.Epoch,
		"slotIndex": e.SlotIndex, "slotsInEpoch": e.SlotsInEpoch, "transactionCount": e.TransactionCount,
	}, nil
}

func (h *Handler) getEpochSchedule(ctx context.Context, p Params) (any, error) {
	if err := p.Count(0, 0); err != nil {
		return nil, err
	}
	n := h.l.Config().SlotsPerEpoch
	return map[string]any{"slotsPerEpoch": n, "leaderScheduleSlotOffset": n, "warmup": false, "firstNormalEpoch": 0, "firstNormalSlot": 0}, nil
}

func (h *Handler) getMinimumBalanceForRentExemption(ctx context.Context, p Params) (any, error) {
	if err := p.Count(1, 2); err != nil {
		return nil, err
	}
	n, err := p.Uint(0)
	if err != nil {
		return nil, err
	}
	if _, err := h.commitmentOnly(p, 1); err != nil {
		return nil, err
	}
	if n > maxAccountDataLen {
		return nil, Errorf(CodeInvalidRequest, "Invalid request") // Agave's answer past MAX_PERMITTED_DATA_LENGTH
	}
	return h.l.MinimumBalanceForRentExemption(int(n)), nil
}

// --- blocks ---

type blockConfig struct {
	commitmentConfig
	Encoding                       *string `json:"encoding"`
	TransactionDetails             *string `json:"transactionDetails"`
	Rewards                        *bool   `json:"rewards"`
	MaxSupportedTransactionVersion *uint8  `json:"maxSupportedTransactionVersion"`
}

// legacyEncodingConfig accepts the deprecated bare-encoding form of the
// config parameter (getBlock(slot, "json")).
func legacyEncodingConfig(p Params, i int, enc **string, cfg any) error {
	if p.Has(i) && len(p[i]) > 0 && p[i][0] == '"' {
		s, err := p.String(i)
		if err != nil {
			return err
		}
		*enc = &s
		return nil
	}
	return p.Config(i, cfg)
}

func (h *Handler) getBlock(ctx context.Context, p Params) (any, error) {
	if err := p.Count(1, 2); err != nil {
		return nil, err
	}
	slot, err := p.Uint(0)
	if err != nil {
		return nil, err
	}
	var cfg blockConfig
	if err := legacyEncodingConfig(p, 1, &cfg.Encoding, &cfg); err != nil {
		return nil, err
	}
	c, err := cfg.historyLevel()
	if err != nil {
		return nil, err
	}
	enc, err := checkTxEncoding(cfg.Encoding)
	if err != nil {
		return nil, err
	}
	details, err := TransactionDetails(cfg.TransactionDetails)
	if err != nil {
		return nil, err
	}
	info, txs, err := h.l.Block(slot, c)
	if err != nil {
		return nil, err
	}
	if info == nil {
		return nil, h.noBlock(slot, c)
	}
	return RenderBlockFor(ctx, h.readFilter(), info, txs, BlockOptions{
		Encoding: enc, Details: details, Rewards: cfg.Rewards == nil || *cfg.Rewards,
		MaxVersion: cfg.MaxSupportedTransactionVersion,
	})
}

// accountsOnly is getBlock's transactionDetails "accounts" form.
func accountsOnly(t *uiTxWithMeta, r *ledger.TxRecord) any {
	tx, _ := r.Transaction()
	keys := make([]uiParsedAccount, len(tx.Message.AccountKeys))
	for i, k := range tx.Message.AccountKeys {
		keys[i] = uiParsedAccount{Pubkey: k, Writable: tx.Message.IsWritable(i), Signer: tx.Message.IsSigner(i), Source: "transaction"}
	}
	m := t.Meta
	out := map[string]any{
		"transaction": map[string]any{"signatures": tx.Signatures, "accountKeys": keys},
		"meta": map[string]any{"err": m.Err, "status": m.Status, "fee": m.Fee, "preBalances": m.PreBalances,
			"postBalances": m.PostBalances, "preTokenBalances": m.PreTokenBalances, "postTokenBalances": m.PostTokenBalances},
	}
	if t.Version != nil {
		out["version"] = t.Version
	}
	return out
}

func (h *Handler) getBlockTime(ctx context.Context, p Params) (any, error) {
	if err := p.Count(1, 1); err != nil {
		return nil, err
	}
	slot, err := p.Uint(0)
	if err != nil {
		return nil, err
	}
	info, _, err := h.l.Block(slot, ledger.Confirmed)
	if err != nil {
		return nil, err
	}
	if info == nil {
		return nil, h.noBlock(slot, ledger.Confirmed)
	}
	return info.Time, nil
}

// noBlock is the error for a slot without a block: Agave's "cleaned up"
// (-32001) for a slot whose history was pruned (ferry serve
// --limit-ledger-size), -32007 for a slot the chain has passed without
// producing one (a development chain's time travel skips slots), -32004
// for one not reached yet.
func (h *Handler) noBlock(slot uint64, c ledger.Commitment) error {
	if first := h.l.FirstAvailableBlock(); slot < first {
		return Errorf(CodeBlockCleanedUp, "Block %d cleaned up, does not exist on node. First available block: %d", slot, first)
	}
	if slot < h.l.Slot(max(c, ledger.Confirmed)) {
		return Errorf(CodeSlotSkipped, "Slot %d was skipped, or missing due to ledger jump to recent snapshot", slot)
	}
	return Errorf(CodeBlockNotAvailable, "Block not available for slot %d", slot)
}

// blocksCommitment is the commitment of getBlocks/getBlocksWithLimit. It
// defaults to confirmed: the interface specification defines the result
// as the confirmed slots (Agave defaults to finalized).
func blocksCommitment(p Params, i int) (ledger.Commitment, error) {
	var cfg commitmentConfig
	if err := p.Config(i, &cfg); err != nil {
		return 0, err
	}
	if cfg.Commitment == nil {
		return ledger.Confirmed, nil
	}
	return cfg.historyLevel()
}

func (h *Handler) getBlocksWithLimit(ctx context.Context, p Params) (any, error) {
	if err := p.Count(1, 3); err != nil {
		return nil, err
	}
	start, err := p.Uint(0)
	if err != nil {
		return nil, err
	}
	limit, cfgAt := uint64(maxBlockRange), 1
	if p.Has(1) && len(p[1]) > 0 && p[1][0] != '{' {
		if limit, err = p.Uint(1); err != nil {
			return nil, err
		}
		cfgAt = 2
	} else if len(p) > 2 {
		return nil, InvalidParams("invalid length %d, expected fewer elements in array", len(p))
	}
	if limit > maxBlockRange {
		return nil, InvalidParam("Limit too large; max %d", maxBlockRange)
	}
	c, err := blocksCommitment(p, cfgAt)
	if err != nil {
		return nil, err
	}
	if limit == 0 {
		return []uint64{}, nil
	}
	return h.l.Blocks(start, ^uint64(0), int(limit), c)
}

func (h *Handler) getBlocks(ctx context.Context, p Params) (any, error) {
	if err := p.Count(1, 3); err != nil {
		return nil, err
	}
	start, err := p.Uint(0)
	if err != nil {
		return nil, err
	}
	end, cfgAt := uint64(0), 1
	hasEnd := p.Has(1) && len(p[1]) > 0 && p[1][0] != '{'
	if hasEnd {
		if end, err = p.Uint(1); err != nil {
			return nil, err
		}
		cfgAt = 2
	}
	c, err := blocksCommitment(p, cfgAt)
	if err != nil {
		return nil, err
	}
	if !hasEnd {
		end = h.l.Slot(c)
	}
	if end >= start && end-start >= maxBlockRange {
		return nil, InvalidParam("Slot range too large; max %d", maxBlockRange)
	}
	return h.l.Blocks(start, end, maxBlockRange, c)
}

// --- signatures and transactions ---

type uiStatus struct {
	Slot               uint64      `json:"slot"`
	Confirmations      *uint64     `json:"confirmations"`
	Err                *rt.TxError `json:"err"`
	ConfirmationStatus string      `json:"confirmationStatus"`
	Status             any         `json:"status"`
}

func (h *Handler) getSignatureStatuses(ctx context.Context, p Params) (any, error) {
	if err := p.Count(1, 2); err != nil {
		return nil, err
	}
	strs, err := p.Strings(0)
	if err != nil {
		return nil, err
	}
	if len(strs) > maxSignatureQueries {
		return nil, InvalidParam("Too many inputs provided; max %d", maxSignatureQueries)
	}
	var cfg struct {
		SearchTransactionHistory bool `json:"searchTransactionHistory"`
	}
	if err := p.Config(1, &cfg); err != nil {
		return nil, err
	}
	sigs := make([]solana.Signature, len(strs))
	for i, s := range strs {
		sig, err := ParseSignature(s)
		if err != nil {
			return nil, err
		}
		sigs[i] = sig
	}
	slot := h.l.Slot(ledger.Processed)
	sts, err := h.l.SignatureStatuses(sigs)
	if err != nil {
		return nil, err
	}
	out := make([]*uiStatus, len(sts))
	for i, st := range sts {
		if st == nil {
			continue
		}
		u := &uiStatus{Slot: st.Slot, Err: st.Err, ConfirmationStatus: st.Status.String(), Status: status(st.Err)}
		if st.Status != ledger.Finalized {
			n := st.Confirmations
			u.Confirmations = &n
		}
		out[i] = u
	}
	return h.wrap(slot, out), nil
}

type uiSignatureInfo struct {
	Signature          solana.Signature `json:"signature"`
	Slot               uint64           `json:"slot"`
	Err                *rt.TxError      `json:"err"`
	Memo               *string          `json:"memo"`
	BlockTime          int64            `json:"blockTime"`
	ConfirmationStatus string           `json:"confirmationStatus"`
}

func (h *Handler) getSignaturesForAddress(ctx context.Context, p Params) (any, error) {
	if err := p.Count(1, 2); err != nil {
		return nil, err
	}
	addr, err := p.Pubkey(0)
	if err != nil {
		return nil, err
	}
	var cfg struct {
		commitmentConfig
		Limit  *int    `json:"limit"`
		Before *string `json:"before"`
		Until  *string `json:"until"`
		// WithContext wraps the answer in {context, value} (newer Agave).
		WithContext bool `json:"withContext"`
	}
	if err := p.Config(1, &cfg); err != nil {
		return nil, err
	}
	c, err := cfg.historyLevel()
	if err != nil {
		return nil, err
	}
	if err := h.minContext(c, cfg.MinContextSlot); err != nil {
		return nil, err
	}
	q := ledger.AddressQuery{Limit: maxSignaturesLimit}
	if cfg.Limit != nil {
		if *cfg.Limit < 1 || *cfg.Limit > maxSignaturesLimit {
			return nil, InvalidParam("Invalid limit; max %d", maxSignaturesLimit)
		}
		q.Limit = *cfg.Limit
	}
	for _, x := range []struct {
		s   *string
		dst **solana.Signature
	}{{cfg.Before, &q.Before}, {cfg.Until, &q.Until}} {
		if x.s != nil {
			sig, err := ParseSignature(*x.s)
			if err != nil {
				return nil, err
			}
			*x.dst = &sig
		}
	}
	slot := h.l.Slot(max(c, ledger.Confirmed))
	recs, err := h.l.SignaturesForAddress(addr, q, c)
	if err != nil {
		return nil, err
	}
	final := h.l.Slot(ledger.Finalized)
	out := make([]uiSignatureInfo, len(recs))
	for i, r := range recs {
		cs := "confirmed"
		if r.Slot <= final {
			cs = "finalized"
		}
		out[i] = uiSignatureInfo{Signature: r.Signature, Slot: r.Slot, Err: r.Err, Memo: r.Memo(), BlockTime: r.BlockTime, ConfirmationStatus: cs}
	}
	if cfg.WithContext {
		return h.wrap(slot, out), nil
	}
	return out, nil
}

func (h *Handler) getTransaction(ctx context.Context, p Params) (any, error) {
	if err := p.Count(1, 2); err != nil {
		return nil, err
	}
	s, err := p.String(0)
	if err != nil {
		return nil, err
	}
	sig, err := ParseSignature(s)
	if err != nil {
		return nil, err
	}
	var cfg struct {
		commitmentConfig
		Encoding                       *string `json:"encoding"`
		MaxSupportedTransactionVersion *uint8  `json:"maxSupportedTransactionVersion"`
		// WithContext wraps the answer in {context, value} (newer Agave).
		WithContext bool `json:"withContext"`
	}
	if err := legacyEncodingConfig(p, 1, &cfg.Encoding, &cfg); err != nil {
		return nil, err
	}
	c, err := cfg.historyLevel()
	if err != nil {
		return nil, err
	}
	enc, err := checkTxEncoding(cfg.Encoding)
	if err != nil {
		return nil, err
	}
	if v := cfg.MaxSupportedTransactionVersion; v != nil && *v != 0 {
		return nil, InvalidParam("Invalid param: unsupported maxSupportedTransactionVersion %d (this node supports 0)", *v)
	}
	slot := h.l.Slot(max(c, ledger.Confirmed))
	r, err := h.l.Transaction(sig, c)
	if err != nil {
		return nil, err
	}
	var out any = Null
	if r != nil {
		t, err := txWithMetaUI(r, enc, cfg.MaxSupportedTransactionVersion, true)
		if err != nil {
			return nil, err
		}
		h.hideMeta(ctx, r, t)
		out = t
	}
	if cfg.WithContext {
		return h.wrap(slot, out), nil
	}
	return out, nil
}

// decodeWireTx decodes sendTransaction/simulateTransaction's first
// parameter with Agave's size checks and messages.
func decodeWireTx(s, enc string) ([]byte, error) {
	const what = "solana_transaction::versioned::VersionedTransaction"
	var b []byte
	var err error
	switch enc {
	case encBase58:
		if len(s) > maxBase58TxLen {
			return nil, InvalidParam("base58 encoded %s too large: %d bytes (max: encoded/raw %d/%d)", what, len(s), maxBase58TxLen, txwire.MaxWireSize)
		}
		if b, err = base58.Decode(s); err != nil {
			return nil, InvalidParam("invalid base58 encoding: %v", err)
		}
	case encBase64:
		if len(s) > maxBase64TxLen {
			return nil, InvalidParam("base64 encoded %s too large: %d bytes (max: encoded/raw %d/%d)", what, len(s), maxBase64TxLen, txwire.MaxWireSize)
		}
		if b, err = base64.StdEncoding.DecodeString(s); err != nil {
			return nil, InvalidParam("invalid base64 encoding: %v", err)
		}
	default:
		return nil, InvalidParam("unsupported encoding: %s. Supported encodings: base58, base64", inputlimit.Truncate(enc, inputlimit.MaxEcho))
	}
	if len(b) > txwire.MaxWireSize {
		return nil, InvalidParam("decoded %s too large: %d bytes (max: %d bytes)", what, len(b), txwire.MaxWireSize)
	}
	return b, nil
}

func txEncodingParam(enc *string) string {
	if enc == nil || *enc == encBinary {
		return encBase58
	}
	return *enc
}

// ledgerError maps the ledger's submission errors to JSON-RPC errors.
func ledgerError(err error) error {
	var inv *ledger.InvalidTransactionError
	var pf *ledger.PreflightError
	var up *ledger.UnsupportedProgramError
	switch {
	case errors.As(err, &up):
		return InvalidParam("%s", up.Error())
	case errors.As(err, &inv):
		if inv.TxErr != nil {
			return InvalidParam("invalid transaction: %s", inv.TxErr.Error())
		}
		return InvalidParam("failed to deserialize solana_transaction::versioned::VersionedTransaction: %v", inv.Err)
	case errors.Is(err, ledger.ErrSignatureVerification):
		return Errorf(CodeSignatureVerificationFailed, "Transaction signature verification failure")
	case errors.As(err, &pf):
		return &Error{Code: CodePreflightFailure, Message: pf.Error(), Data: simulateUI(pf.Result, nil, false, nil)}
	case errors.Is(err, ledger.ErrClosed), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return &Error{Code: CodeNodeUnhealthy, Message: "Node is unhealthy", Data: map[string]any{}}
	}
	return &Error{Code: CodeNodeUnhealthy, Message: "Node is unhealthy: " + err.Error(), Data: map[string]any{}}
}

func (h *Handler) sendTransaction(ctx context.Context, p Params) (any, error) {
	if err := p.Count(1, 2); err != nil {
		return nil, err
	}
	// Read only by decodeWireTx, which copies what it keeps.
	s, err := p.stringView(0)
	if err != nil {
		return nil, err
	}
	var cfg sendConfig
	if !p.Has(1) || !parseSendConfig(p[1], &cfg) {
		cfg = sendConfig{}
		if err := p.Config(1, &cfg); err != nil {
			return nil, err
		}
	}
	raw, err := decodeWireTx(s, txEncodingParam(cfg.Encoding))
	if err != nil {
		return nil, err
	}
	pc, err := commitmentConfig{Commitment: cfg.PreflightCommitment}.level()
	if err != nil {
		return nil, err
	}
	if err := h.minContext(pc, cfg.MinContextSlot); err != nil {
		return nil, err
	}
	sig, err := h.l.Send(ctx, raw, ledger.SendOptions{SkipPreflight: cfg.SkipPreflight, PreflightCommitment: pc})
	if err != nil {
		err = ledgerError(err)
		var e *Error
		if u, ok := errorData(err, &e); ok && h.filter.Load() != nil {
			if tx, derr := txwire.Decode(raw); derr == nil {
				h.hideSimulated(ctx, tx.Message.AccountKeys, u)
			} else {
				u.PreTokenBalances, u.PostTokenBalances = nil, nil
			}
		}
		return nil, err
	}
	return sig, nil
}

type uiBlockhash struct {
	Blockhash            solana.Hash `json:"blockhash"`
	LastValidBlockHeight uint64      `json:"lastValidBlockHeight"`
}

type uiSimulate struct {
	Err                    *rt.TxError      `json:"err"`
	Logs                   []string         `json:"logs"`
	Accounts               any              `json:"accounts"`
	UnitsConsumed          uint64           `json:"unitsConsumed"`
	LoadedAccountsDataSize uint32           `json:"loadedAccountsDataSize"`
	ReturnData             *uiReturnData    `json:"returnData"`
	InnerInstructions      []uiInner        `json:"innerInstructions"`
	ReplacementBlockhash   *uiBlockhash     `json:"replacementBlockhash"`
	Fee                    *uint64          `json:"fee"`
	PreBalances            []uint64         `json:"preBalances"`
	PostBalances           []uint64         `json:"postBalances"`
	PreTokenBalances       []uiTokenBalance `json:"preTokenBalances"`
	PostTokenBalances      []uiTokenBalance `json:"postTokenBalances"`
}

func simulateUI(r *ledger.SimulateResult, accounts []*UIAccount, inner bool, msg *txwire.Message) *uiSimulate {
	u := &uiSimulate{
		Err: r.Err, Logs: r.Logs, UnitsConsumed: r.UnitsConsumed, LoadedAccountsDataSize: r.LoadedAccountsDataSize,
		ReturnData: returnDataUI(r.ReturnData), PreBalances: r.PreBalances, PostBalances: r.PostBalances,
	}
	if r.Logs != nil {
		fee := r.Fee
		u.Fee = &fee
		u.PreTokenBalances, u.PostTokenBalances = tokenBalancesUI(r.PreTokenBalances), tokenBalancesUI(r.PostTokenBalances)
	}
	if accounts != nil {
		u.Accounts = accounts
	}
	if inner && msg != nil {
		u.InnerInstructions = innerUI(r.InnerInstructions, msg.AccountKeys, true)
	}
	if r.Replacement != nil {
		u.ReplacementBlockhash = &uiBlockhash{r.Replacement.Blockhash, r.Replacement.LastValidBlockHeight}
	}
	return u
}

func (h *Handler) simulateTransaction(ctx context.Context, p Params) (any, error) {
	if err := p.Count(1, 2); err != nil {
		return nil, err
	}
	s, err := p.String(0)
	if err != nil {
		return nil, err
	}
	var cfg struct {
		commitmentConfig
		SigVerify              bool    `json:"sigVerify"`
		ReplaceRecentBlockhash bool    `json:"replaceRecentBlockhash"`
		Encoding               *string `json:"encoding"`
		InnerInstructions      bool    `json:"innerInstructions"`
		Accounts               *struct {
			Addresses []string `json:"addresses"`
			Encoding  *string  `json:"encoding"`
		} `json:"accounts"`
	}
	if err := p.Config(1, &cfg); err != nil {
		return nil, err
	}
	if cfg.SigVerify && cfg.ReplaceRecentBlockhash {
		return nil, InvalidParam("sigVerify may not be used with replaceRecentBlockhash")
	}
	raw, err := decodeWireTx(s, txEncodingParam(cfg.Encoding))
	if err != nil {
		return nil, err
	}
	c, err := cfg.level()
	if err != nil {
		return nil, err
	}
	if err := h.minContext(c, cfg.MinContextSlot); err != nil {
		return nil, err
	}
	opts := ledger.SimulateOptions{Commitment: c, SigVerify: cfg.SigVerify, ReplaceRecentBlockhash: cfg.ReplaceRecentBlockhash}
	accEnc := encBase64
	if cfg.Accounts != nil {
		if cfg.Accounts.Encoding != nil {
			accEnc = *cfg.Accounts.Encoding
			if accEnc == encBinary || accEnc == encBase58 {
				return nil, InvalidParam("base58 encoding not supported")
			}
			if _, err := (accountConfig{Encoding: &accEnc}).encoding(); err != nil {
				return nil, err
			}
		}
		opts.Accounts = make([]solana.PublicKey, len(cfg.Accounts.Addresses))
		for i, a := range cfg.Accounts.Addresses {
			if opts.Accounts[i], err = ParsePubkey(a); err != nil {
				return nil, err
			}
		}
	}
	r, err := h.l.Simulate(ctx, raw, opts)
	if err != nil {
		return nil, ledgerError(err)
	}
	var accounts []*UIAccount
	if opts.Accounts != nil {
		accounts = make([]*UIAccount, len(opts.Accounts))
		for i, a := range r.Accounts {
			if a != nil {
				if err := h.CheckRead(ctx, opts.Accounts[i], a); err != nil {
					return nil, err
				}
				if accounts[i], err = encodeAccount(a, accEnc, nil, h.mintReader(c)); err != nil {
					return nil, err
				}
			}
		}
	}
	tx, _ := txwire.Decode(raw)
	var msg *txwire.Message
	if tx != nil {
		msg = &tx.Message
	}
	u := simulateUI(r, accounts, cfg.InnerInstructions, msg)
	if msg != nil {
		h.hideSimulated(ctx, msg.AccountKeys, u)
	}
	return h.wrap(r.Slot, u), nil
}

// --- node ---

func (h *Handler) requestAirdrop(ctx context.Context, p Params) (any, error) {
	if err := p.Count(2, 3); err != nil {
		return nil, err
	}
	to, err := p.Pubkey(0)
	if err != nil {
		return nil, err
	}
	lamports, err := p.Uint(1)
	if err != nil {
		return nil, err
	}
	if _, err := h.commitmentOnly(p, 2); err != nil {
		return nil, err
	}
	if lamports == 0 {
		return nil, InvalidParam("Invalid param: lamports must be positive")
	}
	sig, err := h.l.Faucet().Airdrop(ctx, to, lamports)
	if err != nil {
		return nil, Errorf(CodeInternalError, "airdrop request failed: %v", err)
	}
	return sig, nil
}

func (h *Handler) getHealth(ctx context.Context, p Params) (any, error) {
	if err := p.Count(0, 0); err != nil {
		return nil, err
	}
	if err := h.l.Health(); err != nil {
		return nil, &Error{Code: CodeNodeUnhealthy, Message: "Node is unhealthy", Data: map[string]any{}}
	}
	return "ok", nil
}
