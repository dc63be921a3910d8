package ledger

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// mappedRSS sums the resident kilobytes of this process's mappings of
// files under dir (Linux: /proc/self/smaps).
func mappedRSS(t *testing.T, dir string) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kb, in := 0, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":"):
			in = len(fields) >= 6 && strings.HasPrefix(fields[5], dir)

		case in && len(fields) == 3 && fields[0] == "Rss:":
			n, _ := strconv.Atoi(fields[1])
			kb += n

		}
	}
	return kb
}

// TestDropMappedPages: dropping the touched pages of the database and
// the mapped tables from the resident set loses nothing (every
// transaction, address history entry and balance reads back, before and
// after a reopen), and on Linux the files' mappings hold no resident
// page right after it.
func TestDropMappedPages(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Name: "drop", DataDir: dir, NoSync: true, FinalityDepth: 1, tableRewriteMin: 8, accountSegmentBytes: 4 << 10, tableRunChanges: 3}
	cfg.ManualSlots = true
	l, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	payer := fundedWallet(t, l, 1_000_000_000_000)
	var sigs []solana.Signature
	var dests []solana.PublicKey
	for slot := 0; slot < 48; slot++ {
		for i := 0; i < 8; i++ {
			to := solana.NewWallet().PublicKey()
			rec := mustProcess(t, l, buildTx(t, l, payer, []txwire.Instruction{spl.SystemTransfer(pubkeyOf(payer), to, 1_000_000+uint64(i))}))
			sigs, dests = append(sigs, rec.Signature), append(dests, to)
		}
		if _, err := l.AdvanceSlot(ctx); err != nil {
			t.Fatal(err)
		}
	}
	check := func(l *Ledger, when string) {
		t.Helper()
		for i, sig := range sigs {
			r, err := l.Transaction(sig, Confirmed)
			if err != nil || r == nil || r.Signature != sig {
				t.Fatalf("%s: transaction %d: %v %v", when, i, r, err)
			}
			if a, _ := l.Account(dests[i], Confirmed); a == nil || a.Lamports != 1_000_000+uint64(i%8) {
				t.Fatalf("%s: balance of destination %d: %+v", when, i, a)
			}
			if h, err := l.SignaturesForAddress(dests[i], AddressQuery{Limit: 10}, Confirmed); err != nil || len(h) != 1 || h[0].Signature != sig {
				t.Fatalf("%s: history of destination %d: %+v %v", when, i, h, err)
			}
		}
	}
	check(l, "before")
	s := l.store.(*boltStore)
	s.dropMappedPages()
	if runtime.GOOS == "linux" {
		if kb := mappedRSS(t, dir); kb != 0 {
			t.Fatalf("%d kB of the ledger's files still resident after dropping them", kb)
		}
	}
	check(l, "after dropping the mapped pages")
	if runtime.GOOS == "linux" {
		if mappedRSS(t, dir) == 0 {
			t.Fatal("reads after the drop mapped no page again: the check did not read the files")
		}
		// Table lookups read blocks with ReadAt: they map nothing.
		for _, table := range []string{"heads", "sigs", filepath.Join("accounts", "keydir")} {
			if kb := mappedRSS(t, filepath.Join(dir, table)); kb != 0 {
				t.Fatalf("%s: %d kB resident after lookups", table, kb)
			}
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2 := openTest(t, cfg)
	check(l2, "after reopening")
}
