package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/api"
	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/auth"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/inputlimit"
	"github.com/ferry-sh/ferry/pkg/inspect"
	"github.com/ferry-sh/ferry/pkg/submit"
)

// Error codes of ferry's own tools (beyond the REST API's).
const (
	// CodeNoRouter (400): routes.list on a cluster without a delegation
	// router (a custom RPC URL).
	CodeNoRouter = "ROUTER_NOT_CONFIGURED"
)

// ---- transaction.inspect ----

// InspectRequest is the input of transaction.inspect.
type InspectRequest struct {
	Transaction string `json:"transaction" validate:"required,minlen=1" doc:"Wire transaction, unsigned or signed, legacy or v0: base64 (a build's transactionBase64), base58, or a build response's JSON."`
}

func (h *Handler) inspect(_ context.Context, req *InspectRequest, _ auth.Bearer) (*inspect.Description, error) {
	tx, err := inspect.ParseTransaction(req.Transaction)
	if err != nil {
		return nil, apierr.BadRequest(submit.CodeInvalidTransaction, err.Error())
	}
	return inspect.New().Describe(tx), nil
}

func inspectText(_ *InspectRequest, d *inspect.Description) string {
	signed := 0
	for _, s := range d.Signatures {
		if s.Signed {
			signed++
		}
	}
	text := fmt.Sprintf("Decoded a %s transaction of %d bytes with %d instruction(s); %d of %d required signature(s) present.",
		d.Version, d.Size, len(d.Instructions), signed, len(d.Signatures))
	if len(d.Warnings) > 0 {
		text += fmt.Sprintf(" %d warning(s).", len(d.Warnings))
	}
	return text
}

// ---- routes.list ----

// RoutesRequest is the input of routes.list.
type RoutesRequest struct {
	Cluster string `json:"cluster,omitempty" doc:"mainnet, devnet, mainnet-private, devnet-private, local, or a custom http(s) base RPC URL (which has no router)."`
}

// RoutesResponse is the result of routes.list.
type RoutesResponse struct {
	Cluster string  `json:"cluster" doc:"The cluster whose router answered."`
	Routes  []Route `json:"routes" doc:"The ephemeral-rollup nodes, closest first."`
}

// Route is one ephemeral-rollup node (service-interface.md §2.5).
type Route struct {
	Identity    string `json:"identity" doc:"Validator identity of the node (the validator argument of builds)."`
	FQDN        string `json:"fqdn" doc:"RPC URL of the node."`
	BaseFee     int64  `json:"baseFee" doc:"Base fee in lamports."`
	BlockTimeMs int64  `json:"blockTimeMs" doc:"Block time in milliseconds."`
	CountryCode string `json:"countryCode" doc:"Country code of the node."`
}

func (h *Handler) routes(ctx context.Context, req *RoutesRequest, _ auth.Bearer) (*RoutesResponse, error) {
	cl, err := h.clusters.Resolve(req.Cluster)
	if err != nil {
		return nil, err
	}
	if cl.Router == nil {
		return nil, apierr.BadRequest(CodeNoRouter, fmt.Sprintf("No delegation router configured for cluster=%s", cl.Endpoints.Name))
	}
	rs, err := cl.Router.GetRoutes(ctx)
	if err != nil {
		return nil, rpcError("Failed to fetch routes", err, nil)
	}
	out := &RoutesResponse{Cluster: cl.Endpoints.Name, Routes: make([]Route, len(rs))}
	for i, r := range rs {
		out.Routes[i] = Route{Identity: r.Identity.String(), FQDN: r.FQDN, BaseFee: int64(r.BaseFee),
			BlockTimeMs: int64(r.BlockTimeMs), CountryCode: r.CountryCode}
	}
	return out, nil
}

func routesText(_ *RoutesRequest, out *RoutesResponse) string {
	return fmt.Sprintf("Listed %d ephemeral rollup route(s) of cluster=%s.", len(out.Routes), out.Cluster)
}

// ---- chain reads ----

// Layers a chain tool can read.
const (
	LayerBase      = "base"
	LayerEphemeral = "ephemeral"
)

// client returns the RPC client of layer on cluster. On TEE clusters,
// rollup reads carry the inner bearer token of the MCP request when it had
// one and the rollup accepted it (api.Service.VerifyToken), as the
// payments service's rollup reads do; no other token is ever forwarded.
func (h *Handler) client(ctx context.Context, cl *api.Cluster, layer string, tok auth.Bearer) (*chainclient.Client, error) {
	if layer != LayerEphemeral {
		return cl.Base.Client, nil
	}
	if !cl.Endpoints.TEE || !tok.OK() {
		return cl.Ephemeral.Client, nil
	}
	tok, err := h.svc.VerifyToken(ctx, cl, tok)
	if err != nil {
		return nil, err
	}
	if tok.Upstream {
		return cl.Ephemeral.Client.WithToken(tok.Token), nil
	}
	return cl.Ephemeral.Client, nil
}

// rpcError is the REST API's 502 RPC_ERROR for a failed upstream read,
// with the (redacted) cause in details.
func rpcError(op string, err error, details map[string]any) *apierr.Error {
	if details == nil {
		details = map[string]any{}
	}
	details["message"] = apierr.RedactURLs(err.Error())
	return (&apierr.Error{Status: http.StatusBadGateway, Code: apierr.CodeRPC, Message: op, Details: details}).Wrap(err)
}

// parseSignature checks a base58 transaction signature; a bad one is the
// validation issue "Invalid signature" at path.
func parseSignature(s string, path ...any) (solana.Signature, *apierr.Issue) {
	b, err := inputlimit.DecodeBase58(s, inputlimit.MaxSignatureBase58) // length first: decoding is quadratic
	if err != nil || len(b) != 64 {
		return solana.Signature{}, &apierr.Issue{Code: "custom", Message: "Invalid signature", Path: path}
	}
	return solana.SignatureFromBytes(b), nil
}

// SlotRequest is the input of chain.getSlot.
type SlotRequest struct {
	Cluster    string `json:"cluster,omitempty" doc:"mainnet, devnet, mainnet-private, devnet-private, local, or a custom http(s) base RPC URL."`
	Layer      string `json:"layer,omitempty" validate:"enum=base|ephemeral" default:"base" doc:"Read the base layer or the cluster's ephemeral rollup."`
	Commitment string `json:"commitment,omitempty" validate:"enum=processed|confirmed|finalized" default:"confirmed" doc:"Commitment of the slot."`
}

// SlotResponse is the result of chain.getSlot.
type SlotResponse struct {
	Slot       uint64 `json:"slot" doc:"Current slot at the commitment."`
	Layer      string `json:"layer" doc:"base or ephemeral."`
	Commitment string `json:"commitment" doc:"Commitment read."`
}

func (h *Handler) getSlot(ctx context.Context, req *SlotRequest, tok auth.Bearer) (*SlotResponse, error) {
	layer, commitment := orDefault(req.Layer, LayerBase), orDefault(req.Commitment, string(chainclient.Confirmed))
	cl, err := h.clusters.Resolve(req.Cluster)
	if err != nil {
		return nil, err
	}
	c, err := h.client(ctx, cl, layer, tok)
	if err != nil {
		return nil, err
	}
	slot, err := c.GetSlot(ctx, chainclient.Commitment(commitment))
	if err != nil {
		return nil, rpcError("Failed to fetch slot", err, map[string]any{"layer": layer})
	}
	return &SlotResponse{Slot: slot, Layer: layer, Commitment: commitment}, nil
}

func slotText(_ *SlotRequest, out *SlotResponse) string {
	return fmt.Sprintf("Current %s slot on %s: %d.", out.Commitment, out.Layer, out.Slot)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// SignatureStatusesRequest is the input of chain.getSignatureStatuses.
type SignatureStatusesRequest struct {
	Signatures               []string `json:"signatures" validate:"required,minitems=1,maxitems=256" doc:"Transaction signatures (base58), at most 256."`
	SearchTransactionHistory *bool    `json:"searchTransactionHistory,omitempty" default:"false" doc:"Also search the ledger beyond the recent status cache."`
	Cluster                  string   `json:"cluster,omitempty" doc:"mainnet, devnet, mainnet-private, devnet-private, local, or a custom http(s) base RPC URL."`
	Layer                    string   `json:"layer,omitempty" validate:"enum=base|ephemeral" default:"base" doc:"Read the base layer or the cluster's ephemeral rollup (where sendTo ephemeral transactions land)."`
}

// SignatureStatusesResponse is the result of chain.getSignatureStatuses.
type SignatureStatusesResponse struct {
	Layer    string            `json:"layer"`
	Statuses []SignatureStatus `json:"statuses"`
}

// SignatureStatus is the status of one signature, in request order.
type SignatureStatus struct {
	Signature string `json:"signature"`
	// Found is false when the node does not know the signature (not landed
	// yet, expired, or beyond its history); the other fields are then
	// absent.
	Found              bool            `json:"found"`
	Slot               *uint64         `json:"slot,omitempty"`
	Confirmations      *uint64         `json:"confirmations,omitempty"`
	ConfirmationStatus string          `json:"confirmationStatus,omitempty"`
	Err                json.RawMessage `json:"err,omitempty"`
}

// signatureStatusesOutput is the output schema of chain.getSignatureStatuses,
// written by hand because err is any JSON value (the RPC's TransactionError).
var signatureStatusesOutput = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"layer": map[string]any{"type": "string", "description": "base or ephemeral."},
		"statuses": map[string]any{
			"type":        "array",
			"description": "One entry per requested signature, in order.",
			"items": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"signature":          map[string]any{"type": "string", "description": "The signature."},
					"found":              map[string]any{"type": "boolean", "description": "The node knows the signature; the other fields are absent when it does not."},
					"slot":               map[string]any{"type": "integer", "description": "Slot the transaction landed in."},
					"confirmations":      map[string]any{"type": "integer", "description": "Confirmations; absent once the transaction is finalized."},
					"confirmationStatus": map[string]any{"type": "string", "enum": []string{"processed", "confirmed", "finalized"}},
					"err":                map[string]any{"description": "The TransactionError when the transaction failed; absent when it succeeded."},
				},
				"required": []string{"signature", "found"},
			},
		},
	},
	"required": []string{"layer", "statuses"},
}

func (h *Handler) signatureStatusesTool() *tool {
	return typedOutput(ToolSignatureStatuses, "Get Signature Statuses",
		"Look up the confirmation status of transaction signatures on the base layer or the ephemeral rollup: whether each "+
			"landed, in which slot, at which commitment, and its error if it failed.",
		readOnlyOpen, signatureStatusesOutput, statusesText, h.signatureStatuses)
}

func (h *Handler) signatureStatuses(ctx context.Context, req *SignatureStatusesRequest, tok auth.Bearer) (*SignatureStatusesResponse, error) {
	sigs := make([]solana.Signature, len(req.Signatures))
	var issues []apierr.Issue
	for i, s := range req.Signatures {
		sig, is := parseSignature(s, "signatures", i)
		if is != nil {
			issues = append(issues, *is)
		}
		sigs[i] = sig
	}
	if issues != nil {
		return nil, apierr.Validation(issues...)
	}
	layer := orDefault(req.Layer, LayerBase)
	cl, err := h.clusters.Resolve(req.Cluster)
	if err != nil {
		return nil, err
	}
	c, err := h.client(ctx, cl, layer, tok)
	if err != nil {
		return nil, err
	}
	sts, err := c.GetSignatureStatuses(ctx, sigs, req.SearchTransactionHistory != nil && *req.SearchTransactionHistory)
	if err != nil {
		return nil, rpcError("Failed to fetch signature statuses", err, map[string]any{"layer": layer})
	}
	out := &SignatureStatusesResponse{Layer: layer, Statuses: make([]SignatureStatus, len(sigs))}
	for i, st := range sts {
		s := SignatureStatus{Signature: req.Signatures[i]}
		if st != nil {
			slot := st.Slot
			s.Found, s.Slot, s.Confirmations, s.ConfirmationStatus = true, &slot, st.Confirmations, string(st.ConfirmationStatus)
			if len(st.Err) > 0 && !bytes.Equal(bytes.TrimSpace(st.Err), []byte("null")) {
				s.Err = st.Err
			}
		}
		out.Statuses[i] = s
	}
	return out, nil
}

func statusesText(_ *SignatureStatusesRequest, out *SignatureStatusesResponse) string {
	found, failed := 0, 0
	for _, s := range out.Statuses {
		if s.Found {
			found++
		}
		if s.Err != nil {
			failed++
		}
	}
	return fmt.Sprintf("Fetched %d signature status(es) on %s: %d found, %d failed.", len(out.Statuses), out.Layer, found, failed)
}

// TransactionRequest is the input of chain.getTransaction.
type TransactionRequest struct {
	Signature  string `json:"signature" validate:"required,minlen=1" doc:"Transaction signature (base58)."`
	Cluster    string `json:"cluster,omitempty" doc:"mainnet, devnet, mainnet-private, devnet-private, local, or a custom http(s) base RPC URL."`
	Layer      string `json:"layer,omitempty" validate:"enum=base|ephemeral" default:"base" doc:"Read the base layer or the cluster's ephemeral rollup."`
	Commitment string `json:"commitment,omitempty" validate:"enum=confirmed|finalized" default:"confirmed" doc:"Commitment of the read."`
	Encoding   string `json:"encoding,omitempty" validate:"enum=json|jsonParsed|base64" default:"json" doc:"Encoding of the transaction in the result."`
}

// TransactionResponse is the result of chain.getTransaction.
type TransactionResponse struct {
	Signature   string         `json:"signature" doc:"The signature asked for."`
	Layer       string         `json:"layer" doc:"base or ephemeral."`
	Found       bool           `json:"found" doc:"The node has the transaction at the commitment."`
	Transaction map[string]any `json:"transaction,omitempty" doc:"The RPC's getTransaction result (slot, blockTime, meta, transaction, version), when found."`
}

func (h *Handler) getTransaction(ctx context.Context, req *TransactionRequest, tok auth.Bearer) (*TransactionResponse, error) {
	sig, is := parseSignature(req.Signature, "signature")
	if is != nil {
		return nil, apierr.Validation(*is)
	}
	layer := orDefault(req.Layer, LayerBase)
	cl, err := h.clusters.Resolve(req.Cluster)
	if err != nil {
		return nil, err
	}
	c, err := h.client(ctx, cl, layer, tok)
	if err != nil {
		return nil, err
	}
	raw, err := c.GetTransaction(ctx, sig, chainclient.TransactionOptions{
		Commitment: chainclient.Commitment(orDefault(req.Commitment, string(chainclient.Confirmed))),
		Encoding:   orDefault(req.Encoding, "json"),
	})
	if err != nil {
		return nil, rpcError("Failed to fetch transaction", err, map[string]any{"layer": layer})
	}
	out := &TransactionResponse{Signature: req.Signature, Layer: layer}
	if raw == nil {
		return out, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // keep lamports and slots exact
	if err := dec.Decode(&out.Transaction); err != nil || out.Transaction == nil {
		if err == nil {
			err = errors.New("result is not an object")
		}
		return nil, rpcError("Failed to fetch transaction", fmt.Errorf("decode getTransaction result: %w", err), map[string]any{"layer": layer})
	}
	out.Found = true
	return out, nil
}

func transactionText(_ *TransactionRequest, out *TransactionResponse) string {
	if !out.Found {
		return fmt.Sprintf("Transaction %s was not found on %s.", out.Signature, out.Layer)
	}
	return fmt.Sprintf("Fetched transaction %s from %s.", out.Signature, out.Layer)
}
