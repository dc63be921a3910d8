package api

import (
	"context"
	"net/http"
	"reflect"
	"strconv"

	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/auth"
	"github.com/ferry-sh/ferry/pkg/cluster"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/submit"
)

// Documented errors shared by several operations.
var (
	eValidation   = ErrorDoc{422, apierr.CodeValidation, "Request validation failed (or: Missing required fields: ...)"}
	eCluster      = ErrorDoc{400, apierr.CodeInvalidCluster, cluster.ErrInvalid.Error()}
	eConfig       = ErrorDoc{500, apierr.CodeConfig, "A cluster endpoint is misconfigured"}
	eMintNotFound = ErrorDoc{400, payments.CodeMintNotFound, "Mint account not found"}
	eTokenProgram = ErrorDoc{400, payments.CodeUnsupportedTokenProgram, "Mint owner is not a supported token program"}
	eOwner        = ErrorDoc{400, payments.CodeInvalidOwner, "Owner public key <key> is off-curve"}
	eTooLarge     = ErrorDoc{400, payments.CodeTransactionTooLarge, "transaction too large"}
	eBuild        = ErrorDoc{400, payments.CodeTransactionBuildError, "the builder's message"}
	eAuthToken    = ErrorDoc{401, auth.CodeInvalidAuthToken, "auth token is not valid here (not issued by this server or the cluster's TEE rollup, unsigned, expired, for another cluster or wallet); login again"}
	eIdentity     = ErrorDoc{403, auth.CodeTokenIdentityMismatch, "auth token is not bound to the requested address; login again with that wallet"}
	eBlockhash    = ErrorDoc{502, apierr.CodeRPC, "Failed to fetch recent blockhash / Failed to resolve mint token program"}
	eUpstream     = ErrorDoc{400, apierr.CodeUpstreamNotAllowed, "cluster / sendRpcEndpoint names an endpoint this server is not allowed to contact"}
	eHalted       = ErrorDoc{503, apierr.CodeLedgerHalted, "A ledger of the cluster stopped accepting writes; see GET /health"}
	eHealthHalted = ErrorDoc{503, HealthHalted, `{"status":"halted","reason":"<ledger>: <why>"} (a HealthResponse, not an error envelope)`}
	eVerifyToken  = ErrorDoc{502, apierr.CodeRPC, "Failed to verify the auth token with the rollup (TEE clusters)"}
)

func rpcErr(msg string) ErrorDoc { return ErrorDoc{502, apierr.CodeRPC, msg} }

// buildErrors are the errors of every transaction build.
func buildErrors(extra ...ErrorDoc) []ErrorDoc {
	return append([]ErrorDoc{eValidation, eCluster, eUpstream, eHalted, eMintNotFound, eTokenProgram, eOwner, eTooLarge, eBuild, eBlockhash}, extra...)
}

func (s *Server) builtinRoutes() []*route {
	svc := s.svc
	get, post := http.MethodGet, http.MethodPost
	routes := []*route{
		s.jsonRoute(Operation{Method: get, Path: "/health", ID: "getHealth", Tag: "Meta", Summary: "Health check",
			Description: `Answers {"status":"ok"} while the server can build and send. When a ledger it serves stops accepting ` +
				`writes (a failed commit, e.g. a full disk) it answers 503 {"status":"halted","reason":...}, and builds and sends ` +
				`answer 503 LEDGER_HALTED until the operator fixes the cause and restarts the server. In local mode "ledgers" lists ` +
				`the embedded ledgers; a gateway reports only itself.`,
			Response: reflect.TypeFor[HealthResponse](), Errors: []ErrorDoc{eHealthHalted},
			ErrorBodies: map[int]ErrorSchema{503: {Type: reflect.TypeFor[HealthResponse](), Example: map[string]any{
				"status": HealthHalted, "reason": "base ledger: ledger halted: commit slot 812: no space left on device",
				"ledgers": []any{map[string]any{"name": "base ledger", "status": HealthHalted, "reason": "ledger halted: commit slot 812: no space left on device"},
					map[string]any{"name": "ephemeral ledger", "status": HealthOK}}}}}},
			func(ctx context.Context, w *responseWriter, r *http.Request, _ []byte) (any, error) {
				h := svc.Health(ctx)
				if h.Status != HealthOK {
					s.writeJSON(w, r, http.StatusServiceUnavailable, h)
					return nil, nil
				}
				return h, nil
			}),

		typed(s, Operation{Method: get, Path: "/v1/spl/challenge", Query: true, ID: "getChallenge", Tag: "SPL",
			Summary: "Get a login challenge",
			Description: "Returns the text the wallet signs to log in: \"Login to Query Filtering Service\\nTimestamp: <unix-seconds>\\nUser: <pubkey>\". " +
				"The cluster's rollup's auth service issues it, as the hosted API asks it (GET <rollup>/auth/challenge; the TEE's on " +
				"mainnet-private and devnet-private, where a rollup without one gives a \"MOCK: ...\" challenge). On the local cluster, and on " +
				"a cluster whose rollup has no auth service, this server issues it: valid for 60 seconds, usable once.",
			Errors: []ErrorDoc{eValidation, eCluster, eUpstream, rpcErr("Failed to get challenge: <reason>"), {504, apierr.CodeRPC, "Auth endpoint timed out"},
				{429, apierr.CodeRPC, "Failed to get challenge: Too Many Requests"}, eConfig}},
			func(ctx context.Context, req *auth.ChallengeRequest, _ auth.Bearer) (*auth.ChallengeResponse, error) {
				return svc.Challenge(ctx, req)
			}),

		typed(s, Operation{Method: post, Path: "/v1/spl/login", ID: "login", Tag: "SPL", Summary: "Log in with a signed challenge",
			Description: "Checks the wallet's ed25519 signature (base58) over the challenge's exact UTF-8 bytes and returns a bearer token bound " +
				"to the wallet (\"<pubkey>.<token>\"). Tokens issued by this server are valid for 30 days (expiresAt, in ms) and only " +
				"on the cluster they were issued for. Use the cluster of the challenge: a challenge of the rollup's auth service is " +
				"answered there (POST <rollup>/auth/login; a rollup without one gives \"<pubkey>.mock-auth-token\", which no route " +
				"accepts), and that rollup verifies its tokens.",
			Errors: []ErrorDoc{eValidation, eCluster, eUpstream, {400, auth.CodeInvalidChallenge, "challenge is not a login challenge for this pubkey"},
				{400, auth.CodeInvalidSignature, "signature must be a base58-encoded 64-byte ed25519 signature"},
				{401, auth.CodeChallengeExpired, "challenge expired, was already used or was not issued here; request a new one"},
				{403, auth.CodeSignatureVerificationFailed, "Signature verification failed"},
				{403, apierr.CodeRPC, "Failed to login: Forbidden (TEE)"}, {429, apierr.CodeRPC, "Failed to login: Too Many Requests"},
				rpcErr("Failed to login: <reason> / No token received"), {504, apierr.CodeRPC, "Auth endpoint timed out"}}},
			func(ctx context.Context, req *auth.LoginRequest, _ auth.Bearer) (*auth.LoginResponse, error) {
				return svc.Login(ctx, req)
			}),

		typed(s, Operation{Method: post, Path: "/v1/spl/deposit", ID: "deposit", Tag: "SPL", Summary: "Build a deposit (base to rollup)",
			Description: "Builds an unsigned base-layer transaction that moves tokens from the owner's ATA into their ephemeral-rollup balance " +
				"(MagicBlock's delegateSpl: eATA setup, permission, delegation and an ESPL 24 shuttle). Send it to base.",
			Errors: buildErrors()},
			func(ctx context.Context, req *payments.DepositRequest, _ auth.Bearer) (*payments.UnsignedTransaction, error) {
				return svc.Deposit(ctx, req)
			}),

		typed(s, Operation{Method: post, Path: "/v1/spl/transfer", ID: "transfer", Tag: "SPL", Auth: AuthOptional,
			Summary: "Build a transfer",
			Description: "Builds an unsigned transfer. visibility public moves tokens in the clear (base to base, or rollup to rollup); " +
				"private hides the recipient, with optional delays and split payouts (base to base through the validator's queue, base to rollup, " +
				"rollup to rollup, rollup to base). Send the result where sendTo says. With fromBalance ephemeral on a TEE cluster, " +
				"pass the bearer token of `from`.",
			Errors: buildErrors(
				ErrorDoc{400, payments.CodeInvalidAmount, "<field> must be an integer string"},
				ErrorDoc{400, payments.CodeUnsupportedTransferRoute, "transferSpl route not implemented: visibility=..., fromBalance=..., toBalance=..."},
				ErrorDoc{400, payments.CodeInvalidPrivateTransfer, "maxDelayMs must be greater than or equal to minDelayMs (and similar)"},
				ErrorDoc{400, payments.CodeInvalidPlatformFee, "platformFeeAccount is required when platformFeeBps is greater than 0 (and similar)"},
				ErrorDoc{400, payments.CodeInvalidGaslessMint, "gasless is supported only for approved stablecoin mints"},
				ErrorDoc{400, payments.CodeInvalidGaslessAmount, "gasless amount must be at least 0.5 USDC/USDT"},
				ErrorDoc{503, payments.CodeSponsorUnavailable, "Gasless transfers are not configured"},
				ErrorDoc{400, payments.CodeInvalidStealthHandle, "handle must be between 1 and 255 UTF-8 bytes"},
				ErrorDoc{400, payments.CodeInvalidStealthTransfer, "Stealth handle transfers require visibility=private, fromBalance=base, and toBalance=base"},
				ErrorDoc{400, payments.CodeStealthPoolNotFound, "Stealth handle is not initialized"},
				ErrorDoc{400, payments.CodeEATAValidatorMismatch, "Projected token account is delegated to another validator"},
				eAuthToken, eIdentity, eVerifyToken)},
			svc.Transfer),

		typed(s, Operation{Method: post, Path: "/v1/spl/withdraw", ID: "withdraw", Tag: "SPL", Auth: AuthOptional,
			Summary: "Build a withdrawal (rollup to base)",
			Description: "Builds an unsigned base-layer transaction that moves tokens from the owner's rollup balance back to their base ATA " +
				"(MagicBlock's withdrawSpl: an ESPL 26 shuttle). It is sent to base. A bearer token is accepted and ignored.",
			Errors: buildErrors()},
			func(ctx context.Context, req *payments.WithdrawRequest, _ auth.Bearer) (*payments.UnsignedTransaction, error) {
				return svc.Withdraw(ctx, req)
			}),

		typed(s, Operation{Method: post, Path: "/v1/spl/initialize-mint", ID: "initializeMint", Tag: "SPL",
			Summary: "Build the one-time setup of a mint",
			Description: "Builds the base-layer transaction that sets up a (mint, validator) pair: transfer queue, rent PDA (funded with " +
				"0.02 SOL), queue delegation, global vault and its ATA, and the vault eATA's delegation. Needed once before private transfers.",
			Errors: buildErrors()},
			func(ctx context.Context, req *payments.InitializeMintRequest, _ auth.Bearer) (*payments.InitializeMintResponse, error) {
				return svc.InitializeMint(ctx, req)
			}),

		typed(s, Operation{Method: get, Path: "/v1/spl/is-mint-initialized", Query: true, ID: "isMintInitialized", Tag: "SPL",
			Summary: "Check whether a mint is set up",
			Description: "Reports whether the transfer queue of (mint, validator) exists on base and is delegated. When it is, the server " +
				"also nudges the queue's crank in the background.",
			Errors: []ErrorDoc{eValidation, eCluster, eUpstream, rpcErr("Failed to fetch transfer queue account")}},
			func(ctx context.Context, req *payments.MintInitializationRequest, _ auth.Bearer) (*payments.MintInitializationResponse, error) {
				return svc.IsMintInitialized(ctx, req)
			}),

		typed(s, Operation{Method: post, Path: "/v1/spl/transfer-queue/ensure-crank", ID: "ensureTransferQueueCrank", Tag: "SPL",
			Summary: "Crank a transfer queue",
			Description: "Sends one ESPL 17 (ensureTransferQueueCrank) transaction, signed by a throw-away key, to the cluster's crank RPC " +
				"so queued private payouts are paid. Clients call it after private payments as a best-effort nudge.",
			Errors: []ErrorDoc{eValidation, eCluster, eUpstream, eHalted,
				{400, payments.CodeTransferQueueNotInitialized, "Transfer queue is not initialized and delegated"},
				rpcErr("Failed to ensure transfer queue crank"), rpcErr("Failed to fetch transfer queue account")}},
			func(ctx context.Context, req *payments.TransferQueueEnsureCrankRequest, _ auth.Bearer) (*payments.TransferQueueEnsureCrankResponse, error) {
				return svc.EnsureCrank(ctx, req)
			}),

		typed(s, Operation{Method: post, Path: "/v1/spl/undelegate-ephemeral-ata", ID: "undelegateEphemeralAta", Tag: "SPL", Auth: AuthOptional,
			Summary: "Build an undelegation of an ephemeral ATA",
			Description: "Builds the rollup transaction (ESPL 5) that commits the payer's ephemeral ATA and hands it back to base. " +
				"It goes to the rollup node the account is delegated to (found with the delegation router), given as sendRpcEndpoint. " +
				"A bearer token, if any, must be bound to payer.",
			Errors: []ErrorDoc{eValidation, eCluster, eUpstream, eHalted, eMintNotFound, eTokenProgram, eBlockhash, eVerifyToken,
				{400, payments.CodeEphemeralEndpointUnresolved, "Ephemeral RPC endpoint cannot be retrieved"},
				{400, payments.CodeValidatorMismatch, "Payer and ephemeral ATA are delegated to different validators"},
				rpcErr("Failed to fetch delegation record(s)"), eAuthToken, eIdentity}},
			svc.UndelegateEphemeralATA),

		typed(s, Operation{Method: get, Path: "/v1/spl/balance", Query: true, ID: "getBalance", Tag: "SPL",
			Summary:     "Get a base-layer balance",
			Description: "The amount in the wallet's associated token account on base, in base units (\"0\" when the account does not exist).",
			Errors:      []ErrorDoc{eValidation, eCluster, eUpstream, eMintNotFound, eTokenProgram, rpcErr("Failed to fetch token balance")}},
			func(ctx context.Context, req *payments.BalanceRequest, _ auth.Bearer) (*payments.BalanceResponse, error) {
				return svc.Balance(ctx, req)
			}),

		typed(s, Operation{Method: get, Path: "/v1/spl/private-balance", Query: true, ID: "getPrivateBalance", Tag: "SPL", Auth: AuthRequired,
			Summary: "Get a rollup (private) balance",
			Description: "The wallet's balance as the ephemeral rollup sees it, when its ephemeral ATA is delegated to the cluster's rollup " +
				"(\"0\" when it is not delegated). Requires a bearer token verified for address: one this server issued for the cluster, " +
				"or on a *-private cluster one its TEE rollup issued and accepts. A missing Authorization header is a 422, a malformed " +
				"one a 400 MISSING_AUTH_TOKEN; any other token (unsigned, forged, expired, foreign, mock) a 401, another wallet's a 403.",
			Errors: []ErrorDoc{eValidation, eCluster, eUpstream, eMintNotFound, eTokenProgram,
				{400, auth.CodeMissingAuthToken, "authToken is required for private balance"}, eAuthToken, eIdentity, eVerifyToken,
				{400, payments.CodeEATADelegatedElsewhere, "eATA is delegated to a different validator"},
				rpcErr("Failed to fetch token balance"), rpcErr("Failed to fetch delegation record(s)")}},
			svc.PrivateBalance),

		typed(s, Operation{Method: post, Path: "/v1/spl/stealth-pool", ID: "createStealthPool", Tag: "SPL", Auth: AuthRequired,
			Summary: "Build a stealth pool",
			Description: "Builds the two transactions that create (or update) a handle's stealth pool: setupTransaction (ESPL 22, base, send " +
				"and confirm first) and the rollup update (ESPL 21, the top-level fields, sent with the bearer token). Private base-to-base " +
				"transfers can then use the handle as `to`. Requires a bearer token (bound to payer or authority, if bound).",
			Errors: []ErrorDoc{eValidation, eCluster, eUpstream, eHalted, eBlockhash, eVerifyToken,
				{400, auth.CodeMissingAuthToken, "authToken is required to initialize stealth pool destinations inside the ER"},
				{400, payments.CodeInvalidStealthHandle, "handle must be between 1 and 255 UTF-8 bytes"},
				{400, payments.CodeInvalidPublicKey, "Invalid destinations[<i>]"}, eAuthToken, eIdentity}},
			svc.StealthPool),

		typed(s, Operation{Method: get, Path: "/v1/spl/stealth-pool", Query: true, ID: "getStealthPool", Tag: "SPL",
			Summary:     "Check a stealth pool",
			Description: "The handle's pool address and whether it exists on base. Destinations are never returned.",
			Errors:      []ErrorDoc{eValidation, eCluster, eUpstream, rpcErr("Failed to fetch stealth pool account")}},
			func(ctx context.Context, req *payments.StealthPoolStatusRequest, _ auth.Bearer) (*payments.StealthPoolStatusResponse, error) {
				return svc.StealthPoolStatus(ctx, req)
			}),

		typed(s, Operation{Method: post, Path: "/v1/transaction/send", ID: "sendTransaction", Tag: "Transaction", Auth: AuthOptional,
			Summary: "Send a signed transaction",
			Description: "Submits a signed transaction to the base layer or the ephemeral rollup (sendTo, from the build response), " +
				"with preflight at \"confirmed\". A bearer token must verify; a token the cluster's TEE rollup issued goes to that " +
				"rollup (and nowhere else) as ?token=. sendRpcEndpoint must be a configured or allowed endpoint. With confirm, waits until the " +
				"transaction is confirmed or its blockhash expires (lastValidBlockHeight). A request that breaks a rule " +
				"(confirm without recentBlockhash/lastValidBlockHeight, sendRpcEndpoint with sendTo base) is a 422; a transaction the node " +
				"refuses is the caller's error, a 400 with the node's error and logs (service-interface.md §7).",
			Errors: []ErrorDoc{eValidation, eCluster, eUpstream, eHalted, eVerifyToken,
				{400, submit.CodeInvalidTransaction, "transactionBase64 must be valid base64"},
				{400, submit.CodeTransactionTooLarge, "Serialized transaction exceeds 1232 bytes"},
				{400, submit.CodeTransactionFailed, "Transaction failed (details.err is the TransactionError)"},
				{400, apierr.CodeRPC, "Failed to send transaction: the node refused it (undecodable, bad signatures, failed preflight); details carry the node's message, rpcCode, and the simulation's err and logs"},
				rpcErr("Failed to send transaction: the node could not be reached or did not answer sensibly"),
				{502, submit.CodeTransactionExpired, "Transaction expired before it was confirmed: ... safe to re-sign"},
				rpcErr("Failed to confirm transaction"), {504, apierr.CodeRPC, "Timed out confirming transaction"}, eAuthToken}},
			svc.Send),
	}
	routes = append(routes, s.swapRoutes()...)
	routes = append(routes,
		&route{op: Operation{Method: get, Path: "/doc"}, hidden: true, serve: s.serveDoc},
		&route{op: Operation{Method: get, Path: "/reference"}, hidden: true, serve: s.serveReference},
	)
	return routes
}

func (s *Server) swapRoutes() []*route {
	svc := s.svc
	swapErrors := []ErrorDoc{eValidation, {500, apierr.CodeConfig, "Missing worker environment variable `METIS_SWAP_API_URL`"},
		{502, CodeSwapUpstreamError, "Failed to reach the swap upstream (or: Swap upstream timed out)"}}
	quote := Operation{Method: http.MethodGet, Path: "/v1/swap/quote", Query: true, ID: "getSwapQuote", Tag: "Swap",
		Summary: "Get a swap quote",
		Description: "Forwards the query, unchanged, to the configured Metis (Jupiter-compatible) swap API and passes its answer " +
			"(status, body) through. Swaps need that upstream (METIS_SWAP_API_URL): ferry has no swap engine of its own.",
		Request: reflect.TypeFor[SwapQuoteRequest](), Response: reflect.TypeFor[SwapQuoteResponse](), Errors: swapErrors}
	swap := Operation{Method: http.MethodPost, Path: "/v1/swap/swap", ID: "swap", Tag: "Swap", Summary: "Build a swap transaction",
		Description: "Builds an unsigned swap transaction from a quote. visibility public (the default) forwards the body verbatim " +
			"to the swap API's /swap and passes its answer through. visibility private sends the swap's output to a program-owned " +
			"stash ATA (derived from the payer and the output mint), prepends the stash ATA's idempotent creation, raises an " +
			"existing SetComputeUnitLimit by 40 000 units, and appends schedule_private_transfer (ESPL 29), which registers a " +
			"one-shot Hydra crank that delivers the output to destination with the requested delays and split; the answer is a v0 " +
			"transaction, with privateTransfer {stashAta, hydraCrankPda, shuttleId}. When the rebuilt transaction exceeds 1232 " +
			"bytes the quote is asked again with maxAccounts 39, 38, ... 1. destination, minDelayMs, maxDelayMs and split are " +
			"required for a private swap; destinationTokenAccount, nativeDestinationAccount and asLegacyTransaction true are refused.",
		Request: reflect.TypeFor[SwapRequest](), Response: reflect.TypeFor[SwapResponse](),
		Errors: append(append([]ErrorDoc(nil), swapErrors...),
			ErrorDoc{400, CodeInvalidRequest, "destination, minDelayMs, maxDelayMs, and split are required when visibility=private (and the other private-swap rules)"},
			ErrorDoc{502, CodeSwapUpstreamError, "Upstream swap response missing swapTransaction / Invalid upstream swap transaction encoding / Failed to fit private swap transaction within 1232 bytes"},
			eConfig, eUpstream)}
	return []*route{
		{op: quote, serve: func(w *responseWriter, r *http.Request) {
			var req SwapQuoteRequest
			if err := decodeQuery(r.URL.Query(), &req); err != nil {
				s.writeError(w, r, err)
				return
			}
			s.writeUpstream(w, r, func() (*UpstreamResponse, error) { return svc.SwapQuote(r.Context(), &req, r.URL.RawQuery) })
		}},
		{op: swap, serve: func(w *responseWriter, r *http.Request) {
			buf := getBuf()
			defer putBuf(buf)
			if err := s.readBody(w, r, buf); err != nil {
				s.writeError(w, r, err)
				return
			}
			var req SwapRequest
			if err := decodeBody(buf.Bytes(), &req); err != nil {
				s.writeError(w, r, err)
				return
			}
			s.writeUpstream(w, r, func() (*UpstreamResponse, error) { return svc.Swap(r.Context(), &req, buf.Bytes()) })
		}},
	}
}

func (s *Server) writeUpstream(w *responseWriter, r *http.Request, fn func() (*UpstreamResponse, error)) {
	up, err := fn()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ct := up.ContentType
	if ct == "" {
		ct = "application/json"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Length", strconv.Itoa(len(up.Body)))
	w.WriteHeader(up.Status)
	w.Write(up.Body)
}
