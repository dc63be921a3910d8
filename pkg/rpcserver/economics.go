package rpcserver

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger"
)

// DefaultLargestAccountsCacheTTL is Options.LargestAccountsCacheTTL's
// default. Agave keeps getLargestAccounts answers for two hours; a local
// chain changes faster than a cluster and its scan is cheaper, so answers
// are reused for seconds, enough to absorb a dashboard polling it.
const DefaultLargestAccountsCacheTTL = 10 * time.Second

// Economics of a ferry chain. A ferry ledger has no non-circulating
// accounts: Agave's are the Solana Foundation's known addresses and stake
// accounts locked up by them, none of which exist here. Inflation is
// Agave's default inflation, which a solana-test-validator genesis keeps;
// ferry pays no inflation rewards (no epoch-boundary reward distribution
// runs), so getInflationReward finds none.
const (
	secondsPerYear = 365.242_199 * 24 * 60 * 60
	// stakeMinimumDelegation is one SOL: the minimum once
	// stake_raise_minimum_delegation_to_1_sol is active, as it is on a
	// solana-test-validator, whose genesis activates every feature.
	stakeMinimumDelegation = 1_000_000_000
)

// inflation is Agave's Inflation.
type inflation struct {
	Initial        float64 `json:"initial"`
	Terminal       float64 `json:"terminal"`
	Taper          float64 `json:"taper"`
	Foundation     float64 `json:"foundation"`
	FoundationTerm float64 `json:"foundationTerm"`
}

// genesisInflation is Agave's Inflation::default().
var genesisInflation = inflation{Initial: 0.08, Terminal: 0.015, Taper: 0.15, Foundation: 0.05, FoundationTerm: 7}

func (i inflation) total(year float64) float64 {
	if t := i.Initial * math.Pow(1-i.Taper, year); t > i.Terminal {
		return t
	}
	return i.Terminal
}

func (i inflation) foundation(year float64) float64 {
	if year < i.FoundationTerm {
		return i.total(year) * i.Foundation
	}
	return 0
}

func (h *Handler) getInflationGovernor(ctx context.Context, p Params) (any, error) {
	if err := p.Count(0, 1); err != nil {
		return nil, err
	}
	if _, err := commitmentLevel(p, 0); err != nil {
		return nil, err
	}
	return genesisInflation, nil
}

// getInflationRate is the rate of the finalized epoch. As in Agave, the
// year is the first slot of the epoch over the slots in a year (here from
// the configured slot duration); inflation starts at genesis.
func (h *Handler) getInflationRate(ctx context.Context, p Params) (any, error) {
	if err := p.Count(0, 0); err != nil {
		return nil, err
	}
	cfg := h.l.Config()
	epoch := h.l.Slot(ledger.Finalized) / cfg.SlotsPerEpoch
	year := float64(epoch*cfg.SlotsPerEpoch) / (secondsPerYear / cfg.SlotDuration.Seconds())
	i := genesisInflation
	return map[string]any{
		"total": i.total(year), "validator": i.total(year) - i.foundation(year), "foundation": i.foundation(year), "epoch": epoch,
	}, nil
}

// getInflationReward follows Agave: the rewards of an epoch are in the
// first block of the next one, which must exist; ferry's blocks carry no
// rewards, so each address gets null once that block exists.
func (h *Handler) getInflationReward(ctx context.Context, p Params) (any, error) {
	if err := p.Count(1, 2); err != nil {
		return nil, err
	}
	strs, err := p.Strings(0)
	if err != nil {
		return nil, err
	}
	for _, s := range strs {
		if _, err := ParsePubkey(s); err != nil {
			return nil, err
		}
	}
	var cfg struct {
		commitmentConfig
		Epoch *uint64 `json:"epoch"`
	}
	if err := p.Config(1, &cfg); err != nil {
		return nil, err
	}
	c, err := cfg.level()
	if err != nil {
		return nil, err
	}
	if err := h.minContext(c, cfg.MinContextSlot); err != nil {
		return nil, err
	}
	n := h.l.Config().SlotsPerEpoch
	var epoch uint64
	if cfg.Epoch != nil {
		epoch = *cfg.Epoch
	} else if e := h.l.Slot(c) / n; e > 0 {
		epoch = e - 1
	}
	first := uint64(math.MaxUint64)
	if epoch < math.MaxUint64/n-1 {
		first = (epoch + 1) * n
	}
	if c == ledger.Processed {
		return nil, InvalidParam("Method does not support commitment below `confirmed`")
	}
	blocks, err := h.l.Blocks(first, math.MaxUint64, 1, c)
	if err != nil {
		return nil, err
	}
	if len(blocks) == 0 {
		return nil, Errorf(CodeBlockNotAvailable, "Block not available for slot %d", first)
	}
	info, _, err := h.l.Block(blocks[0], c)
	if err != nil {
		return nil, err
	}
	if info == nil {
		return nil, Errorf(CodeBlockNotAvailable, "Block not available for slot %d", blocks[0])
	}
	if info.ParentSlot >= first {
		return nil, &Error{Code: CodeSlotNotEpochBoundary, Data: map[string]uint64{"slot": blocks[0]},
			Message: "Rewards cannot be found because slot " + uintString(blocks[0]) + " is not the epoch boundary. " +
				"This may be due to gap in the queried node's local ledger or long-term storage"}
	}
	return make([]any, len(strs)), nil
}

func (h *Handler) getStakeMinimumDelegation(ctx context.Context, p Params) (any, error) {
	c, err := h.commitmentOnly(p, 0)
	if err != nil {
		return nil, err
	}
	return h.wrap(h.l.Slot(c), uint64(stakeMinimumDelegation)), nil
}

type uiSupply struct {
	Total                  uint64             `json:"total"`
	Circulating            uint64             `json:"circulating"`
	NonCirculating         uint64             `json:"nonCirculating"`
	NonCirculatingAccounts []solana.PublicKey `json:"nonCirculatingAccounts"`
}

// getSupply reports the ledger's running lamport total; all of it
// circulates (see the economics note above).
func (h *Handler) getSupply(ctx context.Context, p Params) (any, error) {
	if err := p.Count(0, 1); err != nil {
		return nil, err
	}
	var cfg struct {
		commitmentConfig
		ExcludeNonCirculatingAccountsList bool `json:"excludeNonCirculatingAccountsList"`
	}
	if err := p.Config(0, &cfg); err != nil {
		return nil, err
	}
	c, err := cfg.level()
	if err != nil {
		return nil, err
	}
	total, slot := h.l.Supply(c)
	return h.wrap(slot, uiSupply{Total: total, Circulating: total, NonCirculatingAccounts: []solana.PublicKey{}}), nil
}

type uiAccountBalance struct {
	Address  solana.PublicKey `json:"address"`
	Lamports uint64           `json:"lamports"`
}

// largestCache keeps getLargestAccounts answers for
// Options.LargestAccountsCacheTTL, per commitment (Agave keys its cache by
// filter only and answers any commitment from it).
type largestCache struct {
	mu      sync.Mutex
	entries map[ledger.Commitment]largestEntry
}

type largestEntry struct {
	at    time.Time
	slot  uint64
	value []uiAccountBalance
}

// getLargestAccounts answers the 20 accounts with the most lamports,
// largest first (sortResults: false is accepted; the answer is sorted
// anyway). The nonCirculating filter selects from an empty set.
func (h *Handler) getLargestAccounts(ctx context.Context, p Params) (any, error) {
	if err := p.Count(0, 1); err != nil {
		return nil, err
	}
	var cfg struct {
		commitmentConfig
		Filter      *string `json:"filter"`
		SortResults *bool   `json:"sortResults"`
	}
	if err := p.Config(0, &cfg); err != nil {
		return nil, err
	}
	if f := cfg.Filter; f != nil && *f != "circulating" && *f != "nonCirculating" {
		return nil, InvalidParams("unknown variant `%s`, expected `circulating` or `nonCirculating`", *f)
	}
	c, err := cfg.level()
	if err != nil {
		return nil, err
	}
	if cfg.Filter != nil && *cfg.Filter == "nonCirculating" {
		return h.wrap(h.l.Slot(c), []uiAccountBalance{}), nil
	}
	e := h.largest.get(c, h.opts.LargestAccountsCacheTTL, func() largestEntry {
		top, slot := h.l.LargestAccounts(maxLargestAccounts, c, nil)
		v := make([]uiAccountBalance, len(top))
		for i, a := range top {
			v[i] = uiAccountBalance{Address: a.Key, Lamports: a.Lamports}
		}
		return largestEntry{slot: slot, value: v}
	})
	return h.wrap(e.slot, e.value), nil
}

// get returns the cached entry for c if younger than ttl, or a fresh one
// from scan. Concurrent misses may scan twice; the later result wins.
func (lc *largestCache) get(c ledger.Commitment, ttl time.Duration, scan func() largestEntry) largestEntry {
	now := time.Now()
	lc.mu.Lock()
	e, ok := lc.entries[c]
	lc.mu.Unlock()
	if ok && ttl > 0 && now.Sub(e.at) < ttl {
		return e
	}
	e = scan()
	e.at = now
	lc.mu.Lock()
	if lc.entries == nil {
		lc.entries = map[ledger.Commitment]largestEntry{}
	}
	lc.entries[c] = e
	lc.mu.Unlock()
	return e
}

type uiPrioritizationFee struct {
	Slot              uint64 `json:"slot"`
	PrioritizationFee uint64 `json:"prioritizationFee"`
}

// getRecentPrioritizationFees reports what recent confirmed blocks paid
// (ledger.RecentPrioritizationFees has Agave's rule).
func (h *Handler) getRecentPrioritizationFees(ctx context.Context, p Params) (any, error) {
	if err := p.Count(0, 1); err != nil {
		return nil, err
	}
	var keys []solana.PublicKey
	if p.Has(0) {
		strs, err := p.Strings(0)
		if err != nil {
			return nil, err
		}
		if len(strs) > maxPrioritizationFeeKeys {
			return nil, InvalidParam("Too many inputs provided; max %d", maxPrioritizationFeeKeys)
		}
		keys = make([]solana.PublicKey, len(strs))
		for i, s := range strs {
			if keys[i], err = ParsePubkey(s); err != nil {
				return nil, err
			}
		}
	}
	fees := h.l.RecentPrioritizationFees(keys)
	out := make([]uiPrioritizationFee, len(fees))
	for i, f := range fees {
		out[i] = uiPrioritizationFee{Slot: f.Slot, PrioritizationFee: f.Fee}
	}
	return out, nil
}
