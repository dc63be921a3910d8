package token_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/programs/token"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// modelAccount is the reference model's view of one token account.
type modelAccount struct {
	exists bool
	owner  solana.PublicKey
	amount uint64
}

// TestRandomOperations runs random sequences of Transfer(Checked), MintTo,
// Burn, CloseAccount and re-creation on a handful of accounts, with random
// (often wrong or unsigned) authorities and edge-case amounts, against a
// reference model. After every transaction: the outcome matches the model,
// the mint's supply equals the sum of the balances, and no lamports were
// created or destroyed.
func TestRandomOperations(t *testing.T) {
	seeds := 40
	if testing.Short() {
		seeds = 8
	}
	for name, prog := range map[string]*token.Program{"token": token.Token, "token2022": token.Token2022} {
		for seed := range seeds {
			t.Run(fmt.Sprintf("%s/seed-%d", name, seed), func(t *testing.T) {
				randomOperations(t, prog, uint64(seed))
			})
		}
	}
}

func randomOperations(t *testing.T, prog *token.Program, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x7e57))
	f := newFixture(t, prog)
	wallets := []solana.PublicKey{alice, bob, carol, stranger}
	keys := []solana.PublicKey{f.src, f.dst, key("acct-2"), key("acct-3")}
	model := map[solana.PublicKey]*modelAccount{
		f.src:   {exists: true, owner: alice, amount: supply},
		f.dst:   {exists: true, owner: bob},
		keys[2]: {},
		keys[3]: {},
	}
	modelSupply := uint64(supply)
	lamports := f.h.TotalLamports()

	pick := func(s []solana.PublicKey) solana.PublicKey { return s[rng.IntN(len(s))] }
	amountFor := func(bal uint64) uint64 {
		switch rng.IntN(10) {
		case 0:
			return 0
		case 1:
			return bal
		case 2:
			return bal + 1
		case 3:
			return math.MaxUint64
		default:
			if bal == math.MaxUint64 {
				return rng.Uint64()
			}
			return rng.Uint64N(bal + 1)
		}
	}
	// authority returns an authority key (usually the right one) and
	// whether it signs (usually).
	authority := func(right solana.PublicKey) (solana.PublicKey, bool) {
		a := right
		if rng.IntN(5) == 0 {
			a = pick(wallets)
		}
		return a, rng.IntN(10) != 0
	}
	sign := func(in txwire.Instruction, auth solana.PublicKey, signed bool) txwire.Instruction {
		if !signed {
			return unsigned(in, auth)
		}
		return in
	}

	const steps = 100
	succeeded := 0
	for step := range steps {
		var ixs []txwire.Instruction
		var wantOK bool
		var apply func()
		switch op := rng.IntN(6); op {
		case 0, 1: // Transfer / TransferChecked
			s, d := pick(keys), pick(keys)
			ms, md := model[s], model[d]
			auth, signed := authority(ms.owner)
			amt := amountFor(ms.amount)
			in := spl.TokenTransfer(f.prog, s, d, auth, amt)
			if op == 1 {
				in = spl.TokenTransferChecked(f.prog, s, f.mint, d, auth, amt, decimals)
			}
			ixs = []txwire.Instruction{sign(in, auth, signed)}
			wantOK = ms.exists && md.exists && amt <= ms.amount && auth == ms.owner && signed
			apply = func() {
				if s != d {
					ms.amount -= amt
					md.amount += amt
				}
			}
		case 2: // MintTo
			d := pick(keys)
			md := model[d]
			auth, signed := authority(mintAuth)
			amt := amountFor(1000)
			ixs = []txwire.Instruction{sign(spl.TokenMintTo(f.prog, f.mint, d, auth, amt), auth, signed)}
			wantOK = md.exists && auth == mintAuth && signed && modelSupply+amt >= modelSupply
			apply = func() { md.amount += amt; modelSupply += amt }
		case 3: // Burn
			s := pick(keys)
			ms := model[s]
			auth, signed := authority(ms.owner)
			amt := amountFor(ms.amount)
			ixs = []txwire.Instruction{sign(spl.TokenBurn(f.prog, s, f.mint, auth, amt), auth, signed)}
			wantOK = ms.exists && amt <= ms.amount && auth == ms.owner && signed
			apply = func() { ms.amount -= amt; modelSupply -= amt }
		case 4: // CloseAccount, to a wallet or another token account
			s := pick(keys)
			ms := model[s]
			dest := pick(append(wallets[:3:3], keys...))
			auth, signed := authority(ms.owner)
			ixs = []txwire.Instruction{sign(spl.TokenCloseAccount(f.prog, s, dest, auth), auth, signed)}
			wantOK = ms.exists && ms.amount == 0 && auth == ms.owner && signed && s != dest
			apply = func() { *ms = modelAccount{} }
		case 5: // re-create an account for a random owner
			s := pick(keys)
			ms := model[s]
			owner := pick(wallets)
			ixs = []txwire.Instruction{
				spl.SystemCreateAccount(payer, s, rentToken, spl.TokenAccountSize, f.prog),
				spl.TokenInitializeAccount3(f.prog, s, f.mint, owner),
			}
			// Closing into a key that held no account funds it, and a funded
			// key cannot be created, exactly as on chain.
			wantOK = !ms.exists && f.h.Lamports(s) == 0
			apply = func() { *ms = modelAccount{exists: true, owner: owner} }
		}

		res := f.h.Run(payer, ixs...)
		if (res.Err == nil) != wantOK {
			t.Fatalf("step %d: want ok=%v, got %s", step, wantOK, res)
		}
		if wantOK {
			apply()
			succeeded++
		}

		// The ledger matches the model, and supply is the sum of balances.
		var sum uint64
		for _, k := range keys {
			m := model[k]
			a := f.h.Account(k)
			if !m.exists {
				if a != nil && a.Owner == f.prog && len(a.Data) > 108 && a.Data[108] != 0 {
					t.Fatalf("step %d: closed account %s still initialized", step, k)
				}
				continue
			}
			ta := f.h.TokenAccount(k)
			if ta.Owner != m.owner || ta.Amount != m.amount || ta.Mint != f.mint {
				t.Fatalf("step %d: account %s = %+v, model %+v", step, k, ta, *m)
			}
			sum += ta.Amount
		}
		if s := f.h.Mint(f.mint).Supply; s != sum || s != modelSupply {
			t.Fatalf("step %d: supply %d, sum of balances %d, model %d", step, s, sum, modelSupply)
		}
		if got := f.h.TotalLamports(); got != lamports {
			t.Fatalf("step %d: lamports %d → %d", step, lamports, got)
		}
	}
	// Guard against a vacuous run where (almost) everything fails.
	if succeeded < steps/6 {
		t.Fatalf("only %d of %d transactions succeeded", succeeded, steps)
	}
}
