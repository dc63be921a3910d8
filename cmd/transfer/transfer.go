// Package transfer implements `ferry transfer`.
package transfer

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/ferry-sh/ferry/cmd/cmdutil"
	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/schema"
)

// NewCmd returns the transfer command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var bf cmdutil.BuildFlags
	cmd := &cobra.Command{
		Use:   "transfer",
		Short: "Build a public or private SPL token transfer",
		Long: `Build an unsigned transfer transaction, exactly as POST /v1/spl/transfer
builds it. Public transfers move tokens between ATAs on the base layer or on
the ephemeral rollup. Private transfers encrypt the recipient, delays and
split to the validator and pay out on the base layer through the transfer
queue (or land in the recipient's rollup balance with --to-balance ephemeral).

--from defaults to the first --sign keypair (or your default keypair). Sign
with --sign, or print the unsigned transaction and sign it elsewhere.

--amount is in base units, a plain decimal integer ("010" is ten; 0x10,
1_0, 1e3 and signs are refused). With --ui it is a token amount (1.5), as
spl-token takes it, converted with the mint's decimals read from the
chain (--mint-decimals N for offline builds); more decimals than the mint
has are refused.`,
		Example: `  # Public transfer on the base layer, signed and sent
  ferry transfer --sign alice.json --to $BOB --mint $MINT --amount 1000000 \
    --visibility public --from-balance base --to-balance base --output base64 |
    ferry send --confirm

  # Private transfer paid out in 3 pieces within 1-5 seconds
  ferry transfer --from $ALICE --to $BOB --mint $MINT --amount 5000000 \
    --visibility private --from-balance base --to-balance base \
    --split 3 --min-delay-ms 1000 --max-delay-ms 5000 --client-ref-id 42

  # Fully offline build for an air-gapped signer
  ferry transfer --from $ALICE --to $BOB --mint $MINT --amount 1 \
    --visibility public --from-balance base --to-balance base \
    --blockhash $BLOCKHASH --last-valid-block-height 1234 --token-program spl-token`,
		Args: cobra.NoArgs,
	}
	rf := cmdutil.BindRequest(cmd, schema.Of[payments.TransferRequest](), "cluster")
	rf.AddUIAmount()
	cmdutil.AddBuildFlags(cmd, &bf)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return cmdutil.RunBuild(cmd, f, rf, &bf, cmdutil.BuildSpec[payments.TransferRequest]{
			SignerField: "from",
			Build: func(cmd *cobra.Command, p *payments.Planner, c payments.Chain, req *payments.TransferRequest) (*payments.UnsignedTransaction, any, error) {
				out, err := p.Transfer(cmd.Context(), c, req)
				return out, nil, explainTo(err, req.To)
			},
		})
	}
	return cmd
}

// explainTo says what --to was taken for when the planner read it as a
// stealth handle and found none: most often a mistyped address or file.
func explainTo(err error, to string) error {
	var ae *apierr.Error
	if !errors.As(err, &ae) {
		return err
	}
	switch ae.Code {
	case payments.CodeStealthPoolNotFound:
		return cmdutil.InputErrorf("--to: %q is not an address, a keypair file or a stealth handle (no such file, and no stealth pool for that handle)", to)
	case payments.CodeInvalidStealthTransfer, payments.CodeInvalidStealthHandle:
		return cmdutil.InputErrorf("--to: %q is not an address or a keypair file (stealth handles are only for private base to base transfers)", to)
	}
	return err
}
