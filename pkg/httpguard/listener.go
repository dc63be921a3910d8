package httpguard

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// DefaultMaxConns is the default cap on open connections per listener:
// far above what clients need (web3.js and the CLI keep a few keep-alive
// connections; load tests use tens), low enough that held connections
// (about 10 KiB each with their goroutine and buffers) stay a few MiB.
const DefaultMaxConns = 1024

// refusedResponse is written to a connection refused at the cap, so that
// an HTTP client sees why instead of a reset.
const refusedResponse = "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n" +
	"Content-Type: text/plain; charset=utf-8\r\nContent-Length: 26\r\n\r\n" + refusedBody

const refusedBody = "too many open connections\n"

// refuseWriteTimeout bounds writing refusedResponse.
const refuseWriteTimeout = 100 * time.Millisecond

// LimitListener caps the connections a listener holds open. When a new
// connection arrives at the cap, the connection that has waited longest
// without a request in progress (idle keep-alive, or opened and silent) is
// closed to make room, so idle or stalled clients cannot lock others out;
// only when every connection is busy with a request is the new one
// refused (HTTP 503, then closed). Connections an http.Server hijacks
// (websockets) count until they are closed.
//
// Set the http.Server's ConnState to the listener's ConnState so it knows
// which connections are busy.
type LimitListener struct {
	net.Listener
	max int
	now func() time.Time

	mu      sync.Mutex
	conns   map[*limitedConn]*connEntry
	refused uint64
	evicted uint64
}

type connEntry struct {
	state http.ConnState
	since time.Time // when state was entered
}

// NewLimitListener wraps ln with a cap of max open connections
// (DefaultMaxConns when max <= 0).
func NewLimitListener(ln net.Listener, max int) *LimitListener {
	if max <= 0 {
		max = DefaultMaxConns
	}
	return &LimitListener{Listener: ln, max: max, now: time.Now, conns: map[*limitedConn]*connEntry{}}
}

// Max is the cap.
func (l *LimitListener) Max() int { return l.max }

// Accept waits for a connection and admits it under the cap.
func (l *LimitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		lc := &limitedConn{Conn: c, l: l}
		if victim, ok := l.admit(lc); ok {
			if victim != nil {
				victim.Conn.Close() // its server goroutine sees the error and cleans up
			}
			return lc, nil
		}
		c.SetWriteDeadline(time.Now().Add(refuseWriteTimeout))
		c.Write([]byte(refusedResponse))
		c.Close()
	}
}

// admit registers c, choosing a connection to evict when at the cap; ok is
// false when c must be refused.
func (l *LimitListener) admit(c *limitedConn) (victim *limitedConn, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if len(l.conns) >= l.max {
		var oldest time.Time
		for vc, e := range l.conns {
			if (e.state == http.StateIdle || e.state == http.StateNew) && (victim == nil || e.since.Before(oldest)) {
				victim, oldest = vc, e.since
			}
		}
		if victim == nil {
			l.refused++
			return nil, false
		}
		delete(l.conns, victim)
		l.evicted++
	}
	l.conns[c] = &connEntry{state: http.StateNew, since: now}
	return victim, true
}

// ConnState is the http.Server hook that tells the listener which
// connections are busy.
func (l *LimitListener) ConnState(c net.Conn, st http.ConnState) {
	lc, ok := c.(*limitedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.conns[lc]
	if e == nil {
		return // already closed or evicted
	}
	if st == http.StateClosed {
		delete(l.conns, lc)
		return
	}
	e.state, e.since = st, l.now()
}

// Stats are a LimitListener's counters.
type Stats struct {
	// Open connections, and Busy ones among them (a request in
	// progress, or hijacked).
	Open, Busy int
	// Refused and Evicted count the connections refused at the cap and
	// the idle ones closed to make room, since the start.
	Refused, Evicted uint64
}

// Stats reports the listener's counters.
func (l *LimitListener) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := Stats{Open: len(l.conns), Refused: l.refused, Evicted: l.evicted}
	for _, e := range l.conns {
		if e.state == http.StateActive || e.state == http.StateHijacked {
			st.Busy++
		}
	}
	return st
}

func (l *LimitListener) release(c *limitedConn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
}

// limitedConn releases its slot when closed.
type limitedConn struct {
	net.Conn
	l    *LimitListener
	once sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c) })
	return err
}
