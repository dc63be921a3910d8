package ledger

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// TestCloseWritesRuns checks what a clean close writes for the tables
// (signatures, address heads, the account log's key directory): the
// changes since the last file as a run, not the whole base again, so
// that a restart replays nothing; and, once a base carries tableMaxRuns
// runs, the base, which absorbs them. Every transaction stays readable
// across each restart.
func TestCloseWritesRuns(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Name: "close", DataDir: dir, NoSync: true, FinalityDepth: 1, ManualSlots: true}
	l, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	payer := fundedWallet(t, l, 1_000_000_000_000)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	bases := []string{filepath.Join(dir, "sigs"), filepath.Join(dir, "heads"), filepath.Join(dir, accountLogDir, "keydir")}
	type tableFiles struct {
		base, vals os.FileInfo // nil: none yet
		runs       int
	}
	files := func() []tableFiles {
		out := make([]tableFiles, len(bases))
		for i, p := range bases {
			out[i].base, _ = os.Stat(p)
			out[i].vals, _ = os.Stat(valsPath(p))
			m, _ := filepath.Glob(p + ".run*")
			out[i].runs = len(m)
		}
		return out
	}
	var sigs []solana.Signature
	var dests []solana.PublicKey
	prev := files()
	rewrites, revalues := 0, 0
	for restart := 1; restart <= 2*tableMaxRuns+2; restart++ {
		if l, err = Open(cfg); err != nil {
			t.Fatalf("restart %d: %v", restart, err)
		}
		s := l.store.(*boltStore)
		if n := len(s.sigs.recent) + len(s.heads.recent) + len(s.acc.keydir.recent); n != 0 {
			t.Fatalf("restart %d replayed %d table changes, want none", restart, n)
		}
		for i, sig := range sigs {
			if r, err := l.Transaction(sig, Confirmed); err != nil || r == nil {
				t.Fatalf("restart %d: transaction %d: %v %v", restart, i, r, err)
			}
			if got, err := l.SignaturesForAddress(dests[i], AddressQuery{}, Confirmed); err != nil || len(got) != 1 || got[0].Signature != sig {
				t.Fatalf("restart %d: history of destination %d: %v %v", restart, i, got, err)
			}
			if a, _ := l.Account(dests[i], Confirmed); a == nil || a.Lamports != 1_000_000+uint64(i) {
				t.Fatalf("restart %d: destination %d: %v", restart, i, a)
			}
		}
		to := randomAddr(t)
		rec := mustProcess(t, l, buildTx(t, l, payer, []txwire.Instruction{spl.SystemTransfer(pubkeyOf(payer), to, 1_000_000+uint64(len(sigs)))}))
		sigs, dests = append(sigs, rec.Signature), append(dests, to)
		if _, err := l.AdvanceSlot(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		now := files()
		for i, p := range bases {
			switch {
			case prev[i].runs < tableMaxRuns:
				// One more run; the base (and values file) as it was.
				same := sameFile(prev[i].base, now[i].base) && sameFile(prev[i].vals, now[i].vals)
				if !same || now[i].runs != prev[i].runs+1 {
					t.Fatalf("close %d: %s has %d runs (was %d), base rewritten: %v", restart, p, now[i].runs, prev[i].runs, !same)
				}
			default:
				// The base absorbed its runs; or, for the key directory,
				// whose changes were values of its keys (and one account
				// created since the last close), a values file did, with
				// the created accounts in one run beside it.
				rewritten := now[i].base != nil && !sameFile(prev[i].base, now[i].base) && now[i].runs == 0
				revalued := now[i].vals != nil && !sameFile(prev[i].vals, now[i].vals) && now[i].runs == 1 && sameFile(prev[i].base, now[i].base)
				if !rewritten && !revalued {
					t.Fatalf("close %d, with %d runs on %s: %d runs after, base rewritten: %v, values file written: %v",
						restart, prev[i].runs, p, now[i].runs, !sameFile(prev[i].base, now[i].base), !sameFile(prev[i].vals, now[i].vals))
				}
				if revalued && !strings.HasSuffix(p, "keydir") {
					t.Fatalf("close %d: a values file for %s, which has no prefix index", restart, p)
				}
				if revalued {
					revalues++
				}
				rewrites++
			}
		}
		prev = now
	}
	if rewrites < 2*len(bases) || revalues == 0 {
		t.Fatalf("%d base rewrites (%d of them values files), want every table's twice and the key directory's as values", rewrites, revalues)
	}
}

// TestCloseLogsStorageWrites checks the close's log line of what the run
// wrote, by part: the figures are the store's own counters at the close,
// and a memory ledger, which writes nothing, logs none.
func TestCloseLogsStorageWrites(t *testing.T) {
	for _, durable := range []bool{true, false} {
		var logs bytes.Buffer
		cfg := Config{Name: "closelog", NoSync: true, FinalityDepth: 1, ManualSlots: true,
			Logger: slog.New(slog.NewTextHandler(&logs, nil))}
		if durable {
			cfg.DataDir = t.TempDir()
		}
		l, err := Open(cfg)
		if err != nil {
			t.Fatal(err)
		}
		fundedWallet(t, l, 1_000_000_000)
		if _, err := l.AdvanceSlot(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		w := l.StorageWrites()
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		var line string
		for _, s := range strings.Split(logs.String(), "\n") {
			if strings.Contains(s, `msg="ledger closing"`) {
				line = s
			}
		}
		if !durable {
			if line != "" {
				t.Fatalf("memory ledger logged storage writes: %s", line)
			}
			continue
		}
		if w.AccountRecords <= 0 || w.Database <= 0 {
			t.Fatalf("nothing counted before the close: %+v", w)
		}
		for name, v := range map[string]int64{
			"account_records_bytes": w.AccountRecords, "account_cleaning_bytes": w.AccountCleaning,
			"key_directory_bytes": w.KeyDirectory, "signatures_bytes": w.Signatures,
			"heads_bytes": w.Heads, "database_bytes": w.Database,
		} {
			if want := name + "=" + strconv.FormatInt(v, 10); !strings.Contains(line, want) {
				t.Errorf("close log %q lacks %s", line, want)
			}
		}
	}
}

// sameFile reports whether a and b (nil: no file) are the same file.
func sameFile(a, b os.FileInfo) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && os.SameFile(a, b))
}
