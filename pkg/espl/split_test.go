package espl

import (
	"hash/fnv"
	"math"
	"math/big"
	mrand "math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/spl"
)

func TestSplitPlanExamples(t *testing.T) {
	const tok = 1_000_000 // 6 decimals: quantum 5 000 000
	cases := []struct {
		amount   uint64
		split    uint32
		decimals uint8
		want     []uint64
	}{
		{15 * tok, 3, 6, []uint64{5 * tok, 5 * tok, 5 * tok}}, // rule 1: equal multiples of 5 tokens
		{100 * tok, 4, 6, []uint64{25 * tok, 25 * tok, 25 * tok, 25 * tok}},
		{23 * tok, 3, 6, []uint64{5 * tok, 5 * tok, 13 * tok}},    // rule 2: quantum prefix + remainder
		{100 * tok, 3, 6, []uint64{30 * tok, 30 * tok, 40 * tok}}, // largest multiple of q per chunk
		{12 * tok, 3, 6, []uint64{4 * tok, 4 * tok, 4 * tok}},     // rule 3: below 3 quanta, even split
		{7, 3, 6, []uint64{2, 2, 3}},                              // rule 3 with remainder last
		{10, 1, 0, []uint64{10}},
		{5, 5, 0, []uint64{1, 1, 1, 1, 1}},
		{2, 3, 0, []uint64{0, 0, 2}}, // split > amount: rejected on chain; invariants still hold
		{math.MaxUint64, 1, 6, []uint64{math.MaxUint64}},
		{1000, 2, 30, []uint64{500, 500}}, // quantum overflows u64: even split
	}
	for _, c := range cases {
		got := SplitPlan(c.amount, c.split, c.decimals)
		if !slices.Equal(got, c.want) {
			t.Errorf("SplitPlan(%d, %d, %d) = %v, want %v", c.amount, c.split, c.decimals, got, c.want)
		}
	}
	if SplitPlan(10, 0, 6) != nil {
		t.Error("split 0 gives a plan")
	}
}

func TestSplitPlanProperties(t *testing.T) {
	r := mrand.New(mrand.NewPCG(3, 4))
	for i := 0; i < 20000; i++ {
		var amount uint64
		switch r.IntN(4) {
		case 0:
			amount = r.Uint64N(100)
		case 1:
			amount = r.Uint64N(1_000_000_000)
		case 2:
			amount = r.Uint64()
		default:
			amount = r.Uint64N(200) * 5_000_000
		}
		split := uint32(1 + r.IntN(40))
		decimals := uint8(r.IntN(22))
		plan := SplitPlan(amount, split, decimals)
		if len(plan) != int(split) {
			t.Fatalf("len %d, want %d", len(plan), split)
		}
		var sum big.Int
		for j, p := range plan {
			sum.Add(&sum, new(big.Int).SetUint64(p))
			if uint64(split) <= amount && p == 0 {
				t.Fatalf("SplitPlan(%d,%d,%d) has a zero piece: %v", amount, split, decimals, plan)
			}
			if got := SplitPiece(amount, split, decimals, uint32(j)); got != p {
				t.Fatalf("SplitPiece(%d) = %d, plan has %d", j, got, p)
			}
			if j < len(plan)-1 && p != plan[0] {
				t.Fatalf("non-last pieces differ: %v", plan)
			}
		}
		if !sum.IsUint64() || sum.Uint64() != amount {
			t.Fatalf("SplitPlan(%d,%d,%d) sums to %s", amount, split, decimals, sum.String())
		}
		if last := plan[len(plan)-1]; last < plan[0] {
			t.Fatalf("last piece smaller than the others: %v", plan)
		}
		if q, ok := SplitQuantum(decimals); ok && split > 1 && amount/uint64(split) >= q && plan[0]%q != 0 {
			t.Fatalf("SplitPlan(%d,%d,%d): chunk %d is not a multiple of %d", amount, split, decimals, plan[0], q)
		}
	}
	if SplitPiece(10, 2, 0, 2) != 0 || SplitPiece(10, 0, 0, 0) != 0 {
		t.Error("SplitPiece out of range")
	}
}

func TestDelay(t *testing.T) {
	dst := [32]byte(testKey(9))
	h := fnv.New64a()
	h.Write(dst[:])
	want := h.Sum64()
	if fnv1a64(dst[:]) != want {
		t.Fatal("FNV-1a-64 differs from hash/fnv")
	}
	h.Reset()
	h.Write([]byte{3, 0, 0, 0, 0, 0, 0, 0}) // position 3, little-endian u64
	h.Write(dst[:])
	withPos := h.Sum64()
	if got := Delay(dst, 3, 1000, 5000); got != 1000+withPos%4001 {
		t.Errorf("Delay = %d, want %d", got, 1000+withPos%4001)
	}
	if Delay(dst, 5, 700, 700) != 700 || Delay(dst, 5, 900, 100) != 900 {
		t.Error("min == max (or min > max) must give min")
	}
	if got := Delay(dst, 3, 0, math.MaxUint64); got != withPos {
		t.Errorf("full range: %d", got)
	}
	r := mrand.New(mrand.NewPCG(5, 6))
	seen := map[uint64]bool{}
	for i := 0; i < 5000; i++ {
		var d [32]byte
		for j := range d {
			d[j] = byte(r.Uint32())
		}
		lo := r.Uint64N(1 << 40)
		hi := lo + r.Uint64N(600_001)
		pos := r.Uint64N(16)
		got := Delay(d, pos, lo, hi)
		if got < lo || got > hi {
			t.Fatalf("Delay %d outside [%d,%d]", got, lo, hi)
		}
		if Delay(d, pos, lo, hi) != got {
			t.Fatal("not deterministic")
		}
		if i < 100 {
			seen[Delay(dst, uint64(i), 0, 600_000)] = true
		}
	}
	if len(seen) < 90 {
		t.Errorf("positions barely change the delay: %d distinct of 100", len(seen))
	}
}

// TestDelaySpreadsPieces: the pieces of one split transfer get delays
// spread over the whole range, not within a few milliseconds of each
// other. For independent uniform delays over [0, 3000] the mean distance
// between two pieces is 1000 ms; XOR-ing the position onto the hash gave
// at most 3.
func TestDelaySpreadsPieces(t *testing.T) {
	r := mrand.New(mrand.NewPCG(7, 8))
	const n = 2000
	var sum uint64
	for i := 0; i < n; i++ {
		var d [32]byte
		for j := range d {
			d[j] = byte(r.Uint32())
		}
		a, b := Delay(d, 0, 0, 3000), Delay(d, 1, 0, 3000)
		sum += max(a, b) - min(a, b)
	}
	if mean := sum / n; mean < 900 || mean > 1100 {
		t.Fatalf("mean distance between two pieces' delays %d ms, want about 1000", mean)
	}
}

func TestReadyAt(t *testing.T) {
	if ReadyAt(1_700_000_000, 2500) != 1_700_000_002_500 {
		t.Error("basic")
	}
	if ReadyAt(math.MaxInt64/1000+1, 0) != math.MaxInt64 || ReadyAt(1, math.MaxUint64) != math.MaxInt64 {
		t.Error("saturation")
	}
	if got := ReadyAt(-10, 5); got != -9995 {
		t.Errorf("negative now: %d", got)
	}
	if got := ReadyAt(math.MinInt64/1000-5, math.MaxUint64); got != math.MaxInt64 {
		t.Errorf("min + max: %d", got)
	}
	if got := ReadyAt(math.MinInt64/1000-5, 0); got != math.MinInt64 {
		t.Errorf("clamped low: %d", got)
	}
}

func TestFees(t *testing.T) {
	if PrivacyFee(1_000_000) != 1000 || PrivacyFee(999) != 0 || PrivacyFee(1000) != 1 {
		t.Error("privacy fee")
	}
	want := new(big.Int).Div(new(big.Int).Mul(new(big.Int).SetUint64(math.MaxUint64), big.NewInt(10)), big.NewInt(10_000))
	if PrivacyFee(math.MaxUint64) != want.Uint64() {
		t.Error("privacy fee of max u64")
	}
	if BasisPointFee(1_000_000, 10_000) != 1_000_000 || BasisPointFee(1, 20_000) != 2 || BasisPointFee(math.MaxUint64, 20_000) != math.MaxUint64 {
		t.Error("basis point fee")
	}
	q, f, d, ok := PrivateTransferAmounts(1_000_000, true)
	if q != 1_000_000 || f != 1000 || d != 1_001_000 || !ok {
		t.Errorf("exactOut: %d %d %d", q, f, d)
	}
	q, f, d, ok = PrivateTransferAmounts(1_000_000, false)
	if q != 999_000 || f != 1000 || d != 1_000_000 || !ok {
		t.Errorf("fee deducted: %d %d %d", q, f, d)
	}
	if _, _, _, ok := PrivateTransferAmounts(math.MaxUint64, true); ok {
		t.Error("overflow not reported")
	}
	if PrivateTransferSetupLamports != 2_039_280 || ShuttleSetupLamports != 500_000 || RentPDATargetLamports != 20_000_000 ||
		EphemeralATARentLamports != 1_447_680 {
		t.Error("lamport constants")
	}
	if DefaultTransferQueueCapacity != 105 {
		t.Error("default capacity")
	}
}

func TestCacheMatchesPure(t *testing.T) {
	c := NewCache(256)
	r := mrand.New(mrand.NewPCG(7, 8))
	rk := func() solana.PublicKey {
		var k solana.PublicKey
		for i := range k {
			k[i] = byte(r.Uint32())
		}
		return k
	}
	for i := 0; i < 200; i++ {
		o, m, v := rk(), rk(), rk()
		n := r.Uint32()
		checks := []struct {
			name       string
			pure, memo func() (solana.PublicKey, uint8)
		}{
			{"eata", func() (solana.PublicKey, uint8) { return FindEphemeralATA(o, m) }, func() (solana.PublicKey, uint8) { return c.FindEphemeralATA(o, m) }},
			{"queue", func() (solana.PublicKey, uint8) { return FindTransferQueue(m, v) }, func() (solana.PublicKey, uint8) { return c.FindTransferQueue(m, v) }},
			{"shuttle", func() (solana.PublicKey, uint8) { return FindShuttleMetadata(o, m, n) }, func() (solana.PublicKey, uint8) { return c.FindShuttleMetadata(o, m, n) }},
			{"receipt", func() (solana.PublicKey, uint8) { return FindGroupReceipt(o, m, n) }, func() (solana.PublicKey, uint8) { return c.FindGroupReceipt(o, m, n) }},
			{"crank", func() (solana.PublicKey, uint8) { return FindHydraCrank(o, n) }, func() (solana.PublicKey, uint8) { return c.FindHydraCrank(o, n) }},
			{"ata", func() (solana.PublicKey, uint8) { return spl.AssociatedTokenAddressBump(o, m, v) }, func() (solana.PublicKey, uint8) { return c.FindAssociatedTokenAddress(o, m, v) }},
			{"buffer", func() (solana.PublicKey, uint8) { return FindDelegateBuffer(o, v) }, func() (solana.PublicKey, uint8) { return c.FindDelegateBuffer(o, v) }},
			{"lamports", func() (solana.PublicKey, uint8) { return FindLamportsPDA(o, m, v) }, func() (solana.PublicKey, uint8) { return c.FindLamportsPDA(o, m, v) }},
			{"stash", func() (solana.PublicKey, uint8) { return FindStash(o, m) }, func() (solana.PublicKey, uint8) { return c.FindStash(o, m) }},
		}
		for _, ch := range checks {
			pa, pb := ch.pure()
			for j := 0; j < 2; j++ {
				ma, mb := ch.memo()
				if pa != ma || pb != mb {
					t.Fatalf("%s: cache %s/%d, pure %s/%d", ch.name, ma, mb, pa, pb)
				}
			}
		}
	}
	s := c.Stats()
	if s.Entries > s.Capacity || s.Capacity != 256 {
		t.Errorf("cache holds %d entries, capacity %d", s.Entries, s.Capacity)
	}
	if s.Hits == 0 || s.Misses == 0 {
		t.Errorf("stats %+v", s)
	}
	// Derivations that differ only in kind do not collide.
	a, _ := c.FindDelegationRecord(vOwner)
	b, _ := c.FindDelegationMetadata(vOwner)
	p, _ := c.FindPermission(vOwner)
	f, _ := c.FindMagicFeeVault(vOwner)
	if a == b || a == p || b == f {
		t.Error("kinds collide")
	}
	var nilCache *Cache
	if k, _ := nilCache.FindRentPDA(); k.String() != "4RvdEGaUyChj3AketeBZoY1EotNtPveMFUXL8DVetrAp" {
		t.Error("nil cache")
	}
	if nilCache.Stats() != (CacheStats{}) {
		t.Error("nil cache stats")
	}
}

func TestCacheBoundedAndHotEntriesSurvive(t *testing.T) {
	c := NewCache(128)
	hot := vOwner
	want, _ := FindEphemeralATA(hot, vMint)
	for i := 0; i < 3000; i++ {
		var k solana.PublicKey
		k[0], k[1], k[2] = byte(i), byte(i>>8), 0x55
		c.FindRentPDA()
		c.FindGlobalVault(k)
		if got, _ := c.FindEphemeralATA(hot, vMint); got != want {
			t.Fatal("hot entry wrong")
		}
		if s := c.Stats(); s.Entries > s.Capacity {
			t.Fatalf("cache grew to %d entries (capacity %d)", s.Entries, s.Capacity)
		}
	}
	s := c.Stats()
	// Hot keys (rent PDA, the hot eATA) are hits on all but the first call.
	if s.Hits < 2*3000-10 {
		t.Errorf("hot keys were evicted: %+v", s)
	}
}

func TestCacheConcurrent(t *testing.T) {
	c := NewCache(64)
	var wg sync.WaitGroup
	keys := make([]solana.PublicKey, 40)
	wants := make([]solana.PublicKey, len(keys))
	for i := range keys {
		keys[i] = testKey(byte(i))
		wants[i], _ = FindEphemeralATA(keys[i], vMint)
	}
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				j := (i*7 + g) % len(keys)
				if got, _ := c.FindEphemeralATA(keys[j], vMint); got != wants[j] {
					t.Errorf("goroutine %d: wrong address", g)
					return
				}
				if i%50 == 0 {
					c.Stats()
					k, err := c.SealKey(ValidatorUS)
					if err != nil {
						t.Error(err)
						return
					}
					if _, err := k.Seal([]byte("concurrent"), nil); err != nil {
						t.Error(err)
					}
				}
			}
		}(g)
	}
	wg.Wait()
}
