package serve

import (
	"fmt"
	"io"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/ferry-sh/ferry/pkg/cluster"
	"github.com/ferry-sh/ferry/pkg/server"
	"github.com/ferry-sh/ferry/pkg/spl"
)

var (
	titleStyle = lipgloss.NewStyle().Bold(true)
	keyStyle   = lipgloss.NewStyle().Faint(true)
	urlStyle   = lipgloss.NewStyle().Foreground(lipgloss.Color("6"))
	nameStyle  = lipgloss.NewStyle().Foreground(lipgloss.Color("5")).Bold(true)
	okStyle    = lipgloss.NewStyle().Foreground(lipgloss.Color("2"))
)

// writeBanner prints what serve started: every endpoint, and in local mode
// the validator, faucet, demo mint and wallets, with commands to try.
// Write it through a styled writer so that pipes get plain text.
func writeBanner(w io.Writer, info *server.Info) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	row := func(k, v string) { p("  %s %s\n", keyStyle.Render(fmt.Sprintf("%-14s", k)), v) }
	if info.Mode == server.ModeGateway {
		p("%s\n\n", titleStyle.Render("ferry serve: gateway to "+info.Cluster))
	} else {
		state := "continuing"
		switch {
		case info.Created:
			state = "new"
		case info.DemoCreated:
			state = "continuing; the demo was created now: the last start stopped before finishing it"
		}
		where := "in memory"
		if info.DataDir != "" {
			where = fmt.Sprintf("data in %s (%s)", info.DataDir, state)
		}
		p("%s\n\n", titleStyle.Render("ferry serve: local cluster, "+where))
	}
	row("Payments API", urlStyle.Render(info.URLs[server.KeyAPI])+keyStyle.Render("  (/doc, /reference)"))
	row("MCP", urlStyle.Render(info.MCP))
	if info.Explorer != "" {
		row("Explorer", urlStyle.Render(info.Explorer))
	}
	if u, ok := info.URLs[server.KeyRPC]; ok {
		row("Base RPC", urlStyle.Render(u))
	}
	if u, ok := info.URLs[server.KeyRPCWS]; ok {
		row("Base WS", urlStyle.Render(u))
	}
	if u, ok := info.URLs[server.KeyEphemeral]; ok {
		row("Ephemeral RPC", urlStyle.Render(u))
	}
	if u, ok := info.URLs[server.KeyEphemeralWS]; ok {
		row("Ephemeral WS", urlStyle.Render(u))
	}
	row("Router", urlStyle.Render(info.URLs[server.KeyRouter]))
	if info.Upstream != nil {
		row("Upstream RPC", info.Upstream.BaseRPC)
		row("Upstream ER", info.Upstream.Ephemeral)
	}
	if info.Validator != "" {
		p("\n")
		row("Validator", info.Validator)
		row("Faucet", info.Faucet)
	}
	if fk := info.Fork; fk != nil {
		row("Forked from", fmt.Sprintf("%s at slot %d (accounts copied on first use; %d cloned at start)", fk.URL, fk.Slot, fk.Cloned))
	}
	if info.Mode == server.ModeGateway {
		p("\n%s\n", titleStyle.Render("Rollup nodes"))
		for _, r := range info.Routes {
			p("  %s  %s\n", r.Identity, urlStyle.Render(r.FQDN))
		}
	}
	if d := info.Demo; d != nil {
		p("\n%s %s %s\n", titleStyle.Render("Demo mint"), d.Mint,
			keyStyle.Render(fmt.Sprintf("(%d decimals, set up for private payments; `ferry mint` mints more)", d.Decimals)))
		if len(d.Wallets) > 0 {
			w0 := d.Wallets[0]
			when := "at creation"
			if info.DemoCreated && !info.Created {
				when = "now"
			}
			p("\n%s %s\n", titleStyle.Render("Demo wallets"),
				keyStyle.Render(fmt.Sprintf("(funded %s with %s SOL and %s tokens each)",
					when, spl.UIAmountString(w0.Lamports, 9), spl.UIAmountString(w0.Tokens, d.Decimals))))
			width := 0
			for _, wl := range d.Wallets {
				width = max(width, len(wl.Name))
			}
			for _, wl := range d.Wallets {
				p("  %s  %s  %s\n", nameStyle.Render(fmt.Sprintf("%-*s", width, wl.Name)), wl.Address, keyStyle.Render(wl.Keypair))
			}
		}
	}
	if env := cliEnv(info); env != "" {
		p("\n%s\n  %s\n", keyStyle.Render("The CLI's local cluster uses the default addresses; point it here with:"), env)
	}
	if d := info.Demo; d != nil && len(d.Wallets) > 1 {
		a, b := d.Wallets[0], d.Wallets[1]
		p("\n%s\n", titleStyle.Render("Try, in another terminal:"))
		p("  ferry balance %s\n", a.Keypair)
		p("  ferry deposit --sign %s --amount 10000000 --output json | ferry send --confirm\n", a.Keypair)
		p("  ferry transfer --sign %s --to %s --mint %s --amount 1000000 \\\n", a.Keypair, b.Address, d.Mint)
		p("    --visibility private --from-balance ephemeral --to-balance base --output json | ferry send --confirm\n")
	}
	p("\n%s %s\n", okStyle.Render(fmt.Sprintf("Ready in %.0f ms.", info.StartupMs)), keyStyle.Render("Press Ctrl-C to stop."))
}

// cliEnv returns the environment that points the CLI at these endpoints
// when they are not the local cluster's defaults ("" when they are).
func cliEnv(info *server.Info) string {
	if info.Mode != server.ModeLocal {
		return ""
	}
	defaults := map[string]string{
		server.KeyAPI: cluster.LocalAPI, server.KeyRPC: cluster.LocalBaseRPC,
		server.KeyEphemeral: cluster.LocalEphemeral, server.KeyRouter: cluster.LocalRouter,
	}
	names := map[string]string{
		server.KeyAPI: "FERRY_API_URL", server.KeyRPC: "FERRY_RPC_URL",
		server.KeyEphemeral: "FERRY_EPHEMERAL_URL", server.KeyRouter: "FERRY_ROUTER_URL",
	}
	var parts []string
	for _, k := range []string{server.KeyAPI, server.KeyRPC, server.KeyEphemeral, server.KeyRouter} {
		if u := info.URLs[k]; u != "" && u != defaults[k] {
			parts = append(parts, names[k]+"="+u)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "export " + strings.Join(parts, " ")
}
