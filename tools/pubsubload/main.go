// Command pubsubload measures ferry serve's PubSub websockets from the
// outside, as a client sees them:
//
//   - signature-notification latency: from sendTransaction to the
//     signatureSubscribe notification at confirmed (subscribing right after
//     the send, as web3.js's sendAndConfirmTransaction does), p50/p90/p99,
//     on both chain nodes. Each sender waits a random fraction of a slot
//     before each send, so sends fall anywhere in a slot as real traffic
//     does (without it, a sender that sends again as soon as it is
//     notified always sends at the start of a slot and waits a whole one);
//   - capacity: how many concurrent subscriptions one node holds, with the
//     server's RSS after every 10 000, and that notifications still arrive
//     (a latency sample taken with all of them held).
//
// It starts `ferry serve --in-memory` itself (--ferry BINARY), or attaches
// to a running one (--addr-file FILE --pid PID). Subscriptions use
// solana-go's rpc/ws client.
//
//	go build -o /tmp/ferry . && go run ./tools/pubsubload --ferry /tmp/ferry
package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
	"github.com/gagliardetto/solana-go/rpc/ws"

	"github.com/ferry-sh/ferry/pkg/localnet"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

func main() {
	ferry := flag.String("ferry", "", "ferry binary to start (serve --in-memory on free ports)")
	addrFile := flag.String("addr-file", "", "address file of a running ferry serve (instead of --ferry)")
	pid := flag.Int("pid", 0, "PID of the running ferry serve, for RSS (with --addr-file)")
	n := flag.Int("n", 400, "transactions per node for the latency measurement")
	workers := flag.Int("workers", 8, "concurrent senders, each with its own websocket")
	subs := flag.Int("subs", 50_000, "subscriptions to hold for the capacity measurement")
	conns := flag.Int("conns", 100, "connections the subscriptions are spread over")
	baseSlot := flag.Duration("base-slot", localnet.DefaultBaseSlot, "the base node's slot time (senders spread sends over it)")
	erSlot := flag.Duration("ephemeral-slot", localnet.DefaultEphemeralSlot, "the ephemeral node's slot time")
	flag.Parse()
	slotTimes = map[string]time.Duration{"base": *baseSlot, "ephemeral": *erSlot}
	if err := run(*ferry, *addrFile, *pid, *n, *workers, *subs, *conns); err != nil {
		fmt.Fprintln(os.Stderr, "pubsubload:", err)
		os.Exit(1)
	}
}

// slotTimes are the nodes' slot times, by node name.
var slotTimes map[string]time.Duration

func run(ferry, addrFile string, pid, n, workers, subs, conns int) error {
	if ferry != "" {
		dir, err := os.MkdirTemp("", "pubsubload")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		addrFile = filepath.Join(dir, "addr.json")
		cmd := exec.Command(ferry, "serve", "--in-memory", "--no-demo", "--log-level", "warn", "--addr-file", addrFile,
			"--api-addr", "127.0.0.1:0", "--rpc-addr", "127.0.0.1:0", "--ephemeral-addr", "127.0.0.1:0", "--router-addr", "127.0.0.1:0")
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("start ferry serve: %w", err)
		}
		pid = cmd.Process.Pid
		defer func() {
			cmd.Process.Signal(syscall.SIGINT)
			cmd.Wait()
		}()
	}
	urls, err := readAddrFile(addrFile)
	if err != nil {
		return err
	}
	fmt.Printf("ferry serve pid %d: %v\n", pid, urls)
	ctx := context.Background()
	for _, node := range []struct{ name, rpc, ws string }{
		{"base", urls["rpc"], urls["rpcWs"]},
		{"ephemeral", urls["ephemeral"], urls["ephemeralWs"]},
	} {
		lat, err := latency(ctx, node.rpc, node.ws, n, workers, slotTimes[node.name])
		if err != nil {
			return fmt.Errorf("%s latency: %w", node.name, err)
		}
		fmt.Printf("%-9s send→confirmed notification, %d transactions, %d workers: %s\n", node.name, len(lat), workers, summary(lat))
	}
	return capacity(ctx, urls["rpc"], urls["rpcWs"], pid, subs, conns, workers)
}

func readAddrFile(path string) (map[string]string, error) {
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, err := os.ReadFile(path)
		var urls map[string]string
		if err == nil && json.Unmarshal(b, &urls) == nil && urls["rpcWs"] != "" {
			return urls, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no address file at %s", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// latency sends n memo transactions from workers and times each from
// sendTransaction to its confirmed signature notification.
func latency(ctx context.Context, rpcURL, wsURL string, n, workers int, slot time.Duration) ([]time.Duration, error) {
	var mu sync.Mutex
	var out []time.Duration
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := worker(ctx, rpcURL, wsURL, n/workers, w, slot)
			if err != nil {
				errs <- err
				return
			}
			mu.Lock()
			out = append(out, d...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	return out, nil
}

func worker(ctx context.Context, rpcURL, wsURL string, n, id int, slot time.Duration) ([]time.Duration, error) {
	_, payer, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	payerKey := solana.PublicKeyFromBytes(payer[32:])
	if err := fund(ctx, rpcURL, payerKey); err != nil {
		return nil, err
	}
	wsc, err := ws.Connect(ctx, wsURL)
	if err != nil {
		return nil, err
	}
	defer wsc.Close()
	out := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		var bh struct {
			Value struct {
				Blockhash string `json:"blockhash"`
			} `json:"value"`
		}
		if err := call(ctx, rpcURL, "getLatestBlockhash", []any{map[string]string{"commitment": "confirmed"}}, &bh); err != nil {
			return nil, err
		}
		hash, err := solana.HashFromBase58(bh.Value.Blockhash)
		if err != nil {
			return nil, err
		}
		msg, err := txwire.Compile(payerKey, []txwire.Instruction{spl.Memo(fmt.Sprintf("pubsubload %d/%d %d", id, i, time.Now().UnixNano()))}, hash)
		if err != nil {
			return nil, err
		}
		tx := txwire.NewUnsigned(msg)
		if err := tx.Sign(payer); err != nil {
			return nil, err
		}
		raw := base64.StdEncoding.EncodeToString(tx.Bytes())
		time.Sleep(mrand.N(slot))
		start := time.Now()
		var sigStr string
		if err := call(ctx, rpcURL, "sendTransaction", []any{raw, map[string]any{"encoding": "base64", "preflightCommitment": "confirmed"}}, &sigStr); err != nil {
			return nil, err
		}
		sig, err := solana.SignatureFromBase58(sigStr)
		if err != nil {
			return nil, err
		}
		sub, err := wsc.SignatureSubscribe(sig, rpc.CommitmentConfirmed)
		if err != nil {
			return nil, err
		}
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		res, err := sub.Recv(rctx)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("notification for %s: %w", sig, err)
		}
		if res.Value.Err != nil {
			return nil, fmt.Errorf("%s failed: %v", sig, res.Value.Err)
		}
		out = append(out, time.Since(start))
	}
	return out, nil
}

// fund airdrops 1 SOL on the base node and waits until it is confirmed.
// The ephemeral node has no faucet and needs none: its transactions are
// free for any fee payer.
func fund(ctx context.Context, rpcURL string, key solana.PublicKey) error {
	var sig string
	err := call(ctx, rpcURL, "requestAirdrop", []any{key.String(), 1_000_000_000}, &sig)
	var rpcErr *rpcError
	if errors.As(err, &rpcErr) && rpcErr.Code == -32601 {
		return nil // no faucet: the ephemeral node
	}
	if err != nil {
		return err
	}
	for {
		var st struct {
			Value []*struct {
				ConfirmationStatus string `json:"confirmationStatus"`
			} `json:"value"`
		}
		if err := call(ctx, rpcURL, "getSignatureStatuses", []any{[]string{sig}}, &st); err != nil {
			return err
		}
		if len(st.Value) == 1 && st.Value[0] != nil && st.Value[0].ConfirmationStatus != "processed" {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%d: %s", e.Code, e.Message) }

var httpClient = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

func call(ctx context.Context, url, method string, params []any, out any) error {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if r.Error != nil {
		return r.Error
	}
	return json.Unmarshal(r.Result, out)
}

func summary(d []time.Duration) string {
	if len(d) == 0 {
		return "no samples"
	}
	slices.Sort(d)
	q := func(p float64) time.Duration { return d[min(len(d)-1, int(p*float64(len(d))))] }
	ms := func(x time.Duration) string {
		return strconv.FormatFloat(float64(x.Microseconds())/1000, 'f', 1, 64) + " ms"
	}
	return fmt.Sprintf("p50 %s, p90 %s, p99 %s, max %s", ms(q(0.50)), ms(q(0.90)), ms(q(0.99)), ms(d[len(d)-1]))
}

// capacity opens conns connections holding subs accountSubscribe
// subscriptions (distinct accounts, so none is shared) on the base node,
// reports the server's RSS every 10 000, then checks that a signature
// notification still arrives in time with all of them held.
func capacity(ctx context.Context, rpcURL, wsURL string, pid, subs, conns, workers int) error {
	rss0, err := rss(pid)
	if err != nil {
		return err
	}
	fmt.Printf("capacity: %d accountSubscribe (confirmed, base64) over %d connections; server RSS before: %.1f MiB\n", subs, conns, mib(rss0))
	clients := make([]*ws.Client, conns)
	for i := range clients {
		if clients[i], err = ws.Connect(ctx, wsURL); err != nil {
			return fmt.Errorf("connection %d: %w", i, err)
		}
		defer clients[i].Close()
	}
	held := make([]*ws.AccountSubscription, 0, subs)
	step := 10_000
	last := rss0
	start := time.Now()
	for len(held) < subs {
		batch := min(step, subs-len(held))
		var mu sync.Mutex
		var wg sync.WaitGroup
		var firstErr error
		per := (batch + conns - 1) / conns
		for i, c := range clients {
			want := min(per, batch-i*per)
			if want <= 0 {
				break
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := 0; j < want; j++ {
					_, k, _ := ed25519.GenerateKey(rand.Reader)
					s, err := c.AccountSubscribeWithOpts(solana.PublicKeyFromBytes(k[32:]), rpc.CommitmentConfirmed, solana.EncodingBase64)
					mu.Lock()
					if err != nil && firstErr == nil {
						firstErr = err
					}
					if err == nil {
						held = append(held, s)
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if firstErr != nil {
			return firstErr
		}
		// Every subscription was acknowledged once a request made after it
		// on each connection has been answered: a slot subscription.
		errs := make(chan error, len(clients))
		for _, c := range clients {
			go func() {
				s, err := c.SlotSubscribe()
				if err == nil {
					rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
					_, err = s.Recv(rctx)
					cancel()
					s.Unsubscribe()
				}
				errs <- err
			}()
		}
		for range clients {
			if err := <-errs; err != nil {
				return fmt.Errorf("slot notification with %d subscriptions: %w", len(held), err)
			}
		}
		time.Sleep(time.Second) // let the server's heap settle
		r, err := rss(pid)
		if err != nil {
			return err
		}
		fmt.Printf("  %6d held: RSS %.1f MiB (+%.1f MiB for the last %d, %.0f bytes each)\n",
			len(held), mib(r), mib(r-last), batch, float64(r-last)/float64(batch))
		last = r
	}
	fmt.Printf("  subscribing took %s; RSS growth %.1f MiB per 10 000 subscriptions on average\n",
		time.Since(start).Round(time.Millisecond), mib(last-rss0)/float64(subs)*10_000)
	lat, err := latency(ctx, rpcURL, wsURL, 10*workers, workers, slotTimes["base"])
	if err != nil {
		return fmt.Errorf("latency with %d subscriptions held: %w", len(held), err)
	}
	fmt.Printf("base      send→confirmed notification with %d subscriptions held: %s\n", len(held), summary(lat))
	return nil
}

// rss reads a process's resident set size in bytes.
func rss(pid int) (int64, error) {
	if pid == 0 {
		return 0, nil
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no VmRSS for pid %d", pid)
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
