// Package confirm implements `ferry confirm`: the status of a transaction
// sent elsewhere, and with --watch the outcome of the operation it
// started, like `ferry send --confirm`.
package confirm

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/spf13/cobra"

	"github.com/ferry-sh/ferry/cmd/cmdutil"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/outcome"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

type options struct {
	watch        bool
	layer        string
	timeout      time.Duration
	pollInterval time.Duration
	authToken    string
}

// Status is what `ferry confirm` prints without --watch.
type Status struct {
	Signature string `json:"signature"`
	// Layer is where the transaction was found (base or ephemeral).
	Layer string `json:"layer,omitempty"`
	// Status is processed, confirmed, finalized, failed or notFound.
	Status string          `json:"status"`
	Slot   uint64          `json:"slot,omitempty"`
	Err    json.RawMessage `json:"err,omitempty"`
	// Kind is the operation the transaction starts.
	Kind outcome.Kind `json:"kind,omitempty"`
}

// NewCmd returns the confirm command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "confirm SIGNATURE",
		Short: "Show a transaction's status, or follow its operation to the end with --watch",
		Long: `Look a transaction up by signature on the base layer and the rollup (like
"solana confirm") and print its status: processed, confirmed, finalized,
failed (with the reason) or not found.

--watch waits until it is confirmed and then follows the operation it
starts to its end, exactly as "ferry send --confirm" does: a deposit until
it is on the rollup, a private transfer until every payout is paid on base,
a withdrawal until the tokens are back on base, reporting each step (one
JSON object per step with --output json).

Exit status: 0 when the transaction landed (with --watch: when the
operation settled), 4 when it failed or the operation was refunded, 5 when
--timeout passed, 1 when it is not found (see "ferry help exit-codes").`,
		Example: `  # Is it there?
  ferry confirm 5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW

  # Follow a private transfer sent by another tool until every piece is paid
  ferry confirm --watch $SIG --output json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return cmdutil.UsageErrorf("confirm takes one SIGNATURE (see 'ferry confirm --help')")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return run(cmd.Context(), f, o, args[0])
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&o.watch, "watch", false, "wait for confirmation and follow the operation to its end")
	fl.StringVar(&o.layer, "layer", "", "look only on base or ephemeral (default: both, base first)")
	fl.DurationVar(&o.timeout, "timeout", cmdutil.DefaultOperationTimeout, "with --watch: give up (exit status 5) after this long (0: no limit)")
	fl.DurationVar(&o.pollInterval, "poll-interval", 250*time.Millisecond, "how often --watch polls the chains")
	fl.StringVar(&o.authToken, "auth-token", "", "bearer token for a private rollup (default: the stored login; env FERRY_AUTH_TOKEN)")
	_ = cmd.RegisterFlagCompletionFunc("layer", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"base", "ephemeral"}, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

func run(ctx context.Context, f *cmdutil.Factory, o *options, arg string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := f.CheckOutput(cmdutil.OutputText, cmdutil.OutputJSON); err != nil {
		return err
	}
	sig, err := solana.SignatureFromBase58(arg)
	if err != nil {
		return cmdutil.UsageErrorf("%q is not a transaction signature (base58, 64 bytes)", arg)
	}
	switch o.layer {
	case "", outcome.Base, outcome.Ephemeral:
	default:
		return cmdutil.UsageErrorf("--layer must be base or ephemeral (got %q)", o.layer)
	}
	if o.pollInterval <= 0 {
		return cmdutil.UsageErrorf("--poll-interval must be positive")
	}
	ep, err := f.Endpoints()
	if err != nil {
		return err
	}
	base, eph, err := cmdutil.Clients(ep)
	if err != nil {
		return err
	}
	if tok := f.RollupToken(o.authToken, ep.Name, ""); tok != "" && eph != nil {
		eph = eph.WithToken(tok)
	}
	layers := []struct {
		name string
		c    *chainclient.Client
	}{{outcome.Base, base}, {outcome.Ephemeral, eph}}
	if !o.watch {
		st, err := lookup(ctx, sig, layers, o.layer)
		if err != nil {
			return cmdutil.ReachError(err, "RPC", ep.BaseRPC)
		}
		return report(f, st)
	}

	var cancel context.CancelFunc
	ctx, cancel = cmdutil.WithOperationTimeout(ctx, o.timeout)
	defer cancel()
	ctx, stop := outcome.WatchHealth(ctx, 0, outcome.Node{Layer: outcome.Base, Client: base}, outcome.Node{Layer: outcome.Ephemeral, Client: eph})
	defer stop()
	follow := f.NewFollower()
	f.IO.StartProgress("Waiting for " + sig.String())
	defer f.IO.StopProgress()
	var st *Status
	for {
		if st, err = lookup(ctx, sig, layers, o.layer); err != nil {
			return cmdutil.OperationError(ctx, cmdutil.ReachError(err, "RPC", ep.BaseRPC), "confirming", sig.String(), o.timeout)
		}
		if st.Status == "failed" || st.Status == "confirmed" || st.Status == "finalized" {
			break
		}
		select {
		case <-ctx.Done():
			return cmdutil.OperationError(ctx, ctx.Err(), "confirming", sig.String(), o.timeout)
		case <-time.After(o.pollInterval):
		}
	}
	if st.Status == "failed" {
		f.IO.StopProgress()
		return report(f, st)
	}
	node := base
	if st.Layer == outcome.Ephemeral {
		node = eph
	}
	tx, err := fetch(ctx, node, sig)
	if err != nil {
		return cmdutil.OperationError(ctx, err, "reading", sig.String(), o.timeout)
	}
	op := outcome.Detect(tx, st.Layer)
	follow.Event(outcome.Event{Event: "confirmed", Kind: op.Kind, Layer: st.Layer, Signature: sig.String(), Slot: st.Slot,
		Message: fmt.Sprintf("Confirmed on %s", st.Layer)})
	res, err := cmdutil.Tracker(f, ep, base, eph, o.pollInterval, follow, op, "").Track(ctx, op)
	f.IO.StopProgress()
	if err != nil {
		return cmdutil.OperationError(ctx, err, "following the "+string(op.Kind)+" of", sig.String(), o.timeout)
	}
	if f.JSON() {
		final := struct {
			Event string `json:"event"`
			Status
			Outcome *outcome.Result `json:"outcome"`
		}{"result", *st, res}
		final.Kind = op.Kind
		if err := follow.Result(final); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(f.IO.Out, res.Status)
	}
	return cmdutil.OutcomeError(res)
}

// lookup finds sig on the layers (only: one of them, if set).
func lookup(ctx context.Context, sig solana.Signature, layers []struct {
	name string
	c    *chainclient.Client
}, only string) (*Status, error) {
	st := &Status{Signature: sig.String(), Status: "notFound"}
	for _, l := range layers {
		if l.c == nil || (only != "" && l.name != only) {
			continue
		}
		sts, err := l.c.GetSignatureStatuses(ctx, []solana.Signature{sig}, true)
		if err != nil {
			return nil, err
		}
		if s := sts[0]; s != nil {
			st.Layer, st.Slot, st.Status = l.name, s.Slot, string(s.ConfirmationStatus)
			if len(s.Err) > 0 {
				st.Status, st.Err = "failed", s.Err
			}
			return st, nil
		}
	}
	return st, nil
}

// report prints a one-shot status and returns the exit status's error.
func report(f *cmdutil.Factory, st *Status) error {
	if f.JSON() {
		if err := f.PrintJSON(st); err != nil {
			return err
		}
	} else {
		line := st.Status
		switch st.Status {
		case "failed":
			line = fmt.Sprintf("failed on %s in slot %d: %s", st.Layer, st.Slot, st.Err)
		case "notFound":
			line = "not found"
		default:
			line = fmt.Sprintf("%s on %s in slot %d", st.Status, st.Layer, st.Slot)
		}
		fmt.Fprintln(f.IO.Out, line)
	}
	switch st.Status {
	case "failed":
		return &cmdutil.SilentError{Code: cmdutil.ExitFailed}
	case "notFound":
		return &cmdutil.SilentError{Code: cmdutil.ExitError}
	}
	return nil
}

// fetch reads a landed transaction's wire form.
func fetch(ctx context.Context, c *chainclient.Client, sig solana.Signature) (*txwire.Transaction, error) {
	raw, err := c.GetTransaction(ctx, sig, chainclient.TransactionOptions{Commitment: chainclient.Confirmed, Encoding: "base64"})
	if err != nil {
		return nil, err
	}
	var v struct {
		Transaction []string `json:"transaction"`
	}
	if raw == nil || json.Unmarshal(raw, &v) != nil || len(v.Transaction) == 0 {
		return nil, fmt.Errorf("getTransaction %s: no transaction", sig)
	}
	b, err := base64.StdEncoding.DecodeString(v.Transaction[0])
	if err != nil {
		return nil, fmt.Errorf("getTransaction %s: %w", sig, err)
	}
	return txwire.Decode(b)
}
