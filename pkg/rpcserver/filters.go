package rpcserver

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/mr-tron/base58"

	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// Account filter limits (Agave rpc-client-api filter.rs and request.rs).
const (
	// MaxFilters is MAX_GET_PROGRAM_ACCOUNT_FILTERS.
	MaxFilters = 4
	// maxMemcmpBytes bounds a memcmp filter's decoded bytes; the encoded
	// forms are bounded by the encodings of that many bytes.
	maxMemcmpBytes       = 128
	maxMemcmpBase58Chars = 175
	maxMemcmpBase64Chars = 172
)

// Filter is one account filter of getProgramAccounts and programSubscribe
// (Agave's RpcFilterType): {"dataSize":N}, {"memcmp":{"offset":N,
// "bytes":..., "encoding":...}} or "tokenAccountState". Decode a list with
// encoding/json, then check it with VerifyFilters.
type Filter struct {
	// DataSize, if set, matches accounts with exactly that many bytes.
	DataSize *uint64
	// Memcmp, if set, matches accounts whose data holds Bytes at Offset.
	Memcmp *Memcmp
	// TokenAccountState matches initialized token accounts (SPL Token or
	// Token-2022 layout).
	TokenAccountState bool
}

// Memcmp is a memcmp filter. Bytes are decoded by VerifyFilters; until
// then the encoded form is kept so that errors are reported as Agave
// reports them.
type Memcmp struct {
	Offset uint64
	Bytes  []byte

	encoded  string
	encoding string // base58, base64 or bytes
}

// UnmarshalJSON reads one filter in Agave's serde form.
func (f *Filter) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		if s != "tokenAccountState" {
			return fmt.Errorf("unknown variant `%s`, expected one of `dataSize`, `memcmp`, `tokenAccountState`", s)
		}
		*f = Filter{TokenAccountState: true}
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return fmt.Errorf("invalid type: %s, expected enum RpcFilterType", jsonKind(b))
	}
	if len(obj) != 1 {
		return fmt.Errorf("invalid value: map with %d entries, expected map with a single key", len(obj))
	}
	for k, v := range obj {
		switch k {
		case "dataSize":
			var n uint64
			if err := json.Unmarshal(v, &n); err != nil {
				return fmt.Errorf("invalid type: %s, expected u64", jsonKind(bytes.TrimSpace(v)))
			}
			*f = Filter{DataSize: &n}
		case "memcmp":
			m, err := decodeMemcmp(v)
			if err != nil {
				return err
			}
			*f = Filter{Memcmp: m}
		default:
			return fmt.Errorf("unknown variant `%s`, expected one of `dataSize`, `memcmp`, `tokenAccountState`", k)
		}
	}
	return nil
}

func decodeMemcmp(b json.RawMessage) (*Memcmp, error) {
	var raw struct {
		Offset   *uint64         `json:"offset"`
		Bytes    json.RawMessage `json:"bytes"`
		Encoding *string         `json:"encoding"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("%s", jsonErrorText(err))
	}
	if raw.Offset == nil {
		return nil, fmt.Errorf("missing field `offset`")
	}
	m := &Memcmp{Offset: *raw.Offset, encoding: "base58"}
	if raw.Encoding != nil {
		switch *raw.Encoding {
		case "base58", "base64", "bytes":
			m.encoding = *raw.Encoding
		default:
			return nil, fmt.Errorf("unknown variant `%s`, expected one of `base58`, `base64`, `bytes`", *raw.Encoding)
		}
	}
	data := bytes.TrimSpace(raw.Bytes)
	switch {
	case len(data) == 0:
		return nil, fmt.Errorf("missing field `bytes`")
	case data[0] == '"':
		if err := json.Unmarshal(data, &m.encoded); err != nil {
			return nil, err
		}
		if m.encoding == "bytes" {
			// Agave cannot take a string as raw bytes either.
			return nil, fmt.Errorf("data did not match any variant of untagged enum DataType")
		}
	case data[0] == '[':
		var vals []uint8
		if err := json.Unmarshal(data, &vals); err != nil {
			return nil, fmt.Errorf("data did not match any variant of untagged enum DataType")
		}
		m.Bytes, m.encoding = vals, "bytes"
	default:
		return nil, fmt.Errorf("data did not match any variant of untagged enum DataType")
	}
	return m, nil
}

// VerifyFilters checks a filter list as Agave's verify_filters does and
// decodes the memcmp bytes. Its errors are -32602 with Agave's messages.
func VerifyFilters(fs []Filter) error {
	if len(fs) > MaxFilters {
		return InvalidParam("Too many filters provided; max %d", MaxFilters)
	}
	for i := range fs {
		m := fs[i].Memcmp
		if m == nil {
			continue
		}
		switch m.encoding {
		case "base58":
			if len(m.encoded) > maxMemcmpBase58Chars {
				return InvalidParam("Invalid param: DataTooLarge")
			}
			b, err := base58.Decode(m.encoded)
			if err != nil {
				return InvalidParam("Invalid param: Base58DecodeError(%v)", err)
			}
			m.Bytes = b
		case "base64":
			if len(m.encoded) > maxMemcmpBase64Chars {
				return InvalidParam("Invalid param: DataTooLarge")
			}
			b, err := base64.StdEncoding.DecodeString(m.encoded)
			if err != nil {
				return InvalidParam("Invalid param: Base64DecodeError(%v)", err)
			}
			m.Bytes = b
		}
		if len(m.Bytes) > maxMemcmpBytes {
			return InvalidParam("Invalid param: DataTooLarge")
		}
	}
	return nil
}

// Allows reports whether an account passes the filter (Agave's
// filter_allows). Memcmp bytes must have been decoded by VerifyFilters.
func (f Filter) Allows(a *ledger.Account) bool {
	switch {
	case f.DataSize != nil:
		return uint64(len(a.Data)) == *f.DataSize
	case f.Memcmp != nil:
		off := f.Memcmp.Offset
		return off <= uint64(len(a.Data)) && bytes.HasPrefix(a.Data[off:], f.Memcmp.Bytes)
	case f.TokenAccountState:
		return validTokenAccountData(a.Data)
	}
	return false
}

// FiltersAllow reports whether an account passes every filter.
func FiltersAllow(fs []Filter, a *ledger.Account) bool {
	for _, f := range fs {
		if !f.Allows(a) {
			return false
		}
	}
	return true
}

// validTokenAccountData is Token-2022's Account::valid_account_data: an
// initialized 165-byte token account, or a longer account whose type byte
// says Account (the extension layout; its state is not checked).
func validTokenAccountData(d []byte) bool {
	const stateOffset = 108
	if len(d) == spl.TokenAccountSize {
		return d[stateOffset] != byte(spl.StateUninitialized)
	}
	return len(d) > spl.TokenAccountSize && d[spl.TokenAccountSize] == spl.AccountTypeAccount
}
