package api

import (
	"strconv"
	"unicode/utf8"

	"github.com/ferry-sh/ferry/pkg/payments"
)

// appendUnsignedTransaction encodes the hottest response without
// reflection. The output is byte-for-byte what encoding/json produces with
// SetEscapeHTML(false) (TestAppendUnsignedTransaction checks it).
func appendUnsignedTransaction(b []byte, t *payments.UnsignedTransaction) []byte {
	b = append(b, `{"kind":`...)
	b = appendString(b, t.Kind)
	b = append(b, `,"version":`...)
	b = appendString(b, t.Version)
	b = append(b, `,"transactionBase64":`...)
	b = appendString(b, t.TransactionBase64)
	b = append(b, `,"sendTo":`...)
	b = appendString(b, t.SendTo)
	if t.SendRPCEndpoint != "" {
		b = append(b, `,"sendRpcEndpoint":`...)
		b = appendString(b, t.SendRPCEndpoint)
	}
	if t.From != "" {
		b = append(b, `,"from":`...)
		b = appendString(b, t.From)
	}
	b = append(b, `,"recentBlockhash":`...)
	b = appendString(b, t.RecentBlockhash)
	b = append(b, `,"lastValidBlockHeight":`...)
	b = strconv.AppendUint(b, t.LastValidBlockHeight, 10)
	b = append(b, `,"instructionCount":`...)
	b = strconv.AppendInt(b, int64(t.InstructionCount), 10)
	b = append(b, `,"requiredSigners":`...)
	if t.RequiredSigners == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, s := range t.RequiredSigners {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, s)
		}
		b = append(b, ']')
	}
	if t.Validator != "" {
		b = append(b, `,"validator":`...)
		b = appendString(b, t.Validator)
	}
	if t.Fees != nil {
		b = append(b, `,"fees":{"lamports":`...)
		b = appendString(b, t.Fees.Lamports)
		b = append(b, `,"tokens":`...)
		b = appendString(b, t.Fees.Tokens)
		b = append(b, '}')
	}
	return append(b, '}')
}

const hexDigits = "0123456789abcdef"

// appendString quotes s as encoding/json does without HTML escaping:
// control characters escaped (\b \f \n \r \t or \u00XX), invalid UTF-8
// as \ufffd, and U+2028 and U+2029 escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
