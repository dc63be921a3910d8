// Package withdraw implements `ferry withdraw`.
package withdraw

import (
	"github.com/spf13/cobra"

	"github.com/ferry-sh/ferry/cmd/cmdutil"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/schema"
)

// NewCmd returns the withdraw command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var bf cmdutil.BuildFlags
	cmd := &cobra.Command{
		Use:   "withdraw",
		Short: "Build a withdrawal from the ephemeral rollup back to the base layer",
		Long: `Build an unsigned withdrawal, exactly as POST /v1/spl/withdraw builds it. It
is sent to the base layer: a delegated shuttle moves the tokens out of your
rollup balance, and the vault pays them into your base-layer ATA.

--owner defaults to the first --sign keypair (or your default keypair).

--amount is in base units, a plain decimal integer ("010" is ten; 0x10,
1_0, 1e3 and signs are refused). With --ui it is a token amount (1.5), as
spl-token takes it, converted with the mint's decimals read from the
chain (--mint-decimals N for offline builds); more decimals than the mint
has are refused.`,
		Example: `  ferry withdraw --sign alice.json --mint $MINT --amount 2500000 --output base64 |
    ferry send --confirm`,
		Args: cobra.NoArgs,
	}
	rf := cmdutil.BindRequest(cmd, schema.Of[payments.WithdrawRequest](), "cluster")
	rf.AddUIAmount()
	cmdutil.AddBuildFlags(cmd, &bf)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return cmdutil.RunBuild(cmd, f, rf, &bf, cmdutil.BuildSpec[payments.WithdrawRequest]{
			SignerField: "owner",
			Build: func(cmd *cobra.Command, p *payments.Planner, c payments.Chain, req *payments.WithdrawRequest) (*payments.UnsignedTransaction, any, error) {
				out, err := p.Withdraw(cmd.Context(), c, req)
				return out, nil, err
			},
		})
	}
	return cmd
}
