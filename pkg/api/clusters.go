package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/cluster"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/submit"
)

// ClustersConfig configures Clusters.
type ClustersConfig struct {
	// Default is the cluster of requests that name none. Empty means
	// "local" (ferry serve's embedded pair).
	Default string
	// Overrides replace endpoints. The API serves every cluster at once,
	// so put per-cluster values in Overrides.PerCluster (keyed by name or
	// kind: "local", "devnet", "devnet-private", "custom", ...); top-level
	// values apply to every cluster. See EnvOverrides for the hosted API's
	// environment variables.
	Overrides cluster.Overrides
	// InProcess maps endpoint URLs to handlers that serve them in this
	// process (ferry serve's embedded chain nodes and router): clients for
	// those URLs call the handler directly (chainclient.WithHandler), every
	// other URL goes over the network. Keys are compared after
	// chainclient.NormalizeFQDN.
	InProcess map[string]http.Handler
	// ClientOptions apply to every network client (timeouts, user agent).
	ClientOptions []chainclient.Option
	// Cache configures the per-endpoint caches (blockhash TTL, ...). Its
	// BlockhashTTL applies to in-process endpoints only; see
	// NetworkBlockhashTTL.
	Cache chainclient.CacheOptions
	// NetworkBlockhashTTL is how long a blockhash read from an endpoint
	// over the network is reused by later builds. Zero (the default)
	// reads one per build, as the hosted API does: every transaction gets
	// its blockhash's whole lifetime, and the upstream sees one
	// getLatestBlockhash per build.
	NetworkBlockhashTTL time.Duration
	// MaxDynamic bounds the clients kept for URLs named by requests (custom
	// cluster URLs, sendRpcEndpoint, router answers); default 64, least
	// recently used first out.
	MaxDynamic int
	// AllowUpstream are the operator's patterns (cluster.AllowPattern) of
	// URLs a request may name as its cluster or sendRpcEndpoint, besides
	// the configured endpoints (every named cluster's, the default
	// cluster's, TrustedUpstreams and the InProcess ones), which are
	// always allowed. Anything else is 400 UPSTREAM_NOT_ALLOWED, before
	// any connection is made.
	AllowUpstream []string
	// TrustedUpstreams are further URLs requests may name: the rollup
	// nodes the server's router lists, say.
	TrustedUpstreams []string
	// Health maps endpoint URLs (keys compared after
	// chainclient.NormalizeFQDN) to checks of the ledger behind them:
	// while a check fails, builds and sends on a cluster that uses the
	// endpoint answer 503 LEDGER_HALTED, and GET /health says why.
	Health map[string]HealthCheck
}

// Clusters resolves the cluster field of requests to long-lived clients:
// one cached client per endpoint URL, shared by every request, so that in
// steady state a build makes no RPC round trip. It is safe for concurrent
// use.
type Clusters struct {
	def       string
	overrides cluster.Overrides
	inProcess map[string]http.Handler
	opts      []chainclient.Option
	cacheOpts chainclient.CacheOptions
	netCache  chainclient.CacheOptions // cacheOpts for network endpoints
	dynamic   *chainclient.Pool

	allow  *cluster.AllowList
	health map[string]HealthCheck

	mu      sync.Mutex
	named   map[string]*Cluster
	clients map[string]*chainclient.Cached // configured endpoints, kept forever
	learned learnedURLs                    // rollup URLs the router named
}

// NewClusters returns a resolver. It fails if the default cluster does not
// resolve.
func NewClusters(cfg ClustersConfig) (*Clusters, error) {
	cs := &Clusters{
		def: cfg.Default, overrides: cfg.Overrides, opts: cfg.ClientOptions, cacheOpts: cfg.Cache,
		inProcess: map[string]http.Handler{}, named: map[string]*Cluster{}, clients: map[string]*chainclient.Cached{},
	}
	if cs.def == "" {
		cs.def = "local"
	}
	for u, h := range cfg.InProcess {
		cs.inProcess[normalizeURL(u)] = h
	}
	cs.health = map[string]HealthCheck{}
	for u, hc := range cfg.Health {
		cs.health[normalizeURL(u)] = hc
	}
	var err error
	if cs.allow, err = newAllowList(cfg, cs.def); err != nil {
		return nil, err
	}
	cs.netCache = cfg.Cache
	cs.netCache.BlockhashTTL = cfg.NetworkBlockhashTTL
	if cs.netCache.BlockhashTTL <= 0 {
		cs.netCache.BlockhashTTL = -1 // chainclient: no reuse
	}
	cs.learned.max = cfg.MaxDynamic
	cs.dynamic = chainclient.NewPool(cfg.MaxDynamic, cs.netCache, cfg.ClientOptions...)
	if _, err := cs.Resolve(""); err != nil && apierr.As(err).Code != apierr.CodeConfig {
		// A default cluster the deployment's environment leaves
		// unconfigured is not fatal: its requests answer 500 CONFIG_ERROR
		// naming the missing variables, as the hosted worker's do.
		return nil, fmt.Errorf("default cluster %q: %w", cs.def, err)
	}
	return cs, nil
}

// Default is the name of the default cluster.
func (cs *Clusters) Default() string { return cs.def }

func normalizeURL(u string) string {
	if n, err := chainclient.NormalizeFQDN(u); err == nil {
		return n
	}
	return strings.TrimSpace(u)
}

// Cluster is one resolved cluster: its endpoints and the clients that
// reach them. Clients are shared; never put per-user tokens in them (use
// Client.WithToken on a copy).
type Cluster struct {
	Endpoints cluster.Endpoints
	Base      *chainclient.Cached
	Ephemeral *chainclient.Cached
	// Crank is the RPC transfer-queue cranks go to (Ephemeral unless
	// configured).
	Crank *chainclient.Cached
	// Router is the delegation router; nil when the cluster has none (a
	// custom URL, as on the hosted API).
	Router *chainclient.Cached
	// TEE is the TEE rollup's URL, the undelegation fallback for accounts
	// delegated to the TEE validator ("" for local clusters).
	TEE string

	cs *Clusters
}

// invalidCluster is the hosted API's 400 INVALID_CLUSTER.
func invalidCluster() *apierr.Error {
	return apierr.BadRequest(apierr.CodeInvalidCluster, cluster.ErrInvalid.Error())
}

// Resolve returns the cluster named name ("" means the default): local,
// devnet, mainnet, devnet-private, mainnet-private, or a custom http(s) URL
// that replaces only the base RPC. Anything else is 400 INVALID_CLUSTER.
func (cs *Clusters) Resolve(name string) (*Cluster, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	if key == "" {
		key = strings.ToLower(strings.TrimSpace(cs.def))
	}
	cs.mu.Lock()
	if c, ok := cs.named[key]; ok {
		cs.mu.Unlock()
		return c, nil
	}
	cs.mu.Unlock()
	if key == "" {
		return nil, invalidCluster()
	}
	src := name
	if strings.TrimSpace(name) == "" {
		src = cs.def
	}
	ep, err := cluster.Resolve(src, cs.overrides)
	if err != nil {
		return nil, invalidCluster()
	}
	if ep.Problem != nil {
		return nil, configProblem(ep.Problem)
	}
	c := &Cluster{Endpoints: ep, cs: cs}
	custom := ep.Kind == cluster.Custom
	if custom && !cs.allow.Allows(ep.BaseRPC) {
		return nil, upstreamNotAllowed("cluster", ep.BaseRPC)
	}
	if custom {
		// The request chose this URL: keep it in the bounded pool.
		if c.Base, err = cs.dynamicClient(ep.BaseRPC); err != nil {
			return nil, invalidCluster()
		}
	} else if c.Base, err = cs.configured(ep.BaseRPC); err != nil {
		return nil, configError("base RPC", ep, err)
	}
	if c.Ephemeral, err = cs.configured(ep.Ephemeral); err != nil {
		return nil, configError("ephemeral RPC", ep, err)
	}
	if c.Crank, err = cs.configured(ep.CrankRPC()); err != nil {
		return nil, configError("crank RPC", ep, err)
	}
	router := ep.Router
	if custom && cs.overrides.Router == "" && cs.overrides.PerCluster["custom"].Router == "" {
		router = "" // the hosted API has no router for custom URLs
	}
	if router != "" {
		if c.Router, err = cs.configured(router); err != nil {
			return nil, configError("router", ep, err)
		}
	}
	switch ep.Kind {
	case cluster.Devnet:
		c.TEE = cs.teeURL("devnet-private")
	case cluster.Mainnet, cluster.Custom:
		c.TEE = cs.teeURL("mainnet-private")
	}
	if !custom {
		cs.mu.Lock()
		if prev, ok := cs.named[key]; ok {
			c = prev
		} else {
			cs.named[key] = c
		}
		cs.mu.Unlock()
	}
	return c, nil
}

// teeURL is the rollup of the TEE cluster name, the undelegation fallback
// of its kind: "" when the configuration leaves that cluster out (a
// deployment without its EPHEMERAL_*TEE_RPC_URL), as no default host is
// contacted in place of a configured one.
func (cs *Clusters) teeURL(name string) string {
	ep, err := cluster.Resolve(name, cs.overrides)
	if err != nil || ep.Problem != nil {
		return ""
	}
	return ep.Ephemeral
}

// configProblem is the hosted API's 500 CONFIG_ERROR for a cluster the
// configuration leaves out or mangles: details {issues:[{path,message}],
// hint}, as its worker reports a zod failure of its environment.
func configProblem(p *cluster.ConfigError) *apierr.Error {
	issues := make([]map[string]any, len(p.Issues))
	for i, is := range p.Issues {
		issues[i] = map[string]any{"path": []string{is.Var}, "message": is.Message}
	}
	return apierr.New(http.StatusInternalServerError, apierr.CodeConfig, p.Message).
		WithDetails(map[string]any{"issues": issues, "hint": p.Hint}).Wrap(p)
}

func configError(what string, ep cluster.Endpoints, err error) *apierr.Error {
	return apierr.New(http.StatusInternalServerError, apierr.CodeConfig,
		fmt.Sprintf("The %s of cluster=%s is not a valid http(s) URL", what, ep.Name)).Wrap(err)
}

// configured returns the long-lived client of a configured endpoint.
func (cs *Clusters) configured(raw string) (*chainclient.Cached, error) {
	u := normalizeURL(raw)
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if c, ok := cs.clients[u]; ok {
		return c, nil
	}
	c, err := cs.newClient(u)
	if err != nil {
		return nil, err
	}
	opts := cs.netCache
	if _, ok := cs.inProcess[u]; ok {
		opts = cs.cacheOpts
	}
	cc := chainclient.NewCached(c, opts)
	cs.clients[u] = cc
	return cc, nil
}

func (cs *Clusters) newClient(u string) (*chainclient.Client, error) {
	if h, ok := cs.inProcess[u]; ok {
		return chainclient.New(u, append(append([]chainclient.Option(nil), cs.opts...), chainclient.WithHandler(h))...)
	}
	return chainclient.New(u, cs.opts...)
}

// dynamicClient returns a client for a URL a request named: a configured
// or in-process endpoint when it is one, else a pooled client.
func (cs *Clusters) dynamicClient(raw string) (*chainclient.Cached, error) {
	u := normalizeURL(raw)
	cs.mu.Lock()
	c, ok := cs.clients[u]
	_, inproc := cs.inProcess[u]
	cs.mu.Unlock()
	if ok {
		return c, nil
	}
	if inproc {
		return cs.configured(u)
	}
	return cs.dynamic.Get(u)
}

// Dial is submit.Endpoints.Dial: a client for an explicit sendRpcEndpoint,
// which must be a configured or allowed endpoint, or a rollup node the
// router named (else 400 UPSTREAM_NOT_ALLOWED, without connecting).
func (cs *Clusters) Dial(u string) (*chainclient.Client, error) {
	if !cs.allow.Allows(u) && !cs.learned.has(normalizeURL(u)) {
		return nil, upstreamNotAllowed("sendRpcEndpoint", u)
	}
	c, err := cs.dynamicClient(u)
	if err != nil {
		return nil, err
	}
	return c.Client, nil
}

// SubmitEndpoints are the clients a send through this cluster uses. A
// bearer token goes only to the cluster's own rollup (see rollupToken).
func (c *Cluster) SubmitEndpoints() submit.Endpoints {
	return submit.Endpoints{Base: c.Base.Client, Ephemeral: c.Ephemeral.Client, Dial: c.cs.Dial, TokenAllowed: c.isRollup,
		FollowSettlement: c.Endpoints.Kind == cluster.Local}
}

// isRollup reports whether u is this cluster's rollup RPC: the only
// endpoint a request's (upstream) token is ever sent to.
func (c *Cluster) isRollup(u string) bool {
	return normalizeURL(u) == normalizeURL(c.Endpoints.Ephemeral)
}

// Chain returns the payments.Chain of one request. token is an inner
// bearer token the cluster's rollup issued and accepted (see
// rollupToken): rollup reads then use it (on a fresh, uncached client);
// otherwise they go through the shared cached clients. The token is sent
// nowhere else.
func (c *Cluster) Chain(token string) *Chain {
	ch := &Chain{cl: c}
	if token != "" && c.Endpoints.Kind != cluster.Local {
		ch.token = token
	}
	return ch
}

// Chain is a payments.Chain (plus payments.MintProgramResolver,
// payments.ERLocator and payments.EphemeralReader) over a Cluster's
// clients, for one request.
type Chain struct {
	cl    *Cluster
	token string
	eph   *chainclient.Client // the token-bearing ephemeral client
}

var (
	_ payments.Chain               = (*Chain)(nil)
	_ payments.MintProgramResolver = (*Chain)(nil)
	_ payments.ERLocator           = (*Chain)(nil)
	_ payments.EphemeralReader     = (*Chain)(nil)
)

func (c *Chain) ephemeral() *chainclient.Client {
	if c.eph == nil {
		c.eph = c.cl.Ephemeral.Client.WithToken(c.token)
	}
	return c.eph
}

// LatestBlockhash reads a "confirmed" blockhash of a layer (cached, except
// rollup reads with a TEE token).
func (c *Chain) LatestBlockhash(ctx context.Context, layer string) (payments.Blockhash, error) {
	var bh chainclient.Blockhash
	var err error
	switch {
	case layer != payments.Ephemeral:
		bh, err = c.cl.Base.GetLatestBlockhash(ctx, chainclient.Confirmed)
	case c.token != "":
		bh, err = c.ephemeral().GetLatestBlockhash(ctx, chainclient.Confirmed)
	default:
		bh, err = c.cl.Ephemeral.GetLatestBlockhash(ctx, chainclient.Confirmed)
	}
	return payments.Blockhash{Hash: bh.Hash, LastValidBlockHeight: bh.LastValidBlockHeight}, err
}

// Account reads a base-layer account ("confirmed").
func (c *Chain) Account(ctx context.Context, key solana.PublicKey) (*payments.Account, error) {
	return account(c.cl.Base.GetAccountInfo(ctx, key, chainclient.Confirmed))
}

func account(a *chainclient.Account, err error) (*payments.Account, error) {
	if err != nil || a == nil {
		return nil, err
	}
	return &payments.Account{Owner: a.Owner, Lamports: a.Lamports, Data: a.Data}, nil
}

// MintProgram returns the cached owner of a mint (payments.ErrNoAccount
// when missing): one getAccountInfo decides.
func (c *Chain) MintProgram(ctx context.Context, mint solana.PublicKey) (solana.PublicKey, error) {
	p, err := c.cl.Base.MintProgram(ctx, mint)
	if errors.Is(err, chainclient.ErrAccountNotFound) {
		return solana.PublicKey{}, payments.ErrNoAccount
	}
	return p, err
}

// Identity is the rollup validator's identity (getIdentity without token,
// cached after the first success).
func (c *Chain) Identity(ctx context.Context) (solana.PublicKey, error) {
	id, err := c.cl.Ephemeral.GetIdentity(ctx)
	return id.Identity, err
}

// EphemeralEndpoint is the rollup RPC URL, without token.
func (c *Chain) EphemeralEndpoint() string { return c.cl.Ephemeral.URL() }

// Cluster is the cluster kind.
func (c *Chain) Cluster() cluster.Kind { return c.cl.Endpoints.Kind }

// DelegationStatus asks the cluster's delegation router.
func (c *Chain) DelegationStatus(ctx context.Context, key solana.PublicKey) (bool, string, error) {
	if c.cl.Router == nil {
		return false, "", fmt.Errorf("No delegation router configured for cluster=%s", c.cl.Endpoints.Name)
	}
	st, err := c.cl.Router.GetDelegationStatus(ctx, key)
	if err != nil {
		var he *chainclient.HTTPError
		if errors.As(err, &he) {
			return false, "", fmt.Errorf("Delegation router returned HTTP %d", he.StatusCode)
		}
		var re *chainclient.RPCError
		if errors.As(err, &re) {
			return false, "", errors.New(re.Message)
		}
		return false, "", errors.New("Delegation router is unreachable")
	}
	return st.IsDelegated, st.FQDN, nil
}

// TEEEndpoint is the cluster's TEE rollup URL.
func (c *Chain) TEEEndpoint() string { return c.cl.TEE }

// LatestBlockhashAt reads a "confirmed" blockhash from the rollup node at
// u, with the request's token if it has one.
func (c *Chain) LatestBlockhashAt(ctx context.Context, u string) (payments.Blockhash, error) {
	cc, err := c.cl.cs.dynamicClient(u)
	if err != nil {
		return payments.Blockhash{}, err
	}
	// The router named this node: a send to it (sendRpcEndpoint) is fine.
	c.cl.cs.learned.add(normalizeURL(u))
	var bh chainclient.Blockhash
	if c.token != "" && c.cl.isRollup(u) {
		bh, err = cc.Client.WithToken(c.token).GetLatestBlockhash(ctx, chainclient.Confirmed)
	} else {
		bh, err = cc.GetLatestBlockhash(ctx, chainclient.Confirmed)
	}
	return payments.Blockhash{Hash: bh.Hash, LastValidBlockHeight: bh.LastValidBlockHeight}, err
}

// EphemeralAccount reads an account on the rollup ("confirmed").
func (c *Chain) EphemeralAccount(ctx context.Context, key solana.PublicKey) (*payments.Account, error) {
	if c.token != "" {
		return account(c.ephemeral().GetAccountInfo(ctx, key, chainclient.Confirmed))
	}
	return account(c.cl.Ephemeral.GetAccountInfo(ctx, key, chainclient.Confirmed))
}
