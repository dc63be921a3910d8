package cmd

import (
	"github.com/spf13/cobra"

	"github.com/ferry-sh/ferry/cmd/cmdutil"
)

// subcommands lists every subcommand constructor in help order. Each
// command package exports NewCmd(*cmdutil.Factory) *cobra.Command; adding a
// command is one line here.
var subcommands = []func(*cmdutil.Factory) *cobra.Command{}
