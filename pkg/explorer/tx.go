package explorer

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/inspect"
	"github.com/ferry-sh/ferry/pkg/outcome"
	"github.com/ferry-sh/ferry/pkg/txerror"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// TxView is the transaction view: what the chain node reports about a
// landed transaction, and ferry's explanation of it.
type TxView struct {
	Signature string `json:"signature"`
	Layer     string `json:"layer"`
	Slot      uint64 `json:"slot"`
	BlockTime *int64 `json:"blockTime,omitempty"`
	// Status is "success" or "failed".
	Status string `json:"status"`
	// Commitment is processed, confirmed or finalized;
	// Confirmations is nil once finalized.
	Commitment    string  `json:"commitment"`
	Confirmations *uint64 `json:"confirmations,omitempty"`
	Fee           uint64  `json:"fee"`
	ComputeUnits  *uint64 `json:"computeUnits,omitempty"`
	Version       string  `json:"version"`
	// Logs are the program logs; LogsOmitted counts lines over
	// Options.MaxLogLines.
	Logs        []string `json:"logs"`
	LogsOmitted int      `json:"logsOmitted,omitempty"`
	// Balances are the SOL balance changes of the transaction's accounts.
	Balances []BalanceChange `json:"balances"`
	// TokenBalances are the token balance changes the node shows (the
	// rollup leaves private accounts out, for everyone but their owner).
	TokenBalances []TokenChange `json:"tokenBalances"`
	// Explanation is `ferry inspect`'s description of the transaction.
	Explanation *inspect.Description `json:"explanation"`
	// Operation is the payment operation the transaction starts, if any
	// (what `ferry send --confirm` follows).
	Operation *outcome.Operation `json:"operation,omitempty"`
	// Error explains a failed transaction as `ferry send` does.
	Error *ErrorView `json:"error,omitempty"`
}

// BalanceChange is one account's SOL balance before and after.
type BalanceChange struct {
	Account string `json:"account"`
	Pre     uint64 `json:"pre,string"`
	Post    uint64 `json:"post,string"`
	// Delta is Post - Pre in lamports.
	Delta string `json:"delta"`
}

// TokenChange is one token account's balance before and after (base
// units; UI strings with the mint's decimals).
type TokenChange struct {
	Account  string `json:"account"`
	Owner    string `json:"owner,omitempty"`
	Mint     string `json:"mint"`
	Decimals uint8  `json:"decimals"`
	Pre      string `json:"pre"`
	Post     string `json:"post"`
	Delta    string `json:"delta"`
}

// ErrorView is a failed transaction's error: the node's TransactionError,
// its decoding (program, error name, meaning) and the funds hint, all as
// `ferry send` prints them.
type ErrorView struct {
	Raw       json.RawMessage    `json:"raw"`
	Explained *txerror.Explained `json:"explained,omitempty"`
	Text      string             `json:"text"`
	Hint      string             `json:"hint,omitempty"`
}

// rpcTransaction is getTransaction's base64 answer.
type rpcTransaction struct {
	Slot        uint64          `json:"slot"`
	BlockTime   *int64          `json:"blockTime"`
	Version     json.RawMessage `json:"version"`
	Transaction []string        `json:"transaction"`
	Meta        *struct {
		Err               json.RawMessage `json:"err"`
		Fee               uint64          `json:"fee"`
		PreBalances       []uint64        `json:"preBalances"`
		PostBalances      []uint64        `json:"postBalances"`
		PreTokenBalances  []rpcTokenBal   `json:"preTokenBalances"`
		PostTokenBalances []rpcTokenBal   `json:"postTokenBalances"`
		LogMessages       []string        `json:"logMessages"`
		ComputeUnits      *uint64         `json:"computeUnitsConsumed"`
		LoadedAddresses   *struct {
			Writable []solana.PublicKey `json:"writable"`
			Readonly []solana.PublicKey `json:"readonly"`
		} `json:"loadedAddresses"`
	} `json:"meta"`
}

type rpcTokenBal struct {
	Index int    `json:"accountIndex"`
	Mint  string `json:"mint"`
	Owner string `json:"owner"`
	UI    struct {
		Amount   string `json:"amount"`
		Decimals uint8  `json:"decimals"`
	} `json:"uiTokenAmount"`
}

// landed is a fetched transaction, decoded.
type landed struct {
	raw  rpcTransaction
	tx   *txwire.Transaction
	keys []solana.PublicKey // static keys then loaded addresses
}

// fetchTx reads a landed transaction (confirmed) from c, nil when the node
// has none.
func fetchTx(ctx context.Context, c *chainclient.Client, sig solana.Signature) (*landed, error) {
	raw, err := c.GetTransaction(ctx, sig, chainclient.TransactionOptions{Commitment: chainclient.Confirmed, Encoding: "base64"})
	if err != nil || raw == nil {
		return nil, err
	}
	var v rpcTransaction
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("getTransaction %s: %w", sig, err)
	}
	if len(v.Transaction) == 0 {
		return nil, fmt.Errorf("getTransaction %s: no transaction in the answer", sig)
	}
	b, err := base64.StdEncoding.DecodeString(v.Transaction[0])
	if err != nil {
		return nil, fmt.Errorf("getTransaction %s: %w", sig, err)
	}
	tx, err := txwire.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("getTransaction %s: %w", sig, err)
	}
	l := &landed{raw: v, tx: tx, keys: append([]solana.PublicKey(nil), tx.Message.AccountKeys...)}
	if v.Meta != nil && v.Meta.LoadedAddresses != nil {
		l.keys = append(l.keys, v.Meta.LoadedAddresses.Writable...)
		l.keys = append(l.keys, v.Meta.LoadedAddresses.Readonly...)
	}
	return l, nil
}

// failed reports whether the transaction failed.
func (l *landed) failed() bool {
	return l.raw.Meta != nil && len(l.raw.Meta.Err) > 0 && string(l.raw.Meta.Err) != "null"
}

// instructions returns the top-level instructions with their keys (those
// whose accounts resolve).
func (l *landed) instructions() []txwire.Instruction {
	m := &l.tx.Message
	out := make([]txwire.Instruction, 0, len(m.Instructions))
	for _, ci := range m.Instructions {
		if int(ci.ProgramIDIndex) >= len(l.keys) {
			continue
		}
		ix := txwire.Instruction{ProgramID: l.keys[ci.ProgramIDIndex], Data: ci.Data}
		ok := true
		for _, a := range ci.Accounts {
			if int(a) >= len(l.keys) {
				ok = false
				break
			}
			ix.Accounts = append(ix.Accounts, txwire.AccountMeta{PublicKey: l.keys[a]})
		}
		if ok {
			out = append(out, ix)
		}
	}
	return out
}

// tokenDelta returns how much key's token balance rose in the
// transaction (0 when it did not, or the node does not show it).
func (l *landed) tokenDelta(key solana.PublicKey) uint64 {
	if l.raw.Meta == nil {
		return 0
	}
	var pre, post uint64
	for _, tb := range l.raw.Meta.PreTokenBalances {
		if tb.Index < len(l.keys) && l.keys[tb.Index] == key {
			pre, _ = strconv.ParseUint(tb.UI.Amount, 10, 64)
		}
	}
	for _, tb := range l.raw.Meta.PostTokenBalances {
		if tb.Index < len(l.keys) && l.keys[tb.Index] == key {
			post, _ = strconv.ParseUint(tb.UI.Amount, 10, 64)
		}
	}
	if post > pre {
		return post - pre
	}
	return 0
}

// metaBalances answers txerror.FundsHint from the transaction's
// pre-balances: what the accounts held when it ran.
type metaBalances struct{ l *landed }

func (m metaBalances) index(key solana.PublicKey) int {
	for i, k := range m.l.keys {
		if k == key {
			return i
		}
	}
	return -1
}

func (m metaBalances) Lamports(_ context.Context, key solana.PublicKey) (uint64, bool) {
	i := m.index(key)
	if i < 0 || m.l.raw.Meta == nil || i >= len(m.l.raw.Meta.PreBalances) {
		return 0, false
	}
	return m.l.raw.Meta.PreBalances[i], true
}

func (m metaBalances) Token(_ context.Context, key solana.PublicKey) (uint64, uint8, bool, bool) {
	i := m.index(key)
	if i < 0 || m.l.raw.Meta == nil {
		return 0, 0, false, false
	}
	for _, tb := range m.l.raw.Meta.PreTokenBalances {
		if tb.Index == i {
			n, err := strconv.ParseUint(tb.UI.Amount, 10, 64)
			return n, tb.UI.Decimals, true, err == nil
		}
	}
	// Not listed: not a token account before the transaction, or one the
	// node hides (a private rollup balance). Either way, unknown here.
	return 0, 0, false, false
}

// txView answers GET /explorer/api/tx?signature=S[&layer=base|ephemeral].
// Without a layer both nodes are asked, base first.
func (e *Explorer) txView(ctx context.Context, q url.Values) (any, error) {
	sig, err := parseSignature(q.Get("signature"))
	if err != nil {
		return nil, err
	}
	layer, err := parseLayer(q.Get("layer"))
	if err != nil {
		return nil, err
	}
	layers := []string{LayerBase, LayerEphemeral}
	if layer != "" {
		layers = []string{layer}
	}
	for _, ly := range layers {
		c := e.client(ly)
		sts, err := c.GetSignatureStatuses(ctx, []solana.Signature{sig}, true)
		if err != nil {
			return nil, chainError(ly, err)
		}
		if len(sts) == 0 || sts[0] == nil {
			continue
		}
		l, err := fetchTx(ctx, c, sig)
		if err != nil {
			return nil, chainError(ly, err)
		}
		if l == nil {
			// Processed but not confirmed yet: the node shows no details
			// before confirmation (getTransaction needs confirmed).
			return nil, apierr.Newf(http.StatusNotFound, CodeNotFound,
				"transaction %s is processed on the %s layer but not confirmed yet; its details appear once it is", sig, ly)
		}
		return e.describeTx(ctx, ly, sig, sts[0], l), nil
	}
	where := "either layer"
	if layer != "" {
		where = "the " + layer + " layer"
	}
	return nil, apierr.Newf(http.StatusNotFound, CodeNotFound, "no transaction %s on %s", sig, where)
}

// describeTx builds the view of a landed transaction.
func (e *Explorer) describeTx(ctx context.Context, layer string, sig solana.Signature, st *chainclient.SignatureStatus, l *landed) *TxView {
	v := &TxView{
		Signature: sig.String(), Layer: layer, Slot: l.raw.Slot, BlockTime: l.raw.BlockTime, Status: "success",
		Commitment: string(st.ConfirmationStatus), Confirmations: st.Confirmations, Version: l.tx.Message.Version.String(),
		Logs: []string{}, Balances: []BalanceChange{}, TokenBalances: []TokenChange{},
	}
	v.Explanation = inspect.New().Describe(l.tx)
	if op := outcome.Detect(l.tx, layer); op.Kind != outcome.KindTransaction {
		v.Operation = &op
	}
	meta := l.raw.Meta
	if meta == nil {
		return v
	}
	v.Fee, v.ComputeUnits = meta.Fee, meta.ComputeUnits
	logs := meta.LogMessages
	if len(logs) > e.opts.MaxLogLines {
		v.LogsOmitted = len(logs) - e.opts.MaxLogLines
		logs = logs[:e.opts.MaxLogLines]
	}
	v.Logs = append(v.Logs, logs...)
	for i, k := range l.keys {
		if i >= len(meta.PreBalances) || i >= len(meta.PostBalances) {
			break
		}
		pre, post := meta.PreBalances[i], meta.PostBalances[i]
		if pre == post {
			continue
		}
		v.Balances = append(v.Balances, BalanceChange{Account: k.String(), Pre: pre, Post: post, Delta: signedDelta(pre, post)})
	}
	v.TokenBalances = tokenChanges(l)
	if l.failed() {
		programs := make([]solana.PublicKey, len(l.tx.Message.Instructions))
		for i, ci := range l.tx.Message.Instructions {
			if int(ci.ProgramIDIndex) < len(l.keys) {
				programs[i] = l.keys[ci.ProgramIDIndex]
			}
		}
		ev := &ErrorView{Raw: meta.Err, Text: string(meta.Err)}
		if ex, ok := txerror.Explain(meta.Err, programs); ok {
			ev.Explained, ev.Text = ex, ex.Text()
			ev.Hint = txerror.FundsHint(ctx, ex, l.tx, metaBalances{l})
		}
		v.Status, v.Error = "failed", ev
	}
	return v
}

// tokenChanges pairs the pre and post token balances by account.
func tokenChanges(l *landed) []TokenChange {
	out := []TokenChange{}
	meta := l.raw.Meta
	type entry struct {
		tb        rpcTokenBal
		pre, post uint64
	}
	byIndex := map[int]*entry{}
	var order []int
	add := func(tb rpcTokenBal, post bool) {
		en := byIndex[tb.Index]
		if en == nil {
			en = &entry{tb: tb}
			byIndex[tb.Index] = en
			order = append(order, tb.Index)
		}
		n, _ := strconv.ParseUint(tb.UI.Amount, 10, 64)
		if post {
			en.post = n
		} else {
			en.pre = n
		}
	}
	for _, tb := range meta.PreTokenBalances {
		add(tb, false)
	}
	for _, tb := range meta.PostTokenBalances {
		add(tb, true)
	}
	for _, i := range order {
		en := byIndex[i]
		if en.pre == en.post {
			continue
		}
		acct := ""
		if i >= 0 && i < len(l.keys) {
			acct = l.keys[i].String()
		}
		out = append(out, TokenChange{Account: acct, Owner: en.tb.Owner, Mint: en.tb.Mint, Decimals: en.tb.UI.Decimals,
			Pre: strconv.FormatUint(en.pre, 10), Post: strconv.FormatUint(en.post, 10), Delta: signedDelta(en.pre, en.post)})
	}
	return out
}

// signedDelta is post - pre as a signed decimal string (no overflow).
func signedDelta(pre, post uint64) string {
	if post >= pre {
		return "+" + strconv.FormatUint(post-pre, 10)
	}
	return "-" + strconv.FormatUint(pre-post, 10)
}
