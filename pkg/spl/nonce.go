package spl

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/txwire"
)

// NonceAccountSize is the data size of a durable-nonce account.
const NonceAccountSize = 80

// SysvarRecentBlockhashesID is the (deprecated, still maintained)
// RecentBlockhashes sysvar the nonce instructions take.
var SysvarRecentBlockhashesID = solana.MustPublicKeyFromBase58("SysvarRecentB1ockHashes11111111111111111111")

// Nonce versions and states (nonce::state::Versions, State).
const (
	NonceVersionLegacy  = 0
	NonceVersionCurrent = 1
)

// NonceState is a decoded durable-nonce account: u32 version, u32 state
// (0 uninitialized, 1 initialized), then for an initialized one the
// authority, the durable nonce and the fee calculator's lamports per
// signature.
type NonceState struct {
	Version              uint32
	Initialized          bool
	Authority            solana.PublicKey
	Nonce                solana.Hash
	LamportsPerSignature uint64
}

// DecodeNonce decodes nonce account data (bincode: trailing bytes are
// ignored, short data or an unknown version or state is an error).
func DecodeNonce(data []byte) (NonceState, error) {
	var n NonceState
	if len(data) < 8 {
		return n, fmt.Errorf("nonce: %w: %d bytes", ErrInvalidAccount, len(data))
	}
	n.Version = binary.LittleEndian.Uint32(data)
	state := binary.LittleEndian.Uint32(data[4:])
	if n.Version > NonceVersionCurrent || state > 1 {
		return n, fmt.Errorf("nonce: %w: version %d state %d", ErrInvalidAccount, n.Version, state)
	}
	if state == 0 {
		return n, nil
	}
	if len(data) < NonceAccountSize {
		return n, fmt.Errorf("nonce: %w: %d bytes", ErrInvalidAccount, len(data))
	}
	n.Initialized = true
	copy(n.Authority[:], data[8:40])
	copy(n.Nonce[:], data[40:72])
	n.LamportsPerSignature = binary.LittleEndian.Uint64(data[72:80])
	return n, nil
}

// EncodeInto writes the state over the start of data, as bincode's
// serialize_into does: an uninitialized state writes only its 8 bytes.
func (n NonceState) EncodeInto(data []byte) {
	binary.LittleEndian.PutUint32(data, n.Version)
	if !n.Initialized {
		binary.LittleEndian.PutUint32(data[4:], 0)
		return
	}
	binary.LittleEndian.PutUint32(data[4:], 1)
	copy(data[8:40], n.Authority[:])
	copy(data[40:72], n.Nonce[:])
	binary.LittleEndian.PutUint64(data[72:80], n.LamportsPerSignature)
}

// DurableNonce is the nonce value a blockhash yields
// (DurableNonce::from_blockhash): sha256("DURABLE_NONCE" || blockhash).
func DurableNonce(blockhash solana.Hash) solana.Hash {
	h := sha256.New()
	h.Write([]byte("DURABLE_NONCE"))
	h.Write(blockhash[:])
	var out solana.Hash
	copy(out[:], h.Sum(nil))
	return out
}

// SystemAdvanceNonce advances a nonce account (the first instruction of a
// durable-nonce transaction), signed by its authority.
func SystemAdvanceNonce(nonce, authority solana.PublicKey) txwire.Instruction {
	return txwire.Instruction{ProgramID: SystemProgramID,
		Accounts: []txwire.AccountMeta{txwire.Writable(nonce), txwire.Readonly(SysvarRecentBlockhashesID), txwire.Signer(authority)},
		Data:     le32(nil, uint32(SystemAdvanceNonceAccountOp))}
}

// SystemInitializeNonce initializes a system-owned, rent-exempt 80-byte
// account as a nonce account with the given authority.
func SystemInitializeNonce(nonce, authority solana.PublicKey) txwire.Instruction {
	return txwire.Instruction{ProgramID: SystemProgramID,
		Accounts: []txwire.AccountMeta{txwire.Writable(nonce), txwire.Readonly(SysvarRecentBlockhashesID), txwire.Readonly(SysvarRentID)},
		Data:     append(le32(nil, uint32(SystemInitializeNonceAccountOp)), authority[:]...)}
}
