// Command apibench is the payments API's load generator. By default it
// starts the API over real TCP on 127.0.0.1, backed by an in-memory
// embedded base ledger and ephemeral ledger reached in-process (as ferry
// serve runs them), and drives POST /v1/spl/transfer from many keep-alive
// connections; it prints requests/s and latency percentiles.
//
//	go run ./pkg/api/internal/apibench -mode public -c 64 -d 10s
//	go run ./pkg/api/internal/apibench -mode private -c 64 -d 10s
//
// -url targets a running server instead (then -mint, -from and -to name
// a funded mint and wallets); -serve-only starts the backed server and
// waits, so the load can come from another process.
package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/api"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/cluster"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/router"
	"github.com/ferry-sh/ferry/pkg/rpcserver"
)

func main() {
	var (
		mode      = flag.String("mode", "public", "transfer to build: public (base→base), private (base→base), private-eph (base→ephemeral), public-eph (ephemeral→ephemeral)")
		conns     = flag.Int("c", 64, "concurrent connections")
		dur       = flag.Duration("d", 10*time.Second, "measurement duration")
		warmup    = flag.Duration("warmup", 2*time.Second, "warm-up duration (not measured)")
		target    = flag.String("url", "", "target a running API at this base URL instead of starting one")
		mintFlag  = flag.String("mint", "", "with -url: a mint the server's cluster knows")
		fromFlag  = flag.String("from", "", "with -url: sender wallet")
		toFlag    = flag.String("to", "", "with -url: recipient wallet")
		serveOnly = flag.Bool("serve-only", false, "start the backed server, print its URL and wait")
		logLevel  = flag.String("log", "warn", "server log level (info logs one line per request to stderr)")
		cpuprof   = flag.String("cpuprofile", "", "write a CPU profile of the measured period to this file")
		blockprof = flag.String("blockprofile", "", "write a blocking profile to this file at the end")
		rate      = flag.Float64("rate", 0, "open loop: issue this many requests per second in total (0: closed loop, as fast as the connections allow); latency is measured from each request's scheduled send time")
	)
	flag.Parse()
	profile = *cpuprof
	if *blockprof != "" {
		runtime.SetBlockProfileRate(10000)
		runtime.SetMutexProfileFraction(5)
		defer func() {
			if f, err := os.Create(*blockprof); err == nil {
				pprof.Lookup("block").WriteTo(f, 0)
				f.Close()
			}
			if f, err := os.Create(*blockprof + ".mutex"); err == nil {
				pprof.Lookup("mutex").WriteTo(f, 0)
				f.Close()
			}
		}()
	}
	if err := run(*mode, *conns, *dur, *warmup, *target, *mintFlag, *fromFlag, *toFlag, *serveOnly, *logLevel, *rate); err != nil {
		fmt.Fprintln(os.Stderr, "apibench:", err)
		os.Exit(1)
	}
}

var profile string

func key(label string) ed25519.PrivateKey {
	s := sha256.Sum256([]byte("ferry-apibench:" + label))
	return ed25519.NewKeyFromSeed(s[:])
}

func pub(k ed25519.PrivateKey) solana.PublicKey { return solana.PublicKeyFromBytes(k[32:]) }

func run(mode string, conns int, dur, warmup time.Duration, target, mint, from, to string, serveOnly bool, logLevel string, rate float64) error {
	body := func(mint, from, to string) ([]byte, error) {
		route, ok := map[string][3]string{
			"public": {"public", "base", "base"}, "private": {"private", "base", "base"},
			"private-eph": {"private", "base", "ephemeral"}, "public-eph": {"public", "ephemeral", "ephemeral"},
		}[mode]
		if !ok {
			return nil, fmt.Errorf("unknown -mode %q", mode)
		}
		return []byte(fmt.Sprintf(`{"from":%q,"to":%q,"mint":%q,"amount":1000000,"visibility":%q,"fromBalance":%q,"toBalance":%q}`,
			from, to, mint, route[0], route[1], route[2])), nil
	}
	if target == "" {
		var level slog.Level
		if err := level.UnmarshalText([]byte(logLevel)); err != nil {
			return err
		}
		log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
		url, m, stop, err := startServer(log)
		if err != nil {
			return err
		}
		defer stop()
		target, mint, from, to = url, m.String(), pub(key("alice")).String(), pub(key("bob")).String()
		fmt.Printf("server %s (embedded ledgers, in-process chain clients), mint %s\n", url, mint)
		if serveOnly {
			fmt.Printf("from %s to %s\n", from, to)
			ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
			defer cancel()
			<-ctx.Done()
			return nil
		}
	}
	b, err := body(mint, from, to)
	if err != nil {
		return err
	}
	fmt.Printf("mode %s, %d connections, %s warm-up, %s measured, GOMAXPROCS %d\n", mode, conns, warmup, dur, runtime.GOMAXPROCS(0))
	if rate > 0 {
		fmt.Printf("open loop at %.0f req/s\n", rate)
	}
	res := load(target+"/v1/spl/transfer", b, conns, warmup, dur, rate)
	res.print()
	return nil
}

// startServer runs the API on 127.0.0.1:0 over an embedded base ledger
// (400 ms slots) and ephemeral ledger (50 ms slots), as ferry serve does.
func startServer(log *slog.Logger) (string, solana.PublicKey, func(), error) {
	base, err := ledger.Open(ledger.Config{Name: "bench-base"})
	if err != nil {
		return "", solana.PublicKey{}, nil, err
	}
	er, err := ledger.Open(ledger.Config{Name: "bench-er", SlotDuration: 50 * time.Millisecond, LamportsPerSignature: -1})
	if err != nil {
		return "", solana.PublicKey{}, nil, err
	}
	const baseURL, erURL, routerURL = "http://127.0.0.1:18899", "http://127.0.0.1:17799", "http://127.0.0.1:17800"
	baseH, erH := rpcserver.New(base, rpcserver.Options{}), rpcserver.New(er, rpcserver.Options{})
	baseC, _ := chainclient.New(baseURL, chainclient.WithHandler(baseH))
	erC, _ := chainclient.New(erURL, chainclient.WithHandler(erH))
	reg, err := router.NewLocal(router.LocalConfig{Identity: er.Identity(), URL: erURL,
		Blockhash:     router.RPCBlockhash{Client: erC, Commitment: chainclient.Confirmed},
		Base:          router.RPCAccounts{Client: baseC, Commitment: chainclient.Confirmed},
		BaseBlockhash: router.RPCBlockhash{Client: baseC, Commitment: chainclient.Confirmed}})
	if err != nil {
		return "", solana.PublicKey{}, nil, err
	}
	clusters, err := api.NewClusters(api.ClustersConfig{
		Overrides: cluster.Overrides{PerCluster: map[string]cluster.Overrides{"local": {BaseRPC: baseURL, Ephemeral: erURL, Router: routerURL}}},
		InProcess: map[string]http.Handler{baseURL: baseH, erURL: erH, routerURL: &router.Handler{Backend: reg}},
	})
	if err != nil {
		return "", solana.PublicKey{}, nil, err
	}
	srv, err := api.New(api.Config{Clusters: clusters, Logger: log})
	if err != nil {
		return "", solana.PublicKey{}, nil, err
	}
	ctx := context.Background()
	f := base.Faucet()
	mint, _, err := f.CreateMint(ctx, ledger.MintOptions{Decimals: 6, Key: key("mint")})
	if err != nil {
		return "", solana.PublicKey{}, nil, err
	}
	for _, w := range []solana.PublicKey{pub(key("alice")), pub(key("bob"))} {
		if _, err := f.Airdrop(ctx, w, 1_000_000_000); err != nil {
			return "", solana.PublicKey{}, nil, err
		}
		if _, err := f.MintTo(ctx, mint, w, 1_000_000_000_000); err != nil {
			return "", solana.PublicKey{}, nil, err
		}
	}
	if err := base.WaitForSlot(ctx, base.Slot(ledger.Processed), ledger.Confirmed); err != nil {
		return "", solana.PublicKey{}, nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", solana.PublicKey{}, nil, err
	}
	hs := rpcserver.NewHTTPServer(srv, log)
	go hs.Serve(ln)
	stop := func() {
		hs.Close()
		srv.Close()
		er.Close()
		base.Close()
	}
	return "http://" + ln.Addr().String(), mint, stop, nil
}

type result struct {
	cpu        time.Duration // process CPU time (user+system) while measuring
	n, errors  int64
	statuses   map[int]int64
	latencies  []time.Duration
	elapsed    time.Duration
	firstError string
}

// load drives url with conns concurrent connections. With rate 0 each
// connection sends its next request as soon as the previous one returns
// (closed loop: the server's maximum throughput). With rate > 0 requests are
// scheduled at fixed intervals and handed to whichever connection is free;
// latency counts from the scheduled time, so a server that falls behind is
// charged for the queueing it causes (no coordinated omission).
func load(url string, body []byte, conns int, warmup, dur time.Duration, rate float64) *result {
	tr := &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: true}
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	var measuring atomic.Bool
	var stop atomic.Bool
	res := &result{statuses: map[int]int64{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var next atomic.Int64
	schedStart := time.Now()
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := make([]time.Duration, 0, 1<<16)
			statuses := map[int]int64{}
			var errs int64
			var first string
			for !stop.Load() {
				t0 := time.Now()
				if rate > 0 {
					t0 = schedStart.Add(time.Duration(float64(next.Add(1)-1) / rate * float64(time.Second)))
					if d := time.Until(t0); d > 0 {
						time.Sleep(d)
					}
				}
				req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				resp, err := hc.Do(req)
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				d := time.Since(t0)
				if !measuring.Load() {
					continue
				}
				if err != nil {
					errs++
					if first == "" {
						first = err.Error()
					}
					continue
				}
				statuses[resp.StatusCode]++
				lat = append(lat, d)
			}
			mu.Lock()
			res.latencies = append(res.latencies, lat...)
			for k, v := range statuses {
				res.statuses[k] += v
			}
			res.errors += errs
			if res.firstError == "" {
				res.firstError = first
			}
			mu.Unlock()
		}()
	}
	time.Sleep(warmup)
	measuring.Store(true)
	start := time.Now()
	cpu0 := cpuTime()
	if profile != "" {
		if f, err := os.Create(profile); err == nil {
			pprof.StartCPUProfile(f)
			defer f.Close()
		}
	}
	time.Sleep(dur)
	measuring.Store(false)
	res.cpu = cpuTime() - cpu0
	if profile != "" {
		pprof.StopCPUProfile()
	}
	res.elapsed = time.Since(start)
	stop.Store(true)
	wg.Wait()
	res.n = int64(len(res.latencies))
	return res
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func (r *result) print() {
	sort.Slice(r.latencies, func(i, j int) bool { return r.latencies[i] < r.latencies[j] })
	pct := func(p float64) time.Duration {
		if len(r.latencies) == 0 {
			return 0
		}
		return r.latencies[min(len(r.latencies)-1, int(p*float64(len(r.latencies))))]
	}
	fmt.Printf("requests %d in %s: %.0f req/s\n", r.n, r.elapsed.Round(time.Millisecond), float64(r.n)/r.elapsed.Seconds())
	fmt.Printf("latency p50 %s  p90 %s  p99 %s  max %s\n", pct(0.50).Round(time.Microsecond), pct(0.90).Round(time.Microsecond),
		pct(0.99).Round(time.Microsecond), pct(1).Round(time.Microsecond))
	fmt.Printf("statuses %v, transport errors %d %s\n", r.statuses, r.errors, r.firstError)
	if r.n > 0 {
		per := r.cpu / time.Duration(r.n)
		fmt.Printf("process CPU %s (%.2f cores) = %s per request (server + load generator): at most %.0f req/s on 2 dedicated cores\n",
			r.cpu.Round(time.Millisecond), r.cpu.Seconds()/r.elapsed.Seconds(), per.Round(100*time.Nanosecond), 2/per.Seconds())
	}
}
