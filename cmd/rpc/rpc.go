// Package rpc implements `ferry rpc`: call any JSON-RPC method on the
// cluster's base chain, ephemeral rollup, router or any endpoint.
package rpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ferry-sh/ferry/cmd/cmdutil"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/iostreams"
)

type options struct {
	ephemeral bool
	router    bool
	endpoint  string
	authToken string
}

// NewCmd returns the rpc command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o options
	cmd := &cobra.Command{
		Use:   "rpc METHOD [PARAMS...]",
		Short: "Call a JSON-RPC method on a chain node or the router",
		Long: `Call any JSON-RPC method and print its result.

By default the call goes to the selected cluster's base-layer RPC (for the
default local cluster, the base chain of a running "ferry serve").
--ephemeral targets the cluster's ephemeral rollup, --router its MagicBlock
router, and --endpoint any URL.

Parameters are either one JSON array, used as the whole params list, or
positional values, each converted on its own:

  123, -1.5e3        JSON numbers (exact: u64 values are not rounded)
  true, false, null  JSON literals
  {...}, [...]       JSON objects and arrays
  "..."              a JSON string (quote numbers that must stay strings)
  anything else      a string (public keys, signatures, blockhashes)

So 'ferry rpc getBalance KEY {"commitment":"confirmed"}' sends
["KEY",{"commitment":"confirmed"}]. To pass a single array as the only
positional parameter, wrap it: '[["SIG"]]'. Put "--" before parameters
that start with "-" (negative numbers) so they are not read as flags.

Private (TEE) rollups want a bearer token as ?token= on every request.
--auth-token (or FERRY_AUTH_TOKEN) sends one to any target; with
--ephemeral and neither set, the token "ferry login" stored for the
keypair on this cluster is used when there is one. Tokens are never
printed, not even in error messages.

On a terminal the result is pretty-printed with colours. In a pipe, or with
--output json, the result is printed exactly, as compact JSON. A JSON-RPC
error is printed as one line on stderr, "error: RPC CODE: MESSAGE", and the
exit status is 1.`,
		Example: `  # Current slot of the local base chain
  ferry rpc getSlot

  # Positional parameters: a key and a config object
  ferry rpc getBalance 9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin '{"commitment":"confirmed"}'

  # The whole params array as one JSON argument
  ferry rpc getSignatureStatuses '[["5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW"], {"searchTransactionHistory": true}]'

  # The ephemeral rollup, the router, or any endpoint
  ferry rpc --ephemeral getIdentity
  ferry rpc --router getDelegationStatus DSLT4neMssXyDn2nHPzn5n9tJHu5Nywhj3dFgYjyyLwp
  ferry rpc --endpoint https://api.devnet.solana.com getEpochInfo

  # A private rollup, with the token "ferry login" stored for the keypair
  ferry rpc --cluster devnet-private --ephemeral getSlot

  # Exact JSON for scripts
  ferry rpc getLatestBlockhash | jq -r .value.blockhash`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmdutil.UsageErrorf("missing METHOD (see '%s --help')", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.CheckOutput(cmdutil.OutputText, cmdutil.OutputJSON); err != nil {
				return err
			}
			target, err := o.target(f)
			if err != nil {
				return err
			}
			params, err := ParseParams(args[1:])
			if err != nil {
				return err
			}
			c, err := chainclient.New(target)
			if err != nil {
				return cmdutil.UsageErrorf("%v", err)
			}
			if tok := o.token(f); tok != "" {
				c = c.WithToken(tok)
			}
			raw, err := c.CallRaw(cmd.Context(), args[0], params)
			if err != nil {
				var re *chainclient.RPCError
				if errors.As(err, &re) {
					// Exactly "error: RPC CODE: MESSAGE" on one line.
					return &chainclient.RPCError{Code: re.Code, Message: oneLine(re.Message)}
				}
				return cmdutil.ReachError(err, "RPC", target)
			}
			return f.PrintRawJSON(raw, func() error {
				if f.JSON() || !f.IO.IsStdoutTTY() {
					var buf bytes.Buffer
					if err := json.Compact(&buf, raw); err != nil {
						return fmt.Errorf("print result: %w", err)
					}
					buf.WriteByte('\n')
					_, err := f.IO.Out.Write(buf.Bytes())
					return err
				}
				return iostreams.WriteJSON(f.IO.StyledOut(), raw, f.IO.ColorEnabled())
			})
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&o.ephemeral, "ephemeral", false, "call the cluster's ephemeral rollup RPC")
	fl.BoolVar(&o.router, "router", false, "call the cluster's router")
	fl.StringVar(&o.endpoint, "endpoint", "", "call this http(s) URL")
	fl.StringVar(&o.authToken, "auth-token", "", "bearer token sent as ?token= (default with --ephemeral: the one \"ferry login\" stored for the keypair; env FERRY_AUTH_TOKEN)")
	return cmd
}

// token is the bearer token to send, if any: see Factory.RollupToken. The
// stored login is looked up only for the cluster's own rollup, and only
// when a keypair loads (public rollups need no token).
func (o *options) token(f *cmdutil.Factory) string {
	var cluster, wallet string
	if o.ephemeral {
		if key, err := f.LoadKeypair(); err == nil {
			wallet = cmdutil.PublicKeyOf(key).String()
		}
		if ep, err := f.Endpoints(); err == nil {
			cluster = ep.Name
		}
	}
	return f.RollupToken(o.authToken, cluster, wallet)
}

// target picks the endpoint URL.
func (o *options) target(f *cmdutil.Factory) (string, error) {
	n := 0
	for _, set := range []bool{o.ephemeral, o.router, o.endpoint != ""} {
		if set {
			n++
		}
	}
	if n > 1 {
		return "", cmdutil.UsageErrorf("--ephemeral, --router and --endpoint are mutually exclusive")
	}
	if o.endpoint != "" {
		return o.endpoint, nil
	}
	ep, err := f.Endpoints()
	if err != nil {
		return "", err
	}
	switch {
	case o.ephemeral:
		return ep.Ephemeral, cmdutil.RequireRollup(ep)
	case o.router:
		return ep.Router, cmdutil.RequireRouter(ep)
	}
	return ep.BaseRPC, nil
}

var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// ParseParams turns command-line parameters into a JSON params array: one
// argument holding a JSON array is the whole array; otherwise each
// argument is one positional value (see the command's help).
func ParseParams(args []string) (json.RawMessage, error) {
	if len(args) == 1 && strings.HasPrefix(strings.TrimSpace(args[0]), "[") {
		p := []byte(strings.TrimSpace(args[0]))
		if err := checkJSON(p); err != nil {
			return nil, cmdutil.UsageErrorf("params are not a valid JSON array: %v", err)
		}
		return p, nil
	}
	vals := make([]json.RawMessage, len(args))
	for i, a := range args {
		v, err := ParseValue(a)
		if err != nil {
			return nil, cmdutil.UsageErrorf("parameter %d: %v", i+1, err)
		}
		vals[i] = v
	}
	out, err := json.Marshal(vals)
	if err != nil {
		return nil, fmt.Errorf("encode params: %w", err)
	}
	return out, nil
}

// ParseValue converts one positional parameter to JSON.
func ParseValue(s string) (json.RawMessage, error) {
	t := strings.TrimSpace(s)
	switch {
	case t == "true" || t == "false" || t == "null" || jsonNumber.MatchString(t):
		return json.RawMessage(t), nil
	case strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") || strings.HasPrefix(t, `"`):
		if err := checkJSON([]byte(t)); err != nil {
			return nil, fmt.Errorf("%.40q is not valid JSON: %v", t, err)
		}
		return json.RawMessage(t), nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return b, nil
}

func checkJSON(b []byte) error {
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("extra data after the JSON value")
	}
	return nil
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
