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

const crashChildEnv = "FERRY_LEDGER_CRASH_CHILD"

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

// crashChild writes transactions as fast as it can and prints every
// signature once its block is durable ("C <sig> <slot>"), until killed.
func crashChild(dir string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		os.Exit(3)
	}
	// Tiny account-log segments: segments rotate, are cleaned and the
	// key directory is snapshotted all the time, so kills land in the
	// middle of those too.
	l, err := Open(Config{Name: "crash", DataDir: dir, SlotDuration: 10 * time.Millisecond, FinalityDepth: 4,
		accountSegmentBytes: 8 << 10, AccountCacheSize: 8, tableRewriteMin: 64})
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
	blocks := l.Subscribe(ctx)
	fmt.Fprintln(out, "READY")
	out.Flush()
	go func() {
		for b := range blocks {
			outMu.Lock()
			for _, r := range b.Transactions {
				fmt.Fprintf(out, "C %s %d\n", r.Signature, r.Slot)
			}
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
func runCrashChild(t *testing.T, dir string, n int) map[solana.Signature]uint64 {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	confirmed := map[solana.Signature]uint64{}
	sc := bufio.NewScanner(stdout)
	deadline := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer deadline.Stop()
	for sc.Scan() {
		line := sc.Text()
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
		if len(confirmed) >= n {
			// Mid-stream: the child is still writing.
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	cmd.Wait()
	if len(confirmed) < n {
		t.Fatalf("child reported only %d confirmed transactions", len(confirmed))
	}
	return confirmed
}

func TestCrashRecovery(t *testing.T) {
	dir := t.TempDir()
	confirmed := runCrashChild(t, dir, 3000)
	for sig, slot := range runCrashChild(t, dir, 6000) { // resumes the same data dir
		confirmed[sig] = slot
	}

	l, err := Open(Config{Name: "crash", DataDir: dir, ManualSlots: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	w := newCrashWorld()
	tip := l.Slot(Confirmed)
	for sig, slot := range confirmed {
		r, err := l.Transaction(sig, Confirmed)
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
	t.Logf("%d confirmed transactions survived two SIGKILLs; %d transactions touch the mint; tip slot %d", len(confirmed), seen, tip)
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
