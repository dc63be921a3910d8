package rpcserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/inputlimit"
	"github.com/ferry-sh/ferry/pkg/ledger"
)

// Params are a request's positional parameters.
type Params []json.RawMessage

// Has reports whether parameter i is present and not null.
func (p Params) Has(i int) bool {
	return i < len(p) && !bytes.Equal(bytes.TrimSpace(p[i]), []byte("null"))
}

// Count checks the number of parameters, with Agave's messages.
func (p Params) Count(minN, maxN int) error {
	switch {
	case len(p) < minN && minN == 1:
		return InvalidParams("invalid length 0, expected at least one parameter")
	case len(p) < minN:
		return InvalidParams("invalid length %d, expected at least %d parameters", len(p), minN)
	case len(p) > maxN:
		return InvalidParams("invalid length %d, expected fewer elements in array", len(p))
	}
	return nil
}

// Decode unmarshals parameter i into v, reporting a type mismatch as
// -32602. A missing parameter is an error; use Has for optional ones.
func (p Params) Decode(i int, v any) error {
	if i >= len(p) {
		return InvalidParams("invalid length %d, expected at least %d parameters", len(p), i+1)
	}
	if err := json.Unmarshal(p[i], v); err != nil {
		return InvalidParams("%s", jsonErrorText(err))
	}
	return nil
}

// Config unmarshals optional config object i into v (left alone when the
// parameter is absent or null).
func (p Params) Config(i int, v any) error {
	if !p.Has(i) {
		return nil
	}
	if t := bytes.TrimSpace(p[i]); len(t) == 0 || t[0] != '{' {
		return InvalidParams("invalid type: %s, expected a configuration object", jsonKind(t))
	}
	return p.Decode(i, v)
}

// String decodes a string parameter.
func (p Params) String(i int) (string, error) {
	if i < len(p) {
		if s, ok := plainString(p[i]); ok {
			return s, nil
		}
	}
	var s string
	if err := p.Decode(i, &s); err != nil {
		return "", err
	}
	return s, nil
}

// stringView is String for a parameter the caller reads only while the
// request is handled and does not keep: a plain JSON string comes back
// as a view of the request body rather than a copy (sendTransaction's
// transaction, most of each request's bytes under a stream of sends).
func (p Params) stringView(i int) (string, error) {
	if i < len(p) {
		if c, ok := plainContent(p[i]); ok {
			return unsafe.String(unsafe.SliceData(c), len(c)), nil
		}
	}
	return p.String(i)
}

// Strings decodes an array of strings parameter.
func (p Params) Strings(i int) ([]string, error) {
	if i < len(p) {
		if items, ok := splitArray(p[i]); ok {
			out := make([]string, len(items))
			fast := true
			for j, it := range items {
				if out[j], fast = plainString(it); !fast {
					break
				}
			}
			if fast {
				return out, nil
			}
		}
	}
	var out []string
	if err := p.Decode(i, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Uint decodes an unsigned integer parameter.
func (p Params) Uint(i int) (uint64, error) {
	var n uint64
	if err := p.Decode(i, &n); err != nil {
		return 0, err
	}
	return n, nil
}

// Pubkey decodes a base58 public key parameter.
func (p Params) Pubkey(i int) (solana.PublicKey, error) {
	s, err := p.String(i)
	if err != nil {
		return solana.PublicKey{}, err
	}
	return ParsePubkey(s)
}

// ParsePubkey parses a base58 public key with Agave's error. Text longer
// than a public key's 44 characters is refused before it is decoded.
func ParsePubkey(s string) (solana.PublicKey, error) {
	k, err := inputlimit.PublicKey(s)
	if err != nil {
		return solana.PublicKey{}, InvalidParam("Invalid param: Invalid")
	}
	return k, nil
}

// ParseSignature parses a base58 signature with Agave's error. Text longer
// than a signature's 88 characters is refused before it is decoded.
func ParseSignature(s string) (solana.Signature, error) {
	sig, err := inputlimit.Signature(s)
	if err != nil {
		return solana.Signature{}, InvalidParam("Invalid param: Invalid")
	}
	return sig, nil
}

// ParseHash parses a base58 hash with Agave's error. Text longer than a
// hash's 44 characters is refused before it is decoded.
func ParseHash(s string) (solana.Hash, error) {
	h, err := inputlimit.Hash(s)
	if err != nil {
		return solana.Hash{}, InvalidParam("Invalid param: Invalid")
	}
	return h, nil
}

func jsonKind(b []byte) string {
	if len(b) == 0 {
		return "unit"
	}
	switch b[0] {
	case '"':
		return "string"
	case '[':
		return "sequence"
	case '{':
		return "map"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// jsonErrorText turns encoding/json errors into serde-like text.
func jsonErrorText(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		where := ""
		if te.Field != "" {
			where = fmt.Sprintf(" for field `%s`", te.Field)
		}
		return fmt.Sprintf("invalid type: %s, expected %s%s", inputlimit.Truncate(te.Value, inputlimit.MaxEcho), goTypeName(te.Type.String()), inputlimit.Truncate(where, inputlimit.MaxEcho))
	}
	return inputlimit.Truncate(strings.TrimPrefix(err.Error(), "json: "), 256)
}

func goTypeName(t string) string {
	switch {
	case strings.HasPrefix(t, "uint"), strings.HasPrefix(t, "*uint"):
		return "u64"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "*int"):
		return "i64"
	case t == "string", t == "*string":
		return "a string"
	case t == "bool", t == "*bool":
		return "a boolean"
	case strings.HasPrefix(t, "[]"):
		return "a sequence"
	}
	return "a " + strings.TrimPrefix(t, "*")
}

// commitmentConfig is the commitment part of most configs.
type commitmentConfig struct {
	Commitment     *string `json:"commitment"`
	MinContextSlot *uint64 `json:"minContextSlot"`
}

// level parses the commitment (default finalized).
func (c commitmentConfig) level() (ledger.Commitment, error) {
	if c.Commitment == nil {
		return ledger.Finalized, nil
	}
	lv, err := ledger.ParseCommitment(*c.Commitment)
	if err != nil {
		return 0, InvalidParams("unknown variant `%s`, expected one of `processed`, `confirmed`, `finalized`", inputlimit.Truncate(*c.Commitment, inputlimit.MaxEcho))
	}
	return lv, nil
}

// historyLevel is level for block and transaction methods, which refuse
// processed.
func (c commitmentConfig) historyLevel() (ledger.Commitment, error) {
	lv, err := c.level()
	if err != nil {
		return 0, err
	}
	if lv == ledger.Processed {
		return 0, InvalidParam("Method does not support commitment below `confirmed`")
	}
	return lv, nil
}
