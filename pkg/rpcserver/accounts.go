package rpcserver

import (
	"encoding/base64"

	"github.com/gagliardetto/solana-go"
	"github.com/klauspost/compress/zstd"
	"github.com/mr-tron/base58"

	"github.com/ferry-sh/ferry/pkg/inputlimit"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// Account encodings.
const (
	encBinary     = "binary" // legacy default: a bare base58 string
	encBase58     = "base58"
	encBase64     = "base64"
	encBase64Zstd = "base64+zstd"
	encJSONParsed = "jsonParsed"
	encJSON       = "json"
)

// maxBase58Bytes is Agave's limit for base58 account data.
const maxBase58Bytes = 128

// accountConfig is getAccountInfo's config (and friends').
type accountConfig struct {
	commitmentConfig
	Encoding  *string    `json:"encoding"`
	DataSlice *dataSlice `json:"dataSlice"`
}

type dataSlice struct {
	Offset uint64 `json:"offset"`
	Length uint64 `json:"length"`
}

// UIAccount is an account in JSON-RPC form.
type UIAccount struct {
	Data       any              `json:"data"`
	Executable bool             `json:"executable"`
	Lamports   uint64           `json:"lamports"`
	Owner      solana.PublicKey `json:"owner"`
	RentEpoch  uint64           `json:"rentEpoch"`
	Space      uint64           `json:"space"`
}

func (c accountConfig) encoding() (string, error) {
	if c.Encoding == nil {
		return encBinary, nil
	}
	switch e := *c.Encoding; e {
	case encBinary, encBase58, encBase64, encBase64Zstd, encJSONParsed:
		return e, nil
	}
	return "", InvalidParams("unknown variant `%s`, expected one of `binary`, `base58`, `base64`, `jsonParsed`, `base64+zstd`", inputlimit.Truncate(*c.Encoding, inputlimit.MaxEcho))
}

var zstdEncoder, _ = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))

// encodeAccount renders a (non-nil) account. mintOf reads mints for
// jsonParsed token accounts at the same commitment.
func encodeAccount(a *ledger.Account, enc string, slice *dataSlice, mintOf func(solana.PublicKey) *ledger.Account) (*UIAccount, error) {
	ui := &UIAccount{Executable: a.Executable, Lamports: a.Lamports, Owner: a.Owner, RentEpoch: a.RentEpoch, Space: uint64(len(a.Data))}
	if enc == encJSONParsed {
		if parsed := parseAccountData(a, mintOf); parsed != nil {
			ui.Data = parsed
			return ui, nil
		}
		enc = encBase64 // Agave falls back to base64 for data it cannot parse
	}
	data := a.Data
	if slice != nil {
		off := min(slice.Offset, uint64(len(data)))
		end := min(off+min(slice.Length, uint64(len(data))), uint64(len(data)))
		data = data[off:end]
	}
	switch enc {
	case encBinary, encBase58:
		if len(data) > maxBase58Bytes {
			return nil, Errorf(CodeInvalidRequest, "Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.")
		}
		s := base58.Encode(data)
		if enc == encBinary {
			ui.Data = s
		} else {
			ui.Data = [2]string{s, encBase58}
		}
	case encBase64Zstd:
		ui.Data = [2]string{base64.StdEncoding.EncodeToString(zstdEncoder.EncodeAll(data, nil)), encBase64Zstd}
	default:
		ui.Data = [2]string{base64.StdEncoding.EncodeToString(data), encBase64}
	}
	return ui, nil
}

// UITokenAmount is Agave's UiTokenAmount. UIAmount is null when the
// amount has no finite value (10^decimals overflows, or a scaled mint's
// amount is infinite).
type UITokenAmount struct {
	Amount         string   `json:"amount"`
	Decimals       uint8    `json:"decimals"`
	UIAmount       *float64 `json:"uiAmount"`
	UIAmountString string   `json:"uiAmountString"`
}

// tokenAmount renders an amount of a mint whose data is not at hand (plain
// decimals).
func tokenAmount(amount uint64, decimals uint8) UITokenAmount {
	return mintUI{decimals: decimals}.amount(amount)
}

func uintString(v uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			return string(b[i:])
		}
	}
}

func programName(id solana.PublicKey) string {
	if id == spl.Token2022ProgramID {
		return "spl-token-2022"
	}
	return "spl-token"
}

// parseAccountData is the jsonParsed form of an account as Agave's
// account decoder renders it — token accounts, mints and multisigs (with
// Token-2022 extensions), durable-nonce accounts and address lookup
// tables — or nil for anything else (the caller falls back to base64).
// mintOf reads other accounts at the same commitment: a token account's
// mint, and the Clock for interest-bearing and scaled amounts.
func parseAccountData(a *ledger.Account, mintOf func(solana.PublicKey) *ledger.Account) any {
	switch {
	case a.Owner == spl.SystemProgramID:
		return parseNonce(a)
	case a.Owner == spl.AddressLookupTableProgramID:
		return parseLookupTable(a)
	case !spl.IsTokenProgram(a.Owner):
		return nil
	}
	wrap := func(kind string, info any) any {
		return map[string]any{
			"program": programName(a.Owner),
			"parsed":  map[string]any{"type": kind, "info": info},
			"space":   len(a.Data),
		}
	}
	if ta, err := spl.DecodeTokenAccount(a.Data); err == nil && ta.State != spl.StateUninitialized {
		m := mintOf(ta.Mint)
		if m == nil {
			return nil
		}
		mint, err := spl.DecodeMint(m.Data)
		if err != nil {
			return nil
		}
		ui := mintUI{data: m.Data, decimals: mint.Decimals, now: clockTime(mintOf(spl.SysvarClockID))}
		info := map[string]any{
			"isNative":    ta.IsNative != nil,
			"mint":        ta.Mint,
			"owner":       ta.Owner,
			"state":       ta.State.String(),
			"tokenAmount": ui.amount(ta.Amount),
		}
		if ta.Delegate != nil {
			info["delegate"] = *ta.Delegate
			info["delegatedAmount"] = ui.amount(ta.DelegatedAmount)
		}
		if ta.IsNative != nil {
			info["rentExemptReserve"] = ui.amount(*ta.IsNative)
		}
		if ta.CloseAuthority != nil {
			info["closeAuthority"] = *ta.CloseAuthority
		}
		if ext := uiExtensionsOf(a.Data, true); len(ext) > 0 {
			info["extensions"] = ext
		}
		return wrap("account", info)
	}
	if mint, err := spl.DecodeMint(a.Data); err == nil && mint.IsInitialized {
		info := map[string]any{
			"decimals":        mint.Decimals,
			"freezeAuthority": optKey(mint.FreezeAuthority),
			"isInitialized":   true,
			"mintAuthority":   optKey(mint.MintAuthority),
			"supply":          uintString(mint.Supply),
		}
		if ext := uiExtensionsOf(a.Data, false); len(ext) > 0 {
			info["extensions"] = ext
		}
		return wrap("mint", info)
	}
	if ms := parseMultisig(a.Data); ms != nil {
		return wrap("multisig", ms)
	}
	return nil
}

// Token-2022 extension types the parsers name without state.
const (
	extImmutableOwner = 7
)

func optKey(k *solana.PublicKey) any {
	if k == nil {
		return nil
	}
	return k.String()
}
