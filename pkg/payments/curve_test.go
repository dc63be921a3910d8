package payments

import (
	"testing"

	"github.com/ferry-sh/ferry/pkg/espl"
)

func TestOnCurveCache(t *testing.T) {
	c := &curveCache{limit: 2}
	pda, _ := espl.FindRentPDA()
	keys := []struct {
		k    [32]byte
		want bool
	}{{alice, true}, {bob, true}, {pda, false}, {validator, true}}
	for round := 0; round < 3; round++ {
		for _, k := range keys {
			if got := c.check(k.k); got != k.want {
				t.Fatalf("round %d: %v = %v", round, k.k, got)
			}
		}
	}
	if len(c.cur) > 2 || len(c.old) > 2 {
		t.Fatalf("unbounded: %d + %d", len(c.cur), len(c.old))
	}
	if isOnCurve(pda) || !isOnCurve(alice) {
		t.Fatal("package cache")
	}
}
