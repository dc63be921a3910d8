package pubsub

import (
	"context"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/ferry-sh/ferry/pkg/rpcserver"
)

// conn is one websocket client. Its reader goroutine answers requests,
// its writer goroutine drains the queue of outgoing messages, and a
// pinger checks that the client is alive. Nothing that produces messages
// (the notifier, above all) ever waits for the client: messages go to the
// queue, and a full queue disconnects the client.
type conn struct {
	s  *Server
	ws *websocket.Conn

	// caller is the ?token= of the upgrade request ("" when none), and
	// readCtx carries it for the read filter (rpcserver.RequestToken).
	// Both are fixed for the connection's life; the filter verifies the
	// token each time it decides, so one that expires stops working.
	caller  string
	readCtx context.Context

	// subs are the subscriptions this connection holds, by id. Guarded by
	// Server.mu.
	subs map[uint64]*subscription

	mu      sync.Mutex
	queue   [][]byte // messages to write, oldest first
	held    [][]byte // messages produced while a request is answered
	holding bool
	closing bool // no more messages are queued or written

	wake      chan struct{}
	done      chan struct{} // closed when the connection is torn down
	closeOnce sync.Once
}

// newConn registers a connection whose upgrade request carried token
// (its ?token=); nil once the server is closed.
func (s *Server) newConn(ws *websocket.Conn, token string) *conn {
	c := &conn{s: s, ws: ws, subs: map[uint64]*subscription{}, wake: make(chan struct{}, 1), done: make(chan struct{}),
		caller: token, readCtx: rpcserver.WithRequestToken(context.Background(), token)}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return nil
	}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	return c
}

// serve runs the connection until it ends: the client closes it, breaks
// a limit, or the server shuts down.
func (c *conn) serve(ctx context.Context) {
	defer c.s.wg.Done()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); c.writer() }()
	go func() { defer wg.Done(); c.pinger() }()
	c.reader(ctx)
	c.teardown()
	wg.Wait()
}

func (c *conn) reader(ctx context.Context) {
	for {
		_, msg, err := c.ws.Read(ctx)
		if err != nil {
			return
		}
		if !utf8.Valid(msg) {
			// Agave drops a connection that sends a message that is not
			// text.
			c.close(websocket.StatusInvalidFramePayloadData, "message is not valid UTF-8")
			return
		}
		c.answer(msg)
	}
}

// answer runs the requests of one message and queues the response.
// Notifications produced meanwhile (a signature that already reached its
// commitment) are held back until the response is queued, so that a
// client always learns a subscription id before it sees a notification
// for it.
func (c *conn) answer(msg []byte) {
	c.hold()
	reqs, batch := parseMessage(msg)
	var out [][]byte
	for _, r := range reqs {
		if b := c.call(r); b != nil {
			out = append(out, b)
		}
	}
	var resp []byte
	switch {
	case len(out) == 0:
	case batch:
		resp = append(resp, '[')
		for i, b := range out {
			if i > 0 {
				resp = append(resp, ',')
			}
			resp = append(resp, b...)
		}
		resp = append(resp, ']')
	default:
		resp = out[0]
	}
	c.release(resp)
}

// call answers one request: nil when nothing must be sent back.
func (c *conn) call(r request) (resp []byte) {
	if r.err != nil {
		if r.id == nil {
			return nil
		}
		return errorResponse(r.id, r.err)
	}
	m := methods[r.method]
	if m == nil {
		if r.id == nil {
			return nil // e.g. web3.js's keep-alive "ping" notification
		}
		return errorResponse(r.id, rpcErrorf(codeMethodNotFound, "Method not found"))
	}
	defer func() {
		// A bug in one method must not take the node down.
		if p := recover(); p != nil {
			c.s.log.Error("pubsub method panicked", "method", r.method, "panic", p)
			resp = nil
			if r.id != nil {
				resp = errorResponse(r.id, rpcErrorf(codeInternalError, "Internal error"))
			}
		}
	}()
	result, err := m(c, r.params)
	if r.id == nil {
		return nil
	}
	if err != nil {
		return errorResponse(r.id, asRPCError(err))
	}
	return resultResponse(r.id, result)
}

// enqueue queues a message for the client without waiting. A client whose
// queue is full is disconnected.
func (c *conn) enqueue(msg []byte) {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return
	}
	if len(c.queue)+len(c.held) >= c.s.opts.QueueLength {
		c.mu.Unlock()
		c.s.slowDrop.Add(1)
		c.close(websocket.StatusPolicyViolation, fmt.Sprintf("slow consumer: %d messages unsent", c.s.opts.QueueLength))
		return
	}
	if c.holding {
		c.held = append(c.held, msg)
		c.mu.Unlock()
		return
	}
	c.queue = append(c.queue, msg)
	c.mu.Unlock()
	c.signal()
}

func (c *conn) hold() {
	c.mu.Lock()
	c.holding = true
	c.mu.Unlock()
}

// release queues resp (if any) and then the messages held back.
func (c *conn) release(resp []byte) {
	c.mu.Lock()
	c.holding = false
	if !c.closing {
		if resp != nil {
			c.queue = append(c.queue, resp)
		}
		c.queue = append(c.queue, c.held...)
	}
	c.held = nil
	c.mu.Unlock()
	c.signal()
}

func (c *conn) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// next pops the oldest queued message; nil when the queue is empty or
// the connection is closing.
func (c *conn) next() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing || len(c.queue) == 0 {
		return nil
	}
	m := c.queue[0]
	c.queue[0] = nil
	c.queue = c.queue[1:]
	return m
}

func (c *conn) writer() {
	for {
		select {
		case <-c.wake:
		case <-c.done:
			return
		}
		for m := c.next(); m != nil; m = c.next() {
			ctx, cancel := context.WithTimeout(context.Background(), c.s.opts.WriteTimeout)
			err := c.ws.Write(ctx, websocket.MessageText, m)
			cancel()
			if err != nil {
				// A write that timed out has closed the connection; the
				// reader sees it and tears down.
				c.close(websocket.StatusPolicyViolation, "write failed")
				return
			}
		}
	}
}

func (c *conn) pinger() {
	t := time.NewTicker(c.s.opts.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), c.s.opts.PongTimeout)
			err := c.ws.Ping(ctx)
			cancel()
			if err != nil {
				c.close(websocket.StatusPolicyViolation, "no pong within "+c.s.opts.PongTimeout.String())
				return
			}
		}
	}
}

// close starts the close handshake with code and reason and stops
// queueing. It never waits (the handshake runs in its own goroutine), so
// it is safe under Server.mu.
func (c *conn) close(code websocket.StatusCode, reason string) {
	c.mu.Lock()
	c.closing = true
	c.queue, c.held = nil, nil
	c.mu.Unlock()
	c.closeOnce.Do(func() {
		go func() {
			if err := c.ws.Close(code, reason); err != nil {
				c.s.log.Debug("websocket close", "code", code, "reason", reason, "err", err)
			}
		}()
	})
}

// teardown drops the connection's subscriptions and stops its goroutines.
func (c *conn) teardown() {
	c.s.dropConn(c)
	c.mu.Lock()
	c.closing = true
	c.queue, c.held = nil, nil
	c.mu.Unlock()
	close(c.done)
	c.closeOnce.Do(func() { c.ws.CloseNow() })
}
