package auth

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// jwt builds an unsigned-looking JWT with the given header and claims and
// signature part (the verifier under test decides what to make of it).
func jwt(t *testing.T, header, claims map[string]any, sig string) string {
	t.Helper()
	h, _ := json.Marshal(header)
	c, _ := json.Marshal(claims)
	return b64.EncodeToString(h) + "." + b64.EncodeToString(c) + "." + sig
}

// TestFerryTokenRefusals: every way to present something that is not a
// valid ferry token for this audience and wallet is refused with 401.
func TestFerryTokenRefusals(t *testing.T) {
	s, clk := newService(t, Config{})
	alice, bob := seedKey("alice"), seedKey("bob")
	const aud = "http://127.0.0.1:7799"
	login := func(k ed25519.PrivateKey, audience string) string {
		ch := s.Challenge(pubOf(k))
		out, err := s.LoginFor(audience, pubOf(k), ch, sign(k, ch))
		if err != nil {
			t.Fatal(err)
		}
		return out.Token
	}
	good := login(alice, aud)
	_, inner := SplitToken(good)
	if c, err := s.VerifyFor(inner, aud); err != nil || c.Audience != aud || c.Subject != pubOf(alice) {
		t.Fatalf("%+v %v", c, err)
	}
	b, err := s.AuthenticateFor(ParseHeader("Bearer "+good), aud)
	if err != nil || !b.Verified || b.Upstream || b.Identity != pubOf(alice) {
		t.Fatalf("%+v %v", b, err)
	}

	parts := strings.Split(inner, ".")
	claims, _ := b64.DecodeString(parts[1])
	var cm map[string]any
	json.Unmarshal(claims, &cm)
	forgedClaims := func(mut func(map[string]any)) string {
		c := map[string]any{}
		for k, v := range cm {
			c[k] = v
		}
		mut(c)
		j, _ := json.Marshal(c)
		return parts[0] + "." + b64.EncodeToString(j) + "." + parts[2]
	}
	cases := map[string]string{
		"alg none":           jwt(t, map[string]any{"alg": "none", "typ": "JWT"}, cm, ""),
		"alg none, with sig": jwt(t, map[string]any{"alg": "none", "typ": "JWT"}, cm, parts[2]),
		"HS256 lookalike":    jwt(t, map[string]any{"alg": "HS256", "typ": "JWT"}, cm, parts[2]),
		"forged signature":   parts[0] + "." + parts[1] + "." + b64.EncodeToString(make([]byte, 64)),
		"claims swapped":     forgedClaims(func(c map[string]any) { c["sub"] = pubOf(bob) }),
		"lifetime extended":  forgedClaims(func(c map[string]any) { c["exp"] = float64(4_000_000_000) }),
		"no audience":        SplitTokenInner(login(alice, "")),
		"other audience":     SplitTokenInner(login(alice, "http://127.0.0.1:9999")),
		"another server":     SplitTokenInner(otherServerToken(t, alice, aud)),
		"garbage":            "x",
		"mock":               MockToken,
	}
	for name, tok := range cases {
		for _, raw := range []string{tok, Bind(pubOf(alice), tok)} {
			_, err := s.AuthenticateFor(ParseHeader("Bearer "+raw), aud)
			wantCode(t, err, 401, CodeInvalidAuthToken)
			if t.Failed() {
				t.Fatalf("case %s (%q)", name, raw)
			}
		}
	}
	// Bound to another wallet than its subject.
	_, err = s.AuthenticateFor(ParseHeader("Bearer "+Bind(pubOf(bob), inner)), aud)
	wantCode(t, err, 401, CodeInvalidAuthToken)
	// Bob's valid token, used for alice: the binding check (403).
	bb, err := s.AuthenticateFor(ParseHeader("Bearer "+login(bob, aud)), aud)
	if err != nil {
		t.Fatal(err)
	}
	_, err = bb.For(pubOf(alice))
	wantCode(t, err, 403, CodeTokenIdentityMismatch)
	// Expired.
	clk.add(DefaultTokenLifetime)
	_, err = s.AuthenticateFor(ParseHeader("Bearer "+good), aud)
	wantCode(t, err, 401, CodeInvalidAuthToken)
}

// SplitTokenInner is the inner part of a raw token.
func SplitTokenInner(raw string) string { _, inner := SplitToken(raw); return inner }

func otherServerToken(t *testing.T, k ed25519.PrivateKey, aud string) string {
	t.Helper()
	o, _ := newService(t, Config{Key: seedKey("other server")})
	ch := o.Challenge(pubOf(k))
	out, err := o.LoginFor(aud, pubOf(k), ch, sign(k, ch))
	if err != nil {
		t.Fatal(err)
	}
	return out.Token
}

func TestVerifyUpstream(t *testing.T) {
	s, clk := newService(t, Config{UpstreamVerifyTTL: time.Minute})
	alice, bob := pubOf(seedKey("alice")), pubOf(seedKey("bob"))
	now := clk.now().Unix()
	tee := jwt(t, map[string]any{"alg": "ES256", "typ": "JWT"}, map[string]any{"sub": alice, "exp": now + 3600}, "c2ln")
	const ep = "https://tee.test"
	ctx := context.Background()
	calls := 0
	accept := func(context.Context) error { calls++; return nil }
	refuse := func(context.Context) error { calls++; return ErrTokenRefused }
	down := func(context.Context) error { calls++; return errors.New("dial tcp: refused") }

	// Accepted, identity from the token's subject, cached for the TTL.
	for i := 0; i < 3; i++ {
		b, err := s.VerifyUpstream(ctx, ep, ParseHeader("Bearer "+tee), accept)
		if err != nil || !b.Verified || !b.Upstream || b.Identity != alice || b.Token != tee {
			t.Fatalf("%+v %v", b, err)
		}
	}
	if calls != 1 {
		t.Fatalf("%d upstream calls, want 1 (cached)", calls)
	}
	// The cache is per rollup: another endpoint asks again.
	if _, err := s.VerifyUpstream(ctx, "https://other-tee.test", ParseHeader("Bearer "+tee), refuse); err == nil {
		t.Fatal("another rollup's refusal ignored")
	}
	// After the TTL the rollup is asked again, and its refusal counts.
	clk.add(time.Minute)
	_, err := s.VerifyUpstream(ctx, ep, ParseHeader("Bearer "+tee), refuse)
	wantCode(t, err, 401, CodeInvalidAuthToken)
	_, err = s.VerifyUpstream(ctx, ep, ParseHeader("Bearer "+tee), down)
	if ae := wantCode(t, err, 502, "RPC_ERROR"); strings.Contains(ae.Message, "dial") {
		t.Fatal(ae.Message)
	}

	calls = 0
	for name, raw := range map[string]string{
		"alg none":     jwt(t, map[string]any{"alg": "none"}, map[string]any{"sub": alice}, "x"),
		"no alg":       jwt(t, map[string]any{"typ": "JWT"}, map[string]any{"sub": alice}, "x"),
		"expired":      jwt(t, map[string]any{"alg": "ES256"}, map[string]any{"sub": alice, "exp": now - 1}, "x"),
		"bad exp":      jwt(t, map[string]any{"alg": "ES256"}, map[string]any{"sub": alice, "exp": "soon"}, "x"),
		"not a JWT":    "1234567890",
		"mock":         Bind(alice, MockToken),
		"no signature": jwt(t, map[string]any{"alg": "ES256"}, map[string]any{"sub": alice}, ""),
		"rebound":      Bind(bob, tee),
	} {
		_, err := s.VerifyUpstream(ctx, ep, ParseHeader("Bearer "+raw), accept)
		wantCode(t, err, 401, CodeInvalidAuthToken)
		if t.Failed() {
			t.Fatalf("case %s", name)
		}
	}
	if calls != 0 {
		t.Fatalf("%d upstream calls for tokens refused locally", calls)
	}
	// A token without a subject keeps its binding (the rollup filters its
	// reads by the token, whatever the binding says).
	anon := jwt(t, map[string]any{"alg": "ES256"}, map[string]any{"exp": now + 3600}, "c2ln")
	b, err := s.VerifyUpstream(ctx, ep, ParseHeader("Bearer "+Bind(bob, anon)), accept)
	if err != nil || b.Identity != bob {
		t.Fatalf("%+v %v", b, err)
	}
}

func TestVerifiedWalletContext(t *testing.T) {
	ctx := context.Background()
	if _, ok := VerifiedWallet(ctx); ok {
		t.Fatal("empty context has a wallet")
	}
	if w, ok := VerifiedWallet(WithVerifiedWallet(ctx, "w")); !ok || w != "w" {
		t.Fatal(w, ok)
	}
	if _, ok := VerifiedWallet(WithVerifiedWallet(ctx, "")); ok {
		t.Fatal("empty wallet counts")
	}
}

// FuzzTokens: whatever arrives in an Authorization header, checking it
// never panics, and nothing but a token this server signed for the
// audience verifies.
func FuzzTokens(f *testing.F) {
	s, _ := newService(&testing.T{}, Config{})
	alice := seedKey("alice")
	ch := s.Challenge(pubOf(alice))
	out, _ := s.LoginFor("local", pubOf(alice), ch, sign(alice, ch))
	f.Add("Bearer " + out.Token)
	f.Add("Bearer " + SplitTokenInner(out.Token))
	f.Add("Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.")
	f.Add("Bearer " + Bind(pubOf(alice), MockToken))
	f.Add("Bearer a.b.c")
	f.Add("bearer x")
	f.Fuzz(func(t *testing.T, header string) {
		b := ParseHeader(header)
		got, err := s.AuthenticateFor(b, "local")
		// Only alice ever got a token from this server (in this process or
		// the one that wrote the seed corpus: the key is the same).
		if err == nil && b.OK() && (!got.Verified || got.Identity != pubOf(alice)) {
			t.Fatalf("%q verified as %+v", header, got)
		}
		_, _ = peekUpstream(b.Token, time.Unix(1_767_225_600, 0))
	})
}
