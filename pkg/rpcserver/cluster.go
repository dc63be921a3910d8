package rpcserver

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger"
)

// Solana server error codes these methods answer with (chain-rpc.md §2).
const (
	CodeNoSnapshot           = -32008
	CodeSlotNotEpochBoundary = -32018
)

// Limits of the cluster methods (Agave's rpc-client-api request.rs and
// rpc.rs).
const (
	maxSlotLeaders           = 5000
	maxPerformanceSamples    = ledger.MaxPerformanceSamples
	delinquentSlotDistance   = 128
	maxSlotHistory           = 1024 * 1024 // SlotHistory's MAX_ENTRIES
	maxPrioritizationFeeKeys = 128         // MAX_TX_ACCOUNT_LOCKS
)

// ClusterNode is what getClusterNodes reports about this node's
// endpoints, as host:port socket addresses (Agave's RpcContactInfo); an
// empty one is reported as null.
type ClusterNode struct {
	// RPC is the JSON-RPC address.
	RPC string
	// PubSub is the websocket (PubSub) address.
	PubSub string
}

// SetClusterNode replaces what getClusterNodes reports, e.g. once the
// listeners are bound. It is safe to call while serving.
func (h *Handler) SetClusterNode(n ClusterNode) { h.node.Store(&n) }

// commitmentLevel parses a config that carries only Agave's
// CommitmentConfig (no minContextSlot: Agave ignores one there).
func commitmentLevel(p Params, i int) (ledger.Commitment, error) {
	var cfg commitmentConfig
	if err := p.Config(i, &cfg); err != nil {
		return 0, err
	}
	return cfg.level()
}

// optPubkey parses an optional base58 key parameter.
func optPubkey(s *string) (*solana.PublicKey, error) {
	if s == nil {
		return nil, nil
	}
	k, err := ParsePubkey(*s)
	if err != nil {
		return nil, err
	}
	return &k, nil
}

func optAddr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// uiContactInfo is Agave's RpcContactInfo. A ferry node has no gossip,
// TPU, TVU or repair sockets: only RPC and PubSub.
type uiContactInfo struct {
	Pubkey          solana.PublicKey `json:"pubkey"`
	Gossip          *string          `json:"gossip"`
	TVU             *string          `json:"tvu"`
	TPU             *string          `json:"tpu"`
	TPUQuic         *string          `json:"tpuQuic"`
	TPUForwards     *string          `json:"tpuForwards"`
	TPUForwardsQuic *string          `json:"tpuForwardsQuic"`
	TPUVote         *string          `json:"tpuVote"`
	ServeRepair     *string          `json:"serveRepair"`
	RPC             *string          `json:"rpc"`
	PubSub          *string          `json:"pubsub"`
	Version         string           `json:"version"`
	FeatureSet      uint32           `json:"featureSet"`
	ShredVersion    uint16           `json:"shredVersion"`
}

// shredVersion is Agave's compute_shred_version for a genesis hash and no
// hard forks: the hash's 2-byte chunks XORed together, plus one.
func shredVersion(h solana.Hash) uint16 {
	var acc [2]byte
	for i, b := range h {
		acc[i%2] ^= b
	}
	v := uint16(acc[0])<<8 | uint16(acc[1])
	if v == 0xffff {
		return v
	}
	return v + 1
}

// getClusterNodes answers the one node of this cluster. Agave lists only
// nodes with a gossip address; a ferry node has none but is listed.
func (h *Handler) getClusterNodes(ctx context.Context, p Params) (any, error) {
	if err := p.Count(0, 0); err != nil {
		return nil, err
	}
	n := h.node.Load()
	return []uiContactInfo{{
		Pubkey: h.l.Identity(), RPC: optAddr(n.RPC), PubSub: optAddr(n.PubSub),
		Version: h.opts.Version, FeatureSet: h.opts.FeatureSet, ShredVersion: shredVersion(h.l.GenesisHash()),
	}}, nil
}

type uiVoteAccount struct {
	VotePubkey       solana.PublicKey `json:"votePubkey"`
	NodePubkey       solana.PublicKey `json:"nodePubkey"`
	ActivatedStake   uint64           `json:"activatedStake"`
	EpochVoteAccount bool             `json:"epochVoteAccount"`
	Commission       uint8            `json:"commission"`
	LastVote         uint64           `json:"lastVote"`
	EpochCredits     [][3]uint64      `json:"epochCredits"`
	RootSlot         uint64           `json:"rootSlot"`
}

// getVoteAccounts lists the ledger's vote accounts (with
// Config.ValidatorStake, the node's own; see ledger/validator.go for how
// its votes are derived), split into current and delinquent as Agave
// splits them.
func (h *Handler) getVoteAccounts(ctx context.Context, p Params) (any, error) {
	if err := p.Count(0, 1); err != nil {
		return nil, err
	}
	var cfg struct {
		commitmentConfig
		VotePubkey              *string `json:"votePubkey"`
		KeepUnstakedDelinquents bool    `json:"keepUnstakedDelinquents"`
		DelinquentSlotDistance  *uint64 `json:"delinquentSlotDistance"`
	}
	if err := p.Config(0, &cfg); err != nil {
		return nil, err
	}
	only, err := optPubkey(cfg.VotePubkey)
	if err != nil {
		return nil, err
	}
	c, err := cfg.level()
	if err != nil {
		return nil, err
	}
	distance := uint64(delinquentSlotDistance)
	if cfg.DelinquentSlotDistance != nil {
		distance = *cfg.DelinquentSlotDistance
	}
	votes, slot := h.l.VoteAccounts(c)
	out := struct {
		Current    []uiVoteAccount `json:"current"`
		Delinquent []uiVoteAccount `json:"delinquent"`
	}{Current: []uiVoteAccount{}, Delinquent: []uiVoteAccount{}}
	for _, v := range votes {
		if only != nil && v.Vote != *only {
			continue
		}
		ui := uiVoteAccount{
			VotePubkey: v.Vote, NodePubkey: v.Node, ActivatedStake: v.ActivatedStake, EpochVoteAccount: v.ActivatedStake > 0,
			Commission: v.Commission, LastVote: v.LastVote, RootSlot: v.RootSlot, EpochCredits: [][3]uint64{},
		}
		for _, e := range v.EpochCredits {
			ui.EpochCredits = append(ui.EpochCredits, [3]uint64{e.Epoch, e.Credits, e.PrevCredits})
		}
		current := v.LastVote > 0
		if slot >= distance {
			current = v.LastVote > slot-distance
		}
		switch {
		case current:
			out.Current = append(out.Current, ui)
		case cfg.KeepUnstakedDelinquents || v.ActivatedStake > 0:
			out.Delinquent = append(out.Delinquent, ui)
		}
	}
	return out, nil
}

// scheduleAvailable is whether the leader schedule of an epoch is known:
// like Agave's, up to the epoch after the current one.
func (h *Handler) scheduleAvailable(epoch uint64) bool {
	return epoch <= h.l.Slot(ledger.Processed)/h.l.Config().SlotsPerEpoch+1
}

// getLeaderSchedule answers the node for every slot of the epoch: it is
// the only leader.
func (h *Handler) getLeaderSchedule(ctx context.Context, p Params) (any, error) {
	if err := p.Count(0, 2); err != nil {
		return nil, err
	}
	type scheduleConfig struct {
		commitmentConfig
		Identity *string `json:"identity"`
	}
	var slot *uint64
	var cfg *scheduleConfig
	if p.Has(0) {
		switch t := p[0]; {
		case len(t) > 0 && t[0] == '{':
			cfg = &scheduleConfig{}
			if err := p.Decode(0, cfg); err != nil {
				return nil, err
			}
		default:
			var s uint64
			if err := json.Unmarshal(t, &s); err != nil {
				return nil, InvalidParams("data did not match any variant of untagged enum RpcLeaderScheduleConfigWrapper")
			}
			slot = &s
		}
	}
	if cfg == nil {
		cfg = &scheduleConfig{}
		if err := p.Config(1, cfg); err != nil {
			return nil, err
		}
	}
	identity, err := optPubkey(cfg.Identity)
	if err != nil {
		return nil, err
	}
	otherIdentity := identity != nil && *identity != h.l.Identity()
	c, err := cfg.level()
	if err != nil {
		return nil, err
	}
	at := h.l.Slot(c)
	if slot != nil {
		at = *slot
	}
	n := h.l.Config().SlotsPerEpoch
	if !h.scheduleAvailable(at / n) {
		return Null, nil
	}
	if otherIdentity {
		return map[string]any{}, nil // it leads no slot
	}
	// Built directly: an epoch is 432 000 slot indexes by default.
	id := h.l.Identity().String()
	b := make([]byte, 0, len(id)+8+int(n)*7)
	b = append(append(append(b, `{"`...), id...), `":[`...)
	for i := uint64(0); i < n; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, i, 10)
	}
	return json.RawMessage(append(b, "]}"...)), nil
}

// getSlotLeaders answers the node for every slot.
func (h *Handler) getSlotLeaders(ctx context.Context, p Params) (any, error) {
	if err := p.Count(2, 2); err != nil {
		return nil, err
	}
	start, err := p.Uint(0)
	if err != nil {
		return nil, err
	}
	limit, err := p.Uint(1)
	if err != nil {
		return nil, err
	}
	if limit > maxSlotLeaders {
		return nil, InvalidParam("Invalid limit; max %d", maxSlotLeaders)
	}
	n := h.l.Config().SlotsPerEpoch
	if limit > 0 {
		last := start + limit - 1
		if last < start {
			last = ^uint64(0)
		}
		for e := start / n; e <= last/n; e++ {
			if !h.scheduleAvailable(e) {
				return nil, InvalidParam("Invalid slot range: leader schedule for epoch %d is unavailable", e)
			}
		}
	}
	out := make([]solana.PublicKey, limit)
	for i := range out {
		out[i] = h.l.Identity()
	}
	return out, nil
}

// getBlockProduction counts the node's leader slots and the blocks it
// really produced (frozen) in the range; the working slot is a leader
// slot whose block is not produced yet.
func (h *Handler) getBlockProduction(ctx context.Context, p Params) (any, error) {
	if err := p.Count(0, 1); err != nil {
		return nil, err
	}
	var cfg struct {
		commitmentConfig
		Identity *string `json:"identity"`
		Range    *struct {
			FirstSlot uint64  `json:"firstSlot"`
			LastSlot  *uint64 `json:"lastSlot"`
		} `json:"range"`
	}
	if err := p.Config(0, &cfg); err != nil {
		return nil, err
	}
	only, err := optPubkey(cfg.Identity)
	if err != nil {
		return nil, err
	}
	c, err := cfg.level()
	if err != nil {
		return nil, err
	}
	slot := h.l.Slot(c)
	n := h.l.Config().SlotsPerEpoch
	first, last := slot/n*n, slot
	if cfg.Range != nil {
		first = cfg.Range.FirstSlot
		if cfg.Range.LastSlot != nil {
			last = *cfg.Range.LastSlot
		}
		if last < first {
			return nil, InvalidParam("lastSlot, %d, cannot be less than firstSlot, %d", last, first)
		}
	}
	oldest := uint64(0)
	if slot+1 > maxSlotHistory {
		oldest = slot + 1 - maxSlotHistory
	}
	if first < oldest {
		return nil, InvalidParam("firstSlot, %d, is too small; min %d", first, oldest)
	}
	if last > slot {
		return nil, InvalidParam("lastSlot, %d, is too large; max %d", last, slot)
	}
	produced, err := h.l.ProducedBlocks(first, last)
	if err != nil {
		return nil, err
	}
	byIdentity := map[string][2]uint64{}
	if id := h.l.Identity(); only == nil || *only == id {
		byIdentity[id.String()] = [2]uint64{last - first + 1, produced}
	}
	return h.wrap(slot, map[string]any{
		"byIdentity": byIdentity,
		"range":      map[string]uint64{"firstSlot": first, "lastSlot": last},
	}), nil
}

func (h *Handler) getBlockCommitment(ctx context.Context, p Params) (any, error) {
	if err := p.Count(1, 1); err != nil {
		return nil, err
	}
	slot, err := p.Uint(0)
	if err != nil {
		return nil, err
	}
	commitment, total := h.l.BlockCommitment(slot)
	out := map[string]any{"commitment": nil, "totalStake": total}
	if commitment != nil {
		out["commitment"] = commitment[:]
	}
	return out, nil
}

type uiPerfSample struct {
	Slot                   uint64 `json:"slot"`
	NumTransactions        uint64 `json:"numTransactions"`
	NumNonVoteTransactions uint64 `json:"numNonVoteTransactions"`
	NumSlots               uint64 `json:"numSlots"`
	SamplePeriodSecs       uint16 `json:"samplePeriodSecs"`
}

func (h *Handler) getRecentPerformanceSamples(ctx context.Context, p Params) (any, error) {
	if err := p.Count(0, 1); err != nil {
		return nil, err
	}
	limit := uint64(maxPerformanceSamples)
	if p.Has(0) {
		var err error
		if limit, err = p.Uint(0); err != nil {
			return nil, err
		}
		if limit > maxPerformanceSamples {
			return nil, InvalidParam("Invalid limit; max %d", maxPerformanceSamples)
		}
	}
	samples, err := h.l.RecentPerformanceSamples(int(limit))
	if err != nil {
		return nil, err
	}
	out := make([]uiPerfSample, len(samples))
	for i, s := range samples {
		out[i] = uiPerfSample{Slot: s.Slot, NumTransactions: s.NumTransactions, NumNonVoteTransactions: s.NumNonVote,
			NumSlots: s.NumSlots, SamplePeriodSecs: s.SamplePeriodSecs}
	}
	return out, nil
}

// getHighestSnapshotSlot answers Agave's "no snapshot": ferry persists
// every slot in its database and takes no snapshots.
func (h *Handler) getHighestSnapshotSlot(ctx context.Context, p Params) (any, error) {
	if err := p.Count(0, 0); err != nil {
		return nil, err
	}
	return nil, Errorf(CodeNoSnapshot, "No snapshot")
}

// getShredWatermark is getMaxRetransmitSlot and getMaxShredInsertSlot:
// Agave raises these watermarks only for shreds received from other nodes
// (turbine and repair), never for a leader's own blocks, so a lone leader
// (a solana-test-validator as much as a ferry node, which has no shreds
// at all) answers 0.
func (h *Handler) getShredWatermark(ctx context.Context, p Params) (any, error) {
	if err := p.Count(0, 0); err != nil {
		return nil, err
	}
	return uint64(0), nil
}
