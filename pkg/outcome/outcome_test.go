package outcome

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

func key(b byte) solana.PublicKey {
	var k solana.PublicKey
	k[0], k[31] = b, 1
	return k
}

func txOf(t *testing.T, payer solana.PublicKey, ixs ...txwire.Instruction) *txwire.Transaction {
	t.Helper()
	msg, err := txwire.Compile(payer, ixs, solana.Hash{1})
	if err != nil {
		t.Fatal(err)
	}
	return txwire.NewUnsigned(msg)
}

func TestDetect(t *testing.T) {
	owner, other, mint, validator := key(1), key(2), key(3), key(4)
	ownerATA := spl.AssociatedTokenAddress(owner, mint, spl.TokenProgramID)
	otherATA := spl.AssociatedTokenAddress(other, mint, spl.TokenProgramID)

	dep := txOf(t, owner, espl.DepositShuttle(espl.DepositShuttleArgs{Owner: owner, Mint: mint, Validator: validator, ShuttleID: 7, Amount: 50}))
	op := Detect(dep, Base)
	meta, _ := espl.FindShuttleMetadata(owner, mint, 7)
	shuttle, _ := espl.FindEphemeralATA(meta, mint)
	if op.Kind != KindDeposit || op.Owner != owner || op.Mint != mint || op.Amount != 50 || op.Shuttle != shuttle || op.Destination != ownerATA || op.Layer != Base {
		t.Errorf("deposit: %+v", op)
	}

	toOther := txOf(t, owner, espl.DepositShuttle(espl.DepositShuttleArgs{Owner: owner, Mint: mint, Validator: validator, ShuttleID: 8, Amount: 5, Destination: otherATA}))
	if op := Detect(toOther, Base); op.Kind != KindRollupTransfer || op.Destination != otherATA {
		t.Errorf("private base→ephemeral: %+v", op)
	}

	wd := txOf(t, owner, spl.CreateAssociatedTokenAccount(owner, owner, mint, spl.TokenProgramID, true),
		espl.WithdrawShuttle(espl.WithdrawShuttleArgs{Owner: owner, Mint: mint, Validator: validator, ShuttleID: 9, Amount: 20}))
	if op := Detect(wd, Base); op.Kind != KindWithdraw || op.Amount != 20 || op.Destination != ownerATA {
		t.Errorf("withdraw: %+v", op)
	}

	pt, err := espl.PrivateTransfer(espl.PrivateTransferArgs{Owner: owner, Mint: mint, Validator: validator, Destination: other,
		ShuttleID: 10, Amount: 10_000, Split: 3, MaxDelayMs: 1000, Rand: rand.Reader})
	if err != nil {
		t.Fatal(err)
	}
	queue, _ := espl.FindTransferQueue(mint, validator)
	op = Detect(txOf(t, owner, pt), Base)
	d, _ := espl.Decode(pt.Data, metasOf(pt))
	if op.Kind != KindPrivateTransfer || op.Queue != queue || op.GroupID != d.(espl.PrivateTransferIx).GroupID() || op.GroupID == 0 || op.Amount != 10_000 {
		t.Errorf("private: %+v", op)
	}

	q16, err := espl.DepositAndQueueTransfer(espl.DepositAndQueueTransferArgs{Owner: owner, Mint: mint, Validator: validator, Destination: other,
		Amount: 99, GroupID: 0x0a0b0c, Split: 2, Rand: rand.Reader})
	if err != nil {
		t.Fatal(err)
	}
	if op := Detect(txOf(t, owner, q16), Ephemeral); op.Kind != KindQueuedTransfer || op.GroupID != 0x0a0b0c || op.Queue != queue || op.Amount != 99 || op.Layer != Ephemeral {
		t.Errorf("queued: %+v", op)
	}

	plain := txOf(t, owner, spl.TokenTransfer(spl.TokenProgramID, ownerATA, otherATA, owner, 5))
	if op := Detect(plain, Base); op.Kind != KindTransaction {
		t.Errorf("plain transfer: %+v", op)
	}
}

func metasOf(ix txwire.Instruction) []solana.PublicKey {
	out := make([]solana.PublicKey, len(ix.Accounts))
	for i, a := range ix.Accounts {
		out[i] = a.PublicKey
	}
	return out
}

// fakeNode answers getHealth with -32005 once unhealthy is set, and
// everything else with an empty history.
func fakeNode(t *testing.T, unhealthy *atomic.Bool) *chainclient.Client {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal(b, &req)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case req.Method == "getHealth" && unhealthy.Load():
			w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"error":{"code":-32005,"message":"Node is unhealthy"}}`))
		case req.Method == "getHealth":
			w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":"ok"}`))
		default:
			w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":[]}`))
		}
	}))
	t.Cleanup(srv.Close)
	c, err := chainclient.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestHaltedNode: a deposit whose shuttle never closes because the node
// halted ends with a *HaltedError naming the node, not a wait forever.
func TestHaltedNode(t *testing.T) {
	var baseDown, erDown atomic.Bool
	base, er := fakeNode(t, &baseDown), fakeNode(t, &erDown)
	ctx, stop := WatchHealth(context.Background(), 10*time.Millisecond, Node{Layer: Base, Client: base}, Node{Layer: Ephemeral, Client: er})
	defer stop()
	tr := &Tracker{Base: base, Ephemeral: er, Follow: true, PollInterval: 5 * time.Millisecond}
	op := Operation{Kind: KindDeposit, Layer: Base, Shuttle: key(9), Amount: 1}
	done := make(chan error, 1)
	go func() {
		_, err := tr.Track(ctx, op)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("Track ended while the nodes were healthy: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	erDown.Store(true)
	select {
	case err := <-done:
		var h *HaltedError
		if !errors.As(err, &h) || h.Layer != Ephemeral || !errors.Is(err, ErrHalted) {
			t.Fatalf("Track: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Track did not give up on a halted node")
	}
}

func TestNotFollowed(t *testing.T) {
	var events []Event
	tr := &Tracker{OnEvent: func(e Event) { events = append(events, e) }}
	res, err := tr.Track(context.Background(), Operation{Kind: KindDeposit})
	if err != nil || res.Status != Unknown || len(events) != 1 || events[0].Event != "unknown" {
		t.Fatalf("%+v %v %+v", res, err, events)
	}
	res, err = tr.Track(context.Background(), Operation{Kind: KindTransaction})
	if err != nil || res.Status != Settled {
		t.Fatalf("%+v %v", res, err)
	}
}
