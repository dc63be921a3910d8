package ledger

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/spl"
)

// tornConfig is the durable ledger of TestRecoveryFromTornWrites: tiny
// account-log segments and table rewrites every 32 changes, so the files
// a kill can leave half-written all exist after a few slots.
func tornConfig(dir string) Config {
	return Config{Name: "torn", DataDir: dir, ManualSlots: true, NoSync: true, FinalityDepth: 1,
		accountSegmentBytes: 8 << 10, AccountCacheSize: 8, tableRewriteMin: 32, tableRunChanges: 8}
}

// chainState is what must survive: every landed signature's slot and the
// balances of the crash world's accounts.
type chainState struct {
	sigs     map[solana.Signature]uint64
	lamports map[solana.PublicKey]uint64
	tokens   map[solana.PublicKey]uint64
	supply   uint64
}

// crashWorldState reads the balances of w's accounts at confirmed.
func crashWorldState(t *testing.T, l *Ledger, w crashWorld) (lamports, tokens map[solana.PublicKey]uint64, supply uint64) {
	t.Helper()
	lamports, tokens = map[solana.PublicKey]uint64{}, map[solana.PublicKey]uint64{}
	for i, k := range w.wallets {
		a, _ := l.Account(pubkeyOf(k), Confirmed)
		if a == nil {
			t.Fatalf("wallet %d missing", i)
		}
		lamports[pubkeyOf(k)] = a.Lamports
		tokens[w.atas[i]] = tokenAmount(t, l, w.atas[i], Confirmed)
	}
	ma, _ := l.Account(w.mint, Confirmed)
	if ma == nil {
		t.Fatal("mint missing")
	}
	m, err := spl.DecodeMint(ma.Data)
	if err != nil {
		t.Fatal(err)
	}
	return lamports, tokens, m.Supply
}

// setupCrashWorld creates w's mint and funds its wallets.
func setupCrashWorld(t *testing.T, l *Ledger, w crashWorld) {
	t.Helper()
	ctx := ctxT(t)
	f := l.Faucet()
	if _, _, err := f.CreateMint(ctx, MintOptions{Decimals: 2, Key: w.mintKey}); err != nil {
		t.Fatal(err)
	}
	for _, k := range w.wallets {
		if _, err := f.Airdrop(ctx, pubkeyOf(k), 100_000_000_000); err != nil {
			t.Fatal(err)
		}
		if _, err := f.MintTo(ctx, w.mint, pubkeyOf(k), 1_000_000); err != nil {
			t.Fatal(err)
		}
	}
}

// runTornSlots lands slots of random mints, transfers and burns and
// records their signatures in sigs.
func runTornSlots(t *testing.T, l *Ledger, w crashWorld, rng *mrand.Rand, slots int, sigs map[solana.Signature]uint64) {
	t.Helper()
	ctx := ctxT(t)
	for s := 0; s < slots; s++ {
		bh, _ := l.LatestBlockhash(Processed)
		batch := make([][]byte, 24)
		for i := range batch {
			batch[i] = crashTx(w, l.FaucetKey(), bh.Blockhash, rng)
		}
		recs, _ := l.ProcessBatch(ctx, batch)
		for _, r := range recs {
			if r != nil {
				sigs[r.Signature] = r.Slot
			}
		}
		if _, err := l.AdvanceSlot(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

func (st chainState) check(t *testing.T, l *Ledger, w crashWorld) {
	t.Helper()
	for sig, slot := range st.sigs {
		r, err := l.Transaction(sig, Confirmed)
		if err != nil || r == nil || r.Slot != slot {
			t.Fatalf("transaction %s (slot %d): %v %v", sig, slot, r, err)
		}
	}
	lamports, tokens, supply := crashWorldState(t, l, w)
	for k, v := range st.lamports {
		if lamports[k] != v {
			t.Fatalf("lamports of %s: %d, want %d", k, lamports[k], v)
		}
	}
	for k, v := range st.tokens {
		if tokens[k] != v {
			t.Fatalf("tokens of %s: %d, want %d", k, tokens[k], v)
		}
	}
	if supply != st.supply {
		t.Fatalf("supply %d, want %d", supply, st.supply)
	}
	// Address history is complete: every landed signature touching the
	// mint is listed (besides the setup's, which sigs does not hold).
	got := map[solana.Signature]bool{}
	var before *solana.Signature
	for {
		page, err := l.SignaturesForAddress(w.mint, AddressQuery{Before: before, Limit: 1000}, Confirmed)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		for _, r := range page {
			if got[r.Signature] {
				t.Fatalf("getSignaturesForAddress lists %s twice", r.Signature)
			}
			got[r.Signature] = true
		}
		s := page[len(page)-1].Signature
		before = &s
	}
	for sig := range st.sigs {
		r, _ := l.Transaction(sig, Confirmed)
		tx, err := r.Transaction()
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(tx.Message.AccountKeys, w.mint) && !got[sig] {
			t.Fatalf("getSignaturesForAddress misses %s", sig)
		}
	}
	checkSupply(t, l, w.mint)
}

// copyDir copies a data directory (regular files, one level of
// subdirectories). The directory of a running ledger may lose a file
// between the listing and its copy (a background rewrite removed it):
// the copy then lacks it, as a kill right after the removal would leave.
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d os.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o700)
		}
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// newestSegment is the path of the account log's newest segment.
func newestSegment(t *testing.T, dir string) (string, uint32) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, accountLogDir))
	if err != nil {
		t.Fatal(err)
	}
	var newest uint32
	for _, e := range entries {
		var id uint32
		if _, err := fmt.Sscanf(e.Name(), "%08d.seg", &id); err == nil && strings.HasSuffix(e.Name(), ".seg") {
			newest = max(newest, id)
		}
	}
	if newest == 0 {
		t.Fatal("no account log segment")
	}
	return filepath.Join(dir, accountLogDir, segName(newest)), newest
}

func appendFile(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// TestRecoveryFromTornWrites opens a data directory with what a process
// killed in the middle of a write leaves behind (the writes of a slot
// whose commit never happened, half-written files of a table or key
// directory rewrite, tables older than the database) and checks that
// every committed transaction and balance is still there and that the
// ledger goes on from it and restarts again. TestCrashRecovery does the
// same with real SIGKILLs at random moments.
func TestRecoveryFromTornWrites(t *testing.T) {
	base := t.TempDir()
	l, err := Open(tornConfig(base))
	if err != nil {
		t.Fatal(err)
	}
	w := newCrashWorld()
	setupCrashWorld(t, l, w)
	rng := mrand.New(mrand.NewPCG(7, 8))
	st := chainState{sigs: map[solana.Signature]uint64{}}
	runTornSlots(t, l, w, rng, 30, st.sigs)
	// Table files as of now: a kill leaves tables older than the database
	// (they are rewritten only when enough changed).
	oldSigs, err := os.ReadFile(filepath.Join(base, "sigs"))
	if err != nil {
		t.Fatal(err)
	}
	oldHeads, err := os.ReadFile(filepath.Join(base, "heads"))
	if err != nil {
		t.Fatal(err)
	}
	runTornSlots(t, l, w, rng, 30, st.sigs)
	st.lamports, st.tokens, st.supply = crashWorldState(t, l, w)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		// tear damages the copy of the data directory in dir.
		tear func(t *testing.T, dir string)
		// gone are files that must not be there after the reopen.
		gone []string
	}{
		{"nothing", func(*testing.T, string) {}, nil},
		{"garbage after the account log's end", func(t *testing.T, dir string) {
			seg, _ := newestSegment(t, dir)
			appendFile(t, seg, randomBytes(3000))
		}, nil},
		{"half an account record after the end", func(t *testing.T, dir string) {
			seg, _ := newestSegment(t, dir)
			b, err := os.ReadFile(seg)
			if err != nil {
				t.Fatal(err)
			}
			appendFile(t, seg, b[:min(len(b), 60)])
		}, nil},
		{"segment of a rotation that never committed", func(t *testing.T, dir string) {
			_, id := newestSegment(t, dir)
			appendFile(t, filepath.Join(dir, accountLogDir, segName(id+1)), randomBytes(500))
		}, []string{"accounts/next.seg"}},
		{"temporary files of interrupted rewrites", func(t *testing.T, dir string) {
			appendFile(t, filepath.Join(dir, accountLogDir, "keydir.tmp1234"), randomBytes(700))
			appendFile(t, filepath.Join(dir, accountLogDir, "keydir.vals.tmp3456"), randomBytes(700))
			appendFile(t, filepath.Join(dir, "sigs.tmp5678"), randomBytes(700))
			appendFile(t, filepath.Join(dir, "heads.tmp9012"), randomBytes(700))
		}, []string{"accounts/keydir.tmp1234", "accounts/keydir.vals.tmp3456", "sigs.tmp5678", "heads.tmp9012"}},
		{"tables older than the database", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "sigs"), oldSigs, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "heads"), oldHeads, 0o600); err != nil {
				t.Fatal(err)
			}
		}, nil},
		{"tables missing", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "sigs"))
			os.Remove(filepath.Join(dir, "heads"))
		}, nil},
		{"table cut short", func(t *testing.T, dir string) {
			for _, name := range []string{"sigs", "heads"} {
				path := filepath.Join(dir, name)
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, b[:len(b)*2/3], 0o600); err != nil {
					t.Fatal(err)
				}
			}
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			copyDir(t, base, dir)
			var next string
			if slices.Contains(tc.gone, "accounts/next.seg") {
				_, id := newestSegment(t, dir)
				next = filepath.Join(dir, accountLogDir, segName(id+1))
			}
			tc.tear(t, dir)
			l, err := Open(tornConfig(dir))
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			defer func() { l.Close() }()
			st.check(t, l, w)
			for _, g := range tc.gone {
				path := filepath.Join(dir, g)
				if g == "accounts/next.seg" {
					path = next
				}
				if _, err := os.Stat(path); err == nil {
					t.Errorf("%s is still there", g)
				}
			}
			// The ledger goes on from there and restarts again.
			more := chainState{sigs: map[solana.Signature]uint64{}}
			for sig, slot := range st.sigs {
				more.sigs[sig] = slot
			}
			runTornSlots(t, l, w, mrand.New(mrand.NewPCG(9, 10)), 10, more.sigs)
			more.lamports, more.tokens, more.supply = crashWorldState(t, l, w)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if l, err = Open(tornConfig(dir)); err != nil {
				t.Fatalf("reopen: %v", err)
			}
			more.check(t, l, w)
		})
	}
}
