package cmdutil

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/ferry-sh/ferry/pkg/inputlimit"
	"github.com/ferry-sh/ferry/pkg/schema"
)

// Kebab turns a JSON field name into its flag name: fromBalance →
// from-balance, clientRefId → client-ref-id.
func Kebab(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('-')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// RequestFlags binds one flag per field of a request type, named after its
// JSON field in kebab-case and documented from its doc tag, so the CLI
// accepts exactly what the HTTP API accepts.
type RequestFlags struct {
	cmd    *cobra.Command
	t      *schema.Type
	fields map[string]*schema.Field // flag name -> field
	ints   map[string]*strictInt    // integer flags by flag name

	// ui and mintDecimals are --ui and --mint-decimals (AddUIAmount).
	ui           bool
	mintDecimals int
}

// BindRequest adds flags for every field of t except those named in skip
// (JSON names, e.g. "cluster", which comes from the global flag).
func BindRequest(cmd *cobra.Command, t *schema.Type, skip ...string) *RequestFlags {
	rf := &RequestFlags{cmd: cmd, t: t, fields: map[string]*schema.Field{}, ints: map[string]*strictInt{}}
	skipped := map[string]bool{}
	for _, s := range skip {
		skipped[s] = true
	}
	fl := cmd.Flags()
	for _, f := range t.Fields {
		if skipped[f.JSON] {
			continue
		}
		name := Kebab(f.JSON)
		usage := f.Doc
		if takesAddress(f) {
			usage += " A keypair file names its address."
		}
		if f.Required {
			usage += " (required)"
		}
		if len(f.Enum) > 0 {
			usage += " [" + strings.Join(f.Enum, "|") + "]"
		}
		switch f.Kind {
		case schema.Boolean:
			def, _ := strconv.ParseBool(f.Default)
			fl.Bool(name, def, usage)
		case schema.Integer:
			v := &strictInt{def: f.Default}
			if v.def == "" {
				v.def = "0"
			}
			fl.Var(v, name, usage)
			rf.ints[name] = v
		case schema.Array:
			fl.StringSlice(name, nil, usage)
		default:
			fl.String(name, f.Default, usage)
		}
		if len(f.Enum) > 0 {
			enum := f.Enum
			_ = cmd.RegisterFlagCompletionFunc(name, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
				return enum, cobra.ShellCompDirectiveNoFileComp
			})
		}
		rf.fields[name] = f
	}
	return rf
}

// has reports whether the request type has a field with JSON name
// jsonName.
func (rf *RequestFlags) has(jsonName string) bool {
	_, ok := rf.fields[Kebab(jsonName)]
	return ok
}

// Changed reports whether the flag for JSON field name was set.
func (rf *RequestFlags) Changed(jsonName string) bool {
	return rf.cmd.Flags().Changed(Kebab(jsonName))
}

// AddUIAmount adds --ui and --mint-decimals to a command whose request has
// an amount: with --ui, --amount is a token amount ("1.5", as spl-token
// takes it) converted with the mint's decimals, which are read from the
// chain, or given with --mint-decimals for offline builds.
func (rf *RequestFlags) AddUIAmount() {
	fl := rf.cmd.Flags()
	fl.BoolVar(&rf.ui, "ui", false, "read --amount in tokens (e.g. 1.5), not base units, converted with the mint's decimals")
	fl.IntVar(&rf.mintDecimals, "mint-decimals", -1, "with --ui: the mint's decimals, instead of reading the mint (offline builds)")
}

// UI reports whether --ui was given.
func (rf *RequestFlags) UI() bool { return rf.ui }

// uiAmount is the raw --amount of a --ui build until the mint's decimals
// are known.
type uiAmount string

// Body returns the JSON object of the flags the user set, plus extra values
// (which flags override). Unset flags are omitted so server-side defaults
// apply, exactly as for an HTTP client that leaves a field out. A
// malformed integer flag is a usage error naming it.
func (rf *RequestFlags) Body(extra map[string]any) (map[string]any, error) {
	body := map[string]any{}
	for k, v := range extra {
		body[k] = v
	}
	fl := rf.cmd.Flags()
	for name, f := range rf.fields {
		if !fl.Changed(name) {
			continue
		}
		switch f.Kind {
		case schema.Boolean:
			v, _ := fl.GetBool(name)
			body[f.JSON] = v
		case schema.Integer:
			raw := rf.ints[name].raw
			if rf.ui && f.JSON == "amount" {
				body[f.JSON] = uiAmount(raw)
				continue
			}
			v, err := ParseFlagInt(name, raw)
			if err != nil {
				return nil, err
			}
			body[f.JSON] = json.Number(strconv.FormatInt(v, 10))
		case schema.Array:
			v, _ := fl.GetStringSlice(name)
			arr := make([]any, len(v))
			for i, s := range v {
				arr[i] = s
			}
			body[f.JSON] = arr
		default:
			v, _ := fl.GetString(name)
			a, err := keypairAddress(f, name, v)
			if err != nil {
				return nil, err
			}
			body[f.JSON] = a
		}
	}
	return body, nil
}

// Decode validates the set flags (plus extra) into dst with the same rules
// and messages as the HTTP API. decimals supplies the mint's decimals for
// a --ui amount (called only then, with the body's mint).
func (rf *RequestFlags) Decode(extra map[string]any, dst any, decimals func(mint string) (uint8, error)) error {
	body, err := rf.Body(extra)
	if err != nil {
		return err
	}
	if raw, ok := body["amount"].(uiAmount); ok {
		d, err := rf.decimalsFor(body, decimals)
		if err != nil {
			return err
		}
		v, err := ParseUIAmount(string(raw), d)
		if err == nil && v > 1<<63-1 {
			err = errTooLarge
		}
		if err != nil {
			return flagAmountError("amount", string(raw), err)
		}
		body["amount"] = json.Number(strconv.FormatUint(v, 10))
	}
	return schema.DecodeValue(body, dst)
}

func (rf *RequestFlags) decimalsFor(body map[string]any, decimals func(string) (uint8, error)) (uint8, error) {
	if rf.cmd.Flags().Changed("mint-decimals") {
		if rf.mintDecimals < 0 || rf.mintDecimals > MaxMintDecimals {
			return 0, UsageErrorf("--mint-decimals must be 0..%d (got %d)", MaxMintDecimals, rf.mintDecimals)
		}
		return uint8(rf.mintDecimals), nil
	}
	mint, _ := body["mint"].(string)
	if decimals == nil {
		return 0, UsageErrorf("--ui needs the mint's decimals: pass --mint-decimals N (offline builds cannot read the mint)")
	}
	return decimals(mint)
}

// takesAddress reports whether a field names a wallet or account: a
// public key, or a transfer's recipient ("to", a wallet or a stealth
// handle).
func takesAddress(f *schema.Field) bool { return f.Pubkey || f.JSON == "to" }

// keypairAddress lets an address flag name a Solana CLI keypair file
// instead, as the Solana CLI's address arguments do: a value that is not
// a base58 key but the path of a keypair file becomes that keypair's
// address. A file that exists but is not a readable keypair, and a value
// that can only be a path (it has a path separator or ends in .json)
// naming no file, are errors that say so; anything else is returned as
// given, for the request's validation to judge (a stealth handle for
// --to, or an "Invalid public key").
func keypairAddress(f *schema.Field, flag, v string) (string, error) {
	if !takesAddress(f) || v == "" {
		return v, nil
	}
	if _, err := inputlimit.PublicKey(v); err == nil { // length-checked before decoding
		return v, nil
	}
	st, err := os.Stat(v)
	if err != nil {
		if LooksLikePath(v) {
			what := "an address or a keypair file"
			if f.JSON == "to" {
				what = "an address, a keypair file or a stealth handle"
			}
			return "", InputErrorf("--%s: %q is not %s: %s", flag, v, what, KeyfileProblem(err))
		}
		return v, nil
	}
	if !st.Mode().IsRegular() {
		return "", InputErrorf("--%s: %s is not a keypair file (it is a directory or device)", flag, v)
	}
	k, err := ReadKeypairFile(v)
	if err != nil {
		return "", InputErrorf("--%s: %v", flag, err)
	}
	return PublicKeyOf(k).String(), nil
}

// LooksLikePath reports whether s can only be meant as a file name: it
// has a path separator or a .json extension (a base58 address and a
// stealth handle typed by hand have neither).
func LooksLikePath(s string) bool {
	return strings.ContainsAny(s, `/\`) || strings.HasSuffix(strings.ToLower(s), ".json")
}
