// Package airdrop implements `ferry airdrop`: request SOL from the
// cluster's faucet (requestAirdrop) and wait until it is confirmed.
package airdrop

import (
	"context"
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/gagliardetto/solana-go"
	"github.com/spf13/cobra"

	"github.com/ferry-sh/ferry/cmd/cmdutil"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/submit"
)

// LamportsPerSOL is the number of lamports in one SOL.
const LamportsPerSOL = 1_000_000_000

type options struct {
	noConfirm bool
}

// Result is the JSON output.
type Result struct {
	Signature string `json:"signature"`
	Recipient string `json:"recipient"`
	Lamports  uint64 `json:"lamports"`
	Confirmed bool   `json:"confirmed"`
	// Balance is the recipient's balance in lamports after the airdrop
	// (confirmed), when it was read.
	Balance *uint64 `json:"balance,omitempty"`
}

// NewCmd returns the airdrop command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "airdrop AMOUNT [RECIPIENT]",
		Short: "Request SOL from the cluster's faucet",
		Long: `Request AMOUNT SOL (decimals allowed, like "solana airdrop") for RECIPIENT
from the selected cluster's faucet with the standard requestAirdrop method,
and wait until the airdrop is confirmed.

RECIPIENT is a base58 address or a keypair file; it defaults to your
keypair (--keypair, the Solana CLI's keypair_path, ~/.config/solana/id.json).

The local cluster ("ferry serve") funds any amount. Devnet's public faucet
is rate-limited and gives at most a few SOL; mainnet has none.

A pipe gets the signature only; a terminal also shows the new balance.`,
		Example: `  # 2 SOL for your default keypair on the local cluster
  ferry airdrop 2

  # Fund a fresh wallet
  ferry keygen --outfile alice.json && ferry airdrop 1.5 alice.json

  # On devnet
  ferry airdrop 1 --cluster devnet`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmdutil.UsageErrorf("missing AMOUNT in SOL (see '%s --help')", cmd.CommandPath())
			}
			if len(args) > 2 {
				return cmdutil.UsageErrorf("unexpected argument %q (see '%s --help')", args[2], cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return run(cmd.Context(), f, o, args)
		},
	}
	cmd.Flags().BoolVar(&o.noConfirm, "no-confirm", false, "return once the faucet accepted the request, without waiting for confirmation")
	return cmd
}

func run(ctx context.Context, f *cmdutil.Factory, o *options, args []string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := f.CheckOutput(cmdutil.OutputText, cmdutil.OutputJSON); err != nil {
		return err
	}
	lamports, err := ParseSOL(args[0])
	if err != nil {
		return cmdutil.UsageErrorf("AMOUNT: %v", err)
	}
	var recipientArg string
	if len(args) == 2 {
		recipientArg = args[1]
	}
	to, err := f.ResolveAddress(recipientArg)
	if err != nil {
		return err
	}
	ep, err := f.Endpoints()
	if err != nil {
		return err
	}
	c, err := cmdutil.BaseClient(ep)
	if err != nil {
		return err
	}
	f.IO.StartProgress(fmt.Sprintf("Airdropping %s SOL", FormatSOL(lamports)))
	res, err := airdrop(ctx, c, to, lamports, !o.noConfirm)
	f.IO.StopProgress()
	if err != nil {
		return cmdutil.ReachError(err, "RPC", ep.BaseRPC)
	}
	if f.JSON() {
		return f.PrintJSON(res)
	}
	if !f.IO.IsStdoutTTY() {
		_, err := fmt.Fprintln(f.IO.Out, res.Signature)
		return err
	}
	w := f.IO.StyledOut()
	fmt.Fprintf(w, "%s Airdropped %s SOL to %s\n", okStyle.Render("✓"), FormatSOL(lamports), to)
	fmt.Fprintf(w, "  %s %s\n", dimStyle.Render("signature"), res.Signature)
	if res.Balance != nil {
		fmt.Fprintf(w, "  %s %s SOL\n", dimStyle.Render("balance  "), FormatSOL(*res.Balance))
	}
	return nil
}

var (
	okStyle  = lipgloss.NewStyle().Foreground(lipgloss.Color("2"))
	dimStyle = lipgloss.NewStyle().Faint(true)
)

func airdrop(ctx context.Context, c *chainclient.Client, to solana.PublicKey, lamports uint64, confirm bool) (*Result, error) {
	sig, err := c.RequestAirdrop(ctx, to, lamports, chainclient.Confirmed)
	if err != nil {
		return nil, fmt.Errorf("airdrop %s SOL to %s: %w", FormatSOL(lamports), to, err)
	}
	res := &Result{Signature: sig.String(), Recipient: to.String(), Lamports: lamports}
	if !confirm {
		return res, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := cmdutil.WaitConfirmed(ctx, c, sig, &submit.Sender{PollInterval: 200 * time.Millisecond}); err != nil {
		return nil, err
	}
	res.Confirmed = true
	if b, err := c.GetBalance(ctx, to, chainclient.Confirmed); err == nil {
		res.Balance = &b
	}
	return res, nil
}

// ParseSOL parses a decimal SOL amount ("2", "0.5", ".25") into
// lamports, exactly: at most 9 decimals, positive, within a u64.
func ParseSOL(s string) (uint64, error) {
	s = strings.TrimSpace(s)
	if !decimal.MatchString(s) {
		return 0, fmt.Errorf("%q is not a decimal number of SOL", s)
	}
	r, _ := new(big.Rat).SetString(s)
	r.Mul(r, new(big.Rat).SetInt64(LamportsPerSOL))
	if !r.IsInt() {
		return 0, fmt.Errorf("%s SOL has more than 9 decimals", s)
	}
	n := r.Num()
	if n.Sign() <= 0 {
		return 0, fmt.Errorf("the amount must be positive")
	}
	if !n.IsUint64() {
		return 0, fmt.Errorf("%s SOL is too large", s)
	}
	return n.Uint64(), nil
}

var decimal = regexp.MustCompile(`^([0-9]+(\.[0-9]*)?|\.[0-9]+)$`)

// FormatSOL writes lamports as SOL without trailing zeros ("1.5").
func FormatSOL(lamports uint64) string { return spl.UIAmountString(lamports, 9) }
