package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/ferry-sh/ferry/pkg/keyfile"
)

// treeDigest lists every file under dir with its size and content hash,
// so that a test can tell whether anything was deleted or rewritten.
func treeDigest(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			lines = append(lines, rel+"/")
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		lines = append(lines, fmt.Sprintf("%s %x", rel, sha256.Sum256(b)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestResetRefusedWhileLocked: a --reset of a directory another process
// serves deletes nothing and says who holds it; so does a --reset whose
// ports are taken.
func TestResetRefusedWhileLocked(t *testing.T) {
	dir := t.TempDir()
	o := fast(dir, "")
	o.Demo.Disabled = true
	serveOnce(t, o, func(info *Info) {
		// The first instance runs: stop its ledgers' writes from mattering
		// by comparing only what --reset would delete.
		before := keysDigest(t, dir)
		r := fast(dir, "")
		r.Reset = true
		_, err := Build(r)
		if !errors.Is(err, ErrDataDirLocked) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
			t.Fatalf("second instance: %v", err)
		}
		if after := keysDigest(t, dir); after != before {
			t.Fatalf("a refused --reset changed the data directory:\n%s\n---\n%s", before, after)
		}
	})

	// Ports taken: the reset is refused before anything is deleted.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	before := treeDigest(t, dir)
	r := fast(dir, "")
	r.Reset = true
	r.APIAddr = ln.Addr().String()
	if _, err := Build(r); err == nil || !strings.Contains(err.Error(), "listen for api") {
		t.Fatalf("busy port: %v", err)
	}
	if after := treeDigest(t, dir); after != before {
		t.Fatalf("a --reset on a busy port changed the data directory:\n%s\n---\n%s", before, after)
	}
	// And the lock was released: the directory can be served again.
	o2 := fast(dir, "")
	o2.Demo.Disabled = true
	serveOnce(t, o2, func(*Info) {})
}

// keysDigest is treeDigest without the ledgers' own databases, which the
// running instance keeps writing; it still sees a deleted ledger
// directory.
func keysDigest(t *testing.T, dir string) string {
	var keep []string
	for _, l := range strings.Split(treeDigest(t, dir), "\n") {
		if (strings.HasPrefix(l, "base/") || strings.HasPrefix(l, "ephemeral/")) && !strings.HasSuffix(l, "/") {
			keep = append(keep, strings.Fields(l)[0])
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n")
}

// TestDemoAllOrNothing: a start that fails half-way through making the
// demo leaves no demo; the next start makes a complete one with new keys,
// funds no wallet twice, and says it created the demo.
func TestDemoAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	o := fast(dir, "")
	// The second name cannot be a file name: creation fails after alice
	// was funded.
	o.Demo.Wallets = []string{"alice", "bad\x00name"}
	if _, err := Build(o); err == nil {
		t.Fatal("demo with a bad wallet name was created")
	}
	staged, _ := filepath.Glob(filepath.Join(dir, demoStagingPrefix+"*", "alice.json"))
	if len(staged) != 1 {
		t.Fatalf("staged keys %v", staged)
	}
	oldAlice, err := keyfile.Read(staged[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, DemoFile)); !os.IsNotExist(err) {
		t.Fatalf("demo.json written for an unfinished demo: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, WalletsDir)); !os.IsNotExist(err) {
		t.Fatalf("wallets/ present for an unfinished demo: %v", err)
	}

	serveOnce(t, fast(dir, ""), func(info *Info) {
		if info.Created || !info.DemoCreated || info.Demo == nil || len(info.Demo.Wallets) != 3 {
			t.Fatalf("info after an unfinished demo: %+v", info)
		}
		alice := info.Demo.Wallets[0]
		if alice.Address == solanaAddress(oldAlice) {
			t.Fatal("the unfinished demo's key was reused")
		}
		if filepath.Dir(alice.Keypair) != filepath.Join(dir, WalletsDir) {
			t.Fatalf("keypair path %s", alice.Keypair)
		}
		if k, err := keyfile.Read(alice.Keypair); err != nil || solanaAddress(k) != alice.Address {
			t.Fatalf("keypair file: %v", err)
		}
		c := rpc.New(info.URLs[KeyRPC])
		for addr, want := range map[string]uint64{solanaAddress(oldAlice): DefaultDemoLamports, alice.Address: DefaultDemoLamports} {
			bal, err := c.GetBalance(context.Background(), mustPub(addr), rpc.CommitmentConfirmed)
			if err != nil || bal.Value != want {
				t.Fatalf("balance of %s: %+v %v, want %d (funded once)", addr, bal, err, want)
			}
		}
	})
	if left, _ := filepath.Glob(filepath.Join(dir, demoStagingPrefix+"*")); len(left) != 0 {
		t.Fatalf("staging left behind: %v", left)
	}
	// Complete now: a restart keeps it and creates nothing.
	serveOnce(t, fast(dir, ""), func(info *Info) {
		if info.Created || info.DemoCreated {
			t.Fatalf("restart after a complete demo: %+v", info)
		}
	})
}

func solanaAddress(k []byte) string { return solana.PublicKeyFromBytes(k[32:]).String() }

func mustPub(s string) solana.PublicKey { return solana.MustPublicKeyFromBase58(s) }
