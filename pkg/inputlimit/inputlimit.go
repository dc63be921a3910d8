// Package inputlimit holds the bounds ferry checks on untrusted input before
// it parses or decodes it: how deep JSON may nest, how long a base58
// public key, signature or hash may be, and how much of an input an error
// message may repeat.
//
// Each check runs in time linear in its input and allocates nothing, so
// that a hostile request costs no more than reading it: the parsers behind
// them (recursive JSON scanners, base58's quadratic decoder) only ever see
// input already known to be small or shallow.
package inputlimit

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/gagliardetto/solana-go"
	"github.com/mr-tron/base58"
)

// DefaultMaxJSONDepth is the deepest JSON nesting ferry's parsers accept
// (every array and object opens one level): 127, what Agave's JSON-RPC
// server accepts, since serde_json's recursion limit of 128 refuses the
// 128th level. Any request a Solana validator parses, ferry parses too;
// real requests nest at most about ten levels (a batch, a request, its
// params, a config, its filters). Deeper input is refused before any
// recursive parser sees it.
const DefaultMaxJSONDepth = 127

// Base58 text lengths: the longest base58 encoding of a 32-byte public key
// or hash and of a 64-byte signature. Longer text is refused before it is
// decoded (base58 decoding takes time quadratic in the input).
const (
	MaxPubkeyBase58    = 44
	MaxHashBase58      = 44
	MaxSignatureBase58 = 88
)

// Text lengths of a wire transaction (at most 1232 bytes): Agave's limits
// for sendTransaction's base58 and base64 forms. Longer text is refused
// before it is decoded.
const (
	MaxTransactionBase58 = 1683
	MaxTransactionBase64 = 1644
)

// MaxEcho is how many bytes of a client's input an error message repeats
// (Truncate); the rest is cut.
const MaxEcho = 64

// DepthError reports JSON nested deeper than Max levels.
type DepthError struct{ Max int }

func (e *DepthError) Error() string {
	return fmt.Sprintf("JSON nested deeper than %d levels", e.Max)
}

// Shape is what CheckJSON learns about a JSON text without parsing it.
type Shape struct {
	// Array reports a top-level array (a JSON-RPC batch).
	Array bool
	// Elements counts the top-level array's elements (for valid JSON
	// exactly; an invalid text may be over-counted, never under-counted).
	Elements int
}

// CheckJSON scans b once, without recursion or allocation, and fails with
// a *DepthError when brackets nest deeper than maxDepth (maxDepth <= 0
// means DefaultMaxJSONDepth). It skips over strings, so brackets inside
// them do not count, but it does not validate JSON: a real parser must
// still run, on input now known to be shallow. It also counts the elements
// of a top-level array, so batch limits apply before anything is decoded.
func CheckJSON(b []byte, maxDepth int) (Shape, error) {
	if maxDepth <= 0 {
		maxDepth = DefaultMaxJSONDepth
	}
	var sh Shape
	first := firstNonSpace(b)
	sh.Array = first < len(b) && b[first] == '['
	depth := 0
	content := false // a value started at depth 1 of a top-level array
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case '"':
			// Skip the string: an escape always covers the next byte.
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			if depth == 1 && sh.Array {
				content = true
			}
		case '[', '{':
			if depth == 1 && sh.Array {
				content = true
			}
			depth++
			if depth > maxDepth {
				return sh, &DepthError{Max: maxDepth}
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 1 && sh.Array {
				sh.Elements++
			}
		case ' ', '\t', '\n', '\r':
		default:
			if depth == 1 && sh.Array {
				content = true
			}
		}
	}
	if sh.Array && content {
		sh.Elements++
	}
	return sh, nil
}

func firstNonSpace(b []byte) int {
	for i, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return i
		}
	}
	return len(b)
}

// Truncate returns s cut to at most n bytes (on a UTF-8 boundary) with
// "…" appended when it was longer: what an error message may quote of a
// client's input. n <= 0 means MaxEcho.
func Truncate(s string, n int) string {
	if n <= 0 {
		n = MaxEcho
	}
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// ErrTooLong is returned for base58 text longer than its type allows.
var ErrTooLong = errors.New("base58 text too long")

// DecodeBase58 decodes base58 text of at most maxLen characters; longer
// text fails with ErrTooLong before any decoding.
func DecodeBase58(s string, maxLen int) ([]byte, error) {
	if len(s) > maxLen {
		return nil, ErrTooLong
	}
	return base58.Decode(s)
}

// PublicKey parses a base58 public key, refusing text longer than
// MaxPubkeyBase58 before decoding it.
func PublicKey(s string) (solana.PublicKey, error) {
	if len(s) > MaxPubkeyBase58 {
		return solana.PublicKey{}, ErrTooLong
	}
	return solana.PublicKeyFromBase58(s)
}

// Signature parses a base58 signature, refusing text longer than
// MaxSignatureBase58 before decoding it.
func Signature(s string) (solana.Signature, error) {
	if len(s) > MaxSignatureBase58 {
		return solana.Signature{}, ErrTooLong
	}
	return solana.SignatureFromBase58(s)
}

// Hash parses a base58 hash (a blockhash), refusing text longer than
// MaxHashBase58 before decoding it.
func Hash(s string) (solana.Hash, error) {
	if len(s) > MaxHashBase58 {
		return solana.Hash{}, ErrTooLong
	}
	return solana.HashFromBase58(s)
}
