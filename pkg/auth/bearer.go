package auth

import (
	"net/http"
	"strings"

	"github.com/ferry-sh/ferry/pkg/apierr"
)

// Bearer is the Authorization header of a request, parsed the way the
// hosted API's parseAuthToken does: exactly "Bearer <token>" (two parts
// separated by one space, "Bearer" case-sensitive). Anything else is
// Malformed and counts as no token. Its zero value is "no header".
type Bearer struct {
	// Present: the request had an Authorization header.
	Present bool
	// Malformed: the header was not "Bearer <token>"; Token is empty.
	Malformed bool
	// Raw is the token as sent: "<pubkey>.<token>" when bound, else the
	// bare token.
	Raw string
	// Identity is the wallet the token is bound to ("" if unbound).
	Identity string
	// Token is the inner token, the only part ever forwarded to a rollup
	// (as ?token=).
	Token string
	// Verified: Token passed Service.Authenticate(For) (a ferry token) or
	// Service.VerifyUpstream (a rollup's token), and Identity is the
	// wallet it was issued to ("" for an upstream token that names none).
	Verified bool
	// Upstream: Token was verified by the rollup that issued it (a TEE's
	// auth service), not by this server. Only such tokens are ever
	// forwarded, and only to that rollup.
	Upstream bool
}

// ParseHeader parses an Authorization header value ("" when absent).
func ParseHeader(h string) Bearer {
	if h == "" {
		return Bearer{}
	}
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || scheme != "Bearer" || tok == "" || strings.Contains(tok, " ") {
		return Bearer{Present: true, Malformed: true}
	}
	id, inner := SplitToken(tok)
	return Bearer{Present: true, Raw: tok, Identity: id, Token: inner}
}

// FromRequest parses r's Authorization header.
func FromRequest(r *http.Request) Bearer { return ParseHeader(r.Header.Get("Authorization")) }

// OK reports whether a well-formed token is present.
func (b Bearer) OK() bool { return b.Present && !b.Malformed && b.Token != "" }

// Bind returns the token bound to wallet pubkey: "<pubkey>.<token>", the
// form /v1/spl/login returns.
func Bind(pubkey, token string) string { return pubkey + "." + token }

// SplitToken splits a raw token at its first '.': when the prefix is a
// base58 string of 32 to 44 characters it is the bound identity and the
// rest the inner token; otherwise the whole string is an unbound token (a
// raw JWT starts with "eyJ", followed by a non-base58 character).
func SplitToken(raw string) (identity, token string) {
	prefix, rest, ok := strings.Cut(raw, ".")
	if ok && isBase58Identity(prefix) {
		return prefix, rest
	}
	return "", raw
}

func isBase58Identity(s string) bool {
	if len(s) < 32 || len(s) > 44 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '1' && c <= '9', c >= 'A' && c <= 'H', c >= 'J' && c <= 'N', c >= 'P' && c <= 'Z',
			c >= 'a' && c <= 'k', c >= 'm' && c <= 'z':
		default:
			return false
		}
	}
	return true
}

// CodeTokenIdentityMismatch is the 403 for a token bound to another wallet.
const CodeTokenIdentityMismatch = "TOKEN_IDENTITY_MISMATCH"

// For checks that the token may act for wallet pubkey: a token bound to
// another wallet is a 403 TOKEN_IDENTITY_MISMATCH; an unbound token passes,
// as on the hosted API. It returns the inner token ("" when none).
func (b Bearer) For(pubkey string) (string, error) {
	if b.Identity != "" && b.Identity != pubkey {
		return "", apierr.New(http.StatusForbidden, CodeTokenIdentityMismatch,
			"auth token is not bound to the requested address; login again with that wallet")
	}
	return b.Token, nil
}

// ForAny is For with several acceptable wallets (e.g. the payer or the
// authority of a stealth pool).
func (b Bearer) ForAny(pubkeys ...string) (string, error) {
	if b.Identity == "" {
		return b.Token, nil
	}
	for _, p := range pubkeys {
		if b.Identity == p {
			return b.Token, nil
		}
	}
	return "", apierr.New(http.StatusForbidden, CodeTokenIdentityMismatch,
		"auth token is not bound to the requested address; login again with that wallet")
}
