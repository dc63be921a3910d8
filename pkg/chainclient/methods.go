package chainclient

import (
	"context"
	"encoding/base64"
	"encoding/json"

	"github.com/gagliardetto/solana-go"
)

// Input-size limits servers enforce (Agave); the client splits longer
// lists into several requests.
const (
	MaxMultipleAccounts   = 100
	MaxSignatureStatuses  = 256
	MaxSignaturesForLimit = 1000
)

// config builds the trailing config object, or nothing when every field is
// empty.
type config map[string]any

func (c config) commitment(cm Commitment) config {
	if cm != "" {
		c["commitment"] = cm
	}
	return c
}

// params returns args followed by cfg when cfg is not empty.
func params(cfg config, args ...any) []any {
	if len(cfg) > 0 {
		args = append(args, cfg)
	}
	if args == nil {
		args = []any{}
	}
	return args
}

// callValue calls method and decodes its (possibly context-wrapped) value.
func (c *Client) callValue(ctx context.Context, method string, p []any, v any) error {
	raw, err := c.CallRaw(ctx, method, p)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(unwrapValue(raw), v); err != nil {
		return c.errorf(method, "decode result: %w", err)
	}
	return nil
}

// GetLatestBlockhash returns a recent blockhash and its last valid block
// height at commitment.
func (c *Client) GetLatestBlockhash(ctx context.Context, commitment Commitment) (Blockhash, error) {
	var v *Blockhash
	if err := c.callValue(ctx, "getLatestBlockhash", params(config{}.commitment(commitment)), &v); err != nil {
		return Blockhash{}, err
	}
	if v == nil {
		return Blockhash{}, c.errorf("getLatestBlockhash", "empty result")
	}
	return *v, nil
}

// GetAccountInfo returns the account at key, or nil if it does not exist.
// Data is requested as base64.
func (c *Client) GetAccountInfo(ctx context.Context, key solana.PublicKey, commitment Commitment) (*Account, error) {
	var v *Account
	cfg := config{"encoding": "base64"}.commitment(commitment)
	if err := c.callValue(ctx, "getAccountInfo", params(cfg, key), &v); err != nil {
		return nil, err
	}
	return v, nil
}

// GetMultipleAccounts returns the accounts at keys, aligned with keys; a
// missing account is nil. More than MaxMultipleAccounts keys are fetched
// in several requests, which may observe different slots.
func (c *Client) GetMultipleAccounts(ctx context.Context, keys []solana.PublicKey, commitment Commitment) ([]*Account, error) {
	out := make([]*Account, 0, len(keys))
	cfg := config{"encoding": "base64"}.commitment(commitment)
	for start := 0; start < len(keys); start += MaxMultipleAccounts {
		chunk := keys[start:min(start+MaxMultipleAccounts, len(keys))]
		var v []*Account
		if err := c.callValue(ctx, "getMultipleAccounts", params(cfg, chunk), &v); err != nil {
			return nil, err
		}
		if len(v) != len(chunk) {
			return nil, c.errorf("getMultipleAccounts", "asked for %d accounts, got %d", len(chunk), len(v))
		}
		out = append(out, v...)
	}
	return out, nil
}

// GetBalance returns the lamports of key (0 for a missing account).
func (c *Client) GetBalance(ctx context.Context, key solana.PublicKey, commitment Commitment) (uint64, error) {
	var v uint64
	err := c.callValue(ctx, "getBalance", params(config{}.commitment(commitment), key), &v)
	return v, err
}

// GetTokenAccountBalance returns the balance of the token account key.
func (c *Client) GetTokenAccountBalance(ctx context.Context, key solana.PublicKey, commitment Commitment) (TokenAmount, error) {
	var v *TokenAmount
	if err := c.callValue(ctx, "getTokenAccountBalance", params(config{}.commitment(commitment), key), &v); err != nil {
		return TokenAmount{}, err
	}
	if v == nil {
		return TokenAmount{}, c.errorf("getTokenAccountBalance", "empty result")
	}
	return *v, nil
}

// GetIdentity returns the node's identity. The MagicBlock router also fills
// FQDN with the closest ER node's URL.
func (c *Client) GetIdentity(ctx context.Context) (Identity, error) {
	var v *Identity
	if err := c.Call(ctx, "getIdentity", nil, &v); err != nil {
		return Identity{}, err
	}
	if v == nil || v.Identity.IsZero() {
		return Identity{}, c.errorf("getIdentity", "no identity in result")
	}
	return *v, nil
}

// SendOptions configures SendTransaction. The zero value sends with
// preflight at the server's default commitment.
type SendOptions struct {
	SkipPreflight       bool
	PreflightCommitment Commitment
	// MaxRetries is how often the node re-broadcasts; nil leaves it to the node.
	MaxRetries     *uint
	MinContextSlot *uint64
}

// SendTransaction submits a signed wire transaction (base64-encoded on the
// wire) and returns its first signature. Preflight failures come back as
// an *RPCError with code -32002 whose Data holds the simulation result.
func (c *Client) SendTransaction(ctx context.Context, tx []byte, opts SendOptions) (solana.Signature, error) {
	cfg := config{"encoding": "base64"}
	if opts.SkipPreflight {
		cfg["skipPreflight"] = true
	}
	if opts.PreflightCommitment != "" {
		cfg["preflightCommitment"] = opts.PreflightCommitment
	}
	if opts.MaxRetries != nil {
		cfg["maxRetries"] = *opts.MaxRetries
	}
	if opts.MinContextSlot != nil {
		cfg["minContextSlot"] = *opts.MinContextSlot
	}
	var s string
	if err := c.Call(ctx, "sendTransaction", params(cfg, base64.StdEncoding.EncodeToString(tx)), &s); err != nil {
		return solana.Signature{}, err
	}
	sig, err := solana.SignatureFromBase58(s)
	if err != nil {
		return solana.Signature{}, c.errorf("sendTransaction", "result %q is not a signature: %w", s, err)
	}
	return sig, nil
}

// SimulateOptions configures SimulateTransaction.
type SimulateOptions struct {
	Commitment             Commitment
	SigVerify              bool
	ReplaceRecentBlockhash bool
	InnerInstructions      bool
}

// SimulateTransaction simulates a wire transaction (signed or not).
func (c *Client) SimulateTransaction(ctx context.Context, tx []byte, opts SimulateOptions) (*SimulateResult, error) {
	cfg := config{"encoding": "base64"}.commitment(opts.Commitment)
	if opts.SigVerify {
		cfg["sigVerify"] = true
	}
	if opts.ReplaceRecentBlockhash {
		cfg["replaceRecentBlockhash"] = true
	}
	if opts.InnerInstructions {
		cfg["innerInstructions"] = true
	}
	var v *SimulateResult
	if err := c.callValue(ctx, "simulateTransaction", params(cfg, base64.StdEncoding.EncodeToString(tx)), &v); err != nil {
		return nil, err
	}
	if v == nil {
		return nil, c.errorf("simulateTransaction", "empty result")
	}
	return v, nil
}

// GetSignatureStatuses returns the statuses of sigs, aligned with sigs; an
// unknown signature is nil. searchHistory also searches the ledger beyond
// the recent status cache. Longer lists than MaxSignatureStatuses are split.
func (c *Client) GetSignatureStatuses(ctx context.Context, sigs []solana.Signature, searchHistory bool) ([]*SignatureStatus, error) {
	out := make([]*SignatureStatus, 0, len(sigs))
	cfg := config{}
	if searchHistory {
		cfg["searchTransactionHistory"] = true
	}
	for start := 0; start < len(sigs); start += MaxSignatureStatuses {
		chunk := sigs[start:min(start+MaxSignatureStatuses, len(sigs))]
		var v []*SignatureStatus
		if err := c.callValue(ctx, "getSignatureStatuses", params(cfg, chunk), &v); err != nil {
			return nil, err
		}
		switch {
		case len(v) > len(chunk):
			return nil, c.errorf("getSignatureStatuses", "asked for %d statuses, got %d", len(chunk), len(v))
		case len(v) < len(chunk):
			// The MagicBlock router answers [] for transactions it did not
			// forward (chain-rpc.md §9.4): treat the missing ones as unknown.
			v = append(v, make([]*SignatureStatus, len(chunk)-len(v))...)
		}
		out = append(out, v...)
	}
	return out, nil
}

// GetBlockHeight returns the current block height at commitment.
func (c *Client) GetBlockHeight(ctx context.Context, commitment Commitment) (uint64, error) {
	var v uint64
	err := c.Call(ctx, "getBlockHeight", params(config{}.commitment(commitment)), &v)
	return v, err
}

// GetSlot returns the current slot at commitment.
func (c *Client) GetSlot(ctx context.Context, commitment Commitment) (uint64, error) {
	var v uint64
	err := c.Call(ctx, "getSlot", params(config{}.commitment(commitment)), &v)
	return v, err
}

// TransactionOptions configures GetTransaction.
type TransactionOptions struct {
	// Commitment must be confirmed or finalized (or empty).
	Commitment Commitment
	// Encoding is json (the default), jsonParsed, base64 or base58.
	Encoding string
}

// GetTransaction returns the raw getTransaction result (nil when the
// transaction is unknown). It always sends maxSupportedTransactionVersion 0
// so that v0 transactions are returned too.
func (c *Client) GetTransaction(ctx context.Context, sig solana.Signature, opts TransactionOptions) (json.RawMessage, error) {
	enc := opts.Encoding
	if enc == "" {
		enc = "json"
	}
	cfg := config{"encoding": enc, "maxSupportedTransactionVersion": 0}.commitment(opts.Commitment)
	raw, err := c.CallRaw(ctx, "getTransaction", params(cfg, sig))
	if err != nil {
		return nil, err
	}
	return nullToNil(raw), nil
}

// GetTransactionWire fetches a landed transaction in base64 and returns
// its wire bytes together with the whole answer, from which callers read
// the slot and the meta they need (wire and raw are nil when the node has
// no such transaction at that commitment).
func (c *Client) GetTransactionWire(ctx context.Context, sig solana.Signature, commitment Commitment) (wire []byte, raw json.RawMessage, err error) {
	raw, err = c.GetTransaction(ctx, sig, TransactionOptions{Commitment: commitment, Encoding: "base64"})
	if err != nil || raw == nil {
		return nil, nil, err
	}
	var v struct {
		Transaction []string `json:"transaction"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, nil, c.errorf("getTransaction", "%s: %v", sig, err)
	}
	if len(v.Transaction) != 2 || v.Transaction[1] != "base64" {
		return nil, nil, c.errorf("getTransaction", "%s: no base64 transaction in the answer", sig)
	}
	wire, err = base64.StdEncoding.DecodeString(v.Transaction[0])
	if err != nil {
		return nil, nil, c.errorf("getTransaction", "%s: %v", sig, err)
	}
	return wire, raw, nil
}

// SignaturesOptions configures GetSignaturesForAddress.
type SignaturesOptions struct {
	// Limit is 1..MaxSignaturesForLimit; 0 leaves the server default (1000).
	Limit int
	// Before and Until bound the range; zero values are not sent.
	Before, Until solana.Signature
	Commitment    Commitment
}

// GetSignaturesForAddress lists transactions touching addr, newest first.
func (c *Client) GetSignaturesForAddress(ctx context.Context, addr solana.PublicKey, opts SignaturesOptions) ([]SignatureInfo, error) {
	if opts.Limit < 0 || opts.Limit > MaxSignaturesForLimit {
		return nil, c.errorf("getSignaturesForAddress", "limit %d out of range 1..%d", opts.Limit, MaxSignaturesForLimit)
	}
	cfg := config{}.commitment(opts.Commitment)
	if opts.Limit > 0 {
		cfg["limit"] = opts.Limit
	}
	if !opts.Before.IsZero() {
		cfg["before"] = opts.Before
	}
	if !opts.Until.IsZero() {
		cfg["until"] = opts.Until
	}
	var v []SignatureInfo
	err := c.Call(ctx, "getSignaturesForAddress", params(cfg, addr), &v)
	return v, err
}

// GetEpochInfo returns the current epoch.
func (c *Client) GetEpochInfo(ctx context.Context, commitment Commitment) (EpochInfo, error) {
	var v EpochInfo
	err := c.Call(ctx, "getEpochInfo", params(config{}.commitment(commitment)), &v)
	return v, err
}

// RequestAirdrop asks the node's faucet for lamports and returns the
// airdrop transaction's signature. Not available on mainnet.
func (c *Client) RequestAirdrop(ctx context.Context, key solana.PublicKey, lamports uint64, commitment Commitment) (solana.Signature, error) {
	var s string
	if err := c.Call(ctx, "requestAirdrop", params(config{}.commitment(commitment), key, lamports), &s); err != nil {
		return solana.Signature{}, err
	}
	sig, err := solana.SignatureFromBase58(s)
	if err != nil {
		return solana.Signature{}, c.errorf("requestAirdrop", "result %q is not a signature: %w", s, err)
	}
	return sig, nil
}

// GetMinimumBalanceForRentExemption returns the rent-exempt minimum for an
// account of dataLen bytes. Never hard-code rent against real clusters.
func (c *Client) GetMinimumBalanceForRentExemption(ctx context.Context, dataLen int, commitment Commitment) (uint64, error) {
	var v uint64
	err := c.Call(ctx, "getMinimumBalanceForRentExemption", params(config{}.commitment(commitment), dataLen), &v)
	return v, err
}
