// Package auth implements the payments API's login flow and bearer tokens.
//
// Against ferry's own chain nodes ferry is the authority: it issues login
// challenges in the TEE Query Filtering Service's format
//
//	Login to Query Filtering Service\nTimestamp: <unix-seconds>\nUser: <base58 pubkey>
//
// each valid for ChallengeTTL (60 s) and usable once, checks the wallet's
// ed25519 signature (base58) over the challenge's exact UTF-8 bytes, and
// issues a token bound to the wallet: "<pubkey>.<jwt>", where the JWT is
// signed with ed25519 ("EdDSA") by a server key kept in the data directory
// (see LoadOrCreateKey) and carries the wallet as subject, the cluster it
// is for as audience and an expiry (TokenLifetime, default 30 days as in
// MagicBlock's SDK). AuthenticateFor verifies all of it; any token this
// server did not issue is refused.
//
// Against a TEE rollup (the *-private clusters) the rollup's own auth
// service is the authority: Proxy forwards challenge and login to its
// /auth/challenge and /auth/login with a 5 s timeout, and falls back to
// mock values when the rollup is not a TEE (payments-api.md §4.2); the
// tokens it issues are verified by that rollup (VerifyUpstream), never
// trusted as they are.
//
// Bearer parses the Authorization header and checks token binding.
// WithVerifiedWallet carries a verified wallet to ferry's own rollup
// in-process. docs/security.md describes the rules.
package auth

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mr-tron/base58"

	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/inputlimit"
)

// ChallengeTitle is the first line of every login challenge.
const ChallengeTitle = "Login to Query Filtering Service"

// Defaults of Config.
const (
	DefaultChallengeTTL  = 60 * time.Second
	DefaultTokenLifetime = 30 * 24 * time.Hour
	DefaultMaxPending    = 100_000
	// Issuer is the iss claim of ferry's tokens.
	Issuer = "ferry"
)

// Error codes of the login flow and token checks (besides the hosted API's
// MISSING_AUTH_TOKEN, TOKEN_IDENTITY_MISMATCH and RPC_ERROR).
const (
	// 400: the challenge is not a login challenge for this pubkey.
	CodeInvalidChallenge = "INVALID_CHALLENGE"
	// 401: the challenge expired, was already used or was not issued here.
	CodeChallengeExpired = "CHALLENGE_EXPIRED"
	// 400: the signature is not a base58 64-byte ed25519 signature.
	CodeInvalidSignature = "INVALID_SIGNATURE"
	// 403: the signature does not verify.
	CodeSignatureVerificationFailed = "SIGNATURE_VERIFICATION_FAILED"
	// 401: a ferry-issued token that does not verify or has expired.
	CodeInvalidAuthToken = "INVALID_AUTH_TOKEN"
	// 400: a protected route got a malformed Authorization header.
	CodeMissingAuthToken = "MISSING_AUTH_TOKEN"
)

// Config configures a Service. Key is required; the zero value of every
// other field selects its default.
type Config struct {
	// Key signs the tokens ferry issues. Keep it across restarts (see
	// LoadOrCreateKey) or every issued token becomes invalid.
	Key ed25519.PrivateKey
	// ChallengeTTL is how long a challenge may be answered (default 60 s).
	ChallengeTTL time.Duration
	// TokenLifetime is how long an issued token is valid (default 30 days).
	TokenLifetime time.Duration
	// MaxPending bounds the challenges awaiting login; beyond it the
	// oldest are forgotten (default 100 000).
	MaxPending int
	// Now is the clock (default time.Now).
	Now func() time.Time
	// HTTPClient is used to reach TEE auth services (default: a client
	// with the default transport).
	HTTPClient *http.Client
	// UpstreamTimeout bounds one call to a TEE auth service (default 5 s).
	UpstreamTimeout time.Duration
	// UpstreamVerifyTTL is how long a rollup's acceptance of a token is
	// reused by VerifyUpstream (default DefaultUpstreamVerifyTTL).
	UpstreamVerifyTTL time.Duration
	// MaxUpstreamVerified bounds the remembered acceptances (default
	// DefaultMaxUpstreamVerified).
	MaxUpstreamVerified int
}

// Service issues and checks login challenges and tokens. It is safe for
// concurrent use.
type Service struct {
	key      ed25519.PrivateKey
	pub      ed25519.PublicKey
	kid      string
	ttl      time.Duration
	lifetime time.Duration
	max      int
	now      func() time.Time
	hc       *http.Client
	upstream time.Duration

	upstreamCache upstreamCache

	mu      sync.Mutex
	pending map[string]int // challenge → outstanding issues (same second, same wallet)
	queue   []pendingEntry // issue order == expiry order
	head    int
}

type pendingEntry struct {
	challenge string
	expires   time.Time
}

// New returns a Service.
func New(cfg Config) (*Service, error) {
	if len(cfg.Key) != ed25519.PrivateKeySize {
		return nil, errors.New("create auth service: a 64-byte ed25519 signing key is required")
	}
	s := &Service{
		key: cfg.Key, pub: cfg.Key.Public().(ed25519.PublicKey),
		ttl: cfg.ChallengeTTL, lifetime: cfg.TokenLifetime, max: cfg.MaxPending, now: cfg.Now,
		hc: cfg.HTTPClient, upstream: cfg.UpstreamTimeout, pending: map[string]int{},
	}
	s.kid = base58.Encode(s.pub)[:8]
	if s.ttl <= 0 {
		s.ttl = DefaultChallengeTTL
	}
	if s.lifetime <= 0 {
		s.lifetime = DefaultTokenLifetime
	}
	if s.max <= 0 {
		s.max = DefaultMaxPending
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.hc == nil {
		s.hc = &http.Client{CheckRedirect: chainclient.SameOriginRedirects}
	}
	s.upstreamCache = upstreamCache{ttl: cfg.UpstreamVerifyTTL, max: cfg.MaxUpstreamVerified, m: map[upstreamKey]upstreamEntry{}}
	if s.upstreamCache.ttl <= 0 {
		s.upstreamCache.ttl = DefaultUpstreamVerifyTTL
	}
	if s.upstreamCache.max <= 0 {
		s.upstreamCache.max = DefaultMaxUpstreamVerified
	}
	if s.upstream <= 0 {
		s.upstream = DefaultUpstreamTimeout
	}
	return s, nil
}

// PublicKey is the key that verifies ferry's tokens.
func (s *Service) PublicKey() ed25519.PublicKey { return s.pub }

// ChallengeText is the challenge for pubkey at t.
func ChallengeText(pubkey string, t time.Time) string {
	return ChallengeTitle + "\nTimestamp: " + strconv.FormatInt(t.Unix(), 10) + "\nUser: " + pubkey
}

// Challenge issues a login challenge for pubkey (a base58 public key the
// caller has validated). It can be answered once, within ChallengeTTL.
func (s *Service) Challenge(pubkey string) string {
	now := s.now()
	c := ChallengeText(pubkey, now)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pruneLocked(now)
	if len(s.queue)-s.head >= s.max {
		s.dropLocked() // forget the oldest
	}
	s.pending[c]++
	s.queue = append(s.queue, pendingEntry{challenge: c, expires: now.Add(s.ttl)})
	return c
}

func (s *Service) pruneLocked(now time.Time) {
	for s.head < len(s.queue) && !now.Before(s.queue[s.head].expires) {
		s.dropLocked()
	}
	if s.head > 1024 && s.head*2 > len(s.queue) {
		s.queue = append(s.queue[:0:0], s.queue[s.head:]...)
		s.head = 0
	}
}

func (s *Service) dropLocked() {
	e := s.queue[s.head]
	s.queue[s.head] = pendingEntry{}
	s.head++
	if n := s.pending[e.challenge]; n > 1 {
		s.pending[e.challenge] = n - 1
	} else {
		delete(s.pending, e.challenge)
	}
}

// Issued reports whether challenge is one this server issued (Challenge)
// that is still outstanding: unused and younger than ChallengeTTL.
func (s *Service) Issued(challenge string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pruneLocked(s.now())
	return s.pending[challenge] > 0
}

// consume marks one issue of challenge as used; false if none is
// outstanding.
func (s *Service) consume(c string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pruneLocked(s.now())
	n := s.pending[c]
	if n == 0 {
		return false
	}
	if n == 1 {
		delete(s.pending, c)
	} else {
		s.pending[c] = n - 1
	}
	// The queue entry stays until it expires; pruning tolerates the missing
	// map entry.
	return true
}

// ParseChallenge checks the three-line format of a challenge and returns
// its timestamp and user. It accepts exactly what the TEE service accepts.
func ParseChallenge(c string) (ts time.Time, user string, ok bool) {
	lines := strings.Split(c, "\n")
	if len(lines) != 3 || lines[0] != ChallengeTitle {
		return time.Time{}, "", false
	}
	tsText, ok1 := strings.CutPrefix(lines[1], "Timestamp: ")
	user, ok2 := strings.CutPrefix(lines[2], "User: ")
	if !ok1 || !ok2 {
		return time.Time{}, "", false
	}
	sec, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil || sec < 0 {
		return time.Time{}, "", false
	}
	return time.Unix(sec, 0), user, true
}

// Login is LoginFor without an audience: the token passes Authenticate
// but no AuthenticateFor.
func (s *Service) Login(pubkey, challenge, signature string) (*LoginResponse, error) {
	return s.LoginFor("", pubkey, challenge, signature)
}

// LoginFor checks a signed challenge and issues a token bound to pubkey
// for audience (the aud claim: the cluster the token is for, see
// AuthenticateFor). The challenge must have been issued by Challenge for
// pubkey, be unused and younger than ChallengeTTL; signature is the base58
// ed25519 signature of its exact UTF-8 bytes by pubkey.
func (s *Service) LoginFor(audience, pubkey, challenge, signature string) (*LoginResponse, error) {
	pk, err := inputlimit.DecodeBase58(pubkey, inputlimit.MaxPubkeyBase58) // length first: decoding is quadratic
	if err != nil || len(pk) != ed25519.PublicKeySize {
		return nil, apierr.BadRequest(apierr.CodeInvalidKey, "Invalid pubkey")
	}
	ts, user, ok := ParseChallenge(challenge)
	if !ok || user != pubkey {
		return nil, apierr.BadRequest(CodeInvalidChallenge, "challenge is not a login challenge for this pubkey; request one from /v1/spl/challenge")
	}
	now := s.now()
	if age := now.Sub(ts); age >= s.ttl+time.Second || age < -5*time.Second {
		return nil, apierr.New(http.StatusUnauthorized, CodeChallengeExpired, "challenge expired; request a new one")
	}
	sig, err := inputlimit.DecodeBase58(signature, inputlimit.MaxSignatureBase58)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return nil, apierr.BadRequest(CodeInvalidSignature, "signature must be a base58-encoded 64-byte ed25519 signature")
	}
	if !ed25519.Verify(pk, []byte(challenge), sig) {
		return nil, apierr.New(http.StatusForbidden, CodeSignatureVerificationFailed, "Signature verification failed")
	}
	if !s.consume(challenge) {
		return nil, apierr.New(http.StatusUnauthorized, CodeChallengeExpired, "challenge was not issued by this server, has expired or was already used; request a new one")
	}
	exp := now.Add(s.lifetime)
	tok, err := s.issue(pubkey, audience, now, exp)
	if err != nil {
		return nil, apierr.Internal(err)
	}
	ms := exp.UnixMilli()
	return &LoginResponse{Token: Bind(pubkey, tok), ExpiresAt: &ms}, nil
}

// Claims are the claims of a ferry token.
type Claims struct {
	Issuer    string `json:"iss"`
	Subject   string `json:"sub"`
	Audience  string `json:"aud,omitempty"`
	IssuedAt  int64  `json:"iat"`
	ExpiresAt int64  `json:"exp"`
	ID        string `json:"jti"`
}

type jwtHeader struct {
	Alg string `json:"alg"`
	Typ string `json:"typ"`
	Kid string `json:"kid,omitempty"`
}

var b64 = base64.RawURLEncoding

// issue signs a JWT (EdDSA, RFC 8037) for subject and audience.
func (s *Service) issue(subject, audience string, now, exp time.Time) (string, error) {
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return "", fmt.Errorf("issue token: %w", err)
	}
	h, _ := json.Marshal(jwtHeader{Alg: "EdDSA", Typ: "JWT", Kid: s.kid})
	c, _ := json.Marshal(Claims{Issuer: Issuer, Subject: subject, Audience: audience, IssuedAt: now.Unix(), ExpiresAt: exp.Unix(), ID: hex.EncodeToString(id[:])})
	signing := b64.EncodeToString(h) + "." + b64.EncodeToString(c)
	return signing + "." + b64.EncodeToString(ed25519.Sign(s.key, []byte(signing))), nil
}

// IsFerryToken reports whether an inner token claims to be issued by a
// ferry server (an EdDSA JWT with iss "ferry"), and so must verify.
func IsFerryToken(tok string) bool {
	_, c, ok := splitJWT(tok)
	return ok && c.Issuer == Issuer
}

func splitJWT(tok string) (jwtHeader, Claims, bool) {
	var h jwtHeader
	var c Claims
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return h, c, false
	}
	hb, err1 := b64.DecodeString(parts[0])
	cb, err2 := b64.DecodeString(parts[1])
	if err1 != nil || err2 != nil || json.Unmarshal(hb, &h) != nil || h.Alg != "EdDSA" || json.Unmarshal(cb, &c) != nil {
		return h, c, false
	}
	return h, c, true
}

// Verify checks a ferry-issued inner token: its signature by this server's
// key and its expiry. Failures are 401 INVALID_AUTH_TOKEN.
func (s *Service) Verify(tok string) (*Claims, error) {
	_, c, ok := splitJWT(tok)
	if !ok || c.Issuer != Issuer {
		return nil, apierr.New(http.StatusUnauthorized, CodeInvalidAuthToken, "auth token is not a ferry token")
	}
	i := strings.LastIndexByte(tok, '.')
	sig, err := b64.DecodeString(tok[i+1:])
	if err != nil || !ed25519.Verify(s.pub, []byte(tok[:i]), sig) {
		return nil, apierr.New(http.StatusUnauthorized, CodeInvalidAuthToken, "auth token was not issued by this server; login again")
	}
	if !s.now().Before(time.Unix(c.ExpiresAt, 0)) {
		return nil, apierr.New(http.StatusUnauthorized, CodeInvalidAuthToken, "auth token expired; login again")
	}
	return &c, nil
}

// VerifyFor is Verify plus the audience: the token must have been issued
// for audience (LoginFor). Failures are 401 INVALID_AUTH_TOKEN.
func (s *Service) VerifyFor(tok, audience string) (*Claims, error) {
	c, err := s.Verify(tok)
	if err != nil {
		return nil, err
	}
	if c.Audience != audience {
		return nil, apierr.New(http.StatusUnauthorized, CodeInvalidAuthToken, "auth token was issued for another cluster; login again with this cluster")
	}
	return c, nil
}

// Authenticate verifies the ferry-issued token of b: signature, expiry,
// and (when bound) that the binding names the token's subject. A ferry
// token sent unbound is treated as bound to its subject, so binding checks
// (Bearer.For) still apply. Any other token (an upstream rollup's, an
// opaque string, an unsigned or foreign JWT) is refused: this server
// cannot check it (see VerifyUpstream). Failures are 401
// INVALID_AUTH_TOKEN. Without a well-formed token b comes back unchanged.
func (s *Service) Authenticate(b Bearer) (Bearer, error) { return s.authenticate(b, nil) }

// AuthenticateFor is Authenticate for a token that must have been issued
// for audience (the request's cluster).
func (s *Service) AuthenticateFor(b Bearer, audience string) (Bearer, error) {
	return s.authenticate(b, &audience)
}

func (s *Service) authenticate(b Bearer, audience *string) (Bearer, error) {
	if !b.OK() {
		return b, nil
	}
	if !IsFerryToken(b.Token) {
		return b, apierr.New(http.StatusUnauthorized, CodeInvalidAuthToken, "auth token was not issued by this server; login again")
	}
	var c *Claims
	var err error
	if audience != nil {
		c, err = s.VerifyFor(b.Token, *audience)
	} else {
		c, err = s.Verify(b.Token)
	}
	if err != nil {
		return b, err
	}
	if b.Identity == "" {
		b.Identity = c.Subject
	} else if b.Identity != c.Subject {
		return b, apierr.New(http.StatusUnauthorized, CodeInvalidAuthToken, "auth token was issued to another wallet; login again")
	}
	b.Verified = true
	return b, nil
}
