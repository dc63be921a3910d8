package dev

import (
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ferry-sh/ferry/cmd/cmdutil"
	"github.com/ferry-sh/ferry/pkg/devchain"
)

func newCrankCmd(f *cmdutil.Factory) *cobra.Command {
	var mint, ref string
	cmd := &cobra.Command{
		Use:   "crank",
		Short: "Settle queued private payouts now, whatever their delay",
		Long: `Settle the queued payouts of private transfers now (ferry_crankQueue): their
ready time is brought forward to the rollup clock's now (a privileged write
of the transfer queue, listed in the rollup block's writes and logged),
then the local validator cranks the queue on the rollup and pays each
payout on base with its own signed transactions, as it does when a delay
runs out. The command returns once the payouts are confirmed on base.

--mint and --client-ref-id choose which payouts; by default, all of them.

A pipe gets the base payout signatures, one per line.`,
		Example: `  # A private transfer delayed ten minutes, paid now
  ferry transfer --sign alice.json --to $BOB --mint $MINT --amount 1000000 --visibility private \
    --from-balance ephemeral --to-balance base --min-delay-ms 600000 --output json | ferry send --confirm
  ferry dev crank

  # Only the payouts of one transfer
  ferry dev crank --client-ref-id 42`,
		Args: cmdutil.MaxArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.CheckOutput(cmdutil.OutputText, cmdutil.OutputJSON); err != nil {
				return err
			}
			req := devchain.CrankRequest{Mint: mint, ClientRefID: ref}
			if mint != "" {
				if _, err := parseKeyFlag("mint", mint); err != nil {
					return err
				}
			}
			if ref != "" {
				if _, err := strconv.ParseUint(ref, 10, 64); err != nil {
					return cmdutil.UsageErrorf("--client-ref-id must be a u64 (got %q)", ref)
				}
			}
			n, err := connect(f, true)
			if err != nil {
				return err
			}
			f.IO.StartProgress("Settling queued payouts")
			var res devchain.CrankResult
			err = n.call(cmd.Context(), devchain.MethodCrankQueue, []any{req}, &res)
			f.IO.StopProgress()
			if err != nil {
				return err
			}
			if f.JSON() {
				return f.PrintJSON(res)
			}
			if !f.IO.IsStdoutTTY() {
				for _, tx := range res.Transactions {
					if tx.Step == "payout" {
						fmt.Fprintln(f.IO.Out, tx.Signature)
					}
				}
				return nil
			}
			w := f.IO.StyledOut()
			if len(res.Settled) == 0 {
				fmt.Fprintln(w, "Nothing queued matches: no payout to settle.")
				return nil
			}
			fmt.Fprintf(w, "%s Settled %d queued payout(s)\n", okStyle.Render("✓"), len(res.Settled))
			for _, e := range res.Settled {
				fmt.Fprintf(w, "  %s to %s (task %d, group %d)\n", e.Amount, e.Destination, e.TaskID, e.Group)
			}
			for _, tx := range res.Transactions {
				if tx.Step == "payout" || tx.Step == "crank" {
					fmt.Fprintf(w, "  %s %s (%s)\n", dimStyle.Render(tx.Step), tx.Signature, tx.Node)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&mint, "mint", "", "only the queue of this mint")
	cmd.Flags().StringVar(&ref, "client-ref-id", "", "only the payouts of transfers with this clientRefId")
	return cmd
}

func newQueueCmd(f *cmdutil.Factory) *cobra.Command {
	var mint string
	cmd := &cobra.Command{
		Use:   "queue",
		Short: "Show the transfer queues: pending private payouts and when they are due",
		Long: `Show the local rollup's transfer queues (ferry_getQueue): each queued payout
of a private transfer with its amount, recipient, due time (by the rollup
clock), task id, group and place in its split, and state: pending (not due
yet), ready (the next crank pays it) or paying (cranked; its payout waits
to run on base).

The index of a split piece shows as ? once paid pieces leave it ambiguous.`,
		Example: `  ferry dev queue
  ferry dev queue --output json | jq '.queues[].entries[] | select(.state == "pending")'`,
		Args: cmdutil.MaxArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.CheckOutput(cmdutil.OutputText, cmdutil.OutputJSON); err != nil {
				return err
			}
			if mint != "" {
				if _, err := parseKeyFlag("mint", mint); err != nil {
					return err
				}
			}
			n, err := connect(f, true)
			if err != nil {
				return err
			}
			var v devchain.QueueView
			if err := n.call(cmd.Context(), devchain.MethodGetQueue, []any{devchain.QueueRequest{Mint: mint}}, &v); err != nil {
				return err
			}
			if f.JSON() {
				return f.PrintJSON(v)
			}
			w := f.IO.StyledOut()
			if len(v.Queues) == 0 {
				fmt.Fprintln(w, "No transfer queue (initialize a mint for private transfers first).")
				return nil
			}
			for _, q := range v.Queues {
				fmt.Fprintf(w, "Queue %s (mint %s): %d of %d entries\n", q.Address, q.Mint, len(q.Entries), q.Capacity)
				if len(q.Entries) == 0 {
					continue
				}
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "  STATE\tAMOUNT\tTO\tDUE\tTASK\tGROUP\tSPLIT\tCLIENT REF")
				for _, e := range q.Entries {
					fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", e.State, e.Amount, e.Destination, due(e, v.NowMs), e.TaskID, e.Group, split(e.Split), e.ClientRefID)
				}
				tw.Flush()
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&mint, "mint", "", "only the queue of this mint")
	return cmd
}

// due is when an entry is due, relative to the rollup clock.
func due(e devchain.QueueEntry, nowMs int64) string {
	if e.State == devchain.StatePaying {
		return "now (on base)"
	}
	d := time.Duration(e.ReadyAt-nowMs) * time.Millisecond
	if d <= 0 {
		return "now"
	}
	return "in " + d.Round(time.Second).String()
}

func split(s *devchain.Split) string {
	if s == nil {
		return "-"
	}
	i := "?"
	if s.Index != nil {
		i = strconv.Itoa(*s.Index + 1)
	}
	return fmt.Sprintf("%s/%d (%d paid)", i, s.Of, s.Paid)
}

func newCommitCmd(f *cmdutil.Factory) *cobra.Command {
	return accountControl(f, "commit", devchain.MethodCommitAccount, "Commit a wallet's rollup balance to base now",
		`Commit the rollup balance of WALLET's eATA for --mint (default: the demo
mint) to the base layer now (ferry_commitAccount): the local validator
schedules the commit itself, as MagicBlock validators schedule their
periodic commits, and runs DLP CommitState on base in a transaction it
signs. The eATA stays delegated: the balance keeps moving on the rollup.

A pipe gets the base transaction's signature.`,
		`  ferry dev commit alice.json
  ferry dev commit $ALICE --mint $MINT --output json`, "commit", "Committed")
}

func newUndelegateCmd(f *cmdutil.Factory) *cobra.Command {
	return accountControl(f, "undelegate", devchain.MethodUndelegateAccount, "Return a wallet's rollup balance to base now",
		`Commit WALLET's eATA for --mint (default: the demo mint) and return it to the
base layer now, without the owner's signature (ferry_undelegateAccount):
what eSPL instruction 5 does, forced. The rollup balance is drained and
frozen at once, the validator runs DLP CommitAndUndelegate on base, and
the account leaves the rollup; the balance is then held by the eATA on
base, as after any undelegation.

A pipe gets the base transaction's signature.`,
		`  ferry dev undelegate alice.json`, "undelegate", "Undelegated")
}

// accountControl builds commit and undelegate, which differ only in name.
func accountControl(f *cmdutil.Factory, use, method, short, long, example, step, done string) *cobra.Command {
	var mint string
	cmd := &cobra.Command{
		Use:     use + " WALLET",
		Short:   short,
		Long:    long,
		Example: example,
		Args:    exactArgs(1, "WALLET"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.CheckOutput(cmdutil.OutputText, cmdutil.OutputJSON); err != nil {
				return err
			}
			wallet, err := f.ResolveAddress(args[0])
			if err != nil {
				return err
			}
			m, err := defaultMint(cmd.Context(), f, mint)
			if err != nil {
				return err
			}
			n, err := connect(f, true)
			if err != nil {
				return err
			}
			var res devchain.RollupResult
			if err := n.call(cmd.Context(), method, []any{wallet.String(), map[string]string{"mint": m.String()}}, &res); err != nil {
				return err
			}
			if f.JSON() {
				return f.PrintJSON(res)
			}
			var sig string
			for _, tx := range res.Transactions {
				if tx.Step == step {
					sig = tx.Signature
				}
			}
			if !f.IO.IsStdoutTTY() {
				_, err := fmt.Fprintln(f.IO.Out, sig)
				return err
			}
			w := f.IO.StyledOut()
			fmt.Fprintf(w, "%s %s the eATA %s of %s: %s base units (intent %d)\n", okStyle.Render("✓"), done, res.Account, res.Owner, res.Amount, res.Intent)
			fmt.Fprintf(w, "  %s %s\n", dimStyle.Render("base tx"), sig)
			return nil
		},
	}
	cmd.Flags().StringVar(&mint, "mint", "", "mint of the eATA (default: the demo mint of ferry serve)")
	return cmd
}
