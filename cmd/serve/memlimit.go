package serve

import "math"

// DefaultMemoryLimitMiB is the default of --memory-limit-mib: the soft
// limit, in MiB, of the memory the Go runtime of `ferry serve` uses
// (debug.SetMemoryLimit). Without it the garbage collector lets the heap
// grow to twice what was live after the last collection, so a node
// holding 150 MiB of live state under load (the blocks of the slots not
// yet finalized, the undo history of reads at confirmed and finalized)
// sits at 300 MiB and more. Near the limit the collector runs more often
// instead; it never fails an allocation, and the runtime caps the
// collector's share of the CPU, so a live heap above the limit slows the
// node rather than stopping it. 350 MiB keeps the process under the 400
// MiB the ledger's scale goal allows with room for what the limit does
// not count: mapped table and database pages and the binary's own, 20–33
// MiB under load at a million accounts (peak RSS 358–370 MiB over twelve
// phases; docs/performance.md, fourteenth round). Every MiB above what
// is live is headroom between collections, and at a million accounts
// ~50 MB more is live than at ten thousand.
const DefaultMemoryLimitMiB = 350

// maxMemoryLimitMiB keeps the byte count of --memory-limit-mib inside an
// int64.
const maxMemoryLimitMiB = math.MaxInt64 >> 20

// memoryLimit is the runtime memory limit to set, in bytes: the flag's
// value when it was given, else the default unless GOMEMLIMIT (which the
// runtime read at start) is set. Zero MiB turns the limit off. ok is
// false when the runtime's own setting stays.
func memoryLimit(mib int64, given bool, gomemlimit string) (limit int64, ok bool) {
	if !given && gomemlimit != "" {
		return 0, false
	}
	if mib == 0 {
		return math.MaxInt64, true // the runtime's "no limit"
	}
	return mib << 20, true
}
