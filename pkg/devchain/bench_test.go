package devchain_test

import (
	"context"
	"testing"

	"github.com/ferry-sh/ferry/pkg/devchain"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/rpcserver"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// benchNode is a ledger with its cheatcodes, without the JSON-RPC layer.
func benchNode(b *testing.B) (*ledger.Ledger, *devchain.Node) {
	b.Helper()
	l, err := ledger.Open(ledger.Config{Name: "bench", ManualSlots: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	dev, err := devchain.New(devchain.Config{Ledger: l, Encode: rpcserver.New(l, rpcserver.Options{}).AccountEncoder()})
	if err != nil {
		b.Fatal(err)
	}
	return l, dev
}

// BenchmarkSetTokenAccount: one balance write (ATA and mint supply) per
// op, each a ledger Apply.
func BenchmarkSetTokenAccount(b *testing.B) {
	l, dev := benchNode(b)
	mint, _, err := l.Faucet().CreateMint(context.Background(), ledger.MintOptions{Decimals: 6})
	if err != nil {
		b.Fatal(err)
	}
	owner, _ := newKey()
	req := devchain.SetTokenAccountRequest{Owner: owner.String(), Mint: mint.String()}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		v := uint64(i)
		req.Amount = &v
		if _, err := dev.SetTokenAccount(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkProfileTransaction: a two-instruction transaction profiled per
// instruction (three simulations in one pause of the slot loop).
func BenchmarkProfileTransaction(b *testing.B) {
	l, dev := benchNode(b)
	payer, _ := newKey()
	if _, err := l.Faucet().Airdrop(context.Background(), payer, 1_000_000_000); err != nil {
		b.Fatal(err)
	}
	a, _ := newKey()
	c, _ := newKey()
	bh, _ := l.LatestBlockhash(ledger.Processed)
	msg, err := txwire.Compile(payer, []txwire.Instruction{spl.SystemTransfer(payer, a, 1_000_000), spl.SystemTransfer(payer, c, 1_000_000)}, bh.Blockhash)
	if err != nil {
		b.Fatal(err)
	}
	tx := txwire.NewUnsigned(msg).Base64()
	req := devchain.ProfileRequest{Transaction: tx}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := dev.ProfileTransaction(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}
