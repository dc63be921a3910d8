// Package routes implements `ferry routes`: list the ephemeral-rollup nodes
// the selected cluster's router knows.
package routes

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"charm.land/lipgloss/v2/table"
	"github.com/spf13/cobra"

	"github.com/ferry-sh/ferry/cmd/cmdutil"
	"github.com/ferry-sh/ferry/pkg/chainclient"
)

// NewCmd returns the routes command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "routes",
		Short: "List the ephemeral rollup nodes of the cluster's router",
		Long: `List the ephemeral rollup (ER) nodes the selected cluster's MagicBlock router
knows (its getRoutes method): each node's validator identity, RPC endpoint,
block time, base fee and country.

On a terminal the nodes are shown as a table, fastest block time first. In a
pipe each node is one tab-separated line: identity, endpoint, block time in
ms, base fee in lamports, country code. --output json prints the router's
array unchanged.

The router is that of --cluster (default local, the router of a running
"ferry serve"); FERRY_ROUTER_URL or the config file's "router" override it.`,
		Example: `  # Nodes of the local ferry serve
  ferry routes

  # MagicBlock's devnet rollups
  ferry routes --cluster devnet

  # Endpoints only, for scripts
  ferry routes --output json | jq -r '.[].fqdn'`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return cmdutil.UsageErrorf("unexpected argument %q (see '%s --help')", args[0], cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.CheckOutput(cmdutil.OutputText, cmdutil.OutputJSON); err != nil {
				return err
			}
			ep, err := f.Endpoints()
			if err != nil {
				return err
			}
			if err := cmdutil.RequireRouter(ep); err != nil {
				return err
			}
			c, err := chainclient.New(ep.Router)
			if err != nil {
				return cmdutil.UsageErrorf("router URL: %v", err)
			}
			routes, err := c.GetRoutes(cmd.Context())
			if err != nil {
				return cmdutil.ReachError(err, "router", ep.Router)
			}
			if f.JSON() {
				return f.PrintJSON(routes)
			}
			sorted := slices.Clone(routes)
			slices.SortStableFunc(sorted, func(a, b chainclient.Route) int { return cmp.Compare(a.BlockTimeMs, b.BlockTimeMs) })
			if !f.IO.IsStdoutTTY() {
				return writePlain(f.IO.Out, sorted)
			}
			if len(sorted) == 0 {
				fmt.Fprintf(f.IO.ErrOut, "The router at %s lists no rollup nodes.\n", chainclient.RedactURL(ep.Router))
				return nil
			}
			_, err = fmt.Fprintln(f.IO.StyledOut(), Table(sorted))
			return err
		},
	}
}

// writePlain writes one tab-separated line per node.
func writePlain(w io.Writer, routes []chainclient.Route) error {
	for _, r := range routes {
		if _, err := fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%s\n", r.Identity, r.FQDN, r.BlockTimeMs, r.BaseFee, r.CountryCode); err != nil {
			return err
		}
	}
	return nil
}

const columns = 5

// Table renders routes as a table with ANSI styles; print it through a
// styled writer (iostreams.StyledOut) so pipes get plain text.
func Table(routes []chainclient.Route) string {
	rows := make([][]string, len(routes))
	for i, r := range routes {
		rows[i] = []string{r.Identity.String(), r.FQDN, strconv.Itoa(int(r.BlockTimeMs)) + " ms", strconv.Itoa(int(r.BaseFee)), r.CountryCode}
	}
	t := table.New().
		Border(lipgloss.NormalBorder()).
		BorderTop(false).BorderBottom(false).BorderLeft(false).BorderRight(false).
		BorderColumn(false).BorderHeader(true).
		BorderStyle(lipgloss.NewStyle().Faint(true)).
		Headers("IDENTITY", "ENDPOINT", "BLOCK TIME", "BASE FEE", "COUNTRY").
		Rows(rows...).
		StyleFunc(func(row, col int) lipgloss.Style {
			s := lipgloss.NewStyle()
			if col < columns-1 {
				s = s.PaddingRight(2)
			}
			if row == table.HeaderRow {
				s = s.Bold(true)
			}
			return s
		}).
		Render()
	// The table pads the last column to its width; drop that trailing space.
	lines := strings.Split(t, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}
