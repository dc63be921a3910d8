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
}

// BindRequest adds flags for every field of t except those named in skip
// (JSON names, e.g. "cluster", which comes from the global flag).
func BindRequest(cmd *cobra.Command, t *schema.Type, skip ...string) *RequestFlags {
	rf := &RequestFlags{cmd: cmd, t: t, fields: map[string]*schema.Field{}}
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
			def, _ := strconv.ParseInt(f.Default, 10, 64)
			fl.Int64(name, def, usage)
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

// Body returns the JSON object of the flags the user set, plus extra values
// (which flags override). Unset flags are omitted so server-side defaults
// apply, exactly as for an HTTP client that leaves a field out.
func (rf *RequestFlags) Body(extra map[string]any) map[string]any {
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
			v, _ := fl.GetInt64(name)
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
			body[f.JSON] = keypairAddress(f, v)
		}
	}
	return body
}

// Decode validates the set flags (plus extra) into dst with the same rules
// and messages as the HTTP API.
func (rf *RequestFlags) Decode(extra map[string]any, dst any) error {
	return schema.DecodeValue(rf.Body(extra), dst)
}

// takesAddress reports whether a field names a wallet or account: a
// public key, or a transfer's recipient ("to", a wallet or a stealth
// handle).
func takesAddress(f *schema.Field) bool { return f.Pubkey || f.JSON == "to" }

// keypairAddress lets an address flag name a Solana CLI keypair file
// instead, as the Solana CLI's address arguments do: a value that is not
// a base58 key but the path of a readable keypair file becomes that
// keypair's address. Anything else is returned as given, for the
// request's validation to judge.
func keypairAddress(f *schema.Field, v string) string {
	if !takesAddress(f) || v == "" {
		return v
	}
	if _, err := inputlimit.PublicKey(v); err == nil { // length-checked before decoding
		return v
	}
	if st, err := os.Stat(v); err != nil || !st.Mode().IsRegular() {
		return v
	}
	k, err := ReadKeypairFile(v)
	if err != nil {
		return v
	}
	return PublicKeyOf(k).String()
}
