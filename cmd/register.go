package cmd

import (
	"github.com/spf13/cobra"

	"github.com/ferry-sh/ferry/cmd/airdrop"
	"github.com/ferry-sh/ferry/cmd/balance"
	"github.com/ferry-sh/ferry/cmd/cmdutil"
	"github.com/ferry-sh/ferry/cmd/confirm"
	"github.com/ferry-sh/ferry/cmd/deposit"
	"github.com/ferry-sh/ferry/cmd/dev"
	"github.com/ferry-sh/ferry/cmd/initmint"
	"github.com/ferry-sh/ferry/cmd/inspect"
	"github.com/ferry-sh/ferry/cmd/keygen"
	"github.com/ferry-sh/ferry/cmd/login"
	"github.com/ferry-sh/ferry/cmd/mint"
	"github.com/ferry-sh/ferry/cmd/routes"
	"github.com/ferry-sh/ferry/cmd/rpc"
	"github.com/ferry-sh/ferry/cmd/send"
	"github.com/ferry-sh/ferry/cmd/serve"
	"github.com/ferry-sh/ferry/cmd/transfer"
	"github.com/ferry-sh/ferry/cmd/withdraw"
)

// subcommands lists every subcommand constructor in help order. Each
// command package exports NewCmd(*cmdutil.Factory) *cobra.Command; adding a
// command is one line here.
var subcommands = []func(*cmdutil.Factory) *cobra.Command{
	transfer.NewCmd,
	deposit.NewCmd,
	withdraw.NewCmd,
	initmint.NewCmd,
	inspect.NewCmd,
	send.NewCmd,
	confirm.NewCmd,
	balance.NewCmd,
	login.NewCmd,
	keygen.NewCmd,
	airdrop.NewCmd,
	mint.NewCmd,
	serve.NewCmd,
	dev.NewCmd,
	routes.NewCmd,
	rpc.NewCmd,
}
