package rpcserver

import (
	"context"
	"errors"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/inputlimit"
	"github.com/ferry-sh/ferry/pkg/ledger"
)

// This file exports the encodings and parameter checks that other
// JSON-RPC front ends of a ledger (pkg/pubsub) share with the HTTP
// methods, so both answer alike.

// CommitmentLevel parses a "commitment" parameter (nil: finalized, the
// Agave default), with Agave's -32602 for an unknown level.
func CommitmentLevel(c *string) (ledger.Commitment, error) {
	return commitmentConfig{Commitment: c}.level()
}

// AccountEncoding checks an account "encoding" parameter (nil: binary,
// a bare base58 string) with Agave's -32602 message.
func AccountEncoding(enc *string) (string, error) {
	return accountConfig{Encoding: enc}.encoding()
}

// EncodeAccount renders an account as getAccountInfo does in encoding
// (checked by AccountEncoding); mintOf reads mints for jsonParsed token
// accounts. Binary and base58 data over 128 bytes is an error
// (IsBase58TooLarge).
func EncodeAccount(a *ledger.Account, encoding string, mintOf func(solana.PublicKey) *ledger.Account) (*UIAccount, error) {
	return encodeAccount(a, encoding, nil, mintOf)
}

// IsBase58TooLarge reports EncodeAccount's error for data too large to
// show in base58.
func IsBase58TooLarge(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == CodeInvalidRequest
}

// JSONKind names the JSON type of a raw value as serde's errors do
// ("string", "map", "sequence", ...), for "invalid type" messages.
func JSONKind(b []byte) string { return jsonKind(b) }

// TransactionEncoding checks a transaction "encoding" parameter of
// getBlock and blockSubscribe (nil: json).
func TransactionEncoding(enc *string) (string, error) { return checkTxEncoding(enc) }

// TransactionDetails checks a "transactionDetails" parameter (nil: full).
func TransactionDetails(d *string) (string, error) {
	if d == nil {
		return "full", nil
	}
	switch *d {
	case "full", "signatures", "none", "accounts":
		return *d, nil
	}
	return "", InvalidParams("unknown variant `%s`, expected one of `full`, `signatures`, `none`, `accounts`", inputlimit.Truncate(*d, inputlimit.MaxEcho))
}

// BlockOptions choose how RenderBlock shows a block: getBlock's and
// blockSubscribe's options, already checked.
type BlockOptions struct {
	// Encoding of the transactions (TransactionEncoding).
	Encoding string
	// Details is full, signatures, none or accounts (TransactionDetails).
	Details string
	// Rewards adds the (always empty) rewards list.
	Rewards bool
	// MaxVersion is maxSupportedTransactionVersion; nil refuses v0
	// transactions with -32015.
	MaxVersion *uint8
}

// RenderBlock renders a block in getBlock's shape. It fails with -32015
// (CodeUnsupportedTxVersion) for a v0 transaction MaxVersion does not
// allow.
func RenderBlock(info *ledger.BlockInfo, txs []*ledger.TxRecord, o BlockOptions) (map[string]any, error) {
	return renderBlock(info, txs, o, nil)
}

// RenderBlockFor is RenderBlock as getBlock shows it to the caller of
// ctx when f filters reads: pre- and postTokenBalances of accounts f hides
// from that caller are left out. A nil f is RenderBlock.
func RenderBlockFor(ctx context.Context, f ReadFilter, info *ledger.BlockInfo, txs []*ledger.TxRecord, o BlockOptions) (map[string]any, error) {
	if f == nil {
		return renderBlock(info, txs, o, nil)
	}
	return renderBlock(info, txs, o, func(r *ledger.TxRecord, t *uiTxWithMeta) { f.hideMeta(ctx, r, t) })
}

// renderBlock is RenderBlock with hide, if set, applied to each
// transaction's metadata (getBlock hides private token balances).
func renderBlock(info *ledger.BlockInfo, txs []*ledger.TxRecord, o BlockOptions, hide func(*ledger.TxRecord, *uiTxWithMeta)) (map[string]any, error) {
	out := map[string]any{
		"blockhash": info.Blockhash, "previousBlockhash": info.PreviousBlockhash, "parentSlot": info.ParentSlot,
		"blockTime": info.Time, "blockHeight": info.Height,
	}
	if o.Rewards {
		out["rewards"] = []any{}
	}
	switch o.Details {
	case "signatures":
		out["signatures"] = info.Signatures
	case "full", "accounts":
		list := make([]any, len(txs))
		for i, r := range txs {
			t, err := txWithMetaUI(r, o.Encoding, o.MaxVersion, false)
			if err != nil {
				return nil, err
			}
			if hide != nil {
				hide(r, t)
			}
			if o.Details == "accounts" {
				list[i] = accountsOnly(t, r)
			} else {
				list[i] = t
			}
		}
		out["transactions"] = list
	}
	return out, nil
}
