package pubsub

import (
	"fmt"
	"slices"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/rpcserver"
)

// kind is what a subscription watches.
type kind uint8

const (
	kindAccount kind = iota + 1
	kindProgram
	kindLogs
	kindSignature
	kindSlot
	kindSlotsUpdates
	kindRoot
	kindBlock
)

func (k kind) String() string {
	switch k {
	case kindAccount:
		return "account"
	case kindProgram:
		return "program"
	case kindLogs:
		return "logs"
	case kindSignature:
		return "signature"
	case kindSlot:
		return "slot"
	case kindSlotsUpdates:
		return "slotsUpdates"
	case kindRoot:
		return "root"
	case kindBlock:
		return "block"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// notification is the method name of the kind's notifications.
func (k kind) notification() string { return k.String() + "Notification" }

// subscription is one set of subscription parameters. As in Agave,
// identical parameters from any connection share one subscription and
// its id; each connection that subscribed holds it until it unsubscribes
// or disconnects.
type subscription struct {
	id     uint64
	key    string // canonical parameters
	kind   kind
	level  ledger.Commitment
	method string

	pubkey   solana.PublicKey // account, program, logs mentions, block mentions
	sig      solana.Signature
	received bool // enableReceivedNotification
	encoding string
	filters  []rpcserver.Filter
	logs     logsFilter
	block    rpcserver.BlockOptions
	mentions bool // block: only transactions mentioning pubkey

	// State, guarded by Server.mu.
	holders      []*conn // usually one: a slice costs far less than a map
	done         bool    // signature: notified, and removed
	receivedSent bool
}

// levelIndex finds the subscriptions of one commitment level that an
// event concerns.
type levelIndex struct {
	// Most keys have one subscription: slices, not maps, keep a held
	// subscription small.
	accounts     map[solana.PublicKey][]*subscription
	programs     map[solana.PublicKey][]*subscription
	sigs         map[solana.Signature][]*subscription
	logsAll      map[*subscription]struct{}
	logsMentions map[solana.PublicKey][]*subscription
	blocks       map[*subscription]struct{}
}

func newLevelIndex() levelIndex {
	return levelIndex{
		accounts:     map[solana.PublicKey][]*subscription{},
		programs:     map[solana.PublicKey][]*subscription{},
		sigs:         map[solana.Signature][]*subscription{},
		logsAll:      map[*subscription]struct{}{},
		logsMentions: map[solana.PublicKey][]*subscription{},
		blocks:       map[*subscription]struct{}{},
	}
}

func addTo[K comparable](m map[K][]*subscription, k K, s *subscription) {
	m[k] = append(m[k], s)
}

func removeFrom[K comparable](m map[K][]*subscription, k K, s *subscription) {
	list := deleteFrom(m[k], s)
	if len(list) == 0 {
		delete(m, k)
		return
	}
	m[k] = list
}

// deleteFrom removes x from list (order is not kept).
func deleteFrom[T comparable](list []T, x T) []T {
	for i, y := range list {
		if y == x {
			last := len(list) - 1
			list[i] = list[last]
			var zero T
			list[last] = zero
			return list[:last]
		}
	}
	return list
}

// index adds a new subscription to the indexes. Callers hold mu.
func (s *Server) index(sub *subscription) {
	s.subs[sub.id] = sub
	s.byKey[sub.key] = sub
	ix := &s.levels[sub.level]
	switch sub.kind {
	case kindAccount:
		addTo(ix.accounts, sub.pubkey, sub)
	case kindProgram:
		addTo(ix.programs, sub.pubkey, sub)
	case kindSignature:
		addTo(ix.sigs, sub.sig, sub)
	case kindLogs:
		if sub.logs.all {
			ix.logsAll[sub] = struct{}{}
		} else {
			addTo(ix.logsMentions, sub.pubkey, sub)
		}
	case kindBlock:
		ix.blocks[sub] = struct{}{}
	case kindSlot, kindSlotsUpdates, kindRoot:
		s.node[sub.kind] = sub
	}
}

// unindex removes a subscription nobody holds anymore. Callers hold mu.
func (s *Server) unindex(sub *subscription) {
	delete(s.subs, sub.id)
	if s.byKey[sub.key] == sub {
		delete(s.byKey, sub.key)
	}
	ix := &s.levels[sub.level]
	switch sub.kind {
	case kindAccount:
		removeFrom(ix.accounts, sub.pubkey, sub)
	case kindProgram:
		removeFrom(ix.programs, sub.pubkey, sub)
	case kindSignature:
		removeFrom(ix.sigs, sub.sig, sub)
	case kindLogs:
		delete(ix.logsAll, sub)
		removeFrom(ix.logsMentions, sub.pubkey, sub)
	case kindBlock:
		delete(ix.blocks, sub)
	case kindSlot, kindSlotsUpdates, kindRoot:
		if s.node[sub.kind] == sub {
			delete(s.node, sub.kind)
		}
	}
}

// subscribe makes c hold the subscription with sub's parameters,
// creating it if needed, and returns its id.
func (s *Server) subscribe(c *conn, sub *subscription) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	have := s.byKey[sub.key]
	if have != nil {
		if _, ok := c.subs[have.id]; ok {
			return have.id, nil // Agave replaces the hold: nothing changes
		}
	}
	if len(c.subs) >= s.opts.MaxSubscriptionsPerConnection {
		return 0, rpcErrorf(codeInternalError, "Internal Error: Subscription refused. Connection subscription limit reached (%d)", s.opts.MaxSubscriptionsPerConnection)
	}
	if s.holds >= s.opts.MaxSubscriptions {
		return 0, errNodeLimit
	}
	if have == nil {
		have = sub
		have.id = s.nextID
		s.nextID++
		s.index(have)
	}
	have.holders = append(have.holders, c)
	c.subs[have.id] = have
	s.holds++
	return have.id, nil
}

// unsubscribe drops c's hold on subscription id. Any *Unsubscribe method
// drops any kind of subscription, as in Agave.
func (s *Server) unsubscribe(c *conn, id uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	sub := c.subs[id]
	if sub == nil {
		return false
	}
	s.release(c, sub)
	return true
}

// release drops c's hold on sub. Callers hold mu.
func (s *Server) release(c *conn, sub *subscription) {
	delete(c.subs, sub.id)
	sub.holders = deleteFrom(sub.holders, c)
	s.holds--
	if len(sub.holders) == 0 {
		s.unindex(sub)
	}
}

// remove drops a subscription from every holder (a signature
// subscription after its notification). Callers hold mu.
func (s *Server) remove(sub *subscription) {
	for _, c := range slices.Clone(sub.holders) {
		s.release(c, sub)
	}
}

// dropConn releases everything a closing connection holds.
func (s *Server) dropConn(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sub := range c.subs {
		s.release(c, sub)
	}
	delete(s.conns, c)
}

// deliver queues msg for every holder of sub. Callers hold mu.
func (s *Server) deliver(sub *subscription, msg []byte) {
	s.deliverTo(sub.holders, msg)
}

// deliverTo queues msg for each of conns. Callers hold mu.
func (s *Server) deliverTo(conns []*conn, msg []byte) {
	for _, c := range conns {
		c.enqueue(msg)
		s.sent.Add(1)
	}
}

// visibleHolders returns the holders of sub whose caller may read account
// key in state a, as the read filter decides now: sub.holders itself
// when there is no filter, the account was deleted (a nil account is
// shown to anyone, as getAccountInfo's null is) or every holder may; a
// new slice, possibly empty, when some may not. The filter is asked once
// per distinct caller, so a hundred anonymous clients of a public
// account cost one call. Callers hold mu.
func (s *Server) visibleHolders(sub *subscription, key solana.PublicKey, a *ledger.Account) []*conn {
	f := s.opts.ReadFilter
	if f == nil || a == nil {
		return sub.holders
	}
	var (
		out     []*conn         // nil while nobody is left out
		decided map[string]bool // by caller, when there are several holders
	)
	for i, c := range sub.holders {
		ok, known := decided[c.caller]
		if !known {
			ok = f.Check(c.readCtx, key, a) == nil
			if len(sub.holders) > 1 {
				if decided == nil {
					decided = make(map[string]bool)
				}
				decided[c.caller] = ok
			}
		}
		switch {
		case ok && out != nil:
			out = append(out, c)
		case !ok && out == nil:
			out = make([]*conn, i, len(sub.holders))
			copy(out, sub.holders[:i])
		}
	}
	if out == nil {
		return sub.holders
	}
	return out
}

// callerGroups splits the holders of sub by caller (the ?token= of their
// connection), in the order of their first holder. Callers hold mu.
func callerGroups(sub *subscription) [][]*conn {
	if len(sub.holders) == 1 {
		return [][]*conn{sub.holders}
	}
	at := make(map[string]int, len(sub.holders))
	var groups [][]*conn
	for _, c := range sub.holders {
		i, ok := at[c.caller]
		if !ok {
			i = len(groups)
			at[c.caller] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], c)
	}
	return groups
}

// signatureResult is ProcessedSignatureResult.
type signatureResult struct {
	Err any `json:"err"`
}

// receivedSignature is ReceivedSignatureResult's JSON form.
const receivedSignature = "receivedSignature"

// fireSignature notifies a signature subscription that its transaction
// reached the commitment (err nil for success) and removes it: signature
// subscriptions are one-shot. Callers hold mu.
func (s *Server) fireSignature(sub *subscription, slot uint64, txErr any) {
	if sub.done {
		return
	}
	sub.done = true
	s.deliver(sub, notification(sub.method, sub.id, withContext(slot, signatureResult{Err: txErr})))
	s.remove(sub)
}

// sendReceived sends the "receivedSignature" notification once, to a
// subscription that asked for it. Callers hold mu.
func (s *Server) sendReceived(sub *subscription, slot uint64) {
	if !sub.received || sub.receivedSent || sub.done {
		return
	}
	sub.receivedSent = true
	s.deliver(sub, notification(sub.method, sub.id, withContext(slot, receivedSignature)))
}

// checkSignature notifies a new signature subscription at once when its
// transaction has already reached the commitment. Agave does not (it
// only notifies slots processed after the subscription), but Agave's
// sendTransaction returns before the transaction executes, so a client
// that subscribes right after sending is in time; ferry's returns after
// execution, and without this check a processed-level subscription made
// after sendTransaction would never fire. The subscription is registered
// before the status is read, and the notifier marks it done, so it fires
// exactly once.
func (s *Server) checkSignature(id uint64, sig solana.Signature) {
	st, err := s.l.SignatureStatuses([]solana.Signature{sig})
	if err != nil || st[0] == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sub := s.subs[id]
	if sub == nil || sub.kind != kindSignature {
		return
	}
	s.sendReceived(sub, st[0].Slot)
	if st[0].Status >= sub.level {
		s.fireSignature(sub, st[0].Slot, txErrValue(st[0].Err))
	}
}
