package payments

import (
	"context"
	"testing"
)

// BenchmarkBuild measures each route's full build (validation excluded,
// planning, PDA derivation, sealing, compilation, base64) with fixed chain
// inputs: `go test -bench Build -benchmem ./pkg/payments`.
func BenchmarkBuild(b *testing.B) {
	routes := []struct {
		name, vis, from, to, extra string
	}{
		{"public-base-base", Public, Base, Base, ""},
		{"public-eph-eph", Public, Ephemeral, Ephemeral, ""},
		{"private-base-base", Private, Base, Base, `,"split":3,"maxDelayMs":"5000","clientRefId":"9"`},
		{"private-base-eph", Private, Base, Ephemeral, ""},
		{"private-eph-base", Private, Ephemeral, Base, `,"split":3`},
		{"private-eph-eph", Private, Ephemeral, Ephemeral, ""},
	}
	p := &Planner{}
	ch := newTestChain()
	for _, r := range routes {
		req := decodeBody[TransferRequest](&testing.T{}, transferBody(r.vis, r.from, r.to, r.extra))
		b.Run(r.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Transfer(context.Background(), ch, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	dep := decodeBody[DepositRequest](&testing.T{}, `{"owner":"`+alice.String()+`","mint":"`+mint.String()+`","amount":5}`)
	b.Run("deposit", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := p.Deposit(context.Background(), ch, dep); err != nil {
				b.Fatal(err)
			}
		}
	})
	wd := decodeBody[WithdrawRequest](&testing.T{}, `{"owner":"`+alice.String()+`","mint":"`+mint.String()+`","amount":5}`)
	b.Run("withdraw", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := p.Withdraw(context.Background(), ch, wd); err != nil {
				b.Fatal(err)
			}
		}
	})
}
