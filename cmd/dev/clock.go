package dev

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/ferry-sh/ferry/cmd/cmdutil"
	"github.com/ferry-sh/ferry/pkg/devchain"
	"github.com/ferry-sh/ferry/pkg/ledger"
)

// printClock prints a clock control's result: JSON (devchain's
// ClockView), the slot alone in a pipe, lines on a terminal.
func printClock(f *cmdutil.Factory, v *devchain.ClockView, summary string) error {
	if f.JSON() {
		return f.PrintJSON(v)
	}
	if !f.IO.IsStdoutTTY() {
		_, err := fmt.Fprintln(f.IO.Out, v.AbsoluteSlot)
		return err
	}
	w := f.IO.StyledOut()
	state := "running"
	if v.Paused {
		state = "paused"
	}
	fmt.Fprintf(w, "%s %s\n", okStyle.Render("✓"), summary)
	fmt.Fprintf(w, "  %s %s, slot %d (epoch %d, index %d), block height %d\n", dimStyle.Render("node"), v.Node, v.AbsoluteSlot, v.Epoch, v.SlotIndex, v.BlockHeight)
	fmt.Fprintf(w, "  %s %s (%+d s from the wall clock), %s, blocks by %s\n", dimStyle.Render("clock"),
		time.Unix(v.UnixTimestamp, 0).UTC().Format(time.RFC3339), v.OffsetSeconds, state, v.BlockProductionMode)
	return nil
}

// clockCall calls a clock method answering ferry's ClockView and prints
// it.
func clockCall(cmd *cobra.Command, f *cmdutil.Factory, ephemeral bool, method string, params []any, summary string) error {
	if err := f.CheckOutput(cmdutil.OutputText, cmdutil.OutputJSON); err != nil {
		return err
	}
	n, err := connect(f, ephemeral)
	if err != nil {
		return err
	}
	var v devchain.ClockView
	if err := n.call(cmd.Context(), method, params, &v); err != nil {
		return err
	}
	return printClock(f, &v, summary)
}

func newTimeTravelCmd(f *cmdutil.Factory) *cobra.Command {
	var ephemeral bool
	var slot, epoch uint64
	var at string
	cmd := &cobra.Command{
		Use:   "time-travel",
		Short: "Move a node to a later slot, epoch or time",
		Long: `Move the base node (or the rollup with --ephemeral) to a later slot, epoch
or Unix time now (surfnet_timeTravel). The working slot ends as a block and
the next one opens at the target: the slots in between are skipped (no
blocks), and the Clock sysvar, epoch and block times move together. A slot
target moves the time by the skipped slots' duration; a time target skips
the slots that time holds.

Blockhashes age by blocks, as Agave's blockhash queue does: the jump is one
block, so a transaction signed before it still lands; "ferry dev mine 151"
expires it. Slots only go forward: a target at or before the working slot
is refused.

Give exactly one of --slot, --epoch, --to (RFC 3339 or Unix seconds).`,
		Example: `  ferry dev time-travel --slot 1000000
  ferry dev time-travel --epoch 12
  ferry dev time-travel --to 2030-01-01T00:00:00Z
  # Ten minutes later on the rollup: see also "ferry dev advance"
  ferry dev time-travel --ephemeral --to $(( $(date +%s) + 600 ))`,
		Args: cmdutil.MaxArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			var req devchain.TimeTravelRequest
			fl := cmd.Flags()
			if countSet(fl.Changed("slot"), fl.Changed("epoch"), fl.Changed("to")) != 1 {
				return cmdutil.UsageErrorf("give exactly one of --slot, --epoch, --to")
			}
			summary := ""
			switch {
			case fl.Changed("slot"):
				req.AbsoluteSlot, summary = &slot, fmt.Sprintf("Travelled to slot %d", slot)
			case fl.Changed("epoch"):
				req.AbsoluteEpoch, summary = &epoch, fmt.Sprintf("Travelled to epoch %d", epoch)
			default:
				t, err := parseTime(at)
				if err != nil {
					return err
				}
				if t.Before(time.Unix(0, 0)) {
					return cmdutil.UsageErrorf("--to: %s is before 1970", at)
				}
				ms := uint64(t.UnixMilli())
				req.AbsoluteTimestamp, summary = &ms, "Travelled to "+t.UTC().Format(time.RFC3339)
			}
			return epochCall(cmd, f, ephemeral, devchain.FerryTimeTravel, []any{req}, summary)
		},
	}
	addEphemeral(cmd, &ephemeral, "move")
	cmd.Flags().Uint64Var(&slot, "slot", 0, "the slot to travel to")
	cmd.Flags().Uint64Var(&epoch, "epoch", 0, "the epoch to travel to (its first slot)")
	cmd.Flags().StringVar(&at, "to", "", "the time to travel to: RFC 3339 or Unix seconds")
	return cmd
}

// parseTime reads RFC 3339 or Unix seconds.
func parseTime(s string) (time.Time, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(n, 0), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return t, cmdutil.UsageErrorf("--to: %q is neither RFC 3339 (2030-01-01T00:00:00Z) nor Unix seconds", s)
	}
	return t, nil
}

func newAdvanceCmd(f *cmdutil.Factory) *cobra.Command {
	var ephemeral bool
	var slots uint64
	cmd := &cobra.Command{
		Use:   "advance [DURATION]",
		Short: "Move a node's clock forward by a duration or a number of slots",
		Long: `Move the base node's clock (or the rollup's with --ephemeral) forward by a
duration (10m, 1h30m, 90s) or, with --slots, by a number of slots
(ferry_advanceClock): a time travel relative to now.

On the rollup this is how delayed private payouts become due: the transfer
queue's due times are judged against the rollup clock, and the local
validator pays each payout once its time has come, as it would after the
real delay. "ferry dev crank" instead settles payouts whatever their delay.`,
		Example: `  # A private payout delayed ten minutes becomes due, and is paid
  ferry dev advance 10m --ephemeral
  ferry dev advance --slots 432000`,
		Args: cmdutil.MaxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var req devchain.AdvanceClockRequest
			var summary string
			switch {
			case cmd.Flags().Changed("slots") == (len(args) == 1):
				return cmdutil.UsageErrorf("give a duration or --slots (one of them)")
			case len(args) == 1:
				d, err := time.ParseDuration(args[0])
				if err != nil || d < time.Second {
					return cmdutil.UsageErrorf("%q is not a duration of at least 1s (e.g. 10m, 1h30m)", args[0])
				}
				secs := uint64(d / time.Second)
				req.Seconds, summary = &secs, fmt.Sprintf("Advanced the clock by %s", time.Duration(secs)*time.Second)
			default:
				req.Slots, summary = &slots, fmt.Sprintf("Advanced %d slots", slots)
			}
			return clockCall(cmd, f, ephemeral, devchain.MethodAdvanceClock, []any{req}, summary)
		},
	}
	addEphemeral(cmd, &ephemeral, "advance")
	cmd.Flags().Uint64Var(&slots, "slots", 0, "advance by this many slots instead of a duration")
	return cmd
}

func newPauseCmd(f *cmdutil.Factory) *cobra.Command {
	var ephemeral bool
	cmd := &cobra.Command{
		Use:   "pause",
		Short: "Stop a node's clock: no blocks, time stands still",
		Long: `Stop the base node's clock (or the rollup's with --ephemeral) (surfnet_pauseClock):
the slot clock produces no block and the Clock sysvar's time stands still
until "ferry dev resume". Transactions still execute and are readable at
processed commitment; they are confirmed when a block is produced (resume,
mine, time travel, or each transaction in transaction mode).

While a node is paused, the rollup validator's background work that waits
for confirmation (deposits reaching the rollup, commits, payouts) waits
too; "ferry dev commit", "undelegate" and "crank" still finish.`,
		Example: `  ferry dev pause
  ferry dev mine 3
  ferry dev resume`,
		Args: cmdutil.MaxArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return epochCall(cmd, f, ephemeral, devchain.FerryPauseClock, []any{}, "Paused the clock")
		},
	}
	addEphemeral(cmd, &ephemeral, "pause")
	return cmd
}

func newResumeCmd(f *cmdutil.Factory) *cobra.Command {
	var ephemeral bool
	cmd := &cobra.Command{
		Use:   "resume",
		Short: "Restart a paused clock where it stopped",
		Long: `Restart the base node's clock (or the rollup's with --ephemeral) where it
stopped (surfnet_resumeClock): the time spent paused does not count, and
blocks follow the block production mode again.`,
		Example: `  ferry dev resume --ephemeral`,
		Args:    cmdutil.MaxArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return epochCall(cmd, f, ephemeral, devchain.FerryResumeClock, []any{}, "Resumed the clock")
		},
	}
	addEphemeral(cmd, &ephemeral, "resume")
	return cmd
}

// epochCall calls a method answering surfpool's EpochInfo, then shows the
// whole clock (ferry_getClock).
func epochCall(cmd *cobra.Command, f *cmdutil.Factory, ephemeral bool, method string, params []any, summary string) error {
	if err := f.CheckOutput(cmdutil.OutputText, cmdutil.OutputJSON); err != nil {
		return err
	}
	n, err := connect(f, ephemeral)
	if err != nil {
		return err
	}
	if err := n.call(cmd.Context(), method, params, nil); err != nil {
		return err
	}
	var v devchain.ClockView
	if err := n.call(cmd.Context(), devchain.MethodGetClock, []any{}, &v); err != nil {
		return err
	}
	return printClock(f, &v, summary)
}

func newBlockModeCmd(f *cmdutil.Factory) *cobra.Command {
	var ephemeral bool
	cmd := &cobra.Command{
		Use:   "block-mode clock|transaction|manual",
		Short: "Choose when a node produces blocks",
		Long: `Choose when the base node (or the rollup with --ephemeral) produces blocks
(ferry_setBlockProductionMode):

  clock        a block per slot tick (--slot-duration), as a validator; the default
  transaction  a block per transaction, none while idle
  manual       blocks only when mined ("ferry dev mine")

Transactions already in the working slot stay there until the new mode
produces a block.`,
		Example: `  ferry dev block-mode transaction
  ferry dev block-mode manual --ephemeral && ferry dev mine 5 --ephemeral`,
		Args:      exactArgs(1, "mode (clock, transaction or manual)"),
		ValidArgs: []string{"clock", "transaction", "manual"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := ledger.ParseBlockMode(args[0]); err != nil {
				return cmdutil.UsageErrorf("%v", err)
			}
			return clockCall(cmd, f, ephemeral, devchain.MethodSetBlockMode, []any{args[0]}, "Block production: "+args[0])
		},
	}
	addEphemeral(cmd, &ephemeral, "switch")
	return cmd
}

func newMineCmd(f *cmdutil.Factory) *cobra.Command {
	var ephemeral bool
	cmd := &cobra.Command{
		Use:   "mine [N]",
		Short: "Produce N blocks now (default 1)",
		Long: fmt.Sprintf(`Produce N blocks on the base node (or the rollup with --ephemeral) now, in any
block production mode (ferry_mineBlocks), and return once they are
confirmed. N is 1 to %d. A blockhash is valid for 150 blocks: mining 151
expires every blockhash handed out before.`, ledger.MaxMineBlocks),
		Example: `  ferry dev mine
  ferry dev mine 151   # expire the blockhashes handed out so far`,
		Args: cmdutil.MaxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			count := uint64(1)
			if len(args) == 1 {
				n, err := strconv.ParseUint(args[0], 10, 32)
				if err != nil || n < 1 || n > ledger.MaxMineBlocks {
					return cmdutil.UsageErrorf("N must be a whole number from 1 to %d (got %q)", ledger.MaxMineBlocks, args[0])
				}
				count = n
			}
			return clockCall(cmd, f, ephemeral, devchain.MethodMineBlocks, []any{count}, fmt.Sprintf("Mined %d block(s)", count))
		},
	}
	addEphemeral(cmd, &ephemeral, "mine on")
	return cmd
}

func newClockCmd(f *cmdutil.Factory) *cobra.Command {
	var ephemeral bool
	cmd := &cobra.Command{
		Use:   "clock",
		Short: "Show a node's slot, epoch, time and block production",
		Long: `Show the base node's clock (or the rollup's with --ephemeral) (ferry_getClock):
working slot, epoch, block height, the Clock sysvar's time and how far it is
ahead of the wall clock, whether it is paused, and the block production mode.
A pipe gets the slot.`,
		Example: `  ferry dev clock --ephemeral --output json | jq .unixTimestamp`,
		Args:    cmdutil.MaxArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return clockCall(cmd, f, ephemeral, devchain.MethodGetClock, []any{}, "Clock")
		},
	}
	addEphemeral(cmd, &ephemeral, "show")
	return cmd
}
