// Package httpguard is what every listener of `ferry serve` puts between
// the network and its handlers: the chain nodes' CORS policy, the browser
// origin check of local-only methods, and a listener that caps open
// connections.
package httpguard

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// CORSMaxAge is how long (seconds) a browser may cache a preflight answer:
// Agave's JSON-RPC service sets 86400.
const CORSMaxAge = 86400

// CORSAllowHeaders are the request headers a preflight allows when it does
// not name any: what @solana/web3.js (solana-client), @solana/kit and
// common fetch wrappers send. A preflight that names headers gets them
// back, as Agave's server (jsonrpc-http-server with any header allowed)
// does.
const CORSAllowHeaders = "Content-Type, Accept, Authorization, Solana-Client, X-Requested-With"

// CORSAllowMethods are the methods a preflight allows: POST for JSON-RPC,
// GET for /health.
const CORSAllowMethods = "POST, GET, OPTIONS"

// maxRequestHeaders bounds the Access-Control-Request-Headers value echoed
// back; a longer list gets the fixed CORSAllowHeaders.
const maxRequestHeaders = 1024

// AnyOrigin wraps h with the CORS policy of a Solana JSON-RPC node (Agave's
// rpc_service: any origin): every response carries
// Access-Control-Allow-Origin: *, and preflight requests (OPTIONS) are
// answered 200 with the allowed methods, the requested headers and
// CORSMaxAge without reaching h. Credentials are never allowed, so a page
// can call the node but never with the user's cookies.
func AnyOrigin(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hdr := w.Header()
		hdr.Set("Access-Control-Allow-Origin", "*")
		if r.Method != http.MethodOptions {
			h.ServeHTTP(w, r)
			return
		}
		hdr.Set("Access-Control-Allow-Methods", CORSAllowMethods)
		hdr.Set("Access-Control-Allow-Headers", allowHeaders(r.Header.Get("Access-Control-Request-Headers")))
		hdr.Add("Vary", "Access-Control-Request-Headers")
		hdr.Set("Access-Control-Max-Age", strconv.Itoa(CORSMaxAge))
		hdr.Set("Allow", CORSAllowMethods)
		hdr.Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
	})
}

// allowHeaders echoes a well-formed Access-Control-Request-Headers list
// (header names separated by commas), else the fixed list.
func allowHeaders(req string) string {
	if req == "" || len(req) > maxRequestHeaders {
		return CORSAllowHeaders
	}
	for _, name := range strings.Split(req, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			return CORSAllowHeaders
		}
		for i := 0; i < len(name); i++ {
			if !isTokenChar(name[i]) {
				return CORSAllowHeaders
			}
		}
	}
	return req
}

// isTokenChar reports an RFC 9110 token character (a header name's).
func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// BrowserOrigin reports whether a browser sent r, and from which origin.
// A browser adds Origin to every cross-origin request and to every POST,
// and Sec-Fetch-Site to every request; non-browser clients (curl, Node
// SDKs, the ferry CLI) send neither (Node's fetch sends only
// Sec-Fetch-Mode, which does not count). A request with Sec-Fetch-Site but
// no Origin returns "" as the origin, which only "*" allows.
func BrowserOrigin(r *http.Request) (origin string, browser bool) {
	origin = r.Header.Get("Origin")
	if origin != "" {
		return origin, true
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "none" {
		return "", true
	}
	return "", false
}

// Origins is an allow-list of browser origins, as given to
// `ferry serve --allow-origin`: "scheme://host[:port]", "null" (sandboxed
// pages, file: URLs) or "*" (any origin).
type Origins struct {
	any  bool
	list []string
}

// ParseOrigins checks and normalizes an allow-list (ParseOrigin for each).
func ParseOrigins(vals []string) (Origins, error) {
	var o Origins
	for _, v := range vals {
		n, err := ParseOrigin(v)
		if err != nil {
			return Origins{}, err
		}
		if n == "*" {
			o.any = true
			continue
		}
		if !slices.Contains(o.list, n) {
			o.list = append(o.list, n)
		}
	}
	return o, nil
}

// ParseOrigin checks one allow-list entry and returns it normalized
// (lower-case scheme and host, no trailing slash): "*", "null", or an
// http(s) origin without path, query or credentials.
func ParseOrigin(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "*" || s == "null" {
		return s, nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", errors.New(`origin must be "*", "null" or scheme://host[:port] (http or https, no path), e.g. http://localhost:3000`)
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host), nil
}

// Allows reports whether origin (an Origin header) is on the list.
func (o Origins) Allows(origin string) bool {
	if o.any {
		return true
	}
	if origin == "" {
		return false
	}
	return slices.Contains(o.list, strings.ToLower(strings.TrimSuffix(origin, "/")))
}

// Empty reports an allow-list that allows no origin.
func (o Origins) Empty() bool { return !o.any && len(o.list) == 0 }

// String lists the entries, comma-separated ("" when empty).
func (o Origins) String() string {
	l := o.list
	if o.any {
		l = append([]string{"*"}, l...)
	}
	return strings.Join(l, ", ")
}
