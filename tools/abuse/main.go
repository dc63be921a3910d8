// Command abuse runs an abuse mix against a running `ferry serve` and
// reports what it cost the server: peak RSS (VmHWM from /proc/PID/status)
// and whether /health kept answering.
//
//	ferry serve --in-memory --addr-file /tmp/ferry.json ... &
//	go run ./tools/abuse -addr-file /tmp/ferry.json -pid $! -duration 60s
//
// tools/abuse/run.sh builds ferry, starts it, runs this and stops it.
//
// The mix (issue 13's reproductions, all at once, each in its own
// goroutines):
//
//   - deep JSON: bodies of '[' (or {"a":) just under each endpoint's body
//     limit to the base node, the ephemeral node, the router, a payments
//     API route and /mcp;
//   - long strings: getBalance and getSignatureStatuses with 80 KB of
//     base58, the router's getDelegationStatus with 80 KB, the API's login
//     with a 60 KB signature and a balance query with a 40 KB address;
//   - big batches: 800 getMultipleAccounts of 100 keys each on the base
//     node, half of them a -big-account byte account the tool creates
//     first (3.7 MB asking for ~56 GB with the default 1 MiB), /mcp
//     batches of 10 000 tools/list, and of 32;
//   - many connections: -conns idle TCP connections per chain-node port,
//     re-opened as the server closes them, plus bodies trickled a byte at
//     a time.
//
// Meanwhile it polls GET /health on the API and the base node every
// -health-every and counts answers that are not 200 within -health-timeout,
// twice: with a keep-alive client (as SDKs, the CLI and load balancers
// connect; the goal is judged on these) and with a new connection per poll
// (which also measures getting a connection accepted while the idle
// connections churn through the cap).
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

type config struct {
	addrFile      string
	pid           int
	duration      time.Duration
	conns         int
	workers       int
	healthEvery   time.Duration
	healthTimeout time.Duration
	abortRSS      int64
	bigAccount    int
}

func main() {
	var c config
	flag.StringVar(&c.addrFile, "addr-file", "", "the address file of the ferry serve to attack (--addr-file)")
	flag.IntVar(&c.pid, "pid", 0, "its process id, for RSS")
	flag.DurationVar(&c.duration, "duration", 60*time.Second, "how long to attack")
	flag.IntVar(&c.conns, "conns", 1500, "idle connections held per chain-node port")
	flag.IntVar(&c.workers, "workers", 2, "concurrent clients per attack")
	flag.DurationVar(&c.healthEvery, "health-every", 100*time.Millisecond, "how often to poll /health")
	flag.DurationVar(&c.healthTimeout, "health-timeout", 2*time.Second, "a /health answer slower than this is a failure")
	flag.IntVar(&c.bigAccount, "big-account", 1<<20, "bytes of the account created (with faucet SOL) for getMultipleAccounts to return")
	flag.Int64Var(&c.abortRSS, "abort-rss-mb", 0, "stop the run early when the server's RSS passes this many MB (0: never), to measure a server without limits safely")
	flag.Parse()
	if c.addrFile == "" || c.pid == 0 {
		fmt.Fprintln(os.Stderr, "abuse: -addr-file and -pid are required")
		os.Exit(2)
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "abuse:", err)
		os.Exit(1)
	}
}

// tally counts the outcomes of one attack.
type tally struct {
	mu       sync.Mutex
	requests int
	outcomes map[string]int
	bytesIn  int64
}

func (t *tally) add(outcome string, n int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.requests++
	t.bytesIn += n
	if t.outcomes == nil {
		t.outcomes = map[string]int{}
	}
	t.outcomes[outcome]++
}

func (t *tally) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	keys := make([]string, 0, len(t.outcomes))
	for k := range t.outcomes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s×%d", k, t.outcomes[k])
	}
	return fmt.Sprintf("%d requests, %.1f MB answered; %s", t.requests, float64(t.bytesIn)/1e6, strings.Join(parts, ", "))
}

// attack is a named request generator.
type attack struct {
	name string
	do   func(ctx context.Context, cl *http.Client) (outcome string, answered int64)
}

func run(c config) error {
	b, err := os.ReadFile(c.addrFile)
	if err != nil {
		return err
	}
	var urls map[string]string
	if err := json.Unmarshal(b, &urls); err != nil {
		return fmt.Errorf("read %s: %w", c.addrFile, err)
	}
	for _, k := range []string{"api", "rpc", "ephemeral", "router"} {
		if urls[k] == "" {
			return fmt.Errorf("%s has no %q URL (local mode is needed)", c.addrFile, k)
		}
	}
	before, err := procStatus(c.pid)
	if err != nil {
		return err
	}
	keys, err := accountKeys(urls["rpc"])
	if err != nil {
		return err
	}
	big, err := bigAccount(urls["rpc"], c.bigAccount)
	if err != nil {
		return fmt.Errorf("create the %d-byte account: %w", c.bigAccount, err)
	}
	// Every other key of the getMultipleAccounts batch is the big account.
	for i := 0; i < len(keys); i += 2 {
		keys[i] = big
	}

	ctx, cancel := context.WithTimeout(context.Background(), c.duration)
	defer cancel()
	attacks := buildAttacks(urls, keys)
	tallies := make([]*tally, len(attacks))
	var wg sync.WaitGroup
	for i, a := range attacks {
		tallies[i] = &tally{}
		for w := 0; w < c.workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cl := &http.Client{Timeout: 30 * time.Second}
				for ctx.Err() == nil {
					outcome, n := a.do(ctx, cl)
					if ctx.Err() != nil && outcome != "200" {
						return // cut off by the end of the run
					}
					tallies[i].add(outcome, n)
				}
			}()
		}
	}
	var held atomic.Int64
	var reopened atomic.Int64
	for _, k := range []string{"rpc", "ephemeral"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			holdConns(ctx, hostOf(urls[k]), c.conns, &held, &reopened)
		}()
	}
	trickled := &tally{}
	for w := 0; w < 20; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				trickled.add(trickle(ctx, hostOf(urls["rpc"])), 0)
			}
		}()
	}
	health := map[string]*healthStats{}
	for _, k := range []string{"api", "rpc"} {
		for _, fresh := range []bool{false, true} {
			h := &healthStats{}
			health[probeName(k, fresh)] = h
			wg.Add(1)
			go func() {
				defer wg.Done()
				pollHealth(ctx, urls[k]+"/health", c.healthEvery, c.healthTimeout, fresh, h)
			}()
		}
	}
	var peakRSS, peakThreads atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			if st, err := procStatus(c.pid); err == nil {
				peakRSS.Store(max(peakRSS.Load(), st["VmRSS"]))
				peakThreads.Store(max(peakThreads.Load(), st["Threads"]))
				if c.abortRSS > 0 && st["VmRSS"] > c.abortRSS<<20 {
					fmt.Printf("aborting: RSS %.0f MB passed -abort-rss-mb %d\n", mb(st["VmRSS"]), c.abortRSS)
					cancel()
				}
			} else {
				fmt.Printf("the server is gone: %v\n", err)
				cancel()
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	start := time.Now()
	wg.Wait()
	after, err := procStatus(c.pid)
	if err != nil {
		return fmt.Errorf("the server is gone: %w", err)
	}

	fmt.Printf("abuse mix against pid %d for %s (%d workers per attack, %d idle connections per chain node)\n",
		c.pid, time.Since(start).Round(time.Second), c.workers, c.conns)
	for i, a := range attacks {
		fmt.Printf("  %-28s %s\n", a.name, tallies[i])
	}
	fmt.Printf("  %-28s %s\n", "trickled bodies (rpc)", trickled)
	fmt.Printf("  %-28s %d opened (%d re-opened after the server closed them)\n", "idle connections", held.Load(), reopened.Load())
	ok := true
	for _, k := range []string{"api", "rpc"} {
		for _, fresh := range []bool{false, true} {
			h := health[probeName(k, fresh)]
			fmt.Printf("  /health %-26s %s\n", probeName(k, fresh)+":", h)
			if !fresh && h.failed.Load() > 0 {
				ok = false
			}
		}
	}
	fmt.Printf("RSS: before %.1f MB, peak during the run %.1f MB (VmRSS sampled every 250 ms), after %.1f MB\n",
		mb(before["VmRSS"]), mb(peakRSS.Load()), mb(after["VmRSS"]))
	fmt.Printf("peak RSS since the server started (VmHWM): %.1f MB; threads peak %d\n", mb(after["VmHWM"]), peakThreads.Load())
	if after["VmHWM"] >= 256<<20 {
		ok = false
		fmt.Println("FAIL: peak RSS reached 256 MB")
	}
	if !ok {
		return errors.New("goal missed")
	}
	fmt.Println("OK: peak RSS under 256 MB and /health answered throughout (keep-alive probes)")
	return nil
}

func probeName(endpoint string, fresh bool) string {
	if fresh {
		return endpoint + ", new connection each"
	}
	return endpoint + ", keep-alive"
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }

func hostOf(u string) string { return strings.TrimPrefix(strings.TrimPrefix(u, "http://"), "https://") }

// procStatus reads the kB fields of /proc/PID/status, in bytes (Threads as
// a count).
func procStatus(pid int) (map[string]int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		if len(f) > 1 && f[1] == "kB" {
			n <<= 10
		}
		out[k] = n
	}
	return out, nil
}

// accountKeys are 100 keys of accounts that exist on the base node (with
// data where possible), for getMultipleAccounts.
func accountKeys(rpc string) ([]string, error) {
	var info struct {
		Result struct {
			Faucet      string  `json:"faucet"`
			DefaultMint *string `json:"defaultMint"`
		} `json:"result"`
	}
	resp, err := http.Post(rpc, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ferry_faucetInfo"}`))
	if err != nil {
		return nil, fmt.Errorf("ask the faucet: %w", err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		return nil, fmt.Errorf("ask the faucet: %w", err)
	}
	base := []string{
		"SysvarC1ock11111111111111111111111111111111", "SysvarRent111111111111111111111111111111111",
		"SysvarS1otHashes111111111111111111111111111", "SysvarEpochSchedu1e111111111111111111111111",
		"TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", info.Result.Faucet,
	}
	if info.Result.DefaultMint != nil {
		base = append(base, *info.Result.DefaultMint)
	}
	keys := make([]string, 100)
	for i := range keys {
		keys[i] = base[i%len(base)]
	}
	return keys, nil
}

// bigAccount creates an account of size bytes on the base node, paid by
// a fresh key funded by the faucet (as any client may), and returns its
// address: a getMultipleAccounts of 100 copies asks for 100 times its
// base64 form.
func bigAccount(rpc string, size int) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := chainclient.New(rpc)
	if err != nil {
		return "", err
	}
	_, payer, _ := ed25519.GenerateKey(rand.Reader)
	_, acct, _ := ed25519.GenerateKey(rand.Reader)
	pub := func(k ed25519.PrivateKey) solana.PublicKey { return solana.PublicKeyFromBytes(k[32:]) }
	rent, err := c.GetMinimumBalanceForRentExemption(ctx, size, chainclient.Confirmed)
	if err != nil {
		return "", err
	}
	sig, err := c.RequestAirdrop(ctx, pub(payer), rent+1_000_000_000, chainclient.Confirmed)
	if err != nil {
		return "", err
	}
	bh, err := c.GetLatestBlockhash(ctx, chainclient.Confirmed)
	if err != nil {
		return "", err
	}
	if _, err := c.Confirm(ctx, sig, bh.LastValidBlockHeight, chainclient.Confirmed, chainclient.ConfirmOptions{}); err != nil {
		return "", fmt.Errorf("airdrop: %w", err)
	}
	msg, err := txwire.Compile(pub(payer), []txwire.Instruction{
		spl.SystemCreateAccount(pub(payer), pub(acct), rent, uint64(size), spl.SystemProgramID),
	}, bh.Hash)
	if err != nil {
		return "", err
	}
	tx := txwire.NewUnsigned(msg)
	if err := tx.Sign(payer, acct); err != nil {
		return "", err
	}
	if sig, err = c.SendTransaction(ctx, tx.Bytes(), chainclient.SendOptions{PreflightCommitment: chainclient.Confirmed}); err != nil {
		return "", err
	}
	if _, err := c.Confirm(ctx, sig, bh.LastValidBlockHeight, chainclient.Confirmed, chainclient.ConfirmOptions{}); err != nil {
		return "", fmt.Errorf("create account: %w", err)
	}
	return pub(acct).String(), nil
}

func rpcBody(method string, params ...any) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	return b
}

func batch(n int, item []byte) []byte {
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i := 0; i < n; i++ {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(item)
	}
	buf.WriteByte(']')
	return buf.Bytes()
}

// post sends body and reads the whole answer; the outcome is the status
// code, plus the first JSON-RPC or REST error code in the answer.
func post(ctx context.Context, cl *http.Client, url, contentType string, body []byte) (string, int64) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return "error", 0
	}
	req.Header.Set("Content-Type", contentType)
	return send(cl, req)
}

func send(cl *http.Client, req *http.Request) (string, int64) {
	resp, err := cl.Do(req)
	if err != nil {
		return "neterr", 0
	}
	defer resp.Body.Close()
	// Only the head of the answer is kept; the rest is counted.
	head := make([]byte, 512)
	n, _ := io.ReadFull(resp.Body, head)
	rest, _ := io.Copy(io.Discard, resp.Body)
	outcome := strconv.Itoa(resp.StatusCode)
	if code := errorCode(head[:n]); code != "" {
		outcome += "/" + code
	}
	return outcome, int64(n) + rest
}

// errorCode finds the first "code": value in the head of an answer.
func errorCode(head []byte) string {
	i := bytes.Index(head, []byte(`"code":`))
	if i < 0 {
		return ""
	}
	rest := head[i+len(`"code":`):]
	end := bytes.IndexAny(rest, ",}")
	if end < 0 {
		return ""
	}
	return strings.Trim(string(rest[:end]), `" `)
}

func buildAttacks(urls map[string]string, keys []string) []attack {
	// Each body is just under the body limit of its endpoint (chain nodes
	// 4 MiB, router and /mcp 1 MiB, the API 64 KiB), so that it is parsed.
	deep := bytes.Repeat([]byte("["), 4<<20-1)
	deepObj := append([]byte(`{"from":`), bytes.Repeat([]byte(`{"a":`), 60<<10/5)...)
	long := strings.Repeat("z", 80_000) // not "1": leading "1"s decode in linear time
	gma := batch(800, rpcBody("getMultipleAccounts", keys, map[string]any{"encoding": "base64"}))
	mcpHuge := batch(10_000, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`))
	mcp32 := batch(32, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`))
	login, _ := json.Marshal(map[string]any{"pubkey": keys[0], "challenge": "x", "signature": strings.Repeat("z", 60<<10)})
	jsonPost := func(url string, body []byte) func(context.Context, *http.Client) (string, int64) {
		return func(ctx context.Context, cl *http.Client) (string, int64) {
			return post(ctx, cl, url, "application/json", body)
		}
	}
	get := func(url string) func(context.Context, *http.Client) (string, int64) {
		return func(ctx context.Context, cl *http.Client) (string, int64) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				return "error", 0
			}
			return send(cl, req)
		}
	}
	return []attack{
		{"deep JSON rpc", jsonPost(urls["rpc"], deep)},
		{"deep JSON ephemeral", jsonPost(urls["ephemeral"], deep)},
		{"deep JSON router", jsonPost(urls["router"], deep[:1<<20-1])},
		{"deep JSON api", jsonPost(urls["api"]+"/v1/spl/transfer", deepObj)},
		{"deep JSON /mcp", jsonPost(urls["api"]+"/mcp", deep[:1<<20-1])},
		{"80 KB getBalance", jsonPost(urls["rpc"], rpcBody("getBalance", long))},
		{"80 KB getSignatureStatuses", jsonPost(urls["rpc"], rpcBody("getSignatureStatuses", []string{long}))},
		{"80 KB router pubkey", jsonPost(urls["router"], rpcBody("getDelegationStatus", long))},
		{"60 KB login signature", jsonPost(urls["api"]+"/v1/spl/login", login)},
		{"40 KB balance address", get(urls["api"] + "/v1/spl/balance?address=" + long[:40_000] + "&mint=" + keys[0])},
		{"getMultipleAccounts ×800", jsonPost(urls["rpc"], gma)},
		{"/mcp 10k tools/list", jsonPost(urls["api"]+"/mcp", mcpHuge)},
		{"/mcp 32 tools/list", jsonPost(urls["api"]+"/mcp", mcp32)},
	}
}

// holdConns keeps n idle TCP connections open to addr, re-opening those
// the server closes.
func holdConns(ctx context.Context, addr string, n int, opened, reopened *atomic.Int64) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64) // dial at most 64 at a time
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := true
			for ctx.Err() == nil {
				sem <- struct{}{}
				d := net.Dialer{Timeout: 5 * time.Second}
				c, err := d.DialContext(ctx, "tcp", addr)
				<-sem
				if err != nil {
					time.Sleep(100 * time.Millisecond)
					continue
				}
				opened.Add(1)
				if !first {
					reopened.Add(1)
				}
				first = false
				// Wait until the server closes it (or the run ends).
				go func() { <-ctx.Done(); c.Close() }()
				io.Copy(io.Discard, c)
				c.Close()
			}
		}()
	}
	wg.Wait()
}

// trickle sends a request whose 4 KiB body comes a byte every 100 ms and
// reports how it ended.
func trickle(ctx context.Context, addr string) string {
	d := net.Dialer{Timeout: 5 * time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "dial error"
	}
	defer c.Close()
	go func() { <-ctx.Done(); c.Close() }()
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n", addr)
	start := time.Now()
	for i := 0; i < 4096; i++ {
		if _, err := c.Write([]byte{' '}); err != nil {
			return fmt.Sprintf("cut after %ds", int(time.Since(start).Seconds()))
		}
		select {
		case <-ctx.Done():
			return "run ended"
		case <-time.After(100 * time.Millisecond):
		}
		// A closed connection shows on the next write, or as a readable EOF.
		c.SetReadDeadline(time.Now().Add(time.Millisecond))
		if _, err := bufio.NewReader(c).Peek(1); err != nil && !isTimeout(err) {
			return fmt.Sprintf("cut after %ds", int(time.Since(start).Seconds()))
		}
	}
	return "sent whole body"
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// healthStats counts /health polls.
type healthStats struct {
	mu        sync.Mutex
	latencies []time.Duration
	ok        atomic.Int64
	failed    atomic.Int64
	firstFail string
}

func (h *healthStats) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	l := slices.Clone(h.latencies)
	slices.Sort(l)
	pct := func(p float64) time.Duration {
		if len(l) == 0 {
			return 0
		}
		return l[min(len(l)-1, int(p*float64(len(l))))]
	}
	total := h.ok.Load() + h.failed.Load()
	s := fmt.Sprintf("%d/%d ok (%.2f%%), latency p50 %s p99 %s max %s", h.ok.Load(), total,
		100*float64(h.ok.Load())/float64(max(total, 1)), pct(0.5).Round(time.Microsecond), pct(0.99).Round(time.Microsecond), pct(1).Round(time.Microsecond))
	if h.firstFail != "" {
		s += "; first failure: " + h.firstFail
	}
	return s
}

// pollHealth GETs url every interval, on one keep-alive connection or on
// a new connection each time (fresh), so a refused or evicted connection
// shows.
func pollHealth(ctx context.Context, url string, every, timeout time.Duration, fresh bool, h *healthStats) {
	t := time.NewTicker(every)
	defer t.Stop()
	cl := &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: fresh, MaxIdleConnsPerHost: 1}}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		start := time.Now()
		resp, err := cl.Get(url)
		d := time.Since(start)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		if ctx.Err() != nil {
			return
		}
		h.mu.Lock()
		h.latencies = append(h.latencies, d)
		if err != nil || resp.StatusCode != http.StatusOK {
			h.failed.Add(1)
			if h.firstFail == "" {
				if err != nil {
					h.firstFail = err.Error()
				} else {
					h.firstFail = resp.Status
				}
			}
		} else {
			h.ok.Add(1)
		}
		h.mu.Unlock()
	}
}
