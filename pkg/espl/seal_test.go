package espl

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	mrand "math/rand/v2"
	"testing"

	"filippo.io/edwards25519"
	"github.com/gagliardetto/solana-go"
	"golang.org/x/crypto/curve25519"
	"golang.org/x/crypto/nacl/box"
)

func newValidator(t testing.TB) (solana.PublicKey, ed25519.PrivateKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	return solana.PublicKeyFromBytes(pub), priv
}

func TestSealOpenRoundTrip(t *testing.T) {
	v, priv := newValidator(t)
	for _, n := range []int{0, 20, 28, 32, 100} {
		msg := make([]byte, n)
		rand.Read(msg)
		sealed, err := Seal(v, msg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(sealed) != n+EncryptionOverhead {
			t.Errorf("sealed %d bytes → %d, want %d", n, len(sealed), n+EncryptionOverhead)
		}
		got, err := Open(priv, sealed)
		if err != nil || !bytes.Equal(got, msg) {
			t.Errorf("open %d bytes: %v", n, err)
		}
	}
	// The three sizes of §9.2.
	for in, out := range map[int]int{32: 80, 20: 68, 28: 76} {
		s, _ := Seal(v, make([]byte, in), nil)
		if len(s) != out {
			t.Errorf("%d → %d, want %d", in, len(s), out)
		}
	}
}

// TestSealInterop checks both directions against x/crypto's reference
// sealed box, for many validator keys: this is what proves the Edwards-form
// shared secret equals X25519.
func TestSealInterop(t *testing.T) {
	for i := 0; i < 40; i++ {
		v, priv := newValidator(t)
		msg := []byte("interop message")
		pub, err := X25519PublicKey(v)
		if err != nil {
			t.Fatal(err)
		}
		sk := X25519PrivateKey(priv)
		// The converted secret's public key is the converted public key.
		derived, _ := curve25519.X25519(sk[:], curve25519.Basepoint)
		if !bytes.Equal(derived, pub[:]) {
			t.Fatalf("X25519PrivateKey and X25519PublicKey disagree")
		}
		ours, err := Seal(v, msg, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := box.OpenAnonymous(nil, ours, &pub, &sk)
		if !ok || !bytes.Equal(got, msg) {
			t.Fatalf("box.OpenAnonymous cannot open Seal output (key %d)", i)
		}
		theirs, err := box.SealAnonymous(nil, msg, &pub, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		got, err = Open(priv, theirs)
		if err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("Open cannot open box.SealAnonymous output: %v", err)
		}
	}
}

// TestSealMatchesReferenceByteForByte: with the same ephemeral secret, Seal
// and box.SealAnonymous produce identical bytes, on each multiplication
// path: one-shot (variable base), prepared (table of the key's multiples)
// and a prepared key with a torsion component, where multiplying by the
// clamped scalar reduced mod ℓ instead of as given would change the shared
// secret.
func TestSealMatchesReferenceByteForByte(t *testing.T) {
	v, _ := newValidator(t)
	oneShot := func(msg []byte, r io.Reader) ([]byte, error) { return Seal(v, msg, r) }
	prepared, err := NewSealKey(v)
	if err != nil || prepared.table == nil {
		t.Fatalf("NewSealKey(%s) = %+v, %v; want a table", v, prepared, err)
	}
	torsioned := withTwoTorsion(t, v)
	tk, err := NewSealKey(torsioned)
	if err != nil || tk.table == nil {
		t.Fatalf("NewSealKey(torsioned) = %+v, %v; want a table", tk, err)
	}
	for _, c := range []struct {
		name string
		to   solana.PublicKey
		seal func([]byte, io.Reader) ([]byte, error)
	}{
		{"one-shot", v, oneShot},
		{"prepared", v, prepared.Seal},
		{"torsion component", torsioned, tk.Seal},
	} {
		t.Run(c.name, func(t *testing.T) {
			pub, err := X25519PublicKey(c.to)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 20; i++ {
				var esk [32]byte
				rand.Read(esk[:])
				msg := []byte{byte(i), 1, 2, 3}
				ours, err := c.seal(msg, bytes.NewReader(esk[:]))
				if err != nil {
					t.Fatal(err)
				}
				// box.SealAnonymous draws its ephemeral key with
				// GenerateKey, which reads exactly 32 bytes.
				ref, err := box.SealAnonymous(nil, msg, &pub, bytes.NewReader(esk[:]))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(ours, ref) {
					t.Fatalf("sealed bytes differ from box.SealAnonymous:\n %x\n %x", ours, ref)
				}
			}
		})
	}
}

// withTwoTorsion returns key + (0, −1), the point of order 2: a valid key
// outside the prime-order subgroup.
func withTwoTorsion(t *testing.T, key solana.PublicKey) solana.PublicKey {
	t.Helper()
	p, err := new(edwards25519.Point).SetBytes(key[:])
	if err != nil {
		t.Fatal(err)
	}
	minusOne := make([]byte, 32)
	minusOne[0], minusOne[31] = 0xec, 0x7f
	for i := 1; i < 31; i++ {
		minusOne[i] = 0xff
	}
	t2, err := new(edwards25519.Point).SetBytes(minusOne)
	if err != nil {
		t.Fatal(err)
	}
	return solana.PublicKeyFromBytes(new(edwards25519.Point).Add(p, t2).Bytes())
}

func TestOpenFailures(t *testing.T) {
	v, priv := newValidator(t)
	_, other := newValidator(t)
	sealed, _ := Seal(v, []byte("secret"), nil)
	if _, err := Open(other, sealed); !errors.Is(err, ErrOpen) {
		t.Errorf("wrong key: %v", err)
	}
	tampered := bytes.Clone(sealed)
	tampered[len(tampered)-1] ^= 1
	if _, err := Open(priv, tampered); !errors.Is(err, ErrOpen) {
		t.Errorf("tampered: %v", err)
	}
	if _, err := Open(priv, sealed[:47]); !errors.Is(err, ErrOpen) {
		t.Errorf("short: %v", err)
	}
	if _, err := Open(priv[:10], sealed); err == nil {
		t.Error("short private key accepted")
	}
}

func TestSealInvalidRecipient(t *testing.T) {
	rent, _ := FindRentPDA() // a PDA is off the curve by construction
	if _, err := Seal(rent, []byte("x"), nil); !errors.Is(err, ErrInvalidRecipient) {
		t.Errorf("off-curve: %v", err)
	}
	identity := solana.PublicKey{1} // y = 1: the identity, small order
	if _, err := Seal(identity, []byte("x"), nil); !errors.Is(err, ErrInvalidRecipient) {
		t.Errorf("small order: %v", err)
	}
	if _, err := Seal(ValidatorAsia, []byte("x"), io.LimitReader(rand.Reader, 5)); err == nil {
		t.Error("short random source accepted")
	}
	for _, v := range Validators() {
		if _, err := NewSealKey(v.Identity); err != nil {
			t.Errorf("validator %s: %v", v.Region, err)
		}
	}
}

func TestCacheSealKey(t *testing.T) {
	c := NewCache(0)
	// First use: a one-shot key; second: the key with its table, which is
	// then kept.
	first, err := c.SealKey(ValidatorEU)
	if err != nil || first.table != nil || first.Identity() != ValidatorEU {
		t.Fatalf("first SealKey = %+v, %v; want no table yet", first, err)
	}
	a, _ := c.SealKey(ValidatorEU)
	b, _ := c.SealKey(ValidatorEU)
	if a.table == nil || a != b || a.Identity() != ValidatorEU {
		t.Error("second use did not memoise a key with its table")
	}
	x, _ := X25519PublicKey(ValidatorEU)
	if a.X25519() != x {
		t.Error("X25519 mismatch")
	}
	for i := 0; i < 2*sealKeyLimit; i++ {
		v, _ := newValidator(t)
		if _, err := c.SealKey(v); err != nil {
			t.Fatal(err)
		}
	}
	c.sealMu.Lock()
	n := len(c.sealKeys)
	c.sealMu.Unlock()
	if n > sealKeyLimit {
		t.Errorf("%d seal keys cached, limit %d", n, sealKeyLimit)
	}
}

func TestPrivateTransferSuffix(t *testing.T) {
	ref := uint64(7)
	for _, s := range []PrivateTransferSuffix{{1, 2, 3, nil}, {0, 600_000, 15, &ref}} {
		b := s.Encode()
		got, err := DecodePrivateTransferSuffix(b)
		if err != nil {
			t.Fatal(err)
		}
		if got.MinDelayMs != s.MinDelayMs || got.MaxDelayMs != s.MaxDelayMs || got.Split != s.Split ||
			(got.ClientRefID == nil) != (s.ClientRefID == nil) || (s.ClientRefID != nil && *got.ClientRefID != *s.ClientRefID) {
			t.Errorf("round trip %+v → %+v", s, got)
		}
	}
	if _, err := DecodePrivateTransferSuffix(make([]byte, 21)); err == nil {
		t.Error("21 bytes accepted")
	}
}

func TestSealPrivateTransferGroupID(t *testing.T) {
	key, err := NewSealKey(ValidatorAsia)
	if err != nil {
		t.Fatal(err)
	}
	r := mrand.NewChaCha8([32]byte{1})
	for i := 0; i < 50; i++ {
		d, s, err := SealPrivateTransfer(key, testKey(1), PrivateTransferSuffix{Split: 1}, r)
		if err != nil {
			t.Fatal(err)
		}
		if GroupIDOf(d) == 0 || len(s) != 68 {
			t.Fatalf("group id %d, suffix %d bytes", GroupIDOf(d), len(s))
		}
	}
}

// zeroGroupESK is an ephemeral secret whose X25519 public key starts with
// three zero bytes (found by search: 2^254 + 8·21280375), i.e. it would
// give group id 0.
const zeroGroupESK = "b8b3250a00000000000000000000000000000000000000000000000000000040"

func TestSealPrivateTransferRerollsZeroGroupID(t *testing.T) {
	esk, _ := hex.DecodeString(zeroGroupESK)
	epk, _ := curve25519.X25519(esk, curve25519.Basepoint)
	if epk[0]|epk[1]|epk[2] != 0 {
		t.Fatalf("fixture epk %x does not start with zeros", epk)
	}
	v, priv := newValidator(t)
	key, _ := NewSealKey(v)
	r := io.MultiReader(bytes.NewReader(esk), rand.Reader)
	d, s, err := SealPrivateTransfer(key, testKey(4), PrivateTransferSuffix{Split: 2}, r)
	if err != nil {
		t.Fatal(err)
	}
	if GroupIDOf(d) == 0 || bytes.Equal(d[:32], epk) {
		t.Fatal("zero group id was not re-rolled")
	}
	if got, err := Open(priv, d[:]); err != nil || !bytes.Equal(got, testKey(4).Bytes()) {
		t.Errorf("re-rolled destination does not open: %v", err)
	}
	if _, err := Open(priv, s); err != nil {
		t.Error(err)
	}
	// A source that only ever yields that secret fails instead of looping.
	forever := bytes.NewReader(bytes.Repeat(esk, maxGroupIDRerolls+1))
	if _, _, err := SealPrivateTransfer(key, testKey(4), PrivateTransferSuffix{Split: 1}, forever); err == nil {
		t.Error("endless zero group ids accepted")
	}
}
