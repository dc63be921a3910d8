package server

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/system"
	"github.com/gagliardetto/solana-go/rpc"
	"github.com/gagliardetto/solana-go/rpc/ws"

	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/ledger"
)

func TestDeriveWSAddr(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{in: "127.0.0.1:8899", want: "127.0.0.1:8900"},
		{in: "127.0.0.1:7799", want: "127.0.0.1:7800"},
		{in: "127.0.0.1:0", want: "127.0.0.1:0"},
		{in: "[::1]:9000", want: "[::1]:9001"},
		{in: ":8899", want: ":8900"},
		{in: "127.0.0.1:65535", err: "no port above it"},
		{in: "localhost", err: "missing port"},
		{in: "h:x", err: `port "x"`},
	} {
		got, err := DeriveWSAddr(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %q %v, want error %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %q %v, want %q", tc.in, got, err, tc.want)
		}
	}
}

// serveNode builds o and runs fn while it serves, with the Node.
func serveNode(t *testing.T, o Options, fn func(n *Node, info *Info)) {
	t.Helper()
	n, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan *Info, 1)
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx, func(i *Info) { ready <- i }) }()
	select {
	case info := <-ready:
		fn(n, info)
	case err := <-done:
		t.Fatalf("serve stopped early: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
}

// TestLocalWebsockets drives both chain nodes with solana-go's own
// websocket client (gorilla/websocket underneath): subscriptions made,
// then a transaction sent over HTTP, and every subscription fires with
// what the transaction did. The signature notification at confirmed
// arrives only once the status reads confirmed.
func TestLocalWebsockets(t *testing.T) {
	o := fast("", "")
	o.Demo.Disabled = true
	serveNode(t, o, func(n *Node, info *Info) {
		for _, k := range []string{KeyRPCWS, KeyEphemeralWS} {
			if !strings.HasPrefix(info.URLs[k], "ws://127.0.0.1:") || info.URLs[k] == "ws"+strings.TrimPrefix(info.URLs[KeyRPC], "http") {
				t.Fatalf("%s URL %q", k, info.URLs[k])
			}
		}
		base, er := n.Local.Pair.Base, n.Local.Pair.Ephemeral
		// Funding waits for finalized: solana-go's preflight reads there.
		airdrop := func(k solana.PublicKey) {
			ctx := context.Background()
			sig, err := base.Faucet().Airdrop(ctx, k, 10_000_000_000)
			if err == nil {
				_, err = base.WaitForStatus(ctx, sig, ledger.Finalized)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		for _, node := range []struct {
			name       string
			rpcURL, ws string
			fund       func(solana.PublicKey)
		}{
			{name: "base", rpcURL: info.URLs[KeyRPC], ws: info.URLs[KeyRPCWS], fund: airdrop},
			{name: "ephemeral", rpcURL: info.URLs[KeyEphemeral], ws: info.URLs[KeyEphemeralWS], fund: func(k solana.PublicKey) {
				// The rollup has no faucet: the validator writes it (as a
				// clone from base would).
				ctx := context.Background()
				slot, err := er.Apply(ctx, func(w ledger.AccountWriter) error {
					w.Set(k, &ledger.Account{Lamports: 10_000_000_000, Owner: solana.SystemProgramID})
					return nil
				})
				if err == nil {
					err = er.WaitForSlot(ctx, slot, ledger.Finalized)
				}
				if err != nil {
					t.Fatal(err)
				}
			}},
			// The same, through the upgrade on the RPC port itself.
			{name: "base via the RPC port", rpcURL: info.URLs[KeyRPC], ws: "ws" + strings.TrimPrefix(info.URLs[KeyRPC], "http"), fund: airdrop},
		} {
			t.Run(node.name, func(t *testing.T) { driveNode(t, node.rpcURL, node.ws, node.fund) })
		}
	})
}

func driveNode(t *testing.T, rpcURL, wsURL string, fund func(solana.PublicKey)) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	payer := solana.NewWallet()
	dest := solana.NewWallet().PublicKey()
	fund(payer.PublicKey())
	wsc, err := ws.Connect(ctx, wsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer wsc.Close()
	rc := rpc.New(rpcURL)

	acc, err := wsc.AccountSubscribe(dest, rpc.CommitmentConfirmed)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := wsc.ProgramSubscribe(solana.SystemProgramID, rpc.CommitmentConfirmed)
	if err != nil {
		t.Fatal(err)
	}
	logs, err := wsc.LogsSubscribeMentions(dest, rpc.CommitmentConfirmed)
	if err != nil {
		t.Fatal(err)
	}
	slots, err := wsc.SlotSubscribe()
	if err != nil {
		t.Fatal(err)
	}
	roots, err := wsc.RootSubscribe()
	if err != nil {
		t.Fatal(err)
	}

	bh, err := rc.GetLatestBlockhash(ctx, rpc.CommitmentFinalized)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := solana.NewTransaction([]solana.Instruction{
		system.NewTransferInstruction(2_000_000, payer.PublicKey(), dest).Build(),
	}, bh.Value.Blockhash, solana.TransactionPayer(payer.PublicKey()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Sign(func(k solana.PublicKey) *solana.PrivateKey {
		if k == payer.PublicKey() {
			return &payer.PrivateKey
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sig, err := rc.SendTransaction(ctx, tx)
	if err != nil {
		t.Fatal(err)
	}
	// Subscribed after sendTransaction returned, as solana-go's
	// sendAndConfirm and web3.js do.
	sigSub, err := wsc.SignatureSubscribe(sig, rpc.CommitmentConfirmed)
	if err != nil {
		t.Fatal(err)
	}
	got, err := sigSub.Recv(ctx)
	if err != nil || got.Value.Err != nil {
		t.Fatalf("signature notification %+v %v", got, err)
	}
	st, err := rc.GetSignatureStatuses(ctx, false, sig)
	if err != nil || st.Value[0] == nil || st.Value[0].ConfirmationStatus == rpc.ConfirmationStatusProcessed || st.Value[0].Slot != got.Context.Slot {
		t.Fatalf("status at the confirmed notification: %+v %v (notification slot %d)", st.Value[0], err, got.Context.Slot)
	}

	a, err := acc.Recv(ctx)
	if err != nil || a.Value == nil || a.Value.Lamports != 2_000_000 || a.Value.Owner != solana.SystemProgramID || a.Context.Slot != got.Context.Slot {
		t.Fatalf("account notification %+v %v", a, err)
	}
	for {
		p, err := prog.Recv(ctx)
		if err != nil {
			t.Fatalf("program notification: %v", err)
		}
		if p.Value.Pubkey == dest {
			if p.Value.Account.Lamports != 2_000_000 {
				t.Fatalf("program notification %+v", p.Value.Account)
			}
			break
		}
	}
	l, err := logs.Recv(ctx)
	if err != nil || l.Value.Signature != sig || l.Value.Err != nil || len(l.Value.Logs) != 2 {
		t.Fatalf("logs notification %+v %v", l, err)
	}
	s, err := slots.Recv(ctx)
	if err != nil || s.Slot == 0 || s.Parent != s.Slot-1 {
		t.Fatalf("slot notification %+v %v", s, err)
	}
	r, err := roots.Recv(ctx)
	if err != nil || *r == 0 {
		t.Fatalf("root notification %v %v", r, err)
	}
}

// freePortPair finds a port p such that p and p+1 are free now.
func freePortPair(t *testing.T) int {
	t.Helper()
	for i := 0; i < 50; i++ {
		a, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := a.Addr().(*net.TCPAddr).Port
		b, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+1))
		a.Close()
		if err == nil {
			b.Close()
			return p
		}
	}
	t.Fatal("no two adjacent free ports")
	return 0
}

// TestEphemeralWSOnRouterPort: with the ephemeral RPC on port p and the
// router on p+1 (7799 and 7800 by default), web3.js pointed at the
// ephemeral RPC looks for websockets on p+1: the router's listener serves
// the ephemeral node's PubSub there, and the router's HTTP API as before.
func TestEphemeralWSOnRouterPort(t *testing.T) {
	p := freePortPair(t)
	o := fast("", "")
	o.Demo.Disabled = true
	o.EphemeralAddr = fmt.Sprintf("127.0.0.1:%d", p)
	o.RouterAddr = fmt.Sprintf("127.0.0.1:%d", p+1)
	serveNode(t, o, func(n *Node, info *Info) {
		want := fmt.Sprintf("ws://127.0.0.1:%d", p+1)
		if info.URLs[KeyEphemeralWS] != want || info.URLs[KeyRouter] != fmt.Sprintf("http://127.0.0.1:%d", p+1) {
			t.Fatalf("urls %v, want ephemeral websocket %s on the router's port", info.URLs, want)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		// The router still answers HTTP.
		rc, _ := chainclient.New(info.URLs[KeyRouter])
		if routes, err := rc.GetRoutes(ctx); err != nil || len(routes) != 1 {
			t.Fatalf("routes %v %v", routes, err)
		}
		// The websocket there is the ephemeral node's: a transaction sent to
		// the rollup is notified through it.
		wsc, err := ws.Connect(ctx, want)
		if err != nil {
			t.Fatal(err)
		}
		defer wsc.Close()
		payer := solana.NewWallet()
		er := n.Local.Pair.Ephemeral
		logs, err := wsc.LogsSubscribeMentions(payer.PublicKey(), rpc.CommitmentProcessed)
		if err != nil {
			t.Fatal(err)
		}
		slot, err := er.Apply(ctx, func(w ledger.AccountWriter) error {
			w.Set(payer.PublicKey(), &ledger.Account{Lamports: 1_000_000_000, Owner: solana.SystemProgramID})
			return nil
		})
		if err == nil {
			err = er.WaitForSlot(ctx, slot, ledger.Finalized)
		}
		if err != nil {
			t.Fatal(err)
		}
		bh, _ := er.LatestBlockhash(ledger.Finalized)
		tx, _ := solana.NewTransaction([]solana.Instruction{
			system.NewTransferInstruction(1_000_000, payer.PublicKey(), solana.NewWallet().PublicKey()).Build(),
		}, bh.Blockhash, solana.TransactionPayer(payer.PublicKey()))
		tx.Sign(func(solana.PublicKey) *solana.PrivateKey { return &payer.PrivateKey })
		sig, err := rpc.New(info.URLs[KeyEphemeral]).SendTransaction(ctx, tx)
		if err != nil {
			t.Fatal(err)
		}
		l, err := logs.Recv(ctx)
		if err != nil || l.Value.Signature != sig {
			t.Fatalf("logs through the router's port: %+v %v", l, err)
		}
	})
}
