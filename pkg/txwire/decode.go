package txwire

import (
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/gagliardetto/solana-go"
)

// ErrMalformed wraps every decoding failure.
var ErrMalformed = errors.New("malformed transaction")

type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s at byte %d", ErrMalformed, what, r.off)
	}
}

func (r *reader) byte1(what string) byte {
	if r.err != nil {
		return 0
	}
	if r.off >= len(r.b) {
		r.fail("unexpected end reading " + what)
		return 0
	}
	c := r.b[r.off]
	r.off++
	return c
}

func (r *reader) bytes(n int, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || len(r.b)-r.off < n {
		r.fail("unexpected end reading " + what)
		return nil
	}
	s := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return s
}

// shortVec decodes a compact-u16, rejecting non-canonical and oversized forms
// as Agave does.
func (r *reader) shortVec(what string) int {
	v := 0
	for i := 0; i < 3; i++ {
		c := r.byte1(what)
		if r.err != nil {
			return 0
		}
		v |= int(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			if c == 0 && i > 0 {
				r.fail("non-canonical length for " + what)
				return 0
			}
			if v > 0xffff {
				r.fail("length overflow for " + what)
				return 0
			}
			return v
		}
	}
	r.fail("length overflow for " + what)
	return 0
}

// Decode parses a wire transaction, legacy or v0. It checks the structure
// (lengths, one signature per required signer, index bounds) but not the
// signatures; see Sanitize for the remaining consistency rules.
func Decode(b []byte) (*Transaction, error) {
	r := &reader{b: b}
	nsig := r.shortVec("signature count")
	if r.err == nil && nsig*64 > len(b) {
		r.fail("signature count exceeds the data")
	}
	var t Transaction
	if r.err == nil {
		t.Signatures = make([]solana.Signature, nsig)
		for i := 0; i < nsig; i++ {
			copy(t.Signatures[i][:], r.bytes(64, "signature"))
		}
	}
	start := r.off
	decodeMessage(r, &t.Message)
	if r.err != nil {
		return nil, r.err
	}
	if r.off != len(b) {
		return nil, fmt.Errorf("%w: %d trailing bytes", ErrMalformed, len(b)-r.off)
	}
	if int(t.Message.Header.NumRequiredSignatures) != nsig {
		return nil, fmt.Errorf("%w: %d signatures for %d required signers", ErrMalformed, nsig, t.Message.Header.NumRequiredSignatures)
	}
	t.raw = b[start:]
	return &t, nil
}

// DecodeMessage parses bare message bytes (no signatures).
func DecodeMessage(b []byte) (*Message, error) {
	r := &reader{b: b}
	var m Message
	decodeMessage(r, &m)
	if r.err != nil {
		return nil, r.err
	}
	if r.off != len(b) {
		return nil, fmt.Errorf("%w: %d trailing bytes", ErrMalformed, len(b)-r.off)
	}
	return &m, nil
}

// DecodeBase64 decodes standard padded base64 and then the transaction.
func DecodeBase64(s string) (*Transaction, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%w: invalid base64: %v", ErrMalformed, err)
	}
	return Decode(b)
}

func decodeMessage(r *reader, m *Message) {
	m.Version = Legacy
	if r.err == nil && r.off < len(r.b) && r.b[r.off]&0x80 != 0 {
		v := r.byte1("version") & 0x7f
		if v != 0 {
			r.fail(fmt.Sprintf("unsupported message version %d", v))
			return
		}
		m.Version = V0
	}
	m.Header.NumRequiredSignatures = r.byte1("header")
	m.Header.NumReadonlySignedAccounts = r.byte1("header")
	m.Header.NumReadonlyUnsignedAccounts = r.byte1("header")
	nkeys := r.shortVec("account count")
	if r.err == nil && nkeys*32 > len(r.b)-r.off {
		r.fail("account count exceeds the data")
	}
	if r.err != nil {
		return
	}
	m.AccountKeys = make([]solana.PublicKey, nkeys)
	for i := range m.AccountKeys {
		copy(m.AccountKeys[i][:], r.bytes(32, "account key"))
	}
	copy(m.RecentBlockhash[:], r.bytes(32, "recent blockhash"))
	nix := r.shortVec("instruction count")
	if r.err == nil && nix*3 > len(r.b)-r.off {
		r.fail("instruction count exceeds the data")
	}
	if r.err != nil {
		return
	}
	m.Instructions = make([]CompiledInstruction, nix)
	for i := range m.Instructions {
		ix := &m.Instructions[i]
		ix.ProgramIDIndex = r.byte1("program index")
		ix.Accounts = r.bytes(r.shortVec("instruction accounts"), "instruction accounts")
		ix.Data = r.bytes(r.shortVec("instruction data"), "instruction data")
		if r.err != nil {
			return
		}
	}
	if m.Version == V0 {
		nl := r.shortVec("lookup count")
		if r.err == nil && nl*34 > len(r.b)-r.off {
			r.fail("lookup count exceeds the data")
		}
		if r.err != nil {
			return
		}
		m.AddressTableLookups = make([]AddressTableLookup, nl)
		for i := range m.AddressTableLookups {
			l := &m.AddressTableLookups[i]
			copy(l.AccountKey[:], r.bytes(32, "lookup table"))
			l.WritableIndexes = r.bytes(r.shortVec("lookup indexes"), "lookup indexes")
			l.ReadonlyIndexes = r.bytes(r.shortVec("lookup indexes"), "lookup indexes")
			if r.err != nil {
				return
			}
		}
	}
}

// Sanitize errors mirror Agave's sanitize failures.
var (
	// ErrSanitize is a structurally inconsistent message (SanitizeFailure).
	ErrSanitize = errors.New("SanitizeFailure")
	// ErrAccountLoadedTwice is a message that lists a key twice.
	ErrAccountLoadedTwice = errors.New("AccountLoadedTwice")
)

// Sanitize applies Agave's message sanity rules: header counts within the key
// list, a writable fee payer, valid program and account indexes, no program
// at index 0, and no duplicate keys.
func (m *Message) Sanitize() error {
	h := m.Header
	n := len(m.AccountKeys)
	total := n + m.NumLookupAccounts()
	switch {
	case h.NumRequiredSignatures == 0:
		return fmt.Errorf("%w: no signers", ErrSanitize)
	case int(h.NumRequiredSignatures) > n:
		return fmt.Errorf("%w: more signers than accounts", ErrSanitize)
	case h.NumReadonlySignedAccounts >= h.NumRequiredSignatures:
		return fmt.Errorf("%w: fee payer must be writable", ErrSanitize)
	case int(h.NumReadonlyUnsignedAccounts)+int(h.NumRequiredSignatures) > n:
		return fmt.Errorf("%w: read-only count exceeds accounts", ErrSanitize)
	case total > 256:
		return fmt.Errorf("%w: too many accounts", ErrSanitize)
	}
	for _, ix := range m.Instructions {
		// Programs must be static keys and may not be the fee payer.
		if ix.ProgramIDIndex == 0 || int(ix.ProgramIDIndex) >= n {
			return fmt.Errorf("%w: invalid program index %d", ErrSanitize, ix.ProgramIDIndex)
		}
		for _, a := range ix.Accounts {
			if int(a) >= total {
				return fmt.Errorf("%w: invalid account index %d", ErrSanitize, a)
			}
		}
	}
	if n <= 32 {
		for i := 1; i < n; i++ {
			for j := 0; j < i; j++ {
				if m.AccountKeys[i] == m.AccountKeys[j] {
					return ErrAccountLoadedTwice
				}
			}
		}
	} else {
		seen := make(map[solana.PublicKey]struct{}, n)
		for _, k := range m.AccountKeys {
			if _, dup := seen[k]; dup {
				return ErrAccountLoadedTwice
			}
			seen[k] = struct{}{}
		}
	}
	return nil
}
