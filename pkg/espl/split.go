package espl

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// Fees and lamport costs (§10) and the hosted API's limits (§9.4).
const (
	// ShuttleSetupLamports is the flat fee ix 24 and ix 26 pay to the rent
	// PDA (SPONSORED_SHUTTLE_DELEGATION_SETUP_LAMPORTS).
	ShuttleSetupLamports uint64 = 500_000
	// PrivateTransferQueueLamports is what ix 25 pays on top of the
	// shuttle setup fee.
	PrivateTransferQueueLamports uint64 = 1_539_280
	// PrivateTransferSetupLamports is ix 25's total lamport charge to the
	// rent PDA (PRIVATE_TRANSFER_SETUP_LAMPORTS = 500 000 + 1 539 280).
	PrivateTransferSetupLamports = ShuttleSetupLamports + PrivateTransferQueueLamports
	// RentPDATargetLamports is the rent PDA funding target of
	// initialize-mint and the wSOL top-up (LAMPORTS_PER_SOL / 50).
	RentPDATargetLamports uint64 = 20_000_000
	// PrivacyFeeBasisPoints is ix 25's token fee (0.1 %).
	PrivacyFeeBasisPoints uint64 = 10
	// BasisPoints is the denominator of basis-point fees.
	BasisPoints uint64 = 10_000
	// GaslessRelayFee is the hosted API's gasless relay fee in token units
	// (0.2 USDC/USDT).
	GaslessRelayFee uint64 = 200_000
	// GaslessMinAmount is the smallest gasless transfer (0.5 USDC/USDT).
	GaslessMinAmount uint64 = 500_000
	// EphemeralATARentLamports is the rent of an 80-byte eATA by the legacy
	// formula (128 + 80) × 6960 [inferred]; clusters may charge less.
	EphemeralATARentLamports uint64 = (128 + EphemeralATASize) * 6960
	// APIMaxSplit is the hosted API's largest split (swaps: APIMaxSwapSplit).
	APIMaxSplit     = 15
	APIMaxSwapSplit = 14
	// APIMaxDelayMs is the hosted API's largest maxDelayMs.
	APIMaxDelayMs uint64 = 600_000
	// EncryptionOverhead is the size a sealed box adds to its plaintext.
	EncryptionOverhead = 48
)

// BasisPointFee returns floor(amount × bps / 10 000) without overflow.
func BasisPointFee(amount, bps uint64) uint64 {
	hi, lo := bits.Mul64(amount, bps)
	if hi >= BasisPoints { // quotient would not fit; only for bps > 10 000
		return math.MaxUint64
	}
	q, _ := bits.Div64(hi, lo, BasisPoints)
	return q
}

// PrivacyFee is ix 25's 10-bps fee: floor(amount × 10 / 10 000).
func PrivacyFee(amount uint64) uint64 { return BasisPointFee(amount, PrivacyFeeBasisPoints) }

// PrivateTransferAmounts splits an ix 25 amount the way the processor does
// (§9.3): fee = PrivacyFee(amount); queued is what the recipient receives
// (amount when exactOut, amount − fee otherwise); debit = queued + fee is
// what leaves the sender's ATA. ok is false when debit overflows a u64.
func PrivateTransferAmounts(amount uint64, exactOut bool) (queued, fee, debit uint64, ok bool) {
	fee = PrivacyFee(amount)
	queued = amount
	if !exactOut {
		queued = amount - fee
	}
	debit, carry := bits.Add64(queued, fee, 0)
	return queued, fee, debit, carry == 0
}

// SplitQuantum returns the split quantum 5 × 10^decimals (five whole
// tokens), or ok=false when it does not fit in a u64 (decimals > 18).
func SplitQuantum(decimals uint8) (q uint64, ok bool) {
	if decimals > 18 {
		return 0, false
	}
	q = 5
	for range decimals {
		q *= 10
	}
	return q, true
}

// SplitPiece returns entry i (0 ≤ i < split) of SplitPlan(amount, split,
// decimals) without allocating the plan. It returns 0 for i out of range.
func SplitPiece(amount uint64, split uint32, decimals uint8, i uint32) uint64 {
	if split == 0 || i >= split {
		return 0
	}
	chunk := splitChunk(amount, split, decimals)
	if i < split-1 {
		return chunk
	}
	return amount - uint64(split-1)*chunk
}

// splitChunk is the size of every entry but the last.
func splitChunk(amount uint64, split uint32, decimals uint8) uint64 {
	if q, ok := SplitQuantum(decimals); ok {
		if c := amount / uint64(split) / q * q; c > 0 {
			return c
		}
	}
	return amount / uint64(split)
}

// SplitPlan returns how ix 16 divides amount into split queued entries
// (build_split_plan, §9.4). The reference describes three preferences:
//
//  1. equal chunks that are multiples of the quantum q = 5 × 10^decimals;
//  2. failing that, prefix chunks of that quantum plus a remainder;
//  3. failing that, an even split with the remainder in the last entry.
//
// Ferry's reading, which the reference leaves open: the first split−1
// entries all get c = ⌊amount / split / q⌋ × q (the largest multiple of
// q that still leaves the last entry at least c) and the last entry gets
// amount − (split−1)·c. When amount is split·c exactly, every entry is
// equal (rule 1); otherwise the last entry carries the remainder (rule 2).
// When c would be 0 (amount < split·q) or q overflows a u64, every entry
// gets ⌊amount/split⌋ and the last also gets amount mod split (rule 3).
//
// Invariants: len == split, the sum is amount, and no entry is zero when
// 1 ≤ split ≤ amount (the program rejects other splits). split == 0
// returns nil. SplitPlan allocates split entries: bound split (e.g. by
// the queue's free capacity) before calling it with untrusted input.
func SplitPlan(amount uint64, split uint32, decimals uint8) []uint64 {
	if split == 0 {
		return nil
	}
	chunk := splitChunk(amount, split, decimals)
	out := make([]uint64, split)
	for i := range out[:split-1] {
		out[i] = chunk
	}
	out[split-1] = amount - uint64(split-1)*chunk
	return out
}

// FNV-1a 64-bit parameters.
const (
	fnvOffset64 uint64 = 0xcbf29ce484222325
	fnvPrime64  uint64 = 0x100000001b3
)

// fnv1a64 hashes b with 64-bit FNV-1a.
func fnv1a64(b []byte) uint64 {
	h := fnvOffset64
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime64
	}
	return h
}

// Delay returns the deterministic delay in milliseconds of a queued entry
// (§9.4): minMs when minMs ≥ maxMs, otherwise
//
//	minMs + FNV-1a-64(position ‖ destination) mod (maxMs − minMs + 1)
//
// where the hash runs over position as a little-endian u64 followed by
// the 32 destination-owner bytes, and position is the entry's index
// within its split (0 … split−1). The position goes first so that the
// destination's 32 bytes mix it through the whole hash (with the
// position last, FNV-1a's final rounds leave the pieces' delays
// correlated). payments-api.md §6 gives the delay as
// "an FNV-style hash of (destination, queue position)"; espl-program.md
// §9.4 elides part of the mixing ("FNV-1a-64(destination) ⊕
// queuePosition …"). Hashing the position in, rather than XOR-ing it
// onto the destination's hash, is what spreads the pieces of one transfer
// over [minMs, maxMs]: an XOR only changes the hash's low bits, so every
// piece landed within a few milliseconds of the others. The result always
// lies in [minMs, maxMs]. When the range spans all of u64 (minMs = 0,
// maxMs = 2^64−1) the hash is used unreduced.
func Delay(destination [32]byte, position uint64, minMs, maxMs uint64) uint64 {
	if minMs >= maxMs {
		return minMs
	}
	var buf [40]byte
	binary.LittleEndian.PutUint64(buf[:], position)
	copy(buf[8:], destination[:])
	x := fnv1a64(buf[:])
	span := maxMs - minMs + 1
	if span == 0 {
		return x
	}
	return minMs + x%span
}

// ReadyAt is an entry's ready time in unix milliseconds:
// nowUnixSeconds × 1000 + delayMs (§9.4), saturating at the i64 limits.
func ReadyAt(nowUnixSeconds int64, delayMs uint64) int64 {
	var base int64
	switch {
	case nowUnixSeconds > math.MaxInt64/1000:
		return math.MaxInt64
	case nowUnixSeconds < math.MinInt64/1000:
		base = math.MinInt64
	default:
		base = nowUnixSeconds * 1000
	}
	// MaxInt64 − base is in [0, 2^64−1], so modular uint64 arithmetic is
	// exact here and below.
	if room := uint64(math.MaxInt64) - uint64(base); delayMs > room {
		return math.MaxInt64
	}
	return int64(uint64(base) + delayMs)
}
