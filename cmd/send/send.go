// Package send implements `ferry send`: submit a signed transaction to the
// base layer or the ephemeral rollup and optionally wait until it is
// confirmed, with the rules and errors of POST /v1/transaction/send.
package send

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/spf13/cobra"

	"github.com/ferry-sh/ferry/cmd/cmdutil"
	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	pinspect "github.com/ferry-sh/ferry/pkg/inspect"
	"github.com/ferry-sh/ferry/pkg/outcome"
	"github.com/ferry-sh/ferry/pkg/submit"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// DefaultPollInterval is how often --confirm polls the chain.
const DefaultPollInterval = 250 * time.Millisecond

type options struct {
	sendTo          string
	confirm         bool
	sendRPCEndpoint string
	skipPreflight   bool
	maxRetries      int64
	lastValid       uint64
	sign            []string
	authToken       string
	pollInterval    time.Duration
	timeout         time.Duration
}

// NewCmd returns the send command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "send [BASE64|-]",
		Short: "Send a signed transaction, optionally waiting for confirmation",
		Long: `Submit a signed transaction to the base layer or the ephemeral rollup of the
selected cluster, exactly as POST /v1/transaction/send does (the same rules,
preflight at "confirmed", the same error codes), and print its signature.

The transaction is read from the argument, or from stdin when the argument
is "-" or missing. It may be base64, base58, or the JSON a build command
prints with --output json; the JSON also supplies sendTo, recentBlockhash,
lastValidBlockHeight and sendRpcEndpoint.

Where it goes: --send-to, else the build response's sendTo, else the layer
whose chain knows the transaction's blockhash (a build for the rollup uses
a rollup blockhash), else base. Ephemeral sends carry the token that
"ferry login" stored for the fee payer (or --auth-token) as ?token=, which
private (TEE) rollups require.

--sign KEYPAIR adds signatures first, so an unsigned build can be piped
straight in. A transaction that still lacks a signature is refused before
anything is sent.

--confirm waits until the transaction is confirmed (or its blockhash
expires) and then follows the operation it starts to its end, from what
the rollup validator leaves on the two chains: a deposit until it is
credited on the rollup, a private transfer until every piece is paid out
on base, a withdrawal until the tokens are back on base; other
transactions are done when confirmed. Each step is a line on a
terminal's stderr (with --verbose in pipes too); with --output json each
step is one JSON object on stdout, the last one {"event":"result", ...,
"outcome":{...}} (with --json or --jq only that result, filtered).
Settlement is followed on the local cluster; elsewhere --confirm stops
after the confirmation. --timeout bounds the whole wait, and a node that
reports it is unhealthy (a halted ledger) ends it at once. Without the
build response, the expiry bound is the chain's current block height
plus 150 (a blockhash is never valid longer than that).

Exit status (see "ferry help exit-codes"): 0 only when the transaction
was accepted and, with --confirm, the whole operation succeeded; 4 when a
program rejected it (the error names the program error and, for a lack of
funds, the balance and the amount) or the operation was refunded or moved
nothing; 5 when --timeout passed or the blockhash expired; 6 when a node
is unreachable or unhealthy. A transaction that landed still prints its
signature on stdout.`,
		Example: `  # Build, sign and send a deposit, waiting for confirmation
  ferry deposit --sign alice.json --mint $MINT --amount 5000000 --output json |
    ferry send --confirm

  # CI-style pipe: an unsigned base64 build, signed and sent
  ferry transfer --from $ALICE --to $BOB --mint $MINT --amount 1000000 \
    --visibility public --from-balance base --to-balance base --output base64 |
    ferry send - --sign alice.json --confirm

  # A transaction signed elsewhere, to the rollup
  ferry send --send-to ephemeral --confirm AQAAAA...

  # One JSON object per step, for scripts
  ferry send --confirm --output json < signed.json

  # Only the outcome's status
  ferry send --confirm --jq .outcome.status < signed.json`,
		Args: cmdutil.MaxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return run(cmd.Context(), f, o, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.sendTo, "send-to", "", "where to send: base or ephemeral (default: the build's sendTo, or detected from the blockhash)")
	fl.BoolVar(&o.confirm, "confirm", false, "wait until the transaction is confirmed and its operation has ended (settled, refunded or failed)")
	fl.StringArrayVar(&o.sign, "sign", nil, "sign with this Solana CLI keypair file first (repeatable)")
	fl.StringVar(&o.sendRPCEndpoint, "send-rpc-endpoint", "", "explicit ephemeral RPC URL (the build's sendRpcEndpoint); implies --send-to ephemeral")
	fl.Uint64Var(&o.lastValid, "last-valid-block-height", 0, "the blockhash's last valid block height, for --confirm (default: from the build JSON)")
	fl.StringVar(&o.authToken, "auth-token", "", "bearer token for ephemeral sends (default: the one \"ferry login\" stored for the fee payer; env FERRY_AUTH_TOKEN)")
	fl.BoolVar(&o.skipPreflight, "skip-preflight", false, "skip the node's preflight simulation")
	fl.Int64Var(&o.maxRetries, "max-retries", -1, "how often the node re-broadcasts the transaction (default: the node's)")
	fl.DurationVar(&o.pollInterval, "poll-interval", DefaultPollInterval, "how often --confirm polls the chain")
	fl.DurationVar(&o.timeout, "timeout", cmdutil.DefaultOperationTimeout, "with --confirm: give up (exit status 5) when the operation has not ended after this long (0: no limit)")
	fl.SortFlags = false
	_ = cmd.RegisterFlagCompletionFunc("send-to", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{submit.Base, submit.Ephemeral}, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// buildJSON is the part of a build response send uses.
type buildJSON struct {
	TransactionBase64    string `json:"transactionBase64"`
	SendTo               string `json:"sendTo"`
	RecentBlockhash      string `json:"recentBlockhash"`
	LastValidBlockHeight *int64 `json:"lastValidBlockHeight"`
	SendRPCEndpoint      string `json:"sendRpcEndpoint"`
	// AlreadySetUp is init-mint's answer when there is nothing to build.
	AlreadySetUp bool `json:"alreadySetUp"`
}

// readInput returns the text of the transaction argument or stdin.
func readInput(f *cmdutil.Factory, args []string) (string, error) {
	input := "-"
	if len(args) == 1 {
		input = args[0]
	}
	if input != "-" {
		return input, nil
	}
	if f.IO.IsStdinTTY() {
		return "", cmdutil.UsageErrorf("pass a signed transaction as an argument or pipe one on stdin")
	}
	b, err := io.ReadAll(io.LimitReader(f.IO.In, 1<<20))
	if err != nil {
		return "", fmt.Errorf("read stdin: %w", err)
	}
	return string(b), nil
}

func run(ctx context.Context, f *cmdutil.Factory, o *options, args []string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := f.CheckOutput(cmdutil.OutputText, cmdutil.OutputJSON); err != nil {
		return err
	}
	switch o.sendTo {
	case "", submit.Base, submit.Ephemeral:
	default:
		return cmdutil.UsageErrorf("--send-to must be base or ephemeral (got %q)", o.sendTo)
	}
	if o.pollInterval <= 0 {
		return cmdutil.UsageErrorf("--poll-interval must be positive")
	}
	text, err := readInput(f, args)
	if err != nil {
		return err
	}
	var build buildJSON
	if t := strings.TrimSpace(text); strings.HasPrefix(t, "{") {
		if err := json.Unmarshal([]byte(t), &build); err != nil {
			return apierr.BadRequest(submit.CodeInvalidTransaction, "input looks like JSON but is not a build response: "+err.Error())
		}
		if build.AlreadySetUp && build.TransactionBase64 == "" {
			// `ferry init-mint --output json` found nothing to do.
			fmt.Fprintln(f.IO.ErrOut, "Nothing to send: the mint is already set up.")
			return nil
		}
	}
	tx, err := pinspect.ParseTransaction(text)
	if err != nil {
		return apierr.BadRequest(submit.CodeInvalidTransaction, "not a transaction (base64, base58 or a build's JSON): "+err.Error())
	}
	if err := sign(tx, o.sign); err != nil {
		return err
	}
	if missing := tx.MissingSigners(); len(missing) > 0 {
		names := make([]string, len(missing))
		for i, k := range missing {
			names[i] = k.String()
		}
		return cmdutil.InputErrorf("transaction is not signed by %s: pass --sign KEYPAIR (here or to the build command)", strings.Join(names, ", "))
	}

	ep, err := f.Endpoints()
	if err != nil {
		return err
	}
	base, eph, err := cmdutil.Clients(ep)
	if err != nil {
		return err
	}
	endpoints := submit.Endpoints{Base: base, Ephemeral: eph}

	req := &submit.Request{
		TransactionBase64: tx.Base64(),
		SendRPCEndpoint:   firstNonEmpty(o.sendRPCEndpoint, build.SendRPCEndpoint),
		Cluster:           ep.Name,
		RecentBlockhash:   firstNonEmpty(build.RecentBlockhash, tx.Message.RecentBlockhash.String()),
	}
	req.SendTo = firstNonEmpty(o.sendTo, build.SendTo)
	if o.sendRPCEndpoint != "" && o.sendTo == "" {
		req.SendTo = submit.Ephemeral
	}
	if req.SendTo == "" {
		req.SendTo = detectLayer(ctx, endpoints, req, tx)
	}
	if o.skipPreflight {
		req.SkipPreflight = &o.skipPreflight
	}
	if o.maxRetries >= 0 {
		req.MaxRetries = &o.maxRetries
	}
	innerToken := f.RollupToken(o.authToken, ep.Name, tx.Message.AccountKeys[0].String())

	if o.confirm {
		req.Confirm = &o.confirm
		switch {
		case o.lastValid != 0:
			n := int64(o.lastValid)
			req.LastValidBlockHeight = &n
		case build.LastValidBlockHeight != nil:
			req.LastValidBlockHeight = build.LastValidBlockHeight
		default:
			target, err := submit.Target(endpoints, req, innerToken)
			if err != nil {
				return err
			}
			h, err := target.GetBlockHeight(ctx, chainclient.Processed)
			if err != nil {
				return reach(err, req.SendTo, target.URL())
			}
			n := int64(h + cmdutil.MaxProcessingAge)
			req.LastValidBlockHeight = &n
		}
	}

	var op outcome.Operation
	if o.confirm {
		op = outcome.Detect(tx, req.SendTo)
	}
	// Confirming watches the node the transaction went to; following the
	// operation afterwards watches both (it settles across the layers).
	sendCtx := ctx
	if o.confirm {
		var cancel context.CancelFunc
		ctx, cancel = cmdutil.WithOperationTimeout(ctx, o.timeout)
		defer cancel()
		node := outcome.Node{Layer: submit.Base, Client: base}
		if req.SendTo == submit.Ephemeral {
			node = outcome.Node{Layer: submit.Ephemeral, Client: eph}
		}
		var stopWatch context.CancelFunc
		sendCtx, stopWatch = outcome.WatchHealth(ctx, 0, node)
		defer stopWatch()
	}
	follow := f.NewFollower()
	sender := &submit.Sender{PollInterval: o.pollInterval, OnProgress: func(pr chainclient.ConfirmProgress) {
		f.IO.SetProgressLabel(progressLabel(req.SendTo, pr))
	}}
	if o.confirm {
		f.IO.StartProgress(fmt.Sprintf("Sending to %s and confirming", req.SendTo))
	}
	resp, err := sender.Send(sendCtx, endpoints, req, innerToken)
	f.IO.StopProgress()
	if err != nil {
		// A transaction that was sent but failed or expired still has a
		// signature worth printing.
		var ae *apierr.Error
		if errors.As(err, &ae) && !f.JSON() {
			if d, ok := ae.Details.(map[string]any); ok {
				if sig, ok := d["signature"].(string); ok && sig != "" {
					fmt.Fprintln(f.IO.Out, sig)
				}
			}
		}
		target := endpoints.Base.URL()
		if req.SendTo == submit.Ephemeral && endpoints.Ephemeral != nil {
			target = firstNonEmpty(req.SendRPCEndpoint, endpoints.Ephemeral.URL())
		}
		if o.confirm {
			err = cmdutil.OperationError(sendCtx, err, "confirming", tx.Signatures[0].String(), o.timeout)
		}
		return cmdutil.ExplainProgramError(ctx, reach(err, req.SendTo, target), tx, base, eph, req.SendTo)
	}
	if !o.confirm {
		if f.JSON() {
			return f.PrintJSON(resp)
		}
		if _, err := fmt.Fprintln(f.IO.Out, resp.Signature); err != nil {
			return err
		}
		if f.IO.IsStderrTTY() {
			fmt.Fprintf(f.IO.StyledErr(), "%s Sent to %s (not confirmed; --confirm waits)\n", okStyle.Render("✓"), resp.SendTo)
		}
		return nil
	}
	if !f.JSON() {
		if _, err := fmt.Fprintln(f.IO.Out, resp.Signature); err != nil {
			return err
		}
	}
	follow.Event(outcome.Event{Event: "confirmed", Kind: op.Kind, Layer: resp.SendTo, Signature: resp.Signature,
		Message: fmt.Sprintf("Confirmed on %s", resp.SendTo)})
	ctx, stopWatch := outcome.WatchHealth(ctx, 0, outcome.Node{Layer: submit.Base, Client: base}, outcome.Node{Layer: submit.Ephemeral, Client: eph})
	defer stopWatch()
	res, err := cmdutil.Tracker(f, ep, base, eph, o.pollInterval, follow, op, o.authToken).Track(ctx, op)
	f.IO.StopProgress()
	if err != nil {
		return cmdutil.OperationError(ctx, err, "following the "+string(op.Kind)+" of", resp.Signature, o.timeout)
	}
	if f.JSON() {
		final := struct {
			Event string `json:"event"`
			*submit.Response
			Outcome *outcome.Result `json:"outcome"`
		}{"result", resp, res}
		if err := follow.Result(final); err != nil {
			return err
		}
	}
	return cmdutil.OutcomeError(res)
}

var okStyle = lipgloss.NewStyle().Foreground(lipgloss.Color("2"))

// progressLabel describes a confirmation poll for the spinner.
func progressLabel(layer string, pr chainclient.ConfirmProgress) string {
	state := "waiting for the transaction"
	if pr.Status != nil {
		state = string(pr.Status.ConfirmationStatus)
	}
	if pr.BlockHeight == 0 {
		return fmt.Sprintf("Confirming on %s: %s", layer, state)
	}
	left := int64(pr.LastValidBlockHeight) - int64(pr.BlockHeight)
	return fmt.Sprintf("Confirming on %s: %s, blockhash valid %d more blocks", layer, state, max(left, 0))
}

func sign(tx *txwire.Transaction, paths []string) error {
	for _, p := range paths {
		k, err := cmdutil.ReadKeypairFile(p)
		if err != nil {
			return &cmdutil.InputError{Err: fmt.Errorf("--sign: %w", err)}
		}
		if err := tx.Sign(k); err != nil {
			return fmt.Errorf("--sign %s: %w", p, err)
		}
	}
	return nil
}

// detectLayer picks base or ephemeral by asking which chain knows the
// transaction's blockhash: a build for the rollup uses a rollup blockhash.
// When neither answers yes (or cannot be asked) it is base, whose node
// then reports the problem.
func detectLayer(ctx context.Context, ep submit.Endpoints, req *submit.Request, tx *txwire.Transaction) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	bh := tx.Message.RecentBlockhash.String()
	valid := func(c *chainclient.Client) bool {
		var res struct {
			Value bool `json:"value"`
		}
		err := c.Call(ctx, "isBlockhashValid", []any{bh, map[string]string{"commitment": string(chainclient.Processed)}}, &res)
		return err == nil && res.Value
	}
	if valid(ep.Base) {
		return submit.Base
	}
	if c, err := submit.Target(ep, &submit.Request{SendTo: submit.Ephemeral, SendRPCEndpoint: req.SendRPCEndpoint}, ""); err == nil && valid(c) {
		return submit.Ephemeral
	}
	return submit.Base
}

// reach turns "could not contact the node" into one line that names the
// endpoint (and suggests ferry serve for a local one), keeping the API
// error's code.
func reach(err error, layer, u string) error {
	var te *chainclient.TransportError
	if !errors.As(err, &te) || errors.Is(err, context.Canceled) {
		return err
	}
	msg := cmdutil.ReachError(err, layer+" RPC", u).Error()
	var ae *apierr.Error
	if errors.As(err, &ae) {
		c := *ae
		c.Message, c.Details = msg, nil
		return &c
	}
	return apierr.New(502, apierr.CodeRPC, msg).Wrap(err)
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
