package pubsub

import (
	"context"
	"errors"
	"slices"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger"
	rt "github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/rpcserver"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// txErrValue is a transaction error as "err" shows it: null or the error.
func txErrValue(err *rt.TxError) any {
	if err == nil {
		return nil
	}
	return err
}

// handleEvent turns one ledger event into notifications. It runs on the
// notifier with mu held.
func (s *Server) handleEvent(ev *ledger.Event) {
	switch ev.Kind {
	case ledger.EventProcessed:
		s.processed(ev)
	case ledger.EventFrozen:
		s.frozen(ev)
	case ledger.EventConfirmed:
		s.committed(ledger.Confirmed, ev.Block)
		if n := s.node[kindSlotsUpdates]; n != nil {
			s.deliver(n, notification(n.method, n.id, slotUpdate{Type: "optimisticConfirmation", Slot: ev.Slot, Timestamp: millis(ev)}))
		}
		s.retained = append(s.retained, pending(ev.Block))
	case ledger.EventFinalized:
		s.finalized(ev)
	}
}

func millis(ev *ledger.Event) uint64 { return uint64(ev.Time.UnixMilli()) }

// processed notifies processed-level subscriptions of transactions (or
// Apply writes) that just executed, and sends "receivedSignature" to
// signature subscriptions of every level that asked for it.
func (s *Server) processed(ev *ledger.Event) {
	ix := &s.levels[ledger.Processed]
	for _, tx := range ev.Txs {
		for lv := range s.levels {
			for _, sub := range s.levels[lv].sigs[tx.Signature] {
				s.sendReceived(sub, ev.Slot)
			}
		}
		// Firing removes the subscription from the list being walked.
		for _, sub := range slices.Clone(ix.sigs[tx.Signature]) {
			s.fireSignature(sub, ev.Slot, txErrValue(tx.Err))
		}
	}
	s.logs(ix, ev.Slot, ev.Txs)
	if len(ix.accounts) == 0 && len(ix.programs) == 0 {
		return
	}
	// One notification per account per event, with its last value, as
	// Agave notifies once per commitment update.
	var writes []ledger.AccountWrite
	for _, tx := range ev.Txs {
		writes = append(writes, tx.Writes...)
	}
	writes = append(writes, ev.Applied...)
	s.accountWrites(ledger.Processed, ev.Slot, lastWrites(writes))
}

// pendingBlock is what the notifier keeps of a confirmed block until it
// is finalized: the header and the final account values (for finalized
// account and program subscriptions), without its transactions. The
// transactions of FinalityDepth slots at full speed are the largest thing
// the node would hold (wire bytes, logs, balances of 150-200k
// transactions: hundreds of megabytes); the ledger stores them, so when a
// finalized-level signature, logs or block subscription needs them they
// are read back from history (finalizedBlock), one compressed chunk per
// 64 transactions. The account values are kept encoded
// (ledger.PackedWrites) and decoded only for finalized-level account or
// program subscriptions: decoded, the values of FinalityDepth slots at a
// million accounts were a third of the live heap (an account per
// transfer), which against the memory limit made the collector run half
// again as often.
type pendingBlock struct {
	block  *ledger.Block // Transactions, Applied and Writes nil
	writes ledger.PackedWrites
	txs    int // how many transactions the block has
}

func pending(b *ledger.Block) pendingBlock {
	out := *b
	out.Applied = nil
	out.Transactions = nil
	out.Writes = nil
	return pendingBlock{block: &out, writes: ledger.PackWrites(b.Writes), txs: len(b.Transactions)}
}

// finalizedBlock is b, a pending block, with its full transaction
// records, read back from the ledger's history (nil if it cannot be
// read).
func (s *Server) finalizedBlock(b *ledger.Block, p pendingBlock) *ledger.Block {
	_, txs, err := s.l.Block(b.Slot, ledger.Finalized)
	if err != nil || len(txs) != p.txs {
		s.log.Warn("cannot read a finalized block back for finalized-level notifications", "slot", b.Slot, "err", err)
		return nil
	}
	full := *b
	full.Transactions = txs
	return &full
}

// lastWrites keeps the last write of each account, in first-write order.
func lastWrites(ws []ledger.AccountWrite) []ledger.AccountWrite {
	if len(ws) < 2 {
		return ws
	}
	at := make(map[solana.PublicKey]int, len(ws))
	out := make([]ledger.AccountWrite, 0, len(ws))
	for _, w := range ws {
		if i, ok := at[w.Key]; ok {
			out[i] = w
			continue
		}
		at[w.Key] = len(out)
		out = append(out, w)
	}
	return out
}

// committed notifies the subscriptions of level about a block that
// reached it (confirmed, or finalized).
func (s *Server) committed(level ledger.Commitment, b *ledger.Block) {
	ix := &s.levels[level]
	if len(ix.sigs) > 0 {
		for _, tx := range b.Transactions {
			for _, sub := range slices.Clone(ix.sigs[tx.Signature]) {
				s.fireSignature(sub, b.Slot, txErrValue(tx.Err))
			}
		}
	}
	s.logs(ix, b.Slot, b.Transactions)
	s.accountWrites(level, b.Slot, b.Writes)
	for sub := range ix.blocks {
		s.block(sub, b)
	}
}

// finalizedPending notifies the finalized-level subscriptions about a
// block kept since it was confirmed. Its transactions are read back from
// the ledger only when a subscription needs them; if that read fails the
// account and program notifications still go out.
func (s *Server) finalizedPending(p pendingBlock) {
	ix := &s.levels[ledger.Finalized]
	b := p.block
	if (len(ix.accounts) > 0 || len(ix.programs) > 0) && p.writes.Len() > 0 {
		writes, err := p.writes.Unpack()
		if err != nil {
			s.log.Warn("cannot decode a finalized block's account values for finalized-level notifications", "slot", b.Slot, "err", err)
		}
		withWrites := *b
		withWrites.Writes = writes
		b = &withWrites
	}
	// Block subscriptions get the block as history has it, empty or not.
	needTxs := p.txs > 0 && (len(ix.sigs) > 0 || len(ix.logsAll) > 0 || len(ix.logsMentions) > 0)
	if needTxs || len(ix.blocks) > 0 {
		full := s.finalizedBlock(b, p)
		if full == nil {
			s.accountWrites(ledger.Finalized, b.Slot, b.Writes)
			return
		}
		b = full
	}
	s.committed(ledger.Finalized, b)
}

// accountWrites notifies account and program subscriptions of level.
func (s *Server) accountWrites(level ledger.Commitment, slot uint64, writes []ledger.AccountWrite) {
	ix := &s.levels[level]
	if len(ix.accounts) == 0 && len(ix.programs) == 0 {
		return
	}
	mintOf := s.mintsAt(level)
	// Each notification is rendered once and sent to the holders allowed
	// to read the account now (all of them without a read filter).
	for _, w := range writes {
		for _, sub := range ix.accounts[w.Key] {
			to := s.visibleHolders(sub, w.Key, w.Account)
			if len(to) == 0 {
				continue
			}
			a := w.Account
			if a == nil {
				// Agave reports a deleted account as the default account.
				a = &ledger.Account{Owner: spl.SystemProgramID}
			}
			s.deliverTo(to, notification(sub.method, sub.id, withContext(slot, s.encode(a, sub.encoding, mintOf))))
		}
		if w.Account == nil {
			continue // a deleted account is owned by no program
		}
		for _, sub := range ix.programs[w.Account.Owner] {
			if !rpcserver.FiltersAllow(sub.filters, w.Account) {
				continue
			}
			to := s.visibleHolders(sub, w.Key, w.Account)
			if len(to) == 0 {
				continue
			}
			v := keyedAccount{Pubkey: w.Key, Account: s.encode(w.Account, sub.encoding, mintOf)}
			s.deliverTo(to, notification(sub.method, sub.id, withContext(slot, v)))
		}
	}
}

// keyedAccount is RpcKeyedAccount.
type keyedAccount struct {
	Pubkey  solana.PublicKey     `json:"pubkey"`
	Account *rpcserver.UIAccount `json:"account"`
}

// tooLargeForBase58 is what Agave's encode_ui_account shows instead of
// base58 data over 128 bytes (notifications have no error to return).
const tooLargeForBase58 = "error: data too large for bs58 encoding"

// encode renders an account for a notification.
func (s *Server) encode(a *ledger.Account, enc string, mintOf func(solana.PublicKey) *ledger.Account) *rpcserver.UIAccount {
	ui, err := rpcserver.EncodeAccount(a, enc, mintOf)
	if err == nil {
		return ui
	}
	ui = &rpcserver.UIAccount{Executable: a.Executable, Lamports: a.Lamports, Owner: a.Owner, RentEpoch: a.RentEpoch, Space: uint64(len(a.Data))}
	switch {
	case rpcserver.IsBase58TooLarge(err) && enc == "binary":
		ui.Data = tooLargeForBase58
	case rpcserver.IsBase58TooLarge(err):
		ui.Data = [2]string{tooLargeForBase58, enc}
	default:
		s.log.Error("encode account for a notification", "err", err)
		ui.Data = [2]string{"", "base64"}
	}
	return ui
}

// logsResult is RpcLogsResponse.
type logsResult struct {
	Signature solana.Signature `json:"signature"`
	Err       any              `json:"err"`
	Logs      []string         `json:"logs"`
}

// logs notifies logs subscriptions of ix about transactions.
func (s *Server) logs(ix *levelIndex, slot uint64, txs []*ledger.TxRecord) {
	if len(ix.logsAll) == 0 && len(ix.logsMentions) == 0 {
		return
	}
	for _, tx := range txs {
		value := func() logsResult {
			logs := tx.Meta.Logs
			if logs == nil {
				logs = []string{}
			}
			return logsResult{Signature: tx.Signature, Err: txErrValue(tx.Err), Logs: logs}
		}
		for sub := range ix.logsAll {
			s.deliver(sub, notification(sub.method, sub.id, withContext(slot, value())))
		}
		if len(ix.logsMentions) == 0 {
			continue
		}
		t, err := tx.Transaction()
		if err != nil {
			continue
		}
		for _, k := range t.Message.AccountKeys {
			for _, sub := range ix.logsMentions[k] {
				s.deliver(sub, notification(sub.method, sub.id, withContext(slot, value())))
			}
		}
	}
}

// blockUpdate is RpcBlockUpdate.
type blockUpdate struct {
	Slot  uint64 `json:"slot"`
	Block any    `json:"block"`
	Err   any    `json:"err"`
}

// block notifies a block subscription of b.
func (s *Server) block(sub *subscription, b *ledger.Block) {
	txs := b.Transactions
	if sub.mentions {
		txs = nil
		for _, r := range b.Transactions {
			if t, err := r.Transaction(); err == nil && mentions(t.Message.AccountKeys, sub.pubkey) {
				txs = append(txs, r)
			}
		}
		if len(txs) == 0 {
			return
		}
	}
	info := &ledger.BlockInfo{
		Slot: b.Slot, ParentSlot: b.ParentSlot, Height: b.Height, Blockhash: b.Blockhash,
		PreviousBlockhash: b.PreviousBlockhash, Time: b.Time, Signatures: make([]solana.Signature, len(txs)),
	}
	for i, r := range txs {
		info.Signatures[i] = r.Signature
	}
	f := s.opts.ReadFilter
	if f == nil || !showsTokenBalances(sub.block, txs) {
		s.deliver(sub, s.blockMessage(context.Background(), nil, sub, info, txs))
		return
	}
	// The token balances shown depend on who reads them, as with
	// getBlock: one rendering per caller.
	for _, group := range callerGroups(sub) {
		s.deliverTo(group, s.blockMessage(group[0].readCtx, f, sub, info, txs))
	}
}

// showsTokenBalances reports whether a block notification with options o
// of txs would show token balances (the part a read filter can hide).
func showsTokenBalances(o rpcserver.BlockOptions, txs []*ledger.TxRecord) bool {
	if o.Details != "full" && o.Details != "accounts" {
		return false
	}
	for _, r := range txs {
		if r.Meta != nil && (len(r.Meta.PreTokenBalances) > 0 || len(r.Meta.PostTokenBalances) > 0) {
			return true
		}
	}
	return false
}

// blockMessage renders a block notification of sub, as getBlock shows the
// block to the caller of ctx under read filter f (nil: unfiltered).
func (s *Server) blockMessage(ctx context.Context, f rpcserver.ReadFilter, sub *subscription, info *ledger.BlockInfo, txs []*ledger.TxRecord) []byte {
	up := blockUpdate{Slot: info.Slot}
	rendered, err := rpcserver.RenderBlockFor(ctx, f, info, txs, sub.block)
	var e *rpcserver.Error
	switch {
	case err == nil:
		up.Block = rendered
	case errors.As(err, &e) && e.Code == rpcserver.CodeUnsupportedTxVersion:
		up.Err = map[string]uint8{"UnsupportedTransactionVersion": 0}
	default:
		s.log.Error("render block for a notification", "slot", info.Slot, "err", err)
		up.Err = "BlockStoreError"
	}
	return notification(sub.method, sub.id, withContext(info.Slot, up))
}

func mentions(keys []solana.PublicKey, k solana.PublicKey) bool {
	for _, x := range keys {
		if x == k {
			return true
		}
	}
	return false
}

// slotInfo is SlotInfo.
type slotInfo struct {
	Slot   uint64 `json:"slot"`
	Parent uint64 `json:"parent"`
	Root   uint64 `json:"root"`
}

// slotUpdate is SlotUpdate, tagged by "type".
type slotUpdate struct {
	Type      string     `json:"type"`
	Slot      uint64     `json:"slot"`
	Parent    *uint64    `json:"parent,omitempty"`
	Timestamp uint64     `json:"timestamp"`
	Stats     *slotStats `json:"stats,omitempty"`
}

// slotStats is SlotTransactionStats. This node executes transactions one
// at a time, so each is its own entry.
type slotStats struct {
	NumTransactionEntries     uint64 `json:"numTransactionEntries"`
	NumSuccessfulTransactions uint64 `json:"numSuccessfulTransactions"`
	NumFailedTransactions     uint64 `json:"numFailedTransactions"`
	MaxTransactionsPerEntry   uint64 `json:"maxTransactionsPerEntry"`
}

// frozen reports a slot's end and the next slot's start: slotNotification
// for the new slot (Agave sends it when a bank is created), and the
// completed, frozen and createdBank slot updates.
func (s *Server) frozen(ev *ledger.Event) {
	next := ev.Slot + 1
	if n := s.node[kindSlot]; n != nil {
		s.deliver(n, notification(n.method, n.id, slotInfo{Slot: next, Parent: ev.Slot, Root: ev.Root}))
	}
	n := s.node[kindSlotsUpdates]
	if n == nil {
		return
	}
	ts := millis(ev)
	st := &slotStats{NumTransactionEntries: uint64(len(ev.Txs))}
	for _, r := range ev.Txs {
		if r.Err == nil {
			st.NumSuccessfulTransactions++
		} else {
			st.NumFailedTransactions++
		}
	}
	if len(ev.Txs) > 0 {
		st.MaxTransactionsPerEntry = 1
	}
	parent := ev.Slot
	for _, u := range []slotUpdate{
		{Type: "completed", Slot: ev.Slot, Timestamp: ts},
		{Type: "frozen", Slot: ev.Slot, Timestamp: ts, Stats: st},
		{Type: "createdBank", Slot: next, Parent: &parent, Timestamp: ts},
	} {
		s.deliver(n, notification(n.method, n.id, u))
	}
}

// maxRootsPerEvent bounds the root notifications one advance of the
// finalized mark sends (it normally passes one block at a time).
const maxRootsPerEvent = 4096

// finalized notifies finalized-level subscriptions of the blocks the
// finalized mark passed, and sends root notifications for each new root.
func (s *Server) finalized(ev *ledger.Event) {
	keep := s.retained[:0]
	for _, b := range s.retained {
		if b.block.Slot > ev.Slot {
			keep = append(keep, b)
			continue
		}
		if b.block.Slot > ev.Parent {
			s.finalizedPending(b)
		}
	}
	clear(s.retained[len(keep):])
	s.retained = keep
	root, updates := s.node[kindRoot], s.node[kindSlotsUpdates]
	if root == nil && updates == nil {
		return
	}
	// Roots are the slots with blocks: a time travel on a development
	// chain skips slots, which never become roots.
	slots, err := s.l.Blocks(ev.Parent+1, ev.Slot, int(min(ev.Slot-ev.Parent, maxRootsPerEvent)), ledger.Finalized)
	if err != nil {
		s.log.Error("list new roots", "from", ev.Parent+1, "to", ev.Slot, "err", err)
		return
	}
	for _, slot := range slots {
		if updates != nil {
			s.deliver(updates, notification(updates.method, updates.id, slotUpdate{Type: "root", Slot: slot, Timestamp: millis(ev)}))
		}
		if root != nil {
			s.deliver(root, notification(root.method, root.id, slot))
		}
	}
}
