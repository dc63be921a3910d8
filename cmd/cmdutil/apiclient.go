package cmdutil

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/chainclient"
)

// APIClient calls a payments HTTP API: a running `ferry serve` or the
// hosted payments.magicblock.app. Error responses come back as
// *apierr.Error values (so the CLI prints their code); a server that
// cannot be reached is a *chainclient.TransportError (see ReachError).
type APIClient struct {
	// Base is the API's root URL ("http://127.0.0.1:8080").
	Base string
	// HTTP is the client used (default: one with a 30 s timeout).
	HTTP *http.Client
	// Token, if set, is sent as "Authorization: Bearer <Token>".
	Token string
}

// NewAPIClient returns a client for the API at base.
func NewAPIClient(base string) (*APIClient, error) {
	u, err := url.Parse(strings.TrimSpace(base))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, UsageErrorf("payments API URL %q is not an http(s) URL", base)
	}
	return &APIClient{Base: strings.TrimRight(u.String(), "/"), HTTP: &http.Client{Timeout: 30 * time.Second}}, nil
}

// Get calls GET path?query and decodes the JSON answer into out.
func (c *APIClient) Get(ctx context.Context, path string, query url.Values, out any) error {
	u := c.Base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	return c.do(ctx, http.MethodGet, u, nil, out)
}

// Post calls POST path with body as JSON and decodes the answer into out.
func (c *APIClient) Post(ctx context.Context, path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("POST %s: encode body: %w", path, err)
	}
	return c.do(ctx, http.MethodPost, c.Base+path, b, out)
}

func (c *APIClient) do(ctx context.Context, method, u string, body []byte, out any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, chainclient.RedactURL(u), err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return &chainclient.TransportError{Err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return &chainclient.TransportError{Err: err}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		var env apierr.Envelope
		if json.Unmarshal(data, &env) == nil && env.Error != nil && env.Error.Code != "" {
			env.Error.Status = resp.StatusCode
			return env.Error
		}
		return &chainclient.HTTPError{StatusCode: resp.StatusCode, Body: snippet(data)}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: decode answer: %w", method, req.URL.Path, err)
	}
	return nil
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
