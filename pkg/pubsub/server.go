// Package pubsub serves Solana's PubSub API (JSON-RPC over websockets) on
// top of a ledger.Ledger, as Agave's rpc_pubsub does: signatureSubscribe
// (with enableReceivedNotification), accountSubscribe, programSubscribe
// (filters and encodings as getProgramAccounts), logsSubscribe,
// slotSubscribe, slotsUpdatesSubscribe, rootSubscribe, blockSubscribe and
// their unsubscribes, with Agave's notification shapes, integer
// subscription ids and error codes.
//
// Notifications follow the ledger's commitment levels through
// ledger.Observe: processed when a transaction executes in the working
// slot, confirmed when its block is durable, finalized when the finalized
// mark passes it. The ledger never waits for a client: each connection
// has a bounded queue of unsent messages, and a client that lets it fill
// is disconnected with close code 1008 and a reason.
//
// A Server is an http.Handler for websocket upgrades; serve it on its own
// listener (the RPC port + 1, where web3.js looks) and route upgrades on
// the RPC port to it (IsUpgrade).
//
// On a node whose JSON-RPC hides accounts from some callers (a rollup's
// private accounts), Options.ReadFilter makes PubSub hide the same ones
// from the same callers, checked for each connection when its
// notification is sent.
package pubsub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/rpcserver"
)

// Defaults of Options.
const (
	// DefaultMaxConnections bounds a node's open websocket connections.
	DefaultMaxConnections = 1024
	// DefaultMaxSubscriptionsPerConnection bounds what one connection may
	// hold.
	DefaultMaxSubscriptionsPerConnection = 4096
	// DefaultMaxSubscriptions is Agave's MAX_ACTIVE_SUBSCRIPTIONS.
	DefaultMaxSubscriptions = 1_000_000
	// DefaultMaxMessageBytes is Agave's limit on an incoming message.
	DefaultMaxMessageBytes = 4096
	// DefaultQueueLength bounds a connection's unsent messages.
	DefaultQueueLength = 4096
	// DefaultWriteTimeout bounds writing one message to a client.
	DefaultWriteTimeout = 10 * time.Second
	// DefaultPingInterval is how often the server pings a client.
	DefaultPingInterval = 30 * time.Second
	// DefaultPongTimeout is how long a client has to answer a ping.
	DefaultPongTimeout = 20 * time.Second
	// DefaultEventBuffer bounds the ledger events waiting for the
	// notifier.
	DefaultEventBuffer = 1 << 16
	// DefaultShutdownTimeout bounds Close's wait for connections to end.
	DefaultShutdownTimeout = 5 * time.Second
)

// Options configure a Server. Zero values mean the defaults.
type Options struct {
	// MaxConnections bounds the open connections; an upgrade beyond it
	// gets HTTP 503.
	MaxConnections int
	// MaxSubscriptionsPerConnection bounds the subscriptions one
	// connection holds; one more is refused with -32603.
	MaxSubscriptionsPerConnection int
	// MaxSubscriptions bounds the node's subscriptions (each connection's
	// hold on one counts); one more is refused with Agave's -32603 "Node
	// subscription limit reached".
	MaxSubscriptions int
	// MaxMessageBytes bounds an incoming message; a larger one closes the
	// connection with 1009 (message too big).
	MaxMessageBytes int64
	// QueueLength bounds the messages waiting to be written to one client.
	// A client that lets it fill (it does not read, or reads too slowly)
	// is disconnected with 1008 (policy violation) and the reason "slow
	// consumer ...".
	QueueLength int
	// WriteTimeout bounds writing one message; a client that does not
	// take it in time is disconnected.
	WriteTimeout time.Duration
	// PingInterval is how often the server pings each client, and
	// PongTimeout how long the client has to answer before it is
	// disconnected as dead (1008).
	PingInterval, PongTimeout time.Duration
	// EventBuffer bounds the ledger events waiting for the notifier. If
	// notifications fall that far behind the ledger, every connection is
	// closed with 1013 (try again later) rather than the ledger slowed.
	EventBuffer int
	// ShutdownTimeout bounds how long Close waits for connections to end.
	ShutdownTimeout time.Duration
	// Version and FeatureSet answer getVersion (default "3.0.0").
	Version    string
	FeatureSet uint32
	// Logger receives connection errors (default: discard).
	Logger *slog.Logger
	// ReadFilter, if set, applies the node's JSON-RPC read rules to
	// PubSub (the ephemeral node's private accounts): pass the function
	// the node's rpcserver.Handler filters with. A connection's caller is
	// the ?token= of its upgrade request (rpcserver.WithRequestToken), as
	// an HTTP request's is. accountSubscribe of an account the caller may
	// not read is refused with the filter's error (-32090, as
	// getAccountInfo); account and program notifications of an account
	// the caller may not read at that moment are not sent to it; block
	// notifications leave out the token balances of such accounts (as
	// getBlock). Logs and signatures are not filtered (nor are they over
	// HTTP). nil filters nothing and costs nothing.
	ReadFilter rpcserver.ReadFilter
}

func (o Options) normalized() Options {
	def := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	defD := func(p *time.Duration, v time.Duration) {
		if *p <= 0 {
			*p = v
		}
	}
	def(&o.MaxConnections, DefaultMaxConnections)
	def(&o.MaxSubscriptionsPerConnection, DefaultMaxSubscriptionsPerConnection)
	def(&o.MaxSubscriptions, DefaultMaxSubscriptions)
	def(&o.QueueLength, DefaultQueueLength)
	def(&o.EventBuffer, DefaultEventBuffer)
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = DefaultMaxMessageBytes
	}
	defD(&o.WriteTimeout, DefaultWriteTimeout)
	defD(&o.PingInterval, DefaultPingInterval)
	defD(&o.PongTimeout, DefaultPongTimeout)
	defD(&o.ShutdownTimeout, DefaultShutdownTimeout)
	if o.Version == "" {
		o.Version = "3.0.0"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Server serves PubSub for one ledger. Create it with New and stop it
// with Close.
type Server struct {
	l    *ledger.Ledger
	opts Options
	log  *slog.Logger

	// ctx ends the connections' reads (at the end of Close); stop ends
	// the notifier.
	ctx    context.Context
	cancel context.CancelFunc
	stop   context.CancelFunc
	closed atomic.Bool
	wg     sync.WaitGroup // connections
	done   chan struct{}  // the notifier ended

	nconns   atomic.Int64
	slowDrop atomic.Uint64
	sent     atomic.Uint64

	// mu guards the registry: subscriptions, their indexes, every
	// connection's subscription map, and the notification state. The
	// notifier holds it while it turns ledger events into notifications,
	// so a subscription is either entirely before or entirely after an
	// event.
	mu      sync.Mutex
	nextID  uint64
	subs    map[uint64]*subscription
	byKey   map[string]*subscription
	holds   int // subscriptions held, counting each connection's hold
	levels  [3]levelIndex
	node    map[kind]*subscription // slot, slotsUpdates and root: one each
	conns   map[*conn]struct{}
	mintsAt func(ledger.Commitment) func(solana.PublicKey) *ledger.Account

	// retained are the confirmed blocks not yet finalized, for
	// finalized-level notifications, without their transactions
	// (pendingBlock). Only the notifier touches it.
	retained []pendingBlock
}

// New starts a Server for l. It observes the ledger until Close.
func New(l *ledger.Ledger, o Options) *Server {
	o = o.normalized()
	s := &Server{
		l: l, opts: o, log: o.Logger.With("component", "pubsub", "ledger", l.Name()),
		done:  make(chan struct{}),
		subs:  map[uint64]*subscription{},
		byKey: map[string]*subscription{},
		node:  map[kind]*subscription{},
		conns: map[*conn]struct{}{},
	}
	for i := range s.levels {
		s.levels[i] = newLevelIndex()
	}
	s.mintsAt = func(c ledger.Commitment) func(solana.PublicKey) *ledger.Account {
		return func(k solana.PublicKey) *ledger.Account {
			a, _ := l.Account(k, c)
			return a
		}
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	nctx, stop := context.WithCancel(context.Background())
	s.stop = stop
	obs := l.Observe(o.EventBuffer)
	go s.notifier(nctx, obs)
	return s
}

// IsUpgrade reports whether r asks for a websocket upgrade, so that an
// HTTP endpoint can hand it to a Server.
func IsUpgrade(r *http.Request) bool {
	return headerHas(r.Header, "Connection", "upgrade") && headerHas(r.Header, "Upgrade", "websocket")
}

func headerHas(h http.Header, key, token string) bool {
	for _, v := range h.Values(key) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// ServeHTTP accepts a websocket connection and serves it until it ends.
// A request that is not an upgrade gets 426.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !IsUpgrade(r) {
		w.Header().Set("Upgrade", "websocket")
		http.Error(w, "Solana PubSub endpoint: connect with a websocket client", http.StatusUpgradeRequired)
		return
	}
	if s.closed.Load() {
		http.Error(w, "PubSub is shutting down", http.StatusServiceUnavailable)
		return
	}
	if n := s.nconns.Add(1); n > int64(s.opts.MaxConnections) {
		s.nconns.Add(-1)
		http.Error(w, fmt.Sprintf("too many websocket connections (limit %d)", s.opts.MaxConnections), http.StatusServiceUnavailable)
		return
	}
	defer s.nconns.Add(-1)
	// The HTTP server's read and write deadlines would otherwise stay on
	// the hijacked connection and cut it after ReadTimeout.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	// Any origin may connect, as with Agave: the node holds no user
	// credentials a cross-site page could abuse.
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		s.log.Debug("websocket upgrade failed", "remote", r.RemoteAddr, "err", err)
		return
	}
	ws.SetReadLimit(s.opts.MaxMessageBytes)
	c := s.newConn(ws, r.URL.Query().Get("token"))
	if c == nil {
		ws.Close(websocket.StatusGoingAway, "server shutting down")
		return
	}
	c.serve(s.ctx)
}

// Stats is a snapshot of a Server's load.
type Stats struct {
	// Connections open now.
	Connections int
	// Subscriptions is the number of distinct subscriptions (ids);
	// Holds counts each connection's hold on one (what the limits count).
	Subscriptions, Holds int
	// SlowConsumerDisconnects counts clients dropped for a full queue.
	SlowConsumerDisconnects uint64
	// Notifications counts notification messages queued for clients.
	Notifications uint64
}

// Stats reports the current load.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Stats{
		Connections: len(s.conns), Subscriptions: len(s.subs), Holds: s.holds,
		SlowConsumerDisconnects: s.slowDrop.Load(), Notifications: s.sent.Load(),
	}
}

// Close stops accepting connections, closes the open ones with 1001
// (going away) and stops observing the ledger. It waits for connections
// to end up to ShutdownTimeout. Close is idempotent.
func (s *Server) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	s.stop()
	<-s.done
	s.closeConns(websocket.StatusGoingAway, "server shutting down")
	waited := make(chan struct{})
	go func() { s.wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(s.opts.ShutdownTimeout):
		// Clients that do not finish the close handshake are cut off.
		s.cancel()
		for _, c := range s.connList() {
			c.ws.CloseNow()
		}
		<-waited
	}
	s.cancel()
	return nil
}

// connList is a snapshot of the open connections, to act on outside mu.
func (s *Server) connList() []*conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	return conns
}

// closeConns closes every connection with code and reason.
func (s *Server) closeConns(code websocket.StatusCode, reason string) {
	for _, c := range s.connList() {
		c.close(code, reason)
	}
}

// notifier turns ledger events into notifications until the server or
// the ledger closes.
func (s *Server) notifier(ctx context.Context, obs *ledger.Observer) {
	defer close(s.done)
	defer func() { obs.Close() }()
	for {
		evs, err := obs.Next(ctx)
		switch {
		case errors.Is(err, ledger.ErrObserverOverflow):
			// Everything queued for clients may now miss events: start
			// over rather than deliver a wrong picture.
			s.log.Warn("notifications fell behind the ledger; closing every connection", "buffer", s.opts.EventBuffer)
			s.closeConns(websocket.StatusTryAgainLater, "notifications fell behind the ledger; reconnect")
			s.retained = nil
			obs = s.l.Observe(s.opts.EventBuffer)
			continue
		case errors.Is(err, ledger.ErrClosed):
			s.closeConns(websocket.StatusGoingAway, "ledger closed")
			return
		case err != nil:
			return
		}
		s.mu.Lock()
		for i := range evs {
			s.handleEventSafely(&evs[i])
		}
		s.mu.Unlock()
	}
}

// handleEventSafely is handleEvent that survives a bug: the event's
// remaining notifications are lost, the node and its other clients go on.
func (s *Server) handleEventSafely(ev *ledger.Event) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("pubsub notification panicked", "event", ev.Kind, "slot", ev.Slot, "panic", p)
		}
	}()
	s.handleEvent(ev)
}
