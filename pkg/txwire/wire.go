package txwire

import (
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/gagliardetto/solana-go"
)

// MaxWireSize is the largest serialized transaction a Solana node accepts
// (PACKET_DATA_SIZE = 1280 - 40 - 8).
const MaxWireSize = 1232

// Version is a message format version.
type Version int

const (
	// Legacy is the original message format without a version prefix.
	Legacy Version = -1
	// V0 is the versioned format with address lookup tables.
	V0 Version = 0
)

// String returns "legacy" or "v0", as the payments API spells versions.
func (v Version) String() string {
	if v == Legacy {
		return "legacy"
	}
	return fmt.Sprintf("v%d", int(v))
}

// Header counts the signer and read-only accounts of a message.
type Header struct {
	NumRequiredSignatures       uint8
	NumReadonlySignedAccounts   uint8
	NumReadonlyUnsignedAccounts uint8
}

// CompiledInstruction is an instruction whose accounts are indexes into the
// message's account list.
type CompiledInstruction struct {
	ProgramIDIndex uint8
	Accounts       []uint8
	Data           []byte
}

// AddressTableLookup loads extra accounts of a v0 message from a lookup table.
type AddressTableLookup struct {
	AccountKey      solana.PublicKey
	WritableIndexes []uint8
	ReadonlyIndexes []uint8
}

// Message is a compiled legacy or v0 message.
type Message struct {
	Version             Version
	Header              Header
	AccountKeys         []solana.PublicKey
	RecentBlockhash     solana.Hash
	Instructions        []CompiledInstruction
	AddressTableLookups []AddressTableLookup // v0 only
}

// Signers returns the keys whose signatures the message requires, in
// signature order.
func (m *Message) Signers() []solana.PublicKey {
	n := min(int(m.Header.NumRequiredSignatures), len(m.AccountKeys))
	return m.AccountKeys[:n]
}

// IsSigner reports whether static account i must sign.
func (m *Message) IsSigner(i int) bool { return i < int(m.Header.NumRequiredSignatures) }

// IsWritable reports whether static account i is writable under the header
// rules. Accounts loaded through lookup tables are not covered.
func (m *Message) IsWritable(i int) bool {
	h := m.Header
	if i < int(h.NumRequiredSignatures) {
		return i < int(h.NumRequiredSignatures-h.NumReadonlySignedAccounts)
	}
	return i < len(m.AccountKeys)-int(h.NumReadonlyUnsignedAccounts)
}

// NumLookupAccounts is the number of accounts loaded through lookup tables.
func (m *Message) NumLookupAccounts() int {
	n := 0
	for _, l := range m.AddressTableLookups {
		n += len(l.WritableIndexes) + len(l.ReadonlyIndexes)
	}
	return n
}

// MarshalBinary encodes the message as it is signed.
func (m *Message) MarshalBinary() ([]byte, error) {
	return m.AppendBinary(make([]byte, 0, m.sizeHint())), nil
}

// Bytes is MarshalBinary without the impossible error.
func (m *Message) Bytes() []byte { return m.AppendBinary(make([]byte, 0, m.sizeHint())) }

func (m *Message) sizeHint() int {
	n := 3 + 3 + 32*len(m.AccountKeys) + 32 + 3
	for _, ix := range m.Instructions {
		n += 1 + 3 + len(ix.Accounts) + 3 + len(ix.Data)
	}
	return n
}

// AppendBinary appends the message encoding to b.
func (m *Message) AppendBinary(b []byte) []byte {
	if m.Version != Legacy {
		b = append(b, 0x80|byte(m.Version))
	}
	b = append(b, m.Header.NumRequiredSignatures, m.Header.NumReadonlySignedAccounts, m.Header.NumReadonlyUnsignedAccounts)
	b = AppendShortVec(b, len(m.AccountKeys))
	for i := range m.AccountKeys {
		b = append(b, m.AccountKeys[i][:]...)
	}
	b = append(b, m.RecentBlockhash[:]...)
	b = AppendShortVec(b, len(m.Instructions))
	for _, ix := range m.Instructions {
		b = append(b, ix.ProgramIDIndex)
		b = AppendShortVec(b, len(ix.Accounts))
		b = append(b, ix.Accounts...)
		b = AppendShortVec(b, len(ix.Data))
		b = append(b, ix.Data...)
	}
	if m.Version != Legacy {
		b = AppendShortVec(b, len(m.AddressTableLookups))
		for _, l := range m.AddressTableLookups {
			b = append(b, l.AccountKey[:]...)
			b = AppendShortVec(b, len(l.WritableIndexes))
			b = append(b, l.WritableIndexes...)
			b = AppendShortVec(b, len(l.ReadonlyIndexes))
			b = append(b, l.ReadonlyIndexes...)
		}
	}
	return b
}

// Transaction is a message with one signature slot per required signer.
type Transaction struct {
	Signatures []solana.Signature
	Message    Message

	// raw holds the message bytes as they were decoded, so that signature
	// verification checks exactly what was signed.
	raw []byte
}

// NewUnsigned wraps a message in a transaction with zeroed signatures, which
// is how the payments API returns unsigned transactions.
func NewUnsigned(m *Message) *Transaction {
	return &Transaction{
		Signatures: make([]solana.Signature, m.Header.NumRequiredSignatures),
		Message:    *m,
	}
}

// ID returns the transaction id: the first signature (the fee payer's).
func (t *Transaction) ID() solana.Signature {
	if len(t.Signatures) == 0 {
		return solana.Signature{}
	}
	return t.Signatures[0]
}

// MessageBytes returns the bytes the signatures cover.
func (t *Transaction) MessageBytes() []byte {
	if t.raw != nil {
		return t.raw
	}
	return t.Message.Bytes()
}

// MarshalBinary encodes the transaction in wire format. It does not check the
// size limit; see CheckSize.
func (t *Transaction) MarshalBinary() ([]byte, error) { return t.Bytes(), nil }

// Bytes is MarshalBinary without the impossible error.
func (t *Transaction) Bytes() []byte {
	msg := t.MessageBytes()
	b := make([]byte, 0, 3+64*len(t.Signatures)+len(msg))
	b = AppendShortVec(b, len(t.Signatures))
	for i := range t.Signatures {
		b = append(b, t.Signatures[i][:]...)
	}
	return append(b, msg...)
}

// Base64 returns the wire encoding in standard padded base64.
func (t *Transaction) Base64() string { return base64.StdEncoding.EncodeToString(t.Bytes()) }

// ErrTooLarge reports a transaction above MaxWireSize bytes.
var ErrTooLarge = errors.New("transaction too large")

// TooLargeError carries the size of an oversized transaction. It matches
// ErrTooLarge with errors.Is.
type TooLargeError struct{ Size int }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("Transaction too large: %d > %d", e.Size, MaxWireSize)
}

// Is makes errors.Is(err, ErrTooLarge) true.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// CheckSize returns a *TooLargeError if the wire size exceeds MaxWireSize.
func (t *Transaction) CheckSize() error {
	n := ShortVecLen(len(t.Signatures)) + 64*len(t.Signatures) + len(t.MessageBytes())
	if n > MaxWireSize {
		return &TooLargeError{Size: n}
	}
	return nil
}

// AppendShortVec appends n in Solana's compact-u16 encoding.
func AppendShortVec(b []byte, n int) []byte {
	for {
		c := byte(n & 0x7f)
		n >>= 7
		if n == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// ShortVecLen is the encoded size of n in compact-u16.
func ShortVecLen(n int) int {
	l := 1
	for n >= 0x80 {
		n >>= 7
		l++
	}
	return l
}
