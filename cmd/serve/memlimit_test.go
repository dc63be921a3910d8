package serve

import (
	"math"
	"testing"
)

// TestMemoryLimit: the flag wins when given, GOMEMLIMIT wins over the
// default, and 0 MiB means no limit.
func TestMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		name       string
		mib        int64
		given      bool
		gomemlimit string
		want       int64
		ok         bool
	}{
		{"default", DefaultMemoryLimitMiB, false, "", DefaultMemoryLimitMiB << 20, true},
		{"GOMEMLIMIT set, flag not given", DefaultMemoryLimitMiB, false, "1GiB", 0, false},
		{"flag given over GOMEMLIMIT", 512, true, "1GiB", 512 << 20, true},
		{"flag given", 64, true, "", 64 << 20, true},
		{"off", 0, true, "1GiB", math.MaxInt64, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := memoryLimit(tc.mib, tc.given, tc.gomemlimit)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("memoryLimit(%d, %v, %q) = %d, %v; want %d, %v", tc.mib, tc.given, tc.gomemlimit, got, ok, tc.want, tc.ok)
			}
		})
	}
}
