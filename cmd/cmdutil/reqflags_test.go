package cmdutil

import (
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/schema"
)

func TestKeypairFilesAsAddresses(t *testing.T) {
	dir := t.TempDir()
	seed := sha256.Sum256([]byte("bob"))
	bob := ed25519.NewKeyFromSeed(seed[:])
	path := filepath.Join(dir, "bob.json")
	if err := WriteKeypairFile(path, bob); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "junk.json"), []byte("[1,2]"), 0o600)
	cmd := &cobra.Command{Use: "transfer"}
	rf := BindRequest(cmd, schema.Of[payments.TransferRequest](), "cluster")
	if err := cmd.Flags().Parse([]string{"--to", path, "--from", "J4F72Dj1QUPKWhVNNySF62FXunvMZew96DyZtQ8dBEHy", "--mint", "HRWrbxGvdwnUUPtFoUCMxATk69c8QWnpBYbCGoA8kNvW", "--memo", path, "--amount", "010"}); err != nil {
		t.Fatal(err)
	}
	body, err := rf.Body(nil)
	if err != nil {
		t.Fatal(err)
	}
	if body["to"] != PublicKeyOf(bob).String() {
		t.Errorf("--to keypair file: %v", body["to"])
	}
	// A base58 key and non-address fields are untouched; leading zeros
	// are decimal.
	if body["from"] != "J4F72Dj1QUPKWhVNNySF62FXunvMZew96DyZtQ8dBEHy" || body["mint"] != "HRWrbxGvdwnUUPtFoUCMxATk69c8QWnpBYbCGoA8kNvW" || body["memo"] != path || fmt.Sprint(body["amount"]) != "10" {
		t.Errorf("body %v", body)
	}
	// An address flag naming a file that is not a keypair, or a path
	// that does not exist, is an input error naming the flag and cause.
	for _, c := range []struct{ flag, val, want string }{
		{"from", filepath.Join(dir, "junk.json"), "--from: " + filepath.Join(dir, "junk.json") + " is not a keypair file"},
		{"to", filepath.Join(dir, "bobb.json"), `--to: "` + filepath.Join(dir, "bobb.json") + `" is not an address, a keypair file or a stealth handle: no such file`},
		{"from", "wallets/alice.json", `--from: "wallets/alice.json" is not an address or a keypair file: no such file`},
		{"to", dir, "--to: " + dir + " is not a keypair file (it is a directory or device)"},
	} {
		cmd := &cobra.Command{Use: "transfer"}
		rf := BindRequest(cmd, schema.Of[payments.TransferRequest](), "cluster")
		if err := cmd.Flags().Parse([]string{"--" + c.flag, c.val}); err != nil {
			t.Fatal(err)
		}
		_, err := rf.Body(nil)
		var ie *InputError
		if !errors.As(err, &ie) || !strings.HasPrefix(err.Error(), c.want) || Classify(err) != ExitValidation {
			t.Errorf("--%s %s: %v, want %q", c.flag, c.val, err, c.want)
		}
	}
	// A handle-like value is left for the planner (a stealth handle).
	cmd = &cobra.Command{Use: "transfer"}
	rf = BindRequest(cmd, schema.Of[payments.TransferRequest](), "cluster")
	cmd.Flags().Parse([]string{"--to", "bob-handle"})
	if body, err := rf.Body(nil); err != nil || body["to"] != "bob-handle" {
		t.Errorf("handle: %v %v", body, err)
	}
	if u := cmd.Flags().Lookup("to").Usage; u == "" || u[len(u)-len("A keypair file names its address. (required)"):] != "A keypair file names its address. (required)" {
		t.Errorf("--to usage %q", u)
	}
}
