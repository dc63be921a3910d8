package chainclient

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/gagliardetto/solana-go"
	"github.com/mr-tron/base58"
)

// Commitment is a confirmation level. The zero value leaves the choice to
// the server (finalized on most methods).
type Commitment string

// Commitment levels, lowest first.
const (
	Processed Commitment = "processed"
	Confirmed Commitment = "confirmed"
	Finalized Commitment = "finalized"
)

// Rank orders commitments: processed 1 < confirmed 2 < finalized 3; 0 for
// anything else.
func (c Commitment) Rank() int {
	switch c {
	case Processed:
		return 1
	case Confirmed:
		return 2
	case Finalized:
		return 3
	}
	return 0
}

// AtLeast reports whether c ranks at or above target.
func (c Commitment) AtLeast(target Commitment) bool {
	return c.Rank() > 0 && c.Rank() >= target.Rank()
}

// Blockhash is a recent blockhash and the last block height at which a
// transaction using it can land. It marshals as the RPC's
// {"blockhash","lastValidBlockHeight"} object.
type Blockhash struct {
	Hash                 solana.Hash `json:"blockhash"`
	LastValidBlockHeight uint64      `json:"lastValidBlockHeight"`
}

// Account is an account's state as getAccountInfo reports it.
type Account struct {
	Lamports   uint64
	Owner      solana.PublicKey
	Data       []byte
	Executable bool
	RentEpoch  uint64
}

type accountJSON struct {
	Lamports   uint64           `json:"lamports"`
	Owner      solana.PublicKey `json:"owner"`
	Data       json.RawMessage  `json:"data"`
	Executable bool             `json:"executable"`
	RentEpoch  lenientU64       `json:"rentEpoch"`
	Space      *uint64          `json:"space,omitempty"`
}

// MarshalJSON writes the RPC form with base64 data.
func (a Account) MarshalJSON() ([]byte, error) {
	data, _ := json.Marshal([]string{base64.StdEncoding.EncodeToString(a.Data), "base64"})
	space := uint64(len(a.Data))
	return json.Marshal(accountJSON{
		Lamports: a.Lamports, Owner: a.Owner, Data: data, Executable: a.Executable,
		RentEpoch: lenientU64(a.RentEpoch), Space: &space,
	})
}

// UnmarshalJSON reads the RPC form. Data may be ["…","base64"],
// ["…","base58"] or a bare base58 string (the legacy "binary" encoding).
func (a *Account) UnmarshalJSON(b []byte) error {
	var aj accountJSON
	if err := json.Unmarshal(b, &aj); err != nil {
		return err
	}
	data, err := decodeAccountData(aj.Data)
	if err != nil {
		return err
	}
	*a = Account{Lamports: aj.Lamports, Owner: aj.Owner, Data: data, Executable: aj.Executable, RentEpoch: uint64(aj.RentEpoch)}
	return nil
}

func decodeAccountData(raw json.RawMessage) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || isNull(raw) {
		return nil, nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return decodeBase58(s)
	case '[':
		var pair []string
		if err := json.Unmarshal(raw, &pair); err != nil || len(pair) != 2 {
			return nil, fmt.Errorf("account data: want [data, encoding], got %.60s", raw)
		}
		switch pair[1] {
		case "base64":
			return base64.StdEncoding.DecodeString(pair[0])
		case "base58", "binary":
			return decodeBase58(pair[0])
		default:
			return nil, fmt.Errorf("account data: unsupported encoding %q", pair[1])
		}
	}
	return nil, fmt.Errorf("account data: unsupported shape %.60s (request base64)", raw)
}

func decodeBase58(s string) ([]byte, error) {
	if s == "" {
		return []byte{}, nil
	}
	return base58.Decode(s)
}

// lenientU64 decodes a u64 written as an integer, a float (some JavaScript
// servers print 18446744073709551615 as 18446744073709552000, which
// overflows) or a decimal string. Values beyond the range saturate.
type lenientU64 uint64

// MarshalJSON writes the value as a JSON integer.
func (u lenientU64) MarshalJSON() ([]byte, error) { return strconv.AppendUint(nil, uint64(u), 10), nil }

// UnmarshalJSON accepts an integer, a float or a decimal string.
func (u *lenientU64) UnmarshalJSON(b []byte) error {
	s := string(bytes.Trim(b, `"`))
	if isNull(b) {
		return nil
	}
	if v, err := strconv.ParseUint(s, 10, 64); err == nil {
		*u = lenientU64(v)
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 {
		return fmt.Errorf("not a u64: %s", b)
	}
	if f >= math.MaxUint64 {
		*u = math.MaxUint64
	} else {
		*u = lenientU64(f)
	}
	return nil
}

func isNull(b []byte) bool { return string(bytes.TrimSpace(b)) == "null" }

// nullToNil turns a JSON null into a nil RawMessage so "no error" is always
// len(Err) == 0.
func nullToNil(r json.RawMessage) json.RawMessage {
	if len(r) == 0 || isNull(r) {
		return nil
	}
	return r
}

// TokenAmount is a token balance as getTokenAccountBalance reports it.
type TokenAmount struct {
	// Amount in base units (the RPC sends it as a decimal string).
	Amount   uint64
	Decimals uint8
	// UIAmount is deprecated and may be null.
	UIAmount       *float64
	UIAmountString string
}

type tokenAmountJSON struct {
	Amount         string   `json:"amount"`
	Decimals       uint8    `json:"decimals"`
	UIAmount       *float64 `json:"uiAmount"`
	UIAmountString string   `json:"uiAmountString"`
}

// MarshalJSON writes the RPC form (amount as a string).
func (t TokenAmount) MarshalJSON() ([]byte, error) {
	return json.Marshal(tokenAmountJSON{strconv.FormatUint(t.Amount, 10), t.Decimals, t.UIAmount, t.UIAmountString})
}

// UnmarshalJSON reads the RPC form.
func (t *TokenAmount) UnmarshalJSON(b []byte) error {
	var j tokenAmountJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	amt, err := strconv.ParseUint(j.Amount, 10, 64)
	if err != nil {
		return fmt.Errorf("token amount %q: %w", j.Amount, err)
	}
	*t = TokenAmount{Amount: amt, Decimals: j.Decimals, UIAmount: j.UIAmount, UIAmountString: j.UIAmountString}
	return nil
}

// Identity is a node's getIdentity answer. FQDN is set only by the
// MagicBlock router (the closest ER node's URL).
type Identity struct {
	Identity solana.PublicKey `json:"identity"`
	FQDN     string           `json:"fqdn,omitempty"`
}

// SignatureStatus is one entry of getSignatureStatuses.
type SignatureStatus struct {
	Slot uint64 `json:"slot"`
	// Confirmations is nil once the transaction is rooted (finalized).
	Confirmations *uint64 `json:"confirmations"`
	// Err is the TransactionError JSON, nil when the transaction succeeded.
	Err                json.RawMessage `json:"err"`
	ConfirmationStatus Commitment      `json:"confirmationStatus"`
}

// UnmarshalJSON reads the RPC form, normalising "err": null to nil and
// inferring confirmationStatus on old nodes that omit it.
func (s *SignatureStatus) UnmarshalJSON(b []byte) error {
	type plain SignatureStatus
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	p.Err = nullToNil(p.Err)
	if p.ConfirmationStatus == "" {
		if p.Confirmations == nil {
			p.ConfirmationStatus = Finalized
		} else {
			p.ConfirmationStatus = Confirmed
		}
	}
	*s = SignatureStatus(p)
	return nil
}

// SignatureInfo is one entry of getSignaturesForAddress.
type SignatureInfo struct {
	Signature          solana.Signature `json:"signature"`
	Slot               uint64           `json:"slot"`
	Err                json.RawMessage  `json:"err"`
	Memo               *string          `json:"memo"`
	BlockTime          *int64           `json:"blockTime"`
	ConfirmationStatus Commitment       `json:"confirmationStatus"`
}

// UnmarshalJSON reads the RPC form, normalising "err": null to nil.
func (s *SignatureInfo) UnmarshalJSON(b []byte) error {
	type plain SignatureInfo
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	p.Err = nullToNil(p.Err)
	*s = SignatureInfo(p)
	return nil
}

// EpochInfo is the getEpochInfo result.
type EpochInfo struct {
	AbsoluteSlot     uint64  `json:"absoluteSlot"`
	BlockHeight      uint64  `json:"blockHeight"`
	Epoch            uint64  `json:"epoch"`
	SlotIndex        uint64  `json:"slotIndex"`
	SlotsInEpoch     uint64  `json:"slotsInEpoch"`
	TransactionCount *uint64 `json:"transactionCount,omitempty"`
}

// SimulateResult is the value of simulateTransaction. Fields the client does
// not interpret are kept as raw JSON.
type SimulateResult struct {
	// Err is the TransactionError JSON, nil on success.
	Err                  json.RawMessage `json:"err"`
	Logs                 []string        `json:"logs"`
	Accounts             json.RawMessage `json:"accounts,omitempty"`
	UnitsConsumed        *uint64         `json:"unitsConsumed"`
	ReturnData           json.RawMessage `json:"returnData,omitempty"`
	InnerInstructions    json.RawMessage `json:"innerInstructions,omitempty"`
	ReplacementBlockhash *Blockhash      `json:"replacementBlockhash"`
}

// UnmarshalJSON reads the RPC form, normalising JSON nulls to nil.
func (r *SimulateResult) UnmarshalJSON(b []byte) error {
	type plain SimulateResult
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	p.Err = nullToNil(p.Err)
	p.Accounts = nullToNil(p.Accounts)
	p.ReturnData = nullToNil(p.ReturnData)
	p.InnerInstructions = nullToNil(p.InnerInstructions)
	*r = SimulateResult(p)
	return nil
}

// contextual is the {"context":{"slot":…},"value":…} wrapper.
type contextual struct {
	Context *struct {
		Slot uint64 `json:"slot"`
	} `json:"context"`
	Value json.RawMessage `json:"value"`
}

// unwrapValue returns the value of a context-wrapped result, or raw itself
// when it is not wrapped (servers differ; see chain-rpc.md §9.5).
func unwrapValue(raw json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '{' {
		return raw
	}
	var c contextual
	if err := json.Unmarshal(t, &c); err != nil || c.Context == nil || c.Value == nil {
		return raw
	}
	return c.Value
}

// ErrAccountNotFound reports that an account the caller needed does not
// exist.
var ErrAccountNotFound = errors.New("account not found")
