package ledger_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"runtime"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger"
	rt "github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
)

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkMemoryPerMillionAccounts reports the live heap one million
// accounts take in the bank: plain System accounts (no data) and SPL
// token accounts (165 bytes, also in the owner and mint indexes), after
// their slots are finalized so no undo history is retained.
//
//	go test -run '^$' -bench MemoryPerMillionAccounts -benchtime 1x ./pkg/ledger/
func BenchmarkMemoryPerMillionAccounts(b *testing.B) {
	const n = 1_000_000
	for _, kind := range []string{"system", "token"} {
		b.Run(kind, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				l, err := ledger.Open(ledger.Config{Name: "mem", ManualSlots: true, FinalityDepth: -1})
				if err != nil {
					b.Fatal(err)
				}
				before := liveHeap()
				populate(b, l, n, kind == "token", 0x5a)
				after := liveHeap()
				b.ReportMetric(float64(after-before)/n, "B/account")
				b.ReportMetric(float64(after-before)/(1<<20), "MiB/million")
				l.Close()
			}
		})
	}
}

// populate adds n accounts through Apply and finalizes them: System
// wallets, or token accounts of one mint with distinct owners.
func populate(b *testing.B, l *ledger.Ledger, n int, token bool, tag byte) {
	b.Helper()
	ctx := context.Background()
	mint := solana.PublicKey{0xee}
	for lo := 0; lo < n; lo += 100_000 {
		if _, err := l.Apply(ctx, func(w ledger.AccountWriter) error {
			for j := lo; j < min(lo+100_000, n); j++ {
				var k solana.PublicKey
				binary.LittleEndian.PutUint64(k[:], uint64(j)+1)
				k[31] = tag
				a := &ledger.Account{Lamports: rt.DefaultRent.MinimumBalance(0) + uint64(j), Owner: spl.SystemProgramID}
				if token {
					owner := k
					owner[30] = 1
					a = &ledger.Account{Lamports: rt.DefaultRent.MinimumBalance(spl.TokenAccountSize), Owner: spl.TokenProgramID,
						Data: spl.TokenAccount{Mint: mint, Owner: owner, Amount: uint64(j), State: spl.StateInitialized}.Encode()}
				}
				w.Set(k, a)
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		if _, err := l.AdvanceSlots(ctx, 2); err != nil {
			b.Fatal(err)
		}
	}
}

// queryLedger is a bank with unrelated accounts (half System wallets,
// half token accounts of one mint) plus a program owning 100 accounts and
// a wallet with one token account.
func queryLedger(b *testing.B, unrelated int) (l *ledger.Ledger, program, wallet solana.PublicKey) {
	l, err := ledger.Open(ledger.Config{Name: "query", ManualSlots: true, FinalityDepth: -1})
	if err != nil {
		b.Fatal(err)
	}
	populate(b, l, unrelated/2, false, 0x5a)
	populate(b, l, unrelated/2, true, 0x5b)
	program, wallet = solana.PublicKey{0x77, 1}, solana.PublicKey{0x33}
	if _, err := l.Apply(context.Background(), func(w ledger.AccountWriter) error {
		for j := 0; j < 100; j++ {
			w.Set(solana.PublicKey{0x77, 2, byte(j)}, &ledger.Account{Lamports: 1_000_000, Owner: program, Data: make([]byte, 8)})
		}
		w.Set(solana.PublicKey{0x33, 1}, &ledger.Account{Lamports: rt.DefaultRent.MinimumBalance(spl.TokenAccountSize), Owner: spl.TokenProgramID,
			Data: spl.TokenAccount{Mint: solana.PublicKey{0xee}, Owner: wallet, Amount: 7, State: spl.StateInitialized}.Encode()})
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	if _, err := l.AdvanceSlots(context.Background(), 2); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	return l, program, wallet
}

// BenchmarkAccountQueries shows the cost of the index-backed queries does
// not grow with the accounts they do not select: a program owning 100
// accounts (getProgramAccounts) and a wallet's token account
// (getProgramAccounts for the token program with an owner memcmp, through
// the owner index), in a bank with 10 thousand or 1 million unrelated
// accounts. getSupply's running total is flat too. system-scan is the
// cost the index cannot remove: a System-program query reads every System
// account (run it with a small -benchtime, e.g. AccountQueries/.*/system
// with 20x).
//
//	go test -run '^$' -bench 'AccountQueries/.*/(program|token-owner|supply)' -benchtime 20000x ./pkg/ledger/
//	go test -run '^$' -bench 'AccountQueries/.*/system' -benchtime 20x ./pkg/ledger/
func BenchmarkAccountQueries(b *testing.B) {
	for _, unrelated := range []int{10_000, 1_000_000} {
		b.Run(fmt.Sprintf("unrelated=%d", unrelated), func(b *testing.B) {
			l, program, wallet := queryLedger(b, unrelated)
			defer l.Close()
			b.Run("program", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if got, _, err := l.ProgramAccounts(program, ledger.Finalized, ledger.ProgramQuery{}); err != nil || len(got) != 100 {
						b.Fatal(len(got), err)
					}
				}
			})
			b.Run("token-owner", func(b *testing.B) {
				keep := func(_ solana.PublicKey, a *ledger.Account) bool {
					return len(a.Data) == spl.TokenAccountSize && solana.PublicKeyFromBytes(a.Data[32:64]) == wallet
				}
				for i := 0; i < b.N; i++ {
					got, _, err := l.ProgramAccounts(spl.TokenProgramID, ledger.Finalized, ledger.ProgramQuery{Keep: keep, TokenOwner: &wallet})
					if err != nil || len(got) != 1 {
						b.Fatal(len(got), err)
					}
				}
			})
			// The worst case the owner index cannot help: a filter over the
			// System program, which owns half the bank here, matching nothing.
			b.Run("system-scan", func(b *testing.B) {
				none := func(_ solana.PublicKey, a *ledger.Account) bool { return len(a.Data) == 1 }
				for i := 0; i < b.N; i++ {
					if got, _, err := l.ProgramAccounts(spl.SystemProgramID, ledger.Finalized, ledger.ProgramQuery{Keep: none}); err != nil || len(got) != 0 {
						b.Fatal(len(got), err)
					}
				}
			})
			b.Run("supply", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					l.Supply(ledger.Finalized)
				}
			})
		})
	}
}

// BenchmarkLargestAccounts is getLargestAccounts' scan of every account,
// which the RPC caches (Options.LargestAccountsCacheTTL).
//
//	go test -run '^$' -bench LargestAccounts -benchtime 20x ./pkg/ledger/
func BenchmarkLargestAccounts(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		b.Run(fmt.Sprintf("accounts=%d", n), func(b *testing.B) {
			l, _, _ := queryLedger(b, n)
			defer l.Close()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if got, _ := l.LargestAccounts(20, ledger.Finalized, nil); len(got) != 20 {
					b.Fatal(len(got))
				}
			}
		})
	}
}
