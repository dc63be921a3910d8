package ledger

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

const (
	crashChildEnv = "FERRY_LEDGER_CRASH_CHILD"
	// crashPruneEnv makes the child prune its history to this many
	// transactions (and skip fsync, which a process kill does not need,
	// so that it runs through enough slots to prune).
	crashPruneEnv = "FERRY_LEDGER_CRASH_PRUNE"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		crashChild(dir)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// crashWorld is the deterministic cast of the crash test: a mint whose
// authority is the faucet, and wallets with token accounts.
type crashWorld struct {
	mintKey ed25519.PrivateKey
	mint    solana.PublicKey
	wallets []ed25519.PrivateKey
	atas    []solana.PublicKey
}

func newCrashWorld() crashWorld {
	seed := func(s string) ed25519.PrivateKey {
		h := sha256.Sum256([]byte("ferry-crash-" + s))
		return ed25519.NewKeyFromSeed(h[:])
	}
	w := crashWorld{mintKey: seed("mint")}
	w.mint = pubkeyOf(w.mintKey)
	for i := 0; i < 16; i++ {
		k := seed(fmt.Sprint("wallet", i))
		w.wallets = append(w.wallets, k)
		w.atas = append(w.atas, spl.AssociatedTokenAddress(pubkeyOf(k), w.mint, spl.TokenProgramID))
	}
	return w
}

// crashBalances are the balances of the crash world's accounts after a
// slot: each wallet's lamports and each token account's amount, in the
// order of crashWorld.wallets.
type crashBalances struct {
	slot     uint64
	lamports []uint64
	tokens   []uint64
	// index finds an account: i for wallet i, -1-i for token account i.
	index map[solana.PublicKey]int
}

func newCrashBalances(w crashWorld) *crashBalances {
	b := &crashBalances{lamports: make([]uint64, len(w.wallets)), tokens: make([]uint64, len(w.atas)), index: map[solana.PublicKey]int{}}
	for i, k := range w.wallets {
		b.index[pubkeyOf(k)] = i
		b.index[w.atas[i]] = -1 - i
	}
	return b
}

// set records an account's new value (nil: deleted).
func (b *crashBalances) set(k solana.PublicKey, a *Account) {
	i := b.index[k]
	if i >= 0 {
		b.lamports[i] = 0
		if a != nil {
			b.lamports[i] = a.Lamports
		}
		return
	}
	b.tokens[-1-i] = 0
	if a != nil {
		b.tokens[-1-i] = spl.TokenAmountOf(a.Data)
	}
}

// line is the child's report of the balances after slot:
// "B <slot> <lamports...> <tokens...>".
func (b *crashBalances) line(slot uint64) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "B %d", slot)
	for _, v := range append(append([]uint64(nil), b.lamports...), b.tokens...) {
		fmt.Fprintf(&sb, " %d", v)
	}
	return sb.String()
}

// parseCrashBalances reads a line of the child's; false for a line cut
// by the kill.
func parseCrashBalances(w crashWorld, line string) (*crashBalances, bool) {
	f := strings.Fields(line)
	n := len(w.wallets)
	if len(f) != 2+2*n || f[0] != "B" {
		return nil, false
	}
	b := newCrashBalances(w)
	var err error
	if b.slot, err = strconv.ParseUint(f[1], 10, 64); err != nil {
		return nil, false
	}
	for i := 0; i < 2*n; i++ {
		v, err := strconv.ParseUint(f[2+i], 10, 64)
		if err != nil {
			return nil, false
		}
		if i < n {
			b.lamports[i] = v
		} else {
			b.tokens[i-n] = v
		}
	}
	return b, true
}

// crashChild writes transactions as fast as it can and prints every
// signature once its block is durable ("C <sig> <slot>"), followed by
// the balances after that block ("B ..."), until killed.
func crashChild(dir string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		os.Exit(3)
	}
	// Tiny account-log segments: segments rotate, are cleaned and the
	// key directory is snapshotted all the time (every 16 segments of
	// growth: with 8 KiB ones the children's log, a few dozen accounts
	// written once a 10 ms slot, never got there, and no kill met a
	// snapshot), so kills land in the middle of those too.
	cfg := Config{Name: "crash", DataDir: dir, SlotDuration: 10 * time.Millisecond, FinalityDepth: 4,
		accountSegmentBytes: 1 << 10, AccountCacheSize: 8, tableRewriteMin: 64, tableRunChanges: 16}
	if v := os.Getenv(crashPruneEnv); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			fail(err)
		}
		cfg.LimitLedgerSize, cfg.NoSync = n, true
	}
	l, err := Open(cfg)
	if err != nil {
		fail(err)
	}
	ctx := context.Background()
	w := newCrashWorld()
	f := l.Faucet()
	if a, _ := l.Account(w.mint, Processed); a == nil {
		if _, _, err := f.CreateMint(ctx, MintOptions{Decimals: 2, Key: w.mintKey}); err != nil {
			fail(err)
		}
		for _, k := range w.wallets {
			if _, err := f.Airdrop(ctx, pubkeyOf(k), 100_000_000_000); err != nil {
				fail(err)
			}
			if _, err := f.MintTo(ctx, w.mint, pubkeyOf(k), 1_000_000); err != nil {
				fail(err)
			}
		}
	}
	out := bufio.NewWriter(os.Stdout)
	var outMu sync.Mutex
	// Nothing is sent until the writers start: once the setup is
	// confirmed, the state read now is the one every later block's
	// writes (final values) build on.
	if err := l.WaitForSlot(ctx, l.Slot(Processed), Confirmed); err != nil {
		fail(err)
	}
	blocks := l.Subscribe(ctx)
	bal := newCrashBalances(w)
	for k := range bal.index {
		a, _ := l.Account(k, Confirmed)
		bal.set(k, a)
	}
	fmt.Fprintln(out, "READY")
	fmt.Fprintln(out, bal.line(l.Slot(Confirmed)))
	out.Flush()
	go func() {
		for b := range blocks {
			outMu.Lock()
			for _, r := range b.Transactions {
				fmt.Fprintf(out, "C %s %d\n", r.Signature, r.Slot)
			}
			for _, wr := range b.Writes {
				if _, ok := bal.index[wr.Key]; ok {
					bal.set(wr.Key, wr.Account)
				}
			}
			fmt.Fprintln(out, bal.line(b.Slot))
			out.Flush()
			outMu.Unlock()
		}
	}()
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(g)))
			for {
				bh, _ := l.LatestBlockhash(Processed)
				batch := make([][]byte, 32)
				for i := range batch {
					batch[i] = crashTx(w, l.FaucetKey(), bh.Blockhash, rng)
				}
				l.ProcessBatch(ctx, batch)
			}
		}(g)
	}
	wg.Wait()
}

// crashTx is a random mint, transfer or burn.
func crashTx(w crashWorld, faucet ed25519.PrivateKey, bh solana.Hash, rng *rand.Rand) []byte {
	a, b := rng.IntN(len(w.wallets)), rng.IntN(len(w.wallets))
	amount := uint64(rng.IntN(5000) + 1)
	var payer ed25519.PrivateKey
	var ixs []txwire.Instruction
	switch rng.IntN(4) {
	case 0:
		payer = faucet
		ixs = []txwire.Instruction{spl.TokenMintTo(spl.TokenProgramID, w.mint, w.atas[a], pubkeyOf(faucet), amount)}
	case 1:
		payer = w.wallets[a]
		ixs = []txwire.Instruction{spl.TokenBurn(spl.TokenProgramID, w.atas[a], w.mint, pubkeyOf(payer), amount)}
	default:
		payer = w.wallets[a]
		ixs = []txwire.Instruction{spl.TokenTransferChecked(spl.TokenProgramID, w.atas[a], w.mint, w.atas[b], pubkeyOf(payer), amount, 2)}
	}
	msg, _ := txwire.Compile(pubkeyOf(payer), ixs, bh)
	tx := txwire.NewUnsigned(msg)
	tx.Sign(payer)
	return tx.Bytes()
}

// runCrashChild starts the child on dir, waits for at least n confirmed
// transactions, kills it with SIGKILL and returns what it reported.
func runCrashChild(t *testing.T, dir string, n int, env ...string) (map[solana.Signature]uint64, *crashBalances) {
	return runCrashChildTo(t, dir, n, 0, env...)
}

// runCrashChildTo is runCrashChild that also waits for a transaction
// confirmed in slot minSlot or later before the kill.
func runCrashChildTo(t *testing.T, dir string, n int, minSlot uint64, env ...string) (map[solana.Signature]uint64, *crashBalances) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), crashChildEnv+"="+dir), env...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	confirmed := map[solana.Signature]uint64{}
	var last *crashBalances
	w := newCrashWorld()
	sc := bufio.NewScanner(stdout)
	deadline := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer deadline.Stop()
	for sc.Scan() {
		line := sc.Text()
		if b, ok := parseCrashBalances(w, line); ok {
			last = b
			continue
		}
		if !strings.HasPrefix(line, "C ") {
			continue
		}
		parts := strings.Fields(line)
		if len(parts) != 3 {
			continue // a line cut by the kill
		}
		sig, err1 := solana.SignatureFromBase58(parts[1])
		slot, err2 := strconv.ParseUint(parts[2], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		confirmed[sig] = slot
		if len(confirmed) >= n && slot >= minSlot {
			// Mid-stream: the child is still writing.
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	cmd.Wait()
	if len(confirmed) < n || last == nil {
		t.Fatalf("child reported only %d confirmed transactions (balances: %v)", len(confirmed), last != nil)
	}
	return confirmed, last
}

// checkCrashState opens dir after a kill (the recovery under test) and
// checks that every transaction the child reported confirmed is there at
// its slot, and that every balance is the one the child reported after
// its last block, moved on by the transactions of any later block that
// became durable before the kill (their post balances).
func checkCrashState(t *testing.T, dir string, confirmed map[solana.Signature]uint64, last *crashBalances) (first uint64) {
	t.Helper()
	l, err := Open(Config{Name: "crash", DataDir: dir, ManualSlots: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tip := l.Slot(Confirmed)
	first = l.FirstAvailableBlock()
	for sig, slot := range confirmed {
		r, err := l.Transaction(sig, Confirmed)
		if slot < first {
			if err != nil || r != nil {
				t.Fatalf("transaction %s of pruned slot %d (first kept %d): %v %v", sig, slot, first, r, err)
			}
			continue
		}
		if err != nil || r == nil {
			t.Fatalf("confirmed transaction %s (slot %d, tip %d) lost: %v", sig, slot, tip, err)
		}
		if r.Slot != slot {
			t.Fatalf("transaction %s moved from slot %d to %d", sig, slot, r.Slot)
		}
	}
	if tip < last.slot {
		t.Fatalf("tip %d is before the last block reported confirmed (%d)", tip, last.slot)
	}
	w := newCrashWorld()
	want := newCrashBalances(w)
	copy(want.lamports, last.lamports)
	copy(want.tokens, last.tokens)
	for slot := last.slot + 1; slot <= tip; slot++ {
		_, txs, err := l.Block(slot, Confirmed)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range txs {
			tx, err := r.Transaction()
			if err != nil {
				t.Fatal(err)
			}
			for i, k := range tx.Message.AccountKeys {
				j, ok := want.index[k]
				switch {
				case !ok:
				case j >= 0:
					want.lamports[j] = r.Meta.PostBalances[i]
				default:
					for _, tb := range r.Meta.PostTokenBalances {
						if int(tb.AccountIndex) == i {
							want.tokens[-1-j] = tb.Amount
						}
					}
				}
			}
		}
	}
	got := newCrashBalances(w)
	for k := range got.index {
		a, _ := l.Account(k, Confirmed)
		got.set(k, a)
	}
	if g, w := got.line(tip), want.line(tip); g != w {
		t.Fatalf("balances after recovery (reported at slot %d, tip %d):\n got %s\nwant %s", last.slot, tip, g, w)
	}
	checkSupply(t, l, w.mint)
	t.Logf("after the kill: %d confirmed transactions and every balance there; the last reported block %d, tip %d, first kept %d", len(confirmed), last.slot, tip, first)
	return first
}

// TestCrashRecoveryWhilePruning is TestCrashRecovery with history pruned
// to 2 000 transactions: kills land among pruning steps too, and every
// confirmed transaction is either there or in a slot below the first
// kept one, with every balance intact.
func TestCrashRecoveryWhilePruning(t *testing.T) {
	dir := t.TempDir()
	confirmed := map[solana.Signature]uint64{}
	var first uint64
	// The last run goes on to slot 400, far enough past the recent 152
	// blocks that pruning must have happened whatever the slots' size.
	for i, n := range []int{3000, 5000, 3000, 5000} {
		minSlot := uint64(0)
		if i == 3 {
			minSlot = 400
		}
		got, last := runCrashChildTo(t, dir, n, minSlot, crashPruneEnv+"=2000")
		for sig, slot := range got {
			confirmed[sig] = slot
		}
		if i%2 == 1 {
			first = checkCrashState(t, dir, confirmed, last)
		}
	}
	if first == 0 {
		t.Fatal("nothing was pruned")
	}
}

// TestCrashRecovery kills a child writing as fast as it can with SIGKILL
// four times at random moments (tiny account-log segments and table
// rewrites every 64 changes, so kills land among appends, rotations,
// cleanings, key-directory snapshots, table rewrites and the compressed
// chunks' bbolt commits). The child restarts twice on the killed
// directory itself; twice the test opens it first and checks every
// confirmed transaction and every balance. At the end the supply is
// what the mints and burns in history say.
func TestCrashRecovery(t *testing.T) {
	dir := t.TempDir()
	confirmed := map[solana.Signature]uint64{}
	for i, n := range []int{1500, 2500, 1500, 2500} {
		got, last := runCrashChild(t, dir, n) // each resumes the same data dir
		for sig, slot := range got {
			confirmed[sig] = slot
		}
		if i%2 == 1 {
			checkCrashState(t, dir, confirmed, last)
		}
	}

	if _, err := os.Stat(valsPath(filepath.Join(dir, accountLogDir, "keydir"))); err != nil {
		// The children's transfers move accounts the key directory's base
		// holds: its snapshots are values files, which the kills land in.
		es, _ := os.ReadDir(filepath.Join(dir, accountLogDir))
		var names []string
		for _, e := range es {
			if !strings.HasSuffix(e.Name(), ".seg") {
				names = append(names, e.Name())
			}
		}
		t.Fatalf("no key directory values file after the kills: %v %v", err, names)
	}
	l, err := Open(Config{Name: "crash", DataDir: dir, ManualSlots: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	w := newCrashWorld()
	tip := l.Slot(Confirmed)
	first := l.FirstAvailableBlock()
	for sig, slot := range confirmed {
		r, err := l.Transaction(sig, Confirmed)
		if slot < first {
			if err != nil || r != nil {
				t.Fatalf("transaction %s of pruned slot %d (first kept %d): %v %v", sig, slot, first, r, err)
			}
			continue
		}
		if err != nil || r == nil {
			t.Fatalf("confirmed transaction %s (slot %d, tip %d) lost: %v", sig, slot, tip, err)
		}
		if r.Slot != slot {
			t.Fatalf("transaction %s moved from slot %d to %d", sig, slot, r.Slot)
		}
	}
	checkSupply(t, l, w.mint)
	// History and state agree: the supply is exactly what the landed
	// mints and burns say.
	var minted, burned uint64
	var before *solana.Signature
	seen := 0
	listed := map[solana.Signature]bool{}
	for {
		page, err := l.SignaturesForAddress(w.mint, AddressQuery{Before: before, Limit: 1000}, Confirmed)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		for _, r := range page {
			seen++
			listed[r.Signature] = true
			if r.Err != nil {
				continue
			}
			tx, _ := r.Transaction()
			for _, ix := range tx.Message.Instructions {
				if tx.Message.AccountKeys[ix.ProgramIDIndex] != spl.TokenProgramID {
					continue
				}
				in, err := spl.DecodeToken(ix.Data)
				if err != nil {
					continue
				}
				switch in.Op {
				case spl.TokenMintToOp:
					minted += in.Amount
				case spl.TokenBurnOp:
					burned += in.Amount
				}
			}
		}
		s := page[len(page)-1].Signature
		before = &s
	}
	mint, _ := l.Account(w.mint, Confirmed)
	m, err := spl.DecodeMint(mint.Data)
	if err != nil {
		t.Fatal(err)
	}
	if m.Supply != minted-burned {
		t.Fatalf("supply %d, history says %d minted - %d burned", m.Supply, minted, burned)
	}
	// Every confirmed transaction touching the mint is in its history
	// (the walk starts at the mint's head, which the heads cache holds).
	for sig, slot := range confirmed {
		if slot < first {
			continue
		}
		r, _ := l.Transaction(sig, Confirmed)
		tx, err := r.Transaction()
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(tx.Message.AccountKeys, w.mint) && !listed[sig] {
			t.Fatalf("getSignaturesForAddress of the mint misses %s (slot %d)", sig, slot)
		}
	}
	t.Logf("%d confirmed transactions survived four SIGKILLs; %d transactions touch the mint; tip slot %d", len(confirmed), seen, tip)
}

// checkSupply asserts that a mint's supply is the sum of its accounts.
func checkSupply(t testing.TB, l *Ledger, mint solana.PublicKey) {
	t.Helper()
	for _, c := range []Commitment{Processed, Confirmed, Finalized} {
		ma, _ := l.Account(mint, c)
		if ma == nil {
			continue
		}
		m, err := spl.DecodeMint(ma.Data)
		if err != nil {
			t.Fatal(err)
		}
		accts, _ := l.TokenAccountsByMint(mint, c)
		var sum uint64
		for _, a := range accts {
			sum += spl.TokenAmountOf(a.Account.Data)
		}
		if sum != m.Supply {
			t.Fatalf("%s: supply %d != sum of balances %d", c, m.Supply, sum)
		}
	}
}
