package cluster

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path"
	"strings"
)

// AllowEnv is the environment variable that adds upstream patterns to
// `ferry serve`'s allow-list (comma- or space-separated), next to
// --allow-upstream.
const AllowEnv = "FERRY_ALLOW_UPSTREAM"

// AllowPattern is one operator-approved upstream: a scheme, a host glob
// and a port. Parse one with ParseAllowPattern.
//
// The syntax is [scheme://]host[:port]:
//
//   - scheme is http, https or * (either); without one only https
//     matches, so a pattern never opens a plaintext channel by accident;
//   - host is a host name or IP address (IPv6 in brackets) in which *
//     matches any run of characters, dots included: "*.example.com"
//     matches "rpc.example.com" and "a.b.example.com", not "example.com";
//     host names compare case-insensitively;
//   - port is a number or *; without one only the scheme's default port
//     matches (443 for https, 80 for http).
//
// Paths and queries are not part of a pattern: an allowed host is allowed
// with any path (RPC providers put API keys there).
type AllowPattern struct {
	// Schemes are the schemes that match ("http", "https").
	Schemes []string
	// Host is the lower-cased host glob.
	Host string
	// Port is the port that matches: digits, "*" for any, or "" for the
	// scheme's default port.
	Port string
	// Text is the pattern as given.
	Text string
}

// ErrAllowPattern is wrapped by every ParseAllowPattern failure.
var ErrAllowPattern = errors.New("invalid upstream pattern")

// ParseAllowPattern reads one --allow-upstream pattern.
func ParseAllowPattern(s string) (AllowPattern, error) {
	text := strings.TrimSpace(s)
	bad := func(why string) (AllowPattern, error) {
		return AllowPattern{}, fmt.Errorf("%w %q: %s (want [http://|https://|*://]host[:port], e.g. https://*.example.com or http://127.0.0.1:8899)", ErrAllowPattern, s, why)
	}
	if text == "" {
		return bad("empty")
	}
	p := AllowPattern{Text: text, Schemes: []string{"https"}}
	rest := text
	if scheme, r, ok := strings.Cut(text, "://"); ok {
		switch strings.ToLower(scheme) {
		case "http":
			p.Schemes = []string{"http"}
		case "https":
			p.Schemes = []string{"https"}
		case "*":
			p.Schemes = []string{"http", "https"}
		default:
			return bad("the scheme must be http, https or *")
		}
		rest = r
	}
	if strings.ContainsAny(rest, "/?#@ \t") {
		return bad("only a host and a port, no path, query or user info")
	}
	host, port := rest, ""
	switch {
	case strings.HasPrefix(rest, "["):
		end := strings.Index(rest, "]")
		if end < 0 {
			return bad("unclosed [ of an IPv6 address")
		}
		host = rest[1:end]
		switch after := rest[end+1:]; {
		case after == "":
		case strings.HasPrefix(after, ":"):
			port = after[1:]
		default:
			return bad("unexpected text after the IPv6 address")
		}
	case strings.Count(rest, ":") == 1:
		host, port, _ = strings.Cut(rest, ":")
	case strings.Count(rest, ":") > 1:
		return bad("put an IPv6 address in brackets")
	}
	if host == "" {
		return bad("no host")
	}
	if port != "" && port != "*" {
		if len(port) > 5 || strings.Trim(port, "0123456789") != "" {
			return bad("the port must be a number or *")
		}
	}
	for _, r := range host {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-._*:", r)) {
			return bad("the host may only hold letters, digits, '-', '.', '_', ':' (IPv6) and the wildcard *")
		}
	}
	p.Host, p.Port = strings.ToLower(host), port
	return p, nil
}

// matches reports whether an http(s) URL's scheme, host and port match.
func (p AllowPattern) matches(scheme, host, port string) bool {
	okScheme := false
	for _, s := range p.Schemes {
		okScheme = okScheme || s == scheme
	}
	if !okScheme {
		return false
	}
	switch p.Port {
	case "*":
	case "":
		if port != defaultPort(scheme) {
			return false
		}
	default:
		if port != p.Port {
			return false
		}
	}
	// path.Match's * stops at '/', which a host never contains, so it
	// spans dots.
	ok, _ := path.Match(p.Host, host)
	return ok
}

func defaultPort(scheme string) string {
	if scheme == "http" {
		return "80"
	}
	return "443"
}

// AllowList is the set of upstream URLs requests may name in addition to
// the configured clusters: the operator's --allow-upstream patterns and
// the exact URLs the server is configured with. The zero value allows
// nothing. It is immutable after NewAllowList and safe for concurrent use.
type AllowList struct {
	patterns []AllowPattern
	exact    map[string]bool // scheme://host:port of configured endpoints
}

// NewAllowList parses patterns (see AllowPattern) and adds the exact
// origins of trusted URLs (the server's own configured endpoints, which a
// request may always name). It fails on the first bad pattern; trusted
// URLs that do not parse are ignored.
func NewAllowList(patterns []string, trusted ...string) (*AllowList, error) {
	a := &AllowList{exact: map[string]bool{}}
	for _, s := range patterns {
		p, err := ParseAllowPattern(s)
		if err != nil {
			return nil, err
		}
		a.patterns = append(a.patterns, p)
	}
	for _, u := range trusted {
		if o, ok := origin(u); ok {
			a.exact[o] = true
		}
	}
	return a, nil
}

// Patterns returns the parsed patterns.
func (a *AllowList) Patterns() []AllowPattern {
	if a == nil {
		return nil
	}
	return append([]AllowPattern(nil), a.patterns...)
}

// Allows reports whether a request may make the server connect to rawURL:
// an http(s) URL whose origin is a trusted one or matches a pattern.
func (a *AllowList) Allows(rawURL string) bool {
	if a == nil {
		return false
	}
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if port == "" {
		port = defaultPort(scheme)
	}
	if a.exact[scheme+"://"+net.JoinHostPort(host, port)] {
		return true
	}
	for _, p := range a.patterns {
		if p.matches(scheme, host, port) {
			return true
		}
	}
	return false
}

// origin is the canonical scheme://host:port of an http(s) URL.
func origin(rawURL string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = defaultPort(scheme)
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port), true
}

// SplitAllowPatterns splits the value of AllowEnv (or a config entry) into
// patterns: commas and white space separate them.
func SplitAllowPatterns(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
}

// Host is the host[:port] of an http(s) URL, without user info, path or
// query: what an error may show about a refused upstream.
func Host(rawURL string) string {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return ""
	}
	return u.Host
}
