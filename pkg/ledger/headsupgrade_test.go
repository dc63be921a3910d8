package ledger

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"
	bolt "go.etcd.io/bbolt"
)

// extractFixture unpacks a data directory from testdata into a new
// temporary directory and returns its path.
func extractFixture(t *testing.T, name string) string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return dir
		}
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, filepath.Clean(h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(path, 0o700); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			out, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(out, tr); err != nil {
				t.Fatal(err)
			}
			if err := out.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestHeadsUpgradeSharedPrefix opens a ferry-ledger-5 directory (written
// by ce7783c, the last commit with whole-address heads; its
// fixture.json names the addresses and signatures) whose history has
// three addresses sharing their first 8 bytes, a, b and c, each on a
// chain of its own: a1 and b1 in one slot (whole keys stored), c1 with
// an unrelated e1, b2, then a2 (also to e). The upgrade keeps their old
// heads; every address's history must read the same before and after new
// postings join their prefix's chain, after the heads are rebuilt from
// history, and after a reopen. Its account log holds records of the
// second format (the owner whole), which must read the same.
func TestHeadsUpgradeSharedPrefix(t *testing.T) {
	dir, fx := openHeadsFixture(t)
	var logs bytes.Buffer
	cfg := Config{Name: "prefix", DataDir: dir, NoSync: true, FinalityDepth: 1, ManualSlots: true,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	l, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { l.Close() }()
	if !strings.Contains(logs.String(), "upgraded the data directory's format") || !strings.Contains(logs.String(), "from=ferry-ledger-5 to="+storeFormat) {
		t.Fatalf("no upgrade logged:\n%s", logs.String())
	}
	fx.checkUpgraded(t, l)
	d, want := fx.d, fx.want()
	check := func(t *testing.T, l *Ledger) {
		t.Helper()
		for _, addr := range []solana.PublicKey{fx.A, fx.B, fx.C, fx.E, d} {
			checkAddressHistory(t, l, addr, want[addr])
		}
	}
	check(t, l)
	// The account log's records of the second format read the same: each
	// transfer of the fixture moved 1 000 000 lamports.
	for addr, want := range map[solana.PublicKey]uint64{fx.A: 2_000_000, fx.B: 2_000_000, fx.C: 1_000_000, fx.E: 2_000_000} {
		if a, _ := l.Account(addr, Confirmed); a == nil || a.Lamports != want || a.Owner != solana.SystemProgramID {
			t.Fatalf("%s: %+v, want %d lamports", addr, a, want)
		}
	}

	payer := fundedWallet(t, l, 1_000_000_000_000)
	add := func(r *TxRecord, to ...solana.PublicKey) {
		for _, a := range to {
			want[a] = append(want[a], r)
		}
	}
	advance := func() {
		t.Helper()
		if _, err := l.AdvanceSlot(ctxT(t)); err != nil {
			t.Fatal(err)
		}
	}
	// b's first new posting links to a's old head (the newest of the
	// prefix); d's to b's; a and c in one slot (whole keys) to d's.
	add(sendTo(t, l, payer, "b3", fx.B), fx.B)
	advance()
	add(sendTo(t, l, payer, "d1", d), d)
	advance()
	add(sendTo(t, l, payer, "ac", fx.A, fx.C), fx.A, fx.C)
	advance()
	add(sendTo(t, l, payer, "e2", fx.E), fx.E)
	if _, err := l.AdvanceSlots(ctxT(t), 3); err != nil {
		t.Fatal(err)
	}
	check(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	// Rebuilt from history: the prefix's newest slot of all.
	removeHeadsFiles(t, dir)
	for i := 0; i < 2; i++ {
		logs.Reset()
		if l, err = Open(cfg); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(logs.String(), "upgraded") {
			t.Fatalf("upgraded again: %s", logs.String())
		}
		check(t, l)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	l, err = Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
}

// headsFixture is what ferry-ledger-5-shared-prefix.tar.gz's fixture.json
// names, and d, an address sharing their prefix with no history.
type headsFixture struct {
	A, B, C, E solana.PublicKey
	Signatures map[string]solana.Signature
	d          solana.PublicKey
}

// openHeadsFixture unpacks the ferry-ledger-5 fixture and reads its
// fixture.json.
func openHeadsFixture(t *testing.T) (string, *headsFixture) {
	t.Helper()
	dir := extractFixture(t, "ferry-ledger-5-shared-prefix.tar.gz")
	fx := &headsFixture{}
	js, err := os.ReadFile(filepath.Join(dir, "fixture.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(js, fx); err != nil {
		t.Fatal(err)
	}
	fx.d = withPrefixOf(fx.A, 3)
	if headKey(fx.B) != headKey(fx.A) || headKey(fx.C) != headKey(fx.A) || fx.B == fx.A || fx.C == fx.A {
		t.Fatal("fixture addresses do not share their prefix")
	}
	return dir, fx
}

// want is each address's history in the fixture, oldest first.
func (fx *headsFixture) want() map[solana.PublicKey][]*TxRecord {
	want := map[solana.PublicKey][]*TxRecord{}
	for addr, names := range map[solana.PublicKey][]string{
		fx.A: {"a1", "a2"}, fx.B: {"b1", "b2"}, fx.C: {"c1"}, fx.E: {"e1", "a2"}, fx.d: nil,
	} {
		for _, n := range names {
			want[addr] = append(want[addr], &TxRecord{Signature: fx.Signatures[n]})
		}
	}
	return want
}

// checkUpgraded checks the state an upgrade of the fixture leaves: the
// format, the three addresses' old heads, the first slot chained by
// prefix.
func (fx *headsFixture) checkUpgraded(t *testing.T, l *Ledger) {
	t.Helper()
	s := l.store.(*boltStore)
	if f, err := s.getMeta(metaFormat); err != nil || string(f) != storeFormat {
		t.Fatalf("format after the upgrade: %q, %v", f, err)
	}
	if len(s.legacyHeads) != 3 || s.legacyHeads[fx.A] == 0 || s.legacyHeads[fx.B] == 0 || s.legacyHeads[fx.C] == 0 || len(s.legacyPrefixes) != 1 {
		t.Fatalf("legacy heads %v", s.legacyHeads)
	}
	if s.prefixChainsFrom != s.tip+1 {
		t.Fatalf("prefix chains from %d, tip %d", s.prefixChainsFrom, s.tip)
	}
}

// TestHeadsUpgradeRebuilds upgrades the fixture when its old heads table
// cannot be read as it was left: damaged, missing, or already converted
// by an upgrade a kill interrupted before the format was renamed. Each
// time the upgrade rebuilds the old heads from history and finds the
// same shared prefix.
func TestHeadsUpgradeRebuilds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, dir string)
	}{
		{"damaged run", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "heads.run000001"), bytes.Repeat([]byte{0x5a}, 300), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"missing", func(t *testing.T, dir string) { removeHeadsFiles(t, dir) }},
		{"converted, format not renamed", func(t *testing.T, dir string) {
			l, err := Open(Config{Name: "prefix", DataDir: dir, NoSync: true, FinalityDepth: 1, ManualSlots: true})
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			updateDB(t, dir, func(tx *bolt.Tx) error {
				if err := tx.DeleteBucket(bucketLegacyHeads); err != nil {
					return err
				}
				if err := tx.Bucket(bucketMeta).Delete([]byte(metaPrefixChains)); err != nil {
					return err
				}
				return tx.Bucket(bucketMeta).Put([]byte(metaFormat), []byte("ferry-ledger-5"))
			})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, fx := openHeadsFixture(t)
			tc.damage(t, dir)
			l, err := Open(Config{Name: "prefix", DataDir: dir, NoSync: true, FinalityDepth: 1, ManualSlots: true})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			fx.checkUpgraded(t, l)
			for addr, want := range fx.want() {
				checkAddressHistory(t, l, addr, want)
			}
		})
	}
}
