// Package submit sends signed transactions to the base layer or an
// ephemeral rollup and optionally confirms them: the logic of the payments
// API's POST /v1/transaction/send, shared with `ferry send`.
//
// The rules are those of service-interface.md §4.2:
//
//  1. transactionBase64 and sendTo are always required;
//  2. with confirm: true, recentBlockhash and lastValidBlockHeight are
//     required;
//  3. sendRpcEndpoint is valid only with sendTo: ephemeral;
//  4. sendTo: base submits to the base layer, sendTo: ephemeral to the
//     ephemeral RPC (sendRpcEndpoint if given, else the cluster's), with
//     the bearer token as ?token=.
//
// A request that breaks a rule is a 422 VALIDATION_ERROR; 400 is kept for
// problems with the transaction itself (INVALID_TRANSACTION,
// TRANSACTION_TOO_LARGE, TRANSACTION_FAILED), which includes a
// transaction the node refuses (§7: a send error is 400): one it cannot
// decode, whose signatures do not verify, or whose preflight simulation
// fails is 400 RPC_ERROR "Failed to send transaction" with the node's
// error (and the simulation's err and logs) in details. 502 RPC_ERROR is
// kept for a node that cannot be reached or does not answer sensibly.
// Sends always use preflight commitment "confirmed"; confirmation polls
// until the signature is confirmed or the block height passes
// lastValidBlockHeight.
package submit

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/outcome"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// Request is the body of POST /v1/transaction/send.
type Request struct {
	TransactionBase64    string `json:"transactionBase64" validate:"required,minlen=1" doc:"Signed wire transaction, standard padded base64 (at most 1232 bytes decoded)."`
	SendTo               string `json:"sendTo" validate:"required,enum=base|ephemeral" doc:"Where to submit: the sendTo of the build response."`
	SendRPCEndpoint      string `json:"sendRpcEndpoint,omitempty" validate:"url" doc:"Explicit ephemeral RPC endpoint (the build response's sendRpcEndpoint); only with sendTo ephemeral."`
	Cluster              string `json:"cluster,omitempty" doc:"mainnet, devnet, mainnet-private, devnet-private, local, or a custom http(s) base RPC URL; picks the RPC when no sendRpcEndpoint is given."`
	Confirm              *bool  `json:"confirm,omitempty" default:"false" doc:"Wait until the transaction is confirmed (needs recentBlockhash and lastValidBlockHeight)."`
	RecentBlockhash      string `json:"recentBlockhash,omitempty" doc:"The transaction's blockhash (from the build response); required with confirm."`
	LastValidBlockHeight *int64 `json:"lastValidBlockHeight,omitempty" validate:"min=0,safe" doc:"The blockhash's last valid block height (from the build response); required with confirm."`
	SkipPreflight        *bool  `json:"skipPreflight,omitempty" doc:"Skip the node's preflight simulation."`
	MaxRetries           *int64 `json:"maxRetries,omitempty" validate:"min=0,safe" doc:"How often the node re-broadcasts the transaction."`
	// WaitForOutcome is ferry's opt-in extension of the hosted contract:
	// without it the request and response are exactly the hosted API's.
	WaitForOutcome *bool `json:"waitForOutcome,omitempty" default:"false" doc:"ferry extension (needs confirm): after confirmation, follow the operation to its end (a deposit credited on the rollup, every payout of a private transfer paid, a withdrawal back on base, or a refund) and return it as outcome. Followed on ferry's local cluster; elsewhere outcome.status is unknown."`
}

// Response is the result of a send.
type Response struct {
	Signature                     string `json:"signature" doc:"Transaction signature (base58)."`
	SendTo                        string `json:"sendTo" doc:"base or ephemeral."`
	Confirmed                     bool   `json:"confirmed" doc:"The server confirmed the transaction (only with confirm: true)."`
	ConfirmationRPCEndpoint       string `json:"confirmationRpcEndpoint" doc:"RPC the transaction was sent to, without any token: confirm against it."`
	ConfirmationRequiresAuthToken bool   `json:"confirmationRequiresAuthToken" doc:"Confirming against that RPC needs the bearer token (true for ephemeral sends)."`
	// Outcome is present only when the request asked for it.
	Outcome *outcome.Result `json:"outcome,omitempty" doc:"With waitForOutcome: how the operation ended (kind, status settled|refunded|failed|unknown, message, payouts)."`
}

// MaxOutcomeWait bounds how long a send with waitForOutcome follows the
// operation after confirmation (the API's write timeout is 3 minutes); a
// longer wait answers 504 with the signature, to be followed with
// "ferry confirm --watch".
const MaxOutcomeWait = 2 * time.Minute

// Layers.
const (
	Base      = "base"
	Ephemeral = "ephemeral"
)

// MaxTransactionSize is the wire size limit of a Solana transaction.
const MaxTransactionSize = 1232

// Error codes of a send (payments-api.md §3.2, plus TRANSACTION_EXPIRED).
const (
	CodeInvalidTransaction  = "INVALID_TRANSACTION"
	CodeTransactionTooLarge = "TRANSACTION_TOO_LARGE"
	CodeTransactionFailed   = "TRANSACTION_FAILED"
	// CodeTransactionExpired (502) replaces the hosted API's generic 502
	// for a blockhash that expired before the transaction was confirmed:
	// it did not land and is safe to re-sign.
	CodeTransactionExpired = "TRANSACTION_EXPIRED"
)

// Validate checks rules 2 and 3 (rule 1 is the schema's): a violation is a
// 422 VALIDATION_ERROR whose issues name the fields.
func (r *Request) Validate() error {
	var issues []apierr.Issue
	if r.Confirm != nil && *r.Confirm {
		if r.RecentBlockhash == "" {
			issues = append(issues, apierr.Issue{Code: "custom", Message: "recentBlockhash is required when confirm is true", Path: []any{"recentBlockhash"}})
		}
		if r.LastValidBlockHeight == nil {
			issues = append(issues, apierr.Issue{Code: "custom", Message: "lastValidBlockHeight is required when confirm is true", Path: []any{"lastValidBlockHeight"}})
		}
	}
	if r.WaitForOutcome != nil && *r.WaitForOutcome && (r.Confirm == nil || !*r.Confirm) {
		issues = append(issues, apierr.Issue{Code: "custom", Message: "waitForOutcome needs confirm: true", Path: []any{"waitForOutcome"}})
	}
	if r.SendRPCEndpoint != "" && r.SendTo != Ephemeral {
		issues = append(issues, apierr.Issue{Code: "custom", Message: "sendRpcEndpoint can only be used when sendTo is ephemeral", Path: []any{"sendRpcEndpoint"}})
	}
	if issues != nil {
		return apierr.Validation(issues...)
	}
	return nil
}

// DecodeTransaction decodes transactionBase64 as the hosted API does: the
// trimmed text must be canonical padded base64 of 1..1232 bytes. Failures
// are 400 INVALID_TRANSACTION or TRANSACTION_TOO_LARGE.
func DecodeTransaction(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if s == "" || len(s)%4 != 0 || !isBase64(s) {
		return nil, apierr.BadRequest(CodeInvalidTransaction, "transactionBase64 must be valid base64")
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, apierr.BadRequest(CodeInvalidTransaction, "transactionBase64 must be valid base64")
	}
	if len(raw) == 0 {
		return nil, apierr.BadRequest(CodeInvalidTransaction, "transactionBase64 must decode to transaction bytes")
	}
	if len(raw) > MaxTransactionSize {
		return nil, apierr.BadRequest(CodeTransactionTooLarge, "Serialized transaction exceeds 1232 bytes").
			WithDetails(map[string]any{"size": len(raw), "limit": MaxTransactionSize})
	}
	return raw, nil
}

// isBase64 matches ^[A-Za-z0-9+/]+={0,2}$.
func isBase64(s string) bool {
	body := strings.TrimRight(s, "=")
	if len(s)-len(body) > 2 || body == "" {
		return false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/') {
			return false
		}
	}
	return true
}

// Endpoints are the chain nodes of one cluster a send can go to.
type Endpoints struct {
	// Base is the base-layer RPC.
	Base *chainclient.Client
	// Ephemeral is the cluster's ephemeral RPC, without a token.
	Ephemeral *chainclient.Client
	// Dial returns a client for an explicit sendRpcEndpoint (a normalised
	// URL without token). Nil means chainclient.New(url). An *apierr.Error
	// it returns (an endpoint the server may not contact) is the answer.
	Dial func(url string) (*chainclient.Client, error)
	// FollowSettlement marks a cluster whose rollup validator is ferry's
	// local one, whose evidence pkg/outcome reads (waitForOutcome).
	FollowSettlement bool
	// TokenAllowed, if set, says which endpoint URLs may receive the
	// bearer token (the rollup that issued it); other ephemeral targets
	// get none. Nil sends it to any ephemeral target (the CLI, whose user
	// chose the endpoint).
	TokenAllowed func(url string) bool
}

// Sender sends and confirms. Its zero value polls every
// chainclient.DefaultPollInterval.
type Sender struct {
	// PollInterval is the confirmation poll interval.
	PollInterval time.Duration
	// OnProgress, if set, sees every confirmation poll.
	OnProgress func(chainclient.ConfirmProgress)
}

// Target resolves where req goes: base, the explicit sendRpcEndpoint
// (normalised), or the cluster's ephemeral RPC, with token as ?token= for
// ephemeral sends to an endpoint ep.TokenAllowed accepts. req must have
// passed Validate.
func Target(ep Endpoints, req *Request, token string) (*chainclient.Client, error) {
	if req.SendTo == Base {
		if ep.Base == nil {
			return nil, apierr.New(http.StatusInternalServerError, apierr.CodeConfig, "No base RPC endpoint is configured for this cluster")
		}
		return ep.Base, nil
	}
	c := ep.Ephemeral
	if req.SendRPCEndpoint != "" {
		u, err := chainclient.NormalizeFQDN(req.SendRPCEndpoint)
		if err != nil {
			return nil, apierr.Validation(apierr.Issue{Code: "invalid_string", Message: "sendRpcEndpoint must be a valid http(s) URL", Path: []any{"sendRpcEndpoint"}})
		}
		dial := ep.Dial
		if dial == nil {
			dial = func(u string) (*chainclient.Client, error) { return chainclient.New(u) }
		}
		if c, err = dial(u); err != nil {
			var ae *apierr.Error
			if errors.As(err, &ae) {
				return nil, ae
			}
			return nil, apierr.Validation(apierr.Issue{Code: "invalid_string", Message: "sendRpcEndpoint must be a valid http(s) URL", Path: []any{"sendRpcEndpoint"}})
		}
	}
	if c == nil {
		return nil, apierr.New(http.StatusInternalServerError, apierr.CodeConfig, "No ephemeral RPC endpoint is configured for this cluster")
	}
	if token != "" && (ep.TokenAllowed == nil || ep.TokenAllowed(c.URL())) {
		c = c.WithToken(token)
	}
	return c, nil
}

// Send validates req, submits the transaction (preflight commitment
// "confirmed") and, with confirm, waits for confirmation. token is the
// inner bearer token, used only for ephemeral sends. Errors are
// *apierr.Error values of the API's contract.
func (s *Sender) Send(ctx context.Context, ep Endpoints, req *Request, token string) (*Response, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	raw, err := DecodeTransaction(req.TransactionBase64)
	if err != nil {
		return nil, err
	}
	c, err := Target(ep, req, token)
	if err != nil {
		return nil, err
	}
	opts := chainclient.SendOptions{PreflightCommitment: chainclient.Confirmed}
	if req.SkipPreflight != nil {
		opts.SkipPreflight = *req.SkipPreflight
	}
	if req.MaxRetries != nil {
		n := uint(*req.MaxRetries)
		opts.MaxRetries = &n
	}
	sig, err := c.SendTransaction(ctx, raw, opts)
	if err != nil {
		return nil, sendError(req.SendTo, err)
	}
	out := &Response{
		Signature: sig.String(), SendTo: req.SendTo,
		ConfirmationRPCEndpoint: c.URL(), ConfirmationRequiresAuthToken: req.SendTo == Ephemeral,
	}
	if req.Confirm == nil || !*req.Confirm {
		return out, nil
	}
	if err := s.Confirm(ctx, c, sig, uint64(*req.LastValidBlockHeight)); err != nil {
		return nil, err
	}
	out.Confirmed = true
	if req.WaitForOutcome != nil && *req.WaitForOutcome {
		res, err := s.follow(ctx, ep, req, raw, token)
		if err != nil {
			return nil, err
		}
		out.Outcome = res
	}
	return out, nil
}

// follow tracks the confirmed transaction's operation (waitForOutcome).
// A refund or failure is an answer (outcome.status), not an error; a wait
// that outlives MaxOutcomeWait is a 504, a halted node a 503.
func (s *Sender) follow(ctx context.Context, ep Endpoints, req *Request, raw []byte, token string) (*outcome.Result, error) {
	tx, err := txwire.Decode(raw)
	if err != nil {
		return nil, apierr.BadRequest(CodeInvalidTransaction, "transactionBase64 is not a transaction: "+err.Error())
	}
	eph := ep.Ephemeral
	if eph != nil && token != "" {
		eph = eph.WithToken(token)
	}
	ctx, cancel := context.WithTimeout(ctx, MaxOutcomeWait)
	defer cancel()
	ctx, stop := outcome.WatchHealth(ctx, 0, outcome.Node{Layer: Base, Client: ep.Base}, outcome.Node{Layer: Ephemeral, Client: eph})
	defer stop()
	tr := &outcome.Tracker{Base: ep.Base, Ephemeral: eph, Follow: ep.FollowSettlement, PollInterval: s.PollInterval}
	res, err := tr.Track(ctx, outcome.Detect(tx, req.SendTo))
	if err == nil {
		return res, nil
	}
	sig := tx.Signatures[0].String()
	var halted *outcome.HaltedError
	switch {
	case errors.As(err, &halted):
		return nil, apierr.New(http.StatusServiceUnavailable, apierr.CodeRPC, "Confirmed, but the operation cannot settle: "+halted.Error()).
			WithDetails(map[string]any{"signature": sig})
	case ctx.Err() != nil:
		return nil, apierr.New(http.StatusGatewayTimeout, apierr.CodeRPC, "Confirmed, but the operation did not end within the wait; follow it with ferry confirm --watch").
			WithDetails(map[string]any{"signature": sig})
	}
	return nil, apierr.New(http.StatusBadGateway, apierr.CodeRPC, "Confirmed, but following the operation failed").
		WithDetails(map[string]any{"signature": sig, "message": apierr.RedactURLs(err.Error())}).Wrap(err)
}

// Confirm waits until sig is confirmed on c, mapping failures to the API's
// errors: 400 TRANSACTION_FAILED (details.err) when it landed and failed,
// 502 TRANSACTION_EXPIRED when its blockhash expired, 504 when ctx ended,
// 502 RPC_ERROR when the node could not be asked.
func (s *Sender) Confirm(ctx context.Context, c *chainclient.Client, sig solana.Signature, lastValidBlockHeight uint64) error {
	_, err := c.Confirm(ctx, sig, lastValidBlockHeight, chainclient.Confirmed, chainclient.ConfirmOptions{
		PollInterval: s.PollInterval, OnProgress: s.OnProgress,
	})
	if err == nil {
		return nil
	}
	var failed *chainclient.TransactionFailedError
	switch {
	case errors.As(err, &failed):
		return apierr.BadRequest(CodeTransactionFailed, "Transaction failed").
			WithDetails(map[string]any{"err": failed.Err, "signature": sig.String(), "slot": failed.Slot}).Wrap(err)
	case errors.Is(err, chainclient.ErrBlockhashExpired):
		return apierr.New(http.StatusBadGateway, CodeTransactionExpired,
			"Transaction expired before it was confirmed: the block height passed lastValidBlockHeight, so it did not land and is safe to re-sign with a new blockhash").
			WithDetails(map[string]any{"signature": sig.String(), "lastValidBlockHeight": lastValidBlockHeight}).Wrap(err)
	case ctx.Err() != nil:
		return apierr.New(http.StatusGatewayTimeout, apierr.CodeRPC, "Timed out confirming transaction").
			WithDetails(map[string]any{"signature": sig.String()}).Wrap(err)
	}
	return apierr.New(http.StatusBadGateway, apierr.CodeRPC, "Failed to confirm transaction").
		WithDetails(map[string]any{"signature": sig.String(), "message": apierr.RedactURLs(err.Error())}).Wrap(err)
}

// refusedCodes are the JSON-RPC errors with which a node refuses the
// transaction it was sent (the caller's error, 400), as opposed to failing
// to take it (502): Agave's preflight failure, signature verification
// failure, signature count mismatch, unsupported version, and invalid
// params (a transaction it cannot decode).
var refusedCodes = map[int]bool{-32002: true, -32003: true, -32013: true, -32015: true, -32602: true}

// sendError is the hosted API's "Failed to send transaction": 400 when
// the node refused the transaction (refusedCodes; service-interface.md
// §7), else 502. details carry sendTo, the node's message and rpcCode,
// and for a preflight failure (-32002) the simulation's err and logs.
func sendError(sendTo string, err error) *apierr.Error {
	d := map[string]any{"sendTo": sendTo, "message": apierr.RedactURLs(err.Error())}
	status := http.StatusBadGateway
	var re *chainclient.RPCError
	if errors.As(err, &re) {
		d["rpcCode"] = re.Code
		d["message"] = apierr.RedactURLs(re.Message)
		if refusedCodes[re.Code] {
			status = http.StatusBadRequest
		}
		if re.Code == -32002 && len(re.Data) > 0 {
			var sim struct {
				Err  json.RawMessage `json:"err"`
				Logs []string        `json:"logs"`
			}
			if json.Unmarshal(re.Data, &sim) == nil {
				if len(sim.Err) > 0 && string(sim.Err) != "null" {
					d["err"] = sim.Err
				}
				if sim.Logs != nil {
					d["logs"] = sim.Logs
				}
			}
		}
	}
	return apierr.New(status, apierr.CodeRPC, "Failed to send transaction").WithDetails(d).Wrap(err)
}
