package ledger_test

import (
	"context"
	"encoding/binary"
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
				ctx := context.Background()
				mint := solana.PublicKey{0xee}
				before := liveHeap()
				for lo := 0; lo < n; lo += 100_000 {
					if _, err := l.Apply(ctx, func(w ledger.AccountWriter) error {
						for j := lo; j < lo+100_000; j++ {
							var k solana.PublicKey
							binary.LittleEndian.PutUint64(k[:], uint64(j)+1)
							k[31] = 0x5a
							a := &ledger.Account{Lamports: rt.DefaultRent.MinimumBalance(0), Owner: spl.SystemProgramID}
							if kind == "token" {
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
					// Finalize (depth 0) and let the next freeze drop the undo
					// history and the slot's write list.
					if _, err := l.AdvanceSlots(ctx, 2); err != nil {
						b.Fatal(err)
					}
				}
				after := liveHeap()
				b.ReportMetric(float64(after-before)/n, "B/account")
				b.ReportMetric(float64(after-before)/(1<<20), "MiB/million")
				l.Close()
			}
		})
	}
}
