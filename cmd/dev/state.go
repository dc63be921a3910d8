package dev

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/ferry-sh/ferry/cmd/cmdutil"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/devchain"
	"github.com/ferry-sh/ferry/pkg/spl"
)

func newSetAccountCmd(f *cmdutil.Factory) *cobra.Command {
	var ephemeral, executable bool
	var lamports, owner, dataHex, dataB64, dataFile string
	cmd := &cobra.Command{
		Use:   "set-account ADDRESS",
		Short: "Set an account's lamports, owner, data or executable flag",
		Long: `Set the fields of the account at ADDRESS (a base58 address or a keypair
file), creating it if needed: surfnet_setAccount. Fields not given keep
their value; a new account starts with no lamports, the System program as
owner and no data, so it needs --lamports. --lamports 0 deletes the
account (an account without lamports does not exist on Solana).

The lamport supply (getSupply), the owner index (getProgramAccounts) and
websocket subscribers see the change like any other write. The rent epoch
is the ledger's to keep, as on Agave: u64::MAX once rent-exempt.

A pipe gets the address only.`,
		Example: `  # 5 SOL for a wallet, whatever it had
  ferry dev set-account alice.json --lamports 5000000000

  # A program-owned account with given data, on the rollup
  ferry dev set-account $ACCOUNT --lamports 2000000 --owner $PROGRAM --data-hex 0a0b0c --ephemeral

  # Data from a file
  ferry dev set-account $ACCOUNT --lamports 10000000 --data-file state.bin`,
		Args: exactArgs(1, "ADDRESS"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.CheckOutput(cmdutil.OutputText, cmdutil.OutputJSON); err != nil {
				return err
			}
			addr, err := f.ResolveAddress(args[0])
			if err != nil {
				return err
			}
			req := devchain.SetAccountRequest{Address: addr.String()}
			fl := cmd.Flags()
			if fl.Changed("lamports") {
				v, err := parseUnits("lamports", lamports)
				if err != nil {
					return err
				}
				req.Lamports = &v
			}
			if owner != "" {
				k, err := parseKeyFlag("owner", owner)
				if err != nil {
					return err
				}
				s := k.String()
				req.Owner = &s
			}
			if n := countSet(dataHex != "", dataB64 != "", dataFile != ""); n > 1 {
				return cmdutil.UsageErrorf("--data-hex, --data-base64 and --data-file are exclusive")
			}
			switch {
			case dataHex != "":
				if _, err := hex.DecodeString(dataHex); err != nil {
					return cmdutil.UsageErrorf("--data-hex: %v", err)
				}
				req.Data = &dataHex
			case dataB64 != "":
				req.DataBase64 = &dataB64
			case dataFile != "":
				b, err := os.ReadFile(dataFile)
				if err != nil {
					return cmdutil.InputErrorf("--data-file: %v", err)
				}
				s := base64.StdEncoding.EncodeToString(b)
				req.DataBase64 = &s
			}
			if fl.Changed("executable") {
				req.Executable = &executable
			}
			if req.Lamports == nil && req.Owner == nil && req.Data == nil && req.DataBase64 == nil && req.Executable == nil {
				return cmdutil.UsageErrorf("nothing to set: give --lamports, --owner, --data-hex/--data-base64/--data-file or --executable")
			}
			n, err := connect(f, ephemeral)
			if err != nil {
				return err
			}
			var res contextSlot
			if err := n.call(cmd.Context(), devchain.MethodSetAccount, []any{req.Address, req.AccountUpdate}, &res); err != nil {
				return err
			}
			return printWrite(cmd.Context(), f, n, &devchain.WriteResult{Node: n.name, Slot: res.Context.Slot, Accounts: []string{req.Address}},
				fmt.Sprintf("Set the account %s", req.Address))
		},
	}
	fl := cmd.Flags()
	addEphemeral(cmd, &ephemeral, "change")
	fl.StringVar(&lamports, "lamports", "", "balance in lamports (0 deletes the account)")
	fl.StringVar(&owner, "owner", "", "owner program (base58)")
	fl.StringVar(&dataHex, "data-hex", "", "account data, hex")
	fl.StringVar(&dataB64, "data-base64", "", "account data, base64")
	fl.StringVar(&dataFile, "data-file", "", "account data, the bytes of a file")
	fl.BoolVar(&executable, "executable", false, "whether the account holds a program (--executable=false clears it)")
	return cmd
}

func newSetTokenAccountCmd(f *cmdutil.Factory) *cobra.Command {
	var ephemeral bool
	var mint, amount, delegate, delegated, state, closeAuth, program string
	cmd := &cobra.Command{
		Use:   "set-token-account OWNER",
		Short: "Set a wallet's token balance, delegate, state or close authority",
		Long: `Set the associated token account of OWNER (an address or a keypair file) for
--mint (default: the demo mint of ferry serve), creating it if needed, as
the ATA program would (Token-2022 accounts with ImmutableOwner, wrapped SOL
with its rent reserve): surfnet_setTokenAccount. Fields not given keep
their value.

--amount is in base units. The mint's supply moves by the difference, as a
mint or a burn would, so getTokenSupply stays the sum of the balances. On
the rollup (--ephemeral) the base layer's vault for the mint moves too, so
the new balance is backed there and can be withdrawn.

A pipe gets the token account's address only.`,
		Example: `  # 1000 demo tokens (6 decimals) for alice
  ferry dev set-token-account alice.json --amount 1000000000

  # Freeze bob's account of another mint
  ferry dev set-token-account $BOB --mint $MINT --state frozen

  # A delegate allowed to move 50 tokens, then none
  ferry dev set-token-account alice.json --delegate $CAROL --delegated-amount 50000000
  ferry dev set-token-account alice.json --delegate none`,
		Args: exactArgs(1, "OWNER"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.CheckOutput(cmdutil.OutputText, cmdutil.OutputJSON); err != nil {
				return err
			}
			owner, err := f.ResolveAddress(args[0])
			if err != nil {
				return err
			}
			m, err := defaultMint(cmd.Context(), f, mint)
			if err != nil {
				return err
			}
			req := devchain.SetTokenAccountRequest{Owner: owner.String(), Mint: m.String()}
			fl := cmd.Flags()
			if fl.Changed("amount") {
				v, err := parseUnits("amount", amount)
				if err != nil {
					return err
				}
				req.Amount = &v
			}
			if fl.Changed("delegated-amount") {
				v, err := parseUnits("delegated-amount", delegated)
				if err != nil {
					return err
				}
				req.DelegatedAmount = &v
			}
			for _, kf := range []struct {
				name, v string
				dst     **string
			}{{"delegate", delegate, &req.Delegate}, {"close-authority", closeAuth, &req.CloseAuthority}} {
				if fl.Changed(kf.name) {
					s, err := keyOrNone(kf.name, kf.v)
					if err != nil {
						return err
					}
					*kf.dst = &s
				}
			}
			if fl.Changed("state") {
				req.State = &state
			}
			if req.Amount == nil && req.DelegatedAmount == nil && req.Delegate == nil && req.CloseAuthority == nil && req.State == nil {
				return cmdutil.UsageErrorf("nothing to set: give --amount, --delegate, --delegated-amount, --state or --close-authority")
			}
			params := []any{req.Owner, req.Mint, req.TokenAccountUpdate}
			if program != "" {
				k, err := parseKeyFlag("token-program", program)
				if err != nil {
					return err
				}
				params = append(params, k.String())
			}
			n, err := connect(f, ephemeral)
			if err != nil {
				return err
			}
			var res contextSlot
			if err := n.call(cmd.Context(), devchain.MethodSetTokenAccount, params, &res); err != nil {
				return err
			}
			mintAcct, err := n.c.GetAccountInfo(cmd.Context(), m, chainclient.Processed)
			if err != nil || mintAcct == nil {
				return fmt.Errorf("read the mint %s: %v", m, err)
			}
			ata := spl.AssociatedTokenAddress(owner, m, mintAcct.Owner)
			summary := fmt.Sprintf("Set the token account %s of %s for %s", ata, owner, m)
			if req.Amount != nil {
				summary += fmt.Sprintf(": balance %d", *req.Amount)
			}
			return printWrite(cmd.Context(), f, n, &devchain.WriteResult{Node: n.name, Slot: res.Context.Slot, Accounts: []string{ata.String()}}, summary)
		},
	}
	fl := cmd.Flags()
	addEphemeral(cmd, &ephemeral, "change")
	fl.StringVar(&mint, "mint", "", "mint (default: the demo mint of ferry serve)")
	fl.StringVar(&amount, "amount", "", "balance in base units")
	fl.StringVar(&delegate, "delegate", "", "delegate (base58), or none")
	fl.StringVar(&delegated, "delegated-amount", "", "amount the delegate may move, in base units")
	fl.StringVar(&state, "state", "", "initialized, frozen or uninitialized")
	fl.StringVar(&closeAuth, "close-authority", "", "close authority (base58), or none")
	fl.StringVar(&program, "token-program", "", "token program (default: the mint's owner)")
	return cmd
}

func newSetMintCmd(f *cmdutil.Factory) *cobra.Command {
	var ephemeral, token2022 bool
	var supply, decimals, mintAuth, freezeAuth string
	cmd := &cobra.Command{
		Use:   "set-mint MINT",
		Short: "Set a mint's supply, decimals and authorities, or create a mint anywhere",
		Long: `Set the fields of the mint at MINT (ferry_setMint). A mint that does not exist
is created when --decimals is given (SPL Token, or Token-2022 with
--token-2022), rent-exempt and initialized: give a real cluster's address
(devnet USDC's, say) to use it locally. --supply sets the number as
given; balances are not touched (set them with set-token-account, which
moves the supply with them).

--mint-authority and --freeze-authority take an address, or none to
remove the authority.

A pipe gets the mint's address only.`,
		Example: `  # Devnet USDC's mint, with the faucet able to mint it
  ferry dev set-mint 4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU --decimals 6 --mint-authority $(ferry rpc ferry_faucetInfo | jq -r .faucet)

  # Fix the supply
  ferry dev set-mint $MINT --mint-authority none`,
		Args: exactArgs(1, "MINT"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.CheckOutput(cmdutil.OutputText, cmdutil.OutputJSON); err != nil {
				return err
			}
			m, err := f.ResolveAddress(args[0])
			if err != nil {
				return err
			}
			upd := map[string]any{}
			fl := cmd.Flags()
			if fl.Changed("supply") {
				v, err := parseUnits("supply", supply)
				if err != nil {
					return err
				}
				upd["supply"] = v
			}
			if fl.Changed("decimals") {
				v, err := parseUnits("decimals", decimals)
				if err != nil || v > 255 {
					return cmdutil.UsageErrorf("--decimals must be between 0 and 255")
				}
				upd["decimals"] = v
			}
			for _, kf := range []struct{ flag, field, v string }{{"mint-authority", "mintAuthority", mintAuth}, {"freeze-authority", "freezeAuthority", freezeAuth}} {
				if fl.Changed(kf.flag) {
					s, err := keyOrNone(kf.flag, kf.v)
					if err != nil {
						return err
					}
					upd[kf.field] = s
				}
			}
			if token2022 {
				upd["tokenProgram"] = spl.Token2022ProgramID.String()
			}
			if len(upd) == 0 {
				return cmdutil.UsageErrorf("nothing to set: give --supply, --decimals, --mint-authority or --freeze-authority")
			}
			n, err := connect(f, ephemeral)
			if err != nil {
				return err
			}
			var res contextSlot
			if err := n.call(cmd.Context(), devchain.MethodSetMint, []any{m.String(), upd}, &res); err != nil {
				return err
			}
			return printWrite(cmd.Context(), f, n, &devchain.WriteResult{Node: n.name, Slot: res.Context.Slot, Accounts: []string{m.String()}}, "Set the mint "+m.String())
		},
	}
	fl := cmd.Flags()
	addEphemeral(cmd, &ephemeral, "change")
	fl.StringVar(&supply, "supply", "", "supply in base units")
	fl.StringVar(&decimals, "decimals", "", "decimals (required to create a mint)")
	fl.StringVar(&mintAuth, "mint-authority", "", "mint authority (base58), or none")
	fl.StringVar(&freezeAuth, "freeze-authority", "", "freeze authority (base58), or none")
	fl.BoolVar(&token2022, "token-2022", false, "a Token-2022 mint (to create; an existing mint must be one)")
	return cmd
}

func newResetAccountCmd(f *cmdutil.Factory) *cobra.Command {
	var ephemeral, owned bool
	cmd := &cobra.Command{
		Use:   "reset-account ADDRESS",
		Short: "Put an account back where the chain started",
		Long: `Reset the account at ADDRESS (surfnet_resetAccount): an account the chain's
genesis created (a program, a native mint, the faucet) gets its genesis
value back; any other is deleted. --include-owned also resets every
account ADDRESS owns (a program's accounts, at most 10000).

A pipe gets the address only.`,
		Example: `  # Forget a wallet
  ferry dev reset-account alice.json

  # Undo changes to the native mint
  ferry dev reset-account So11111111111111111111111111111111111111112`,
		Args: exactArgs(1, "ADDRESS"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.CheckOutput(cmdutil.OutputText, cmdutil.OutputJSON); err != nil {
				return err
			}
			addr, err := f.ResolveAddress(args[0])
			if err != nil {
				return err
			}
			n, err := connect(f, ephemeral)
			if err != nil {
				return err
			}
			var res contextSlot
			if err := n.call(cmd.Context(), devchain.MethodResetAccount, []any{addr.String(), map[string]bool{"includeOwnedAccounts": owned}}, &res); err != nil {
				return err
			}
			return printWrite(cmd.Context(), f, n, &devchain.WriteResult{Node: n.name, Slot: res.Context.Slot, Accounts: []string{addr.String()}}, "Reset "+addr.String())
		},
	}
	addEphemeral(cmd, &ephemeral, "change")
	cmd.Flags().BoolVar(&owned, "include-owned", false, "also reset the accounts ADDRESS owns")
	return cmd
}

func newHaltCmd(f *cmdutil.Factory) *cobra.Command {
	var ephemeral bool
	var reason string
	cmd := &cobra.Command{
		Use:   "halt",
		Short: "Make a node fail every later slot commit, as a full disk would",
		Long: `Halt the base node (or the rollup with --ephemeral) as a full disk would
(ferry_haltLedger): nothing more becomes confirmed, /health and getHealth
report it, and the payments API answers LEDGER_HALTED, so an application
can test its handling of a halted node. Restarting ferry serve recovers
from the last durable slot.`,
		Example: `  ferry dev halt --ephemeral --reason "disk full (test)"`,
		Args:    cmdutil.MaxArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.CheckOutput(cmdutil.OutputText, cmdutil.OutputJSON); err != nil {
				return err
			}
			n, err := connect(f, ephemeral)
			if err != nil {
				return err
			}
			var res devchain.HaltResult
			if err := n.call(cmd.Context(), devchain.MethodHaltLedger, []any{devchain.HaltRequest{Reason: reason}}, &res); err != nil {
				return err
			}
			if f.JSON() {
				return f.PrintJSON(res)
			}
			_, err = fmt.Fprintf(f.IO.Out, "The %s node halts: %s\n", n.name, res.Halting)
			return err
		},
	}
	addEphemeral(cmd, &ephemeral, "halt")
	cmd.Flags().StringVar(&reason, "reason", "", "the failure the node reports (default: "+devchain.DefaultHaltReason+")")
	return cmd
}

// addEphemeral adds --ephemeral: act on the rollup instead of the base
// layer.
func addEphemeral(cmd *cobra.Command, v *bool, verb string) {
	cmd.Flags().BoolVar(v, "ephemeral", false, verb+" the rollup (ephemeral node) instead of the base layer")
}

// exactArgs wants n arguments, named in the usage error.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return cmdutil.UsageErrorf("missing %s (see '%s --help')", what, cmd.CommandPath())
		}
		return cmdutil.MaxArgs(n)(cmd, args)
	}
}

func countSet(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}
