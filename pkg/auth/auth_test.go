package auth

import (
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mr-tron/base58"

	"github.com/ferry-sh/ferry/pkg/apierr"
)

func seedKey(label string) ed25519.PrivateKey {
	s := sha256.Sum256([]byte("ferry-auth-test:" + label))
	return ed25519.NewKeyFromSeed(s[:])
}

func pubOf(k ed25519.PrivateKey) string { return base58.Encode(k[32:]) }

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newService(t *testing.T, cfg Config) (*Service, *clock) {
	t.Helper()
	clk := &clock{t: time.Unix(1_767_225_600, 250_000_000)}
	if cfg.Key == nil {
		cfg.Key = seedKey("server")
	}
	cfg.Now = clk.now
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, clk
}

func wantCode(t *testing.T, err error, status int, code string) *apierr.Error {
	t.Helper()
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Status != status || ae.Code != code {
		t.Fatalf("err = %v, want %d %s", err, status, code)
	}
	return ae
}

func sign(k ed25519.PrivateKey, msg string) string {
	return base58.Encode(ed25519.Sign(k, []byte(msg)))
}

func TestChallengeLoginToken(t *testing.T) {
	s, clk := newService(t, Config{})
	alice := seedKey("alice")
	ch := s.Challenge(pubOf(alice))
	if ch != "Login to Query Filtering Service\nTimestamp: 1767225600\nUser: "+pubOf(alice) {
		t.Fatalf("challenge %q", ch)
	}
	clk.add(30 * time.Second)
	out, err := s.Login(pubOf(alice), ch, sign(alice, ch))
	if err != nil {
		t.Fatal(err)
	}
	id, inner := SplitToken(out.Token)
	if id != pubOf(alice) || !strings.HasPrefix(inner, "eyJ") || strings.Count(inner, ".") != 2 {
		t.Fatalf("token %q", out.Token)
	}
	if want := clk.now().Add(DefaultTokenLifetime).UnixMilli(); out.ExpiresAt == nil || *out.ExpiresAt != want {
		t.Fatalf("expiresAt %v, want %d", out.ExpiresAt, want)
	}
	c, err := s.Verify(inner)
	if err != nil || c.Subject != pubOf(alice) || c.Issuer != "ferry" || c.ID == "" {
		t.Fatalf("claims %+v %v", c, err)
	}
	// Single use.
	_, err = s.Login(pubOf(alice), ch, sign(alice, ch))
	wantCode(t, err, 401, CodeChallengeExpired)

	// Authenticate: bound and unbound forms, tampering, expiry, other servers.
	b, err := s.Authenticate(ParseHeader("Bearer " + out.Token))
	if err != nil || b.Identity != pubOf(alice) || b.Token != inner {
		t.Fatalf("bound: %+v %v", b, err)
	}
	b, err = s.Authenticate(ParseHeader("Bearer " + inner))
	if err != nil || b.Identity != pubOf(alice) {
		t.Fatalf("unbound ferry token gets its subject: %+v %v", b, err)
	}
	if _, err := b.For(pubOf(seedKey("bob"))); err == nil {
		t.Fatal("unbound ferry token used for another wallet")
	}
	_, err = s.Authenticate(ParseHeader("Bearer " + Bind(pubOf(seedKey("bob")), inner)))
	wantCode(t, err, 401, CodeInvalidAuthToken)
	// Change one character well inside the signature (the last ones may
	// carry only padding bits, which decoding ignores).
	i := len(inner) - 10
	flip := byte('A')
	if inner[i] == flip {
		flip = 'B'
	}
	tampered := inner[:i] + string(flip) + inner[i+1:]
	_, err = s.Authenticate(ParseHeader("Bearer " + tampered))
	wantCode(t, err, 401, CodeInvalidAuthToken)
	other, _ := newService(t, Config{Key: seedKey("other server")})
	_, err = other.Authenticate(ParseHeader("Bearer " + out.Token))
	wantCode(t, err, 401, CodeInvalidAuthToken)
	clk.add(DefaultTokenLifetime)
	_, err = s.Authenticate(ParseHeader("Bearer " + out.Token))
	if ae := wantCode(t, err, 401, CodeInvalidAuthToken); !strings.Contains(ae.Message, "expired") {
		t.Fatal(ae.Message)
	}
	// Tokens ferry did not issue are refused: this server cannot check
	// them (upstream tokens go through VerifyUpstream).
	for _, h := range []string{"Bearer 1234567890", "Bearer " + Bind(pubOf(alice), MockToken), "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln"} {
		_, err := s.Authenticate(ParseHeader(h))
		wantCode(t, err, 401, CodeInvalidAuthToken)
	}
	// No (well-formed) token: nothing to check; the caller decides.
	for _, h := range []string{"", "Basic abc"} {
		if b, err := s.Authenticate(ParseHeader(h)); err != nil || b != ParseHeader(h) {
			t.Errorf("%q: %+v %v", h, b, err)
		}
	}
}

func TestLoginErrors(t *testing.T) {
	s, clk := newService(t, Config{})
	alice, bob := seedKey("alice"), seedKey("bob")
	ch := s.Challenge(pubOf(alice))

	_, err := s.Login(pubOf(bob), ch, sign(bob, ch))
	wantCode(t, err, 400, CodeInvalidChallenge) // issued for another wallet
	_, err = s.Login(pubOf(alice), "hello", sign(alice, "hello"))
	wantCode(t, err, 400, CodeInvalidChallenge)
	_, err = s.Login(pubOf(alice), ch+"\n", sign(alice, ch+"\n"))
	wantCode(t, err, 400, CodeInvalidChallenge)
	_, err = s.Login(pubOf(alice), ch, "not-base58-0OIl")
	wantCode(t, err, 400, CodeInvalidSignature)
	_, err = s.Login(pubOf(alice), ch, base58.Encode(make([]byte, 32)))
	wantCode(t, err, 400, CodeInvalidSignature)
	_, err = s.Login(pubOf(alice), ch, sign(bob, ch))
	wantCode(t, err, 403, CodeSignatureVerificationFailed)
	_, err = s.Login("nope", ch, sign(alice, ch))
	wantCode(t, err, 400, apierr.CodeInvalidKey)
	// Well-formed and signed, but never issued here.
	forged := ChallengeText(pubOf(bob), clk.now())
	_, err = s.Login(pubOf(bob), forged, sign(bob, forged))
	wantCode(t, err, 401, CodeChallengeExpired)
	// Failed attempts do not use the challenge up.
	if _, err := s.Login(pubOf(alice), ch, sign(alice, ch)); err != nil {
		t.Fatal(err)
	}
	// Expiry.
	ch = s.Challenge(pubOf(alice))
	clk.add(DefaultChallengeTTL)
	_, err = s.Login(pubOf(alice), ch, sign(alice, ch))
	wantCode(t, err, 401, CodeChallengeExpired)
	// A timestamp from the future.
	future := ChallengeText(pubOf(alice), clk.now().Add(time.Minute))
	_, err = s.Login(pubOf(alice), future, sign(alice, future))
	wantCode(t, err, 401, CodeChallengeExpired)
}

func TestChallengeBookkeeping(t *testing.T) {
	s, clk := newService(t, Config{MaxPending: 3})
	alice := seedKey("alice")
	// The same wallet twice in one second: the same text, usable twice.
	c1, c2 := s.Challenge(pubOf(alice)), s.Challenge(pubOf(alice))
	if c1 != c2 {
		t.Fatal("texts differ")
	}
	for i := 0; i < 2; i++ {
		if _, err := s.Login(pubOf(alice), c1, sign(alice, c1)); err != nil {
			t.Fatalf("login %d: %v", i, err)
		}
	}
	if _, err := s.Login(pubOf(alice), c1, sign(alice, c1)); err == nil {
		t.Fatal("third login with two issues")
	}
	// Bounded: the oldest of more than MaxPending is forgotten.
	var keys []ed25519.PrivateKey
	var chs []string
	for i := 0; i < 4; i++ {
		k := seedKey(string(rune('a' + i)))
		keys = append(keys, k)
		chs = append(chs, s.Challenge(pubOf(k)))
	}
	if _, err := s.Login(pubOf(keys[0]), chs[0], sign(keys[0], chs[0])); err == nil {
		t.Fatal("evicted challenge accepted")
	}
	if _, err := s.Login(pubOf(keys[3]), chs[3], sign(keys[3], chs[3])); err != nil {
		t.Fatal(err)
	}
	// Expired entries are pruned.
	clk.add(time.Hour)
	s.Challenge(pubOf(alice))
	s.mu.Lock()
	n := len(s.pending)
	s.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d pending after expiry", n)
	}
}

func TestBearer(t *testing.T) {
	alice := pubOf(seedKey("alice"))
	cases := []struct {
		header string
		want   Bearer
	}{
		{"", Bearer{}},
		{"Bearer tok", Bearer{Present: true, Raw: "tok", Token: "tok"}},
		{"Bearer " + alice + ".inner.x", Bearer{Present: true, Raw: alice + ".inner.x", Identity: alice, Token: "inner.x"}},
		{"Bearer eyJhbGci.eyJ.sig", Bearer{Present: true, Raw: "eyJhbGci.eyJ.sig", Token: "eyJhbGci.eyJ.sig"}},
		{"bearer tok", Bearer{Present: true, Malformed: true}},
		{"Bearer", Bearer{Present: true, Malformed: true}},
		{"Bearer ", Bearer{Present: true, Malformed: true}},
		{"Bearer a b", Bearer{Present: true, Malformed: true}},
		{"Basic abc", Bearer{Present: true, Malformed: true}},
	}
	for _, c := range cases {
		if got := ParseHeader(c.header); got != c.want {
			t.Errorf("%q: %+v, want %+v", c.header, got, c.want)
		}
	}
	b := ParseHeader("Bearer " + Bind(alice, "t"))
	if tok, err := b.For(alice); err != nil || tok != "t" {
		t.Fatal(tok, err)
	}
	_, err := b.For(pubOf(seedKey("bob")))
	wantCode(t, err, 403, CodeTokenIdentityMismatch)
	if _, err := b.ForAny(pubOf(seedKey("bob")), alice); err != nil {
		t.Fatal(err)
	}
	_, err = b.ForAny(pubOf(seedKey("bob")))
	wantCode(t, err, 403, CodeTokenIdentityMismatch)
	if tok, err := ParseHeader("Bearer raw").For(alice); err != nil || tok != "raw" {
		t.Fatal("unbound tokens pass")
	}
}

func TestLoadOrCreateKey(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sub", KeyFileName)
	k1, err := LoadOrCreateKey(p)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v %v", st.Mode(), err)
	}
	k2, err := LoadOrCreateKey(p)
	if err != nil || !k1.Equal(k2) {
		t.Fatal("reload differs", err)
	}
	os.WriteFile(p, []byte(`[1,2,3]`), 0o600)
	if _, err := LoadOrCreateKey(p); err == nil {
		t.Fatal("short key accepted")
	}
	bad := append([]byte(nil), k1...)
	bad[40] ^= 1
	nums := "["
	for i, c := range bad {
		if i > 0 {
			nums += ","
		}
		nums += strconv.Itoa(int(c))
	}
	os.WriteFile(p, []byte(nums+"]"), 0o600)
	if _, err := LoadOrCreateKey(p); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("mismatched key: %v", err)
	}
	if _, err := New(Config{}); err == nil {
		t.Fatal("New without a key")
	}
}
