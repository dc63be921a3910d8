// Command ledgerscale measures how `ferry serve`'s base ledger behaves as
// it grows: it fills the ledger to L token accounts (one transaction per
// account: create the associated token account of a new owner and
// TransferChecked one base unit into it), and at each L measures
//
//   - transfers/s over JSON-RPC until confirmed: N pre-signed
//     TransferChecked transactions from P funded payers to random accounts
//     of the filled set, sent with sendTransaction (one HTTP request per
//     transaction, or -batch N per JSON-RPC batch, preflight at processed) from concurrent
//     clients, the clock stopping when getSignatureStatuses shows every
//     one confirmed; with p50/p99 from send to confirmed;
//   - disk written per transfer: the server's write_bytes
//     (/proc/PID/io) over that phase, divided by N; and what the block
//     device holding the work directory wrote over the phase
//     (/sys/dev/block/MAJ:MIN/stat, every process, the file system's
//     journal included), divided by N: on kernels whose page cache uses
//     large folios, write_bytes counts a whole folio (up to 2 MiB) for
//     each 4 KiB page rewritten in place, so the device figure is the one
//     to read on a machine where nothing else writes;
//   - what the base ledger wrote per transfer over a size's phases, by
//     part (account records, cleaning, each table, bbolt): the ledger logs
//     its counters when it closes, so with -restarts of at least 1 the
//     server is restarted before the phases and the line its stop after
//     them writes to serve.log is read (serve runs at --log-level info);
//   - the server's CPU time per transfer and its peak RSS during the phase
//     (VmHWM after resetting it through /proc/PID/clear_refs);
//   - ledger.db size and bytes per stored transaction (size over
//     getTransactionCount);
//   - restart to ready: SIGINT, then exec → the address file written,
//     with the CPU time the process used to get there (-restarts times,
//     median);
//   - RSS after the last restart and -idle seconds without traffic;
//   - with -kill-restart, restart to ready after SIGKILL right after the
//     last phase: what only memory held (the key directory's changes
//     since its newest file, the heads since theirs) is replayed from
//     the account log and history. The parts written per transfer are
//     then not reported (the killed process logs none).
//
// The work directory keeps the data directory and the fill state, so a
// later run continues (-accounts 1000000 after 300000 adds the
// difference). Everything is ordinary JSON-RPC: the payers are funded
// with requestAirdrop, the mint comes from ferry_createMint and the payers'
// tokens from ferry_mintTo.
//
//	go build -o /tmp/ferry . && go run ./tools/ledgerscale -ferry /tmp/ferry -dir /tmp/scale \
//	    -accounts 10000,100000,300000,1000000
package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
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
	bolt "go.etcd.io/bbolt"

	"github.com/ferry-sh/ferry/pkg/ledger/loadgen"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// options are the command's flags.
type options struct {
	ferry     string
	dir       string
	accounts  []int
	transfers int
	clients   int
	batches   []int
	batchCli  int
	payers    int
	restarts  int
	kill      bool
	idle      time.Duration
	fillChunk int
	serveArgs []string
}

func main() {
	var o options
	var accounts, extra string
	flag.StringVar(&o.ferry, "ferry", "", "ferry binary to run (required)")
	flag.StringVar(&o.dir, "dir", "", "work directory: data directory and fill state, reused by later runs (required)")
	flag.StringVar(&accounts, "accounts", "10000", "comma-separated token-account counts to fill to and measure at, ascending")
	flag.IntVar(&o.transfers, "transfers", 100_000, "transfers per throughput measurement")
	flag.IntVar(&o.clients, "clients", 32, "concurrent JSON-RPC clients sending the transfers")
	var batches string
	flag.StringVar(&batches, "batch", "1", "sendTransaction calls per HTTP request (JSON-RPC batch): comma-separated, one measurement each (e.g. 1,16)")
	flag.IntVar(&o.batchCli, "batch-clients", 16, "concurrent clients for batched measurements (-batch above 1)")
	flag.IntVar(&o.payers, "payers", 1024, "funded fee payers (fixed when the work directory is created)")
	flag.IntVar(&o.restarts, "restarts", 3, "restarts to time at each size")
	flag.BoolVar(&o.kill, "kill-restart", false, "also time a start after SIGKILL right after the last phase at each size (before the clean restarts; the parts written are then not reported)")
	flag.DurationVar(&o.idle, "idle", 20*time.Second, "idle time after the last restart before reading RSS")
	flag.IntVar(&o.fillChunk, "fill-chunk", 40_000, "fill transactions signed per blockhash")
	flag.StringVar(&extra, "serve-args", "", "extra arguments for ferry serve, space-separated")
	flag.Parse()
	for _, s := range strings.Split(batches, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			fatalf("-batch: %q is not a positive number", s)
		}
		o.batches = append(o.batches, n)
	}
	for _, s := range strings.Split(accounts, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			fatalf("-accounts: %q is not a positive number", s)
		}
		o.accounts = append(o.accounts, n)
	}
	if !slices.IsSorted(o.accounts) {
		fatalf("-accounts must be ascending")
	}
	if extra != "" {
		o.serveArgs = strings.Fields(extra)
	}
	if o.ferry == "" || o.dir == "" {
		fatalf("-ferry and -dir are required")
	}
	if err := run(o); err != nil {
		fatalf("%v", err)
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "ledgerscale: "+format+"\n", args...)
	os.Exit(1)
}

// fillState is what the work directory remembers between runs.
type fillState struct {
	Mint     string `json:"mint"`
	Decimals uint8  `json:"decimals"`
	Payers   int    `json:"payers"`
	// Filled is how many owners have a token account.
	Filled int `json:"filled"`
	// Seq numbers the measured transfers across runs, so no two are
	// identical.
	Seq uint64 `json:"seq"`
}

// row is one size's measurements.
type row struct {
	Accounts   int     `json:"accounts"`
	Batch      int     `json:"batch"`
	Transfers  int     `json:"transfers"`
	TPS        float64 `json:"tps"`
	P50ms      float64 `json:"p50Ms"`
	P99ms      float64 `json:"p99Ms"`
	WritePerTx float64 `json:"writeBytesPerTransfer"`
	// DeviceWritePerTx is what the disk holding the work directory wrote
	// over the phase, per transfer (every process, the file system's
	// journal included; -1 where the kernel does not say): on kernels that
	// count whole large folios in write_bytes, the closer figure to what
	// reached the disk.
	DeviceWritePerTx float64 `json:"deviceWriteBytesPerTransfer"`
	// StorageWritesPerTx is what the base ledger said it wrote, by part
	// ("ledger closing" in serve.log: account records, cleaning, each
	// table, bbolt), over the phases at this size, per transfer; on the
	// last row of a size.
	StorageWritesPerTx map[string]float64 `json:"storageWritesPerTransfer,omitempty"`
	ServerCPUus        float64            `json:"serverCpuUsPerTransfer"`
	PeakRSS            int64              `json:"peakRssBytes"`
	DBSize             int64              `json:"ledgerDbBytes"`
	StoredTxs          uint64             `json:"storedTransactions"`
	BytesPerTx         float64            `json:"bytesPerStoredTx"`
	// HistoryBytes and StateBytes split the stopped base ledger's bytes
	// (splitSizes); HistoryPerTx is HistoryBytes over StoredTxs.
	HistoryBytes int64     `json:"historyBytes"`
	StateBytes   int64     `json:"stateBytes"`
	HistoryPerTx float64   `json:"historyBytesPerStoredTx"`
	RestartMs    []float64 `json:"restartMs"`
	RestartCPUms []float64 `json:"restartCpuMs"`
	// KillRestartMs is the start after SIGKILL (-kill-restart), 0 if
	// not measured.
	KillRestartMs  float64 `json:"killRestartMs,omitempty"`
	IdleRSS        int64   `json:"idleRssBytes"`
	FillTPS        float64 `json:"fillTps"`
	Load           string  `json:"loadAverage"`
	FirstSendError string  `json:"firstError,omitempty"`
}

func run(o options) error {
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return err
	}
	st := &fillState{Payers: o.payers}
	statePath := filepath.Join(o.dir, "state.json")
	if b, err := os.ReadFile(statePath); err == nil {
		if err := json.Unmarshal(b, st); err != nil {
			return fmt.Errorf("read %s: %w", statePath, err)
		}
	}
	save := func() error {
		b, _ := json.MarshalIndent(st, "", "  ")
		return os.WriteFile(statePath, b, 0o644)
	}
	srv := &server{bin: o.ferry, dir: o.dir, args: o.serveArgs}
	if err := srv.start(); err != nil {
		return err
	}
	defer srv.stop()
	fmt.Printf("ferry serve pid %d, base RPC %s\n", srv.pid(), srv.rpc)
	payers := make([]ed25519.PrivateKey, st.Payers)
	for i := range payers {
		h := sha256.Sum256(fmt.Appendf(nil, "ledgerscale/payer/%d", i))
		payers[i] = ed25519.NewKeyFromSeed(h[:])
	}
	if st.Mint == "" {
		if err := setup(srv.rpc, st, payers); err != nil {
			return fmt.Errorf("setup: %w", err)
		}
		if err := save(); err != nil {
			return err
		}
	}
	w := &world{mint: solana.MustPublicKeyFromBase58(st.Mint), decimals: st.Decimals, payers: payers}
	w.init()
	var rows []row
	for _, target := range o.accounts {
		r := row{Accounts: target}
		if st.Filled < target {
			fmt.Printf("filling %d → %d token accounts\n", st.Filled, target)
			tps, err := w.fill(srv.rpc, st.Filled, target, o.fillChunk)
			if err != nil {
				return fmt.Errorf("fill: %w", err)
			}
			st.Filled = target
			r.FillTPS = tps
			if err := save(); err != nil {
				return err
			}
			fmt.Printf("filled to %d at %.0f tx/s\n", target, tps)
		}
		// A fresh process for the phases, so the base ledger's account of
		// what it wrote when it next stops covers them alone (not the
		// fill).
		if o.restarts > 0 {
			if err := srv.stop(); err != nil {
				return err
			}
			if err := srv.start(); err != nil {
				return err
			}
		}
		logStart := fileSize(filepath.Join(o.dir, "serve.log"))
		for i, batch := range o.batches {
			if i > 0 {
				r = row{Accounts: target}
			}
			r.Batch = batch
			r.Load = loadAverage()
			if err := w.measure(srv, st, target, batch, o, &r); err != nil {
				return fmt.Errorf("measure at %d: %w", target, err)
			}
			if err := save(); err != nil {
				return err
			}
			rows = append(rows, r)
		}
		// Restarts once per size, after every measurement.
		last := &rows[len(rows)-1]
		if o.kill {
			if err := srv.kill(); err != nil {
				return err
			}
			ready, _, err := srv.startTimed()
			if err != nil {
				return fmt.Errorf("start after a kill: %w", err)
			}
			last.KillRestartMs = float64(ready.Microseconds()) / 1000
		}
		if err := srv.restarts(o.restarts, o.idle, last); err != nil {
			return err
		}
		last.HistoryPerTx = float64(last.HistoryBytes) / float64(max(last.StoredTxs, 1))
		if o.restarts > 0 && !o.kill {
			b, err := os.ReadFile(filepath.Join(o.dir, "serve.log"))
			if err != nil {
				return err
			}
			transfers := 0
			for _, r := range rows[len(rows)-len(o.batches):] {
				transfers += r.Transfers
			}
			if w := closingWrites(string(b[min(logStart, int64(len(b))):]), "base"); w != nil && transfers > 0 {
				last.StorageWritesPerTx = map[string]float64{}
				for k, v := range w {
					last.StorageWritesPerTx[k] = float64(v) / float64(transfers)
				}
			}
		}
		for i := len(rows) - len(o.batches); i < len(rows)-1; i++ {
			rows[i].RestartMs, rows[i].RestartCPUms, rows[i].IdleRSS = last.RestartMs, last.RestartCPUms, last.IdleRSS
			rows[i].KillRestartMs = last.KillRestartMs
			rows[i].HistoryBytes, rows[i].StateBytes, rows[i].HistoryPerTx = last.HistoryBytes, last.StateBytes, last.HistoryPerTx
		}
		for _, r := range rows[len(rows)-len(o.batches):] {
			fmt.Printf("L=%d batch %d: %.0f tx/s, p50 %.0f ms, p99 %.0f ms, %.0f B written/transfer (device %.0f B), %.1f server cpu-µs/transfer, peak RSS %s, ledger.db %s (%.0f B/tx over %d tx; history %.0f B/tx, state %.0f B/account), restart %v ms (cpu %v ms), idle RSS %s, load %s\n",
				r.Accounts, r.Batch, r.TPS, r.P50ms, r.P99ms, r.WritePerTx, r.DeviceWritePerTx, r.ServerCPUus, mib(r.PeakRSS), mib(r.DBSize), r.BytesPerTx, r.StoredTxs,
				r.HistoryPerTx, float64(r.StateBytes)/float64(r.Accounts), r.RestartMs, r.RestartCPUms, mib(r.IdleRSS), r.Load)
		}
		if w := rows[len(rows)-1].StorageWritesPerTx; w != nil {
			fmt.Println(storageLine(target, w))
		}
		if len(o.batches) > 1 {
			fmt.Println(phaseMeans(rows[len(rows)-len(o.batches):]))
		}
	}
	printTable(rows)
	b, _ := json.MarshalIndent(rows, "", "  ")
	return os.WriteFile(filepath.Join(o.dir, fmt.Sprintf("results-%s.json", time.Now().UTC().Format("20060102T150405"))), b, 0o644)
}

// phaseMeans summarizes several phases at one size: the table rewrites of
// a large ledger come due every few hundred thousand changes, so the
// bytes written per transfer of one 100 000-transfer phase swing with
// whether a rewrite fell into it; over enough phases (-batch 16,16,...)
// the mean is the amortized cost.
func phaseMeans(rows []row) string {
	var n, written, device, seconds, p99 float64
	for _, r := range rows {
		t := float64(r.Transfers)
		n += t
		if r.TPS > 0 {
			seconds += t / r.TPS
		}
		p99 = max(p99, r.P99ms)
		written += r.WritePerTx * t
		if device >= 0 && r.DeviceWritePerTx >= 0 {
			device += r.DeviceWritePerTx * t
		} else {
			device = -1
		}
	}
	if n == 0 {
		return fmt.Sprintf("L=%d over %d phases: no transfers", rows[0].Accounts, len(rows))
	}
	dev := "n/a"
	if device >= 0 {
		dev = fmt.Sprintf("%.0f B", device/n)
	}
	return fmt.Sprintf("L=%d over %d phases (%.0f transfers): %.0f transfers/s, p99 at most %.0f ms, %.0f B written/transfer (device %s)",
		rows[0].Accounts, len(rows), n, n/seconds, p99, written/n, dev)
}

// storageParts are the fields of the ledger's close log, in the order
// storageLine prints them.
var storageParts = []struct{ field, name string }{
	{"account_records_bytes", "account records"},
	{"account_cleaning_bytes", "cleaning"},
	{"key_directory_bytes", "key directory"},
	{"signatures_bytes", "signatures"},
	{"heads_bytes", "heads"},
	{"database_bytes", "bbolt"},
}

// closingWrites finds the first "ledger closing" line of the named ledger
// in log (ferry serve's text log) and returns its byte counts by field,
// or nil if there is none.
func closingWrites(log, ledger string) map[string]int64 {
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, `msg="ledger closing"`) || !strings.Contains(line, " ledger="+ledger+" ") {
			continue
		}
		out := map[string]int64{}
		for _, kv := range strings.Fields(line) {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || !strings.HasSuffix(k, "_bytes") {
				continue
			}
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				out[k] = n
			}
		}
		return out
	}
	return nil
}

// storageLine prints what the base ledger wrote per transfer, by part.
func storageLine(accounts int, w map[string]float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "L=%d the base ledger wrote per transfer:", accounts)
	sum := 0.0
	for i, p := range storageParts {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " %s %.0f B", p.name, w[p.field])
		sum += w[p.field]
	}
	fmt.Fprintf(&b, " (sum %.0f B)", sum)
	return b.String()
}

// fileSize is path's size, 0 if it cannot be read.
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

func printTable(rows []row) {
	var b strings.Builder
	b.WriteString("\n| L accounts (sends per request) |")
	for _, r := range rows {
		fmt.Fprintf(&b, " %d (%d) |", r.Accounts, r.Batch)
	}
	b.WriteString("\n|---|")
	for range rows {
		b.WriteString("---|")
	}
	line := func(name string, f func(r row) string) {
		fmt.Fprintf(&b, "\n| %s |", name)
		for _, r := range rows {
			fmt.Fprintf(&b, " %s |", f(r))
		}
	}
	line("transfers/s over JSON-RPC until confirmed", func(r row) string { return fmt.Sprintf("%.1fk", r.TPS/1000) })
	line("p99 to confirmed", func(r row) string { return fmt.Sprintf("%.2f s", r.P99ms/1000) })
	line("disk written per transfer", func(r row) string { return fmt.Sprintf("%.1f KiB", r.WritePerTx/1024) })
	line("device written per transfer (whole disk)", func(r row) string {
		if r.DeviceWritePerTx < 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.1f KiB", r.DeviceWritePerTx/1024)
	})
	line("base ledger on disk (bytes per stored tx)", func(r row) string {
		return fmt.Sprintf("%s (%.0f)", mib(r.DBSize), r.BytesPerTx)
	})
	line("history on disk per stored tx (state per account)", func(r row) string {
		return fmt.Sprintf("%.0f B (%.0f B)", r.HistoryPerTx, float64(r.StateBytes)/float64(max(r.Accounts, 1)))
	})
	line("`serve` restart to ready (median)", func(r row) string { return fmt.Sprintf("%.0f ms", median(r.RestartMs)) })
	line("restart CPU time (median)", func(r row) string { return fmt.Sprintf("%.0f ms", median(r.RestartCPUms)) })
	if slices.ContainsFunc(rows, func(r row) bool { return r.KillRestartMs > 0 }) {
		line("`serve` restart to ready after SIGKILL", func(r row) string { return fmt.Sprintf("%.0f ms", r.KillRestartMs) })
	}
	line("RSS after restart + idle", func(r row) string { return mib(r.IdleRSS) })
	line("peak RSS under load", func(r row) string { return mib(r.PeakRSS) })
	line("server CPU per transfer", func(r row) string { return fmt.Sprintf("%.0f µs", r.ServerCPUus) })
	line("load average (1/5/15 min)", func(r row) string { return r.Load })
	fmt.Println(b.String())
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// --- the server process ---

type server struct {
	bin, dir string
	args     []string
	cmd      *exec.Cmd
	rpc      string
	done     chan error
}

func (s *server) pid() int { return s.cmd.Process.Pid }

// start runs ferry serve on the work directory's data and waits until it
// serves; it returns how long that took and the CPU time used by then.
func (s *server) start() error {
	_, _, err := s.startTimed()
	return err
}

func (s *server) startTimed() (time.Duration, time.Duration, error) {
	addr := filepath.Join(s.dir, "addr.json")
	os.Remove(addr)
	logf, err := os.OpenFile(filepath.Join(s.dir, "serve.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return 0, 0, err
	}
	args := append([]string{"serve", "--data", filepath.Join(s.dir, "data"), "--no-demo", "--log-level", "info", "--addr-file", addr,
		"--api-addr", "127.0.0.1:0", "--rpc-addr", "127.0.0.1:0", "--ephemeral-addr", "127.0.0.1:0", "--router-addr", "127.0.0.1:0"}, s.args...)
	cmd := exec.Command(s.bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return 0, 0, fmt.Errorf("start ferry serve: %w", err)
	}
	s.cmd, s.done = cmd, make(chan error, 1)
	go func() { s.done <- cmd.Wait(); logf.Close() }()
	for {
		if b, err := os.ReadFile(addr); err == nil && len(b) > 0 {
			var urls map[string]string
			if json.Unmarshal(b, &urls) == nil && urls["rpc"] != "" {
				ready := time.Since(t0)
				cpu := procCPU(cmd.Process.Pid)
				s.rpc = urls["rpc"]
				return ready, cpu, nil
			}
		}
		select {
		case err := <-s.done:
			return 0, 0, fmt.Errorf("ferry serve exited before serving: %v (see %s)", err, filepath.Join(s.dir, "serve.log"))
		case <-time.After(time.Millisecond):
		}
		if time.Since(t0) > 10*time.Minute {
			return 0, 0, errors.New("ferry serve did not start in 10 minutes")
		}
	}
}

// kill stops the server with SIGKILL, as a crash would.
func (s *server) kill() error {
	if s.cmd == nil {
		return nil
	}
	s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
	return nil
}

func (s *server) stop() error {
	if s.cmd == nil {
		return nil
	}
	s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-s.done:
		s.cmd = nil
		if err != nil {
			return fmt.Errorf("ferry serve: %w", err)
		}
		return nil
	case <-time.After(5 * time.Minute):
		s.cmd.Process.Kill()
		<-s.done
		s.cmd = nil
		return errors.New("ferry serve did not stop in 5 minutes")
	}
}

// restarts stops and starts the server n times, timing each start, then
// lets the last one idle and reads its RSS.
func (s *server) restarts(n int, idle time.Duration, r *row) error {
	for i := 0; i < n; i++ {
		if err := s.stop(); err != nil {
			return err
		}
		if i == 0 {
			var err error
			if r.HistoryBytes, r.StateBytes, err = splitSizes(filepath.Join(s.dir, "data", "base")); err != nil {
				return err
			}
		}
		// The page cache keeps the file either way; what is timed is the
		// process, as a user restarting ferry serve sees it.
		ready, cpu, err := s.startTimed()
		if err != nil {
			return err
		}
		r.RestartMs = append(r.RestartMs, float64(ready.Microseconds())/1000)
		r.RestartCPUms = append(r.RestartCPUms, float64(cpu.Microseconds())/1000)
	}
	time.Sleep(idle)
	r.IdleRSS = procStatus(s.pid(), "VmRSS")
	return nil
}

// splitSizes divides a stopped base ledger's bytes between history
// (the blocks, transactions, address postings and performance samples
// buckets, by the pages bbolt allocated to them, and the signature
// table's files) and account state (the account log, the secondary
// index bucket and the address heads' files). Free pages of ledger.db
// count in neither.
func splitSizes(base string) (history, state int64, err error) {
	db, err := bolt.Open(filepath.Join(base, "ledger.db"), 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		return 0, 0, fmt.Errorf("open ledger.db: %w", err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			st := b.Stats()
			n := int64(st.BranchAlloc + st.LeafAlloc)
			switch string(name) {
			case "blocks", "txs", "addrslot", "addrpost", "perf":
				history += n
			case "index":
				state += n
			}
			return nil
		})
	})
	if err != nil {
		return 0, 0, err
	}
	files := func(pattern string) int64 {
		var n int64
		m, _ := filepath.Glob(filepath.Join(base, pattern))
		for _, f := range m {
			if fi, err := os.Stat(f); err == nil {
				n += fi.Size()
			}
		}
		return n
	}
	history += files("sigs*")
	state += files("heads*")
	acc, err := dirSize(filepath.Join(base, "accounts"))
	if err != nil {
		return 0, 0, err
	}
	return history, state + acc, nil
}

// procCPU is a process's user + system CPU time (/proc/PID/stat).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name may hold spaces; fields count from after it.
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	stt, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+stt) * (time.Second / 100) // USER_HZ
}

// procStatus reads a kB field of /proc/PID/status, in bytes.
func procStatus(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == field {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n << 10
		}
	}
	return 0
}

// resetPeakRSS makes VmHWM start over from the current RSS.
func resetPeakRSS(pid int) error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// --- JSON-RPC ---

var httpClient = &http.Client{Timeout: 5 * time.Minute}

func call(url, method string, params any, out any) error {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	resp, err := httpClient.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	defer resp.Body.Close()
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if r.Error != nil {
		return fmt.Errorf("%s: %d %s", method, r.Error.Code, r.Error.Message)
	}
	if out != nil {
		return json.Unmarshal(r.Result, out)
	}
	return nil
}

func blockhash(url string) (solana.Hash, error) {
	var r struct {
		Value struct{ Blockhash string } `json:"value"`
	}
	if err := call(url, "getLatestBlockhash", []any{map[string]string{"commitment": "processed"}}, &r); err != nil {
		return solana.Hash{}, err
	}
	return solana.HashFromBase58(r.Value.Blockhash)
}

func slot(url, commitment string) (uint64, error) {
	var s uint64
	err := call(url, "getSlot", []any{map[string]string{"commitment": commitment}}, &s)
	return s, err
}

// waitConfirmed waits until everything processed now is confirmed.
func waitConfirmed(url string) error {
	target, err := slot(url, "processed")
	if err != nil {
		return err
	}
	for {
		s, err := slot(url, "confirmed")
		if err != nil {
			return err
		}
		if s >= target {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// setup creates the mint and funds the payers: SOL for fees and rent,
// and tokens in their associated token accounts.
func setup(url string, st *fillState, payers []ed25519.PrivateKey) error {
	var m struct {
		Mint     string `json:"mint"`
		Decimals uint8  `json:"decimals"`
	}
	if err := call(url, "ferry_createMint", []any{map[string]any{"decimals": 6}}, &m); err != nil {
		return err
	}
	st.Mint, st.Decimals = m.Mint, m.Decimals
	fmt.Printf("mint %s; funding %d payers\n", st.Mint, len(payers))
	var next sync.Mutex
	i := 0
	errs := make(chan error, 16)
	var wg sync.WaitGroup
	for c := 0; c < 16; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				next.Lock()
				k := i
				i++
				next.Unlock()
				if k >= len(payers) {
					return
				}
				p := solana.PublicKeyFromBytes(payers[k][32:]).String()
				if err := call(url, "requestAirdrop", []any{p, 1_000 * 1_000_000_000}, nil); err != nil {
					errs <- err
					return
				}
				if err := call(url, "ferry_mintTo", []any{st.Mint, p, uint64(1) << 50}, nil); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	return waitConfirmed(url)
}

// --- transactions ---

type world struct {
	mint      solana.PublicKey
	decimals  uint8
	payers    []ed25519.PrivateKey
	payerKeys []solana.PublicKey
	payerATAs []solana.PublicKey
}

func (w *world) init() {
	for _, p := range w.payers {
		k := solana.PublicKeyFromBytes(p[32:])
		w.payerKeys = append(w.payerKeys, k)
		w.payerATAs = append(w.payerATAs, spl.AssociatedTokenAddress(k, w.mint, spl.TokenProgramID))
	}
}

// owner is the j-th filled owner: an address nobody holds the key of (an
// associated token account may belong to any address).
func owner(j int) solana.PublicKey {
	return solana.PublicKey(sha256.Sum256(binary.LittleEndian.AppendUint64([]byte("ledgerscale/owner/"), uint64(j))))
}

func (w *world) ata(j int) solana.PublicKey {
	return spl.AssociatedTokenAddress(owner(j), w.mint, spl.TokenProgramID)
}

func (w *world) sign(i int, ixs []txwire.Instruction, bh solana.Hash) []byte {
	msg, err := txwire.Compile(w.payerKeys[i], ixs, bh)
	if err != nil {
		panic(err) // unreachable: fixed instruction shapes
	}
	tx := txwire.NewUnsigned(msg)
	if err := tx.Sign(w.payers[i]); err != nil {
		panic(err)
	}
	return tx.Bytes()
}

// fill creates the token accounts of owners [from, to), a chunk per
// blockhash, and returns the rate.
func (w *world) fill(url string, from, to, chunk int) (float64, error) {
	start := time.Now()
	for lo := from; lo < to; lo += chunk {
		hi := min(lo+chunk, to)
		bh, err := blockhash(url)
		if err != nil {
			return 0, err
		}
		txs := make([][]byte, hi-lo)
		loadgen.Parallel(len(txs), func(k int) {
			j := lo + k
			i := j % len(w.payers)
			own := owner(j)
			w2 := spl.AssociatedTokenAddress(own, w.mint, spl.TokenProgramID)
			txs[k] = w.sign(i, []txwire.Instruction{
				spl.CreateAssociatedTokenAccount(w.payerKeys[i], own, w.mint, spl.TokenProgramID, true),
				spl.TokenTransferChecked(spl.TokenProgramID, w.payerATAs[i], w.mint, w2, w.payerKeys[i], 1, w.decimals),
			}, bh)
		})
		res, err := loadgen.Run(context.Background(), txs, loadgen.Options{URL: url, Clients: 8, Batch: 16})
		if err != nil {
			return 0, err
		}
		if res.Failed > 0 {
			return 0, fmt.Errorf("%d of %d fill transactions failed: %s", res.Failed, len(txs), res.FirstError)
		}
		fmt.Printf("  %d/%d (%.0f tx/s)\n", hi, to, res.TPS())
	}
	return float64(to-from) / time.Since(start).Seconds(), nil
}

// measure sends o.transfers transfers to random filled accounts and
// records throughput, latency, disk writes, CPU and peak RSS.
func (w *world) measure(srv *server, st *fillState, filled, batch int, o options, r *row) error {
	if err := waitConfirmed(srv.rpc); err != nil {
		return err
	}
	bh, err := blockhash(srv.rpc)
	if err != nil {
		return err
	}
	rng := mrand.New(mrand.NewPCG(uint64(filled), st.Seq))
	dest := make([]int, o.transfers)
	for k := range dest {
		dest[k] = rng.IntN(filled)
	}
	seq := st.Seq
	txs := make([][]byte, o.transfers)
	loadgen.Parallel(len(txs), func(k int) {
		n := seq + uint64(k)
		i := int(n % uint64(len(w.payers)))
		amount := 1 + n/uint64(len(w.payers))
		txs[k] = w.sign(i, []txwire.Instruction{
			spl.TokenTransferChecked(spl.TokenProgramID, w.payerATAs[i], w.mint, w.ata(dest[k]), w.payerKeys[i], amount, w.decimals),
		}, bh)
	})
	st.Seq += uint64(o.transfers)
	pid := srv.pid()
	if err := resetPeakRSS(pid); err != nil {
		return fmt.Errorf("reset peak RSS: %w", err)
	}
	wb0, dev0, cpu0 := loadgen.DiskWritten(pid), loadgen.DeviceWritten(srv.dir), procCPU(pid)
	clients := o.clients
	if batch > 1 {
		clients = o.batchCli
	}
	res, err := loadgen.Run(context.Background(), txs, loadgen.Options{URL: srv.rpc, Clients: clients, Batch: batch})
	if err != nil {
		return err
	}
	wb1, dev1, cpu1 := loadgen.DiskWritten(pid), loadgen.DeviceWritten(srv.dir), procCPU(pid)
	r.PeakRSS = procStatus(pid, "VmHWM")
	if res.Failed > 0 {
		return fmt.Errorf("%d of %d transfers failed: %s", res.Failed, len(txs), res.FirstError)
	}
	r.Transfers = res.Confirmed
	r.TPS = res.TPS()
	r.P50ms = float64(res.Percentile(50).Microseconds()) / 1000
	r.P99ms = float64(res.Percentile(99).Microseconds()) / 1000
	r.WritePerTx = float64(wb1-wb0) / float64(res.Confirmed)
	r.DeviceWritePerTx = -1
	if dev0 >= 0 && dev1 >= 0 {
		r.DeviceWritePerTx = float64(dev1-dev0) / float64(res.Confirmed)
	}
	r.ServerCPUus = float64((cpu1 - cpu0).Microseconds()) / float64(res.Confirmed)
	if err := call(srv.rpc, "getTransactionCount", []any{map[string]string{"commitment": "confirmed"}}, &r.StoredTxs); err != nil {
		return err
	}
	size, err := dirSize(filepath.Join(srv.dir, "data", "base"))
	if err != nil {
		return err
	}
	r.DBSize = size
	r.BytesPerTx = float64(r.DBSize) / float64(max(r.StoredTxs, 1))
	return nil
}

// dirSize is the size of the files in a directory tree: the base
// ledger's storage, whatever files it uses.
func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			n += fi.Size()
		}
		return err
	})
	return n, err
}
