// Package login implements `ferry login`: get a login challenge from the
// cluster's payments API, sign it with the keypair and store the bearer
// token for that cluster and wallet.
package login

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"net/url"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/mr-tron/base58"
	"github.com/spf13/cobra"

	"github.com/ferry-sh/ferry/cmd/cmdutil"
	"github.com/ferry-sh/ferry/pkg/auth"
	"github.com/ferry-sh/ferry/pkg/chainclient"
)

// Result is the JSON output. It never contains the token.
type Result struct {
	Cluster   string `json:"cluster"`
	Wallet    string `json:"wallet"`
	API       string `json:"api"`
	ExpiresAt *int64 `json:"expiresAt,omitempty"`
	TokenFile string `json:"tokenFile"`
}

// NewCmd returns the login command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "login",
		Short: "Log in to the cluster's payments API with your keypair",
		Long: `Log in with your keypair: ask the selected cluster's payments API for a
login challenge (GET /v1/spl/challenge), sign it with the keypair
(--keypair, else the Solana CLI's) and exchange the signature for a bearer
token (POST /v1/spl/login).

The token is stored per cluster and wallet in $FERRY_HOME/tokens.json
(mode 0600) and never printed. ferry uses it where a token is needed: sends
to a private (TEE) rollup; private balances and the private records that
"send --confirm" and "confirm --watch" follow, on the local rollup of
"ferry serve" (which, like a TEE rollup, shows them only to their owner) and
on devnet-private and mainnet-private, whose TEE auth service issues the
token through the API.

The API is that of --cluster: a running "ferry serve" for local, the hosted
payments API for devnet and mainnet; FERRY_API_URL or the config file's
"api" replace it.`,
		Example: `  # Against the local ferry serve
  ferry login

  # As another wallet
  ferry login --keypair alice.json

  # The devnet TEE rollup (tokens come from its auth service)
  ferry login --cluster devnet-private`,
		Args: cmdutil.MaxArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			return run(ctx, f)
		},
	}
}

func run(ctx context.Context, f *cmdutil.Factory) error {
	if err := f.CheckOutput(cmdutil.OutputText, cmdutil.OutputJSON); err != nil {
		return err
	}
	key, err := f.LoadKeypair()
	if err != nil {
		return fmt.Errorf("login needs your keypair: %w", err)
	}
	wallet := cmdutil.PublicKeyOf(key).String()
	ep, err := f.Endpoints()
	if err != nil {
		return err
	}
	api, err := cmdutil.NewAPIClient(ep.API)
	if err != nil {
		return err
	}
	var ch auth.ChallengeResponse
	if err := api.Get(ctx, "/v1/spl/challenge", url.Values{"pubkey": {wallet}, "cluster": {ep.Name}}, &ch); err != nil {
		return cmdutil.ReachError(err, "payments API", ep.API)
	}
	if ch.Challenge == "" {
		return fmt.Errorf("login: the payments API at %s sent no challenge", chainclient.RedactURL(ep.API))
	}
	sig := base58.Encode(ed25519.Sign(key, []byte(ch.Challenge)))
	var lr auth.LoginResponse
	req := auth.LoginRequest{Pubkey: wallet, Challenge: ch.Challenge, Signature: sig, Cluster: ep.Name}
	if err := api.Post(ctx, "/v1/spl/login", req, &lr); err != nil {
		return cmdutil.ReachError(err, "payments API", ep.API)
	}
	if lr.Token == "" {
		return fmt.Errorf("login: the payments API at %s returned no token", chainclient.RedactURL(ep.API))
	}
	path, err := f.SaveLoginToken(ep.Name, wallet, cmdutil.StoredToken{Token: lr.Token, ExpiresAt: lr.ExpiresAt, API: api.Base})
	if err != nil {
		return err
	}
	res := Result{Cluster: ep.Name, Wallet: wallet, API: chainclient.RedactURL(api.Base), ExpiresAt: lr.ExpiresAt, TokenFile: path}
	if f.JSON() {
		return f.PrintJSON(res)
	}
	w := f.IO.StyledOut()
	fmt.Fprintf(w, "%s Logged in to %s as %s\n", okStyle.Render("✓"), ep.Name, wallet)
	if lr.ExpiresAt != nil {
		fmt.Fprintf(w, "  %s %s\n", dimStyle.Render("expires"), time.UnixMilli(*lr.ExpiresAt).UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(w, "  %s %s\n", dimStyle.Render("token  "), "stored in "+path)
	return nil
}

var (
	okStyle  = lipgloss.NewStyle().Foreground(lipgloss.Color("2"))
	dimStyle = lipgloss.NewStyle().Faint(true)
)
