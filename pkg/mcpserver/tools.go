package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ferry-sh/ferry/pkg/api"
	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/auth"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/schema"
	"github.com/ferry-sh/ferry/pkg/submit"
)

// Tool names.
const (
	ToolDeposit           = "spl.deposit"
	ToolWithdraw          = "spl.withdraw"
	ToolTransfer          = "spl.transfer"
	ToolGetBalance        = "spl.getBalance"
	ToolGetPrivateBalance = "spl.getPrivateBalance"
	ToolInitializeMint    = "spl.initializeMint"
	ToolInspect           = "transaction.inspect"
	ToolSend              = "transaction.send"
	ToolRoutes            = "routes.list"
	ToolSignatureStatuses = "chain.getSignatureStatuses"
	ToolGetTransaction    = "chain.getTransaction"
	ToolGetSlot           = "chain.getSlot"
)

// Result texts of the tools that have a fixed one (the first five are the
// hosted API's).
const (
	TextDeposit           = "Built an unsigned SPL deposit transaction."
	TextWithdraw          = "Built an unsigned SPL withdraw transaction."
	TextTransfer          = "Built an unsigned SPL transfer transaction."
	TextGetBalance        = "Fetched the base SPL balance."
	TextGetPrivateBalance = "Fetched the private SPL balance."
	TextInitializeMint    = "Built an unsigned SPL initialize-mint transaction."
)

// MetaHTTPStatus is the _meta key of an error result that holds the HTTP
// status the REST API would answer with.
const MetaHTTPStatus = "ferry.sh/httpStatus"

// tool is one MCP tool: its description for tools/list and its
// implementation.
type tool struct {
	name, title, description string
	input                    map[string]any
	output                   map[string]any
	annotations              *mcp.ToolAnnotations
	// run decodes the raw arguments and performs the call; it returns the
	// structured result (encoded as the REST API encodes its responses) and
	// the result text, or an error (an *apierr.Error for every expected
	// failure).
	run func(ctx context.Context, args json.RawMessage, tok auth.Bearer) (out any, text string, err error)
}

func (t *tool) mcpTool() *mcp.Tool {
	mt := &mcp.Tool{Name: t.name, Title: t.title, Description: t.description, InputSchema: t.input, Annotations: t.annotations}
	if t.output != nil {
		mt.OutputSchema = t.output
	}
	return mt
}

// typed builds a tool whose input is Req, decoded exactly as the REST API
// decodes a request body of that type, and whose structured result is Resp
// (its schema is the output schema). text gives the result text.
func typed[Req, Resp any](name, title, description string, ann *mcp.ToolAnnotations, text func(*Req, *Resp) string,
	fn func(ctx context.Context, req *Req, tok auth.Bearer) (*Resp, error)) *tool {
	return typedOutput(name, title, description, ann, schema.Of[Resp]().JSONSchema(), text, fn)
}

// typedOutput is typed with an explicit output schema, for result types
// with fields pkg/schema cannot describe (arbitrary JSON).
func typedOutput[Req, Resp any](name, title, description string, ann *mcp.ToolAnnotations, output map[string]any,
	text func(*Req, *Resp) string, fn func(ctx context.Context, req *Req, tok auth.Bearer) (*Resp, error)) *tool {
	return &tool{
		name: name, title: title, description: description, annotations: ann,
		input:  schema.Of[Req]().JSONSchema(),
		output: output,
		run: func(ctx context.Context, args json.RawMessage, tok auth.Bearer) (any, string, error) {
			req := new(Req)
			if err := decodeArguments(args, req); err != nil {
				return nil, "", err
			}
			out, err := fn(ctx, req, tok)
			if err != nil {
				return nil, "", err
			}
			return out, text(req, out), nil
		},
	}
}

// fixed is a text function for a constant text.
func fixed[Req, Resp any](s string) func(*Req, *Resp) string {
	return func(*Req, *Resp) string { return s }
}

// decodeArguments is the REST API's body decoding (api.decodeBody) applied
// to the tool arguments: absent arguments read as {}, and every problem is
// the same 422 VALIDATION_ERROR (or 400 INVALID_JSON) the REST route gives.
func decodeArguments(args json.RawMessage, dst any) error {
	err := schema.Decode(args, dst)
	if errors.Is(err, schema.ErrMalformedJSON) {
		return apierr.BadRequest(api.CodeInvalidJSON, "Malformed JSON in request body").
			WithDetails(map[string]any{"message": strings.TrimPrefix(err.Error(), schema.ErrMalformedJSON.Error()+": ")})
	}
	return err
}

var (
	yes = true
	no  = false
)

// Annotations: builds and reads change nothing; a send cannot be undone
// but re-sending the same signed transaction has no further effect.
var (
	readOnlyOpen   = &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &yes}
	readOnlyClosed = &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &no}
	sends          = &mcp.ToolAnnotations{DestructiveHint: &yes, IdempotentHint: true, OpenWorldHint: &yes}
)

// buildTools lists the tools: the hosted API's five, then ferry's, then
// the development tools of a local chain (Config.Dev). The GET
// documents and ToolNames keep this order; the SDK sorts tools/list by
// name.
func (h *Handler) buildTools() []*tool {
	svc := h.svc
	return append([]*tool{
		typed(ToolDeposit, "Deposit SPL",
			"Build an unsigned base-chain deposit transaction using delegateSpl(...): it moves amount of mint from owner's "+
				"associated token account into owner's ephemeral-rollup balance (creating the ephemeral ATA, its permission and "+
				"delegation as needed). owner signs and pays; send the signed transaction to sendTo (base).",
			readOnlyOpen, fixed[payments.DepositRequest, payments.UnsignedTransaction](TextDeposit),
			func(ctx context.Context, req *payments.DepositRequest, _ auth.Bearer) (*payments.UnsignedTransaction, error) {
				return svc.Deposit(ctx, req)
			}),
		typed(ToolWithdraw, "Withdraw SPL",
			"Build an unsigned base-chain withdraw transaction using withdrawSpl(...): it moves amount of mint from owner's "+
				"ephemeral-rollup balance back to owner's associated token account on base. owner signs and pays; send it to sendTo (base).",
			readOnlyOpen, fixed[payments.WithdrawRequest, payments.UnsignedTransaction](TextWithdraw),
			func(ctx context.Context, req *payments.WithdrawRequest, _ auth.Bearer) (*payments.UnsignedTransaction, error) {
				return svc.Withdraw(ctx, req)
			}),
		typed(ToolTransfer, "Transfer SPL",
			"Build an unsigned SPL transfer transaction using transferSpl(...). visibility public moves tokens in the clear "+
				"(base to base, or rollup to rollup); private hides the recipient, with optional delays and split payouts. "+
				"from signs; send the signed transaction to sendTo (base or ephemeral, then sendRpcEndpoint).",
			readOnlyOpen, fixed[payments.TransferRequest, payments.UnsignedTransaction](TextTransfer),
			svc.Transfer),
		typed(ToolGetBalance, "Get Base Balance",
			"Read the base-chain SPL balance of address's associated token account for mint (base units, as a decimal string).",
			readOnlyOpen, fixed[payments.BalanceRequest, payments.BalanceResponse](TextGetBalance),
			func(ctx context.Context, req *payments.BalanceRequest, _ auth.Bearer) (*payments.BalanceResponse, error) {
				return svc.Balance(ctx, req)
			}),
		typed(ToolGetPrivateBalance, "Get Private Balance",
			"Read the private balance when the eATA is delegated to the ephemeral RPC: address's token balance for mint as the "+
				"ephemeral rollup sees it (\"0\" when not delegated). Needs the login token of address as the Authorization header "+
				"of the MCP request (Bearer <token> from /v1/spl/login).",
			readOnlyOpen, fixed[payments.BalanceRequest, payments.BalanceResponse](TextGetPrivateBalance),
			svc.PrivateBalance),
		typed(ToolInitializeMint, "Initialize Mint",
			"Build the unsigned one-time setup of a mint for a validator (transfer queue, rent PDA, vault and their delegation), "+
				"needed before private transfers of that mint. payer signs and pays; send it to sendTo (base).",
			readOnlyOpen, fixed[payments.InitializeMintRequest, payments.InitializeMintResponse](TextInitializeMint),
			func(ctx context.Context, req *payments.InitializeMintRequest, _ auth.Bearer) (*payments.InitializeMintResponse, error) {
				return svc.InitializeMint(ctx, req)
			}),
		typed(ToolInspect, "Inspect Transaction",
			"Explain a transaction before anyone signs it: the programs it calls, each instruction with its amounts and "+
				"parameters, the accounts it touches and in which role, who must sign (and who already did), and its size. "+
				"Accepts an unsigned or signed transaction as base64 (a build's transactionBase64), base58, or a build response's JSON.",
			readOnlyClosed, inspectText, h.inspect),
		typed(ToolSend, "Send Transaction",
			"Submit a transaction that the caller has already signed (transactionBase64 from a build, signed offline) to sendTo, "+
				"as POST /v1/transaction/send does; with confirm true (and the build's recentBlockhash and lastValidBlockHeight) "+
				"wait until it is confirmed, and with waitForOutcome also until the operation ended (deposit credited, every "+
				"payout paid, withdrawal back on base, or refunded). This tool never signs: it has no keys.",
			sends, sendText, svc.Send),
		typed(ToolRoutes, "List Routes",
			"List the ephemeral-rollup nodes the cluster's delegation router knows: validator identity, RPC URL, fees, "+
				"block time and country.",
			readOnlyOpen, routesText, h.routes),
		h.signatureStatusesTool(),
		typed(ToolGetTransaction, "Get Transaction",
			"Fetch a landed transaction by signature from the base layer or the ephemeral rollup (the RPC's getTransaction "+
				"result: slot, blockTime, meta with fee, err, logs and balances, and the transaction).",
			readOnlyOpen, transactionText, h.getTransaction),
		typed(ToolGetSlot, "Get Slot",
			"Read the current slot of the base layer or the ephemeral rollup at a commitment.",
			readOnlyOpen, slotText, h.getSlot),
	}, h.devTools()...)
}

func sendText(req *submit.Request, out *submit.Response) string {
	if out.Outcome != nil {
		return fmt.Sprintf("Sent and confirmed the transaction on %s: %s. Outcome: %s: %s.", out.SendTo, out.Signature, out.Outcome.Status, out.Outcome.Message)
	}
	if out.Confirmed {
		return fmt.Sprintf("Sent and confirmed the transaction on %s: %s.", out.SendTo, out.Signature)
	}
	return fmt.Sprintf("Sent the transaction to %s: %s.", out.SendTo, out.Signature)
}

// toolHandler adapts a tool to the SDK: every failure becomes an isError
// result (see the package documentation); a handler error would be a
// JSON-RPC error, which is kept for protocol problems.
func (h *Handler) toolHandler(t *tool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var tok auth.Bearer
		if req.Extra != nil && req.Extra.Header != nil {
			tok = auth.ParseHeader(req.Extra.Header.Get("Authorization"))
		}
		var args json.RawMessage
		if req.Params != nil {
			args = req.Params.Arguments
		}
		out, text, err := t.run(ctx, args, tok)
		if err != nil {
			return h.errorResult(t.name, err), nil
		}
		body, err := encodeJSON(out)
		if err != nil {
			return h.errorResult(t.name, apierr.Internal(fmt.Errorf("encode %s result: %w", t.name, err))), nil
		}
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: text}},
			StructuredContent: json.RawMessage(body),
		}, nil
	}
}

// errorResult renders err as the REST API would (api.Server.writeError):
// anything that is not an *apierr.Error is a 500 INTERNAL_ERROR, and URLs
// in messages are redacted.
func (h *Handler) errorResult(name string, err error) *mcp.CallToolResult {
	ae := apierr.As(err)
	if ae.Status == 0 {
		ae = apierr.Internal(err)
	}
	if ae.Status >= http.StatusInternalServerError {
		cause := err
		if ae.Err != nil {
			cause = ae.Err
		}
		h.log.Error("MCP tool failed", "tool", name, "status", ae.Status, "code", ae.Code,
			"err", apierr.RedactURLs(cause.Error()))
	}
	out := *ae
	out.Message = apierr.RedactURLs(out.Message)
	body, encErr := encodeJSON(apierr.Envelope{Error: &out})
	if encErr != nil { // details that do not encode: keep code and message
		out.Details = nil
		body, _ = encodeJSON(apierr.Envelope{Error: &out})
	}
	return &mcp.CallToolResult{
		Meta:    mcp.Meta{MetaHTTPStatus: out.Status},
		IsError: true,
		Content: []mcp.Content{
			&mcp.TextContent{Text: out.Code + ": " + out.Message},
			&mcp.TextContent{Text: string(body)},
		},
	}
}
