// Package keygen implements `ferry keygen`.
package keygen

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/ferry-sh/ferry/cmd/cmdutil"
)

// NewCmd returns the keygen command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var (
		outfile string
		force   bool
	)
	cmd := &cobra.Command{
		Use:   "keygen",
		Short: "Create a new keypair file",
		Long: `Create a new ed25519 keypair and write it in the Solana CLI format (a JSON
array of 64 bytes, mode 0600). Without --outfile it writes your default
keypair path (--keypair, FERRY_KEYPAIR, the Solana CLI's keypair_path, or
~/.config/solana/id.json). Existing files are never overwritten unless you
pass --force.`,
		Example: `  # A throw-away wallet for the local backend
  ferry keygen --outfile alice.json

  # Print only the address (for scripts)
  ALICE=$(ferry keygen --outfile alice.json --output json | jq -r .publicKey)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.CheckOutput(cmdutil.OutputText, cmdutil.OutputJSON); err != nil {
				return err
			}
			path := outfile
			if path == "" {
				p, err := f.KeypairPath()
				if err != nil {
					return err
				}
				path = p
			}
			if force {
				if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
					return fmt.Errorf("replace %s: %w", path, err)
				}
			}
			_, key, err := ed25519.GenerateKey(rand.Reader)
			if err != nil {
				return fmt.Errorf("generate key: %w", err)
			}
			if err := cmdutil.WriteKeypairFile(path, key); err != nil {
				if errors.Is(err, os.ErrExist) {
					return fmt.Errorf("%s already exists; pass --force to replace it (the old key is lost)", path)
				}
				return err
			}
			pub := cmdutil.PublicKeyOf(key).String()
			if f.JSON() {
				return f.PrintJSON(map[string]string{"publicKey": pub, "path": path})
			}
			fmt.Fprintf(f.IO.Out, "Wrote new keypair to %s\npubkey: %s\n", path, pub)
			return nil
		},
	}
	cmd.Flags().StringVarP(&outfile, "outfile", "O", "", "path of the new keypair file")
	cmd.Flags().BoolVar(&force, "force", false, "overwrite an existing file")
	return cmd
}
