// Package inspect implements `ferry inspect`: explain a transaction before
// signing it.
package inspect

import (
	"fmt"
	"io"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/spf13/cobra"

	"github.com/ferry-sh/ferry/cmd/cmdutil"
	pinspect "github.com/ferry-sh/ferry/pkg/inspect"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// NewCmd returns the inspect command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "inspect [BASE64|-]",
		Short: "Explain a transaction before you sign it",
		Long: `Decode a transaction (unsigned or signed, legacy or v0) and explain it:
the programs it calls, each instruction with its amounts and parameters, the
accounts it touches and in which role, who must sign, and its size.

The transaction is read from the argument, or from stdin when the argument
is "-" or missing. Base64 and base58 are accepted, and so is the JSON printed
by "ferry transfer --output json" (its transactionBase64 is used).`,
		Example: `  # Explain an offline build before signing it
  ferry transfer --from $ALICE --to $BOB --mint $MINT --amount 1000000 \
    --visibility public --from-balance base --to-balance base \
    --blockhash $BH --last-valid-block-height 300 --token-program spl-token \
    --output base64 | ferry inspect

  # Machine-readable description
  ferry inspect --output json AQAAAA...`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.CheckOutput(cmdutil.OutputText, cmdutil.OutputJSON); err != nil {
				return err
			}
			input := "-"
			if len(args) == 1 {
				input = args[0]
			}
			if input == "-" {
				if f.IO.IsStdinTTY() {
					return cmdutil.UsageErrorf("pass a transaction as an argument or pipe one on stdin")
				}
				b, err := io.ReadAll(io.LimitReader(f.IO.In, 1<<20))
				if err != nil {
					return fmt.Errorf("read stdin: %w", err)
				}
				input = string(b)
			}
			tx, err := ParseTransaction(input)
			if err != nil {
				return err
			}
			d := pinspect.New().Describe(tx)
			if f.JSON() {
				return f.PrintJSON(d)
			}
			return Render(f.IO.StyledOut(), d)
		},
	}
}

// ParseTransaction accepts base64, base58 or a build response's JSON (see
// pkg/inspect.ParseTransaction, which it calls).
func ParseTransaction(s string) (*txwire.Transaction, error) { return pinspect.ParseTransaction(s) }

var (
	titleStyle = lipgloss.NewStyle().Bold(true)
	dimStyle   = lipgloss.NewStyle().Faint(true)
	okStyle    = lipgloss.NewStyle().Foreground(lipgloss.Color("2"))
	warnStyle  = lipgloss.NewStyle().Foreground(lipgloss.Color("3")).Bold(true)
	progStyle  = lipgloss.NewStyle().Foreground(lipgloss.Color("6"))
)

// Render writes the human-readable explanation. w should be a styled writer
// (iostreams.Styled) so that colours disappear in pipes.
func Render(w io.Writer, d *pinspect.Description) error {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("%s\n", titleStyle.Render(fmt.Sprintf("Transaction (%s, %d of %d bytes)", d.Version, d.Size, d.MaxSize)))
	p("  fee payer  %s\n", d.FeePayer)
	p("  blockhash  %s\n", d.RecentBlockhash)
	signed := 0
	for _, s := range d.Signatures {
		if s.Signed {
			signed++
		}
	}
	p("  signers    %d required, %d signed\n", len(d.Signatures), signed)
	for _, s := range d.Signatures {
		mark := warnStyle.Render("✗ unsigned")
		if s.Signed {
			mark = okStyle.Render("✓ signed")
		}
		p("    %s  %s\n", s.Signer, mark)
	}
	for _, ins := range d.Instructions {
		p("\n%s %s %s\n", titleStyle.Render(fmt.Sprintf("#%d", ins.Index)), progStyle.Render(ins.Program), titleStyle.Render(ins.Name))
		for _, prm := range ins.Params {
			p("    %-26s %s\n", prm.Name, prm.Value)
		}
		if ins.Error != "" {
			p("    %s %s\n", warnStyle.Render("cannot decode:"), ins.Error)
		}
		for _, a := range ins.Accounts {
			var flags []string
			if a.Signer {
				flags = append(flags, "signer")
			}
			if a.Writable {
				flags = append(flags, "writable")
			}
			p("    %s %s %s\n", dimStyle.Render(fmt.Sprintf("%-26s", a.Role)), a.Pubkey, dimStyle.Render(strings.Join(flags, " ")))
		}
	}
	for _, wmsg := range d.Warnings {
		p("\n%s %s\n", warnStyle.Render("warning:"), wmsg)
	}
	return nil
}
