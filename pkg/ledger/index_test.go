package ledger

import (
	"crypto/ed25519"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// stateAt is every account as of the end of slot cut, read the slow way.
func stateAt(l *Ledger, cut uint64) map[solana.PublicKey]*Account {
	out := map[solana.PublicKey]*Account{}
	keys := map[solana.PublicKey]bool{}
	l.bank.each(func(k solana.PublicKey, _ *Account) { keys[k] = true })
	for _, d := range l.diffs {
		for k := range d.pre.at {
			keys[k] = true
		}
	}
	for k := range keys {
		if a := l.accountAt(k, cut); a != nil {
			out[k] = a
		}
	}
	return out
}

func keysOf(accts []KeyedAccount) []solana.PublicKey {
	out := make([]solana.PublicKey, len(accts))
	for i, a := range accts {
		out[i] = a.Key
	}
	return out
}

func sortedKeys(m map[solana.PublicKey]*Account, keep func(*Account) bool) []solana.PublicKey {
	var out []solana.PublicKey
	for k, a := range m {
		if keep(a) {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, compareKeys)
	return out
}

// checkIndexes compares every index-backed query with a scan of the
// state at each commitment level.
func checkIndexes(t *testing.T, l *Ledger, programs, people []solana.PublicKey) {
	t.Helper()
	for _, c := range []Commitment{Processed, Confirmed, Finalized} {
		l.mu.RLock()
		cut := l.cutoff(c)
		state := stateAt(l, cut)
		l.mu.RUnlock()
		for _, p := range programs {
			got, _, err := l.ProgramAccounts(p, c, ProgramQuery{})
			if err != nil {
				t.Fatal(err)
			}
			want := sortedKeys(state, func(a *Account) bool { return a.Owner == p })
			if !slices.Equal(keysOf(got), want) {
				t.Fatalf("%v: program %s: index %d accounts, scan %d", c, p, len(got), len(want))
			}
		}
		for _, who := range people {
			got, _ := l.TokenAccountsByDelegate(who, TokenFilter{}, c)
			want := sortedKeys(state, func(a *Account) bool {
				tk, ok := tokenKeysOf(a)
				return ok && tk.hasDelegate && tk.delegate == who
			})
			if !slices.Equal(keysOf(got), want) {
				t.Fatalf("%v: delegate %s: index %v, scan %v", c, who, keysOf(got), want)
			}
			got, _ = l.TokenAccountsByOwner(who, TokenFilter{}, c)
			want = sortedKeys(state, func(a *Account) bool {
				tk, ok := tokenKeysOf(a)
				return ok && tk.owner == who
			})
			if !slices.Equal(keysOf(got), want) {
				t.Fatalf("%v: owner %s: index %v, scan %v", c, who, keysOf(got), want)
			}
		}
		var total uint64
		var all []AccountBalance
		for k, a := range state {
			total += a.Lamports
			all = append(all, AccountBalance{Key: k, Lamports: a.Lamports})
		}
		if got, _ := l.Supply(c); got != total {
			t.Fatalf("%v: supply %d, scan %d", c, got, total)
		}
		slices.SortFunc(all, func(a, b AccountBalance) int {
			if balanceGreater(a, b) {
				return -1
			}
			return 1
		})
		if got, _ := l.LargestAccounts(7, c, nil); !slices.Equal(got, all[:7]) {
			t.Fatalf("%v: largest %v, scan %v", c, got, all[:7])
		}
	}
}

// TestIndexesMatchScan runs random token and System operations (account
// creation, transfers, approvals, revocations, delegate transfers,
// closes, owner changes) with random slot boundaries, and checks after
// every step that the owner-program, delegate and token-owner indexes,
// the supply counter and the largest-accounts scan agree with a full scan
// at every commitment level; at the end, once everything is finalized,
// that the indexes hold no stale entries.
func TestIndexesMatchScan(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			l := openTest(t, Config{FinalityDepth: 3})
			ctx := ctxT(t)
			var wallets []ed25519.PrivateKey
			var people []solana.PublicKey
			for i := 0; i < 4; i++ {
				wallets = append(wallets, fundedWallet(t, l, 50_000_000_000))
				people = append(people, pubkeyOf(wallets[i]))
			}
			mint, _, err := l.Faucet().CreateMint(ctx, MintOptions{Decimals: 6})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range people {
				if _, err := l.Faucet().MintTo(ctx, mint, w, 1_000_000); err != nil {
					t.Fatal(err)
				}
			}
			assignee := solana.PublicKey{0x42, 1}
			programs := []solana.PublicKey{spl.SystemProgramID, spl.TokenProgramID, assignee, SysvarOwnerID}
			ata := func(i int) solana.PublicKey { return spl.AssociatedTokenAddress(people[i], mint, spl.TokenProgramID) }
			ops := map[string]int{}
			for step := 0; step < 150; step++ {
				if rng.IntN(4) == 0 {
					if _, err := l.AdvanceSlots(ctx, 1+rng.IntN(3)); err != nil {
						t.Fatal(err)
					}
				}
				a, b := rng.IntN(len(wallets)), rng.IntN(len(wallets))
				var ixs []txwire.Instruction
				var signers []ed25519.PrivateKey
				op := []string{"approve", "revoke", "delegated", "close", "assign", "transfer"}[rng.IntN(6)]
				switch op {
				case "approve":
					ixs = []txwire.Instruction{
						spl.CreateAssociatedTokenAccount(people[a], people[a], mint, spl.TokenProgramID, true),
						spl.TokenApprove(spl.TokenProgramID, ata(a), people[b], people[a], uint64(1+rng.IntN(3))*1000),
					}
				case "revoke":
					ixs = []txwire.Instruction{spl.TokenRevoke(spl.TokenProgramID, ata(a), people[a])}
				case "delegated": // b spends a's allowance: may fail, may empty it
					ixs = []txwire.Instruction{
						spl.CreateAssociatedTokenAccount(people[b], people[b], mint, spl.TokenProgramID, true),
						spl.TokenTransfer(spl.TokenProgramID, ata(a), ata(b), people[b], 1000),
					}
					a = b
				case "close":
					ixs = []txwire.Instruction{
						spl.CreateAssociatedTokenAccount(people[a], people[b], mint, spl.TokenProgramID, true),
						spl.TokenTransfer(spl.TokenProgramID, ata(a), ata(b), people[a], spl.TokenAmountOf(mustAccount(l, ata(a)))),
						spl.TokenCloseAccount(spl.TokenProgramID, ata(a), people[a], people[a]),
					}
				case "assign":
					fresh := newKey(t)
					ixs = []txwire.Instruction{
						spl.SystemCreateAccount(people[a], pubkeyOf(fresh), l.MinimumBalanceForRentExemption(0), 0, spl.SystemProgramID),
						spl.SystemAssign(pubkeyOf(fresh), assignee),
					}
					signers = append(signers, fresh)
				default:
					ixs = []txwire.Instruction{spl.SystemTransfer(people[a], people[b], 1_000_000)}
				}
				rec, err := l.Process(ctx, buildTx(t, l, wallets[a], ixs, signers...))
				if err == nil && rec.Err == nil {
					ops[op]++
				}
				checkIndexes(t, l, programs, people)
			}
			for _, op := range []string{"approve", "revoke", "delegated", "close", "assign", "transfer"} {
				if ops[op] == 0 {
					t.Fatalf("no %s succeeded: %v", op, ops)
				}
			}
			// Once every write is finalized and pruned, nothing stale is left.
			if _, err := l.AdvanceSlots(ctx, 6); err != nil {
				t.Fatal(err)
			}
			l.mu.RLock()
			defer l.mu.RUnlock()
			for name, ix := range map[string]*keyIndex{"program": l.programs, "delegate": l.delegates, "owner": l.owners, "mint": l.mints} {
				for by, set := range ix.m {
					ix.each(by, func(k solana.PublicKey) {
						a := l.bank.get(k)
						tk, ok := tokenKeysOf(a)
						live := map[string]bool{
							"program":  a != nil && a.Owner == by,
							"delegate": ok && tk.hasDelegate && tk.delegate == by,
							"owner":    ok && tk.owner == by,
							"mint":     ok && tk.mint == by,
						}[name]
						if !live {
							t.Errorf("%s index of %s holds stale %s (%d entries)", name, by, k, len(set.list)+len(set.set))
						}
					})
				}
			}
		})
	}
}

func mustAccount(l *Ledger, k solana.PublicKey) []byte {
	a, _ := l.Account(k, Processed)
	if a == nil {
		return nil
	}
	return a.Data
}

// TestProgramAccountsQuery covers the query options: the cap, sorting,
// Keep, and the token-index shortcut giving the same answer as the
// program index.
func TestProgramAccountsQuery(t *testing.T) {
	l := openTest(t, Config{})
	s := setupToken(t, l, 5_000)
	all, _, err := l.ProgramAccounts(spl.TokenProgramID, Processed, ProgramQuery{})
	if err != nil || len(all) != 4 { // the native mint (genesis), the mint and two token accounts
		t.Fatalf("token program accounts %d %v", len(all), err)
	}
	if _, _, err := l.ProgramAccounts(spl.TokenProgramID, Processed, ProgramQuery{Limit: 2}); err == nil {
		t.Fatal("four matches under a limit of two")
	} else if tm, ok := err.(*TooManyAccountsError); !ok || tm.Limit != 2 {
		t.Fatalf("error %v", err)
	}
	if got, _, err := l.ProgramAccounts(spl.TokenProgramID, Processed, ProgramQuery{Limit: 4}); err != nil || len(got) != 4 {
		t.Fatalf("limit 4: %d %v", len(got), err)
	}
	isAccount := func(_ solana.PublicKey, a *Account) bool { _, ok := tokenKeysOf(a); return ok }
	owner := pubkeyOf(s.alice)
	byIndex, _, _ := l.ProgramAccounts(spl.TokenProgramID, Processed, ProgramQuery{Keep: isAccount, TokenOwner: &owner})
	if len(byIndex) != 1 || byIndex[0].Key != s.aliceAta {
		t.Fatalf("by owner index %v", keysOf(byIndex))
	}
	byMint, _, _ := l.ProgramAccounts(spl.TokenProgramID, Processed, ProgramQuery{Keep: isAccount, TokenMint: &s.mint})
	want := []solana.PublicKey{s.aliceAta, s.bobA}
	slices.SortFunc(want, compareKeys)
	if !slices.Equal(keysOf(byMint), want) {
		t.Fatalf("by mint index %v, want %v", keysOf(byMint), want)
	}
	// The owner index is only a source of candidates: an owner index hint
	// for another program finds nothing.
	if got, _, _ := l.ProgramAccounts(spl.Token2022ProgramID, Processed, ProgramQuery{TokenOwner: &owner}); len(got) != 0 {
		t.Fatalf("token-2022 by owner %v", keysOf(got))
	}
	unsorted, _, _ := l.ProgramAccounts(spl.SystemProgramID, Processed, ProgramQuery{Unsorted: true})
	sorted, _, _ := l.ProgramAccounts(spl.SystemProgramID, Processed, ProgramQuery{})
	u := keysOf(unsorted)
	slices.SortFunc(u, compareKeys)
	if !slices.Equal(u, keysOf(sorted)) || !slices.IsSortedFunc(keysOf(sorted), compareKeys) {
		t.Fatal("sorted and unsorted answers differ")
	}
}
