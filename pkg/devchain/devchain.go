package devchain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/inputlimit"
	"github.com/ferry-sh/ferry/pkg/ledger"
)

// Node names, as the CLI, MCP tools and logs name the two ledgers.
const (
	NodeBase      = "base"
	NodeEphemeral = "ephemeral"
)

// JSON-RPC error codes the cheatcodes answer with (jsonrpc-core's, as
// surfpool's cheatcodes use them).
const (
	CodeInvalidParams = -32602
	CodeInternalError = -32603
)

// Error is a cheatcode refused or failed: the JSON-RPC error it answers
// with. Invalid input is CodeInvalidParams; a ledger that cannot take the
// write is CodeInternalError.
type Error struct {
	Code    int
	Message string
	// Data is the error's data member (surfpool puts the parse error of
	// an invalid public key there), or nil.
	Data any
}

func (e *Error) Error() string { return fmt.Sprintf("%d: %s", e.Code, e.Message) }

// invalid is CodeInvalidParams with a formatted message.
func invalid(format string, args ...any) *Error {
	return &Error{Code: CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// internal reports a ledger failure (halted, closed) while doing what.
func internal(what string, err error) *Error {
	return &Error{Code: CodeInternalError, Message: fmt.Sprintf("%s: %v", what, err)}
}

// AccountEncoder renders an account as the JSON-RPC's getAccountInfo does
// in encoding ("base64", "base58", "base64+zstd" or "jsonParsed"); the
// chain node's handler provides it (rpcserver.Handler.AccountEncoder), so
// profiles and snapshots show accounts exactly as the node does.
type AccountEncoder func(a *ledger.Account, encoding string) (any, error)

// Config configures a Node.
type Config struct {
	// Ledger is the chain node's ledger. Required.
	Ledger *ledger.Ledger
	// Name is NodeBase or NodeEphemeral; it labels logs and results.
	Name string
	// Encode renders accounts in profiles and parsed snapshots. Required
	// for ProfileTransaction and for ExportSnapshot with parsed accounts.
	Encode AccountEncoder
	// Backing keeps the base layer's vault in step with token balances a
	// cheatcode sets on the ephemeral rollup (see TokenBacking). Nil on
	// the base node; on a rollup without one, setting a token balance is
	// refused.
	Backing TokenBacking
	// Logger receives one line per state change (default: discard).
	Logger *slog.Logger
}

// Node serves the state cheatcodes of one chain node. It is safe for
// concurrent use: every write is one ledger Apply, which the ledger
// serializes with transactions.
type Node struct {
	l       *ledger.Ledger
	name    string
	encode  AccountEncoder
	backing TokenBacking
	log     *slog.Logger
	// profiles keeps the latest profiles for lookup by key and tag.
	profiles profiles
}

// New returns the cheatcodes of cfg.Ledger.
func New(cfg Config) (*Node, error) {
	if cfg.Ledger == nil {
		return nil, errors.New("devchain: Config.Ledger is required")
	}
	if cfg.Name == "" {
		cfg.Name = cfg.Ledger.Name()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Node{l: cfg.Ledger, name: cfg.Name, encode: cfg.Encode, backing: cfg.Backing,
		log: cfg.Logger.With("component", "cheatcodes", "node", cfg.Name)}, nil
}

// Name is the node's name (NodeBase or NodeEphemeral).
func (n *Node) Name() string { return n.name }

// Ledger is the node's ledger.
func (n *Node) Ledger() *ledger.Ledger { return n.l }

// WriteResult is what a state cheatcode changed.
type WriteResult struct {
	Node string `json:"node" doc:"The chain node written: base or ephemeral."`
	// Slot is the working slot the writes landed in; they are durable once
	// it is confirmed.
	Slot uint64 `json:"slot" doc:"Slot the writes landed in (readable at processed commitment now, durable once the slot is confirmed)."`
	// Accounts are the addresses written, in write order.
	Accounts []string `json:"accounts" doc:"Addresses written, in order."`
}

// prefetch copies keys from a forked node's source before a write reads
// them (ledger.Prefetch); a node that is not a fork has nothing to fetch.
func (n *Node) prefetch(ctx context.Context, keys ...solana.PublicKey) error {
	if err := n.l.Prefetch(ctx, keys...); err != nil {
		return internal("read the forked cluster", err)
	}
	return nil
}

// errNoWrite ends an Apply that only reads: returning an error leaves the
// ledger untouched (no empty privileged write is recorded).
var errNoWrite = errors.New("read only")

// atomically runs fn on the ledger's slot loop, between transactions, so
// every read it makes (accounts, simulations) sees one state. It writes
// nothing.
func atomically(ctx context.Context, l *ledger.Ledger, fn func(ledger.AccountWriter) error) error {
	var ferr error
	_, err := l.Apply(ctx, func(w ledger.AccountWriter) error {
		if ferr = fn(w); ferr != nil {
			return ferr
		}
		return errNoWrite
	})
	if ferr != nil {
		return ferr
	}
	if errors.Is(err, errNoWrite) {
		return nil
	}
	return internal("read the ledger", err)
}

// write runs fn in one ledger Apply and logs what it wrote. fn returns the
// addresses it set, in order; an error from fn leaves the ledger
// untouched.
func (n *Node) write(ctx context.Context, method string, fn func(ledger.AccountWriter) ([]solana.PublicKey, error)) (*WriteResult, error) {
	var keys []solana.PublicKey
	var ferr error
	slot, err := n.l.Apply(ctx, func(w ledger.AccountWriter) error {
		keys, ferr = fn(w)
		return ferr
	})
	if ferr != nil {
		return nil, ferr
	}
	if err != nil {
		return nil, internal("write the ledger", err)
	}
	out := &WriteResult{Node: n.name, Slot: slot, Accounts: make([]string, len(keys))}
	for i, k := range keys {
		out.Accounts[i] = k.String()
	}
	n.log.Info("cheatcode", "method", method, "slot", slot, "accounts", out.Accounts)
	return out, nil
}

// parseKey parses a base58 public key, refusing it as surfpool does:
// -32602 "Invalid pubkey '<input>'" with the parse error as data.
func parseKey(s string) (solana.PublicKey, error) {
	k, err := inputlimit.PublicKey(s) // length first: decoding is quadratic
	if err != nil {
		return k, &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("Invalid pubkey '%s'", inputlimit.Truncate(s, inputlimit.MaxEcho)), Data: parseKeyReason(err)}
	}
	return k, nil
}

// parseKeyReason is the reason text of a key that does not parse, in
// solana-pubkey's ParsePubkeyError wording.
func parseKeyReason(err error) string {
	if errors.Is(err, inputlimit.ErrTooLong) || strings.Contains(err.Error(), "invalid length") {
		return "String is the wrong size"
	}
	return "Invalid Base58 string"
}

// optKey is a key field that may be cleared: "null" (surfpool's
// SetSomeAccount) clears it, anything else must be a public key.
func optKey(s string) (*solana.PublicKey, error) {
	if s == "null" {
		return nil, nil
	}
	k, err := parseKey(s)
	if err != nil {
		return nil, err
	}
	return &k, nil
}

// Chain is the development surface of a local pair: the cheatcodes of
// both nodes and the rollup controls (the MCP tools take it whole).
type Chain struct {
	Base, Ephemeral *Node
	// Rollup is nil when the pair has no validator to control.
	Rollup *Rollup
}

// Node returns the node called name (NodeBase or NodeEphemeral), or nil.
func (c *Chain) Node(name string) *Node {
	switch name {
	case NodeBase, "":
		return c.Base
	case NodeEphemeral:
		return c.Ephemeral
	}
	return nil
}
