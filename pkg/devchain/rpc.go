package devchain

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/ferry-sh/ferry/pkg/inputlimit"
	"github.com/ferry-sh/ferry/pkg/ledger"
)

// JSON-RPC method names. surfnet_* are surfpool's (same parameters and
// results); each has a ferry_* alias. The ferry_* methods without a
// surfnet_* name are ferry's own.
const (
	MethodSetAccount             = "surfnet_setAccount"
	MethodSetTokenAccount        = "surfnet_setTokenAccount"
	MethodResetAccount           = "surfnet_resetAccount"
	MethodProfileTransaction     = "surfnet_profileTransaction"
	MethodGetTransactionProfile  = "surfnet_getTransactionProfile"
	MethodGetProfileResultsByTag = "surfnet_getProfileResultsByTag"
	MethodExportSnapshot         = "surfnet_exportSnapshot"
	FerrySetAccount              = "ferry_setAccount"
	FerrySetTokenAccount         = "ferry_setTokenAccount"
	FerryResetAccount            = "ferry_resetAccount"
	FerryProfileTransaction      = "ferry_profileTransaction"
	FerryGetTransactionProfile   = "ferry_getTransactionProfile"
	FerryGetProfileResultsByTag  = "ferry_getProfileResultsByTag"
	FerryExportSnapshot          = "ferry_exportSnapshot"
	MethodSetMint                = "ferry_setMint"
	MethodImportSnapshot         = "ferry_importSnapshot"
	MethodHaltLedger             = "ferry_haltLedger"
	MethodAdvanceSlot            = "ferry_advanceSlot"
	MethodCommitAccount          = "ferry_commitAccount"
	MethodUndelegateAccount      = "ferry_undelegateAccount"
	MethodCrankQueue             = "ferry_crankQueue"
	MethodGetQueue               = "ferry_getQueue"
)

// Params are a request's positional parameters as the chain node's
// handler decodes them (rpcserver.Params implements it, with Agave's
// messages for a wrong count or type).
type Params interface {
	// Count checks the number of parameters.
	Count(minN, maxN int) error
	// Decode unmarshals parameter i into v.
	Decode(i int, v any) error
	// Has reports whether parameter i is present and not null.
	Has(i int) bool
}

// Result is a method's answer. With Context set the handler answers
// {"context":{"slot":Slot,"apiVersion"},"value":Value}, as surfpool's
// RpcResponse methods do; otherwise Value alone.
type Result struct {
	Context bool
	Slot    uint64
	Value   any
}

// Method is one cheatcode as a JSON-RPC method.
type Method struct {
	// Names are the method's names: the first is surfpool's (or ferry's
	// own), the rest aliases.
	Names []string
	Call  func(ctx context.Context, p Params) (Result, error)
}

// Methods are the node's state cheatcodes and clock controls as JSON-RPC
// methods.
func (n *Node) Methods() []Method {
	return append([]Method{
		{Names: []string{MethodSetAccount, FerrySetAccount}, Call: n.rpcSetAccount},
		{Names: []string{MethodSetTokenAccount, FerrySetTokenAccount}, Call: n.rpcSetTokenAccount},
		{Names: []string{MethodSetMint}, Call: n.rpcSetMint},
		{Names: []string{MethodResetAccount, FerryResetAccount}, Call: n.rpcResetAccount},
		{Names: []string{MethodProfileTransaction, FerryProfileTransaction}, Call: n.rpcProfile},
		{Names: []string{MethodGetTransactionProfile, FerryGetTransactionProfile}, Call: n.rpcGetProfile},
		{Names: []string{MethodGetProfileResultsByTag, FerryGetProfileResultsByTag}, Call: n.rpcProfilesByTag},
		{Names: []string{MethodExportSnapshot, FerryExportSnapshot}, Call: n.rpcExport},
		{Names: []string{MethodImportSnapshot}, Call: n.rpcImport},
		{Names: []string{MethodHaltLedger}, Call: n.rpcHalt},
		{Names: []string{MethodAdvanceSlot}, Call: n.rpcAdvanceSlot},
	}, n.clockMethods()...)
}

// Methods are the rollup controls as JSON-RPC methods (the ephemeral
// node's).
func (r *Rollup) Methods() []Method {
	account := func(do func(context.Context, AccountRequest) (*RollupResult, error)) func(context.Context, Params) (Result, error) {
		return func(ctx context.Context, p Params) (Result, error) {
			if err := p.Count(1, 2); err != nil {
				return Result{}, err
			}
			var req AccountRequest
			if err := p.Decode(0, &req.Account); err != nil {
				return Result{}, err
			}
			var cfg struct {
				Mint string `json:"mint"`
			}
			if err := decodeConfig(p, 1, &cfg); err != nil {
				return Result{}, err
			}
			req.Mint = cfg.Mint
			out, err := do(ctx, req)
			return Result{Value: out}, err
		}
	}
	return []Method{
		{Names: []string{MethodCommitAccount}, Call: account(r.Commit)},
		{Names: []string{MethodUndelegateAccount}, Call: account(r.Undelegate)},
		{Names: []string{MethodCrankQueue}, Call: func(ctx context.Context, p Params) (Result, error) {
			var req CrankRequest
			if err := countConfig(p, &req); err != nil {
				return Result{}, err
			}
			out, err := r.Crank(ctx, req)
			return Result{Value: out}, err
		}},
		{Names: []string{MethodGetQueue}, Call: func(ctx context.Context, p Params) (Result, error) {
			var req QueueRequest
			if err := countConfig(p, &req); err != nil {
				return Result{}, err
			}
			out, err := r.Queue(ctx, req)
			return Result{Value: out}, err
		}},
	}
}

// countConfig decodes methods that take one optional config object.
func countConfig(p Params, v any) error {
	if err := p.Count(0, 1); err != nil {
		return err
	}
	return decodeConfig(p, 0, v)
}

func written(res *WriteResult, err error) (Result, error) {
	if err != nil {
		return Result{}, err
	}
	return Result{Context: true, Slot: res.Slot}, nil
}

// rpcSetAccount: [pubkey, AccountUpdate].
func (n *Node) rpcSetAccount(ctx context.Context, p Params) (Result, error) {
	if err := p.Count(2, 2); err != nil {
		return Result{}, err
	}
	var req SetAccountRequest
	if err := p.Decode(0, &req.Address); err != nil {
		return Result{}, err
	}
	if err := decodeObject(p, 1, &req.AccountUpdate); err != nil {
		return Result{}, err
	}
	return written(n.SetAccount(ctx, req))
}

// rpcSetTokenAccount: [owner, mint, TokenAccountUpdate, tokenProgram?].
func (n *Node) rpcSetTokenAccount(ctx context.Context, p Params) (Result, error) {
	if err := p.Count(3, 4); err != nil {
		return Result{}, err
	}
	var req SetTokenAccountRequest
	if err := p.Decode(0, &req.Owner); err != nil {
		return Result{}, err
	}
	if err := p.Decode(1, &req.Mint); err != nil {
		return Result{}, err
	}
	if err := decodeObject(p, 2, &req.TokenAccountUpdate); err != nil {
		return Result{}, err
	}
	if p.Has(3) {
		if err := p.Decode(3, &req.TokenProgram); err != nil {
			return Result{}, err
		}
		if req.TokenProgram == "" {
			return Result{}, invalid("Invalid pubkey ''")
		}
	}
	return written(n.SetTokenAccount(ctx, req))
}

// rpcSetMint: [mint, {supply, decimals, mintAuthority, freezeAuthority,
// tokenProgram}].
func (n *Node) rpcSetMint(ctx context.Context, p Params) (Result, error) {
	if err := p.Count(2, 2); err != nil {
		return Result{}, err
	}
	var req SetMintRequest
	if err := p.Decode(0, &req.Mint); err != nil {
		return Result{}, err
	}
	var upd struct {
		Supply          *uint64 `json:"supply"`
		Decimals        *uint32 `json:"decimals"`
		MintAuthority   *string `json:"mintAuthority"`
		FreezeAuthority *string `json:"freezeAuthority"`
		TokenProgram    string  `json:"tokenProgram"`
	}
	if err := decodeObject(p, 1, &upd); err != nil {
		return Result{}, err
	}
	req.Supply, req.Decimals, req.MintAuthority, req.FreezeAuthority, req.TokenProgram =
		upd.Supply, upd.Decimals, upd.MintAuthority, upd.FreezeAuthority, upd.TokenProgram
	return written(n.SetMint(ctx, req))
}

// rpcResetAccount: [pubkey, {includeOwnedAccounts}?] ("recursive" is the
// older surfpool name of the option).
func (n *Node) rpcResetAccount(ctx context.Context, p Params) (Result, error) {
	if err := p.Count(1, 2); err != nil {
		return Result{}, err
	}
	var req ResetAccountRequest
	if err := p.Decode(0, &req.Address); err != nil {
		return Result{}, err
	}
	var cfg struct {
		IncludeOwnedAccounts *bool `json:"includeOwnedAccounts"`
		Recursive            *bool `json:"recursive"`
	}
	if err := decodeConfig(p, 1, &cfg); err != nil {
		return Result{}, err
	}
	req.IncludeOwnedAccounts = (cfg.IncludeOwnedAccounts != nil && *cfg.IncludeOwnedAccounts) || (cfg.Recursive != nil && *cfg.Recursive)
	return written(n.ResetAccount(ctx, req))
}

// rpcProfile: [base64 transaction, tag?, {encoding, depth}?].
func (n *Node) rpcProfile(ctx context.Context, p Params) (Result, error) {
	if err := p.Count(1, 3); err != nil {
		return Result{}, err
	}
	var req ProfileRequest
	if err := p.Decode(0, &req.Transaction); err != nil {
		return Result{}, err
	}
	if p.Has(1) {
		if err := p.Decode(1, &req.Tag); err != nil {
			return Result{}, err
		}
	}
	if err := decodeConfig(p, 2, &req.ProfileConfig); err != nil {
		return Result{}, err
	}
	out, err := n.ProfileTransaction(ctx, req)
	if err != nil {
		return Result{}, err
	}
	return Result{Context: true, Slot: out.Slot, Value: out}, nil
}

// rpcGetProfile: [key, {encoding, depth}?].
func (n *Node) rpcGetProfile(_ context.Context, p Params) (Result, error) {
	if err := p.Count(1, 2); err != nil {
		return Result{}, err
	}
	var req GetProfileRequest
	if err := p.Decode(0, &req.Key); err != nil {
		return Result{}, err
	}
	if err := decodeConfig(p, 1, &req.ProfileConfig); err != nil {
		return Result{}, err
	}
	out, slot, err := n.TransactionProfile(req)
	if err != nil {
		return Result{}, err
	}
	if out == nil {
		return Result{Context: true, Slot: slot}, nil
	}
	return Result{Context: true, Slot: slot, Value: out}, nil
}

// rpcProfilesByTag: [tag, {encoding, depth}?].
func (n *Node) rpcProfilesByTag(_ context.Context, p Params) (Result, error) {
	if err := p.Count(1, 2); err != nil {
		return Result{}, err
	}
	var req ProfilesByTagRequest
	if err := p.Decode(0, &req.Tag); err != nil {
		return Result{}, err
	}
	if err := decodeConfig(p, 1, &req.ProfileConfig); err != nil {
		return Result{}, err
	}
	out, err := n.ProfilesByTag(req)
	if err != nil {
		return Result{}, err
	}
	res := Result{Context: true, Slot: n.l.Slot(ledger.Processed)}
	if out != nil {
		res.Value = out
	}
	return res, nil
}

// exportConfig is surfpool's ExportSnapshotConfig.
type exportConfig struct {
	IncludeParsedAccounts *bool `json:"includeParsedAccounts"`
	Filter                *struct {
		IncludeProgramAccounts *bool    `json:"includeProgramAccounts"`
		IncludeAccounts        []string `json:"includeAccounts"`
		ExcludeAccounts        []string `json:"excludeAccounts"`
		ExcludeSysvars         *bool    `json:"excludeSysvars"`
		// ExcludeFeatureGates is accepted: ferry's ledgers have no
		// feature-gate accounts.
		ExcludeFeatureGates *bool `json:"excludeFeatureGates"`
	} `json:"filter"`
	Scope json.RawMessage `json:"scope"`
}

// rpcExport: [ExportSnapshotConfig?].
func (n *Node) rpcExport(ctx context.Context, p Params) (Result, error) {
	var cfg exportConfig
	if err := countConfig(p, &cfg); err != nil {
		return Result{}, err
	}
	req := ExportRequest{IncludeParsedAccounts: isTrue(cfg.IncludeParsedAccounts)}
	if f := cfg.Filter; f != nil {
		req.IncludeProgramAccounts, req.ExcludeSysvars = isTrue(f.IncludeProgramAccounts), isTrue(f.ExcludeSysvars)
		req.Accounts, req.ExcludeAccounts = f.IncludeAccounts, f.ExcludeAccounts
	}
	if s := bytes.TrimSpace(cfg.Scope); len(s) > 0 && !bytes.Equal(s, []byte("null")) {
		var name string
		var pre struct {
			PreTransaction *string `json:"preTransaction"`
		}
		switch {
		case json.Unmarshal(s, &name) == nil && name == "network":
		case decodeStrict(s, &pre) == nil && pre.PreTransaction != nil:
			req.PreTransaction = *pre.PreTransaction
		default:
			return Result{}, invalid("Invalid params: unknown variant of scope %s, expected `network` or {\"preTransaction\": TRANSACTION}", inputlimit.Truncate(string(s), inputlimit.MaxEcho))
		}
	}
	out, err := n.ExportSnapshot(ctx, req)
	if err != nil {
		return Result{}, err
	}
	return Result{Context: true, Slot: out.Slot, Value: out.Accounts}, nil
}

func isTrue(b *bool) bool { return b != nil && *b }

// rpcImport: [Snapshot].
func (n *Node) rpcImport(ctx context.Context, p Params) (Result, error) {
	if err := p.Count(1, 1); err != nil {
		return Result{}, err
	}
	var snap Snapshot
	if err := decodeObject(p, 0, &snap); err != nil {
		return Result{}, err
	}
	out, err := n.ImportSnapshot(ctx, snap)
	if err != nil {
		return Result{}, err
	}
	return Result{Context: true, Slot: out.Slot, Value: map[string]any{"accounts": out.Accounts, "skipped": out.Skipped}}, nil
}

// rpcHalt: [{reason}?] → {"halting": reason}.
func (n *Node) rpcHalt(ctx context.Context, p Params) (Result, error) {
	var req HaltRequest
	if err := countConfig(p, &req); err != nil {
		return Result{}, err
	}
	out, err := n.Halt(ctx, req)
	if err != nil {
		return Result{}, err
	}
	return Result{Value: out}, nil
}

// rpcAdvanceSlot: [{slots}?] → {"slot", "blockhash"}.
func (n *Node) rpcAdvanceSlot(ctx context.Context, p Params) (Result, error) {
	var req AdvanceSlotRequest
	if err := countConfig(p, &req); err != nil {
		return Result{}, err
	}
	out, err := n.AdvanceSlot(ctx, req)
	if err != nil {
		return Result{}, err
	}
	return Result{Value: out}, nil
}

// decodeConfig decodes optional config object i (absent or null leaves v
// alone), refusing unknown fields.
func decodeConfig(p Params, i int, v any) error {
	if !p.Has(i) {
		return nil
	}
	return decodeObject(p, i, v)
}

// decodeObject decodes object parameter i into v, refusing unknown fields
// and wrong types with serde's wording (surfpool's structs deserialize
// with serde).
func decodeObject(p Params, i int, v any) error {
	var raw json.RawMessage
	if err := p.Decode(i, &raw); err != nil {
		return err
	}
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '{' {
		return invalid("Invalid params: invalid type: %s, expected a map.", jsonKind(t))
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return serdeError(err, v)
	}
	return nil
}

// serdeError words a decoding error as serde does.
func serdeError(err error, v any) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return invalid("Invalid params: invalid type: %s, expected %s.", te.Value, rustType(te.Type))
	}
	if s, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return invalid("Invalid params: unknown field `%s`, expected one of %s.", strings.Trim(s, `"`), fieldList(v))
	}
	return invalid("Invalid params: %s.", strings.TrimPrefix(err.Error(), "json: "))
}

func rustType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Uint64:
		return "u64"
	case reflect.Uint32:
		return "u32"
	case reflect.Uint8:
		return "u8"
	case reflect.Bool:
		return "a boolean"
	case reflect.String:
		return "a string"
	case reflect.Slice:
		return "a sequence"
	case reflect.Map, reflect.Struct:
		return "a map"
	}
	return t.String()
}

// fieldList names the JSON fields of the struct v points to (embedded
// structs flattened), serde style: `a`, `b`.
func fieldList(v any) string {
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return "an address"
	}
	var names []string
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Anonymous && name == "" {
				walk(f.Type)
				continue
			}
			if name != "" && name != "-" {
				names = append(names, "`"+name+"`")
			}
		}
	}
	walk(t)
	return strings.Join(names, ", ")
}

func jsonKind(b []byte) string {
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '[':
		return "sequence"
	case '"':
		return fmt.Sprintf("string %s", inputlimit.Truncate(string(b), inputlimit.MaxEcho))
	case 't', 'f':
		return "boolean `" + string(b) + "`"
	case 'n':
		return "null"
	}
	return "integer `" + inputlimit.Truncate(string(b), inputlimit.MaxEcho) + "`"
}
