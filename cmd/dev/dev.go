// Package dev implements `ferry dev`: the cheatcodes and rollup controls
// of a local `ferry serve` (pkg/devchain), over its JSON-RPC methods.
package dev

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/gagliardetto/solana-go"
	"github.com/spf13/cobra"

	"github.com/ferry-sh/ferry/cmd/cmdutil"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/devchain"
	"github.com/ferry-sh/ferry/pkg/rpcserver"
)

// NewCmd returns the dev command and its subcommands.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Cheatcodes and rollup controls of a local ferry serve",
		Long: `Put the local chain into the state a test needs, now, without a restart, and
make the local rollup validator act now.

State cheatcodes work on either chain node (--ephemeral for the rollup):
set an account, a token account (creating the associated token account),
a mint; reset an account to its genesis value; profile a transaction
without committing it; export and import snapshots of accounts. They are
the JSON-RPC methods of surfpool (surfnet_setAccount, ...), so surfpool's
SDKs work against ferry serve too, with ferry_* aliases.

Clock controls work on either node too: travel to a later slot, epoch or
time, advance the clock by a duration (on the rollup, delayed private
payouts become due), pause and resume it, choose when blocks are produced
(clock, transaction, manual) and mine blocks now.

Rollup controls talk to the local validator: commit or undelegate a
wallet's rollup balance now, settle queued private payouts now whatever
their delay (crank), and show the transfer queues.

Every change is a privileged write of the ledger, logged by ferry serve,
readable at once and durable with its slot. They exist only on "ferry
serve" in local mode, started without --no-cheatcodes; a real cluster, or a
gateway, answers "Method not found". See docs/localnet.md for how each one
acts on chain.`,
		Example: `  # 1000 demo tokens for alice, then a private payout settled at once
  ferry dev set-token-account alice.json --amount 1000000000
  ferry deposit --sign alice.json --amount 500000000 --output json | ferry send --confirm
  ferry transfer --sign alice.json --to $BOB --mint $MINT --amount 1000000 --visibility private \
    --from-balance ephemeral --to-balance base --min-delay-ms 600000 --output json | ferry send --confirm
  ferry dev queue
  ferry dev crank            # settle it now, or:
  ferry dev advance 10m --ephemeral   # let its delay run out

  # USDC's devnet mint, locally
  ferry dev set-mint 4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU --decimals 6`,
	}
	for _, add := range []func(*cmdutil.Factory) *cobra.Command{
		newSetAccountCmd, newSetTokenAccountCmd, newSetMintCmd, newResetAccountCmd, newProfileCmd,
		newExportCmd, newImportCmd, newCrankCmd, newQueueCmd, newCommitCmd, newUndelegateCmd, newHaltCmd,
		newTimeTravelCmd, newAdvanceCmd, newPauseCmd, newResumeCmd, newBlockModeCmd, newMineCmd, newClockCmd,
	} {
		cmd.AddCommand(add(f))
	}
	return cmd
}

var (
	okStyle  = lipgloss.NewStyle().Foreground(lipgloss.Color("2"))
	dimStyle = lipgloss.NewStyle().Faint(true)
)

// node is the chain node a command talks to.
type node struct {
	name string // devchain.NodeBase or NodeEphemeral
	url  string
	c    *chainclient.Client
}

// connect returns the base node, or the ephemeral one.
func connect(f *cmdutil.Factory, ephemeral bool) (*node, error) {
	ep, err := f.Endpoints()
	if err != nil {
		return nil, err
	}
	n := &node{name: devchain.NodeBase, url: ep.BaseRPC}
	if ephemeral {
		if err := cmdutil.RequireRollup(ep); err != nil {
			return nil, err
		}
		n.name, n.url = devchain.NodeEphemeral, ep.Ephemeral
	}
	if n.c, err = chainclient.New(n.url); err != nil {
		return nil, cmdutil.UsageErrorf("%v", err)
	}
	return n, nil
}

// call calls a cheatcode, turning its refusals into validation errors
// (exit status 3) and a node without cheatcodes into a clear one.
func (n *node) call(ctx context.Context, method string, params []any, out any) error {
	if ctx == nil {
		ctx = context.Background()
	}
	err := n.c.Call(ctx, method, params, out)
	var re *chainclient.RPCError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &re) && re.Code == rpcserver.CodeMethodNotFound:
		return cmdutil.InputErrorf("the %s node at %s has no cheatcodes (%s): ferry dev works against \"ferry serve\" in local mode, started without --no-cheatcodes",
			n.name, chainclient.RedactURL(n.url), method)
	case errors.As(err, &re) && re.Code == rpcserver.CodeInvalidParams:
		msg := re.Message
		if len(re.Data) > 0 && string(re.Data) != "null" {
			msg += " (" + strings.Trim(string(re.Data), `"`) + ")"
		}
		return cmdutil.InputErrorf("%s", msg)
	case errors.As(err, &re):
		return &chainclient.RPCError{Code: re.Code, Message: re.Message}
	}
	return cmdutil.ReachError(err, "RPC", n.url)
}

// contextSlot decodes surfpool's {"context":{"slot"},"value":...}.
type contextSlot struct {
	Context struct {
		Slot uint64 `json:"slot"`
	} `json:"context"`
	Value json.RawMessage `json:"value"`
}

// confirmPoll and confirmTimeout pace the wait for a write's slot to be
// confirmed, so that the next command (which reads at confirmed, as ferry
// balance does) sees it.
const (
	confirmPoll    = 50 * time.Millisecond
	confirmTimeout = 30 * time.Second
)

// waitConfirmed waits until slot is confirmed on the node. A node that
// does not end slots by itself (paused, or producing blocks per
// transaction or on demand: ferry dev pause, block-mode) confirms the
// write with its next block only, so waiting would hang: the write is
// readable at processed already, and stderr says so.
func (n *node) waitConfirmed(ctx context.Context, slot uint64, errOut io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	var clock devchain.ClockView
	if err := n.c.Call(ctx, devchain.MethodGetClock, []any{}, &clock); err == nil && (clock.Paused || clock.BlockProductionMode != "clock") {
		why := "its clock is paused"
		if !clock.Paused {
			why = "it produces blocks in " + clock.BlockProductionMode + " mode"
		}
		fmt.Fprintf(errOut, "note: the %s node is not ending slots by itself (%s): the write is processed now and confirmed with its next block (ferry dev mine)\n", n.name, why)
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, confirmTimeout)
	defer cancel()
	for {
		s, err := n.c.GetSlot(ctx, chainclient.Confirmed)
		if err != nil {
			return cmdutil.ReachError(err, "RPC", n.url)
		}
		if s >= slot {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the %s node did not confirm slot %d within %s (is it halted? see its /health)", n.name, slot, confirmTimeout)
		case <-time.After(confirmPoll):
		}
	}
}

// printWrite waits until a state cheatcode's write is confirmed and
// prints it: JSON (devchain's WriteResult), the address alone in a pipe,
// a line on a terminal.
func printWrite(ctx context.Context, f *cmdutil.Factory, n *node, res *devchain.WriteResult, summary string) error {
	if err := n.waitConfirmed(ctx, res.Slot, f.IO.ErrOut); err != nil {
		return err
	}
	if f.JSON() {
		return f.PrintJSON(res)
	}
	if !f.IO.IsStdoutTTY() {
		_, err := fmt.Fprintln(f.IO.Out, res.Accounts[0])
		return err
	}
	w := f.IO.StyledOut()
	fmt.Fprintf(w, "%s %s\n", okStyle.Render("✓"), summary)
	fmt.Fprintf(w, "  %s %s, slot %d\n", dimStyle.Render("node"), res.Node, res.Slot)
	return nil
}

// keyOrNone reads a key flag that may clear a field: "none" or "null"
// clears it (surfpool's "null").
func keyOrNone(flag, v string) (string, error) {
	if v == "none" || v == "null" {
		return "null", nil
	}
	if _, err := solana.PublicKeyFromBase58(v); err != nil {
		return "", cmdutil.UsageErrorf("--%s: %q is not a public key (or none)", flag, v)
	}
	return v, nil
}

// parseKeyFlag parses a public key flag.
func parseKeyFlag(flag, v string) (solana.PublicKey, error) {
	k, err := solana.PublicKeyFromBase58(v)
	if err != nil {
		return k, cmdutil.UsageErrorf("--%s: %q is not a public key", flag, v)
	}
	return k, nil
}

// parseUnits parses a base-unit amount flag (a u64).
func parseUnits(flag, v string) (uint64, error) {
	n, err := cmdutil.ParseBaseUnits(v)
	if err != nil {
		return 0, cmdutil.UsageErrorf("--%s must be a whole number of base units (got %q)", flag, v)
	}
	return n, nil
}

// defaultMint resolves --mint: the flag, or the demo mint of ferry serve.
func defaultMint(ctx context.Context, f *cmdutil.Factory, mint string) (solana.PublicKey, error) {
	if mint != "" {
		return parseKeyFlag("mint", mint)
	}
	n, err := connect(f, false)
	if err != nil {
		return solana.PublicKey{}, err
	}
	var info rpcserver.FaucetInfo
	if err := n.call(ctx, rpcserver.MethodFaucetInfo, nil, &info); err != nil {
		return solana.PublicKey{}, err
	}
	if info.DefaultMint == nil {
		return solana.PublicKey{}, cmdutil.UsageErrorf("--mint is required: the node at %s has no demo mint", chainclient.RedactURL(n.url))
	}
	return solana.PublicKeyFromBase58(*info.DefaultMint)
}

func u64s(v uint64) string { return strconv.FormatUint(v, 10) }
