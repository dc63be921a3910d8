package api

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/auth"
	"github.com/ferry-sh/ferry/pkg/cluster"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/submit"
)

// Config configures the payments API. Clusters is required; every other
// field has a working zero value.
type Config struct {
	// Clusters resolves the cluster field of requests (NewClusters).
	Clusters *Clusters
	// Planner builds transactions; nil means a zero Planner (crypto/rand,
	// the hosted API's defaults). It is copied; Sponsor below overrides
	// its Sponsor.
	Planner *payments.Planner
	// Sponsor pays the fees of gasless transfers (GASLESS_SPONSOR_SECRET_KEY);
	// nil leaves the planner's (none: 503 SPONSOR_UNAVAILABLE).
	Sponsor ed25519.PrivateKey
	// Auth issues and checks login tokens. Nil creates one with a random
	// key: tokens then die with the process (use auth.LoadOrCreateKey).
	Auth *auth.Service
	// Logger receives one line per request and background errors
	// (default: discard).
	Logger *slog.Logger
	// CORSOrigin is the allowed origin ("*" by default), or a
	// comma-separated list of origins.
	CORSOrigin string
	// MaxBodyBytes bounds request bodies (default 64 KiB); larger bodies
	// get 413 PAYLOAD_TOO_LARGE.
	MaxBodyBytes int64
	// Now is the clock (default time.Now).
	Now func() time.Time
	// ConfirmPollInterval is how often /v1/transaction/send polls while
	// confirming (default 250 ms).
	ConfirmPollInterval time.Duration
	// Swap configures the optional swap proxy.
	Swap SwapConfig
	// DisableBackgroundCrank turns off the queue crank is-mint-initialized
	// schedules (payments-api.md §5.8).
	DisableBackgroundCrank bool
}

// Defaults of Config.
const (
	DefaultMaxBodyBytes        = 64 << 10
	DefaultConfirmPollInterval = 250 * time.Millisecond
)

// Service is the payments API's operations with typed inputs and outputs:
// the HTTP handlers and the MCP tools both call it, so both give exactly
// the same results and errors. Every error is an *apierr.Error. A Service
// is safe for concurrent use; Close stops its background work.
type Service struct {
	clusters *Clusters
	planner  *payments.Planner
	auth     *auth.Service
	log      *slog.Logger
	now      func() time.Time
	sender   *submit.Sender
	swap     *swapProxy
	crank    *cranker
}

// NewService returns the service of cfg.
func NewService(cfg Config) (*Service, error) {
	if cfg.Clusters == nil {
		return nil, apierr.New(http.StatusInternalServerError, apierr.CodeConfig, "create payments API: Config.Clusters is required")
	}
	p := payments.Planner{}
	if cfg.Planner != nil {
		p = *cfg.Planner
	}
	if cfg.Sponsor != nil {
		p.Sponsor = cfg.Sponsor
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	a := cfg.Auth
	if a == nil {
		_, k, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, err
		}
		if a, err = auth.New(auth.Config{Key: k, Now: now}); err != nil {
			return nil, err
		}
	}
	poll := cfg.ConfirmPollInterval
	if poll <= 0 {
		poll = DefaultConfirmPollInterval
	}
	s := &Service{
		clusters: cfg.Clusters, planner: &p, auth: a, log: log, now: now,
		sender: &submit.Sender{PollInterval: poll},
	}
	s.swap = newSwapProxy(cfg.Swap, now)
	s.crank = newCranker(s, !cfg.DisableBackgroundCrank, poll)
	return s, nil
}

// Close stops background work (queue cranks) and waits for it.
func (s *Service) Close() error {
	s.crank.close()
	return nil
}

// HealthResponse is GET /health.
type HealthResponse struct {
	Status string `json:"status" validate:"enum=ok|halted" doc:"ok while the server can build and send; halted when a ledger it serves stopped accepting writes (the answer is then a 503)."`
	// Reason says which ledger halted and why (only when halted).
	Reason string `json:"reason,omitempty" doc:"Which ledger halted and why (only when halted)."`
	// Ledgers are the embedded ledgers and their state (only when halted:
	// a healthy answer is the hosted API's {"status":"ok"}).
	Ledgers []HealthStatus `json:"ledgers,omitempty" doc:"The embedded ledgers and their state (only when halted)."`
}

// Health reports whether the server can build and send: ok, or halted
// with the reason when a ledger it serves stopped accepting writes (local
// mode: the embedded ledgers; a gateway reports only itself).
func (s *Service) Health(context.Context) *HealthResponse {
	ledgers := s.clusters.Health()
	var reasons []string
	for _, l := range ledgers {
		if l.Status != HealthOK {
			reasons = append(reasons, l.Name+": "+l.Reason)
		}
	}
	if reasons == nil {
		return &HealthResponse{Status: HealthOK}
	}
	return &HealthResponse{Status: HealthHalted, Reason: strings.Join(reasons, "; "), Ledgers: ledgers}
}

// writable resolves a cluster for a build or a send: also 503
// LEDGER_HALTED when a ledger behind it stopped accepting writes.
func (s *Service) writable(name string) (*Cluster, error) {
	cl, err := s.clusters.Resolve(name)
	if err != nil {
		return nil, err
	}
	if err := cl.Writable(); err != nil {
		return nil, err
	}
	return cl, nil
}

// Challenge is GET /v1/spl/challenge: a login challenge from the
// cluster's rollup's auth service, as the hosted API asks it (the TEE's on
// *-private clusters), or from this server: on the local cluster, and on
// a cluster whose rollup has no auth service (auth.Service.ChallengeVia).
func (s *Service) Challenge(ctx context.Context, req *auth.ChallengeRequest) (*auth.ChallengeResponse, error) {
	if req.Mock != nil && *req.Mock {
		return &auth.ChallengeResponse{Challenge: auth.LegacyMockChallenge}, nil
	}
	cl, err := s.clusters.Resolve(req.Cluster)
	if err != nil {
		return nil, err
	}
	switch {
	case cl.Endpoints.TEE:
		return s.auth.ProxyChallenge(ctx, cl.Endpoints.Ephemeral, req.Pubkey)
	case cl.Endpoints.Kind != cluster.Local:
		return s.auth.ChallengeVia(ctx, cl.Endpoints.Ephemeral, req.Pubkey)
	}
	return &auth.ChallengeResponse{Challenge: s.auth.Challenge(req.Pubkey)}, nil
}

// Login is POST /v1/spl/login: a bearer token bound to the wallet, from the
// rollup's auth service (proxied as Challenge is) or from this server for
// a challenge it issued.
func (s *Service) Login(ctx context.Context, req *auth.LoginRequest) (*auth.LoginResponse, error) {
	if req.Mock != nil && *req.Mock {
		return &auth.LoginResponse{Token: auth.Bind(req.Pubkey, auth.MockToken)}, nil
	}
	cl, err := s.clusters.Resolve(req.Cluster)
	if err != nil {
		return nil, err
	}
	switch {
	case cl.Endpoints.TEE:
		return s.auth.ProxyLogin(ctx, cl.Endpoints.Ephemeral, req)
	case cl.Endpoints.Kind != cluster.Local:
		return s.auth.LoginVia(ctx, cl.Endpoints.Ephemeral, cl.Audience(), req)
	}
	return s.auth.LoginFor(cl.Audience(), req.Pubkey, req.Challenge, req.Signature)
}

// Deposit is POST /v1/spl/deposit.
func (s *Service) Deposit(ctx context.Context, req *payments.DepositRequest) (*payments.UnsignedTransaction, error) {
	cl, err := s.writable(req.Cluster)
	if err != nil {
		return nil, err
	}
	return s.planner.Deposit(ctx, cl.Chain(""), req)
}

// Transfer is POST /v1/spl/transfer. A token, if given, must verify
// (VerifyToken); with an ephemeral source it must be bound to from, and
// a TEE rollup's token fetches that rollup's blockhash.
func (s *Service) Transfer(ctx context.Context, req *payments.TransferRequest, tok auth.Bearer) (*payments.UnsignedTransaction, error) {
	cl, err := s.writable(req.Cluster)
	if err != nil {
		return nil, err
	}
	if tok, err = s.VerifyToken(ctx, cl, tok); err != nil {
		return nil, err
	}
	if req.FromBalance == payments.Ephemeral {
		if _, err = tok.For(req.From); err != nil {
			return nil, err
		}
	}
	return s.planner.Transfer(ctx, cl.Chain(rollupToken(tok)), req)
}

// Withdraw is POST /v1/spl/withdraw (a bearer token is accepted and, as on
// the hosted API, ignored).
func (s *Service) Withdraw(ctx context.Context, req *payments.WithdrawRequest) (*payments.UnsignedTransaction, error) {
	cl, err := s.writable(req.Cluster)
	if err != nil {
		return nil, err
	}
	return s.planner.Withdraw(ctx, cl.Chain(""), req)
}

// InitializeMint is POST /v1/spl/initialize-mint.
func (s *Service) InitializeMint(ctx context.Context, req *payments.InitializeMintRequest) (*payments.InitializeMintResponse, error) {
	cl, err := s.writable(req.Cluster)
	if err != nil {
		return nil, err
	}
	return s.planner.InitializeMint(ctx, cl.Chain(""), req)
}

// IsMintInitialized is GET /v1/spl/is-mint-initialized. When the queue is
// initialized it also schedules a background crank (unless disabled).
func (s *Service) IsMintInitialized(ctx context.Context, req *payments.MintInitializationRequest) (*payments.MintInitializationResponse, error) {
	cl, err := s.clusters.Resolve(req.Cluster)
	if err != nil {
		return nil, err
	}
	out, err := s.planner.IsMintInitialized(ctx, cl.Chain(""), req)
	if err != nil {
		return nil, err
	}
	if out.Initialized {
		s.crank.background(cl, out)
	}
	return out, nil
}

// EnsureCrank is POST /v1/spl/transfer-queue/ensure-crank: send one
// ESPL 17 crank to the cluster's crank RPC now, whatever the queue's
// recent activity.
func (s *Service) EnsureCrank(ctx context.Context, req *payments.TransferQueueEnsureCrankRequest) (*payments.TransferQueueEnsureCrankResponse, error) {
	cl, err := s.writable(req.Cluster)
	if err != nil {
		return nil, err
	}
	plan, err := s.planner.PlanEnsureCrank(ctx, cl.Chain(""), req)
	if err != nil {
		return nil, err
	}
	sig, err := s.crank.ensure(ctx, cl, plan, true)
	if err != nil {
		return nil, apierr.New(http.StatusBadGateway, apierr.CodeRPC, "Failed to ensure transfer queue crank").
			WithDetails(map[string]any{"mint": plan.Mint.String(), "validator": plan.Validator.String(),
				"transferQueue": plan.Queue.String(), "message": apierr.RedactURLs(err.Error())}).Wrap(err)
	}
	return &payments.TransferQueueEnsureCrankResponse{Mint: plan.Mint.String(), Validator: plan.Validator.String(),
		TransferQueue: plan.Queue.String(), CrankSignature: sig.String()}, nil
}

// UndelegateEphemeralATA is POST /v1/spl/undelegate-ephemeral-ata. A
// bearer token, if any, must verify and be bound to payer.
func (s *Service) UndelegateEphemeralATA(ctx context.Context, req *payments.UndelegateEphemeralATARequest, tok auth.Bearer) (*payments.UndelegateEphemeralATAResponse, error) {
	cl, err := s.writable(req.Cluster)
	if err != nil {
		return nil, err
	}
	if tok, err = s.VerifyToken(ctx, cl, tok); err != nil {
		return nil, err
	}
	if _, err := tok.For(req.Payer); err != nil {
		return nil, err
	}
	ch := cl.Chain("")
	ch.token = rollupToken(tok) // sent only to the cluster's own rollup
	return s.planner.UndelegateEphemeralATA(ctx, ch, req)
}

// Balance is GET /v1/spl/balance: the base-layer balance.
func (s *Service) Balance(ctx context.Context, req *payments.BalanceRequest) (*payments.BalanceResponse, error) {
	cl, err := s.clusters.Resolve(req.Cluster)
	if err != nil {
		return nil, err
	}
	return s.planner.BaseBalance(ctx, cl.Chain(""), req)
}

// PrivateBalance is GET /v1/spl/private-balance: the balance on the
// rollup, for the wallet a verified token names (REST and MCP alike: a
// missing token is 401 MISSING_AUTH_TOKEN here; the REST route answers
// the hosted API's 422 before). On ferry's own rollup the read runs as
// that wallet (auth.WithVerifiedWallet), through the rollup's read filter;
// on a TEE cluster it carries the rollup's token, and the rollup filters.
func (s *Service) PrivateBalance(ctx context.Context, req *payments.BalanceRequest, tok auth.Bearer) (*payments.BalanceResponse, error) {
	if !tok.Present {
		return nil, apierr.New(http.StatusUnauthorized, auth.CodeMissingAuthToken,
			"authToken is required for private balance: send Authorization: Bearer <token> (from /v1/spl/login)")
	}
	if !tok.OK() {
		return nil, apierr.BadRequest(auth.CodeMissingAuthToken, "authToken is required for private balance")
	}
	cl, err := s.clusters.Resolve(req.Cluster)
	if err != nil {
		return nil, err
	}
	if tok, err = s.VerifyToken(ctx, cl, tok); err != nil {
		return nil, err
	}
	if _, err := tok.For(req.Address); err != nil {
		return nil, err
	}
	if tok.Identity != "" {
		ctx = auth.WithVerifiedWallet(ctx, tok.Identity)
	}
	ch := cl.Chain(rollupToken(tok))
	return s.planner.PrivateBalance(ctx, ch, ch, req)
}

// StealthPool is POST /v1/spl/stealth-pool. The token (required) must
// verify and be bound to the payer or the authority; on TEE clusters it
// fetches the rollup blockhash.
func (s *Service) StealthPool(ctx context.Context, req *payments.StealthPoolRequest, tok auth.Bearer) (*payments.StealthPoolResponse, error) {
	if !tok.OK() {
		return nil, apierr.BadRequest(auth.CodeMissingAuthToken, "authToken is required to initialize stealth pool destinations inside the ER")
	}
	cl, err := s.writable(req.Cluster)
	if err != nil {
		return nil, err
	}
	if tok, err = s.VerifyToken(ctx, cl, tok); err != nil {
		return nil, err
	}
	if _, err := tok.ForAny(req.Payer, req.Authority); err != nil {
		return nil, err
	}
	return s.planner.StealthPool(ctx, cl.Chain(rollupToken(tok)), req)
}

// StealthPoolStatus is GET /v1/spl/stealth-pool.
func (s *Service) StealthPoolStatus(ctx context.Context, req *payments.StealthPoolStatusRequest) (*payments.StealthPoolStatusResponse, error) {
	cl, err := s.clusters.Resolve(req.Cluster)
	if err != nil {
		return nil, err
	}
	return s.planner.StealthPoolStatus(ctx, cl.Chain(""), req)
}

// Send is POST /v1/transaction/send. A token, if any, must verify; only a
// token the cluster's TEE rollup issued is forwarded, as ?token=, and only
// to that rollup (never to another sendRpcEndpoint).
func (s *Service) Send(ctx context.Context, req *submit.Request, tok auth.Bearer) (*submit.Response, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	cl, err := s.writable(req.Cluster)
	if err != nil {
		return nil, err
	}
	if tok, err = s.VerifyToken(ctx, cl, tok); err != nil {
		return nil, err
	}
	return s.sender.Send(ctx, cl.SubmitEndpoints(), req, rollupToken(tok))
}
