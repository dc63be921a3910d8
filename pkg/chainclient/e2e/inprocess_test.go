package e2e

import (
	"testing"
	"time"

	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/rpcserver"
)

// TestInProcessHandler drives the embedded node through
// chainclient.WithHandler: no listener, same client code path.
func TestInProcessHandler(t *testing.T) {
	l, err := ledger.Open(ledger.Config{Name: "e2e-inproc", SlotDuration: 10 * time.Millisecond, FinalityDepth: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	c, err := chainclient.New("http://127.0.0.1:8899", chainclient.WithHandler(rpcserver.New(l, rpcserver.Options{})))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if id, err := c.GetIdentity(ctx); err != nil || id.Identity != l.Identity() {
		t.Fatalf("GetIdentity = %+v, %v", id, err)
	}
	alice, bob := newKey(t), newKey(t)
	fund(t, c, pub(alice), 1_000_000_000)
	raw, bh := transfer(t, c, alice, pub(bob), 5_000_000)
	sig, err := c.SendTransaction(ctx, raw, chainclient.SendOptions{PreflightCommitment: chainclient.Confirmed})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Confirm(ctx, sig, bh.LastValidBlockHeight, chainclient.Confirmed, fast); err != nil {
		t.Fatal(err)
	}
	if bal, err := c.GetBalance(ctx, pub(bob), chainclient.Confirmed); err != nil || bal != 5_000_000 {
		t.Fatalf("balance = %d, %v", bal, err)
	}
}
