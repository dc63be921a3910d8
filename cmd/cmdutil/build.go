package cmdutil

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/gagliardetto/solana-go"
	"github.com/spf13/cobra"

	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/cluster"
	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// BuildFlags are the signing and offline flags every build command shares.
type BuildFlags struct {
	Sign                 []string
	Blockhash            string
	LastValidBlockHeight uint64
	TokenProgram         string
}

// AddBuildFlags registers --sign, --blockhash, --last-valid-block-height and
// --token-program.
func AddBuildFlags(cmd *cobra.Command, bf *BuildFlags) {
	fl := cmd.Flags()
	fl.StringArrayVar(&bf.Sign, "sign", nil, "sign with this Solana CLI keypair file (repeatable)")
	fl.StringVar(&bf.Blockhash, "blockhash", "", "build offline with this recent blockhash (no RPC)")
	fl.Uint64Var(&bf.LastValidBlockHeight, "last-valid-block-height", 0, "with --blockhash: the blockhash's last valid block height")
	fl.StringVar(&bf.TokenProgram, "token-program", "", "with --blockhash: the mint's token program (spl-token, token-2022 or an address)")
	_ = cmd.RegisterFlagCompletionFunc("token-program", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"spl-token", "token-2022"}, cobra.ShellCompDirectiveNoFileComp
	})
	cmd.Flags().SortFlags = false
}

// Offline reports whether the build must not touch the network.
func (bf *BuildFlags) Offline() bool { return bf.Blockhash != "" }

// Signers reads the --sign keypair files. An unreadable one is an error
// that names the flag and the cause (no such file, not a keypair, no
// permission).
func (bf *BuildFlags) Signers() ([]ed25519.PrivateKey, error) {
	var keys []ed25519.PrivateKey
	for _, p := range bf.Sign {
		k, err := ReadKeypairFile(p)
		if err != nil {
			return nil, &InputError{Err: fmt.Errorf("--sign: %w", err)}
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// DefaultSigner is the public key a build command uses for from/owner/payer
// when the flag is absent: the first --sign key, else the default keypair
// (if one can be read; ok is false when there is none). A --sign file
// that cannot be read is an error, never a silently missing signer.
func (f *Factory) DefaultSigner(bf *BuildFlags) (key solana.PublicKey, ok bool, err error) {
	if len(bf.Sign) > 0 {
		keys, err := bf.Signers()
		if err != nil {
			return solana.PublicKey{}, false, err
		}
		return PublicKeyOf(keys[0]), true, nil
	}
	k, err := f.LoadKeypair()
	if err == nil {
		return PublicKeyOf(k), true, nil
	}
	if f.Keypair != "" || f.Getenv("FERRY_KEYPAIR") != "" {
		// A keypair the user named explicitly must exist.
		return solana.PublicKey{}, false, &InputError{Err: fmt.Errorf("--keypair: %w", err)}
	}
	return solana.PublicKey{}, false, nil
}

// Chain returns what the planner reads: fixed values with --blockhash, or
// the selected cluster's RPC endpoints.
func (f *Factory) Chain(bf *BuildFlags) (payments.Chain, error) {
	ep, err := f.Endpoints()
	if err != nil {
		return nil, err
	}
	if bf.Offline() {
		bh, err := solana.HashFromBase58(bf.Blockhash)
		if err != nil {
			return nil, UsageErrorf("--blockhash: not a base58 hash: %v", err)
		}
		if bf.LastValidBlockHeight == 0 {
			return nil, UsageErrorf("--blockhash needs --last-valid-block-height")
		}
		fc := &payments.FixedChain{Blockhash: bh, LastValidBlockHeight: bf.LastValidBlockHeight, Kind: ep.Kind}
		switch bf.TokenProgram {
		case "":
			return nil, UsageErrorf("--blockhash needs --token-program (spl-token or token-2022): offline builds cannot look the mint up")
		case "spl-token", "token":
			fc.TokenProgram = spl.TokenProgramID
		case "token-2022", "token2022":
			fc.TokenProgram = spl.Token2022ProgramID
		default:
			if fc.TokenProgram, err = solana.PublicKeyFromBase58(bf.TokenProgram); err != nil {
				return nil, UsageErrorf("--token-program: %v", err)
			}
		}
		return fc, nil
	}
	if bf.TokenProgram != "" || bf.LastValidBlockHeight != 0 {
		return nil, UsageErrorf("--token-program and --last-valid-block-height only apply with --blockhash")
	}
	return RPCChain(ep)
}

// Clients connects to the selected cluster's base and ephemeral RPCs. A
// malformed URL is a usage error. eph is nil for a custom base layer
// without a rollup (see RequireRollup).
func Clients(ep cluster.Endpoints) (base, eph *chainclient.Client, err error) {
	if base, err = BaseClient(ep); err != nil {
		return nil, nil, err
	}
	if ep.Ephemeral == "" {
		return base, nil, nil
	}
	if eph, err = chainclient.New(ep.Ephemeral); err != nil {
		return nil, nil, UsageErrorf("ephemeral RPC URL: %v", err)
	}
	return base, eph, nil
}

// BaseClient connects to the selected cluster's base-layer RPC. A
// malformed URL is a usage error.
func BaseClient(ep cluster.Endpoints) (*chainclient.Client, error) {
	c, err := chainclient.New(ep.BaseRPC)
	if err != nil {
		return nil, UsageErrorf("base RPC URL: %v", err)
	}
	return c, nil
}

// RequireRollup is nil when ep has an ephemeral rollup, else the usage
// error that says how to pair one.
func RequireRollup(ep cluster.Endpoints) error {
	if ep.Ephemeral != "" {
		return nil
	}
	return UsageErrorf("the custom base layer %s has no rollup paired with it: pass --ephemeral-url URL (and --router-url URL), or choose a named cluster (-u localhost, devnet, mainnet-beta)", chainclient.RedactURL(ep.BaseRPC))
}

// RequireRouter is RequireRollup for the delegation router.
func RequireRouter(ep cluster.Endpoints) error {
	if ep.Router != "" {
		return nil
	}
	return UsageErrorf("the custom base layer %s has no router paired with it: pass --router-url URL, or choose a named cluster (-u localhost, devnet, mainnet-beta)", chainclient.RedactURL(ep.BaseRPC))
}

// RPCChain connects the planner to the cluster's base and ephemeral RPCs.
func RPCChain(ep cluster.Endpoints) (*payments.RPCChain, error) {
	base, eph, err := Clients(ep)
	if err != nil {
		return nil, err
	}
	rc := &payments.RPCChain{Base: chainclient.NewCached(base, chainclient.CacheOptions{}), Kind: ep.Kind}
	if eph != nil {
		rc.Ephemeral = chainclient.NewCached(eph, chainclient.CacheOptions{})
	}
	return rc, nil
}

// SignResponse signs out.TransactionBase64 with keys and replaces it.
func SignResponse(out *payments.UnsignedTransaction, keys []ed25519.PrivateKey) error {
	if len(keys) == 0 {
		return nil
	}
	tx, err := txwire.DecodeBase64(out.TransactionBase64)
	if err != nil {
		return fmt.Errorf("sign: %w", err)
	}
	if err := tx.Sign(keys...); err != nil {
		return err
	}
	out.TransactionBase64 = tx.Base64()
	return nil
}

// PrintBuild writes a build response: only the base64 transaction with
// --output base64 (for pipes), the JSON response with --output json, and a
// summary plus the transaction on a terminal. Extra JSON fields (e.g.
// initialize-mint's transferQueue) come with full.
func (f *Factory) PrintBuild(out *payments.UnsignedTransaction, full any) error {
	switch f.Output {
	case OutputBase64:
		_, err := fmt.Fprintln(f.IO.Out, out.TransactionBase64)
		return err
	case OutputJSON:
		if full == nil {
			full = out
		}
		return f.PrintJSON(full)
	}
	return writeBuildSummary(f.IO.StyledOut(), out)
}

var (
	headStyle = lipgloss.NewStyle().Bold(true)
	keyStyle  = lipgloss.NewStyle().Faint(true)
	okStyle   = lipgloss.NewStyle().Foreground(lipgloss.Color("2"))
	warnStyle = lipgloss.NewStyle().Foreground(lipgloss.Color("3"))
)

func writeBuildSummary(w io.Writer, out *payments.UnsignedTransaction) error {
	tx, err := txwire.DecodeBase64(out.TransactionBase64)
	if err != nil {
		return fmt.Errorf("print: %w", err)
	}
	line := func(k, v string) { fmt.Fprintf(w, "  %s %s\n", keyStyle.Render(fmt.Sprintf("%-16s", k)), v) }
	fmt.Fprintln(w, headStyle.Render(fmt.Sprintf("Built %s: %d instruction(s), %d bytes, send to %s", out.Kind, out.InstructionCount, len(tx.Bytes()), out.SendTo)))
	if out.Validator != "" {
		line("validator", out.Validator)
	}
	if out.Fees != nil {
		line("fees", fmt.Sprintf("%s lamports, %s token units", out.Fees.Lamports, out.Fees.Tokens))
	}
	line("blockhash", fmt.Sprintf("%s (valid to block height %d)", out.RecentBlockhash, out.LastValidBlockHeight))
	if out.SendRPCEndpoint != "" {
		line("send endpoint", out.SendRPCEndpoint)
	}
	missing := map[solana.PublicKey]bool{}
	for _, k := range tx.MissingSigners() {
		missing[k] = true
	}
	var signers []string
	for _, s := range out.RequiredSigners {
		mark := okStyle.Render("signed")
		if missing[solana.MustPublicKeyFromBase58(s)] {
			mark = warnStyle.Render("needs signature")
		}
		signers = append(signers, s+" ("+mark+")")
	}
	line("signers", strings.Join(signers, "\n                   "))
	fmt.Fprintf(w, "\n%s\n", out.TransactionBase64)
	if len(missing) == 0 {
		fmt.Fprintf(w, "\n%s ferry send --send-to %s --confirm <transaction>\n", keyStyle.Render("Next:"), out.SendTo)
	} else {
		fmt.Fprintf(w, "\n%s add --sign KEYPAIR to sign, or sign elsewhere, then: ferry send --send-to %s --confirm\n", keyStyle.Render("Next:"), out.SendTo)
	}
	return nil
}

// ErrNoSigner explains how to supply the fee payer.
var ErrNoSigner = errors.New("no signer: pass --sign KEYPAIR or the address flag")

// BuildSpec describes one build command: the request type's JSON field that
// names the signer (from, owner or payer) and how to plan it.
type BuildSpec[T any] struct {
	SignerField string
	// Check, if set, runs before the build; done means it has answered
	// (e.g. init-mint's "already set up") and nothing is built.
	Check func(cmd *cobra.Command, c payments.Chain, req *T) (done bool, err error)
	Build func(cmd *cobra.Command, p *payments.Planner, c payments.Chain, req *T) (*payments.UnsignedTransaction, any, error)
}

// mintDecimals reads the decimals of mint (or, when it is empty, the
// planner's default mint of the cluster) from the base layer.
func mintDecimals(ctx context.Context, c payments.Chain, p *payments.Planner, mint string) (uint8, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	var key solana.PublicKey
	if mint == "" {
		// The planner's default mints (deposit without --mint).
		k, ok := p.DefaultMints[c.Cluster()]
		switch {
		case ok:
		case c.Cluster() == cluster.Devnet:
			k = espl.USDCDevnet
		case c.Cluster() == cluster.Mainnet || c.Cluster() == cluster.Custom:
			k = espl.USDCMainnet
		default:
			return 0, UsageErrorf("--ui needs --mint: there is no default mint here to read the decimals of")
		}
		key = k
	} else {
		k, err := solana.PublicKeyFromBase58(mint)
		if err != nil {
			return 0, InputErrorf("--mint: %q is not an address", mint)
		}
		key = k
	}
	a, err := c.Account(ctx, key)
	if err != nil {
		return 0, fmt.Errorf("read mint %s for --ui: %w", key, err)
	}
	if a == nil {
		return 0, InputErrorf("--ui: mint %s does not exist on this cluster", key)
	}
	m, err := spl.DecodeMint(a.Data)
	if err != nil {
		return 0, InputErrorf("--ui: %s is not a mint: %v", key, err)
	}
	return m.Decimals, nil
}

// RunBuild is the shared body of ferry transfer/deposit/withdraw/init-mint:
// validate the flags as the HTTP API validates a body, plan against the
// cluster (or offline values), sign with --sign keys and print.
func RunBuild[T any](cmd *cobra.Command, f *Factory, rf *RequestFlags, bf *BuildFlags, spec BuildSpec[T]) error {
	if err := f.CheckOutput(OutputText, OutputJSON, OutputBase64); err != nil {
		return err
	}
	extra := map[string]any{}
	keys, err := bf.Signers()
	if err != nil {
		return err
	}
	if !rf.Changed(spec.SignerField) {
		k, ok, err := f.DefaultSigner(bf)
		if err != nil {
			return err
		}
		if ok {
			extra[spec.SignerField] = k.String()
		}
	}
	chain, err := f.Chain(bf)
	if err != nil {
		return err
	}
	planner := &payments.Planner{}
	if !bf.Offline() && !rf.Changed("mint") && rf.has("mint") {
		planner.DefaultMints = f.localDefaultMints(cmd.Context())
	}
	var decimals func(string) (uint8, error)
	if !bf.Offline() {
		decimals = func(mint string) (uint8, error) { return mintDecimals(cmd.Context(), chain, planner, mint) }
	}
	req := new(T)
	if err := rf.Decode(extra, req, decimals); err != nil {
		return FlagIssues(err)
	}
	if spec.Check != nil {
		done, err := spec.Check(cmd, chain, req)
		if err != nil || done {
			return err
		}
	}
	out, full, err := spec.Build(cmd, planner, chain, req)
	if err != nil {
		return err
	}
	if err := SignResponse(out, keys); err != nil {
		return err
	}
	return f.PrintBuild(out, full)
}

// localDefaultMints is the planner's default mint on the local cluster:
// the demo mint of `ferry serve` (ferry_faucetInfo), so that `ferry
// deposit` without --mint works there as the API's does. Nil when the
// cluster is not local or the node has no demo mint.
func (f *Factory) localDefaultMints(ctx context.Context) map[cluster.Kind]solana.PublicKey {
	ep, err := f.Endpoints()
	if err != nil || ep.Kind != cluster.Local {
		return nil
	}
	c, err := chainclient.New(ep.BaseRPC)
	if err != nil {
		return nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var info struct {
		DefaultMint *string `json:"defaultMint"`
	}
	if err := c.Call(ctx, "ferry_faucetInfo", nil, &info); err != nil || info.DefaultMint == nil {
		return nil
	}
	m, err := solana.PublicKeyFromBase58(*info.DefaultMint)
	if err != nil {
		return nil
	}
	return map[cluster.Kind]solana.PublicKey{cluster.Local: m}
}
