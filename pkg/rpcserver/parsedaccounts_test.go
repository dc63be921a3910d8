package rpcserver

import (
	"encoding/binary"
	"math"
	"strconv"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// setAccounts stores accounts directly and confirms the slot.
func (n *node) setAccounts(t *testing.T, accts map[solana.PublicKey]*ledger.Account) {
	t.Helper()
	if _, err := n.l.Apply(ctxT(t), func(w ledger.AccountWriter) error {
		for k, a := range accts {
			w.Set(k, a)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.l.AdvanceSlot(ctxT(t)); err != nil {
		t.Fatal(err)
	}
}

// parsedData is getAccountInfo's jsonParsed "data".
func (n *node) parsedData(t *testing.T, key solana.PublicKey) any {
	t.Helper()
	res := n.result(t, "getAccountInfo", key.String(), map[string]any{"encoding": "jsonParsed", "commitment": "confirmed"})
	return res.(map[string]any)["value"].(map[string]any)["data"]
}

// tlv appends a Token-2022 TLV entry.
func tlv(b []byte, typ uint16, value []byte) []byte {
	b = binary.LittleEndian.AppendUint16(b, typ)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(value)))
	return append(b, value...)
}

// extended pads base state to 165 bytes, adds the account type and the
// entries.
func extended(base []byte, kind byte, entries ...[]byte) []byte {
	b := append(append([]byte{}, base...), make([]byte, spl.TokenAccountSize-len(base))...)
	b = append(b, kind)
	for _, e := range entries {
		b = append(b, e...)
	}
	return b
}

func entry(typ uint16, value []byte) []byte { return tlv(nil, typ, value) }

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
func le16(v uint16) []byte { return binary.LittleEndian.AppendUint16(nil, v) }

func borshStr(s string) []byte {
	return append(binary.LittleEndian.AppendUint32(nil, uint32(len(s))), s...)
}

// TestJSONParsedNonceAndLookupTable pins parse_nonce and
// parse_address_lookup_table.
func TestJSONParsedNonceAndLookupTable(t *testing.T) {
	n := manualNode(t)
	nonceKey, tableKey, frozenKey, blankTable := solana.PublicKey{0x11}, solana.PublicKey{0x12}, solana.PublicKey{0x13}, solana.PublicKey{0x14}
	auth, a1, a2 := solana.PublicKey{0x21}, solana.PublicKey{0x22}, solana.PublicKey{0x23}
	nonce := make([]byte, spl.NonceAccountSize)
	spl.NonceState{Version: 1, Initialized: true, Authority: auth, Nonce: solana.Hash{0x31}, LamportsPerSignature: 5000}.EncodeInto(nonce)
	table := func(t spl.LookupTable) []byte {
		b := make([]byte, spl.LookupTableMetaSize)
		t.EncodeMeta(b)
		for _, a := range t.Addresses {
			b = append(b, a[:]...)
		}
		return b
	}
	n.setAccounts(t, map[solana.PublicKey]*ledger.Account{
		nonceKey:   {Lamports: 1_447_680, Owner: spl.SystemProgramID, Data: nonce},
		tableKey:   {Lamports: 2_000_000, Owner: spl.AddressLookupTableProgramID, Data: table(spl.LookupTable{DeactivationSlot: math.MaxUint64, LastExtendedSlot: 7, LastExtendedSlotStartIndex: 1, Authority: &auth, Addresses: []solana.PublicKey{a1, a2}})},
		frozenKey:  {Lamports: 2_000_000, Owner: spl.AddressLookupTableProgramID, Data: table(spl.LookupTable{DeactivationSlot: 99, Addresses: []solana.PublicKey{a1}})},
		blankTable: {Lamports: 2_000_000, Owner: spl.AddressLookupTableProgramID, Data: make([]byte, spl.LookupTableMetaSize)},
	})
	requireJSON(t, "nonce", n.parsedData(t, nonceKey), `{"program":"nonce","space":80,"parsed":{"type":"initialized","info":{
		"authority":"`+auth.String()+`","blockhash":"`+solana.PublicKey(solana.Hash{0x31}).String()+`","feeCalculator":{"lamportsPerSignature":"5000"}}}}`)
	requireJSON(t, "table", n.parsedData(t, tableKey), `{"program":"address-lookup-table","space":120,"parsed":{"type":"lookupTable","info":{
		"deactivationSlot":"18446744073709551615","lastExtendedSlot":"7","lastExtendedSlotStartIndex":1,
		"authority":"`+auth.String()+`","addresses":["`+a1.String()+`","`+a2.String()+`"]}}}`)
	requireJSON(t, "frozen table", n.parsedData(t, frozenKey), `{"program":"address-lookup-table","space":88,"parsed":{"type":"lookupTable","info":{
		"deactivationSlot":"99","lastExtendedSlot":"0","lastExtendedSlotStartIndex":0,"addresses":["`+a1.String()+`"]}}}`)
	requireJSON(t, "uninitialized table", n.parsedData(t, blankTable),
		`{"program":"address-lookup-table","space":56,"parsed":{"type":"uninitialized"}}`)
}

// TestJSONParsedToken2022Extensions pins the "extensions" list of a mint
// and an account (UiExtension), a multisig, and the UI amounts of a scaled
// mint.
func TestJSONParsedToken2022Extensions(t *testing.T) {
	n := manualNode(t)
	mintKey, acctKey, msKey, scaledKey, scaledAcct := solana.PublicKey{0x41}, solana.PublicKey{0x42}, solana.PublicKey{0x43}, solana.PublicKey{0x44}, solana.PublicKey{0x45}
	auth, owner, other := solana.PublicKey{0x51}, solana.PublicKey{0x52}, solana.PublicKey{0x53}
	mintBase := spl.Mint{MintAuthority: &auth, Supply: 1000, Decimals: 2, IsInitialized: true}.Encode()
	fee := cat(auth[:], make([]byte, 32), le64(12), le64(1), le64(500), le16(25), le64(3), le64(900), le16(50))
	meta := cat(auth[:], mintKey[:], borshStr("Ferry"), borshStr("FRY"), borshStr("https://x"),
		binary.LittleEndian.AppendUint32(nil, 1), borshStr("k"), borshStr("v"))
	group := cat(make([]byte, 32), mintKey[:], le64(2), le64(10))
	mint := extended(mintBase, 1,
		entry(1, fee), entry(3, auth[:]), entry(6, []byte{2}), entry(9, nil), entry(12, other[:]),
		entry(14, cat(auth[:], make([]byte, 32))), entry(18, cat(auth[:], mintKey[:])), entry(19, meta),
		entry(20, cat(make([]byte, 32), mintKey[:])), entry(21, group), entry(26, cat(auth[:], []byte{1})),
		entry(10, make([]byte, 51)))
	acct := extended(spl.TokenAccount{Mint: mintKey, Owner: owner, Amount: 250, State: spl.StateInitialized}.Encode(), 2,
		entry(2, le64(7)), entry(7, nil), entry(8, []byte{1}), entry(11, []byte{0}), entry(13, nil), entry(15, []byte{0}), entry(27, nil))
	ms := make([]byte, spl.MultisigSize)
	ms[0], ms[1], ms[2] = 1, 2, 1
	copy(ms[3:], auth[:])
	copy(ms[35:], other[:])
	scaled := extended(spl.Mint{Decimals: 2, IsInitialized: true}.Encode(), 1,
		entry(25, cat(make([]byte, 32), le64(math.Float64bits(1.5)), le64(math.MaxInt64), le64(math.Float64bits(3)))))
	n.setAccounts(t, map[solana.PublicKey]*ledger.Account{
		mintKey:    {Lamports: 10_000_000, Owner: spl.Token2022ProgramID, Data: mint},
		acctKey:    {Lamports: 10_000_000, Owner: spl.Token2022ProgramID, Data: acct},
		msKey:      {Lamports: 10_000_000, Owner: spl.TokenProgramID, Data: ms},
		scaledKey:  {Lamports: 10_000_000, Owner: spl.Token2022ProgramID, Data: scaled},
		scaledAcct: {Lamports: 10_000_000, Owner: spl.Token2022ProgramID, Data: spl.TokenAccount{Mint: scaledKey, Owner: owner, Amount: 1001, State: spl.StateInitialized}.Encode()},
	})
	a, m, o := `"`+auth.String()+`"`, `"`+mintKey.String()+`"`, `"`+other.String()+`"`
	requireJSON(t, "mint", n.parsedData(t, mintKey), `{"program":"spl-token-2022","space":`+strconv.Itoa(len(mint))+`,"parsed":{"type":"mint","info":{
		"mintAuthority":`+a+`,"supply":"1000","decimals":2,"isInitialized":true,"freezeAuthority":null,"extensions":[
		{"extension":"transferFeeConfig","state":{"transferFeeConfigAuthority":`+a+`,"withdrawWithheldAuthority":null,"withheldAmount":12,
			"olderTransferFee":{"epoch":1,"maximumFee":500,"transferFeeBasisPoints":25},"newerTransferFee":{"epoch":3,"maximumFee":900,"transferFeeBasisPoints":50}}},
		{"extension":"mintCloseAuthority","state":{"closeAuthority":`+a+`}},
		{"extension":"defaultAccountState","state":{"accountState":"frozen"}},
		{"extension":"nonTransferable"},
		{"extension":"permanentDelegate","state":{"delegate":`+o+`}},
		{"extension":"transferHook","state":{"authority":`+a+`,"programId":null}},
		{"extension":"metadataPointer","state":{"authority":`+a+`,"metadataAddress":`+m+`}},
		{"extension":"tokenMetadata","state":{"updateAuthority":`+a+`,"mint":`+m+`,"name":"Ferry","symbol":"FRY","uri":"https://x","additionalMetadata":[["k","v"]]}},
		{"extension":"groupPointer","state":{"authority":null,"groupAddress":`+m+`}},
		{"extension":"tokenGroup","state":{"updateAuthority":null,"mint":`+m+`,"size":2,"maxSize":10}},
		{"extension":"pausableConfig","state":{"authority":`+a+`,"paused":true}},
		{"extension":"unparseableExtension"}]}}}`)
	requireJSON(t, "account", n.parsedData(t, acctKey), `{"program":"spl-token-2022","space":`+strconv.Itoa(len(acct))+`,"parsed":{"type":"account","info":{
		"mint":`+m+`,"owner":"`+owner.String()+`","tokenAmount":{"amount":"250","decimals":2,"uiAmount":2.5,"uiAmountString":"2.5"},
		"state":"initialized","isNative":false,"extensions":[
		{"extension":"transferFeeAmount","state":{"withheldAmount":7}},{"extension":"immutableOwner"},
		{"extension":"memoTransfer","state":{"requireIncomingTransferMemos":true}},{"extension":"cpiGuard","state":{"lockCpi":false}},
		{"extension":"nonTransferableAccount"},{"extension":"transferHookAccount","state":{"transferring":false}},{"extension":"pausableAccount"}]}}}`)
	requireJSON(t, "multisig", n.parsedData(t, msKey), `{"program":"spl-token","space":355,"parsed":{"type":"multisig","info":{
		"numRequiredSigners":1,"numValidSigners":2,"isInitialized":true,"signers":[`+a+`,`+o+`]}}}`)
	// A scaled mint: 1001 × 1.5 = 1501.5, truncated to 1501, 2 decimals.
	info := n.parsedData(t, scaledAcct).(map[string]any)["parsed"].(map[string]any)["info"].(map[string]any)
	requireJSON(t, "scaled amount", info["tokenAmount"], `{"amount":"1001","decimals":2,"uiAmount":15.01,"uiAmountString":"15.01"}`)
	requireJSON(t, "scaled balance", n.result(t, "getTokenAccountBalance", scaledAcct.String(), map[string]any{"commitment": "confirmed"}).(map[string]any)["value"],
		`{"amount":"1001","decimals":2,"uiAmount":15.01,"uiAmountString":"15.01"}`)
	sm := n.parsedData(t, scaledKey).(map[string]any)["parsed"].(map[string]any)["info"].(map[string]any)["extensions"]
	requireJSON(t, "scaled config", sm, `[{"extension":"scaledUiAmountConfig","state":{"authority":null,"multiplier":"1.5",
		"newMultiplierEffectiveTimestamp":9223372036854775807,"newMultiplier":"3"}}]`)
}

// TestGetTransactionLoadedAddresses: a v0 transaction's meta lists the
// addresses its table loaded, jsonParsed lists them as "lookupTable"
// accounts, and a client that does not accept v0 is refused.
func TestGetTransactionLoadedAddresses(t *testing.T) {
	n := manualNode(t)
	if _, err := n.l.AdvanceSlot(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	payer := newKey(t)
	if _, err := n.l.Faucet().Airdrop(ctxT(t), pub(payer), 10_000_000_000); err != nil {
		t.Fatal(err)
	}
	to := solana.PublicKey{0x61}
	create, table := spl.ALTCreate(pub(payer), pub(payer), n.l.Slot(ledger.Processed)-1)
	n.process(t, payer, create, spl.ALTExtend(table, pub(payer), pub(payer), []solana.PublicKey{to, spl.SysvarClockID}))
	bh, _ := n.l.LatestBlockhash(ledger.Processed)
	transfer := spl.SystemTransfer(pub(payer), to, 1_000_000)
	transfer.Accounts = append(transfer.Accounts, txwire.Readonly(spl.SysvarClockID))
	legacy, err := txwire.Compile(pub(payer), []txwire.Instruction{transfer}, bh.Blockhash)
	if err != nil {
		t.Fatal(err)
	}
	// Static keys: payer, system program; loaded: to (writable), clock.
	m := &txwire.Message{Version: txwire.V0, Header: txwire.Header{NumRequiredSignatures: 1, NumReadonlyUnsignedAccounts: 1},
		AccountKeys: []solana.PublicKey{pub(payer), solana.SystemProgramID}, RecentBlockhash: legacy.RecentBlockhash,
		Instructions:        []txwire.CompiledInstruction{{ProgramIDIndex: 1, Accounts: []uint8{0, 2, 3}, Data: transfer.Data}},
		AddressTableLookups: []txwire.AddressTableLookup{{AccountKey: table, WritableIndexes: []uint8{0}, ReadonlyIndexes: []uint8{1}}}}
	tx := txwire.NewUnsigned(m)
	if err := tx.Sign(payer); err != nil {
		t.Fatal(err)
	}
	rec, err := n.l.Process(ctxT(t), tx.Bytes())
	if err != nil || rec.Err != nil {
		t.Fatalf("v0 transfer: %v %+v", err, rec)
	}
	if _, err := n.l.AdvanceSlot(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	n.confirm(t, rec.Signature)
	got := n.result(t, "getTransaction", rec.Signature.String(), map[string]any{"maxSupportedTransactionVersion": 0, "encoding": "jsonParsed", "commitment": "confirmed"}).(map[string]any)
	requireJSON(t, "loadedAddresses", got["meta"].(map[string]any)["loadedAddresses"],
		`{"writable":["`+to.String()+`"],"readonly":["`+spl.SysvarClockID.String()+`"]}`)
	keys := got["transaction"].(map[string]any)["message"].(map[string]any)["accountKeys"]
	requireJSON(t, "accountKeys", keys, `[
		{"pubkey":"`+pub(payer).String()+`","writable":true,"signer":true,"source":"transaction"},
		{"pubkey":"11111111111111111111111111111111","writable":false,"signer":false,"source":"transaction"},
		{"pubkey":"`+to.String()+`","writable":true,"signer":false,"source":"lookupTable"},
		{"pubkey":"`+spl.SysvarClockID.String()+`","writable":false,"signer":false,"source":"lookupTable"}]`)
	ix := got["transaction"].(map[string]any)["message"].(map[string]any)["instructions"].([]any)[0].(map[string]any)
	requireJSON(t, "parsed transfer", ix["parsed"], `{"type":"transfer","info":{"source":"`+pub(payer).String()+`","destination":"`+to.String()+`","lamports":1000000}}`)
	_, v := rawCall(t, n.url, req("getTransaction", rec.Signature.String(), map[string]any{"commitment": "confirmed"}))
	if code, _, _ := errCode(v); code != CodeUnsupportedTxVersion {
		t.Fatalf("without maxSupportedTransactionVersion: %v", v)
	}
}
