package pubsub

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/rpcserver"
)

// JSON-RPC error codes PubSub answers with (Agave's, via jsonrpc-core).
const (
	codeMethodNotFound = rpcserver.CodeMethodNotFound
	codeInvalidParams  = rpcserver.CodeInvalidParams
	codeInternalError  = rpcserver.CodeInternalError
)

func rpcErrorf(code int, format string, args ...any) *rpcserver.Error {
	return rpcserver.Errorf(code, format, args...)
}

// asRPCError turns a method's error into the error object sent back.
func asRPCError(err error) *rpcserver.Error {
	var e *rpcserver.Error
	if errors.As(err, &e) {
		return e
	}
	return rpcErrorf(codeInternalError, "Internal error: %v", err)
}

// Errors of Agave's rpc_pubsub.rs.
var (
	errInvalidSubscriptionID = rpcErrorf(codeInvalidParams, "Invalid subscription id.")
	errNodeLimit             = rpcErrorf(codeInternalError, "Internal Error: Subscription refused. Node subscription limit reached")
	errNoParams              = rpcErrorf(codeInvalidParams, "Invalid parameters: No parameters were expected")
)

// invalidThing is Agave's error for a parameter that does not parse
// ("Invalid Request: Invalid pubkey provided").
func invalidThing(thing string) error {
	return rpcErrorf(codeInvalidParams, "Invalid Request: Invalid %s provided", thing)
}

type method func(c *conn, p rpcserver.Params) (any, error)

// methods is the PubSub method table. voteSubscribe is absent, as on an
// Agave node without --rpc-pubsub-enable-vote-subscription: this chain
// has no votes.
var methods map[string]method

func init() {
	methods = map[string]method{
		"accountSubscribe":        (*conn).accountSubscribe,
		"programSubscribe":        (*conn).programSubscribe,
		"logsSubscribe":           (*conn).logsSubscribe,
		"signatureSubscribe":      (*conn).signatureSubscribe,
		"slotSubscribe":           nodeSubscribe(kindSlot),
		"slotsUpdatesSubscribe":   nodeSubscribe(kindSlotsUpdates),
		"rootSubscribe":           nodeSubscribe(kindRoot),
		"blockSubscribe":          (*conn).blockSubscribe,
		"getVersion":              (*conn).getVersion,
		"accountUnsubscribe":      (*conn).unsubscribe,
		"programUnsubscribe":      (*conn).unsubscribe,
		"logsUnsubscribe":         (*conn).unsubscribe,
		"signatureUnsubscribe":    (*conn).unsubscribe,
		"slotUnsubscribe":         (*conn).unsubscribe,
		"slotsUpdatesUnsubscribe": (*conn).unsubscribe,
		"rootUnsubscribe":         (*conn).unsubscribe,
		"blockUnsubscribe":        (*conn).unsubscribe,
	}
}

// The config structs below spell out their fields rather than embed
// shared ones, so that decoding errors name the field as the client wrote
// it. minContextSlot is accepted and ignored, as by Agave.

type dataSliceParam struct {
	Offset uint64 `json:"offset"`
	Length uint64 `json:"length"`
}

// accountParams is RpcAccountInfoConfig.
type accountParams struct {
	Commitment     *string         `json:"commitment"`
	MinContextSlot *uint64         `json:"minContextSlot"`
	Encoding       *string         `json:"encoding"`
	DataSlice      *dataSliceParam `json:"dataSlice"`
}

// check parses the commitment and encoding. dataSlice is accepted but, as
// in Agave's notifications, not applied.
func (a accountParams) check() (ledger.Commitment, string, error) {
	level, err := rpcserver.CommitmentLevel(a.Commitment)
	if err != nil {
		return 0, "", err
	}
	enc, err := rpcserver.AccountEncoding(a.Encoding)
	return level, enc, err
}

func (a accountParams) sliceKey() string {
	if a.DataSlice == nil {
		return "-"
	}
	return fmt.Sprintf("%d+%d", a.DataSlice.Offset, a.DataSlice.Length)
}

// pubkeyParam reads a base58 public key parameter.
func pubkeyParam(p rpcserver.Params, i int, thing string) (solana.PublicKey, error) {
	s, err := p.String(i)
	if err != nil {
		return solana.PublicKey{}, err
	}
	k, err := solana.PublicKeyFromBase58(s)
	if err != nil {
		return solana.PublicKey{}, invalidThing(thing)
	}
	return k, nil
}

func (c *conn) accountSubscribe(p rpcserver.Params) (any, error) {
	if err := p.Count(1, 2); err != nil {
		return nil, err
	}
	var cfg accountParams
	if err := p.Config(1, &cfg); err != nil {
		return nil, err
	}
	level, enc, err := cfg.check()
	if err != nil {
		return nil, err
	}
	key, err := pubkeyParam(p, 0, "pubkey")
	if err != nil {
		return nil, err
	}
	if f := c.s.opts.ReadFilter; f != nil {
		// An account already hidden from this caller is refused as
		// getAccountInfo refuses it. One that becomes hidden later is
		// left out of the notifications instead (visibleHolders).
		a, _ := c.s.l.Account(key, level)
		if err := f.Check(c.readCtx, key, a); err != nil {
			return nil, err
		}
	}
	return result(c.subscribe(&subscription{
		kind: kindAccount, level: level, pubkey: key, encoding: enc,
		key: fmt.Sprintf("account/%s/%s/%s/%s", key, level, enc, cfg.sliceKey()),
	}))
}

func (c *conn) programSubscribe(p rpcserver.Params) (any, error) {
	if err := p.Count(1, 2); err != nil {
		return nil, err
	}
	var cfg struct {
		Commitment     *string            `json:"commitment"`
		MinContextSlot *uint64            `json:"minContextSlot"`
		Encoding       *string            `json:"encoding"`
		DataSlice      *dataSliceParam    `json:"dataSlice"`
		Filters        []rpcserver.Filter `json:"filters"`
		WithContext    *bool              `json:"withContext"`
		SortResults    *bool              `json:"sortResults"`
	}
	if err := p.Config(1, &cfg); err != nil {
		return nil, err
	}
	acct := accountParams{Commitment: cfg.Commitment, Encoding: cfg.Encoding, DataSlice: cfg.DataSlice}
	if err := rpcserver.VerifyFilters(cfg.Filters); err != nil {
		// Agave's programSubscribe shows jsonrpc-core's Display of the
		// error: "<code description>: <message>".
		return nil, rpcErrorf(codeInvalidParams, "Invalid params: %s", asRPCError(err).Message)
	}
	level, enc, err := acct.check()
	if err != nil {
		return nil, err
	}
	key, err := pubkeyParam(p, 0, "pubkey")
	if err != nil {
		return nil, err
	}
	fk, _ := json.Marshal(filterKeys(cfg.Filters))
	return result(c.subscribe(&subscription{
		kind: kindProgram, level: level, pubkey: key, encoding: enc, filters: cfg.Filters,
		key: fmt.Sprintf("program/%s/%s/%s/%s/%v/%s", key, level, enc, acct.sliceKey(), cfg.WithContext != nil && *cfg.WithContext, fk),
	}))
}

// filterKeys is a canonical form of decoded filters, for deduplication.
func filterKeys(fs []rpcserver.Filter) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Key()
	}
	return out
}

// logsFilter is RpcTransactionLogsFilter: "all", "allWithVotes" or
// {"mentions":[address]}.
type logsFilter struct {
	all      bool // all or allWithVotes (this chain has no votes)
	votes    bool
	mentions solana.PublicKey
}

func parseLogsFilter(raw json.RawMessage) (logsFilter, error) {
	raw = bytes.TrimSpace(raw)
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "all":
			return logsFilter{all: true}, nil
		case "allWithVotes":
			return logsFilter{all: true, votes: true}, nil
		}
		return logsFilter{}, rpcserver.InvalidParams("unknown variant `%s`, expected one of `all`, `allWithVotes`, `mentions`", s)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || len(obj) != 1 {
		return logsFilter{}, rpcserver.InvalidParams("invalid type: %s, expected enum RpcTransactionLogsFilter", rpcserver.JSONKind(raw))
	}
	mentions, ok := obj["mentions"]
	if !ok {
		for k := range obj {
			return logsFilter{}, rpcserver.InvalidParams("unknown variant `%s`, expected one of `all`, `allWithVotes`, `mentions`", k)
		}
	}
	var addrs []string
	if err := json.Unmarshal(mentions, &addrs); err != nil {
		return logsFilter{}, rpcserver.InvalidParams("invalid type: %s, expected a sequence", rpcserver.JSONKind(bytes.TrimSpace(mentions)))
	}
	if len(addrs) != 1 {
		return logsFilter{}, rpcErrorf(codeInvalidParams, "Invalid Request: Only 1 address supported")
	}
	k, err := solana.PublicKeyFromBase58(addrs[0])
	if err != nil {
		return logsFilter{}, invalidThing("mentions")
	}
	return logsFilter{mentions: k}, nil
}

func (c *conn) logsSubscribe(p rpcserver.Params) (any, error) {
	if err := p.Count(1, 2); err != nil {
		return nil, err
	}
	var cfg struct {
		Commitment *string `json:"commitment"`
	}
	if err := p.Config(1, &cfg); err != nil {
		return nil, err
	}
	level, err := rpcserver.CommitmentLevel(cfg.Commitment)
	if err != nil {
		return nil, err
	}
	f, err := parseLogsFilter(p[0])
	if err != nil {
		return nil, err
	}
	what := "mentions:" + f.mentions.String()
	switch {
	case f.votes:
		what = "allWithVotes"
	case f.all:
		what = "all"
	}
	return result(c.subscribe(&subscription{
		kind: kindLogs, level: level, logs: f, pubkey: f.mentions,
		key: fmt.Sprintf("logs/%s/%s", what, level),
	}))
}

func (c *conn) signatureSubscribe(p rpcserver.Params) (any, error) {
	if err := p.Count(1, 2); err != nil {
		return nil, err
	}
	var cfg struct {
		Commitment                 *string `json:"commitment"`
		EnableReceivedNotification *bool   `json:"enableReceivedNotification"`
	}
	if err := p.Config(1, &cfg); err != nil {
		return nil, err
	}
	level, err := rpcserver.CommitmentLevel(cfg.Commitment)
	if err != nil {
		return nil, err
	}
	s, err := p.String(0)
	if err != nil {
		return nil, err
	}
	sig, err := solana.SignatureFromBase58(s)
	if err != nil {
		return nil, invalidThing("signature")
	}
	received := cfg.EnableReceivedNotification != nil && *cfg.EnableReceivedNotification
	sub := &subscription{
		kind: kindSignature, level: level, sig: sig, received: received,
		key: fmt.Sprintf("signature/%s/%s/%v", sig, level, received),
	}
	id, err := c.subscribe(sub)
	if err != nil {
		return nil, err
	}
	c.s.checkSignature(id, sig)
	return id, nil
}

// nodeSubscribe is slotSubscribe, slotsUpdatesSubscribe and
// rootSubscribe, which take no parameters.
func nodeSubscribe(k kind) method {
	return func(c *conn, p rpcserver.Params) (any, error) {
		if len(p) > 0 {
			return nil, errNoParams
		}
		return result(c.subscribe(&subscription{kind: k, key: k.String()}))
	}
}

// parseBlockFilter reads RpcBlockSubscribeFilter: "all" or
// {"mentionsAccountOrProgram": address}.
func parseBlockFilter(raw json.RawMessage) (*solana.PublicKey, error) {
	raw = bytes.TrimSpace(raw)
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "all" {
			return nil, nil
		}
		return nil, rpcserver.InvalidParams("unknown variant `%s`, expected `all` or `mentionsAccountOrProgram`", s)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || len(obj) != 1 {
		return nil, rpcserver.InvalidParams("invalid type: %s, expected enum RpcBlockSubscribeFilter", rpcserver.JSONKind(raw))
	}
	v, ok := obj["mentionsAccountOrProgram"]
	if !ok {
		for k := range obj {
			return nil, rpcserver.InvalidParams("unknown variant `%s`, expected `all` or `mentionsAccountOrProgram`", k)
		}
	}
	var addr string
	if err := json.Unmarshal(v, &addr); err != nil {
		return nil, rpcserver.InvalidParams("invalid type: %s, expected a string", rpcserver.JSONKind(bytes.TrimSpace(v)))
	}
	k, err := solana.PublicKeyFromBase58(addr)
	if err != nil {
		return nil, invalidThing("mentions_account_or_program")
	}
	return &k, nil
}

func (c *conn) blockSubscribe(p rpcserver.Params) (any, error) {
	if err := p.Count(1, 2); err != nil {
		return nil, err
	}
	var cfg struct {
		Commitment                     *string `json:"commitment"`
		Encoding                       *string `json:"encoding"`
		TransactionDetails             *string `json:"transactionDetails"`
		ShowRewards                    *bool   `json:"showRewards"`
		MaxSupportedTransactionVersion *uint8  `json:"maxSupportedTransactionVersion"`
	}
	if err := p.Config(1, &cfg); err != nil {
		return nil, err
	}
	level, err := rpcserver.CommitmentLevel(cfg.Commitment)
	if err != nil {
		return nil, err
	}
	enc := "base64" // blockSubscribe's default, unlike getBlock's json
	if cfg.Encoding != nil {
		if enc, err = rpcserver.TransactionEncoding(cfg.Encoding); err != nil {
			return nil, err
		}
	}
	details, err := rpcserver.TransactionDetails(cfg.TransactionDetails)
	if err != nil {
		return nil, err
	}
	if level < ledger.Confirmed {
		return nil, rpcErrorf(codeInvalidParams, "Method does not support commitment below `confirmed`")
	}
	mentions, err := parseBlockFilter(p[0])
	if err != nil {
		return nil, err
	}
	o := rpcserver.BlockOptions{
		Encoding: enc, Details: details, Rewards: cfg.ShowRewards != nil && *cfg.ShowRewards,
		MaxVersion: cfg.MaxSupportedTransactionVersion,
	}
	sub := &subscription{kind: kindBlock, level: level, block: o}
	what, ver := "all", "-"
	if mentions != nil {
		sub.pubkey, sub.mentions = *mentions, true
		what = mentions.String()
	}
	if o.MaxVersion != nil {
		ver = fmt.Sprint(*o.MaxVersion)
	}
	sub.key = fmt.Sprintf("block/%s/%s/%s/%s/%v/%s", what, level, enc, details, o.Rewards, ver)
	return result(c.subscribe(sub))
}

func (c *conn) unsubscribe(p rpcserver.Params) (any, error) {
	if err := p.Count(1, 1); err != nil {
		return nil, err
	}
	var id uint64
	if err := p.Decode(0, &id); err != nil {
		return nil, err
	}
	if !c.s.unsubscribe(c, id) {
		return nil, errInvalidSubscriptionID
	}
	return true, nil
}

func (c *conn) getVersion(p rpcserver.Params) (any, error) {
	if len(p) > 0 {
		return nil, errNoParams
	}
	return map[string]any{"solana-core": c.s.opts.Version, "feature-set": c.s.opts.FeatureSet}, nil
}

// result is a subscribe method's answer: the id, or the error.
func result(id uint64, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return id, nil
}

// subscribe registers sub for c and returns its id.
func (c *conn) subscribe(sub *subscription) (uint64, error) {
	sub.method = sub.kind.notification()
	return c.s.subscribe(c, sub)
}
