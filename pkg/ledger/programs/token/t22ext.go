package token

import "fmt"

// Token-2022 extension types (ExtensionType, u16 in the TLV header).
const (
	extUninitialized                 uint16 = 0
	extTransferFeeConfig             uint16 = 1
	extTransferFeeAmount             uint16 = 2
	extMintCloseAuthority            uint16 = 3
	extConfidentialTransferMint      uint16 = 4
	extConfidentialTransferAccount   uint16 = 5
	extDefaultAccountState           uint16 = 6
	extImmutableOwner                uint16 = 7
	extMemoTransfer                  uint16 = 8
	extNonTransferable               uint16 = 9
	extInterestBearingConfig         uint16 = 10
	extCpiGuard                      uint16 = 11
	extPermanentDelegate             uint16 = 12
	extNonTransferableAccount        uint16 = 13
	extTransferHook                  uint16 = 14
	extTransferHookAccount           uint16 = 15
	extConfidentialTransferFeeConfig uint16 = 16
	extConfidentialTransferFeeAmount uint16 = 17
	extMetadataPointer               uint16 = 18
	extTokenMetadata                 uint16 = 19
	extGroupPointer                  uint16 = 20
	extTokenGroup                    uint16 = 21
	extGroupMemberPointer            uint16 = 22
	extTokenGroupMember              uint16 = 23
	extConfidentialMintBurn          uint16 = 24
	extScaledUiAmount                uint16 = 25
	extPausable                      uint16 = 26
	extPausableAccount               uint16 = 27
	extPermissionedBurn              uint16 = 28
	numExtensionTypes                       = 29
)

// ExtensionNames are the Token-2022 extension type names, by type.
var ExtensionNames = [numExtensionTypes]string{"Uninitialized", "TransferFeeConfig", "TransferFeeAmount",
	"MintCloseAuthority", "ConfidentialTransferMint", "ConfidentialTransferAccount", "DefaultAccountState",
	"ImmutableOwner", "MemoTransfer", "NonTransferable", "InterestBearingConfig", "CpiGuard", "PermanentDelegate",
	"NonTransferableAccount", "TransferHook", "TransferHookAccount", "ConfidentialTransferFeeConfig",
	"ConfidentialTransferFeeAmount", "MetadataPointer", "TokenMetadata", "GroupPointer", "TokenGroup",
	"GroupMemberPointer", "TokenGroupMember", "ConfidentialMintBurn", "ScaledUiAmount", "Pausable",
	"PausableAccount", "PermissionedBurn"}

func extensionName(t uint16) string {
	if int(t) < len(ExtensionNames) {
		return ExtensionNames[t]
	}
	return fmt.Sprintf("ExtensionType(%d)", t)
}

// knownExt reports whether t is an ExtensionType the program knows.
func knownExt(t uint16) bool { return int(t) < numExtensionTypes }

// extSize is the value size of each fixed-size extension (TokenMetadata
// is variable).
var extSize = map[uint16]int{
	extUninitialized: 0, extTransferFeeConfig: 108, extTransferFeeAmount: 8, extMintCloseAuthority: 32,
	extConfidentialTransferMint: 65, extConfidentialTransferAccount: 295, extDefaultAccountState: 1,
	extImmutableOwner: 0, extMemoTransfer: 1, extNonTransferable: 0, extInterestBearingConfig: 52,
	extCpiGuard: 1, extPermanentDelegate: 32, extNonTransferableAccount: 0, extTransferHook: 64,
	extTransferHookAccount: 1, extConfidentialTransferFeeConfig: 129, extConfidentialTransferFeeAmount: 64,
	extMetadataPointer: 64, extGroupPointer: 64, extTokenGroup: 80, extGroupMemberPointer: 64,
	extTokenGroupMember: 72, extConfidentialMintBurn: 196, extScaledUiAmount: 56, extPausable: 33,
	extPausableAccount: 0, extPermissionedBurn: 32,
}

// extAccountType is the account type an extension belongs to.
func extAccountType(t uint16) byte {
	switch t {
	case extUninitialized:
		return acctTypeUninitialized
	case extTransferFeeAmount, extConfidentialTransferAccount, extImmutableOwner, extMemoTransfer,
		extNonTransferableAccount, extTransferHookAccount, extCpiGuard, extConfidentialTransferFeeAmount,
		extPausableAccount:
		return acctTypeAccount
	}
	if knownExt(t) {
		return acctTypeMint
	}
	return acctTypeUninitialized
}

// requiredAccountExts are the account extensions InitializeAccount adds
// for a mint extension.
func requiredAccountExts(t uint16) []uint16 {
	switch t {
	case extTransferFeeConfig:
		return []uint16{extTransferFeeAmount}
	case extNonTransferable:
		return []uint16{extNonTransferableAccount, extImmutableOwner}
	case extTransferHook:
		return []uint16{extTransferHookAccount}
	case extPausable:
		return []uint16{extPausableAccount}
	}
	return nil
}

// checkMintExtensionCombination is
// check_for_invalid_mint_extension_combinations.
func checkMintExtensionCombination(types []uint16) error {
	has := map[uint16]bool{}
	for _, t := range types {
		has[t] = true
	}
	fee, ct, ctFee, cmb := has[extTransferFeeConfig], has[extConfidentialTransferMint], has[extConfidentialTransferFeeConfig], has[extConfidentialMintBurn]
	switch {
	case ctFee && !(fee && ct),
		fee && ct && !ctFee,
		cmb && !ct,
		has[extScaledUiAmount] && has[extInterestBearingConfig],
		has[extNonTransferable] && ct && !cmb:
		return ErrInvalidExtensionCombination
	}
	return nil
}
