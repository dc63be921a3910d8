package api

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/schema"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// SwapConfig configures the swap routes. Swaps need a Metis
// (Jupiter-compatible) swap API, which ferry does not run: without
// UpstreamURL both routes answer the hosted API's 500 CONFIG_ERROR
// "Missing worker environment variable `METIS_SWAP_API_URL`". The upstream
// is the operator's configuration, not a request's choice, so it is not
// subject to the outbound allow-list.
type SwapConfig struct {
	// UpstreamURL is the Metis swap API (the hosted API's
	// METIS_SWAP_API_URL); it may embed a private token, so it is never
	// logged or returned.
	UpstreamURL string
	// HTTPClient reaches the upstream (default: a client that follows
	// redirects only to the same origin).
	HTTPClient *http.Client
	// Timeout bounds one upstream call (default DefaultSwapTimeout).
	Timeout time.Duration
	// PrivateTimeout bounds a whole private swap, re-quotes included
	// (default DefaultPrivateSwapTimeout).
	PrivateTimeout time.Duration
	// Cluster is the cluster whose base RPC loads the lookup tables of the
	// upstream's transactions (default "mainnet": the hosted API's
	// BASE_RPC_URL; swaps run on mainnet).
	Cluster string
	// MaxResponseBytes bounds an upstream answer (default
	// DefaultMaxSwapResponseBytes); a longer one is a 502.
	MaxResponseBytes int64
	// LookupTableTTL is how long a loaded lookup table is reused (default
	// DefaultLookupTableTTL, the hosted API's 3 hours).
	LookupTableTTL time.Duration
	// MaxLookupTables bounds the remembered lookup tables (default
	// DefaultMaxLookupTables); beyond it they are forgotten.
	MaxLookupTables int
}

// Defaults of SwapConfig.
const (
	DefaultSwapTimeout          = 15 * time.Second
	DefaultPrivateSwapTimeout   = 60 * time.Second
	DefaultMaxSwapResponseBytes = 8 << 20
	DefaultLookupTableTTL       = 3 * time.Hour
	DefaultMaxLookupTables      = 1024
)

// Private swap rules of the hosted API (payments-api.md §5.13).
const (
	// PrivateSwapMaxAccounts is the maxAccounts of the first re-quote when
	// the rebuilt transaction does not fit; later ones go down to 1.
	PrivateSwapMaxAccounts = 39
	// PrivateSwapMinAccounts is the last maxAccounts tried.
	PrivateSwapMinAccounts = 1
)

// Swap error codes.
const (
	CodeSwapUpstreamError = "SWAP_UPSTREAM_ERROR"
	// CodeInvalidRequest is the 400 of a private swap request that breaks
	// a rule (payments-api.md §5.13).
	CodeInvalidRequest = "INVALID_REQUEST"
)

// SwapQuoteRequest is the query of GET /v1/swap/quote (validated, then
// forwarded unchanged).
type SwapQuoteRequest struct {
	InputMint                        string `json:"inputMint" validate:"required,pubkey" doc:"Input token mint address." example:"So11111111111111111111111111111111111111112"`
	OutputMint                       string `json:"outputMint" validate:"required,pubkey" doc:"Output token mint address." example:"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"`
	Amount                           string `json:"amount" validate:"required,digits" doc:"Raw amount to swap before decimals are applied." example:"1000000"`
	SlippageBps                      *int64 `json:"slippageBps,omitempty" validate:"min=0" doc:"Slippage threshold in basis points."`
	SwapMode                         string `json:"swapMode,omitempty" validate:"enum=ExactIn|ExactOut" doc:"ExactIn for a fixed input amount, ExactOut for a fixed output amount."`
	Dexes                            string `json:"dexes,omitempty" doc:"Comma-separated DEX labels to include."`
	ExcludeDexes                     string `json:"excludeDexes,omitempty" doc:"Comma-separated DEX labels to exclude."`
	RestrictIntermediateTokens       *bool  `json:"restrictIntermediateTokens,omitempty" doc:"Restrict intermediate tokens to a more stable set."`
	OnlyDirectRoutes                 *bool  `json:"onlyDirectRoutes,omitempty" doc:"Limit routing to a single hop."`
	AsLegacyTransaction              *bool  `json:"asLegacyTransaction,omitempty" doc:"Request a legacy transaction-compatible route."`
	PlatformFeeBps                   *int64 `json:"platformFeeBps,omitempty" validate:"min=0" doc:"Platform fee in basis points."`
	MaxAccounts                      *int64 `json:"maxAccounts,omitempty" validate:"min=0" doc:"Approximate maximum account budget of the route."`
	InstructionVersion               string `json:"instructionVersion,omitempty" validate:"enum=V1|V2" doc:"Instruction format to target: V1 or V2."`
	DynamicSlippage                  *bool  `json:"dynamicSlippage,omitempty" doc:"Kept for compatibility with the upstream's quote parameters."`
	ForJitoBundle                    *bool  `json:"forJitoBundle,omitempty" doc:"Exclude routes that are incompatible with Jito bundles."`
	SupportDynamicIntermediateTokens *bool  `json:"supportDynamicIntermediateTokens,omitempty" doc:"Allow dynamic selection of intermediate tokens."`
}

// SwapQuoteResponse is a Jupiter v6-style quote: the answer of
// GET /v1/swap/quote and the quoteResponse of a swap. Fields not listed
// here are passed on unchanged.
type SwapQuoteResponse struct {
	InputMint            string           `json:"inputMint" validate:"required" doc:"Input token mint."`
	InAmount             string           `json:"inAmount" validate:"required,digits" doc:"Input amount in base units."`
	OutputMint           string           `json:"outputMint" validate:"required" doc:"Output token mint."`
	OutAmount            string           `json:"outAmount" validate:"required,digits" doc:"Output amount in base units."`
	OtherAmountThreshold string           `json:"otherAmountThreshold" validate:"required,digits" doc:"The worst amount accepted after slippage."`
	SwapMode             string           `json:"swapMode" validate:"required,enum=ExactIn|ExactOut" doc:"ExactIn or ExactOut."`
	SlippageBps          int64            `json:"slippageBps" validate:"required,min=0" doc:"Slippage tolerance in basis points."`
	PriceImpactPct       string           `json:"priceImpactPct" validate:"required" doc:"Price impact, in percent."`
	RoutePlan            []map[string]any `json:"routePlan" validate:"required" doc:"The route's hops (swapInfo, percent, bps)."`
	InstructionVersion   string           `json:"instructionVersion,omitempty" validate:"enum=V1|V2" doc:"V1 or V2 (or null)."`
	PlatformFee          map[string]any   `json:"platformFee,omitempty" doc:"{amount, feeBps} (or null)."`
	ContextSlot          *int64           `json:"contextSlot,omitempty" validate:"min=0" doc:"Slot of the quote."`
	TimeTaken            *float64         `json:"timeTaken,omitempty" doc:"Seconds the upstream took."`
}

// SwapRequest is the body of POST /v1/swap/swap: a Jupiter/Metis swap
// body (unknown keys, e.g. prioritizationFeeLamports, are forwarded too)
// plus MagicBlock's private-swap fields.
type SwapRequest struct {
	UserPublicKey                 string         `json:"userPublicKey" validate:"required,pubkey" doc:"Public key of the wallet that will sign the swap transaction."`
	QuoteResponse                 map[string]any `json:"quoteResponse" validate:"required" doc:"The quote from /v1/swap/quote (a SwapQuoteResponse), unchanged."`
	Payer                         string         `json:"payer,omitempty" validate:"pubkey" doc:"Fee payer for transaction fees and rent (default userPublicKey). For a private swap it also owns the stash and pays the scheduled transfer's rent."`
	WrapAndUnwrapSol              *bool          `json:"wrapAndUnwrapSol,omitempty" doc:"Automatically wrap and unwrap native SOL when needed."`
	UseSharedAccounts             *bool          `json:"useSharedAccounts,omitempty" doc:"Allow shared accounts for intermediate routing state."`
	FeeAccount                    string         `json:"feeAccount,omitempty" validate:"pubkey" doc:"Initialized token account collecting the platform fee."`
	TrackingAccount               string         `json:"trackingAccount,omitempty" validate:"pubkey" doc:"Public key to tag the transaction with."`
	AsLegacyTransaction           *bool          `json:"asLegacyTransaction,omitempty" doc:"Build a legacy transaction instead of a versioned one (not with visibility private)."`
	DestinationTokenAccount       string         `json:"destinationTokenAccount,omitempty" validate:"pubkey" doc:"Destination token account of the output mint (not with visibility private)."`
	NativeDestinationAccount      string         `json:"nativeDestinationAccount,omitempty" validate:"pubkey" doc:"Destination of native SOL output (not with visibility private)."`
	DynamicComputeUnitLimit       *bool          `json:"dynamicComputeUnitLimit,omitempty" doc:"Estimate compute usage and set the compute unit limit."`
	SkipUserAccountsRPCCalls      *bool          `json:"skipUserAccountsRpcCalls,omitempty" doc:"Skip the upstream's checks of the user's accounts."`
	DynamicSlippage               *bool          `json:"dynamicSlippage,omitempty" doc:"Let the upstream overwrite the slippage."`
	ComputeUnitPriceMicroLamports *int64         `json:"computeUnitPriceMicroLamports,omitempty" validate:"min=0" doc:"Exact compute unit price in micro-lamports."`
	BlockhashSlotsToExpiry        *int64         `json:"blockhashSlotsToExpiry,omitempty" validate:"min=0" doc:"Transaction expiry window in slots."`
	PositiveSlippage              map[string]any `json:"positiveSlippage,omitempty" doc:"Positive slippage collection: {bps, feeAccount}."`
	Visibility                    string         `json:"visibility,omitempty" validate:"enum=public|private" default:"public" doc:"public (default) passes the swap through the upstream as is; private sends the output to a program-owned stash ATA and appends a scheduled private transfer to destination."`
	Destination                   string         `json:"destination,omitempty" doc:"Final private-transfer recipient (a wallet). Required when visibility=private."`
	MinDelayMs                    string         `json:"minDelayMs,omitempty" validate:"digits" doc:"Earliest (ms) the queued transfer may settle. Required when visibility=private."`
	MaxDelayMs                    string         `json:"maxDelayMs,omitempty" validate:"digits" doc:"Latest (ms) the queued transfer may settle, at most 600000. Required when visibility=private."`
	Split                         *int64         `json:"split,omitempty" validate:"min=1,safe" doc:"Number of queue entries to split the transfer across, 1 to 14. Required when visibility=private."`
	ClientRefID                   string         `json:"clientRefId,omitempty" validate:"digits" doc:"u64 client correlation id attached to each queued split."`
	Validator                     string         `json:"validator,omitempty" doc:"Validator of the transfer queue (default MAS1Dt9qreoRMQ14YQuhg8UTZMMzDdKhmkZMECCzk57)."`
}

// SwapResponse documents the answer of POST /v1/swap/swap: the upstream's
// JSON, passed through; a private swap replaces swapTransaction and adds
// privateTransfer.
type SwapResponse struct {
	SwapTransaction           string               `json:"swapTransaction" doc:"The unsigned transaction, base64 (a v0 transaction for a private swap)."`
	LastValidBlockHeight      *int64               `json:"lastValidBlockHeight,omitempty" validate:"min=0" doc:"Last block height of the transaction's blockhash."`
	PrioritizationFeeLamports *int64               `json:"prioritizationFeeLamports,omitempty" validate:"min=0" doc:"Priority fee the upstream set."`
	PrivateTransfer           *PrivateTransferInfo `json:"privateTransfer,omitempty" doc:"Present when visibility=private: the appended schedule_private_transfer."`
}

// PrivateTransferInfo describes the scheduled transfer of a private swap.
type PrivateTransferInfo struct {
	StashATA      string `json:"stashAta" doc:"Token account the swap's output goes to (the stash's ATA; the swap's destinationTokenAccount)."`
	HydraCrankPDA string `json:"hydraCrankPda" doc:"The Hydra crank that fires the private transfer."`
	ShuttleID     uint32 `json:"shuttleId" doc:"Shuttle id of the scheduled transfer (random)."`
}

// UpstreamResponse is an upstream answer passed through unchanged.
type UpstreamResponse struct {
	Status      int
	ContentType string
	Body        []byte
}

type swapProxy struct {
	base           string
	hc             *http.Client
	timeout        time.Duration
	privateTimeout time.Duration
	cluster        string
	maxBody        int64
	tables         tableCache
}

func newSwapProxy(cfg SwapConfig, now func() time.Time) *swapProxy {
	p := &swapProxy{base: strings.TrimRight(strings.TrimSpace(cfg.UpstreamURL), "/"), hc: cfg.HTTPClient, timeout: cfg.Timeout,
		privateTimeout: cfg.PrivateTimeout, cluster: cfg.Cluster, maxBody: cfg.MaxResponseBytes,
		tables: tableCache{ttl: cfg.LookupTableTTL, max: cfg.MaxLookupTables, now: now, m: map[solana.PublicKey]cachedTable{}}}
	if p.hc == nil {
		p.hc = &http.Client{CheckRedirect: chainclient.SameOriginRedirects}
	}
	if p.timeout <= 0 {
		p.timeout = DefaultSwapTimeout
	}
	if p.privateTimeout <= 0 {
		p.privateTimeout = DefaultPrivateSwapTimeout
	}
	if p.cluster == "" {
		p.cluster = "mainnet"
	}
	if p.maxBody <= 0 {
		p.maxBody = DefaultMaxSwapResponseBytes
	}
	if p.tables.ttl <= 0 {
		p.tables.ttl = DefaultLookupTableTTL
	}
	if p.tables.max <= 0 {
		p.tables.max = DefaultMaxLookupTables
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

// Swap is POST /v1/swap/swap. A public swap body is forwarded verbatim to
// the upstream's /swap and its answer passed through. A private one is
// built as the hosted API builds it (privateSwap).
func (s *Service) Swap(ctx context.Context, req *SwapRequest, rawBody []byte) (*UpstreamResponse, error) {
	if _, err := checkQuote(req.QuoteResponse); err != nil {
		return nil, err // a schema rule: before any configuration, as on the hosted API
	}
	if s.swap.base == "" {
		return nil, swapUnavailable()
	}
	if req.Visibility != "private" {
		return s.swap.call(ctx, http.MethodPost, s.swap.base+"/swap", rawBody)
	}
	return s.privateSwap(ctx, req, rawBody)
}

// checkQuote validates a quoteResponse as a SwapQuoteResponse; issues are
// reported under quoteResponse (422).
func checkQuote(q map[string]any) (*SwapQuoteResponse, error) {
	var out SwapQuoteResponse
	err := schema.DecodeValue(q, &out)
	if err == nil {
		return &out, nil
	}
	ae := apierr.As(err)
	if ae.Code != apierr.CodeValidation {
		return nil, err
	}
	issues := make([]apierr.Issue, len(ae.Issues))
	for i, is := range ae.Issues {
		is.Path = append([]any{"quoteResponse"}, is.Path...)
		if is.Code == "invalid_type" && strings.HasSuffix(is.Message, " is required") {
			is.Message = "quoteResponse." + is.Message
		}
		issues[i] = is
	}
	return nil, apierr.Validation(issues...)
}

// call performs one upstream request, whose answer is read whole (at most
// maxBody bytes).
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
		msg := "Failed to reach the swap upstream"
		if ctx.Err() != nil || (errors.As(err, &ue) && ue.Timeout()) {
			msg = "Swap upstream timed out"
		}
		return nil, apierr.New(http.StatusBadGateway, CodeSwapUpstreamError, msg).Wrap(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, p.maxBody+1))
	if err != nil {
		return nil, apierr.New(http.StatusBadGateway, CodeSwapUpstreamError, "Failed to read the swap upstream's answer").Wrap(err)
	}
	if int64(len(data)) > p.maxBody {
		return nil, apierr.New(http.StatusBadGateway, CodeSwapUpstreamError, fmt.Sprintf("Swap upstream answer exceeds %d bytes", p.maxBody))
	}
	return &UpstreamResponse{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Body: data}, nil
}

func invalidRequest(msg string) *apierr.Error { return apierr.BadRequest(CodeInvalidRequest, msg) }

func swapUpstreamError(msg string, cause error) *apierr.Error {
	e := apierr.New(http.StatusBadGateway, CodeSwapUpstreamError, msg)
	if cause != nil {
		e = e.WithDetails(map[string]any{"message": apierr.RedactURLs(cause.Error())}).Wrap(cause)
	}
	return e
}

// privateSwap builds a private swap as the hosted API does
// (payments-api.md §5.13): check the private fields; ask the upstream for
// the swap with its output sent to the stash ATA (v0); rebuild the
// transaction with the stash ATA's creation, a raised compute limit and
// ix 29 (payments.PrivateSwap); when it does not fit in 1232 bytes,
// re-quote with maxAccounts 39, 38, … 1 until one does. The answer is the
// upstream's JSON with swapTransaction replaced and privateTransfer added.
func (s *Service) privateSwap(ctx context.Context, req *SwapRequest, rawBody []byte) (*UpstreamResponse, error) {
	if req.Destination == "" || req.MinDelayMs == "" || req.MaxDelayMs == "" || req.Split == nil {
		return nil, invalidRequest("destination, minDelayMs, maxDelayMs, and split are required when visibility=private")
	}
	quote, _ := checkQuote(req.QuoteResponse) // Swap checked it
	user := mustKeyOf(req.UserPublicKey)
	payer := user
	if req.Payer != "" {
		payer = mustKeyOf(req.Payer)
	}
	mint, err1 := solana.PublicKeyFromBase58(quote.OutputMint)
	dest, err2 := solana.PublicKeyFromBase58(req.Destination)
	validator, err3 := espl.ValidatorAsia, error(nil)
	if req.Validator != "" {
		validator, err3 = solana.PublicKeyFromBase58(req.Validator)
	}
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, invalidRequest("Invalid public key").WithDetails(map[string]any{"message": err.Error()})
	}
	switch {
	case req.DestinationTokenAccount != "":
		return nil, invalidRequest("destinationTokenAccount is not supported when visibility=private")
	case req.AsLegacyTransaction != nil && *req.AsLegacyTransaction:
		return nil, invalidRequest("asLegacyTransaction is not supported when visibility=private")
	case req.NativeDestinationAccount != "":
		return nil, invalidRequest("nativeDestinationAccount is not supported when visibility=private")
	}
	minDelay, maxDelay := bigDigits(req.MinDelayMs), bigDigits(req.MaxDelayMs)
	switch {
	case maxDelay.Cmp(minDelay) < 0:
		return nil, invalidRequest("maxDelayMs must be >= minDelayMs")
	case maxDelay.Cmp(big.NewInt(payments.MaxDelayMs)) > 0:
		return nil, invalidRequest("maxDelayMs must be less than or equal to 600000")
	case *req.Split > payments.MaxSwapSplit:
		return nil, invalidRequest("split must be an integer between 1 and 14 when visibility=private")
	}
	var clientRef *uint64
	if req.ClientRefID != "" {
		v, ok := schema.ParseU64(req.ClientRefID)
		if !ok {
			return nil, invalidRequest("clientRefId must be a u64")
		}
		clientRef = &v
	}
	if _, err := s.planner.Cache.SealKey(validator); err != nil {
		return nil, invalidRequest("validator is not a validator identity: private transfers are sealed to an ed25519 public key")
	}
	cl, err := s.clusters.Resolve(s.swap.cluster)
	if err != nil {
		return nil, err
	}
	var id [4]byte
	if _, err := io.ReadFull(s.planner.RandReader(), id[:]); err != nil {
		return nil, apierr.Internal(fmt.Errorf("draw a shuttle id: %w", err))
	}
	ps := &payments.PrivateSwap{SchedulePrivateTransferArgs: payments.SchedulePrivateTransferArgs{
		User: payer, Mint: mint, ShuttleID: binary.LittleEndian.Uint32(id[:]), Destination: dest,
		MinDelayMs: minDelay.Uint64(), MaxDelayMs: maxDelay.Uint64(), Split: uint32(*req.Split), ClientRefID: clientRef,
		Validator: validator, Rand: s.planner.RandReader(), Cache: s.planner.Cache,
	}}
	_, stashATA, crank := ps.Stash()

	var fields map[string]json.RawMessage
	if err := json.Unmarshal(rawBody, &fields); err != nil {
		return nil, apierr.BadRequest(CodeInvalidJSON, "Malformed JSON in request body")
	}
	for _, k := range []string{"visibility", "destination", "minDelayMs", "maxDelayMs", "split", "clientRefId", "validator"} {
		delete(fields, k)
	}
	fields["destinationTokenAccount"], _ = json.Marshal(stashATA.String())
	fields["asLegacyTransaction"] = json.RawMessage("false")

	ctx, cancel := context.WithTimeout(ctx, s.swap.privateTimeout)
	defer cancel()
	att := &swapAttempt{s: s, cl: cl, fields: fields, swap: ps}
	upstream, rebuilt, err := att.try(ctx, fields["quoteResponse"])
	if err != nil {
		return nil, err
	}
	if upstream != nil && rebuilt == nil && !att.tooLarge {
		return upstream, nil // the upstream refused the swap: its answer
	}
	for n := PrivateSwapMaxAccounts; rebuilt == nil && n >= PrivateSwapMinAccounts; n-- {
		q, err := att.requote(ctx, quote, n)
		if err != nil {
			return nil, err
		}
		if q == nil {
			continue
		}
		if upstream, rebuilt, err = att.try(ctx, q); err != nil {
			return nil, err
		}
	}
	if rebuilt == nil {
		return nil, apierr.New(http.StatusBadGateway, CodeSwapUpstreamError,
			fmt.Sprintf("Failed to fit private swap transaction within %d bytes", txwire.MaxWireSize)).
			WithDetails(map[string]any{"startingMaxAccounts": PrivateSwapMaxAccounts})
	}
	var answer map[string]json.RawMessage
	json.Unmarshal(upstream.Body, &answer) // try parsed it
	answer["swapTransaction"], _ = json.Marshal(base64.StdEncoding.EncodeToString(rebuilt))
	answer["privateTransfer"], _ = json.Marshal(PrivateTransferInfo{StashATA: stashATA.String(), HydraCrankPDA: crank.String(), ShuttleID: ps.ShuttleID})
	body, err := json.Marshal(answer)
	if err != nil {
		return nil, apierr.Internal(fmt.Errorf("encode private swap: %w", err))
	}
	return &UpstreamResponse{Status: http.StatusOK, ContentType: "application/json", Body: body}, nil
}

// swapAttempt asks the upstream for one swap of a private swap and
// rebuilds it.
type swapAttempt struct {
	s        *Service
	cl       *Cluster
	fields   map[string]json.RawMessage
	swap     *payments.PrivateSwap
	tooLarge bool // the last attempt's rebuilt transaction did not fit
}

// try posts the swap with quote. It returns the upstream's answer and the
// rebuilt transaction; no transaction (and no error) when the upstream
// refused (a non-2xx answer, returned) or the rebuilt transaction was too
// large (tooLarge).
func (a *swapAttempt) try(ctx context.Context, quote json.RawMessage) (*UpstreamResponse, []byte, error) {
	a.fields["quoteResponse"] = quote
	body, err := json.Marshal(a.fields)
	if err != nil {
		return nil, nil, apierr.Internal(fmt.Errorf("encode swap request: %w", err))
	}
	up, err := a.s.swap.call(ctx, http.MethodPost, a.s.swap.base+"/swap", body)
	if err != nil {
		return nil, nil, err
	}
	a.tooLarge = false
	if up.Status < 200 || up.Status > 299 {
		return up, nil, nil
	}
	b64, err := parseSwapAnswer(up.Body)
	if err != nil {
		return nil, nil, err
	}
	tx, err := decodeSwapTransaction(b64)
	if err != nil {
		return nil, nil, err
	}
	tables, err := a.s.swap.tables.load(ctx, a.cl, tx.Message.AddressTableLookups)
	if err != nil {
		return nil, nil, err
	}
	rebuilt, err := a.swap.Rebuild(tx, tables)
	switch {
	case errors.Is(err, payments.ErrSwapTooLarge):
		a.tooLarge = true
		return up, nil, nil
	case errors.Is(err, txwire.ErrDecompile):
		return nil, nil, swapUpstreamError("Failed to decompile upstream swap transaction", err)
	case err != nil:
		return nil, nil, apierr.Internal(fmt.Errorf("rebuild private swap: %w", err))
	}
	return up, rebuilt, nil
}

// ErrSwapAnswer wraps the failures of parseSwapAnswer.
var ErrSwapAnswer = errors.New("invalid swap upstream answer")

// parseSwapAnswer returns the swapTransaction of the upstream's /swap
// answer: 502 SWAP_UPSTREAM_ERROR when the answer is not JSON or has no
// non-empty swapTransaction string.
func parseSwapAnswer(body []byte) (string, error) {
	var answer map[string]json.RawMessage
	if err := json.Unmarshal(body, &answer); err != nil {
		var probe any
		if json.Unmarshal(body, &probe) == nil {
			// JSON, but not an object: no swapTransaction in it.
			return "", swapUpstreamError("Upstream swap response missing swapTransaction", nil)
		}
		return "", swapUpstreamError("Invalid JSON in upstream swap response", fmt.Errorf("%w: %v", ErrSwapAnswer, err))
	}
	var tx string
	if raw, ok := answer["swapTransaction"]; !ok || json.Unmarshal(raw, &tx) != nil || tx == "" {
		return "", swapUpstreamError("Upstream swap response missing swapTransaction", nil)
	}
	return tx, nil
}

// decodeSwapTransaction decodes the upstream's base64 transaction (legacy
// or v0).
func decodeSwapTransaction(b64 string) (*txwire.Transaction, error) {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		if raw, err = base64.RawStdEncoding.DecodeString(b64); err != nil {
			return nil, swapUpstreamError("Invalid upstream swap transaction encoding", fmt.Errorf("%w: %v", ErrSwapAnswer, err))
		}
	}
	tx, err := txwire.Decode(raw)
	if err != nil {
		return nil, swapUpstreamError("Invalid upstream swap transaction", err)
	}
	return tx, nil
}

// requote asks the upstream for the quote again with maxAccounts, built
// from the original quote as the hosted API builds it: nil (no error)
// when the upstream has none.
func (a *swapAttempt) requote(ctx context.Context, q *SwapQuoteResponse, maxAccounts int) (json.RawMessage, error) {
	v := url.Values{}
	v.Set("inputMint", q.InputMint)
	v.Set("outputMint", q.OutputMint)
	amount := q.InAmount
	if q.SwapMode == "ExactOut" {
		amount = q.OutAmount
	}
	v.Set("amount", amount)
	v.Set("slippageBps", strconv.FormatInt(q.SlippageBps, 10))
	v.Set("swapMode", q.SwapMode)
	v.Set("maxAccounts", strconv.Itoa(maxAccounts))
	if q.InstructionVersion != "" {
		v.Set("instructionVersion", q.InstructionVersion)
	}
	if bps, ok := q.PlatformFee["feeBps"]; ok {
		v.Set("platformFeeBps", fmt.Sprint(bps))
	}
	up, err := a.s.swap.call(ctx, http.MethodGet, a.s.swap.base+"/quote?"+v.Encode(), nil)
	if err != nil {
		return nil, err
	}
	if up.Status < 200 || up.Status > 299 {
		return nil, nil
	}
	var parsed any
	if err := json.Unmarshal(up.Body, &parsed); err != nil {
		return nil, swapUpstreamError("Invalid JSON in upstream quote response", err)
	}
	obj, ok := parsed.(map[string]any)
	if !ok {
		return nil, swapUpstreamError("Invalid upstream quote response", nil)
	}
	if _, err := checkQuote(obj); err != nil {
		return nil, swapUpstreamError("Invalid upstream quote response", nil)
	}
	return up.Body, nil
}

// bigDigits parses a schema-checked digit string.
func bigDigits(s string) *big.Int {
	n, _ := new(big.Int).SetString(s, 10)
	return n
}

func mustKeyOf(s string) solana.PublicKey {
	k, err := solana.PublicKeyFromBase58(s)
	if err != nil {
		panic("api: unvalidated public key " + s) // the schema checked it
	}
	return k
}

// tableCache remembers the address lookup tables private swaps load, per
// table address, for ttl (the hosted API caches them 3 hours): a table
// only grows, and a stale one only fails a rebuild.
type tableCache struct {
	ttl time.Duration
	max int
	now func() time.Time

	mu sync.Mutex
	m  map[solana.PublicKey]cachedTable
}

type cachedTable struct {
	addrs []solana.PublicKey
	until time.Time
}

// load returns the tables of lookups, read from cl's base RPC
// ("confirmed") unless remembered. A table that does not exist is left
// out (the rebuild then fails to decompile); one that cannot be read is a
// 502.
func (c *tableCache) load(ctx context.Context, cl *Cluster, lookups []txwire.AddressTableLookup) ([]txwire.LookupTable, error) {
	var out []txwire.LookupTable
	seen := map[solana.PublicKey]bool{}
	for _, l := range lookups {
		if seen[l.AccountKey] {
			continue
		}
		seen[l.AccountKey] = true
		now := c.now()
		c.mu.Lock()
		e, ok := c.m[l.AccountKey]
		c.mu.Unlock()
		if ok && now.Before(e.until) {
			out = append(out, txwire.LookupTable{Key: l.AccountKey, Addresses: e.addrs})
			continue
		}
		acct, err := cl.Base.Client.GetAccountInfo(ctx, l.AccountKey, chainclient.Confirmed)
		if err != nil {
			return nil, swapUpstreamError("Failed to fetch swap address lookup table", err)
		}
		if acct == nil {
			continue
		}
		if acct.Owner != txwire.AddressLookupTableProgramID {
			return nil, swapUpstreamError("Failed to fetch swap address lookup table",
				fmt.Errorf("%w: %s is owned by %s", txwire.ErrLookupTable, l.AccountKey, acct.Owner))
		}
		addrs, err := txwire.DecodeLookupTable(acct.Data)
		if err != nil {
			return nil, swapUpstreamError("Failed to fetch swap address lookup table", err)
		}
		c.mu.Lock()
		if len(c.m) >= c.max {
			clear(c.m)
		}
		c.m[l.AccountKey] = cachedTable{addrs: addrs, until: now.Add(c.ttl)}
		c.mu.Unlock()
		out = append(out, txwire.LookupTable{Key: l.AccountKey, Addresses: addrs})
	}
	return out, nil
}
