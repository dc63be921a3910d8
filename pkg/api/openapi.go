package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/auth"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/schema"
	"github.com/ferry-sh/ferry/pkg/submit"
)

// Title and Version of the API (the hosted API's /doc info).
const (
	Title   = "SPL Private Payments API"
	Version = "0.1.0"
)

// ErrorResponse documents the error envelope (400/401/403/404/405/413/
// 415/429/500/502/503/504).
type ErrorResponse struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody is the inside of ErrorResponse.
type ErrorBody struct {
	Code    string         `json:"code" doc:"Stable machine-readable code, e.g. MINT_NOT_FOUND."`
	Message string         `json:"message" doc:"Human-readable message (URLs redacted)."`
	Details map[string]any `json:"details,omitempty" doc:"Code-specific details."`
}

// ValidationErrorResponse documents the 422 body.
type ValidationErrorResponse struct {
	Error ValidationErrorBody `json:"error"`
}

// ValidationErrorBody is the inside of ValidationErrorResponse.
type ValidationErrorBody struct {
	Code    string            `json:"code" validate:"enum=VALIDATION_ERROR" doc:"VALIDATION_ERROR."`
	Message string            `json:"message" doc:"\"Request validation failed\", or \"Missing required fields: a, b\" when only required fields are missing."`
	Issues  []ValidationIssue `json:"issues" doc:"One entry per problem, shaped like zod issues."`
}

// ValidationIssue is one validation problem.
type ValidationIssue struct {
	Code    string   `json:"code" doc:"invalid_type, too_small, too_big, invalid_enum_value, invalid_string or custom."`
	Message string   `json:"message" doc:"E.g. \"address is required\" or \"Invalid public key\"."`
	Path    []string `json:"path" doc:"Field path (strings and array indexes)."`
}

// componentNames maps Go types to the component names of the hosted API's
// document (payments-api.md §5.16) and ferry's additions.
var componentNames = map[reflect.Type]string{
	reflect.TypeFor[payments.UnsignedTransaction]():              "UnsignedTransactionResponse",
	reflect.TypeFor[payments.Fees]():                             "TransferFees",
	reflect.TypeFor[payments.BalanceRequest]():                   "BalanceRequest",
	reflect.TypeFor[payments.BalanceResponse]():                  "BalanceResponse",
	reflect.TypeFor[payments.MintInitializationRequest]():        "MintInitializationRequest",
	reflect.TypeFor[payments.MintInitializationResponse]():       "MintInitializationResponse",
	reflect.TypeFor[payments.TransferQueueEnsureCrankRequest]():  "TransferQueueEnsureCrankRequest",
	reflect.TypeFor[payments.TransferQueueEnsureCrankResponse](): "TransferQueueEnsureCrankResponse",
	reflect.TypeFor[payments.InitializeMintRequest]():            "InitializeMintRequest",
	reflect.TypeFor[payments.InitializeMintResponse]():           "InitializeMintResponse",
	reflect.TypeFor[payments.UndelegateEphemeralATARequest]():    "UndelegateEphemeralAtaRequest",
	reflect.TypeFor[payments.UndelegateEphemeralATAResponse]():   "UndelegateEphemeralAtaResponse",
	reflect.TypeFor[payments.StealthPoolRequest]():               "StealthPoolRequest",
	reflect.TypeFor[payments.StealthPoolResponse]():              "StealthPoolResponse",
	reflect.TypeFor[payments.StealthPoolStatusRequest]():         "StealthPoolStatusRequest",
	reflect.TypeFor[payments.StealthPoolStatusResponse]():        "StealthPoolStatusResponse",
	reflect.TypeFor[payments.DepositRequest]():                   "DepositRequest",
	reflect.TypeFor[payments.WithdrawRequest]():                  "WithdrawRequest",
	reflect.TypeFor[payments.TransferRequest]():                  "TransferRequest",
	reflect.TypeFor[submit.Request]():                            "SendTransactionRequest",
	reflect.TypeFor[submit.Response]():                           "SendTransactionResponse",
	reflect.TypeFor[auth.ChallengeRequest]():                     "ChallengeRequest",
	reflect.TypeFor[auth.ChallengeResponse]():                    "ChallengeResponse",
	reflect.TypeFor[auth.LoginRequest]():                         "LoginRequest",
	reflect.TypeFor[auth.LoginResponse]():                        "LoginResponse",
	reflect.TypeFor[HealthResponse]():                            "HealthResponse",
	reflect.TypeFor[SwapQuoteRequest]():                          "SwapQuoteQuery",
	reflect.TypeFor[SwapQuoteResponse]():                         "SwapQuoteResponse",
	reflect.TypeFor[SwapRequest]():                               "SwapRequest",
	reflect.TypeFor[SwapResponse]():                              "SwapResponse",
	reflect.TypeFor[PrivateTransferInfo]():                       "PrivateTransferDiagnostic",
	reflect.TypeFor[MCPRequest]():                                "McpRequest",
	reflect.TypeFor[MCPResponse]():                               "McpResponse",
	reflect.TypeFor[ErrorResponse]():                             "ErrorResponse",
	reflect.TypeFor[ValidationErrorResponse]():                   "ValidationErrorResponse",
}

// requiredExtra marks response fields that are always present although
// their Go field is optional in the shared type.
var requiredExtra = map[string][]string{
	"UndelegateEphemeralAtaResponse": {"sendRpcEndpoint"},
	"InitializeMintResponse":         {"validator"},
	"StealthPoolResponse":            {"validator"},
}

// MCPRequest and MCPResponse stand for the JSON-RPC messages of POST /mcp
// in Operation.Request and Response: their schemas are written out
// (mcpRequestSchema, mcpResponseSchema), as JSON-RPC ids and params have no
// Go type of their own.
type (
	MCPRequest  struct{}
	MCPResponse struct{}
)

// literalSchemas are the components whose schema is written out.
var literalSchemas = map[reflect.Type]func() map[string]any{
	reflect.TypeFor[MCPRequest]():  mcpRequestSchema,
	reflect.TypeFor[MCPResponse](): mcpResponseSchema,
}

// tagDescriptions are the document's tags, in order.
var tagDescriptions = [][2]string{
	{"SPL", "Build unsigned SPL token transactions (deposit, transfer, withdraw, mint setup, undelegation, stealth pools), read balances, log in."},
	{"Swap", "Provide quoting and execution for public and private swaps."},
	{"Transaction", "Submit signed transactions to the base layer or the ephemeral rollup, optionally confirming them."},
	{"MCP", "Model Context Protocol endpoint (stateless, JSON responses) exposing the build and balance operations as tools."},
	{"Meta", "Service health."},
}

func componentName(rt reflect.Type) string {
	for rt.Kind() == reflect.Pointer {
		rt = rt.Elem()
	}
	if n, ok := componentNames[rt]; ok {
		return n
	}
	return rt.Name()
}

// docBuilder accumulates components while operations are described.
type docBuilder struct {
	components map[string]any
}

func (b *docBuilder) ref(t *schema.Type) string {
	for rt, name := range componentNames {
		if schema.TypeOf(rt) == t {
			b.component(rt)
			return "#/components/schemas/" + name
		}
	}
	return ""
}

// component adds rt's schema (once) and returns a $ref to it.
func (b *docBuilder) component(rt reflect.Type) map[string]any {
	name := componentName(rt)
	if lit, ok := literalSchemas[rt]; ok {
		b.components[name] = lit()
		return map[string]any{"$ref": "#/components/schemas/" + name}
	}
	if _, ok := b.components[name]; !ok {
		b.components[name] = nil // reserve against recursion
		sch := schema.TypeOf(rt).JSONSchemaWith(b.ref)
		if extra := requiredExtra[name]; len(extra) > 0 {
			req, _ := sch["required"].([]string)
			for _, f := range extra {
				if !slices.Contains(req, f) {
					req = append(req, f)
				}
			}
			sch["required"] = req
		}
		sch["title"] = name
		b.components[name] = sch
	}
	return map[string]any{"$ref": "#/components/schemas/" + name}
}

// buildDoc generates the OpenAPI 3.1 document from the routes, with the
// examples of examples.go.
func buildDoc(routes []*route) ([]byte, error) {
	b := &docBuilder{components: map[string]any{}}
	exs := opExamples()
	paths := map[string]map[string]any{}
	for _, r := range routes {
		if r.hidden {
			continue
		}
		op := r.op
		ex := exs[op.ID]
		o := map[string]any{
			"operationId": op.ID,
			"summary":     op.Summary,
			"description": op.Description,
		}
		if op.Tag != "" {
			o["tags"] = []string{op.Tag}
		}
		errs := append([]ErrorDoc(nil), op.Errors...)
		if op.Request != nil && !op.Query {
			media := map[string]any{"schema": b.component(op.Request)}
			addExamples(media, ex.Request, ex.Requests)
			o["requestBody"] = map[string]any{"required": true, "content": map[string]any{"application/json": media}}
			errs = append(errs, ErrorDoc{400, CodeInvalidJSON, "Malformed JSON in request body"},
				ErrorDoc{413, CodePayloadTooLarge, "Request body exceeds <limit> bytes"},
				ErrorDoc{415, CodeUnsupportedMediaType, "Content-Type must be application/json"})
		}
		if op.Request != nil && op.Query {
			b.component(op.Request)
			o["parameters"] = queryParameters(b, op.Request)
		}
		switch op.Auth {
		case AuthRequired:
			o["security"] = []any{map[string]any{"bearerAuth": []string{}}}
		case AuthOptional:
			o["security"] = []any{map[string]any{"bearerAuth": []string{}}, map[string]any{}}
		}
		errs = append(errs, ErrorDoc{500, apierr.CodeInternal, "Unexpected server error"})
		o["responses"] = responses(b, op, errs, ex)
		o["x-error-codes"] = errs
		m := paths[op.Path]
		if m == nil {
			m = map[string]any{}
			paths[op.Path] = m
		}
		m[strings.ToLower(op.Method)] = o
	}
	tags := make([]any, len(tagDescriptions))
	for i, t := range tagDescriptions {
		tags[i] = map[string]any{"name": t[0], "description": t[1]}
	}
	b.component(reflect.TypeFor[ErrorResponse]())
	b.component(reflect.TypeFor[ValidationErrorResponse]())
	b.refine()
	doc := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":   Title,
			"version": Version,
			"description": "Builds unsigned SPL token transactions for Solana with MagicBlock ephemeral rollups (public and private " +
				"transfers, deposits, withdrawals), submits signed ones, and reads balances. Compatible with payments.magicblock.app; " +
				"served by ferry. Errors are {\"error\":{\"code\",\"message\",\"details\"}}; validation errors (422) carry issues.",
		},
		"tags":  tags,
		"paths": paths,
		"components": map[string]any{
			"schemas": b.components,
			"securitySchemes": map[string]any{"bearerAuth": map[string]any{
				"type": "http", "scheme": "bearer",
				"description": "Token from POST /v1/spl/login (\"<pubkey>.<token>\"), sent as Authorization: Bearer <token>.",
			}},
		},
	}
	return json.MarshalIndent(doc, "", "  ")
}

// addExamples puts one example, or several named ones, on a media type.
func addExamples(media map[string]any, one any, named map[string]namedExample) {
	switch {
	case named != nil:
		exs := map[string]any{}
		for name, e := range named {
			exs[name] = map[string]any{"summary": e.Summary, "value": e.Value}
		}
		media["examples"] = exs
	case one != nil:
		media["example"] = one
	}
}

// refine adds what the Go types do not say: the hosted document's
// component and property examples, the quote's schema inside a swap
// request, the nullable fields of a quote, and the swap request's
// free-form prioritizationFeeLamports.
func (b *docBuilder) refine() {
	comp := func(name string) map[string]any {
		c, _ := b.components[name].(map[string]any)
		return c
	}
	for name, ex := range componentExamples() {
		if c := comp(name); c != nil {
			c["example"] = ex
		}
	}
	for name, props := range propertyExamples {
		c := comp(name)
		if c == nil {
			continue
		}
		for prop, ex := range props {
			if p, ok := c["properties"].(map[string]any)[prop].(map[string]any); ok {
				p["example"] = ex
			}
		}
	}
	if c := comp("SwapQuoteResponse"); c != nil {
		props := c["properties"].(map[string]any)
		for _, f := range []string{"platformFee", "instructionVersion"} {
			if p, ok := props[f].(map[string]any); ok {
				p["type"] = []any{p["type"], "null"}
				if enum, ok := p["enum"].([]string); ok {
					p["enum"] = append(append([]any{}, stringsToAny(enum)...), nil)
				}
			}
		}
	}
	if c := comp("SwapRequest"); c != nil {
		b.component(reflect.TypeFor[SwapQuoteResponse]())
		props := c["properties"].(map[string]any)
		props["quoteResponse"] = map[string]any{"$ref": "#/components/schemas/SwapQuoteResponse",
			"description": "The quote from /v1/swap/quote, unchanged."}
		props["prioritizationFeeLamports"] = map[string]any{
			"description": "Priority fee: a lamport amount, or {priorityLevelWithMaxLamports {priorityLevel, maxLamports, global}, jitoTipLamports, jitoTipLamportsWithPayer}.",
			"oneOf":       []any{map[string]any{"type": "integer", "minimum": 0}, map[string]any{"type": "object"}},
		}
	}
}

func stringsToAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func queryParameters(b *docBuilder, rt reflect.Type) []any {
	t := schema.TypeOf(rt)
	props := t.JSONSchemaWith(b.ref)["properties"].(map[string]any)
	var out []any
	for _, f := range t.Fields {
		p := map[string]any{"name": f.JSON, "in": "query", "required": f.Required, "schema": props[f.JSON]}
		if f.Doc != "" {
			p["description"] = f.Doc
		}
		if f.Example != "" {
			p["example"] = f.Example
		}
		out = append(out, p)
	}
	return out
}

// validationExample is the documented 422 body.
var validationExample = map[string]any{"error": map[string]any{"code": apierr.CodeValidation, "message": "Missing required fields: address, mint",
	"issues": []any{map[string]any{"code": "invalid_type", "message": "address is required", "path": []any{"address"}},
		map[string]any{"code": "invalid_type", "message": "mint is required", "path": []any{"mint"}}}}}

func responses(b *docBuilder, op Operation, errs []ErrorDoc, ex opExample) map[string]any {
	ok := map[string]any{"description": "OK"}
	ct := op.ResponseContentType
	if ct == "" {
		ct = "application/json"
	}
	var sch any = map[string]any{"type": "object", "description": "Passed through from the upstream.", "additionalProperties": true}
	if op.Response != nil {
		sch = b.component(op.Response)
	}
	media := map[string]any{"schema": sch}
	addExamples(media, ex.Response, ex.Responses)
	ok["content"] = map[string]any{ct: media}
	out := map[string]any{"200": ok}
	byStatus := map[int][]ErrorDoc{}
	for _, e := range errs {
		byStatus[e.Status] = append(byStatus[e.Status], e)
	}
	statuses := make([]int, 0, len(byStatus))
	for st := range byStatus {
		statuses = append(statuses, st)
	}
	sort.Ints(statuses)
	for _, st := range statuses {
		docs := byStatus[st]
		var codes []string
		for _, e := range docs {
			codes = append(codes, e.Code)
		}
		codes = slices.Compact(slices.Sorted(slices.Values(codes)))
		first := docs[0]
		body := reflect.TypeFor[ErrorResponse]()
		example := any(map[string]any{"error": map[string]any{"code": first.Code, "message": first.Message}})
		eb, custom := op.ErrorBodies[st]
		switch {
		case custom:
			body, example = eb.Type, eb.Example
		case st == http.StatusUnprocessableEntity:
			body, example = reflect.TypeFor[ValidationErrorResponse](), validationExample
		}
		out[strconv.Itoa(st)] = map[string]any{
			"description": fmt.Sprintf("%s: %s", http.StatusText(st), strings.Join(codes, ", ")),
			"content":     map[string]any{"application/json": map[string]any{"schema": b.component(body), "example": example}},
		}
	}
	return out
}

// Doc returns the OpenAPI document served at /doc. It is generated on
// first use after the routes last changed: mounting the explorer and the
// MCP endpoint adds routes one by one, and generating the document after
// each took a quarter of `serve`'s start-up CPU.
func (s *Server) Doc() []byte {
	if d := s.doc.Load(); d != nil {
		return *d
	}
	s.docMu.Lock()
	defer s.docMu.Unlock()
	// Holding mu keeps add from changing the routes (and clearing doc)
	// between the generation and the store.
	s.mu.RLock()
	defer s.mu.RUnlock()
	if d := s.doc.Load(); d != nil {
		return *d
	}
	doc, err := buildDoc(s.routes)
	if err != nil {
		// The document is generated from static types: a failure is a
		// programming error caught by the tests.
		panic(fmt.Sprintf("api: generate OpenAPI document: %v", err))
	}
	s.doc.Store(&doc)
	return doc
}

func (s *Server) serveDoc(w *responseWriter, r *http.Request) {
	doc := s.Doc()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(doc)))
	w.WriteHeader(http.StatusOK)
	w.Write(doc)
}
