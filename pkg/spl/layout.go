package spl

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/gagliardetto/solana-go"
)

// Account sizes.
const (
	MintSize         = 82
	TokenAccountSize = 165
	MultisigSize     = 355
)

// Token-2022 account type byte, stored at offset 165 of extended accounts.
const (
	AccountTypeUninitialized = 0
	AccountTypeMint          = 1
	AccountTypeAccount       = 2
)

// ErrInvalidAccount is returned for data that is not the expected layout.
var ErrInvalidAccount = errors.New("invalid account data")

// Mint is an SPL mint (82 bytes; Token-2022 extensions follow at 165+).
type Mint struct {
	MintAuthority   *solana.PublicKey
	Supply          uint64
	Decimals        uint8
	IsInitialized   bool
	FreezeAuthority *solana.PublicKey
}

// TokenState is a token account's state byte.
type TokenState uint8

// Token account states.
const (
	StateUninitialized TokenState = iota
	StateInitialized
	StateFrozen
)

// String is the jsonParsed spelling: "uninitialized", "initialized", "frozen".
func (s TokenState) String() string {
	switch s {
	case StateUninitialized:
		return "uninitialized"
	case StateInitialized:
		return "initialized"
	case StateFrozen:
		return "frozen"
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// TokenAccount is an SPL token account (165 bytes; Token-2022 extensions
// follow).
type TokenAccount struct {
	Mint            solana.PublicKey
	Owner           solana.PublicKey
	Amount          uint64
	Delegate        *solana.PublicKey
	State           TokenState
	IsNative        *uint64 // rent-exempt reserve of a wrapped-SOL account
	DelegatedAmount uint64
	CloseAuthority  *solana.PublicKey
}

func getOptKey(b []byte) (*solana.PublicKey, error) {
	switch binary.LittleEndian.Uint32(b) {
	case 0:
		return nil, nil
	case 1:
		var k solana.PublicKey
		copy(k[:], b[4:36])
		return &k, nil
	}
	return nil, ErrInvalidAccount
}

func putOptKey(b []byte, k *solana.PublicKey) {
	if k == nil {
		clear(b[:36])
		return
	}
	binary.LittleEndian.PutUint32(b, 1)
	copy(b[4:36], k[:])
}

// DecodeMint decodes a mint. Token-2022 mints may be longer than 82 bytes;
// then byte 165 must be the Mint account type.
func DecodeMint(data []byte) (Mint, error) {
	var m Mint
	if len(data) < MintSize || (len(data) > MintSize && (len(data) <= TokenAccountSize || data[TokenAccountSize] != AccountTypeMint)) {
		return m, fmt.Errorf("mint: %w: %d bytes", ErrInvalidAccount, len(data))
	}
	var err error
	if m.MintAuthority, err = getOptKey(data[0:36]); err != nil {
		return m, fmt.Errorf("mint authority: %w", err)
	}
	m.Supply = binary.LittleEndian.Uint64(data[36:44])
	m.Decimals = data[44]
	switch data[45] {
	case 0:
	case 1:
		m.IsInitialized = true
	default:
		return m, fmt.Errorf("mint: %w: bad initialized flag", ErrInvalidAccount)
	}
	if m.FreezeAuthority, err = getOptKey(data[46:82]); err != nil {
		return m, fmt.Errorf("freeze authority: %w", err)
	}
	return m, nil
}

// Encode writes the 82-byte mint layout.
func (m Mint) Encode() []byte {
	b := make([]byte, MintSize)
	m.EncodeInto(b)
	return b
}

// EncodeInto writes the mint layout into the first 82 bytes of b, keeping
// any extension bytes after them.
func (m Mint) EncodeInto(b []byte) {
	putOptKey(b[0:36], m.MintAuthority)
	binary.LittleEndian.PutUint64(b[36:44], m.Supply)
	b[44] = m.Decimals
	b[45] = 0
	if m.IsInitialized {
		b[45] = 1
	}
	putOptKey(b[46:82], m.FreezeAuthority)
}

// DecodeTokenAccount decodes a token account. Token-2022 accounts may be
// longer; then byte 165 must be the Account type (and 165 bytes exactly is
// also valid).
func DecodeTokenAccount(data []byte) (TokenAccount, error) {
	var a TokenAccount
	if len(data) < TokenAccountSize || (len(data) > TokenAccountSize && data[TokenAccountSize] != AccountTypeAccount) || len(data) == MultisigSize {
		return a, fmt.Errorf("token account: %w: %d bytes", ErrInvalidAccount, len(data))
	}
	copy(a.Mint[:], data[0:32])
	copy(a.Owner[:], data[32:64])
	a.Amount = binary.LittleEndian.Uint64(data[64:72])
	var err error
	if a.Delegate, err = getOptKey(data[72:108]); err != nil {
		return a, fmt.Errorf("delegate: %w", err)
	}
	a.State = TokenState(data[108])
	if a.State > StateFrozen {
		return a, fmt.Errorf("token account: %w: bad state %d", ErrInvalidAccount, data[108])
	}
	switch binary.LittleEndian.Uint32(data[109:113]) {
	case 0:
	case 1:
		v := binary.LittleEndian.Uint64(data[113:121])
		a.IsNative = &v
	default:
		return a, fmt.Errorf("token account: %w: bad is_native tag", ErrInvalidAccount)
	}
	a.DelegatedAmount = binary.LittleEndian.Uint64(data[121:129])
	if a.CloseAuthority, err = getOptKey(data[129:165]); err != nil {
		return a, fmt.Errorf("close authority: %w", err)
	}
	return a, nil
}

// Encode writes the 165-byte token account layout.
func (a TokenAccount) Encode() []byte {
	b := make([]byte, TokenAccountSize)
	a.EncodeInto(b)
	return b
}

// EncodeInto writes the layout into the first 165 bytes of b.
func (a TokenAccount) EncodeInto(b []byte) {
	copy(b[0:32], a.Mint[:])
	copy(b[32:64], a.Owner[:])
	binary.LittleEndian.PutUint64(b[64:72], a.Amount)
	putOptKey(b[72:108], a.Delegate)
	b[108] = byte(a.State)
	if a.IsNative != nil {
		binary.LittleEndian.PutUint32(b[109:113], 1)
		binary.LittleEndian.PutUint64(b[113:121], *a.IsNative)
	} else {
		clear(b[109:121])
	}
	binary.LittleEndian.PutUint64(b[121:129], a.DelegatedAmount)
	putOptKey(b[129:165], a.CloseAuthority)
}

// TokenAmountOf reads the amount of a token account without a full decode,
// as the payments API does (u64 at offset 64). It returns 0 for short data.
func TokenAmountOf(data []byte) uint64 {
	if len(data) < 72 {
		return 0
	}
	return binary.LittleEndian.Uint64(data[64:72])
}

// UIAmountString formats a base-unit amount with decimals, trimming trailing
// zeros as Agave's uiAmountString does ("1.5", "0.000001", "42").
func UIAmountString(amount uint64, decimals uint8) string {
	s := fmt.Sprintf("%d", amount)
	if decimals == 0 {
		return s
	}
	d := int(decimals)
	if len(s) <= d {
		s = strings.Repeat("0", d-len(s)+1) + s
	}
	whole, frac := s[:len(s)-d], strings.TrimRight(s[len(s)-d:], "0")
	if frac == "" {
		return whole
	}
	return whole + "." + frac
}

// UIAmount is the float form of an amount (Agave's deprecated uiAmount).
func UIAmount(amount uint64, decimals uint8) float64 {
	f, _ := new(big.Float).Quo(new(big.Float).SetUint64(amount),
		new(big.Float).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil))).Float64()
	return f
}
