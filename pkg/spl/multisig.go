package spl

import (
	"fmt"

	"github.com/gagliardetto/solana-go"
)

// Multisig signer limits of the SPL Token program.
const (
	MinSigners = 1
	MaxSigners = 11
)

// Multisig is an SPL Token multisignature authority (355 bytes): M of the
// first N Signers must sign.
type Multisig struct {
	M             uint8
	N             uint8
	IsInitialized bool
	Signers       [MaxSigners]solana.PublicKey
}

// DecodeMultisig decodes a multisig account. It checks the layout only (the
// size and the initialized flag); whether M and N are in range is the
// program's business.
func DecodeMultisig(data []byte) (Multisig, error) {
	var m Multisig
	if len(data) != MultisigSize {
		return m, fmt.Errorf("multisig: %w: %d bytes", ErrInvalidAccount, len(data))
	}
	m.M, m.N = data[0], data[1]
	switch data[2] {
	case 0:
	case 1:
		m.IsInitialized = true
	default:
		return m, fmt.Errorf("multisig: %w: bad initialized flag %d", ErrInvalidAccount, data[2])
	}
	for i := range m.Signers {
		copy(m.Signers[i][:], data[3+32*i:])
	}
	return m, nil
}

// Encode writes the 355-byte multisig layout.
func (m Multisig) Encode() []byte {
	b := make([]byte, MultisigSize)
	m.EncodeInto(b)
	return b
}

// EncodeInto writes the multisig layout into the first 355 bytes of b.
func (m Multisig) EncodeInto(b []byte) {
	b[0], b[1] = m.M, m.N
	b[2] = 0
	if m.IsInitialized {
		b[2] = 1
	}
	for i := range m.Signers {
		copy(b[3+32*i:], m.Signers[i][:])
	}
}
