// Package deposit implements `ferry deposit`.
package deposit

import (
	"github.com/spf13/cobra"

	"github.com/ferry-sh/ferry/cmd/cmdutil"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/schema"
)

// NewCmd returns the deposit command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var bf cmdutil.BuildFlags
	cmd := &cobra.Command{
		Use:   "deposit",
		Short: "Build a deposit from your base-layer balance into the ephemeral rollup",
		Long: `Build an unsigned deposit, exactly as POST /v1/spl/deposit builds it: your
ephemeral ATA is created and delegated to the validator, and the tokens travel
through a delegated shuttle that merges them into your rollup balance.

--owner defaults to the first --sign keypair (or your default keypair).

--amount is in base units, a plain decimal integer ("010" is ten; 0x10,
1_0, 1e3 and signs are refused). With --ui it is a token amount (1.5), as
spl-token takes it, converted with the mint's decimals read from the
chain (--mint-decimals N for offline builds); more decimals than the mint
has are refused.`,
		Example: `  # Deposit 5 tokens (6 decimals) and send it
  ferry deposit --sign alice.json --mint $MINT --amount 5000000 --output base64 |
    ferry send --confirm

  # Inspect what a deposit does before signing
  ferry deposit --owner $ALICE --mint $MINT --amount 1000 --output base64 | ferry inspect`,
		Args: cobra.NoArgs,
	}
	rf := cmdutil.BindRequest(cmd, schema.Of[payments.DepositRequest](), "cluster")
	rf.AddUIAmount()
	cmdutil.AddBuildFlags(cmd, &bf)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return cmdutil.RunBuild(cmd, f, rf, &bf, cmdutil.BuildSpec[payments.DepositRequest]{
			SignerField: "owner",
			Build: func(cmd *cobra.Command, p *payments.Planner, c payments.Chain, req *payments.DepositRequest) (*payments.UnsignedTransaction, any, error) {
				out, err := p.Deposit(cmd.Context(), c, req)
				return out, nil, err
			},
		})
	}
	return cmd
}
