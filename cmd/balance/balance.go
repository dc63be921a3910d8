// Package balance implements `ferry balance`: a wallet's SOL and token
// balances on the base layer and its private balance on the ephemeral
// rollup.
package balance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"charm.land/lipgloss/v2"
	"github.com/gagliardetto/solana-go"
	"github.com/spf13/cobra"

	"github.com/ferry-sh/ferry/cmd/cmdutil"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/cluster"
	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/rpcserver"
	"github.com/ferry-sh/ferry/pkg/spl"
)

type options struct {
	mint string
}

// Result is the JSON output. Token amounts are strings of base units, as
// in the payments API.
type Result struct {
	Address  string `json:"address"`
	Cluster  string `json:"cluster"`
	Lamports uint64 `json:"lamports"`
	SOL      string `json:"sol"`
	// Mint is the token shown ("" when none: no --mint and the cluster has
	// no default mint).
	Mint     string `json:"mint,omitempty"`
	Decimals *uint8 `json:"decimals,omitempty"`
	ATA      string `json:"ata,omitempty"`
	// Base is the amount in the wallet's associated token account on base.
	Base string `json:"base,omitempty"`
	// Ephemeral is the private balance on the rollup; null when it could
	// not be read without a login token (EphemeralNote says why).
	Ephemeral     *string `json:"ephemeral,omitempty"`
	EphemeralNote string  `json:"ephemeralNote,omitempty"`
}

// NewCmd returns the balance command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "balance [ADDRESS|KEYPAIR]",
		Short: "Show a wallet's SOL, base-layer token and private (rollup) balances",
		Long: `Show a wallet's balances on the selected cluster: SOL and the token balance of
its associated token account on the base layer, and its private balance on
the ephemeral rollup (the amount its delegated ephemeral ATA holds there).

The wallet is a base58 address or a keypair file, by default your keypair.
The token is --mint, else the cluster's default mint: the demo mint of
"ferry serve" on the local cluster, USDC on devnet and mainnet.

Balances are read straight from the cluster's chain nodes with the same code
as the payments API's /v1/spl/balance and /v1/spl/private-balance, so no
payments API is needed. Public rollups (devnet, mainnet) answer without a
token; private TEE rollups (devnet-private, mainnet-private) and the local
rollup of "ferry serve" show a private balance only with the token "ferry
login" stores for the wallet, and without one it is left out.

A terminal gets a summary with amounts in whole tokens; a pipe gets one
"name<TAB>value" line per field, with amounts in base units; --output json
the same fields as an object.`,
		Example: `  # Your balances on the local cluster (demo mint)
  ferry balance

  # Another wallet, another mint
  ferry balance alice.json --mint $MINT

  # Devnet USDC; the TEE rollup needs a login first
  ferry login --cluster devnet-private && ferry balance --cluster devnet-private

  # Just the private balance, for scripts
  ferry balance $ALICE --output json | jq -r .ephemeral`,
		Args: cmdutil.MaxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return run(cmd.Context(), f, o, args)
		},
	}
	cmd.Flags().StringVar(&o.mint, "mint", "", "token mint (default: the cluster's default mint)")
	return cmd
}

func run(ctx context.Context, f *cmdutil.Factory, o *options, args []string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := f.CheckOutput(cmdutil.OutputText, cmdutil.OutputJSON); err != nil {
		return err
	}
	var arg string
	if len(args) == 1 {
		arg = args[0]
	}
	owner, err := f.ResolveAddress(arg)
	if err != nil {
		return err
	}
	ep, err := f.Endpoints()
	if err != nil {
		return err
	}
	base, eph, err := cmdutil.Clients(ep)
	if err != nil {
		return err
	}
	res := &Result{Address: owner.String(), Cluster: ep.Name}
	if res.Lamports, err = base.GetBalance(ctx, owner, chainclient.Confirmed); err != nil {
		return cmdutil.ReachError(err, "base RPC", ep.BaseRPC)
	}
	res.SOL = spl.UIAmountString(res.Lamports, 9)

	mint, err := pickMint(ctx, o.mint, ep, base)
	if err != nil {
		return err
	}
	if !mint.IsZero() {
		if err := tokenBalances(ctx, f, ep, base, eph, owner, mint, res); err != nil {
			return err
		}
	}
	if f.JSON() {
		return f.PrintJSON(res)
	}
	if !f.IO.IsStdoutTTY() {
		return writePlain(f.IO.Out, res)
	}
	return writeSummary(f.IO.StyledOut(), res)
}

// pickMint is --mint, else the cluster's default mint (zero when none).
func pickMint(ctx context.Context, flag string, ep cluster.Endpoints, base *chainclient.Client) (solana.PublicKey, error) {
	if flag != "" {
		m, err := solana.PublicKeyFromBase58(flag)
		if err != nil {
			return m, cmdutil.UsageErrorf("--mint: %v", err)
		}
		return m, nil
	}
	switch ep.Kind {
	case cluster.Devnet:
		return espl.USDCDevnet, nil
	case cluster.Mainnet, cluster.Custom:
		return espl.USDCMainnet, nil
	}
	// The local cluster: the demo mint of ferry serve, if it has one.
	var info rpcserver.FaucetInfo
	if err := base.Call(ctx, rpcserver.MethodFaucetInfo, nil, &info); err != nil || info.DefaultMint == nil {
		return solana.PublicKey{}, nil
	}
	return solana.PublicKeyFromBase58(*info.DefaultMint)
}

func tokenBalances(ctx context.Context, f *cmdutil.Factory, ep cluster.Endpoints, base, eph *chainclient.Client, owner, mint solana.PublicKey, res *Result) error {
	res.Mint = mint.String()
	if a, err := base.GetAccountInfo(ctx, mint, chainclient.Confirmed); err == nil && a != nil {
		if m, err := spl.DecodeMint(a.Data); err == nil {
			res.Decimals = &m.Decimals
		}
	}
	if ep.TEE {
		if st, ok := f.LoginToken(ep.Name, owner.String()); ok {
			eph = eph.WithToken(st.Inner())
		} else {
			eph = nil
		}
	} else if st, ok := f.LoginToken(ep.Name, owner.String()); ok && ep.Kind == cluster.Local {
		// ferry serve's rollup shows a private balance only to its owner.
		eph = eph.WithToken(st.Inner())
	}
	chain := &payments.RPCChain{Base: chainclient.NewCached(base, chainclient.CacheOptions{}), Kind: ep.Kind}
	if eph != nil {
		chain.Ephemeral = chainclient.NewCached(eph, chainclient.CacheOptions{})
	}
	planner := &payments.Planner{}
	req := &payments.BalanceRequest{Address: owner.String(), Mint: mint.String(), Cluster: ep.Name}
	b, err := planner.BaseBalance(ctx, chain, req)
	if err != nil {
		return reach(err, "base RPC", ep.BaseRPC)
	}
	res.ATA, res.Base = b.ATA, b.Balance
	if ep.Ephemeral == "" {
		res.EphemeralNote = "no rollup is paired with this custom base layer: pass --ephemeral-url to read the private balance"
		return nil
	}
	if eph == nil {
		res.EphemeralNote = fmt.Sprintf("the %s rollup needs a login token: run `ferry login --cluster %s`", ep.Name, ep.Name)
		return nil
	}
	p, err := planner.PrivateBalance(ctx, chain, ephemeralReader{eph}, req)
	var re *chainclient.RPCError
	if errors.As(err, &re) && re.Code == rpcserver.CodeAccountAccessDenied {
		res.EphemeralNote = fmt.Sprintf("the %s rollup shows a private balance only to its owner: run `ferry login --cluster %s` with this wallet", ep.Name, ep.Name)
		return nil
	}
	if err != nil {
		return reach(err, "ephemeral RPC", ep.Ephemeral)
	}
	res.Ephemeral = &p.Balance
	return nil
}

// ephemeralReader reads rollup accounts for payments.PrivateBalance.
type ephemeralReader struct{ c *chainclient.Client }

func (r ephemeralReader) EphemeralAccount(ctx context.Context, key solana.PublicKey) (*payments.Account, error) {
	a, err := r.c.GetAccountInfo(ctx, key, chainclient.Confirmed)
	if err != nil || a == nil {
		return nil, err
	}
	return &payments.Account{Owner: a.Owner, Lamports: a.Lamports, Data: a.Data}, nil
}

// reach names an endpoint that could not be contacted, keeping API errors
// (MINT_NOT_FOUND, ...) as they are.
func reach(err error, what, u string) error {
	var te *chainclient.TransportError
	if errors.As(err, &te) {
		return cmdutil.ReachError(te, what, u)
	}
	return err
}

func writePlain(w io.Writer, r *Result) error {
	line := func(k, v string) { fmt.Fprintf(w, "%s\t%s\n", k, v) }
	line("address", r.Address)
	line("cluster", r.Cluster)
	line("lamports", strconv.FormatUint(r.Lamports, 10))
	if r.Mint != "" {
		line("mint", r.Mint)
		if r.Decimals != nil {
			line("decimals", strconv.Itoa(int(*r.Decimals)))
		}
		line("base", r.Base)
		if r.Ephemeral != nil {
			line("ephemeral", *r.Ephemeral)
		}
	}
	return nil
}

var (
	headStyle = lipgloss.NewStyle().Bold(true)
	keyStyle  = lipgloss.NewStyle().Faint(true)
	warnStyle = lipgloss.NewStyle().Foreground(lipgloss.Color("3"))
)

func writeSummary(w io.Writer, r *Result) error {
	fmt.Fprintf(w, "%s %s\n", headStyle.Render(r.Address), keyStyle.Render("on "+r.Cluster))
	row := func(k, v string) { fmt.Fprintf(w, "  %s %s\n", keyStyle.Render(fmt.Sprintf("%-10s", k)), v) }
	row("SOL", r.SOL)
	if r.Mint == "" {
		fmt.Fprintf(w, "\n%s pass --mint to see a token balance\n", keyStyle.Render("Tip:"))
		return nil
	}
	amount := func(units string) string {
		if r.Decimals == nil {
			return units + " units"
		}
		n, _ := strconv.ParseUint(units, 10, 64)
		return fmt.Sprintf("%s %s", spl.UIAmountString(n, *r.Decimals), keyStyle.Render("("+units+" units)"))
	}
	row("mint", r.Mint)
	row("base", amount(r.Base))
	if r.Ephemeral != nil {
		row("ephemeral", amount(*r.Ephemeral))
	} else {
		row("ephemeral", warnStyle.Render(r.EphemeralNote))
	}
	return nil
}
