// Package initmint implements `ferry init-mint`.
package initmint

import (
	"context"
	"fmt"

	"github.com/gagliardetto/solana-go"
	"github.com/spf13/cobra"

	"github.com/ferry-sh/ferry/cmd/cmdutil"
	"github.com/ferry-sh/ferry/pkg/espl"
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

--payer defaults to the first --sign keypair (or your default keypair).

The setup is done once per mint and validator. Before building, init-mint
reads the chain: when the transfer queue and the vault's ephemeral ATA are
already delegated, it says "already set up" and builds nothing, so nothing
is charged again (exit status 0; --force builds anyway). With --output json the answer is
{"alreadySetUp": true, ...}, which "ferry send" accepts as nothing to send,
so "ferry init-mint ... --output json | ferry send --confirm" can be run
again safely. Offline builds (--blockhash) cannot check.`,
		Example: `  ferry init-mint --sign admin.json --mint $MINT --output base64 | ferry send --confirm`,
		Args:    cobra.NoArgs,
	}
	rf := cmdutil.BindRequest(cmd, schema.Of[payments.InitializeMintRequest](), "cluster")
	cmdutil.AddBuildFlags(cmd, &bf)
	var force bool
	cmd.Flags().BoolVar(&force, "force", false, "build the setup even when the mint is already set up")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return cmdutil.RunBuild(cmd, f, rf, &bf, cmdutil.BuildSpec[payments.InitializeMintRequest]{
			SignerField: "payer",
			Check: func(cmd *cobra.Command, c payments.Chain, req *payments.InitializeMintRequest) (bool, error) {
				if force || bf.Offline() {
					return false, nil
				}
				return alreadySetUp(cmd.Context(), f, c, req)
			},
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

// SetUp is init-mint's answer when there is nothing to do.
type SetUp struct {
	AlreadySetUp  bool   `json:"alreadySetUp"`
	Mint          string `json:"mint"`
	Validator     string `json:"validator"`
	TransferQueue string `json:"transferQueue"`
	VaultEATA     string `json:"vaultEphemeralAta"`
}

// alreadySetUp reports (and prints) whether (mint, validator) is set up
// for private payments: its transfer queue and the global vault's
// ephemeral ATA are both delegated, which is what the setup leaves.
func alreadySetUp(ctx context.Context, f *cmdutil.Factory, c payments.Chain, req *payments.InitializeMintRequest) (bool, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	mint := solana.MustPublicKeyFromBase58(req.Mint)
	var validator solana.PublicKey
	if req.Validator != "" {
		validator = solana.MustPublicKeyFromBase58(req.Validator)
	} else {
		v, err := c.Identity(ctx)
		if err != nil {
			// The build resolves (and reports) the validator itself.
			return false, nil
		}
		validator = v
	}
	queue, _ := espl.FindTransferQueue(mint, validator)
	vault, _ := espl.FindGlobalVault(mint)
	vaultEATA, _ := espl.FindEphemeralATA(vault, mint)
	for _, k := range []solana.PublicKey{queue, vaultEATA} {
		a, err := c.Account(ctx, k)
		if err != nil {
			return false, fmt.Errorf("check the mint's setup: %w", err)
		}
		if a == nil || a.Owner != espl.DelegationProgramID {
			return false, nil
		}
	}
	res := SetUp{AlreadySetUp: true, Mint: mint.String(), Validator: validator.String(), TransferQueue: queue.String(), VaultEATA: vaultEATA.String()}
	if f.JSON() {
		return true, f.PrintJSON(res)
	}
	w := f.IO.Out
	if f.Output == cmdutil.OutputBase64 {
		w = f.IO.ErrOut // stdout is for a transaction, and there is none
	}
	fmt.Fprintf(w, "Mint %s is already set up for private payments with validator %s (transfer queue %s): nothing to build, nothing charged.\n",
		res.Mint, res.Validator, res.TransferQueue)
	return true, nil
}
