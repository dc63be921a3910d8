package espl

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gagliardetto/solana-go"
)

// ErrInvalidAccount is returned for account data that does not decode.
var ErrInvalidAccount = errors.New("invalid account data")

// Account sizes (§3.2, §4, and ferry's own layouts below).
const (
	EphemeralATASize         = 80
	EphemeralATALegacySize   = 72
	GlobalVaultSize          = 65
	GlobalVaultSizeV2        = 64
	GlobalVaultSizeV1        = 32
	ShuttleMetadataSize      = 72
	DelegationRecordSize     = 96
	GroupReceiptSize         = 136
	DelegationRecordDisc     = 100
	DelegationMetadataDisc   = 102
	delegationMetadataFixed  = 50
	GroupReceiptVersion      = 1
	delegationRecordAPIBytes = 40
)

func accountErr(what string, format string, args ...any) error {
	return fmt.Errorf("decode %s: %w: %s", what, ErrInvalidAccount, fmt.Sprintf(format, args...))
}

// EphemeralATA is an eATA account (§4): 80 bytes, or 72 for legacy
// accounts created before the bump was stored.
//
//	0  32 owner
//	32 32 mint
//	64 8  amount u64
//	72 1  bump
//	73 7  padding
type EphemeralATA struct {
	Owner  solana.PublicKey
	Mint   solana.PublicKey
	Amount uint64
	Bump   uint8
	// Legacy marks a 72-byte account (no bump). Encode always writes the
	// current 80-byte layout, which is what the program's migration in
	// ix 0 produces.
	Legacy bool
}

// Encode returns the 80-byte account data.
func (a EphemeralATA) Encode() []byte {
	out := make([]byte, EphemeralATASize)
	copy(out, a.Owner[:])
	copy(out[32:], a.Mint[:])
	binary.LittleEndian.PutUint64(out[64:], a.Amount)
	out[72] = a.Bump
	return out
}

// DecodeEphemeralATA parses eATA data of exactly 80 bytes or, for legacy
// accounts, 72 bytes.
func DecodeEphemeralATA(data []byte) (EphemeralATA, error) {
	if len(data) != EphemeralATASize && len(data) != EphemeralATALegacySize {
		return EphemeralATA{}, accountErr("eATA", "%d bytes, want %d or %d", len(data), EphemeralATASize, EphemeralATALegacySize)
	}
	a := EphemeralATA{
		Owner:  solana.PublicKeyFromBytes(data[:32]),
		Mint:   solana.PublicKeyFromBytes(data[32:64]),
		Amount: binary.LittleEndian.Uint64(data[64:72]),
		Legacy: len(data) == EphemeralATALegacySize,
	}
	if !a.Legacy {
		a.Bump = data[72]
	}
	return a, nil
}

// GlobalVaultLayout tells which of the historic GlobalVault layouts an
// account uses.
type GlobalVaultLayout uint8

// GlobalVault layouts, oldest first.
const (
	GlobalVaultV1 GlobalVaultLayout = 1 // mint[32]
	GlobalVaultV2 GlobalVaultLayout = 2 // mint[32] ‖ token_account[32]
	GlobalVaultV3 GlobalVaultLayout = 3 // bump u8 ‖ mint[32] ‖ token_account[32] (current)
)

// GlobalVault is the per-mint vault account (§4). The current layout is
// bump u8 ‖ mint[32] ‖ token_account[32] (65 bytes); older accounts hold
// mint[32] (32 bytes) or mint ‖ token_account (64 bytes). Whether the
// deployed program pads the current layout is unverified, so the decoder
// accepts 65 bytes or more as the current layout.
type GlobalVault struct {
	Layout       GlobalVaultLayout // zero is treated as GlobalVaultV3 by Encode
	Bump         uint8             // V3 only
	Mint         solana.PublicKey
	TokenAccount solana.PublicKey // V2 and V3
}

// Encode returns the account data in v.Layout (the current 65-byte layout
// when Layout is zero).
func (v GlobalVault) Encode() []byte {
	switch v.Layout {
	case GlobalVaultV1:
		return append([]byte(nil), v.Mint[:]...)
	case GlobalVaultV2:
		out := make([]byte, GlobalVaultSizeV2)
		copy(out, v.Mint[:])
		copy(out[32:], v.TokenAccount[:])
		return out
	}
	out := make([]byte, GlobalVaultSize)
	out[0] = v.Bump
	copy(out[1:], v.Mint[:])
	copy(out[33:], v.TokenAccount[:])
	return out
}

// DecodeGlobalVault parses vault data in any of the three layouts, chosen
// by length: 32 (V1), 64 (V2), 65 or more (V3).
func DecodeGlobalVault(data []byte) (GlobalVault, error) {
	switch n := len(data); {
	case n == GlobalVaultSizeV1:
		return GlobalVault{Layout: GlobalVaultV1, Mint: solana.PublicKeyFromBytes(data)}, nil
	case n == GlobalVaultSizeV2:
		return GlobalVault{Layout: GlobalVaultV2, Mint: solana.PublicKeyFromBytes(data[:32]),
			TokenAccount: solana.PublicKeyFromBytes(data[32:64])}, nil
	case n >= GlobalVaultSize:
		return GlobalVault{Layout: GlobalVaultV3, Bump: data[0], Mint: solana.PublicKeyFromBytes(data[1:33]),
			TokenAccount: solana.PublicKeyFromBytes(data[33:65])}, nil
	default:
		return GlobalVault{}, accountErr("global vault", "%d bytes, want 32, 64 or at least 65", n)
	}
}

// ShuttleMetadata is a shuttle metadata account (72 bytes, §4):
//
//	0  32 owner
//	32 32 payer
//	64 4  id u32
//	68 1  bump
//	69 3  padding
type ShuttleMetadata struct {
	Owner solana.PublicKey
	Payer solana.PublicKey
	ID    uint32
	Bump  uint8
}

// Encode returns the 72-byte account data.
func (s ShuttleMetadata) Encode() []byte {
	out := make([]byte, ShuttleMetadataSize)
	copy(out, s.Owner[:])
	copy(out[32:], s.Payer[:])
	binary.LittleEndian.PutUint32(out[64:], s.ID)
	out[68] = s.Bump
	return out
}

// DecodeShuttleMetadata parses 72-byte shuttle metadata.
func DecodeShuttleMetadata(data []byte) (ShuttleMetadata, error) {
	if len(data) != ShuttleMetadataSize {
		return ShuttleMetadata{}, accountErr("shuttle metadata", "%d bytes, want %d", len(data), ShuttleMetadataSize)
	}
	return ShuttleMetadata{
		Owner: solana.PublicKeyFromBytes(data[:32]),
		Payer: solana.PublicKeyFromBytes(data[32:64]),
		ID:    binary.LittleEndian.Uint32(data[64:68]),
		Bump:  data[68],
	}, nil
}

// DelegationRecord is DLP's delegation record (§3.2): an 8-byte
// discriminator (u64 LE 100) followed by the 88-byte record, 96 bytes in
// all.
//
//	0  8  discriminator u64 = 100
//	8  32 authority (the validator identity)
//	40 32 owner (the delegated account's original owner program)
//	72 8  delegation_slot u64
//	80 8  lamports u64
//	88 8  commit_frequency_ms u64
type DelegationRecord struct {
	Authority         solana.PublicKey
	Owner             solana.PublicKey
	DelegationSlot    uint64
	Lamports          uint64
	CommitFrequencyMs uint64
}

// Encode returns the 96-byte account data.
func (r DelegationRecord) Encode() []byte {
	out := make([]byte, DelegationRecordSize)
	binary.LittleEndian.PutUint64(out, DelegationRecordDisc)
	copy(out[8:], r.Authority[:])
	copy(out[40:], r.Owner[:])
	binary.LittleEndian.PutUint64(out[72:], r.DelegationSlot)
	binary.LittleEndian.PutUint64(out[80:], r.Lamports)
	binary.LittleEndian.PutUint64(out[88:], r.CommitFrequencyMs)
	return out
}

// DecodeDelegationRecord parses a delegation record of at least 96 bytes
// with discriminator 100.
func DecodeDelegationRecord(data []byte) (DelegationRecord, error) {
	if len(data) < DelegationRecordSize {
		return DelegationRecord{}, accountErr("delegation record", "%d bytes, want %d", len(data), DelegationRecordSize)
	}
	if d := binary.LittleEndian.Uint64(data); d != DelegationRecordDisc {
		return DelegationRecord{}, accountErr("delegation record", "discriminator %d, want %d", d, DelegationRecordDisc)
	}
	return DelegationRecord{
		Authority:         solana.PublicKeyFromBytes(data[8:40]),
		Owner:             solana.PublicKeyFromBytes(data[40:72]),
		DelegationSlot:    binary.LittleEndian.Uint64(data[72:80]),
		Lamports:          binary.LittleEndian.Uint64(data[80:88]),
		CommitFrequencyMs: binary.LittleEndian.Uint64(data[88:96]),
	}, nil
}

// DelegationRecordValidator reads the validator of a delegation record the
// way the hosted API does (readDelegatedValidator): bytes 8..40 of data at
// least 40 bytes long, without checking the discriminator. The caller
// checks the account-level conditions (exists, lamports > 0, owned by
// DLP).
func DelegationRecordValidator(data []byte) (solana.PublicKey, bool) {
	if len(data) < delegationRecordAPIBytes {
		return solana.PublicKey{}, false
	}
	return solana.PublicKeyFromBytes(data[8:40]), true
}

// DelegationMetadata is the delegation metadata account. The reference
// does not give DLP's byte layout, so this is FERRY'S LOCAL LAYOUT, used
// by the embedded rollup simulation; it is not byte-compatible with the
// real DLP account:
//
//	0  8  discriminator u64 = 102 (ferry's choice)
//	8  8  last_update_nonce u64
//	16 1  is_undelegatable (0/1)
//	17 32 rent_payer
//	49 1  seed count (≤ 16)
//	50 …  per seed: len u8 ‖ bytes (≤ 32 bytes each)
type DelegationMetadata struct {
	LastUpdateNonce uint64
	IsUndelegatable bool
	RentPayer       solana.PublicKey
	Seeds           [][]byte // the delegated PDA's seeds, without the bump
}

// Encode returns ferry's delegation metadata bytes. It fails for more than
// 16 seeds or a seed over 32 bytes.
func (m DelegationMetadata) Encode() ([]byte, error) {
	if len(m.Seeds) > maxSeeds {
		return nil, fmt.Errorf("encode delegation metadata: %d seeds: %w", len(m.Seeds), ErrInvalidSeeds)
	}
	n := delegationMetadataFixed
	for _, s := range m.Seeds {
		if len(s) > maxSeedLen {
			return nil, fmt.Errorf("encode delegation metadata: %d-byte seed: %w", len(s), ErrInvalidSeeds)
		}
		n += 1 + len(s)
	}
	out := make([]byte, n)
	binary.LittleEndian.PutUint64(out, DelegationMetadataDisc)
	binary.LittleEndian.PutUint64(out[8:], m.LastUpdateNonce)
	if m.IsUndelegatable {
		out[16] = 1
	}
	copy(out[17:], m.RentPayer[:])
	out[49] = byte(len(m.Seeds))
	off := delegationMetadataFixed
	for _, s := range m.Seeds {
		out[off] = byte(len(s))
		off += 1 + copy(out[off+1:], s)
	}
	return out, nil
}

// DecodeDelegationMetadata parses ferry's delegation metadata layout.
// Trailing bytes after the last seed are ignored. Seeds are copies.
func DecodeDelegationMetadata(data []byte) (DelegationMetadata, error) {
	const what = "delegation metadata"
	if len(data) < delegationMetadataFixed {
		return DelegationMetadata{}, accountErr(what, "%d bytes, want at least %d", len(data), delegationMetadataFixed)
	}
	if d := binary.LittleEndian.Uint64(data); d != DelegationMetadataDisc {
		return DelegationMetadata{}, accountErr(what, "discriminator %d, want %d", d, DelegationMetadataDisc)
	}
	if data[16] > 1 {
		return DelegationMetadata{}, accountErr(what, "is_undelegatable byte %d", data[16])
	}
	m := DelegationMetadata{
		LastUpdateNonce: binary.LittleEndian.Uint64(data[8:16]),
		IsUndelegatable: data[16] == 1,
		RentPayer:       solana.PublicKeyFromBytes(data[17:49]),
	}
	count := int(data[49])
	if count > maxSeeds {
		return DelegationMetadata{}, accountErr(what, "%d seeds", count)
	}
	off := delegationMetadataFixed
	m.Seeds = make([][]byte, 0, count)
	for i := 0; i < count; i++ {
		if off >= len(data) {
			return DelegationMetadata{}, accountErr(what, "truncated at seed %d", i)
		}
		l := int(data[off])
		if l > maxSeedLen || off+1+l > len(data) {
			return DelegationMetadata{}, accountErr(what, "bad seed %d", i)
		}
		seed := make([]byte, l)
		copy(seed, data[off+1:])
		m.Seeds = append(m.Seeds, seed)
		off += 1 + l
	}
	return m, nil
}

// GroupReceipt is the receipt of one group of queued transfers (one ix 16
// or one ix 25). The reference gives no layout, so this is FERRY'S LOCAL
// LAYOUT, used by the embedded rollup simulation (136 bytes):
//
//	0   1  version (1)
//	1   1  bump
//	2   3  group_id (24-bit LE)
//	5   3  padding
//	8   32 queue
//	40  32 source authority
//	72  32 destination owner
//	104 8  amount u64 (total queued, before splitting)
//	112 8  client_ref_id u64 (0 when absent)
//	120 8  created_at i64 (unix ms)
//	128 4  split u32 (number of queued entries)
//	132 4  executed u32 (entries paid out so far)
type GroupReceipt struct {
	Bump             uint8
	GroupID          uint32 // 24-bit
	Queue            solana.PublicKey
	Source           solana.PublicKey
	DestinationOwner solana.PublicKey
	Amount           uint64
	ClientRefID      uint64
	CreatedAt        int64
	Split            uint32
	Executed         uint32
}

// Encode returns ferry's 136-byte group receipt. GroupID is truncated to
// 24 bits.
func (g GroupReceipt) Encode() []byte {
	out := make([]byte, GroupReceiptSize)
	out[0] = GroupReceiptVersion
	out[1] = g.Bump
	putUint24(out[2:], g.GroupID)
	copy(out[8:], g.Queue[:])
	copy(out[40:], g.Source[:])
	copy(out[72:], g.DestinationOwner[:])
	binary.LittleEndian.PutUint64(out[104:], g.Amount)
	binary.LittleEndian.PutUint64(out[112:], g.ClientRefID)
	binary.LittleEndian.PutUint64(out[120:], uint64(g.CreatedAt))
	binary.LittleEndian.PutUint32(out[128:], g.Split)
	binary.LittleEndian.PutUint32(out[132:], g.Executed)
	return out
}

// DecodeGroupReceipt parses ferry's group receipt layout (version 1, at
// least 136 bytes).
func DecodeGroupReceipt(data []byte) (GroupReceipt, error) {
	if len(data) < GroupReceiptSize {
		return GroupReceipt{}, accountErr("group receipt", "%d bytes, want %d", len(data), GroupReceiptSize)
	}
	if data[0] != GroupReceiptVersion {
		return GroupReceipt{}, accountErr("group receipt", "version %d, want %d", data[0], GroupReceiptVersion)
	}
	return GroupReceipt{
		Bump:             data[1],
		GroupID:          uint24(data[2:]),
		Queue:            solana.PublicKeyFromBytes(data[8:40]),
		Source:           solana.PublicKeyFromBytes(data[40:72]),
		DestinationOwner: solana.PublicKeyFromBytes(data[72:104]),
		Amount:           binary.LittleEndian.Uint64(data[104:112]),
		ClientRefID:      binary.LittleEndian.Uint64(data[112:120]),
		CreatedAt:        int64(binary.LittleEndian.Uint64(data[120:128])),
		Split:            binary.LittleEndian.Uint32(data[128:132]),
		Executed:         binary.LittleEndian.Uint32(data[132:136]),
	}, nil
}

func putUint24(b []byte, v uint32) {
	_ = b[2]
	b[0], b[1], b[2] = byte(v), byte(v>>8), byte(v>>16)
}

func uint24(b []byte) uint32 {
	_ = b[2]
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16
}
