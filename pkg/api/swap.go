package api

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ferry-sh/ferry/pkg/apierr"
)

// SwapConfig configures the swap routes. Swaps need MagicBlock's Metis
// (Jupiter-compatible) upstream, which ferry cannot provide offline:
// without UpstreamURL both routes answer 503 SWAP_UNAVAILABLE.
type SwapConfig struct {
	// UpstreamURL is the Metis swap API (the hosted API's
	// METIS_SWAP_API_URL); it may embed a private token, so it is never
	// logged or returned.
	UpstreamURL string
	// HTTPClient reaches the upstream (default: a new client).
	HTTPClient *http.Client
	// Timeout bounds one upstream call (default 15 s).
	Timeout time.Duration
}

// Swap error codes.
const (
	CodeSwapUnavailable        = "SWAP_UNAVAILABLE"
	CodeSwapUpstreamError      = "SWAP_UPSTREAM_ERROR"
	CodePrivateSwapUnsupported = "PRIVATE_SWAP_UNSUPPORTED"
)

// SwapQuoteRequest is the query of GET /v1/swap/quote (validated, then
// forwarded unchanged).
type SwapQuoteRequest struct {
	InputMint                        string `json:"inputMint" validate:"required,pubkey" doc:"Mint sold."`
	OutputMint                       string `json:"outputMint" validate:"required,pubkey" doc:"Mint bought."`
	Amount                           string `json:"amount" validate:"required,digits" doc:"Amount in base units (digits)."`
	SlippageBps                      *int64 `json:"slippageBps,omitempty" validate:"min=0" doc:"Slippage tolerance in basis points."`
	SwapMode                         string `json:"swapMode,omitempty" validate:"enum=ExactIn|ExactOut" doc:"ExactIn or ExactOut."`
	Dexes                            string `json:"dexes,omitempty" doc:"Comma-separated DEXes to use."`
	ExcludeDexes                     string `json:"excludeDexes,omitempty" doc:"Comma-separated DEXes to avoid."`
	RestrictIntermediateTokens       *bool  `json:"restrictIntermediateTokens,omitempty" doc:"Only route through liquid intermediate tokens."`
	OnlyDirectRoutes                 *bool  `json:"onlyDirectRoutes,omitempty" doc:"Single-hop routes only."`
	AsLegacyTransaction              *bool  `json:"asLegacyTransaction,omitempty" doc:"Quote for a legacy transaction."`
	PlatformFeeBps                   *int64 `json:"platformFeeBps,omitempty" validate:"min=0" doc:"Platform fee in basis points."`
	MaxAccounts                      *int64 `json:"maxAccounts,omitempty" validate:"min=0" doc:"Account budget of the route."`
	InstructionVersion               string `json:"instructionVersion,omitempty" validate:"enum=V1|V2" doc:"V1 or V2."`
	DynamicSlippage                  *bool  `json:"dynamicSlippage,omitempty" doc:"Let the upstream pick the slippage."`
	ForJitoBundle                    *bool  `json:"forJitoBundle,omitempty" doc:"Quote for a Jito bundle."`
	SupportDynamicIntermediateTokens *bool  `json:"supportDynamicIntermediateTokens,omitempty" doc:"Allow dynamic intermediate tokens."`
}

// SwapRequest is the body of POST /v1/swap/swap: a Jupiter/Metis swap
// body (unknown keys are forwarded too) plus MagicBlock's private-swap
// fields.
type SwapRequest struct {
	UserPublicKey                 string         `json:"userPublicKey" validate:"required,pubkey" doc:"Wallet that swaps."`
	QuoteResponse                 map[string]any `json:"quoteResponse" validate:"required" doc:"The quote from /v1/swap/quote, unchanged."`
	Payer                         string         `json:"payer,omitempty" validate:"pubkey" doc:"Fee payer (default userPublicKey)."`
	WrapAndUnwrapSol              *bool          `json:"wrapAndUnwrapSol,omitempty" doc:"Wrap and unwrap SOL automatically."`
	UseSharedAccounts             *bool          `json:"useSharedAccounts,omitempty" doc:"Use the router's shared accounts."`
	FeeAccount                    string         `json:"feeAccount,omitempty" validate:"pubkey" doc:"Token account collecting the platform fee."`
	TrackingAccount               string         `json:"trackingAccount,omitempty" validate:"pubkey" doc:"Account to tag the transaction with."`
	AsLegacyTransaction           *bool          `json:"asLegacyTransaction,omitempty" doc:"Build a legacy transaction."`
	DestinationTokenAccount       string         `json:"destinationTokenAccount,omitempty" validate:"pubkey" doc:"Token account receiving the output."`
	NativeDestinationAccount      string         `json:"nativeDestinationAccount,omitempty" validate:"pubkey" doc:"Account receiving native SOL output."`
	DynamicComputeUnitLimit       *bool          `json:"dynamicComputeUnitLimit,omitempty" doc:"Simulate to set the compute unit limit."`
	SkipUserAccountsRPCCalls      *bool          `json:"skipUserAccountsRpcCalls,omitempty" doc:"Skip the upstream's account lookups."`
	DynamicSlippage               *bool          `json:"dynamicSlippage,omitempty" doc:"Let the upstream pick the slippage."`
	ComputeUnitPriceMicroLamports *int64         `json:"computeUnitPriceMicroLamports,omitempty" validate:"min=0" doc:"Priority fee per compute unit."`
	BlockhashSlotsToExpiry        *int64         `json:"blockhashSlotsToExpiry,omitempty" validate:"min=0" doc:"Blockhash lifetime in slots."`
	Visibility                    string         `json:"visibility,omitempty" validate:"enum=public|private" default:"public" doc:"public: forwarded as is; private: not supported by ferry."`
	Destination                   string         `json:"destination,omitempty" validate:"pubkey" doc:"Private swaps: final recipient."`
	MinDelayMs                    string         `json:"minDelayMs,omitempty" validate:"digits" doc:"Private swaps: minimum payout delay (ms)."`
	MaxDelayMs                    string         `json:"maxDelayMs,omitempty" validate:"digits" doc:"Private swaps: maximum payout delay (ms)."`
	Split                         *int64         `json:"split,omitempty" validate:"min=1,max=14" doc:"Private swaps: payout pieces."`
	ClientRefID                   string         `json:"clientRefId,omitempty" validate:"digits" doc:"Private swaps: reference carried with the payout."`
	Validator                     string         `json:"validator,omitempty" validate:"pubkey" doc:"Private swaps: rollup validator."`
}

// UpstreamResponse is an upstream answer passed through unchanged.
type UpstreamResponse struct {
	Status      int
	ContentType string
	Body        []byte
}

type swapProxy struct {
	base    string
	hc      *http.Client
	timeout time.Duration
}

func newSwapProxy(cfg SwapConfig) *swapProxy {
	p := &swapProxy{base: strings.TrimRight(strings.TrimSpace(cfg.UpstreamURL), "/"), hc: cfg.HTTPClient, timeout: cfg.Timeout}
	if p.hc == nil {
		p.hc = &http.Client{}
	}
	if p.timeout <= 0 {
		p.timeout = 15 * time.Second
	}
	return p
}

// swapUnavailable is the hosted API's answer without a swap upstream (500
// CONFIG_ERROR): ferry has no swap engine of its own, offline or not.
func swapUnavailable() *apierr.Error {
	return apierr.New(http.StatusInternalServerError, apierr.CodeConfig, "Missing worker environment variable `METIS_SWAP_API_URL`").
		WithDetails(map[string]any{
			"issues": []map[string]any{{"path": []string{"METIS_SWAP_API_URL"}, "message": "Required"}},
			"hint": "Swaps are routed by a Metis (Jupiter-compatible) swap API, which ferry does not run: set METIS_SWAP_API_URL " +
				"to one (e.g. https://<endpoint>.rpcpool.com/<token>/metis) before ferry serve to enable /v1/swap/*.",
		})
}

// SwapQuote is GET /v1/swap/quote: the query (validated as req) is
// forwarded unchanged to the upstream's /quote, whose answer is passed
// through.
func (s *Service) SwapQuote(ctx context.Context, req *SwapQuoteRequest, rawQuery string) (*UpstreamResponse, error) {
	if s.swap.base == "" {
		return nil, swapUnavailable()
	}
	u := s.swap.base + "/quote"
	if rawQuery != "" {
		u += "?" + rawQuery
	}
	return s.swap.call(ctx, http.MethodGet, u, nil)
}

// Swap is POST /v1/swap/swap: a public swap body is forwarded verbatim to
// the upstream's /swap. Private swaps (which rewrite the upstream
// transaction) are not supported: 501 PRIVATE_SWAP_UNSUPPORTED.
func (s *Service) Swap(ctx context.Context, req *SwapRequest, rawBody []byte) (*UpstreamResponse, error) {
	if s.swap.base == "" {
		return nil, swapUnavailable()
	}
	if req.Visibility == "private" {
		return nil, apierr.New(http.StatusNotImplemented, CodePrivateSwapUnsupported, "visibility=private swaps are not supported by ferry; use visibility=public")
	}
	return s.swap.call(ctx, http.MethodPost, s.swap.base+"/swap", rawBody)
}

func (p *swapProxy) call(ctx context.Context, method, u string, body []byte) (*UpstreamResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, apierr.New(http.StatusInternalServerError, apierr.CodeConfig, "METIS_SWAP_API_URL is not a valid URL")
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := p.hc.Do(req)
	if err != nil {
		var ue *url.Error
		msg := "Swap upstream is unreachable"
		if ctx.Err() != nil || (errors.As(err, &ue) && ue.Timeout()) {
			msg = "Swap upstream timed out"
		}
		return nil, apierr.New(http.StatusBadGateway, CodeSwapUpstreamError, msg).Wrap(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, apierr.New(http.StatusBadGateway, CodeSwapUpstreamError, "Failed to read the swap upstream's answer").Wrap(err)
	}
	return &UpstreamResponse{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Body: data}, nil
}
