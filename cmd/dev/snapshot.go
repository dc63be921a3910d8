package dev

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ferry-sh/ferry/cmd/cmdutil"
	"github.com/ferry-sh/ferry/pkg/devchain"
	"github.com/ferry-sh/ferry/pkg/inspect"
)

// maxInput bounds what profile and import read from a file or stdin.
const maxInput = 64 << 20

func newExportCmd(f *cmdutil.Factory) *cobra.Command {
	var ephemeral, programs, noSysvars, parsed bool
	var tx, out string
	cmd := &cobra.Command{
		Use:   "export [ADDRESS...]",
		Short: "Export accounts as a snapshot (surfpool's format)",
		Long: `Export accounts of the base node (or the rollup with --ephemeral) in
surfpool's snapshot format (surfnet_exportSnapshot): a JSON object of
address to {lamports, owner, executable, rentEpoch, data (base64),
parsedData}. All accounts are read at one moment.

ADDRESS... (addresses or keypair files) are the accounts to export;
without them, every account of the node is (program accounts only with
--include-programs). --transaction exports the accounts a transaction
references, as they are before it runs (a fixture for a test).

"ferry dev import" reads the file back, into this node or another.`,
		Example: `  # A wallet and its token account, as a fixture
  ferry dev export alice.json $ALICE_ATA --out fixture.json

  # Everything the rollup holds, with parsed mints and token accounts
  ferry dev export --ephemeral --parsed > rollup.json

  # What a transaction reads
  ferry transfer --from $ALICE --to $BOB --mint $MINT --amount 1 --visibility public \
    --from-balance base --to-balance base --output json | ferry dev export --transaction -`,
		Args: func(cmd *cobra.Command, args []string) error { return nil },
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.CheckOutput(cmdutil.OutputText, cmdutil.OutputJSON); err != nil {
				return err
			}
			req := devchain.ExportRequest{IncludeProgramAccounts: programs, ExcludeSysvars: noSysvars, IncludeParsedAccounts: parsed}
			for _, a := range args {
				k, err := f.ResolveAddress(a)
				if err != nil {
					return err
				}
				req.Accounts = append(req.Accounts, k.String())
			}
			if tx != "" {
				if len(args) > 0 {
					return cmdutil.UsageErrorf("--transaction and ADDRESS... are exclusive")
				}
				b64, sendTo, err := readTransaction(f, tx)
				if err != nil {
					return err
				}
				req.PreTransaction = b64
				ephemeral = nodeOf(cmd, ephemeral, sendTo)
			}
			cfg := map[string]any{"includeParsedAccounts": req.IncludeParsedAccounts, "filter": map[string]any{
				"includeProgramAccounts": req.IncludeProgramAccounts, "excludeSysvars": req.ExcludeSysvars, "includeAccounts": req.Accounts,
			}}
			if req.PreTransaction != "" {
				cfg["scope"] = map[string]string{"preTransaction": req.PreTransaction}
			}
			n, err := connect(f, ephemeral)
			if err != nil {
				return err
			}
			var res contextSlot
			if err := n.call(cmd.Context(), devchain.MethodExportSnapshot, []any{cfg}, &res); err != nil {
				return err
			}
			var snap devchain.Snapshot
			if err := json.Unmarshal(res.Value, &snap); err != nil {
				return fmt.Errorf("decode the snapshot: %w", err)
			}
			if missing := missingAccounts(req.Accounts, snap); len(missing) > 0 {
				fmt.Fprintf(f.IO.ErrOut, "warning: no account at %s\n", strings.Join(missing, ", "))
			}
			body, err := json.MarshalIndent(snap, "", "  ")
			if err != nil {
				return err
			}
			body = append(body, '\n')
			if out == "" {
				if f.JSON() {
					return f.PrintJSON(devchain.ExportResult{Node: n.name, Slot: res.Context.Slot, Accounts: snap})
				}
				_, err := f.IO.Out.Write(body)
				return err
			}
			if err := os.WriteFile(out, body, 0o644); err != nil {
				return fmt.Errorf("write %s: %w", out, err)
			}
			if f.JSON() {
				return f.PrintJSON(map[string]any{"node": n.name, "slot": res.Context.Slot, "file": out, "accounts": len(snap)})
			}
			fmt.Fprintf(f.IO.StyledOut(), "%s Exported %d account(s) of the %s node (slot %d) to %s\n", okStyle.Render("✓"), len(snap), n.name, res.Context.Slot, out)
			return nil
		},
	}
	fl := cmd.Flags()
	addEphemeral(cmd, &ephemeral, "read")
	fl.BoolVar(&programs, "include-programs", false, "with no ADDRESS: keep program accounts")
	fl.BoolVar(&noSysvars, "exclude-sysvars", false, "leave sysvar accounts out")
	fl.BoolVar(&parsed, "parsed", false, "add parsedData (jsonParsed) to the accounts ferry can parse")
	fl.StringVar(&tx, "transaction", "", "export the accounts this transaction references (base64, base58 or a build's JSON; - reads stdin)")
	fl.StringVar(&out, "out", "", "write the snapshot to this file instead of stdout")
	return cmd
}

func missingAccounts(want []string, snap devchain.Snapshot) []string {
	var out []string
	for _, k := range want {
		if snap[k] == nil {
			out = append(out, k)
		}
	}
	return out
}

func newImportCmd(f *cmdutil.Factory) *cobra.Command {
	var ephemeral bool
	cmd := &cobra.Command{
		Use:   "import FILE...",
		Short: "Write the accounts of snapshot files",
		Long: `Write every account of the snapshot files into the base node (or the rollup
with --ephemeral) in one privileged write, all or none
(ferry_importSnapshot). Each account replaces the one at its address; an
entry with 0 lamports deletes it; sysvars are skipped (the ledger keeps
them).

A FILE is surfpool's snapshot format ("ferry dev export", surfpool's
surfnet_exportSnapshot) or "solana account ADDRESS --output json" output
(one object, or an array of them); - reads stdin.`,
		Example: `  ferry dev import fixture.json
  solana account $ADDRESS --output json -u devnet > account.json && ferry dev import account.json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmdutil.UsageErrorf("missing FILE (see '%s --help')", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.CheckOutput(cmdutil.OutputText, cmdutil.OutputJSON); err != nil {
				return err
			}
			snap := devchain.Snapshot{}
			for _, name := range args {
				b, err := readInput(f, name)
				if err != nil {
					return err
				}
				s, err := devchain.ParseSnapshot(b)
				if err != nil {
					return cmdutil.InputErrorf("%s: %v", name, err)
				}
				for k, v := range s {
					snap[k] = v
				}
			}
			n, err := connect(f, ephemeral)
			if err != nil {
				return err
			}
			var res struct {
				Context struct {
					Slot uint64 `json:"slot"`
				} `json:"context"`
				Value struct {
					Accounts []string `json:"accounts"`
					Skipped  []string `json:"skipped"`
				} `json:"value"`
			}
			if err := n.call(cmd.Context(), devchain.MethodImportSnapshot, []any{snap}, &res); err != nil {
				return err
			}
			if err := n.waitConfirmed(cmd.Context(), res.Context.Slot, f.IO.ErrOut); err != nil {
				return err
			}
			out := devchain.ImportResult{WriteResult: devchain.WriteResult{Node: n.name, Slot: res.Context.Slot, Accounts: res.Value.Accounts}, Skipped: res.Value.Skipped}
			if f.JSON() {
				return f.PrintJSON(out)
			}
			w := f.IO.StyledOut()
			fmt.Fprintf(w, "%s Imported %d account(s) into the %s node (slot %d)\n", okStyle.Render("✓"), len(out.Accounts), n.name, out.Slot)
			if len(out.Skipped) > 0 {
				fmt.Fprintf(w, "  %s %s (sysvars)\n", dimStyle.Render("skipped"), strings.Join(out.Skipped, ", "))
			}
			return nil
		},
	}
	addEphemeral(cmd, &ephemeral, "write")
	return cmd
}

func newProfileCmd(f *cmdutil.Factory) *cobra.Command {
	var ephemeral bool
	var tag, encoding, depth string
	cmd := &cobra.Command{
		Use:   "profile [TRANSACTION]",
		Short: "Simulate a transaction and report compute units and account changes",
		Long: `Run a transaction against the current state without committing it
(surfnet_profileTransaction) and report its compute units, logs and error,
and the accounts it creates, updates or deletes, for the whole transaction
and for each instruction. Each instruction's numbers are those of the
instructions up to it, minus those before.

TRANSACTION is base64, base58 or a build's JSON (--output json of ferry
transfer, deposit, ...), signed or not: signatures are not checked and the
blockhash is replaced by the latest. Without it, or with -, stdin is read.
A build's JSON is profiled on the node it is sent to (its sendTo) unless
--ephemeral says otherwise.

--output json prints surfpool's UiKeyedProfileResult; its key finds the
profile again (surfnet_getTransactionProfile), as does --tag
(surfnet_getProfileResultsByTag).`,
		Example: `  # What a private transfer would cost, instruction by instruction
  ferry transfer --sign alice.json --to $BOB --mint $MINT --amount 1000000 --visibility private \
    --from-balance base --to-balance base --output json | ferry dev profile

  # The full result, accounts as base64
  ferry dev profile "$TX_BASE64" --encoding base64 --output json`,
		Args: cmdutil.MaxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.CheckOutput(cmdutil.OutputText, cmdutil.OutputJSON); err != nil {
				return err
			}
			src := "-"
			if len(args) == 1 {
				src = args[0]
			}
			b64, sendTo, err := readTransaction(f, src)
			if err != nil {
				return err
			}
			n, err := connect(f, nodeOf(cmd, ephemeral, sendTo))
			if err != nil {
				return err
			}
			var tagParam any
			if tag != "" {
				tagParam = tag
			}
			var res contextSlot
			if err := n.call(cmd.Context(), devchain.MethodProfileTransaction, []any{b64, tagParam, devchain.ProfileConfig{Encoding: encoding, Depth: depth}}, &res); err != nil {
				return err
			}
			if f.JSON() {
				return f.PrintRawJSON(res.Value, func() error { return f.PrintJSON(res.Value) })
			}
			return printProfile(f, n.name, res.Value)
		},
	}
	fl := cmd.Flags()
	addEphemeral(cmd, &ephemeral, "simulate on")
	fl.StringVar(&tag, "tag", "", "tag to find the profile by later")
	fl.StringVar(&encoding, "encoding", devchain.DefaultProfileEncoding, "encoding of the accounts in --output json: jsonParsed, base64, base58 or base64+zstd")
	fl.StringVar(&depth, "depth", devchain.DepthInstruction, "instruction (a profile per instruction too) or transaction")
	return cmd
}

// printProfile summarizes a profile: compute units, errors and the
// lamports each writable account gains or loses, per instruction.
func printProfile(f *cmdutil.Factory, node string, raw json.RawMessage) error {
	var p struct {
		Key                 string        `json:"key"`
		Slot                uint64        `json:"slot"`
		InstructionProfiles []stepSummary `json:"instructionProfiles"`
		TransactionProfile  stepSummary   `json:"transactionProfile"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return fmt.Errorf("decode the profile: %w", err)
	}
	w := f.IO.StyledOut()
	mark := okStyle.Render("✓")
	if p.TransactionProfile.ErrorMessage != nil {
		mark = "✗"
	}
	fmt.Fprintf(w, "%s Profiled on the %s node at slot %d: %d compute units\n", mark, node, p.Slot, p.TransactionProfile.ComputeUnitsConsumed)
	if e := p.TransactionProfile.ErrorMessage; e != nil {
		fmt.Fprintf(w, "  %s %s\n", dimStyle.Render("error"), *e)
	}
	for i, st := range p.InstructionProfiles {
		fmt.Fprintf(w, "\n  %s %d: %d compute units\n", dimStyle.Render("instruction"), i, st.ComputeUnitsConsumed)
		if st.ErrorMessage != nil {
			fmt.Fprintf(w, "    error: %s\n", *st.ErrorMessage)
		}
		st.print(w, "    ")
	}
	fmt.Fprintf(w, "\n  %s\n", dimStyle.Render("transaction"))
	p.TransactionProfile.print(w, "    ")
	fmt.Fprintf(w, "\n  %s %s\n", dimStyle.Render("key"), p.Key)
	return nil
}

type stepSummary struct {
	AccountStates        map[string]json.RawMessage `json:"accountStates"`
	ComputeUnitsConsumed uint64                     `json:"computeUnitsConsumed"`
	ErrorMessage         *string                    `json:"errorMessage"`
}

// print lists the writable accounts with what happened to them.
func (s stepSummary) print(w io.Writer, indent string) {
	keys := make([]string, 0, len(s.AccountStates))
	for k := range s.AccountStates {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var st struct {
			Type   string `json:"type"`
			Change *struct {
				Type string          `json:"type"`
				Data json.RawMessage `json:"data"`
			} `json:"accountChange"`
		}
		if json.Unmarshal(s.AccountStates[k], &st) != nil || st.Change == nil {
			continue
		}
		type ui struct {
			Lamports int64 `json:"lamports"`
		}
		var line string
		switch st.Change.Type {
		case "update":
			var pair [2]ui
			json.Unmarshal(st.Change.Data, &pair)
			line = fmt.Sprintf("updated, %+d lamports", pair[1].Lamports-pair[0].Lamports)
		case "create":
			var a ui
			json.Unmarshal(st.Change.Data, &a)
			line = fmt.Sprintf("created with %d lamports", a.Lamports)
		case "delete":
			line = "deleted"
		default:
			continue
		}
		fmt.Fprintf(w, "%s%s %s\n", indent, k, line)
	}
}

// readInput reads a file, or stdin for "-".
func readInput(f *cmdutil.Factory, name string) ([]byte, error) {
	var r io.Reader
	if name == "-" {
		if f.IO.IsStdinTTY() {
			return nil, cmdutil.UsageErrorf("- reads stdin, but stdin is a terminal: pipe the input in")
		}
		r = f.IO.In
	} else {
		file, err := os.Open(name)
		if err != nil {
			return nil, cmdutil.InputErrorf("%v", err)
		}
		defer file.Close()
		r = file
	}
	b, err := io.ReadAll(io.LimitReader(r, maxInput+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(b) > maxInput {
		return nil, cmdutil.InputErrorf("%s is larger than %d bytes", name, maxInput)
	}
	return b, nil
}

// readTransaction reads a transaction argument (or stdin for "-") in any
// form inspect understands and returns it as base64, with the node a
// build's JSON says it is sent to ("" when it does not say).
func readTransaction(f *cmdutil.Factory, arg string) (b64, sendTo string, err error) {
	s := arg
	if arg == "-" {
		b, err := readInput(f, "-")
		if err != nil {
			return "", "", err
		}
		s = string(bytes.TrimSpace(b))
	}
	tx, err := inspect.ParseTransaction(s)
	if err != nil {
		return "", "", cmdutil.InputErrorf("transaction: %v", err)
	}
	var build struct {
		SendTo string `json:"sendTo"`
	}
	if strings.HasPrefix(s, "{") && json.Unmarshal([]byte(s), &build) == nil {
		sendTo = build.SendTo
	}
	return tx.Base64(), sendTo, nil
}

// nodeOf picks the node of a transaction: --ephemeral when given, else
// where its build says it is sent.
func nodeOf(cmd *cobra.Command, ephemeral bool, sendTo string) bool {
	if cmd.Flags().Changed("ephemeral") {
		return ephemeral
	}
	return sendTo == devchain.NodeEphemeral
}
