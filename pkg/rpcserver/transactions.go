package rpcserver

import (
	"encoding/base64"

	"github.com/gagliardetto/solana-go"
	"github.com/mr-tron/base58"

	"github.com/ferry-sh/ferry/pkg/inputlimit"
	"github.com/ferry-sh/ferry/pkg/ledger"
	rt "github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// Transaction encodings of getTransaction and getBlock.
const (
	txEncJSON       = "json"
	txEncJSONParsed = "jsonParsed"
	txEncBase58     = "base58"
	txEncBase64     = "base64"
)

func checkTxEncoding(enc *string) (string, error) {
	if enc == nil {
		return txEncJSON, nil
	}
	switch *enc {
	case txEncJSON, txEncJSONParsed, txEncBase58, txEncBase64:
		return *enc, nil
	case encBinary:
		return txEncBase58, nil
	}
	return "", InvalidParams("unknown variant `%s`, expected one of `binary`, `base64`, `base58`, `json`, `jsonParsed`", inputlimit.Truncate(*enc, inputlimit.MaxEcho))
}

type uiHeader struct {
	NumRequiredSignatures       uint8 `json:"numRequiredSignatures"`
	NumReadonlySignedAccounts   uint8 `json:"numReadonlySignedAccounts"`
	NumReadonlyUnsignedAccounts uint8 `json:"numReadonlyUnsignedAccounts"`
}

// uiInstruction is a compiled instruction in json encoding.
type uiInstruction struct {
	ProgramIDIndex uint8    `json:"programIdIndex"`
	Accounts       []uint16 `json:"accounts"`
	Data           string   `json:"data"`
	StackHeight    *int     `json:"stackHeight"`
}

type uiLookup struct {
	AccountKey      solana.PublicKey `json:"accountKey"`
	WritableIndexes []uint16         `json:"writableIndexes"`
	ReadonlyIndexes []uint16         `json:"readonlyIndexes"`
}

type uiMessage struct {
	AccountKeys         []solana.PublicKey `json:"accountKeys"`
	Header              uiHeader           `json:"header"`
	RecentBlockhash     solana.Hash        `json:"recentBlockhash"`
	Instructions        []uiInstruction    `json:"instructions"`
	AddressTableLookups []uiLookup         `json:"addressTableLookups,omitempty"`
}

type uiParsedAccount struct {
	Pubkey   solana.PublicKey `json:"pubkey"`
	Writable bool             `json:"writable"`
	Signer   bool             `json:"signer"`
	Source   string           `json:"source"`
}

type uiParsedMessage struct {
	AccountKeys         []uiParsedAccount `json:"accountKeys"`
	RecentBlockhash     solana.Hash       `json:"recentBlockhash"`
	Instructions        []any             `json:"instructions"`
	AddressTableLookups []uiLookup        `json:"addressTableLookups,omitempty"`
}

type uiTransaction struct {
	Signatures []solana.Signature `json:"signatures"`
	Message    any                `json:"message"`
}

type uiInner struct {
	Index        uint8 `json:"index"`
	Instructions []any `json:"instructions"`
}

type uiTokenBalance struct {
	AccountIndex  uint8            `json:"accountIndex"`
	Mint          solana.PublicKey `json:"mint"`
	Owner         solana.PublicKey `json:"owner"`
	ProgramID     solana.PublicKey `json:"programId"`
	UITokenAmount UITokenAmount    `json:"uiTokenAmount"`
}

type uiLoadedAddresses struct {
	Writable []solana.PublicKey `json:"writable"`
	Readonly []solana.PublicKey `json:"readonly"`
}

type uiReturnData struct {
	ProgramID solana.PublicKey `json:"programId"`
	Data      [2]string        `json:"data"`
}

type uiMeta struct {
	Err                  *rt.TxError       `json:"err"`
	Status               any               `json:"status"`
	Fee                  uint64            `json:"fee"`
	PreBalances          []uint64          `json:"preBalances"`
	PostBalances         []uint64          `json:"postBalances"`
	InnerInstructions    []uiInner         `json:"innerInstructions"`
	LogMessages          []string          `json:"logMessages"`
	PreTokenBalances     []uiTokenBalance  `json:"preTokenBalances"`
	PostTokenBalances    []uiTokenBalance  `json:"postTokenBalances"`
	Rewards              []any             `json:"rewards"`
	LoadedAddresses      uiLoadedAddresses `json:"loadedAddresses"`
	ComputeUnitsConsumed uint64            `json:"computeUnitsConsumed"`
	CostUnits            uint64            `json:"costUnits"`
	ReturnData           *uiReturnData     `json:"returnData,omitempty"`
}

// uiTxWithMeta is getTransaction's result and a getBlock transaction.
type uiTxWithMeta struct {
	Slot        *uint64 `json:"slot,omitempty"`
	BlockTime   *int64  `json:"blockTime,omitempty"`
	Transaction any     `json:"transaction"`
	Meta        *uiMeta `json:"meta"`
	Version     any     `json:"version,omitempty"`
}

// statusOk and statusErr are the deprecated "status" field of signature
// statuses and transaction metas, {"Ok":null} or {"Err":…}: structs
// rather than a map apiece, which cost an allocation and encoding/json's
// sorted map walk for every status a client polls.
type statusOk struct {
	Ok *struct{} `json:"Ok"`
}

type statusErr struct {
	Err *rt.TxError `json:"Err"`
}

// status is the "status" field for a transaction's result. Both kinds fit
// an interface without an allocation (a struct of one pointer).
func status(err *rt.TxError) any {
	if err == nil {
		return statusOk{}
	}
	return statusErr{err}
}

func u16s(b []byte) []uint16 {
	out := make([]uint16, len(b))
	for i, v := range b {
		out[i] = uint16(v)
	}
	return out
}

func tokenBalancesUI(tbs []ledger.TokenBalance) []uiTokenBalance {
	out := make([]uiTokenBalance, len(tbs))
	for i, t := range tbs {
		out[i] = uiTokenBalance{AccountIndex: t.AccountIndex, Mint: t.Mint, Owner: t.Owner, ProgramID: t.ProgramID, UITokenAmount: tokenAmount(t.Amount, t.Decimals)}
	}
	return out
}

func returnDataUI(r *rt.ReturnData) *uiReturnData {
	if r == nil {
		return nil
	}
	return &uiReturnData{ProgramID: r.ProgramID, Data: [2]string{base64.StdEncoding.EncodeToString(r.Data), "base64"}}
}

// innerUI renders inner instructions; parsed selects jsonParsed form,
// which names accounts from keys (the static keys, then any loaded
// through lookup tables).
func innerUI(inner []rt.InnerInstructions, keys []solana.PublicKey, parsed bool) []uiInner {
	out := make([]uiInner, len(inner))
	for i, in := range inner {
		out[i] = uiInner{Index: in.Index, Instructions: make([]any, len(in.Instructions))}
		for j, ix := range in.Instructions {
			h := ix.StackHeight
			if parsed {
				out[i].Instructions[j] = parseInstruction(keys, ix.ProgramIDIndex, ix.Accounts, ix.Data, &h)
			} else {
				out[i].Instructions[j] = uiInstruction{ProgramIDIndex: ix.ProgramIDIndex, Accounts: u16s(ix.Accounts), Data: base58.Encode(ix.Data), StackHeight: &h}
			}
		}
	}
	return out
}

// txKeys is a transaction's account keys as its instructions index them:
// the message's static keys, then the writable and read-only addresses
// its lookup tables loaded.
func txKeys(msg *txwire.Message, m *ledger.TxMeta) []solana.PublicKey {
	if len(m.LoadedWritable)+len(m.LoadedReadonly) == 0 {
		return msg.AccountKeys
	}
	keys := make([]solana.PublicKey, 0, len(msg.AccountKeys)+len(m.LoadedWritable)+len(m.LoadedReadonly))
	return append(append(append(keys, msg.AccountKeys...), m.LoadedWritable...), m.LoadedReadonly...)
}

// orEmpty keeps an empty list a JSON [] rather than null.
func orEmpty(keys []solana.PublicKey) []solana.PublicKey {
	if keys == nil {
		return []solana.PublicKey{}
	}
	return keys
}

func metaUI(m *ledger.TxMeta, err *rt.TxError, msg *txwire.Message, parsed bool) *uiMeta {
	return &uiMeta{
		Err: err, Status: status(err), Fee: m.Fee,
		PreBalances: m.PreBalances, PostBalances: m.PostBalances,
		InnerInstructions: innerUI(m.InnerInstructions, txKeys(msg, m), parsed),
		LogMessages:       m.Logs,
		PreTokenBalances:  tokenBalancesUI(m.PreTokenBalances), PostTokenBalances: tokenBalancesUI(m.PostTokenBalances),
		Rewards:              []any{},
		LoadedAddresses:      uiLoadedAddresses{Writable: orEmpty(m.LoadedWritable), Readonly: orEmpty(m.LoadedReadonly)},
		ComputeUnitsConsumed: m.ComputeUnits, CostUnits: m.CostUnits,
		ReturnData: returnDataUI(m.ReturnData),
	}
}

func lookupsUI(msg *txwire.Message) []uiLookup {
	if msg.Version == txwire.Legacy {
		return nil
	}
	out := make([]uiLookup, len(msg.AddressTableLookups))
	for i, l := range msg.AddressTableLookups {
		out[i] = uiLookup{AccountKey: l.AccountKey, WritableIndexes: u16s(l.WritableIndexes), ReadonlyIndexes: u16s(l.ReadonlyIndexes)}
	}
	return out
}

// transactionUI renders a transaction in the requested encoding; m (if
// known) supplies the addresses a v0 message loaded, which jsonParsed
// lists after the static keys with source "lookupTable".
func transactionUI(tx *txwire.Transaction, raw []byte, enc string, m *ledger.TxMeta) any {
	switch enc {
	case txEncBase64:
		return [2]string{base64.StdEncoding.EncodeToString(raw), "base64"}
	case txEncBase58:
		return [2]string{base58.Encode(raw), "base58"}
	}
	msg := &tx.Message
	if enc == txEncJSONParsed {
		pm := uiParsedMessage{RecentBlockhash: msg.RecentBlockhash, AddressTableLookups: lookupsUI(msg)}
		keys := msg.AccountKeys
		pm.AccountKeys = make([]uiParsedAccount, len(msg.AccountKeys), len(msg.AccountKeys)+msg.NumLookupAccounts())
		for i, k := range msg.AccountKeys {
			pm.AccountKeys[i] = uiParsedAccount{Pubkey: k, Writable: msg.IsWritable(i), Signer: msg.IsSigner(i), Source: "transaction"}
		}
		if m != nil {
			keys = txKeys(msg, m)
			for _, k := range m.LoadedWritable {
				pm.AccountKeys = append(pm.AccountKeys, uiParsedAccount{Pubkey: k, Writable: true, Source: "lookupTable"})
			}
			for _, k := range m.LoadedReadonly {
				pm.AccountKeys = append(pm.AccountKeys, uiParsedAccount{Pubkey: k, Source: "lookupTable"})
			}
		}
		pm.Instructions = make([]any, len(msg.Instructions))
		for i, ix := range msg.Instructions {
			pm.Instructions[i] = parseInstruction(keys, ix.ProgramIDIndex, ix.Accounts, ix.Data, nil)
		}
		return uiTransaction{Signatures: tx.Signatures, Message: pm}
	}
	um := uiMessage{
		AccountKeys: msg.AccountKeys,
		Header: uiHeader{msg.Header.NumRequiredSignatures, msg.Header.NumReadonlySignedAccounts,
			msg.Header.NumReadonlyUnsignedAccounts},
		RecentBlockhash:     msg.RecentBlockhash,
		Instructions:        make([]uiInstruction, len(msg.Instructions)),
		AddressTableLookups: lookupsUI(msg),
	}
	for i, ix := range msg.Instructions {
		um.Instructions[i] = uiInstruction{ProgramIDIndex: ix.ProgramIDIndex, Accounts: u16s(ix.Accounts), Data: base58.Encode(ix.Data)}
	}
	return uiTransaction{Signatures: tx.Signatures, Message: um}
}

// versionUI is the "version" field: present only when the client sent
// maxSupportedTransactionVersion. It fails with -32015 for a v0
// transaction the client did not declare support for.
func versionUI(tx *txwire.Transaction, maxVersion *uint8) (any, error) {
	if maxVersion == nil {
		if tx.Message.Version != txwire.Legacy {
			return nil, Errorf(CodeUnsupportedTxVersion, "Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: \"maxSupportedTransactionVersion\": 0")
		}
		return nil, nil
	}
	if tx.Message.Version == txwire.Legacy {
		return "legacy", nil
	}
	return 0, nil
}

// txWithMetaUI renders a landed transaction for getTransaction/getBlock.
func txWithMetaUI(r *ledger.TxRecord, enc string, maxVersion *uint8, withSlot bool) (*uiTxWithMeta, error) {
	tx, err := r.Transaction()
	if err != nil {
		return nil, err
	}
	ver, err := versionUI(tx, maxVersion)
	if err != nil {
		return nil, err
	}
	out := &uiTxWithMeta{
		Transaction: transactionUI(tx, r.Raw, enc, r.Meta),
		Meta:        metaUI(r.Meta, r.Err, &tx.Message, enc == txEncJSONParsed),
		Version:     ver,
	}
	if withSlot {
		slot, bt := r.Slot, r.BlockTime
		out.Slot, out.BlockTime = &slot, &bt
	}
	return out, nil
}
