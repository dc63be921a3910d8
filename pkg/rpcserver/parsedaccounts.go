package rpcserver

import (
	"encoding/binary"
	"math"
	"strconv"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/token"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// This file is the jsonParsed form of the accounts Agave's account decoder
// knows beyond plain token accounts and mints: durable-nonce accounts
// ("nonce"), address lookup tables ("address-lookup-table"), token
// multisigs, Token-2022 extensions (UiExtension) and the UI amounts of
// interest-bearing and scaled mints.

// parseNonce is parse_nonce: an initialized nonce account, or nil (an
// uninitialized or malformed one is not parsed: Agave then falls back to
// base64).
func parseNonce(a *ledger.Account) any {
	st, err := spl.DecodeNonce(a.Data)
	if err != nil || !st.Initialized {
		return nil
	}
	return map[string]any{
		"program": "nonce",
		"parsed": map[string]any{"type": "initialized", "info": map[string]any{
			"authority":     st.Authority.String(),
			"blockhash":     solana.PublicKey(st.Nonce).String(),
			"feeCalculator": map[string]any{"lamportsPerSignature": strconv.FormatUint(st.LamportsPerSignature, 10)},
		}},
		"space": len(a.Data),
	}
}

// parseLookupTable is parse_address_lookup_table.
func parseLookupTable(a *ledger.Account) any {
	wrap := func(parsed map[string]any) any {
		return map[string]any{"program": "address-lookup-table", "parsed": parsed, "space": len(a.Data)}
	}
	t, err := spl.DecodeLookupTable(a.Data)
	switch {
	case err == spl.ErrUninitializedTable:
		return wrap(map[string]any{"type": "uninitialized"})
	case err != nil:
		return nil
	}
	addrs := make([]string, len(t.Addresses))
	for i, k := range t.Addresses {
		addrs[i] = k.String()
	}
	info := map[string]any{
		"deactivationSlot":           strconv.FormatUint(t.DeactivationSlot, 10),
		"lastExtendedSlot":           strconv.FormatUint(t.LastExtendedSlot, 10),
		"lastExtendedSlotStartIndex": t.LastExtendedSlotStartIndex,
		"addresses":                  addrs,
	}
	if t.Authority != nil {
		info["authority"] = t.Authority.String()
	}
	return wrap(map[string]any{"type": "lookupTable", "info": info})
}

// parseMultisig is the multisig case of parse_token: an initialized
// 355-byte multisig with its non-default signers.
func parseMultisig(data []byte) map[string]any {
	ms, err := spl.DecodeMultisig(data)
	if err != nil || !ms.IsInitialized {
		return nil
	}
	signers := []string{}
	for _, k := range ms.Signers {
		if !k.IsZero() {
			signers = append(signers, k.String())
		}
	}
	return map[string]any{
		"numRequiredSigners": ms.M,
		"numValidSigners":    ms.N,
		"isInitialized":      true,
		"signers":            signers,
	}
}

// mintUI renders amounts of one mint as Agave's
// token_amount_to_ui_amount_v3 does: interest-bearing and scaled mints
// scale them at the bank's clock time; others place the decimal point,
// with a numeric uiAmount only while 10^decimals fits a u64.
type mintUI struct {
	data     []byte
	decimals uint8
	now      int64
}

func (m mintUI) amount(v uint64) UITokenAmount {
	ui := UITokenAmount{Amount: uintString(v), Decimals: m.decimals}
	if s, scaled := token.UIAmount(m.data, v, m.now); scaled {
		ui.UIAmountString = s
		if f, ok := rustParseFloat(s); ok {
			ui.UIAmount = &f
		}
		return ui
	}
	ui.UIAmountString = spl.UIAmountString(v, m.decimals)
	if m.decimals <= maxPow10Decimals {
		f := float64(v) / float64(pow10u64(m.decimals))
		ui.UIAmount = &f
	}
	return ui
}

// mintUIAt reads a mint and the Clock at commitment c for rendering the
// mint's amounts.
func (h *Handler) mintUIAt(key solana.PublicKey, decimals uint8, c ledger.Commitment) mintUI {
	accs, _ := h.l.Accounts([]solana.PublicKey{key, spl.SysvarClockID}, c)
	ui := mintUI{decimals: decimals, now: clockTime(accs[1])}
	if accs[0] != nil {
		ui.data = accs[0].Data
	}
	return ui
}

// maxPow10Decimals is the largest decimals for which 10^decimals fits a
// u64 (usize on Agave's validators).
const maxPow10Decimals = 19

func pow10u64(d uint8) uint64 {
	p := uint64(1)
	for ; d > 0; d-- {
		p *= 10
	}
	return p
}

// rustParseFloat parses what the token program formatted, as
// f64::from_str does; a non-finite value has no JSON number.
func rustParseFloat(s string) (float64, bool) {
	if s == "inf" || s == "-inf" || s == "NaN" {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// clockTime reads the unix timestamp from the Clock sysvar account.
func clockTime(clock *ledger.Account) int64 {
	if clock == nil || len(clock.Data) < 40 {
		return 0
	}
	return int64(binary.LittleEndian.Uint64(clock.Data[32:40]))
}

// uiExtensionsOf is the "extensions" list of a Token-2022 mint or account
// (UiExtension: {"extension": name} plus "state" for extensions with
// data), in TLV order; nil when there are none.
func uiExtensionsOf(data []byte, account bool) []any {
	exts := token.Extensions(data, account)
	if len(exts) == 0 {
		return nil
	}
	out := make([]any, 0, len(exts))
	for _, e := range exts {
		out = append(out, uiExtension(e))
	}
	return out
}

// Token-2022 extension types, as in the program's TLV headers.
const (
	extTransferFeeConfig      = 1
	extTransferFeeAmount      = 2
	extMintCloseAuthority     = 3
	extDefaultAccountState    = 6
	extMemoTransfer           = 8
	extNonTransferable        = 9
	extInterestBearingConfig  = 10
	extCpiGuard               = 11
	extPermanentDelegate      = 12
	extNonTransferableAccount = 13
	extTransferHook           = 14
	extTransferHookAccount    = 15
	extMetadataPointer        = 18
	extTokenMetadata          = 19
	extGroupPointer           = 20
	extTokenGroup             = 21
	extGroupMemberPointer     = 22
	extTokenGroupMember       = 23
	extScaledUiAmount         = 25
	extPausable               = 26
	extPausableAccount        = 27
)

// extensionNames are UiExtension's variant names for the extensions
// without state and the confidential ones ferry does not decode.
var extensionNames = map[uint16]string{
	extImmutableOwner: "immutableOwner", extNonTransferable: "nonTransferable",
	extNonTransferableAccount: "nonTransferableAccount", extPausableAccount: "pausableAccount",
}

// uiExtension renders one extension as Agave's parse_extension does; a
// value of the wrong size is "unparseableExtension".
func uiExtension(e token.Extension) map[string]any {
	if name, ok := extensionNames[e.Type]; ok {
		return map[string]any{"extension": name}
	}
	v := e.Value
	if n := token.ExtensionSize(e.Type); n >= 0 && len(v) != n {
		return map[string]any{"extension": "unparseableExtension"}
	}
	key := func(off int) any { return optionalKey(v[off : off+32]) }
	u64 := func(off int) uint64 { return binary.LittleEndian.Uint64(v[off:]) }
	i64 := func(off int) int64 { return int64(u64(off)) }
	i16 := func(off int) int16 { return int16(binary.LittleEndian.Uint16(v[off:])) }
	with := func(name string, state map[string]any) map[string]any {
		return map[string]any{"extension": name, "state": state}
	}
	fee := func(off int) map[string]any {
		return map[string]any{"epoch": u64(off), "maximumFee": u64(off + 8), "transferFeeBasisPoints": binary.LittleEndian.Uint16(v[off+16:])}
	}
	switch e.Type {
	case extTransferFeeConfig:
		return with("transferFeeConfig", map[string]any{
			"transferFeeConfigAuthority": key(0), "withdrawWithheldAuthority": key(32), "withheldAmount": u64(64),
			"olderTransferFee": fee(72), "newerTransferFee": fee(90),
		})
	case extTransferFeeAmount:
		return with("transferFeeAmount", map[string]any{"withheldAmount": u64(0)})
	case extMintCloseAuthority:
		return with("mintCloseAuthority", map[string]any{"closeAuthority": key(0)})
	case extDefaultAccountState:
		state := "uninitialized"
		switch v[0] {
		case 1:
			state = "initialized"
		case 2:
			state = "frozen"
		}
		return with("defaultAccountState", map[string]any{"accountState": state})
	case extMemoTransfer:
		return with("memoTransfer", map[string]any{"requireIncomingTransferMemos": v[0] != 0})
	case extInterestBearingConfig:
		return with("interestBearingConfig", map[string]any{
			"rateAuthority": key(0), "initializationTimestamp": i64(32), "preUpdateAverageRate": i16(40),
			"lastUpdateTimestamp": i64(42), "currentRate": i16(50),
		})
	case extCpiGuard:
		return with("cpiGuard", map[string]any{"lockCpi": v[0] != 0})
	case extPermanentDelegate:
		return with("permanentDelegate", map[string]any{"delegate": key(0)})
	case extTransferHook:
		return with("transferHook", map[string]any{"authority": key(0), "programId": key(32)})
	case extTransferHookAccount:
		return with("transferHookAccount", map[string]any{"transferring": v[0] != 0})
	case extMetadataPointer:
		return with("metadataPointer", map[string]any{"authority": key(0), "metadataAddress": key(32)})
	case extGroupPointer:
		return with("groupPointer", map[string]any{"authority": key(0), "groupAddress": key(32)})
	case extGroupMemberPointer:
		return with("groupMemberPointer", map[string]any{"authority": key(0), "memberAddress": key(32)})
	case extTokenGroup:
		return with("tokenGroup", map[string]any{
			"updateAuthority": key(0), "mint": solana.PublicKeyFromBytes(v[32:64]).String(), "size": u64(64), "maxSize": u64(72),
		})
	case extTokenGroupMember:
		return with("tokenGroupMember", map[string]any{
			"mint": solana.PublicKeyFromBytes(v[0:32]).String(), "group": solana.PublicKeyFromBytes(v[32:64]).String(), "memberNumber": u64(64),
		})
	case extScaledUiAmount:
		return with("scaledUiAmountConfig", map[string]any{
			"authority": key(0), "multiplier": token.RustFloat(math.Float64frombits(u64(32)), -1),
			"newMultiplierEffectiveTimestamp": i64(40), "newMultiplier": token.RustFloat(math.Float64frombits(u64(48)), -1),
		})
	case extPausable:
		return with("pausableConfig", map[string]any{"authority": key(0), "paused": v[32] != 0})
	case extTokenMetadata:
		m, ok := token.DecodeTokenMetadata(v)
		if !ok {
			return map[string]any{"extension": "unparseableExtension"}
		}
		extra := make([][2]string, len(m.Additional))
		copy(extra, m.Additional)
		return with("tokenMetadata", map[string]any{
			"updateAuthority": optionalKey(m.UpdateAuthority[:]), "mint": m.Mint.String(),
			"name": m.Name, "symbol": m.Symbol, "uri": m.URI, "additionalMetadata": extra,
		})
	}
	// Confidential-transfer extensions carry ElGamal ciphertexts ferry
	// neither creates nor decodes.
	return map[string]any{"extension": "unparseableExtension"}
}

// optionalKey is an OptionalNonZeroPubkey: null when all zero.
func optionalKey(b []byte) any {
	k := solana.PublicKeyFromBytes(b)
	if k.IsZero() {
		return nil
	}
	return k.String()
}
