package outcome

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/ferry-sh/ferry/pkg/chainclient"
)

// DefaultHealthInterval is how often WatchHealth asks the nodes.
const DefaultHealthInterval = 500 * time.Millisecond

// HealthStrikes is how many unhealthy answers in a row make WatchHealth
// give up: Agave also answers -32005 while a node catches up, which a
// second look rides out.
const HealthStrikes = 2

// Node is a chain node WatchHealth checks.
type Node struct {
	// Layer names it in the error (base or ephemeral).
	Layer  string
	Client *chainclient.Client
}

// WatchHealth returns a context derived from ctx that is cancelled, with a
// *HaltedError as its cause, when one of nodes answers getHealth with
// "node unhealthy" (-32005) HealthStrikes times in a row. A node that
// cannot be reached is not judged here: the calls that need it report
// that. Call stop to release the watcher.
func WatchHealth(ctx context.Context, interval time.Duration, nodes ...Node) (watched context.Context, stop context.CancelFunc) {
	if interval <= 0 {
		interval = DefaultHealthInterval
	}
	watched, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		strikes := make([]int, len(nodes))
		for {
			for i, n := range nodes {
				if n.Client == nil {
					continue
				}
				var s string
				err := n.Client.Call(watched, "getHealth", nil, &s)
				var re *chainclient.RPCError
				if errors.As(err, &re) && re.Code == -32005 {
					if strikes[i]++; strikes[i] >= HealthStrikes {
						cancel(&HaltedError{Layer: n.Layer, URL: n.Client.URL(), Err: re})
						return
					}
					continue
				}
				strikes[i] = 0
			}
			select {
			case <-done:
				return
			case <-watched.Done():
				return
			case <-t.C:
			}
		}
	}()
	var once sync.Once
	return watched, func() {
		once.Do(func() {
			close(done)
			cancel(context.Canceled)
		})
	}
}
