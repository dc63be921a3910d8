package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ferry-sh/ferry/pkg/apierr"
)

// DefaultUpstreamTimeout bounds one call to a TEE auth service.
const DefaultUpstreamTimeout = 5 * time.Second

// MockChallenge is the challenge returned when the rollup has no auth
// service (it answers JSON-RPC): "MOCK: " + the usual text, with an
// ISO-8601 timestamp as the hosted API writes it.
func MockChallenge(pubkey string, t time.Time) string {
	return "MOCK: " + ChallengeTitle + "\nTimestamp: " + t.UTC().Format("2006-01-02T15:04:05.000Z") + "\nUser: " + pubkey
}

// ProxyChallenge asks the auth service of the TEE rollup at rpcURL for a
// challenge (GET <rpcURL>/auth/challenge?pubkey=…), with the hosted API's
// outcomes: a non-TEE rollup (2xx JSON-RPC answer) gives the mock
// challenge; an upstream error string is 502 RPC_ERROR; a non-2xx status is
// passed through (429 for rate limits); a timeout is 504.
func (s *Service) ProxyChallenge(ctx context.Context, rpcURL, pubkey string) (*ChallengeResponse, error) {
	c, none, err := s.upstreamChallenge(ctx, rpcURL, pubkey, false)
	if err != nil {
		return nil, err
	}
	if none {
		return &ChallengeResponse{Challenge: MockChallenge(pubkey, s.now())}, nil
	}
	return &ChallengeResponse{Challenge: c}, nil
}

// ChallengeVia is the challenge of a cluster whose rollup at rpcURL is
// not a TEE but may run an auth service, as the hosted API asks every
// rollup: the rollup's own challenge when it has a service (outcomes as
// ProxyChallenge). A rollup without one (a 2xx JSON-RPC answer, or 404 or
// 405: no such route, as on ferry's own chain nodes) leaves this server
// as the authority: it issues the challenge itself (Challenge), and
// LoginVia checks it and issues a token that works, where the hosted API
// hands out a mock token nobody checks.
func (s *Service) ChallengeVia(ctx context.Context, rpcURL, pubkey string) (*ChallengeResponse, error) {
	c, none, err := s.upstreamChallenge(ctx, rpcURL, pubkey, true)
	if err != nil {
		return nil, err
	}
	if none {
		return &ChallengeResponse{Challenge: s.Challenge(pubkey)}, nil
	}
	return &ChallengeResponse{Challenge: c}, nil
}

// upstreamChallenge asks the rollup's auth service; none reports a rollup
// without one.
func (s *Service) upstreamChallenge(ctx context.Context, rpcURL, pubkey string, noRouteIsNone bool) (challenge string, none bool, err error) {
	u, err := authURL(rpcURL, "challenge")
	if err != nil {
		return "", false, err
	}
	q := u.Query()
	q.Set("pubkey", pubkey)
	u.RawQuery = q.Encode()
	var out struct {
		Challenge string `json:"challenge"`
		Error     any    `json:"error"`
	}
	none, err = s.call(ctx, http.MethodGet, u.String(), nil, &out, "Failed to get challenge", noRouteIsNone)
	if err != nil || none {
		return "", none, err
	}
	if msg := errorText(out.Error); msg != "" {
		return "", false, upstreamError(http.StatusBadGateway, "Failed to get challenge: "+msg)
	}
	if out.Challenge == "" {
		return "", false, upstreamError(http.StatusBadGateway, "No challenge received")
	}
	return out.Challenge, false, nil
}

// ProxyLogin forwards a signed challenge to the TEE rollup's auth service
// (POST <rpcURL>/auth/login) and binds the token it returns to the wallet.
// A non-TEE rollup gives "<pubkey>.mock-auth-token".
func (s *Service) ProxyLogin(ctx context.Context, rpcURL string, req *LoginRequest) (*LoginResponse, error) {
	u, err := authURL(rpcURL, "login")
	if err != nil {
		return nil, err
	}
	body, _ := json.Marshal(map[string]string{"pubkey": req.Pubkey, "challenge": req.Challenge, "signature": req.Signature})
	var out struct {
		Token     string `json:"token"`
		ExpiresAt *int64 `json:"expiresAt"`
		Error     any    `json:"error"`
	}
	mock, err := s.call(ctx, http.MethodPost, u.String(), body, &out, "Failed to login", false)
	if err != nil {
		return nil, err
	}
	if mock {
		return &LoginResponse{Token: Bind(req.Pubkey, MockToken)}, nil
	}
	if msg := errorText(out.Error); msg != "" {
		return nil, upstreamError(http.StatusBadGateway, "Failed to login: "+msg)
	}
	if out.Token == "" {
		return nil, upstreamError(http.StatusBadGateway, "No token received")
	}
	return &LoginResponse{Token: Bind(req.Pubkey, out.Token), ExpiresAt: out.ExpiresAt}, nil
}

// LoginVia is the login of a cluster whose rollup at rpcURL is not a TEE
// (see ChallengeVia): a challenge this server issued is checked here and
// answered with a token of this server for audience (LoginFor); any other
// goes to the rollup's auth service as ProxyLogin sends it, whose token is
// then that rollup's to check.
func (s *Service) LoginVia(ctx context.Context, rpcURL, audience string, req *LoginRequest) (*LoginResponse, error) {
	if s.Issued(req.Challenge) {
		return s.LoginFor(audience, req.Pubkey, req.Challenge, req.Signature)
	}
	return s.ProxyLogin(ctx, rpcURL, req)
}

func authURL(rpcURL, op string) (*url.URL, error) {
	u, err := url.Parse(rpcURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, apierr.New(http.StatusInternalServerError, apierr.CodeConfig, "The ephemeral RPC endpoint is not an http(s) URL")
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/auth/" + op
	u.RawPath = ""
	u.RawQuery = ""
	return u, nil
}

func upstreamError(status int, msg string) *apierr.Error {
	return apierr.New(status, apierr.CodeRPC, apierr.RedactURLs(msg))
}

// call performs one upstream request. mock reports a 2xx JSON answer with
// a "jsonrpc" key: the rollup is a plain ER without an auth service; with
// noRouteIsNone, so does a 404 or 405 (a node without the route).
func (s *Service) call(ctx context.Context, method, u string, body []byte, out any, what string, noRouteIsNone bool) (mock bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, s.upstream)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return false, upstreamError(http.StatusBadGateway, what+": the auth endpoint is not a valid URL").Wrap(err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			return false, apierr.New(http.StatusGatewayTimeout, apierr.CodeRPC, "Auth endpoint timed out")
		}
		// The cause (logged, never returned) names the host; the client
		// only learns that the auth service could not be reached.
		return false, upstreamError(http.StatusBadGateway, what+": auth endpoint unreachable").Wrap(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		if ctx.Err() != nil {
			return false, apierr.New(http.StatusGatewayTimeout, apierr.CodeRPC, "Auth endpoint timed out")
		}
		return false, upstreamError(http.StatusBadGateway, what+": auth endpoint unreachable").Wrap(err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		if noRouteIsNone && (resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed) {
			return true, nil
		}
		status := resp.StatusCode
		low := strings.ToLower(string(data))
		if strings.Contains(low, "429") && strings.Contains(low, "too many requests") {
			// A rate limit reported in the body of another status (the
			// TEE's "Unexpected Range status: 429 Too Many Requests" in a
			// 400) is a rate limit, and says so.
			status = http.StatusTooManyRequests
		}
		if status < 400 || status > 599 {
			status = http.StatusBadGateway
		}
		return false, upstreamError(status, what+": "+statusText(status, resp.StatusCode))
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		return false, upstreamError(http.StatusBadGateway, what+": the auth service did not answer JSON")
	}
	if _, ok := probe["jsonrpc"]; ok {
		return true, nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return false, upstreamError(http.StatusBadGateway, what+": the auth service answered an unexpected JSON shape").Wrap(err)
	}
	return false, nil
}

// statusText names the answer: the mapped status's text when the status
// was mapped to 429 or 502, else the upstream's own.
func statusText(mapped, upstream int) string {
	if mapped == http.StatusTooManyRequests || upstream < 400 || upstream > 599 {
		return http.StatusText(mapped)
	}
	return http.StatusText(upstream)
}

// errorText renders the upstream "error" field: a string, or an object's
// message.
func errorText(v any) string {
	switch e := v.(type) {
	case string:
		return e
	case map[string]any:
		if m, ok := e["message"].(string); ok && m != "" {
			return m
		}
		b, _ := json.Marshal(e)
		return string(b)
	}
	return ""
}
