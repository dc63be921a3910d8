package chainclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// Defaults for a new Client.
const (
	// DefaultTimeout bounds one request whose context has no deadline.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxResponseBytes bounds a response body. getMultipleAccounts of
	// 100 large accounts fits comfortably.
	DefaultMaxResponseBytes = 64 << 20
)

// Client is a JSON-RPC 2.0 client for one endpoint. It is safe for
// concurrent use; create it with New.
type Client struct {
	endpoint string // as given, token removed; see URL
	token    string
	reqURL   string // endpoint with ?token=
	redacted string // reqURL with secrets masked, for messages

	hc       *http.Client
	timeout  time.Duration
	maxBytes int64
	agent    string
	ids      *atomic.Uint64
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient makes the client send requests through hc (for custom
// transports, proxies or tests). The default is a client sharing
// http.DefaultTransport. When hc has no CheckRedirect of its own the
// client uses a copy of it with SameOriginRedirects.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// MaxRedirects bounds the redirects one request follows (all of them to
// the same origin; see SameOriginRedirects).
const MaxRedirects = 3

// SameOriginRedirects is the redirect policy of every Client (an
// http.Client CheckRedirect): a redirect is followed only to the same
// scheme, host and port as the original request, at most MaxRedirects
// times. A redirect elsewhere is not followed: the caller sees the 3xx
// reply as an *HTTPError. An endpoint the server was allowed to reach must
// not be able to send it elsewhere (a 303 to an internal address, say),
// or carry a ?token= there.
func SameOriginRedirects(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || !strings.EqualFold(req.URL.Host, first.Host) {
		return http.ErrUseLastResponse
	}
	if len(via) > MaxRedirects {
		return fmt.Errorf("stopped after %d redirects", MaxRedirects)
	}
	return nil
}

// WithTimeout bounds each request whose context has no deadline; 0 means no
// bound. The default is DefaultTimeout.
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// WithMaxResponseBytes bounds the size of a response body.
func WithMaxResponseBytes(n int64) Option { return func(c *Client) { c.maxBytes = n } }

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option { return func(c *Client) { c.agent = ua } }

// New returns a client for the http(s) endpoint rawURL. A token already in the
// URL's query is kept (and redacted in messages); see WithToken.
func New(rawURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("create RPC client: %q is not an http(s) URL", RedactURL(rawURL))
	}
	q := u.Query()
	token := q.Get("token")
	q.Del("token")
	u.RawQuery = q.Encode()
	c := &Client{
		endpoint: u.String(),
		hc:       &http.Client{CheckRedirect: SameOriginRedirects},
		timeout:  DefaultTimeout,
		maxBytes: DefaultMaxResponseBytes,
		agent:    "ferry",
		ids:      new(atomic.Uint64),
	}
	for _, o := range opts {
		o(c)
	}
	if c.hc.CheckRedirect == nil {
		hc := *c.hc
		hc.CheckRedirect = SameOriginRedirects
		c.hc = &hc
	}
	c.setToken(token)
	return c, nil
}

func (c *Client) setToken(token string) {
	c.token = token
	c.reqURL = c.endpoint
	if token != "" {
		u, _ := url.Parse(c.endpoint) // parsed successfully in New
		q := u.Query()
		q.Set("token", token)
		u.RawQuery = q.Encode()
		c.reqURL = u.String()
	}
	c.redacted = RedactURL(c.reqURL)
}

// WithToken returns a copy of c that adds ?token=<token> to every request,
// as TEE rollups require (the hosted API does new URL(rpc) and
// searchParams.set("token", t)). An empty token removes it. The copy shares
// c's HTTP client and request ids.
func (c *Client) WithToken(token string) *Client {
	cp := *c
	cp.setToken(token)
	return &cp
}

// URL is the endpoint without its token: safe to log or to return to API
// callers (confirmationRpcEndpoint).
func (c *Client) URL() string { return c.endpoint }

// HasToken reports whether requests carry a ?token= query parameter.
func (c *Client) HasToken() bool { return c.token != "" }

// String is the endpoint with secrets redacted.
func (c *Client) String() string { return c.redacted }

// RPCError is a JSON-RPC error object returned by the server.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("RPC %d: %s", e.Code, e.Message) }

// CodeAccessDenied is the JSON-RPC error a rollup that filters reads (a
// TEE rollup, or ferry's local one) answers for a private account read
// without the token of a wallet allowed to see it.
const CodeAccessDenied = -32090

// IsAccessDenied reports whether err is a read the node refused because
// the account is private (CodeAccessDenied).
func IsAccessDenied(err error) bool {
	var re *RPCError
	return errors.As(err, &re) && re.Code == CodeAccessDenied
}

// HTTPError is a non-2xx HTTP reply that carried no JSON-RPC error object
// (rate limiting, a proxy error page, a 503 during maintenance). Its
// message names only the status: the body is the upstream's, and error
// messages end up in API responses.
type HTTPError struct {
	StatusCode int
	// Body is the start of the response body, for diagnostics; it is not
	// part of the message.
	Body string
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("upstream answered HTTP %d %s", e.StatusCode, http.StatusText(e.StatusCode))
}

// UnreachableMessage is the message of every TransportError.
const UnreachableMessage = "upstream unreachable"

// TransportError means the request did not complete: the server could not
// be reached, the connection broke, or the context ended. Its message is
// always UnreachableMessage, whatever the cause (refused, timed out, no
// such host), so that an API reporting it cannot be used to scan ports;
// the cause is Err (errors.Is/As see it).
type TransportError struct{ Err error }

func (e *TransportError) Error() string { return UnreachableMessage }
func (e *TransportError) Unwrap() error { return e.Err }

// ResponseError is a reply that is not a JSON-RPC response (an HTML error
// page, say). Its message does not quote the body.
type ResponseError struct {
	// Body is the start of the response body, for diagnostics.
	Body string
	Err  error
}

func (e *ResponseError) Error() string {
	return "upstream answered something that is not a JSON-RPC response"
}
func (e *ResponseError) Unwrap() error { return e.Err }

// request is the JSON-RPC request envelope.
type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      uint64          `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// response is the JSON-RPC response envelope.
type response struct {
	Result json.RawMessage `json:"result"`
	Error  *RPCError       `json:"error"`
}

// Call invokes method with params (a value marshalled to the params array;
// nil sends []) and decodes the result into result (nil discards it). A JSON
// null result leaves result untouched.
func (c *Client) Call(ctx context.Context, method string, params any, result any) error {
	raw, err := c.CallRaw(ctx, method, params)
	if err != nil {
		return err
	}
	if result == nil {
		return nil
	}
	if err := json.Unmarshal(raw, result); err != nil {
		return c.errorf(method, "decode result: %w", err)
	}
	return nil
}

// CallRaw invokes method and returns the raw JSON of the result ("null" when
// the server sent none). A JSON-RPC error comes back wrapped around a
// *RPCError. params may be a json.RawMessage to send verbatim.
func (c *Client) CallRaw(ctx context.Context, method string, params any) (json.RawMessage, error) {
	var p json.RawMessage
	switch v := params.(type) {
	case nil:
		p = json.RawMessage("[]")
	case json.RawMessage:
		p = v
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, c.errorf(method, "encode params: %w", err)
		}
		p = b
	}
	if len(p) == 0 || isNull(p) {
		p = json.RawMessage("[]") // a nil slice or RawMessage: no params
	}
	body, err := json.Marshal(request{JSONRPC: "2.0", ID: c.ids.Add(1), Method: method, Params: p})
	if err != nil {
		return nil, c.errorf(method, "encode request: %w", err)
	}
	if c.timeout > 0 {
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, c.timeout)
			defer cancel()
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.reqURL, bytes.NewReader(body))
	if err != nil {
		return nil, c.errorf(method, "build request: %w", stripURL(err))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.agent != "" {
		req.Header.Set("User-Agent", c.agent)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, c.errorf(method, "%w", &TransportError{Err: stripURL(err)})
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBytes+1))
	if err != nil {
		return nil, c.errorf(method, "read response: %w", &TransportError{Err: stripURL(err)})
	}
	if int64(len(data)) > c.maxBytes {
		return nil, c.errorf(method, "response larger than %d bytes", c.maxBytes)
	}
	var env response
	jerr := json.Unmarshal(data, &env)
	if jerr == nil && env.Error != nil {
		return nil, c.errorf(method, "%w", env.Error)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, c.errorf(method, "%w", &HTTPError{StatusCode: resp.StatusCode, Body: snippet(data)})
	}
	if jerr != nil {
		return nil, c.errorf(method, "decode response: %w", &ResponseError{Body: snippet(data), Err: jerr})
	}
	if len(env.Result) == 0 {
		env.Result = json.RawMessage("null")
	}
	return env.Result, nil
}

// errorf wraps an error with the method and the redacted endpoint.
func (c *Client) errorf(method, format string, args ...any) error {
	return fmt.Errorf("%s at %s: %w", method, c.redacted, fmt.Errorf(format, args...))
}

// stripURL removes the *url.Error wrapper net/http puts around transport
// errors: its message repeats the request URL, token included.
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func snippet(b []byte) string {
	const max = 200
	s := strings.TrimSpace(string(b))
	if len(s) > max {
		s = s[:max] + "…"
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

// isSecretParam reports whether RedactURL masks the query parameter k. RPC
// providers put credentials in the query string under these names.
func isSecretParam(k string) bool {
	switch strings.ToLower(k) {
	case "token", "api-key", "api_key", "apikey", "access_token", "key":
		return true
	}
	return false
}

// RedactURL returns rawURL with credentials masked: the password of any
// user info and the values of token, api-key and similar query parameters
// become "REDACTED". A string that does not parse loses everything from
// its first '?'.
func RedactURL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		s, _, _ := strings.Cut(rawURL, "?")
		return s
	}
	if u.RawQuery != "" {
		q, err := url.ParseQuery(u.RawQuery)
		if err != nil {
			u.RawQuery = "REDACTED"
		} else {
			changed := false
			for k := range q {
				if isSecretParam(k) {
					q[k] = []string{"REDACTED"}
					changed = true
				}
			}
			if changed {
				u.RawQuery = q.Encode()
			}
		}
	}
	return u.Redacted()
}
