package ledger

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// mapSource is an AccountSource over a map, counting what it is asked.
type mapSource struct {
	mu       sync.Mutex
	accounts map[solana.PublicKey]*Account
	asked    map[solana.PublicKey]int
	fail     error
}

func (s *mapSource) FetchAccounts(_ context.Context, keys []solana.PublicKey) ([]*Account, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return nil, s.fail
	}
	out := make([]*Account, len(keys))
	for i, k := range keys {
		s.asked[k]++
		if a := s.accounts[k]; a != nil {
			out[i] = a.Clone()
		}
	}
	return out, nil
}

func (s *mapSource) Name() string { return "test-remote" }

func (s *mapSource) count(k solana.PublicKey) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asked[k]
}

func newForked(t *testing.T) (*Ledger, *mapSource) {
	src := &mapSource{accounts: map[solana.PublicKey]*Account{}, asked: map[solana.PublicKey]int{}}
	l := openTest(t, Config{})
	l.SetAccountSource(src)
	return l, src
}

// TestForkCopyOnRead: a read copies a remote account once, at every
// commitment; a miss is remembered; local changes stay local.
func TestForkCopyOnRead(t *testing.T) {
	l, src := newForked(t)
	ctx := ctxT(t)
	remote := pubkeyOf(newKey(t))
	absent := pubkeyOf(newKey(t))
	src.accounts[remote] = &Account{Lamports: 5_000_000, Owner: spl.TokenProgramID, Data: []byte{1, 2, 3}}
	for _, c := range []Commitment{Finalized, Confirmed, Processed} {
		a, _ := l.Account(remote, c)
		if a == nil || a.Lamports != 5_000_000 || a.Owner != spl.TokenProgramID || len(a.Data) != 3 {
			t.Fatalf("%s read of the forked account: %+v", c, a)
		}
		if a, _ := l.Account(absent, c); a != nil {
			t.Fatalf("absent account read as %+v", a)
		}
	}
	if src.count(remote) != 1 || src.count(absent) != 1 {
		t.Fatalf("asked %d and %d times, want once each", src.count(remote), src.count(absent))
	}
	// It is indexed like a local account (a token account scan sees a
	// copied mint's accounts only once they are copied too).
	found, _, err := l.ProgramAccounts(spl.TokenProgramID, Processed, ProgramQuery{})
	if err != nil {
		t.Fatal(err)
	}
	indexed := false
	for _, ka := range found {
		indexed = indexed || ka.Key == remote
	}
	if !indexed {
		t.Fatal("the copied account is not indexed by owner")
	}
	// Local changes win: deleted locally, it is not fetched again.
	if _, err := l.Apply(ctx, func(w AccountWriter) error { w.Set(remote, nil); return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := l.AdvanceSlot(ctx); err != nil {
		t.Fatal(err)
	}
	if a, _ := l.Account(remote, Processed); a != nil || src.count(remote) != 1 {
		t.Fatalf("deleted account read %+v after %d fetches", a, src.count(remote))
	}
	// Persisted with the slot: a block write lists it.
	if a, _ := l.Accounts([]solana.PublicKey{absent, remote}, Confirmed); a[0] != nil || a[1] != nil {
		t.Fatalf("accounts %+v", a)
	}
}

// TestForkFetchFailure: a failed fetch leaves the account missing and is
// retried by the next read.
func TestForkFetchFailure(t *testing.T) {
	l, src := newForked(t)
	key := pubkeyOf(newKey(t))
	src.accounts[key] = &Account{Lamports: 1_000_000, Owner: solana.SystemProgramID}
	src.fail = errors.New("connection refused")
	if a, _ := l.Account(key, Processed); a != nil {
		t.Fatalf("read during an outage %+v", a)
	}
	if err := l.Prefetch(ctxT(t), key); err == nil || err.Error() != "fetch accounts from the forked cluster test-remote: connection refused" {
		t.Fatalf("prefetch error %v", err)
	}
	src.mu.Lock()
	src.fail = nil
	src.mu.Unlock()
	if a, _ := l.Account(key, Processed); a == nil || a.Lamports != 1_000_000 {
		t.Fatalf("read after the outage %+v", a)
	}
}

// TestForkTransaction: a transaction's remote accounts are copied before
// it runs; one calling an SBF program of the source is refused, naming
// the program.
func TestForkTransaction(t *testing.T) {
	l, src := newForked(t)
	payerKey := newKey(t)
	payer := pubkeyOf(payerKey)
	src.accounts[payer] = &Account{Lamports: 2_000_000_000, Owner: solana.SystemProgramID}
	to := pubkeyOf(newKey(t))
	rec := mustProcess(t, l, buildTx(t, l, payerKey, []txwire.Instruction{spl.SystemTransfer(payer, to, 1_000_000)}))
	if rec.Err != nil {
		t.Fatal(rec.Err)
	}
	if b, _ := l.Balance(to, Processed); b != 1_000_000 {
		t.Fatalf("recipient has %d", b)
	}
	prog := pubkeyOf(newKey(t))
	src.accounts[prog] = &Account{Lamports: 1_141_440, Owner: solana.MustPublicKeyFromBase58("BPFLoaderUpgradeab1e11111111111111111111111"), Executable: true, Data: make([]byte, 36)}
	raw := buildTx(t, l, payerKey, []txwire.Instruction{{ProgramID: prog, Accounts: []txwire.AccountMeta{{PublicKey: payer, IsSigner: true, IsWritable: true}}, Data: []byte{1}}})
	_, err := l.Process(ctxT(t), raw)
	var up *UnsupportedProgramError
	if !errors.As(err, &up) || up.Program != prog || up.Source != "test-remote" {
		t.Fatalf("SBF program call: %v", err)
	}
	if _, err := l.Simulate(ctxT(t), raw, SimulateOptions{}); !errors.As(err, &up) {
		t.Fatalf("simulated SBF program call: %v", err)
	}
}

// TestForkDurable: a durable fork keeps what it copied: indexed in the
// store once finalized (the in-memory index then lets it go), and read
// back after a restart without asking the source again.
func TestForkDurable(t *testing.T) {
	dir := t.TempDir()
	cfg := withManual(Config{Name: "fork", DataDir: dir, NoSync: true, FinalityDepth: 1})
	src := &mapSource{accounts: map[solana.PublicKey]*Account{}, asked: map[solana.PublicKey]int{}}
	remote := pubkeyOf(newKey(t))
	src.accounts[remote] = &Account{Lamports: 5_000_000, Owner: spl.TokenProgramID, Data: []byte{1, 2, 3}}
	scan := func(l *Ledger) bool {
		t.Helper()
		found, _, err := l.ProgramAccounts(spl.TokenProgramID, Finalized, ProgramQuery{})
		if err != nil {
			t.Fatal(err)
		}
		for _, ka := range found {
			if ka.Key == remote {
				return true
			}
		}
		return false
	}
	l, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l.SetAccountSource(src)
	ctx := ctxT(t)
	if a, _ := l.Account(remote, Finalized); a == nil || a.Lamports != 5_000_000 {
		t.Fatalf("forked read: %+v", a)
	}
	if _, err := l.AdvanceSlots(ctx, 4); err != nil {
		t.Fatal(err)
	}
	if !scan(l) {
		t.Fatal("the copied account is not in the owner index once finalized")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2 := openTest(t, cfg)
	l2.SetAccountSource(src)
	if a, _ := l2.Account(remote, Finalized); a == nil || a.Lamports != 5_000_000 || len(a.Data) != 3 {
		t.Fatalf("after a restart: %+v", a)
	}
	if src.count(remote) != 1 {
		t.Fatalf("asked the source %d times, want once", src.count(remote))
	}
	if !scan(l2) {
		t.Fatal("the copied account is not in the owner index after a restart")
	}
}
