package server

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
)

// serveOnce runs Serve on port 0 until fn returns, then stops it and
// returns Serve's error.
func serveOnce(t *testing.T, dataDir string, fn func(url string)) {
	t.Helper()
	addrFile := filepath.Join(t.TempDir(), "addr.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	ready := make(chan map[string]string, 1)
	go func() {
		done <- Serve(ctx, Options{
			DataDir: dataDir, RPCAddr: "127.0.0.1:0", AddrFile: addrFile,
			SlotDuration: 10 * time.Millisecond, FinalityDepth: 2,
			Ready: func(urls map[string]string) { ready <- urls },
		})
	}()
	var urls map[string]string
	select {
	case urls = <-ready:
	case err := <-done:
		t.Fatalf("serve stopped early: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not start")
	}
	b, err := os.ReadFile(addrFile)
	if err != nil {
		t.Fatal(err)
	}
	var fromFile map[string]string
	if err := json.Unmarshal(b, &fromFile); err != nil || fromFile[KeyRPC] != urls[KeyRPC] || len(fromFile) != 1 {
		t.Fatalf("address file %s: %v", b, err)
	}
	fn(urls[KeyRPC])
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
	if _, err := os.Stat(addrFile); !os.IsNotExist(err) {
		t.Fatal("address file left behind")
	}
}

func TestServeRestartKeepsState(t *testing.T) {
	dir := t.TempDir()
	wallet := solana.NewWallet().PublicKey()
	var sig solana.Signature
	serveOnce(t, dir, func(url string) {
		c := rpc.New(url)
		ctx := context.Background()
		var err error
		if sig, err = c.RequestAirdrop(ctx, wallet, 5_000_000_000, rpc.CommitmentConfirmed); err != nil {
			t.Fatal(err)
		}
		// Shut down right away: the airdrop is only processed; a graceful
		// stop must still write its slot.
	})
	serveOnce(t, dir, func(url string) {
		c := rpc.New(url)
		ctx := context.Background()
		bal, err := c.GetBalance(ctx, wallet, rpc.CommitmentFinalized)
		if err != nil || bal.Value != 5_000_000_000 {
			t.Fatalf("balance after restart %+v %v", bal, err)
		}
		st, err := c.GetSignatureStatuses(ctx, true, sig)
		if err != nil || st.Value[0] == nil || st.Value[0].ConfirmationStatus != rpc.ConfirmationStatusFinalized {
			t.Fatalf("status after restart %+v %v", st, err)
		}
	})
}

func TestServeBindError(t *testing.T) {
	err := Serve(context.Background(), Options{RPCAddr: "256.0.0.1:1"})
	if err == nil {
		t.Fatal("expected a listen error")
	}
}

// TestServePair runs the rollup in a box: the address file names both
// endpoints and the ephemeral node answers getIdentity with the validator
// identity stored in the data directory.
func TestServePair(t *testing.T) {
	dir := t.TempDir()
	addrFile := filepath.Join(t.TempDir(), "addr.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan map[string]string, 1)
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, Options{DataDir: dir, RPCAddr: "127.0.0.1:0", EphemeralAddr: "127.0.0.1:0", AddrFile: addrFile,
			SlotDuration: 20 * time.Millisecond, EphemeralSlotDuration: 10 * time.Millisecond,
			Ready: func(urls map[string]string) { ready <- urls }})
	}()
	var urls map[string]string
	select {
	case urls = <-ready:
	case err := <-done:
		t.Fatalf("serve stopped early: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not start")
	}
	if urls[KeyRPC] == "" || urls[KeyEphemeral] == "" {
		t.Fatalf("urls %v", urls)
	}
	id, err := rpc.New(urls[KeyEphemeral]).GetIdentity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "validator-keypair.json")); err != nil || id.Identity.IsZero() {
		t.Fatalf("identity %v, keypair file: %v", id.Identity, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
}
