// Package cmd assembles the ferry command tree. Each subcommand lives in its
// own package under cmd/ and only parses flags, calls pkg/ and prints.
package cmd

import (
	"github.com/spf13/cobra"

	"github.com/ferry-sh/ferry/cmd/cmdutil"
)

// Version is set at build time with -ldflags "-X .../cmd.Version=...".
var Version = "0.1.0-dev"

// NewRootCmd builds the command tree around f.
func NewRootCmd(f *cmdutil.Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "ferry",
		Short: "SPL token payments on Solana and MagicBlock ephemeral rollups",
		Long: `ferry builds, signs, sends and confirms SPL token payments on Solana and
MagicBlock ephemeral rollups: deposits into a rollup, public and private
transfers (with delays and split payouts) and withdrawals back to the base
layer. "ferry serve" runs the payments API, MCP endpoint, chain nodes and
router locally, backed by an embedded ledger pair.`,
		Example: `  # The local backend, with funded demo wallets (keep it running)
  ferry serve

  # In another terminal: deposit into the rollup, then pay privately
  ferry deposit --sign alice.json --amount 5000000 --output json | ferry send --confirm
  ferry transfer --sign alice.json --to bob.json --mint $MINT --amount 1000000 \
    --visibility private --from-balance ephemeral --to-balance base --output json |
    ferry send --confirm
  ferry balance alice.json

  # The same against devnet
  ferry balance -u devnet

Exit statuses are a contract (0 success, 2 usage, 3 validation, 4 failed on
chain or refunded, 5 timeout, 6 upstream unavailable, 7 auth): see
"ferry help exit-codes".`,
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			f.IO.SetNoColor(f.NoColor)
			return f.CheckJSONFlags(cmd.Flags().Changed("output"))
		},
	}
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	root.SetIn(f.IO.In)
	root.DisableAutoGenTag = true
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return cmdutil.UsageErrorf("%v (see '%s --help')", err, c.CommandPath())
	})
	f.AddGlobalFlags(root)
	for _, add := range subcommands {
		root.AddCommand(add(f))
	}
	root.AddCommand(ExitCodesTopic())
	return root
}

// ExitCodesTopic is the help topic `ferry help exit-codes`.
func ExitCodesTopic() *cobra.Command {
	return &cobra.Command{
		Use:   "exit-codes",
		Short: "The exit statuses of every ferry command",
		Long:  cmdutil.ExitCodesHelp,
	}
}

// Execute runs ferry with the process's arguments and returns the exit code.
func Execute() int {
	f := cmdutil.New()
	root := NewRootCmd(f)
	err := root.Execute()
	return cmdutil.Report(err, f.IO.ErrOut, f.JSON())
}
