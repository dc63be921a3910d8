package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/auth"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/cluster"
)

// newAllowList is the outbound allow-list of cfg: the operator's patterns
// plus every endpoint the server is configured with.
func newAllowList(cfg ClustersConfig, def string) (*cluster.AllowList, error) {
	trusted := append([]string(nil), cfg.TrustedUpstreams...)
	for u := range cfg.InProcess {
		trusted = append(trusted, u)
	}
	names := append(cluster.Names(), def)
	for _, n := range names {
		ep, err := cluster.Resolve(n, cfg.Overrides)
		if err != nil || ep.Problem != nil {
			continue // an unconfigured cluster's defaults are not the operator's
		}
		trusted = append(trusted, ep.BaseRPC, ep.Ephemeral, ep.Router, ep.CrankRPC())
	}
	a, err := cluster.NewAllowList(cfg.AllowUpstream, trusted...)
	if err != nil {
		return nil, apierr.New(http.StatusInternalServerError, apierr.CodeConfig, err.Error())
	}
	return a, nil
}

// upstreamNotAllowed is the 400 for a request field naming an endpoint
// the server may not contact. details name the field and the host (never
// the path or query, which may hold keys).
func upstreamNotAllowed(field, rawURL string) *apierr.Error {
	return apierr.BadRequest(apierr.CodeUpstreamNotAllowed,
		fmt.Sprintf("%s names an endpoint this server is not allowed to contact: use mainnet, devnet, mainnet-private, devnet-private or local, "+
			"or ask the operator to allow it (ferry serve --allow-upstream)", field)).
		WithDetails(map[string]any{"field": field, "host": cluster.Host(rawURL)})
}

// learnedURLs are rollup URLs the configured router named (undelegation
// endpoints), which a later send may target. Bounded; oldest out.
type learnedURLs struct {
	mu    sync.Mutex
	max   int
	set   map[string]bool
	order []string
}

func (l *learnedURLs) add(u string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.set == nil {
		l.set = map[string]bool{}
	}
	if l.set[u] {
		return
	}
	max := l.max
	if max <= 0 {
		max = chainclient.DefaultPoolSize
	}
	for len(l.order) >= max {
		delete(l.set, l.order[0])
		l.order = l.order[1:]
	}
	l.set[u] = true
	l.order = append(l.order, u)
}

func (l *learnedURLs) has(u string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.set[u]
}

// HealthCheck reports whether the ledger behind an endpoint accepts
// writes.
type HealthCheck struct {
	// Name labels it in GET /health ("base ledger").
	Name string
	// Check is nil while the ledger accepts writes, else why it does not.
	Check func() error
}

// HealthStatus is the state of one checked component.
type HealthStatus struct {
	Name   string `json:"name" doc:"The component (base ledger, ephemeral ledger)."`
	Status string `json:"status" validate:"enum=ok|halted" doc:"ok, or halted when it stopped accepting writes."`
	Reason string `json:"reason,omitempty" doc:"Why it halted."`
}

// Health runs every registered check, sorted by name.
func (cs *Clusters) Health() []HealthStatus {
	out := make([]HealthStatus, 0, len(cs.health))
	for _, hc := range cs.health {
		st := HealthStatus{Name: hc.Name, Status: HealthOK}
		if err := hc.Check(); err != nil {
			st.Status, st.Reason = HealthHalted, err.Error()
		}
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Writable is nil when every ledger behind the cluster's base and rollup
// endpoints accepts writes, else 503 LEDGER_HALTED: a transaction built
// or sent now could never land.
func (c *Cluster) Writable() error {
	for _, u := range []string{c.Endpoints.BaseRPC, c.Endpoints.Ephemeral} {
		hc, ok := c.cs.health[normalizeURL(u)]
		if !ok {
			continue
		}
		if err := hc.Check(); err != nil {
			return apierr.New(http.StatusServiceUnavailable, apierr.CodeLedgerHalted,
				fmt.Sprintf("The %s of cluster=%s stopped accepting writes; nothing built or sent now could land. "+
					"The operator must fix the cause (see GET /health) and restart the server", hc.Name, c.Endpoints.Name)).
				WithDetails(map[string]any{"ledger": hc.Name}).Wrap(err)
		}
	}
	return nil
}

// Audience is the aud claim of the tokens this server issues for the
// cluster, so that a token works only on the cluster it was issued for:
// the cluster's name ("local", "devnet", ...), or "custom" for a custom
// base RPC URL (which may hold an API key and shares mainnet's rollup).
func (c *Cluster) Audience() string {
	if c.Endpoints.Kind == cluster.Custom {
		return string(cluster.Custom)
	}
	return c.Endpoints.Name
}

// UpstreamVerifyMethod is the JSON-RPC method the API calls on a TEE
// rollup, with the token as ?token=, to have the rollup verify a token it
// issued: a TEE answers it only for a valid token.
const UpstreamVerifyMethod = "getSlot"

// rollupRefusal reports whether err is a rollup refusing a token: HTTP
// 401/403, or a JSON-RPC error with the words MagicBlock's auth filter
// uses (payments-api.md §5.8).
func rollupRefusal(err error) bool {
	var he *chainclient.HTTPError
	if errors.As(err, &he) {
		return he.StatusCode == http.StatusUnauthorized || he.StatusCode == http.StatusForbidden
	}
	var re *chainclient.RPCError
	if errors.As(err, &re) {
		m := strings.ToLower(re.Message)
		for _, w := range []string{"missing token", "invalidtoken", "invalid token", "unauthorized", "access denied"} {
			if strings.Contains(m, w) {
				return true
			}
		}
	}
	return false
}

// VerifyToken verifies the bearer token of a request on cluster cl. A
// token this server issued is checked here (signature, expiry, the
// cluster's audience, the binding). On a cluster whose rollup runs an auth
// service (every cluster but the local one: the TEEs, and any rollup
// whose login Login proxied) any other token is the rollup's own and the
// rollup checks it (UpstreamVerifyMethod, answers cached by
// auth.Service.VerifyUpstream); what no rollup issues (an opaque string,
// the mock token, alg none, an expired JWT) is refused without asking. On
// the local cluster it is refused. Without a well-formed token b comes
// back unchanged (callers decide whether one is required). Failures are
// 401 INVALID_AUTH_TOKEN (or 502 when the rollup could not be asked).
func (s *Service) VerifyToken(ctx context.Context, cl *Cluster, b auth.Bearer) (auth.Bearer, error) {
	if !b.OK() {
		return b, nil
	}
	if auth.IsFerryToken(b.Token) || cl.Endpoints.Kind == cluster.Local {
		return s.auth.AuthenticateFor(b, cl.Audience())
	}
	return s.auth.VerifyUpstream(ctx, normalizeURL(cl.Endpoints.Ephemeral), b, func(ctx context.Context) error {
		err := cl.Ephemeral.Client.WithToken(b.Token).Call(ctx, UpstreamVerifyMethod, nil, nil)
		if rollupRefusal(err) {
			return fmt.Errorf("%w: %v", auth.ErrTokenRefused, err)
		}
		return err
	})
}

// rollupToken is the token a verified bearer may carry to the cluster's
// rollup: only a token that rollup issued (and accepted). A ferry token
// never leaves the process. The token goes to that rollup (its RPC, the
// sends addressed to it) and nowhere else.
func rollupToken(b auth.Bearer) string {
	if b.Verified && b.Upstream {
		return b.Token
	}
	return ""
}

// Health values.
const (
	HealthOK     = "ok"
	HealthHalted = "halted"
)

// VerifyIssued checks a token this server issued for audience (a
// cluster, see Cluster.Audience) and returns the wallet it was issued to:
// how ferry's own rollup (localnet.Pair.SetTokenVerifier) checks the
// ?token= of its readers.
//
// token may be the login response's "<wallet>.<token>" form as well as
// the bare token: what a client holds after POST /v1/spl/login works as
// the rollup's ?token= without unwrapping, and a wallet prefix that is not
// the token's subject is refused.
func (s *Service) VerifyIssued(token, audience string) (string, error) {
	prefix, inner := auth.SplitToken(token)
	c, err := s.auth.VerifyFor(inner, audience)
	if err != nil {
		return "", err
	}
	if prefix != "" && prefix != c.Subject {
		return "", fmt.Errorf("the token is bound to %s, not %s", c.Subject, prefix)
	}
	return c.Subject, nil
}
