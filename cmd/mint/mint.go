// Package mint implements `ferry mint`: test tokens from the local faucet
// of `ferry serve` (its ferry_createMint and ferry_mintTo RPC methods).
package mint

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/gagliardetto/solana-go"
	"github.com/spf13/cobra"

	"github.com/ferry-sh/ferry/cmd/cmdutil"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/rpcserver"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/submit"
)

type options struct {
	mint      string
	create    bool
	decimals  int
	token2022 bool
}

// Result is the JSON output of a mint to a wallet.
type Result struct {
	Signature string `json:"signature"`
	Mint      string `json:"mint"`
	Recipient string `json:"recipient"`
	ATA       string `json:"ata"`
	Amount    string `json:"amount"`
	// Balance is the recipient's token balance afterwards (confirmed).
	Balance  string `json:"balance,omitempty"`
	Decimals *uint8 `json:"decimals,omitempty"`
}

// NewCmd returns the mint command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "mint AMOUNT [RECIPIENT]",
		Short: "Mint test tokens from the local faucet",
		Long: `Mint AMOUNT base units (like --amount everywhere in ferry: 1000000 is 1 token
of a 6-decimals mint) of a test mint to RECIPIENT's associated token account,
creating the account if needed, and wait until it is confirmed.

RECIPIENT is a base58 address or a keypair file; it defaults to your
keypair. --mint defaults to the demo mint of "ferry serve" (the one its
banner prints).

--create makes a new test mint instead (6 decimals unless --decimals) whose
mint authority is the faucet, and prints its address.

This is the local cluster's faucet: "ferry serve" answers the local-only
JSON-RPC methods ferry_faucetInfo, ferry_createMint and ferry_mintTo on its
base-layer RPC (see docs/guide.md). Real clusters have no such faucet: get
devnet tokens from their issuer (e.g. Circle's faucet for devnet USDC).

A pipe gets the signature (with --create, the mint address) only.`,
		Example: `  # 100 demo tokens (6 decimals) for your default keypair
  ferry mint 100000000

  # For another wallet, of another faucet mint
  ferry mint 5000000 alice.json --mint $MINT

  # A new test mint with 9 decimals
  MINT=$(ferry mint --create --decimals 9)`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case o.create && len(args) > 0:
				return cmdutil.UsageErrorf("--create takes no arguments; mint to the new mint with a second 'ferry mint AMOUNT --mint MINT'")
			case !o.create && len(args) == 0:
				return cmdutil.UsageErrorf("missing AMOUNT in base units (see '%s --help')", cmd.CommandPath())
			case len(args) > 2:
				return cmdutil.UsageErrorf("unexpected argument %q (see '%s --help')", args[2], cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return run(cmd.Context(), f, o, cmd, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.mint, "mint", "", "mint to mint from (default: the demo mint of ferry serve)")
	fl.BoolVar(&o.create, "create", false, "create a new test mint (the faucet is its authority) and print its address")
	fl.IntVar(&o.decimals, "decimals", rpcserver.DefaultFaucetMintDecimals, "with --create: the mint's decimals")
	fl.BoolVar(&o.token2022, "token-2022", false, "with --create: a Token-2022 mint instead of SPL Token")
	return cmd
}

func run(ctx context.Context, f *cmdutil.Factory, o *options, cmd *cobra.Command, args []string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := f.CheckOutput(cmdutil.OutputText, cmdutil.OutputJSON); err != nil {
		return err
	}
	if !o.create && (cmd.Flags().Changed("decimals") || o.token2022) {
		return cmdutil.UsageErrorf("--decimals and --token-2022 only apply with --create")
	}
	if o.create && o.mint != "" {
		return cmdutil.UsageErrorf("--create and --mint are exclusive")
	}
	ep, err := f.Endpoints()
	if err != nil {
		return err
	}
	c, err := cmdutil.BaseClient(ep)
	if err != nil {
		return err
	}
	fail := func(err error) error { return faucetError(err, ep.BaseRPC) }
	if o.create {
		return create(ctx, f, c, o, fail)
	}

	amount, err := cmdutil.ParseBaseUnits(args[0])
	if err != nil || amount == 0 {
		return cmdutil.UsageErrorf("AMOUNT must be a positive whole number of base units (got %q)", args[0])
	}
	var recipientArg string
	if len(args) == 2 {
		recipientArg = args[1]
	}
	owner, err := f.ResolveAddress(recipientArg)
	if err != nil {
		return err
	}
	var mint solana.PublicKey
	if o.mint != "" {
		if mint, err = solana.PublicKeyFromBase58(o.mint); err != nil {
			return cmdutil.UsageErrorf("--mint: %v", err)
		}
	} else {
		var info rpcserver.FaucetInfo
		if err := c.Call(ctx, rpcserver.MethodFaucetInfo, nil, &info); err != nil {
			return fail(err)
		}
		if info.DefaultMint == nil {
			return cmdutil.UsageErrorf("--mint is required: the node at %s has no demo mint", chainclient.RedactURL(ep.BaseRPC))
		}
		mint = solana.MustPublicKeyFromBase58(*info.DefaultMint)
	}

	f.IO.StartProgress("Minting")
	res, err := mintTo(ctx, c, mint, owner, amount)
	f.IO.StopProgress()
	if err != nil {
		return fail(err)
	}
	if f.JSON() {
		return f.PrintJSON(res)
	}
	if !f.IO.IsStdoutTTY() {
		_, err := fmt.Fprintln(f.IO.Out, res.Signature)
		return err
	}
	w := f.IO.StyledOut()
	ui := func(units string) string {
		n, _ := strconv.ParseUint(units, 10, 64)
		if res.Decimals == nil {
			return units + " units"
		}
		return fmt.Sprintf("%s (%s units)", spl.UIAmountString(n, *res.Decimals), units)
	}
	fmt.Fprintf(w, "%s Minted %s of %s to %s\n", okStyle.Render("✓"), ui(res.Amount), res.Mint, res.Recipient)
	fmt.Fprintf(w, "  %s %s\n", dimStyle.Render("signature"), res.Signature)
	if res.Balance != "" {
		fmt.Fprintf(w, "  %s %s\n", dimStyle.Render("balance  "), ui(res.Balance))
	}
	return nil
}

var (
	okStyle  = lipgloss.NewStyle().Foreground(lipgloss.Color("2"))
	dimStyle = lipgloss.NewStyle().Faint(true)
)

func create(ctx context.Context, f *cmdutil.Factory, c *chainclient.Client, o *options, fail func(error) error) error {
	if o.decimals < 0 || o.decimals > 18 {
		return cmdutil.UsageErrorf("--decimals must be between 0 and 18")
	}
	f.IO.StartProgress("Creating a mint")
	var res rpcserver.CreateMintResult
	err := c.Call(ctx, rpcserver.MethodCreateMint, []any{map[string]any{"decimals": o.decimals, "token2022": o.token2022}}, &res)
	if err == nil {
		err = confirm(ctx, c, res.Signature)
	}
	f.IO.StopProgress()
	if err != nil {
		return fail(err)
	}
	if f.JSON() {
		return f.PrintJSON(res)
	}
	if !f.IO.IsStdoutTTY() {
		_, err := fmt.Fprintln(f.IO.Out, res.Mint)
		return err
	}
	w := f.IO.StyledOut()
	fmt.Fprintf(w, "%s Created mint %s (%d decimals; the faucet is its mint authority)\n", okStyle.Render("✓"), res.Mint, res.Decimals)
	fmt.Fprintf(w, "  %s %s\n", dimStyle.Render("signature"), res.Signature)
	fmt.Fprintf(w, "\n%s ferry mint %d --mint %s\n", dimStyle.Render("Next:"), pow10(res.Decimals)*100, res.Mint)
	return nil
}

func pow10(d uint8) uint64 {
	n := uint64(1)
	for range d {
		n *= 10
	}
	return n
}

func confirm(ctx context.Context, c *chainclient.Client, s string) error {
	sig, err := solana.SignatureFromBase58(s)
	if err != nil {
		return fmt.Errorf("faucet answered %q, not a signature", s)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	return cmdutil.WaitConfirmed(ctx, c, sig, &submit.Sender{PollInterval: 200 * time.Millisecond})
}

func mintTo(ctx context.Context, c *chainclient.Client, mint, owner solana.PublicKey, amount uint64) (*Result, error) {
	var s string
	if err := c.Call(ctx, rpcserver.MethodMintTo, []any{mint.String(), owner.String(), amount}, &s); err != nil {
		return nil, err
	}
	if err := confirm(ctx, c, s); err != nil {
		return nil, err
	}
	res := &Result{Signature: s, Mint: mint.String(), Recipient: owner.String(), Amount: strconv.FormatUint(amount, 10)}
	if a, err := c.GetAccountInfo(ctx, mint, chainclient.Confirmed); err == nil && a != nil {
		if m, err := spl.DecodeMint(a.Data); err == nil {
			res.Decimals = &m.Decimals
		}
		ata := spl.AssociatedTokenAddress(owner, mint, a.Owner)
		res.ATA = ata.String()
		if b, err := c.GetTokenAccountBalance(ctx, ata, chainclient.Confirmed); err == nil {
			res.Balance = strconv.FormatUint(b.Amount, 10)
		}
	}
	return res, nil
}

// faucetError explains a node without the local faucet methods.
func faucetError(err error, baseURL string) error {
	var re *chainclient.RPCError
	if errors.As(err, &re) && re.Code == rpcserver.CodeMethodNotFound {
		return fmt.Errorf("the node at %s has no test-token faucet (ferry_mintTo): ferry mint works against \"ferry serve\" only; on devnet get tokens from the mint's issuer", chainclient.RedactURL(baseURL))
	}
	if errors.As(err, &re) {
		return &chainclient.RPCError{Code: re.Code, Message: re.Message}
	}
	return cmdutil.ReachError(err, "RPC", baseURL)
}
