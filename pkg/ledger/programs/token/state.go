package token

import (
	"encoding/binary"
	"fmt"

	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// Token-2022 layout: byte 165 is the account type; the TLV extension area
// starts at 166 for mints (after zero padding from 82) and accounts alike.
const (
	accountTypeOffset = spl.TokenAccountSize
	tlvOffset         = accountTypeOffset + 1
	tlvHeaderLen      = 4 // u16 type + u16 length
)

// Token-2022 extension types the programs understand.
const (
	extUninitialized  uint16 = 0
	extImmutableOwner uint16 = 7
)

// extensionNames names the Token-2022 extension types (ExtensionType).
var extensionNames = []string{"Uninitialized", "TransferFeeConfig", "TransferFeeAmount", "MintCloseAuthority",
	"ConfidentialTransferMint", "ConfidentialTransferAccount", "DefaultAccountState", "ImmutableOwner",
	"MemoTransfer", "NonTransferable", "InterestBearingConfig", "CpiGuard", "PermanentDelegate",
	"NonTransferableAccount", "TransferHook", "TransferHookAccount", "ConfidentialTransferFeeConfig",
	"ConfidentialTransferFeeAmount", "MetadataPointer", "TokenMetadata", "GroupPointer", "TokenGroup",
	"GroupMemberPointer", "TokenGroupMember"}

func extensionName(t uint16) string {
	if int(t) < len(extensionNames) {
		return extensionNames[t]
	}
	return fmt.Sprintf("ExtensionType(%d)", t)
}

// inertExtensions do not change what the core instructions do, so accounts
// and mints carrying them are processed; any other extension (transfer fees,
// hooks, non-transferable, default state, CPI guard, confidential transfers,
// required memos, permanent delegate, ...) is refused rather than ignored.
var inertExtensions = map[uint16]bool{
	extImmutableOwner: true,
	3:                 true, // MintCloseAuthority (only matters to closing a mint, which is refused)
	10:                true, // InterestBearingConfig (display only)
	18:                true, // MetadataPointer
	19:                true, // TokenMetadata
	20:                true, // GroupPointer
	21:                true, // TokenGroup
	22:                true, // GroupMemberPointer
	23:                true, // TokenGroupMember
}

// accountExtensionTypes are the Token-2022 extension types that belong to
// token accounts (the rest belong to mints).
var accountExtensionTypes = map[uint16]bool{2: true, 5: true, 7: true, 8: true, 11: true, 13: true, 15: true, 17: true}

// tlvTypes walks a Token-2022 TLV area and returns the extension types in
// it, stopping at the first Uninitialized entry or when no room is left for
// another type. Malformed entries are InvalidAccountData.
func tlvTypes(tlv []byte) ([]uint16, error) {
	var types []uint16
	for off := 0; off < len(tlv); {
		if len(tlv) < off+2 {
			break
		}
		t := binary.LittleEndian.Uint16(tlv[off:])
		if t == extUninitialized {
			break
		}
		if len(tlv) < off+tlvHeaderLen {
			return nil, runtime.ErrInvalidAccountData
		}
		end := off + tlvHeaderLen + int(binary.LittleEndian.Uint16(tlv[off+2:]))
		if end > len(tlv) {
			return nil, runtime.ErrInvalidAccountData
		}
		types = append(types, t)
		off = end
	}
	return types, nil
}

// checkExtensions refuses extended Token-2022 state whose extensions would
// change the semantics of the core instructions.
func (p *proc) checkExtensions(data []byte) error {
	if len(data) <= tlvOffset {
		return nil
	}
	types, err := tlvTypes(data[tlvOffset:])
	if err != nil {
		return err
	}
	for _, t := range types {
		if !inertExtensions[t] {
			p.ctx.Logf("Error: Token-2022 extension %s is not supported by the ferry ledger", extensionName(t))
			return runtime.ErrInvalidAccountData
		}
	}
	return nil
}

// hasExtension reports whether a Token-2022 account carries extension t.
func hasExtension(data []byte, t uint16) bool {
	if len(data) <= tlvOffset {
		return false
	}
	types, _ := tlvTypes(data[tlvOffset:])
	for _, x := range types {
		if x == t {
			return true
		}
	}
	return false
}

// decodeAccountBase decodes the 165-byte base of a token account; malformed
// option tags or state are InvalidAccountData.
func decodeAccountBase(data []byte) (spl.TokenAccount, error) {
	a, err := spl.DecodeTokenAccount(data[:spl.TokenAccountSize])
	if err != nil {
		return a, runtime.ErrInvalidAccountData
	}
	return a, nil
}

// unpackAccount is Account::unpack: an initialized token account of this
// program's layout.
func (p *proc) unpackAccount(data []byte) (spl.TokenAccount, error) {
	if !p.t22 {
		if len(data) != spl.TokenAccountSize {
			return spl.TokenAccount{}, runtime.ErrInvalidAccountData
		}
		a, err := decodeAccountBase(data)
		if err != nil {
			return a, err
		}
		if a.State == spl.StateUninitialized {
			return a, runtime.ErrUninitializedAccount
		}
		return a, nil
	}
	if len(data) < spl.TokenAccountSize || len(data) == spl.MultisigSize {
		return spl.TokenAccount{}, runtime.ErrInvalidAccountData
	}
	a, err := decodeAccountBase(data)
	if err != nil {
		return a, err
	}
	if a.State == spl.StateUninitialized {
		return a, runtime.ErrUninitializedAccount
	}
	if len(data) > spl.TokenAccountSize && data[accountTypeOffset] != spl.AccountTypeAccount {
		return a, runtime.ErrInvalidAccountData
	}
	if err := p.checkExtensions(data); err != nil {
		return a, err
	}
	return a, nil
}

// unpackUninitializedAccount loads an account about to be initialized
// (InitializeAccount*, InitializeImmutableOwner). It returns AlreadyInUse
// for an initialized one.
func (p *proc) unpackUninitializedAccount(data []byte) (spl.TokenAccount, error) {
	if !p.t22 {
		if len(data) != spl.TokenAccountSize {
			return spl.TokenAccount{}, runtime.ErrInvalidAccountData
		}
	} else if len(data) < spl.TokenAccountSize || len(data) == spl.MultisigSize {
		return spl.TokenAccount{}, runtime.ErrInvalidAccountData
	}
	a, err := decodeAccountBase(data)
	if err != nil {
		return a, err
	}
	if a.State != spl.StateUninitialized {
		return a, ErrAlreadyInUse
	}
	if p.t22 && len(data) > spl.TokenAccountSize {
		if t := data[accountTypeOffset]; t != spl.AccountTypeUninitialized && t != spl.AccountTypeAccount {
			return a, runtime.ErrInvalidAccountData
		}
	}
	return a, nil
}

// unpackMint is Mint::unpack: an initialized mint of this program's layout.
func (p *proc) unpackMint(data []byte) (spl.Mint, error) {
	m, err := p.decodeMint(data)
	if err != nil {
		return m, err
	}
	if !m.IsInitialized {
		return m, runtime.ErrUninitializedAccount
	}
	if p.t22 && len(data) > spl.MintSize {
		if data[accountTypeOffset] != spl.AccountTypeMint {
			return m, runtime.ErrInvalidAccountData
		}
		if err := p.checkExtensions(data); err != nil {
			return m, err
		}
	}
	return m, nil
}

// decodeMint checks the mint layout size and decodes the 82-byte base
// without requiring it to be initialized.
func (p *proc) decodeMint(data []byte) (spl.Mint, error) {
	if !p.t22 {
		if len(data) != spl.MintSize {
			return spl.Mint{}, runtime.ErrInvalidAccountData
		}
	} else if len(data) != spl.MintSize && (len(data) <= spl.TokenAccountSize || len(data) == spl.MultisigSize) {
		return spl.Mint{}, runtime.ErrInvalidAccountData
	}
	m, err := spl.DecodeMint(data[:spl.MintSize])
	if err != nil {
		return m, runtime.ErrInvalidAccountData
	}
	return m, nil
}

// unpackMultisig is Multisig::unpack.
func unpackMultisig(data []byte) (spl.Multisig, error) {
	m, err := spl.DecodeMultisig(data)
	if err != nil {
		return m, runtime.ErrInvalidAccountData
	}
	if !m.IsInitialized {
		return m, runtime.ErrUninitializedAccount
	}
	return m, nil
}

// accountLen is Token-2022's ExtensionType::try_calculate_account_len for
// token accounts with the given (deduplicated) zero-length extensions.
func accountLen(exts []uint16) int {
	if len(exts) == 0 {
		return spl.TokenAccountSize
	}
	seen := map[uint16]bool{}
	n := tlvOffset
	for _, t := range exts {
		if seen[t] {
			continue
		}
		seen[t] = true
		n += tlvHeaderLen // only zero-length extensions are supported
	}
	if n == spl.MultisigSize {
		n += tlvHeaderLen // padding so the account cannot pass for a multisig
	}
	return n
}
