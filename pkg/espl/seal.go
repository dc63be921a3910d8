package espl

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha512"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"

	"filippo.io/edwards25519"
	"github.com/gagliardetto/solana-go"
	"github.com/oasisprotocol/curve25519-voi/curve"
	"github.com/oasisprotocol/curve25519-voi/curve/scalar"
	"golang.org/x/crypto/blake2b"
	"golang.org/x/crypto/nacl/box"
	"golang.org/x/crypto/nacl/secretbox"
	"golang.org/x/crypto/salsa20/salsa"
)

// Sealed-box errors.
var (
	// ErrInvalidRecipient is returned for a validator key that is not a
	// usable ed25519 point.
	ErrInvalidRecipient = errors.New("invalid sealed-box recipient")
	// ErrOpen is returned when a sealed box does not open with the key.
	ErrOpen = errors.New("sealed box does not open")
)

// SealKey is a validator identity prepared as a sealed-box recipient: the
// decompressed ed25519 point, its X25519 (Montgomery) form and a table of
// its multiples that turns each seal's shared-secret multiplication into a
// fixed-base one (about 3× cheaper). Preparing it costs a point
// decompression and the table (about 40 KiB, ~100 µs); Cache.SealKey
// memoises it. A SealKey is immutable and safe for concurrent use.
type SealKey struct {
	identity solana.PublicKey
	point    curve.EdwardsPoint
	table    *curve.EdwardsBasepointTable // nil for a one-shot key
	x25519   [32]byte
}

// NewSealKey prepares validator's ed25519 identity as a sealed-box
// recipient for repeated use. It fails for bytes that are not a curve
// point and for small-order points (whose shared secrets are always zero).
func NewSealKey(validator solana.PublicKey) (*SealKey, error) {
	return prepareSealKey(validator, true)
}

// prepareSealKey is NewSealKey; withTable=false skips the multiples table,
// which costs more to build than it saves on a single seal.
func prepareSealKey(validator solana.PublicKey, withTable bool) (*SealKey, error) {
	k := &SealKey{identity: validator}
	var c curve.CompressedEdwardsY
	if _, err := c.SetBytes(validator[:]); err != nil {
		return nil, fmt.Errorf("prepare seal key %s: %w", validator, ErrInvalidRecipient)
	}
	if _, err := k.point.SetCompressedY(&c); err != nil {
		return nil, fmt.Errorf("prepare seal key %s: %w", validator, ErrInvalidRecipient)
	}
	if k.point.IsSmallOrder() {
		return nil, fmt.Errorf("prepare seal key %s: small-order point: %w", validator, ErrInvalidRecipient)
	}
	if withTable {
		k.table = curve.NewEdwardsBasepointTable(&k.point)
	}
	// Same value as X25519PublicKey, without decompressing twice.
	var x curve.MontgomeryPoint
	x.SetEdwards(&k.point)
	k.x25519 = x
	return k, nil
}

// Identity is the validator's ed25519 public key.
func (k *SealKey) Identity() solana.PublicKey { return k.identity }

// X25519 is the validator's X25519 public key, the Montgomery u of its
// ed25519 point.
func (k *SealKey) X25519() [32]byte { return k.x25519 }

// X25519PublicKey converts an ed25519 public key to its X25519 form,
// u = (1+y)/(1−y), as libsodium's crypto_sign_ed25519_pk_to_curve25519.
func X25519PublicKey(edPublic solana.PublicKey) ([32]byte, error) {
	var x [32]byte
	p, err := new(edwards25519.Point).SetBytes(edPublic[:])
	if err != nil {
		return x, fmt.Errorf("convert %s to x25519: %w", edPublic, ErrInvalidRecipient)
	}
	copy(x[:], p.BytesMontgomery())
	return x, nil
}

// X25519PrivateKey converts an ed25519 private key to the X25519 secret
// that opens boxes sealed to its public key: clamp(sha512(seed)[0:32]).
func X25519PrivateKey(edPrivate ed25519.PrivateKey) [32]byte {
	h := sha512.Sum512(edPrivate.Seed())
	var sk [32]byte
	copy(sk[:], h[:32])
	clear(h[:])
	clampScalar(&sk)
	return sk
}

func clampScalar(k *[32]byte) {
	k[0] &= 248
	k[31] &= 127
	k[31] |= 64
}

// Seal encrypts plaintext to validator as a libsodium sealed box
// (crypto_box_seal) addressed to the X25519 form of its ed25519 identity
// (§9.2): epk[32] ‖ XSalsa20-Poly1305 box, with nonce BLAKE2b-192(epk ‖ X).
// The output is len(plaintext)+48 bytes. rand supplies the ephemeral key
// (crypto/rand when nil).
func Seal(validator solana.PublicKey, plaintext []byte, rand io.Reader) ([]byte, error) {
	k, err := prepareSealKey(validator, false)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	return k.Seal(plaintext, rand)
}

// Seal is Seal with a prepared recipient. The result is byte-compatible
// with box.SealAnonymous; it is computed with Edwards-form scalar
// multiplications (fixed-base tables for the ephemeral key and, when
// prepared, the shared secret; a constant-time variable-base
// multiplication otherwise), several times faster than the Montgomery
// ladder.
func (k *SealKey) Seal(plaintext []byte, rand io.Reader) ([]byte, error) {
	return k.appendSeal(make([]byte, 0, len(plaintext)+EncryptionOverhead), plaintext, rand)
}

func (k *SealKey) appendSeal(dst, plaintext []byte, r io.Reader) ([]byte, error) {
	if r == nil {
		r = rand.Reader
	}
	var esk [32]byte
	if _, err := io.ReadFull(r, esk[:]); err != nil {
		return nil, fmt.Errorf("seal: read ephemeral key: %w", err)
	}
	clampScalar(&esk)
	var s scalar.Scalar
	if _, err := s.SetBits(esk[:]); err != nil {
		return nil, fmt.Errorf("seal: ephemeral scalar: %w", err)
	}
	clear(esk[:])

	// epk = X25519(esk, 9) = u([esk]B); shared = X25519(esk, X) = u([esk]A).
	// Both scalar multiplications use the clamped scalar unreduced, so the
	// results equal the Montgomery ladder's for any point.
	var e, sh curve.EdwardsPoint
	var epk, shared curve.MontgomeryPoint
	epk.SetEdwards(e.MulBasepoint(curve.ED25519_BASEPOINT_TABLE, &s))
	if k.table != nil {
		sh.MulBasepoint(k.table, &s)
	} else {
		sh.Mul(&k.point, &s)
	}
	shared.SetEdwards(&sh)
	s.Zero()
	var zero [32]byte
	if subtle.ConstantTimeCompare(shared[:], zero[:]) == 1 {
		return nil, fmt.Errorf("seal: %w: zero shared secret", ErrInvalidRecipient)
	}

	// crypto_box_beforenm: key = HSalsa20(shared, 0^16).
	var key [32]byte
	var in [16]byte
	sharedBytes := [32]byte(shared)
	salsa.HSalsa20(&key, &in, &sharedBytes, &salsa.Sigma)
	clear(sharedBytes[:])

	var nonce [24]byte
	h, _ := blake2b.New(24, nil) // size 24 and no key cannot fail
	h.Write(epk[:])
	h.Write(k.x25519[:])
	h.Sum(nonce[:0])

	dst = append(dst, epk[:]...)
	dst = secretbox.Seal(dst, plaintext, &nonce, &key)
	clear(key[:])
	return dst, nil
}

// Open decrypts a sealed box addressed to the ed25519 identity whose
// private key is validatorPrivateKey (libsodium crypto_box_seal_open with
// the converted keys). It fails with ErrOpen for a wrong key or a
// tampered box.
func Open(validatorPrivateKey ed25519.PrivateKey, sealed []byte) ([]byte, error) {
	if len(validatorPrivateKey) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("open sealed box: private key is %d bytes, want %d", len(validatorPrivateKey), ed25519.PrivateKeySize)
	}
	if len(sealed) < EncryptionOverhead {
		return nil, fmt.Errorf("open sealed box: %w: %d bytes is shorter than the %d-byte overhead", ErrOpen, len(sealed), EncryptionOverhead)
	}
	pub, err := X25519PublicKey(solana.PublicKeyFromBytes(validatorPrivateKey[32:]))
	if err != nil {
		return nil, fmt.Errorf("open sealed box: %w", err)
	}
	sk := X25519PrivateKey(validatorPrivateKey)
	defer clear(sk[:])
	out, ok := box.OpenAnonymous(nil, sealed, &pub, &sk)
	if !ok {
		return nil, fmt.Errorf("open sealed box: %w", ErrOpen)
	}
	return out, nil
}
