package ledger

import (
	"crypto/ed25519"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/gagliardetto/solana-go"

	rt "github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// twinWorld is a mint and wallets with token accounts, as genesis
// accounts, so a durable and an in-memory ledger start alike.
type twinWorld struct {
	mintKey ed25519.PrivateKey
	mint    solana.PublicKey
	wallets []ed25519.PrivateKey
	atas    []solana.PublicKey
}

func newTwinWorld(n int) *twinWorld {
	seed := func(s string) ed25519.PrivateKey {
		h := sha256.Sum256([]byte("twin-" + s))
		return ed25519.NewKeyFromSeed(h[:])
	}
	w := &twinWorld{mintKey: seed("mint")}
	w.mint = pubkeyOf(w.mintKey)
	for i := 0; i < n; i++ {
		k := seed(fmt.Sprint(i))
		w.wallets = append(w.wallets, k)
		w.atas = append(w.atas, spl.AssociatedTokenAddress(pubkeyOf(k), w.mint, spl.TokenProgramID))
	}
	return w
}

func (w *twinWorld) genesis() []GenesisAccount {
	rent := rt.DefaultRent
	auth := w.mint
	out := []GenesisAccount{{Key: w.mint, Account: Account{
		Lamports: rent.MinimumBalance(spl.MintSize), Owner: spl.TokenProgramID,
		Data: spl.Mint{MintAuthority: &auth, Supply: uint64(len(w.wallets)) * 1_000_000, Decimals: 6, IsInitialized: true}.Encode(),
	}}}
	for i, k := range w.wallets {
		out = append(out,
			GenesisAccount{Key: pubkeyOf(k), Account: Account{Lamports: 10_000_000_000, Owner: spl.SystemProgramID}},
			GenesisAccount{Key: w.atas[i], Account: Account{
				Lamports: rent.MinimumBalance(spl.TokenAccountSize), Owner: spl.TokenProgramID,
				Data: spl.TokenAccount{Mint: w.mint, Owner: pubkeyOf(k), Amount: 1_000_000, State: spl.StateInitialized}.Encode(),
			}},
		)
	}
	return out
}

// randomTx is a transfer between wallets, a new token account for a fresh
// owner (funded with a transfer), a closed token account, an approval or
// a revocation: transfers change no index, the others add or drop
// entries.
func (w *twinWorld) randomTx(t *testing.T, l *Ledger, rng *rand.Rand, step int) []byte {
	a, b := rng.IntN(len(w.wallets)), rng.IntN(len(w.wallets))
	payer := w.wallets[a]
	p := pubkeyOf(payer)
	var ixs []txwire.Instruction
	switch rng.IntN(8) {
	case 0:
		owner := solana.PublicKey(sha256.Sum256(fmt.Appendf(nil, "owner-%d", step)))
		ata := spl.AssociatedTokenAddress(owner, w.mint, spl.TokenProgramID)
		ixs = []txwire.Instruction{
			spl.CreateAssociatedTokenAccount(p, owner, w.mint, spl.TokenProgramID, true),
			spl.TokenTransferChecked(spl.TokenProgramID, w.atas[a], w.mint, ata, p, 1, 6),
		}
	case 1:
		ixs = []txwire.Instruction{spl.TokenApprove(spl.TokenProgramID, w.atas[a], pubkeyOf(w.wallets[b]), p, uint64(step+1))}
	case 2:
		ixs = []txwire.Instruction{spl.TokenRevoke(spl.TokenProgramID, w.atas[a], p)}
	default:
		ixs = []txwire.Instruction{spl.TokenTransferChecked(spl.TokenProgramID, w.atas[a], w.mint, w.atas[b], p, uint64(step%7+1), 6)}
	}
	return buildTx(t, l, payer, ixs)
}

// TestDurableLedgerMatchesMemory runs the same random transactions on an
// in-memory ledger and on a durable one whose account log has tiny
// segments (so it is cleaned and snapshotted all the time) and whose
// cache holds 16 accounts (so nearly every read goes to disk), restarting
// the durable one now and then. Every account, the token and program
// indexes and the supply must read the same at every commitment.
func TestDurableLedgerMatchesMemory(t *testing.T) {
	ctx := ctxT(t)
	w := newTwinWorld(40)
	dir := t.TempDir()
	faucet, identity := newKey(t), newKey(t)
	durable := Config{Name: "twin", DataDir: dir, NoSync: true, FinalityDepth: 3, Genesis: w.genesis(), Faucet: faucet, Identity: identity,
		AccountCacheSize: 16, accountSegmentBytes: 4 << 10, tableRewriteMin: 50, tableRunChanges: 12}
	mem := openTest(t, Config{Name: "twin", FinalityDepth: 3, Genesis: w.genesis(), Faucet: faucet, Identity: identity})
	disk, err := Open(withManual(durable))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { disk.Close() }()
	rng := rand.New(rand.NewPCG(3, 4))
	step := 0
	for slot := 0; slot < 60; slot++ {
		for i := 0; i < 12; i++ {
			step++
			seed := rng.Uint64()
			for _, l := range []*Ledger{mem, disk} {
				r := rand.New(rand.NewPCG(seed, 0))
				if _, err := l.Process(ctx, w.randomTx(t, l, r, step)); err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
			}
		}
		for _, l := range []*Ledger{mem, disk} {
			if _, err := l.AdvanceSlot(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if slot%15 == 7 {
			if err := disk.Close(); err != nil {
				t.Fatal(err)
			}
			if disk, err = Open(withManual(durable)); err != nil {
				t.Fatal(err)
			}
			// Nothing was loaded: only what the new working slot wrote
			// (the Clock sysvar) is in memory, besides the two sysvars
			// rebuilt every slot and never stored (setSysvar).
			disk.mu.RLock()
			n := len(disk.bank.mem)
			for _, k := range []solana.PublicKey{spl.SysvarSlotHashesID, spl.SysvarRecentBlockhashesID} {
				if _, ok := disk.bank.mem[k]; ok {
					n--
				}
			}
			disk.mu.RUnlock()
			if n > 2 {
				t.Fatalf("%d accounts in memory after a restart", n)
			}
			// The restart finalized everything on disk; the memory twin
			// catches up so both read alike at every commitment.
			if _, err := mem.AdvanceSlots(ctx, 4); err != nil {
				t.Fatal(err)
			}
			if _, err := disk.AdvanceSlot(ctx); err != nil {
				t.Fatal(err)
			}
		}
		compareLedgers(t, mem, disk, w, step)
	}
	// Once everything is finalized, the durable ledger's in-memory
	// indexes, which only cover slots not yet finalized, are empty.
	if _, err := disk.AdvanceSlots(ctx, 5); err != nil {
		t.Fatal(err)
	}
	// The one exception is the program index's entry for the sysvars kept
	// only in memory (setSysvar), which the store never indexes.
	disk.mu.RLock()
	for _, kind := range []indexKind{byProgram, byTokenOwner, byMint, byDelegate} {
		idx := disk.indexOf(kind)
		if kind == byProgram {
			var held []solana.PublicKey
			idx.each(SysvarOwnerID, func(k solana.PublicKey) { held = append(held, k) })
			slices.SortFunc(held, compareKeys)
			want := []solana.PublicKey{spl.SysvarSlotHashesID, spl.SysvarRecentBlockhashesID}
			slices.SortFunc(want, compareKeys)
			if len(idx.m) != 1 || !slices.Equal(held, want) {
				t.Errorf("program index holds %d keys (sysvars %v), want only the sysvar program with %v", len(idx.m), held, want)
			}
			continue
		}
		if n := len(idx.m); n > 0 {
			t.Errorf("%d keys left in the in-memory index %d", n, kind)
		}
	}
	disk.mu.RUnlock()
	entries, _ := readDirNames(dir + "/" + accountLogDir)
	t.Logf("%d transactions; account log files at the end: %v", step, entries)
}

func compareLedgers(t *testing.T, a, b *Ledger, w *twinWorld, step int) {
	t.Helper()
	keys := append([]solana.PublicKey{w.mint}, w.atas...)
	for _, k := range w.wallets {
		keys = append(keys, pubkeyOf(k))
	}
	for s := 1; s <= step; s++ {
		owner := solana.PublicKey(sha256.Sum256(fmt.Appendf(nil, "owner-%d", s)))
		keys = append(keys, owner, spl.AssociatedTokenAddress(owner, w.mint, spl.TokenProgramID))
	}
	for _, c := range []Commitment{Processed, Confirmed, Finalized} {
		x, _ := a.Accounts(keys, c)
		y, _ := b.Accounts(keys, c)
		for i := range keys {
			if (x[i] == nil) != (y[i] == nil) || (x[i] != nil && (x[i].Lamports != y[i].Lamports || string(x[i].Data) != string(y[i].Data))) {
				t.Fatalf("step %d, %s: account %s differs: memory %+v, durable %+v", step, c, keys[i], x[i], y[i])
			}
		}
		sa, _ := a.Supply(c)
		sb, _ := b.Supply(c)
		if sa != sb {
			t.Fatalf("step %d, %s: supply %d vs %d", step, c, sa, sb)
		}
		ma, _ := a.TokenAccountsByMint(w.mint, c)
		mb, _ := b.TokenAccountsByMint(w.mint, c)
		if !slices.Equal(keysOf(ma), keysOf(mb)) {
			t.Fatalf("step %d, %s: mint index: %d vs %d accounts", step, c, len(ma), len(mb))
		}
		for i, k := range w.wallets {
			if i%7 != step%7 {
				continue
			}
			da, _ := a.TokenAccountsByDelegate(pubkeyOf(k), TokenFilter{}, c)
			db, _ := b.TokenAccountsByDelegate(pubkeyOf(k), TokenFilter{}, c)
			oa, _ := a.TokenAccountsByOwner(pubkeyOf(k), TokenFilter{}, c)
			ob, _ := b.TokenAccountsByOwner(pubkeyOf(k), TokenFilter{}, c)
			if !slices.Equal(keysOf(da), keysOf(db)) || !slices.Equal(keysOf(oa), keysOf(ob)) {
				t.Fatalf("step %d, %s: delegate or owner index of wallet %d differs", step, c, i)
			}
		}
		pa, _, err1 := a.ProgramAccounts(spl.TokenProgramID, c, ProgramQuery{})
		pb, _, err2 := b.ProgramAccounts(spl.TokenProgramID, c, ProgramQuery{})
		if err1 != nil || err2 != nil || !slices.Equal(keysOf(pa), keysOf(pb)) {
			t.Fatalf("step %d, %s: program index: %d vs %d (%v %v)", step, c, len(pa), len(pb), err1, err2)
		}
		if c != Processed {
			// History: the same number of transactions per address, each
			// found again by its signature (the signature index) and in the
			// right order (the address chains).
			for i, k := range w.wallets {
				if i%5 != step%5 {
					continue
				}
				ha, err1 := a.SignaturesForAddress(pubkeyOf(k), AddressQuery{}, c)
				hb, err2 := b.SignaturesForAddress(pubkeyOf(k), AddressQuery{}, c)
				if err1 != nil || err2 != nil || len(ha) != len(hb) {
					t.Fatalf("step %d, %s: wallet %d history: %d vs %d transactions (%v %v)", step, c, i, len(ha), len(hb), err1, err2)
				}
				for j, r := range hb {
					got, err := b.Transaction(r.Signature, c)
					if err != nil || got == nil || got.Slot != r.Slot || (j > 0 && !(txLoc{r.Slot, r.Index}).less(txLoc{hb[j-1].Slot, hb[j-1].Index})) {
						t.Fatalf("step %d, %s: transaction %s of wallet %d: %+v, %v", step, c, r.Signature, i, got, err)
					}
				}
			}
		}
		la, _ := a.LargestAccounts(5, c, nil)
		lb, _ := b.LargestAccounts(5, c, nil)
		if !slices.Equal(la, lb) {
			t.Fatalf("step %d, %s: largest accounts differ: %v vs %v", step, c, la, lb)
		}
	}
}

func readDirNames(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out, err
}
