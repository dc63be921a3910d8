package inspect

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ferry-sh/ferry/pkg/inputlimit"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// ErrNotATransaction is returned by ParseTransaction when the text is
// neither base64, base58 nor a build response's JSON.
var ErrNotATransaction = errors.New("transaction is neither base64 nor base58")

// ErrNoTransactionField is returned by ParseTransaction for JSON input
// without a transactionBase64 field.
var ErrNoTransactionField = errors.New("input looks like JSON but has no transactionBase64 field")

// ParseTransaction reads a wire transaction (unsigned or signed, legacy or
// v0) given as base64, base58, or the JSON of a build response (its
// transactionBase64 is used). Surrounding whitespace is ignored. It is the
// input parser of `ferry inspect` and of the MCP tool transaction.inspect.
func ParseTransaction(s string) (*txwire.Transaction, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "{") {
		var resp struct {
			TransactionBase64 string `json:"transactionBase64"`
		}
		if err := json.Unmarshal([]byte(s), &resp); err != nil || resp.TransactionBase64 == "" {
			return nil, ErrNoTransactionField
		}
		s = strings.TrimSpace(resp.TransactionBase64)
	}
	if s == "" {
		return nil, ErrNotATransaction
	}
	// Base58 text uses only base64 characters, so a base58 transaction can
	// also decode as base64 (into garbage): base64 wins only when its bytes
	// are a transaction.
	var b64Err error
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		tx, derr := txwire.Decode(b)
		if derr == nil {
			return tx, nil
		}
		b64Err = derr
	}
	// Base58 decoding is quadratic: text longer than any transaction's
	// base58 form is refused before it.
	b, err := inputlimit.DecodeBase58(s, inputlimit.MaxTransactionBase58)
	if err != nil || len(b) == 0 {
		if b64Err != nil {
			return nil, fmt.Errorf("decode transaction: %w", b64Err)
		}
		return nil, ErrNotATransaction
	}
	tx, err := txwire.Decode(b)
	if err != nil {
		if b64Err != nil {
			err = b64Err
		}
		return nil, fmt.Errorf("decode transaction: %w", err)
	}
	return tx, nil
}
