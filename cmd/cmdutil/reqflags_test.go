package cmdutil

import (
	"crypto/ed25519"
	"crypto/sha256"
	"os"
	"path/filepath"
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
	if err := cmd.Flags().Parse([]string{"--to", path, "--from", filepath.Join(dir, "junk.json"), "--mint", "HRWrbxGvdwnUUPtFoUCMxATk69c8QWnpBYbCGoA8kNvW", "--memo", path}); err != nil {
		t.Fatal(err)
	}
	body := rf.Body(nil)
	if body["to"] != PublicKeyOf(bob).String() {
		t.Errorf("--to keypair file: %v", body["to"])
	}
	// Not a keypair: left for validation; a base58 key and non-address
	// fields are untouched.
	if body["from"] != filepath.Join(dir, "junk.json") || body["mint"] != "HRWrbxGvdwnUUPtFoUCMxATk69c8QWnpBYbCGoA8kNvW" || body["memo"] != path {
		t.Errorf("body %v", body)
	}
	if u := cmd.Flags().Lookup("to").Usage; u == "" || u[len(u)-len("A keypair file names its address. (required)"):] != "A keypair file names its address. (required)" {
		t.Errorf("--to usage %q", u)
	}
}
