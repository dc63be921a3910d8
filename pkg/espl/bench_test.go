package espl

import (
	"crypto/rand"
	"testing"

	"github.com/gagliardetto/solana-go"
	"golang.org/x/crypto/nacl/box"

	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// benchKeys returns n distinct owners so that uncached benchmarks do not
// measure a single lucky bump.
func benchKeys(n int) []solana.PublicKey {
	out := make([]solana.PublicKey, n)
	for i := range out {
		out[i] = testKey(byte(i))
		out[i][31] = byte(i >> 8)
	}
	return out
}

func BenchmarkFindEphemeralATA(b *testing.B) {
	ks := benchKeys(256)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		FindEphemeralATA(ks[i%len(ks)], vMint)
	}
}

func BenchmarkSolanaGoFindProgramAddress(b *testing.B) {
	ks := benchKeys(256)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		k := ks[i%len(ks)]
		solana.FindProgramAddress([][]byte{k[:], vMint[:]}, ProgramID)
	}
}

func BenchmarkFindTransferQueue(b *testing.B) {
	ks := benchKeys(256)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		FindTransferQueue(vMint, ks[i%len(ks)])
	}
}

func BenchmarkFindShuttleMetadata(b *testing.B) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		FindShuttleMetadata(vOwner, vMint, uint32(i))
	}
}

func BenchmarkFindStealthPoolLongHandle(b *testing.B) {
	h := []byte("long-handle-over-sixty-four-bytes-takes-the-sha256-domain-separated-seed.block")
	b.ReportAllocs()
	for b.Loop() {
		FindStealthPool(h)
	}
}

func BenchmarkAssociatedTokenAddress(b *testing.B) {
	ks := benchKeys(256)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		spl.AssociatedTokenAddress(ks[i%len(ks)], vMint, spl.TokenProgramID)
	}
}

func BenchmarkCacheHitEphemeralATA(b *testing.B) {
	c := NewCache(0)
	ks := benchKeys(256)
	for _, k := range ks {
		c.FindEphemeralATA(k, vMint)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		c.FindEphemeralATA(ks[i%len(ks)], vMint)
	}
}

func BenchmarkCacheHitParallel(b *testing.B) {
	c := NewCache(0)
	ks := benchKeys(256)
	for _, k := range ks {
		c.FindEphemeralATA(k, vMint)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			c.FindEphemeralATA(ks[i%len(ks)], vMint)
			i++
		}
	})
}

func BenchmarkSeal(b *testing.B) {
	msg := make([]byte, 32)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Seal(ValidatorAsia, msg, rand.Reader); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSealPreparedKey(b *testing.B) {
	k, _ := NewSealKey(ValidatorAsia)
	msg := make([]byte, 32)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := k.Seal(msg, rand.Reader); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSealAnonymousReference is x/crypto's sealed box, for comparison.
func BenchmarkSealAnonymousReference(b *testing.B) {
	x, _ := X25519PublicKey(ValidatorAsia)
	msg := make([]byte, 32)
	b.ReportAllocs()
	for b.Loop() {
		box.SealAnonymous(nil, msg, &x, rand.Reader)
	}
}

func BenchmarkOpen(b *testing.B) {
	v, priv := newValidator(b)
	sealed, _ := Seal(v, make([]byte, 32), nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Open(priv, sealed); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPublicTransferAddresses is the eSPL-independent part of a
// public base→base transfer: both ATAs from a warm cache plus the Token
// Transfer instruction.
func BenchmarkPublicTransferAddresses(b *testing.B) {
	c := NewCache(0)
	to := testKey(9)
	b.ReportAllocs()
	for b.Loop() {
		from, _ := c.FindAssociatedTokenAddress(vOwner, vMint, spl.TokenProgramID)
		dst, _ := c.FindAssociatedTokenAddress(to, vMint, spl.TokenProgramID)
		_ = spl.TokenTransfer(spl.TokenProgramID, from, dst, vOwner, 1_000_000)
	}
}

// BenchmarkPrivateTransferRoute builds the private base→base route of
// §8.4 — ESPL 0, ESPL 4, ESPL 25 — with a warm cache and a fresh random
// shuttle id each time (so the shuttle PDAs are always derived).
func BenchmarkPrivateTransferRoute(b *testing.B) {
	c := NewCache(0)
	dest := testKey(9)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		ixs := make([]txwire.Instruction, 0, 3)
		ixs = append(ixs, InitEphemeralATA(InitEphemeralATAArgs{Owner: vOwner, Mint: vMint, Cache: c}))
		ixs = append(ixs, DelegateEphemeralATA(DelegateEphemeralATAArgs{Owner: vOwner, Mint: vMint, Validator: vValidator, Cache: c}))
		ix, err := PrivateTransfer(PrivateTransferArgs{Owner: vOwner, Mint: vMint, Validator: vValidator,
			Destination: dest, ShuttleID: uint32(i), Amount: 1_000_000, Split: 3, MaxDelayMs: 1000, Cache: c})
		if err != nil {
			b.Fatal(err)
		}
		_ = append(ixs, ix)
	}
}

// BenchmarkPrivateTransferNoCache is ix 25 alone with no cache at all.
func BenchmarkPrivateTransferNoCache(b *testing.B) {
	dest := testKey(9)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := PrivateTransfer(PrivateTransferArgs{Owner: vOwner, Mint: vMint, Validator: vValidator,
			Destination: dest, ShuttleID: uint32(i), Amount: 1_000_000}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDepositShuttle(b *testing.B) {
	c := NewCache(0)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		DepositShuttle(DepositShuttleArgs{Owner: vOwner, Mint: vMint, Validator: vValidator, ShuttleID: uint32(i),
			Amount: 1, Cache: c})
	}
}

func BenchmarkDecodePrivateTransfer(b *testing.B) {
	ix, _ := PrivateTransfer(PrivateTransferArgs{Owner: vOwner, Mint: vMint, Validator: vValidator,
		Destination: testKey(9), ShuttleID: 1, Amount: 1_000_000})
	keys := make([]solana.PublicKey, len(ix.Accounts))
	for i, m := range ix.Accounts {
		keys[i] = m.PublicKey
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(ix.Data, keys); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkQueuePushPop(b *testing.B) {
	q, _ := OpenTransferQueue(NewTransferQueueAccount(TransferQueueHeader{}, DefaultTransferQueueCapacity))
	for i := 0; i < 64; i++ {
		q.Push(QueuedTransfer{ReadyAt: int64(i * 7919 % 1000)})
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		q.Push(QueuedTransfer{ReadyAt: int64(i * 7919 % 1000)})
		q.Pop()
	}
}
