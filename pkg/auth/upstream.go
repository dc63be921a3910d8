package auth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ferry-sh/ferry/pkg/apierr"
)

// Defaults of the upstream token cache (Config.UpstreamVerifyTTL,
// Config.MaxUpstreamVerified).
const (
	// DefaultUpstreamVerifyTTL is how long a rollup's positive answer about
	// a token is reused before the rollup is asked again. A token the
	// rollup revokes can be used for at most this long through ferry.
	DefaultUpstreamVerifyTTL = 60 * time.Second
	// DefaultMaxUpstreamVerified bounds the remembered verifications;
	// beyond it the cache is cleared.
	DefaultMaxUpstreamVerified = 10_000
)

// ErrTokenRefused is what an upstream check returns (wrapped or not) when
// the rollup refused the token itself, as opposed to failing to answer.
var ErrTokenRefused = errors.New("the rollup refused the auth token")

// upstreamCache remembers positive upstream verifications per (rollup,
// token), until the earlier of the TTL and the token's own expiry.
type upstreamCache struct {
	mu  sync.Mutex
	ttl time.Duration
	max int
	m   map[upstreamKey]upstreamEntry
}

type upstreamKey struct {
	endpoint string
	token    [sha256.Size]byte
}

type upstreamEntry struct {
	until time.Time
}

// upstreamShape is what a rollup's token (a JWT from the TEE's Query
// Filtering Service) says about itself. Nothing here is trusted until the
// rollup accepted the token.
type upstreamShape struct {
	subject string
	expires time.Time // zero when the token has no exp
}

// peekUpstream refuses, without asking anyone, what no rollup issues: a
// string that is not a JWT, an unsigned JWT (alg none), an expired one.
func peekUpstream(tok string, now time.Time) (upstreamShape, error) {
	refuse := func(why string) (upstreamShape, error) {
		return upstreamShape{}, apierr.New(http.StatusUnauthorized, CodeInvalidAuthToken, why)
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 || parts[2] == "" {
		return refuse("auth token is not a token this cluster's rollup issues; login again")
	}
	hb, err1 := b64.DecodeString(parts[0])
	cb, err2 := b64.DecodeString(parts[1])
	var h struct {
		Alg string `json:"alg"`
	}
	var c struct {
		Sub string          `json:"sub"`
		Exp json.RawMessage `json:"exp"`
	}
	if err1 != nil || err2 != nil || json.Unmarshal(hb, &h) != nil || json.Unmarshal(cb, &c) != nil {
		return refuse("auth token is not a token this cluster's rollup issues; login again")
	}
	if h.Alg == "" || strings.EqualFold(h.Alg, "none") {
		return refuse("unsigned auth tokens (alg none) are refused; login again")
	}
	var out upstreamShape
	if len(c.Exp) > 0 && string(c.Exp) != "null" {
		var exp float64
		if json.Unmarshal(c.Exp, &exp) != nil {
			return refuse("auth token has an invalid expiry; login again")
		}
		out.expires = time.Unix(int64(exp), 0)
		if !now.Before(out.expires) {
			return refuse("auth token expired; login again")
		}
	}
	if isBase58Identity(c.Sub) {
		out.subject = c.Sub
	}
	return out, nil
}

// VerifyUpstream verifies a token issued by the rollup (TEE) at endpoint,
// which only that rollup can check: check asks it (a JSON-RPC call with
// the token as ?token=) and returns ErrTokenRefused when it refuses the
// token. Before asking, tokens no rollup issues are refused here (not a
// JWT, alg none, expired, a binding that contradicts the token's
// subject). A positive answer is reused for UpstreamVerifyTTL (at most
// until the token expires). The returned Bearer is Verified and Upstream,
// with the token's subject as Identity when it has one.
//
// Failures: 401 INVALID_AUTH_TOKEN when the token is refused, 502
// RPC_ERROR when the rollup could not be asked.
func (s *Service) VerifyUpstream(ctx context.Context, endpoint string, b Bearer, check func(context.Context) error) (Bearer, error) {
	if !b.OK() {
		return b, nil
	}
	now := s.now()
	shape, err := peekUpstream(b.Token, now)
	if err != nil {
		return b, err
	}
	if shape.subject != "" {
		if b.Identity != "" && b.Identity != shape.subject {
			return b, apierr.New(http.StatusUnauthorized, CodeInvalidAuthToken, "auth token was issued to another wallet; login again")
		}
		b.Identity = shape.subject
	}
	key := upstreamKey{endpoint: endpoint, token: sha256.Sum256([]byte(b.Token))}
	if !s.upstreamCache.fresh(key, now) {
		if err := check(ctx); err != nil {
			if errors.Is(err, ErrTokenRefused) {
				return b, apierr.New(http.StatusUnauthorized, CodeInvalidAuthToken, "the rollup refused the auth token; login again")
			}
			return b, apierr.New(http.StatusBadGateway, apierr.CodeRPC, "Failed to verify the auth token with the rollup").Wrap(err)
		}
		until := now.Add(s.upstreamCache.ttl)
		if !shape.expires.IsZero() && shape.expires.Before(until) {
			until = shape.expires
		}
		s.upstreamCache.put(key, until)
	}
	b.Verified, b.Upstream = true, true
	return b, nil
}

func (c *upstreamCache) fresh(k upstreamKey, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if ok && now.Before(e.until) {
		return true
	}
	if ok {
		delete(c.m, k)
	}
	return false
}

func (c *upstreamCache) put(k upstreamKey, until time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.max {
		clear(c.m)
	}
	c.m[k] = upstreamEntry{until: until}
}
