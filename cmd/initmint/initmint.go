// Package initmint implements `ferry init-mint`.
package initmint

import (
	"github.com/spf13/cobra"

	"github.com/ferry-sh/ferry/cmd/cmdutil"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/schema"
)

// NewCmd returns the init-mint command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var bf cmdutil.BuildFlags
	cmd := &cobra.Command{
		Use:   "init-mint",
		Short: "Build the one-time setup of a mint for private payments",
		Long: `Build the one-time setup of a (mint, validator) pair, exactly as
POST /v1/spl/initialize-mint builds it: the transfer queue and its delegation,
the rent PDA (funded with 0.02 SOL), the global vault, its ATA, and the vault's
ephemeral ATA delegation. Private transfers of the mint need it.

--payer defaults to the first --sign keypair (or your default keypair).`,
		Example: `  ferry init-mint --sign admin.json --mint $MINT --output base64 | ferry send --confirm`,
		Args:    cobra.NoArgs,
	}
	rf := cmdutil.BindRequest(cmd, schema.Of[payments.InitializeMintRequest](), "cluster")
	cmdutil.AddBuildFlags(cmd, &bf)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return cmdutil.RunBuild(cmd, f, rf, &bf, cmdutil.BuildSpec[payments.InitializeMintRequest]{
			SignerField: "payer",
			Build: func(cmd *cobra.Command, p *payments.Planner, c payments.Chain, req *payments.InitializeMintRequest) (*payments.UnsignedTransaction, any, error) {
				out, err := p.InitializeMint(cmd.Context(), c, req)
				if err != nil {
					return nil, nil, err
				}
				return &out.UnsignedTransaction, out, nil
			},
		})
	}
	return cmd
}
