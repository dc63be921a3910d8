package ledger

import (
	"crypto/ed25519"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// propWorld is the state a property run plays with.
type propWorld struct {
	l       *Ledger
	wallets []ed25519.PrivateKey
	mints   []propMint
}

type propMint struct {
	key     solana.PublicKey
	program solana.PublicKey
}

func (w *propWorld) ata(owner int, m propMint) solana.PublicKey {
	return spl.AssociatedTokenAddress(pubkeyOf(w.wallets[owner]), m.key, m.program)
}

// totals sums every lamport in the bank and every token balance per mint.
func (w *propWorld) totals(t *testing.T) (lamports uint64, balances map[solana.PublicKey]uint64) {
	t.Helper()
	balances = map[solana.PublicKey]uint64{}
	w.l.mu.RLock()
	defer w.l.mu.RUnlock()
	w.l.bank.each(func(k solana.PublicKey, a *Account) {
		var c uint64
		lamports, c = bits.Add64(lamports, a.Lamports, 0)
		if c != 0 {
			t.Fatal("lamport total overflows")
		}
		if min := w.l.cfg.Rent.MinimumBalance(len(a.Data)); a.Lamports < min {
			t.Fatalf("account %s holds %d lamports, below its rent-exempt minimum %d", k, a.Lamports, min)
		}
		if tk, ok := tokenKeysOf(a); ok {
			amount := spl.TokenAmountOf(a.Data)
			sum, c := bits.Add64(balances[tk.mint], amount, 0)
			if c != 0 {
				t.Fatal("token total overflows")
			}
			balances[tk.mint] = sum
		}
	})
	return lamports, balances
}

func (w *propWorld) supply(t *testing.T, m propMint) uint64 {
	t.Helper()
	a, _ := w.l.Account(m.key, Processed)
	mint, err := spl.DecodeMint(a.Data)
	if err != nil {
		t.Fatal(err)
	}
	return mint.Supply
}

// randomOp builds a random transaction and says how it should move each
// mint's supply if it succeeds.
func (w *propWorld) randomOp(t *testing.T, rng *rand.Rand) (string, []byte, map[solana.PublicKey]int64) {
	a, b := rng.IntN(len(w.wallets)), rng.IntN(len(w.wallets))
	m := w.mints[rng.IntN(len(w.mints))]
	owner := w.wallets[a]
	amount := uint64(rng.IntN(3000))
	if rng.IntN(10) == 0 {
		amount = uint64(rng.Int64()) // huge: must fail, never wrap
	}
	faucet := w.l.FaucetKey()
	switch op := rng.IntN(7); op {
	case 0:
		return "mint", buildTx(t, w.l, faucet, []txwire.Instruction{
			spl.CreateAssociatedTokenAccount(pubkeyOf(faucet), pubkeyOf(owner), m.key, m.program, true),
			spl.TokenMintTo(m.program, m.key, w.ata(a, m), pubkeyOf(faucet), amount),
		}), map[solana.PublicKey]int64{m.key: int64(amount)}
	case 1:
		return "burn", buildTx(t, w.l, owner, []txwire.Instruction{
			spl.TokenBurn(m.program, w.ata(a, m), m.key, pubkeyOf(owner), amount),
		}), map[solana.PublicKey]int64{m.key: -int64(amount)}
	case 2:
		// Empty the account into b's, then close it: rent goes back to the
		// owner, the balance must have moved first.
		bal := uint64(0)
		if acct, _ := w.l.Account(w.ata(a, m), Processed); acct != nil {
			bal = spl.TokenAmountOf(acct.Data)
		}
		ixs := []txwire.Instruction{
			spl.CreateAssociatedTokenAccount(pubkeyOf(owner), pubkeyOf(w.wallets[b]), m.key, m.program, true),
		}
		if a != b {
			ixs = append(ixs, spl.TokenTransferChecked(m.program, w.ata(a, m), m.key, w.ata(b, m), pubkeyOf(owner), bal, 6))
		}
		ixs = append(ixs, spl.TokenCloseAccount(m.program, w.ata(a, m), pubkeyOf(owner), pubkeyOf(owner)))
		return "close", buildTx(t, w.l, owner, ixs), nil
	case 3:
		return "lamports", buildTx(t, w.l, owner, []txwire.Instruction{
			spl.SystemTransfer(pubkeyOf(owner), pubkeyOf(w.wallets[b]), amount*1000),
		}), nil
	default:
		return "transfer", buildTx(t, w.l, owner, []txwire.Instruction{
			spl.CreateAssociatedTokenAccount(pubkeyOf(owner), pubkeyOf(w.wallets[b]), m.key, m.program, true),
			spl.TokenTransferChecked(m.program, w.ata(a, m), m.key, w.ata(b, m), pubkeyOf(owner), amount, 6),
		}), nil
	}
}

// TestPropertyInvariants runs random sequences of mints, burns,
// transfers, closes and lamport transfers and checks after every
// transaction that lamports are conserved except for fees, that each
// mint's supply moves only by successful mints and burns and always equals
// the sum of its balances, that no account sits below its rent-exempt
// minimum, and that the committed views agree too.
func TestPropertyInvariants(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 42))
			l := openTest(t, Config{FinalityDepth: 3})
			w := &propWorld{l: l}
			for i := 0; i < 5; i++ {
				w.wallets = append(w.wallets, fundedWallet(t, l, 50_000_000_000))
			}
			for _, prog := range []solana.PublicKey{spl.TokenProgramID, spl.Token2022ProgramID} {
				key, _, err := l.Faucet().CreateMint(ctxT(t), MintOptions{Decimals: 6, Token2022: prog == spl.Token2022ProgramID})
				if err != nil {
					t.Fatal(err)
				}
				w.mints = append(w.mints, propMint{key: key, program: prog})
			}
			landed, failed := 0, 0
			succeeded := map[string]int{}
			for step := 0; step < 300; step++ {
				if rng.IntN(15) == 0 {
					if _, err := l.AdvanceSlot(ctxT(t)); err != nil {
						t.Fatal(err)
					}
				}
				lamBefore, _ := w.totals(t)
				supplies := map[solana.PublicKey]uint64{}
				for _, m := range w.mints {
					supplies[m.key] = w.supply(t, m)
				}
				name, raw, delta := w.randomOp(t, rng)
				rec, err := l.Process(ctxT(t), raw)
				lamAfter, balances := w.totals(t)
				var fee uint64
				if err == nil {
					fee = rec.Meta.Fee
					landed++
					if rec.Err != nil {
						failed++
					} else {
						succeeded[name]++
					}
				}
				if lamBefore-lamAfter != fee {
					t.Fatalf("step %d %s: lamports %d -> %d, fee %d (err %v)", step, name, lamBefore, lamAfter, fee, err)
				}
				for _, m := range w.mints {
					want := supplies[m.key]
					if err == nil && rec.Err == nil {
						want = uint64(int64(want) + delta[m.key])
					}
					if got := w.supply(t, m); got != want || balances[m.key] != got {
						t.Fatalf("step %d %s: supply %d (want %d), balances %d; err %v %v", step, name, got, want, balances[m.key], err, rec)
					}
				}
			}
			if _, err := l.AdvanceSlots(ctxT(t), 4); err != nil {
				t.Fatal(err)
			}
			for _, m := range w.mints {
				checkSupply(t, l, m.key)
			}
			if landed < 250 || failed == 0 || failed == landed {
				t.Fatalf("unbalanced run: %d landed, %d failed", landed, failed)
			}
			for _, op := range []string{"mint", "burn", "close", "lamports", "transfer"} {
				if succeeded[op] == 0 {
					t.Fatalf("no %s succeeded in this run: %v", op, succeeded)
				}
			}
		})
	}
}
