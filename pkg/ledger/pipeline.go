package ledger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/gagliardetto/solana-go"

	rt "github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// InvalidTransactionError reports bytes that are not a well-formed
// transaction: too large, undecodable, or failing sanitization. Nothing
// was executed. JSON-RPC reports it as -32602.
type InvalidTransactionError struct {
	// Err wraps txwire.ErrTooLarge, txwire.ErrMalformed, txwire.ErrSanitize
	// or txwire.ErrAccountLoadedTwice.
	Err error
	// TxErr is the Agave error of a sanitize failure (SanitizeFailure or
	// AccountLoadedTwice); nil for size and decoding errors.
	TxErr *rt.TxError
}

func (e *InvalidTransactionError) Error() string { return "invalid transaction: " + e.Err.Error() }

// Unwrap returns the cause.
func (e *InvalidTransactionError) Unwrap() error { return e.Err }

// ErrSignatureVerification is a transaction whose signatures do not verify,
// rejected before execution (JSON-RPC -32003).
var ErrSignatureVerification = errors.New("Transaction signature verification failure")

// PreflightError is a failed preflight simulation (JSON-RPC -32002); the
// transaction was not sent.
type PreflightError struct{ Result *SimulateResult }

func (e *PreflightError) Error() string {
	return "Transaction simulation failed: " + e.Result.Err.Error()
}

// DecodeTransaction checks the size, decodes and sanitizes a wire
// transaction, as the first pipeline stage does.
func DecodeTransaction(raw []byte) (*txwire.Transaction, error) {
	if len(raw) > txwire.MaxWireSize {
		return nil, &InvalidTransactionError{Err: &txwire.TooLargeError{Size: len(raw)}}
	}
	tx, err := txwire.Decode(raw)
	if err != nil {
		return nil, &InvalidTransactionError{Err: err}
	}
	if err := tx.Message.Sanitize(); err != nil {
		kind := rt.ErrSanitizeFailure
		if errors.Is(err, txwire.ErrAccountLoadedTwice) {
			kind = rt.ErrAccountLoadedTwice
		}
		return nil, &InvalidTransactionError{Err: err, TxErr: kind}
	}
	return tx, nil
}

// pending is a verified transaction waiting for the slot loop.
type pending struct {
	tx  *txwire.Transaction
	raw []byte
	// preflight makes the loop execute the transaction only if it would
	// succeed: a failure is reported as a simulation and nothing lands.
	preflight bool
	done      chan outcome
}

type outcome struct {
	rec    *TxRecord
	reject *rt.TxError     // not landed
	sim    *SimulateResult // preflight failure
	err    error           // the ledger cannot take work
}

// Process runs a signed wire transaction through the whole pipeline and
// returns once it has executed (it is then processed; see WaitForStatus
// for confirmation). A landed transaction returns its record, whose Err
// says whether it failed (the fee is charged either way). A transaction
// that did not land returns an error: *InvalidTransactionError, a
// *runtime.TxError (SignatureFailure, BlockhashNotFound, AlreadyProcessed,
// AccountNotFound, InsufficientFundsForFee, ...), ErrClosed or the context's
// error.
func (l *Ledger) Process(ctx context.Context, raw []byte) (*TxRecord, error) {
	tx, err := DecodeTransaction(raw)
	if err != nil {
		return nil, err
	}
	if !l.verifier.verify(tx) {
		if l.closed.Load() {
			return nil, ErrClosed
		}
		return nil, rt.ErrSignatureFailure
	}
	o, err := l.submit(ctx, &pending{tx: tx, raw: raw})
	if err != nil {
		return nil, err
	}
	return o.result()
}

func (o outcome) result() (*TxRecord, error) {
	switch {
	case o.err != nil:
		return nil, o.err
	case o.reject != nil:
		return nil, o.reject
	}
	return o.rec, nil
}

// ProcessBatch is Process for many transactions: decoding and signature
// verification run on all cores, then the slot loop executes them in
// order. recs[i] and errs[i] are what Process would have returned.
func (l *Ledger) ProcessBatch(ctx context.Context, raws [][]byte) (recs []*TxRecord, errs []error) {
	recs = make([]*TxRecord, len(raws))
	errs = make([]error, len(raws))
	ps := make([]*pending, len(raws))
	txs := make([]*txwire.Transaction, len(raws))
	parallel(len(raws), func(i int) {
		txs[i], errs[i] = DecodeTransaction(raws[i])
	})
	for i, ok := range l.verifier.verifyAll(txs) {
		switch {
		case errs[i] != nil:
		case !ok && l.closed.Load():
			errs[i] = ErrClosed
		case !ok:
			errs[i] = rt.ErrSignatureFailure
		default:
			if errs[i] = l.forkPrefetch(ctx, txs[i]); errs[i] == nil {
				ps[i] = &pending{tx: txs[i], raw: raws[i], done: make(chan outcome, 1)}
			}
		}
	}
	var queued []*pending
	for _, p := range ps {
		if p != nil {
			queued = append(queued, p)
		}
	}
	n, err := l.enqueue(ctx, queued)
	for i, p := range ps {
		if p == nil {
			continue
		}
		if n == 0 {
			errs[i] = err
			continue
		}
		n--
		select {
		case o := <-p.done:
			recs[i], errs[i] = o.result()
		case <-ctx.Done():
			errs[i] = ctx.Err()
		}
	}
	return recs, errs
}

// parallel runs fn(0..n-1) on all cores.
func parallel(n int, fn func(int)) {
	workers := min(runtime.GOMAXPROCS(0), (n+7)/8)
	if workers <= 1 {
		for i := 0; i < n; i++ {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		}()
	}
	wg.Wait()
}

func (l *Ledger) submit(ctx context.Context, p *pending) (outcome, error) {
	if err := l.forkPrefetch(ctx, p.tx); err != nil {
		return outcome{}, err
	}
	l.warm(p.tx)
	p.done = make(chan outcome, 1)
	if _, err := l.enqueue(ctx, []*pending{p}); err != nil {
		return outcome{}, err
	}
	select {
	case o := <-p.done:
		return o, nil
	case <-ctx.Done():
		return outcome{}, ctx.Err()
	}
}

// warm reads the accounts a transaction names into the account cache in
// the caller's goroutine (a durable ledger only): the slot loop executes
// one transaction at a time, and at a million accounts most of a
// transfer's accounts are not in memory, so reading them there would
// put every read from disk on that one goroutine's path.
func (l *Ledger) warm(tx *txwire.Transaction) {
	if l.bank.disk == nil {
		return
	}
	l.mu.RLock()
	for _, k := range tx.Message.AccountKeys {
		l.bank.get(k)
	}
	l.mu.RUnlock()
}

// enqueue hands transactions to the slot loop, waiting while MaxPending
// transactions are queued. It returns how many were queued (a prefix of
// ps) and why it stopped early.
func (l *Ledger) enqueue(ctx context.Context, ps []*pending) (int, error) {
	queued := 0
	for queued < len(ps) {
		n := min(len(ps)-queued, chunk, l.cfg.MaxPending)
		for i := 0; i < n; i++ {
			select {
			case l.sem <- struct{}{}:
			case <-ctx.Done():
				l.release(i)
				return queued, ctx.Err()
			case <-l.quit:
				l.release(i)
				return queued, ErrClosed
			}
		}
		l.qmu.Lock()
		if l.stopped {
			l.qmu.Unlock()
			l.release(n)
			return queued, ErrClosed
		}
		l.queue = append(l.queue, ps[queued:queued+n]...)
		l.qmu.Unlock()
		queued += n
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
	return queued, nil
}

func (l *Ledger) release(n int) {
	for i := 0; i < n; i++ {
		<-l.sem
	}
}

// source is the account state a transaction executes or simulates against.
type source interface {
	get(solana.PublicKey) *Account
	seen(solana.Signature) bool
}

// bankSource is the processed state; only the slot loop uses it.
type bankSource struct{ l *Ledger }

func (s bankSource) get(k solana.PublicKey) *Account { return s.l.bank.get(k) }
func (s bankSource) seen(sig solana.Signature) bool {
	_, ok := s.l.recentStatus(sig)
	return ok
}

// viewSource is the state at a commitment level; callers hold mu.
type viewSource struct {
	l   *Ledger
	cut uint64
}

func (s viewSource) get(k solana.PublicKey) *Account { return s.l.accountAt(k, s.cut) }
func (s viewSource) seen(sig solana.Signature) bool {
	e, ok := s.l.recentStatus(sig)
	return ok && e.slot <= s.cut
}

// execResult is the outcome of running one transaction against a source.
type execResult struct {
	reject *rt.TxError // did not land
	err    *rt.TxError // landed and failed
	meta   *TxMeta
	keys   []solana.PublicKey
	work   []*Account // accounts after execution
	writes []AccountWrite
	loaded uint32
	// unitPrice is the compute-unit price for the prioritization-fee
	// statistics, or noUnitPrice (see stats.go).
	unitPrice uint64
}

// Compute cost model constants (Agave cost_model), for meta.costUnits.
const (
	signatureCost       = 720
	writeLockCost       = 300
	dataBytesPerCU      = 4
	loadedBytesPageCost = 8
	loadedBytesPage     = 32 * 1024
)

// execute runs pipeline stages 3 to 8 for one transaction against src:
// address-table loading, blockhash age (or durable nonce), duplicate
// check, compute budget, fee payer, loading, the instructions themselves
// and the rent-state check. It changes nothing; the caller commits
// res.writes or throws them away. nextHeight is the height of the block
// the transaction would land in, slot its slot.
func (l *Ledger) execute(tx *txwire.Transaction, src source, nextHeight uint64, env rt.Env) *execResult {
	msg := &tx.Message
	res := &execResult{keys: msg.AccountKeys}
	keys := msg.AccountKeys
	var loadedW, loadedR []solana.PublicKey
	if len(msg.AddressTableLookups) > 0 {
		// Agave resolves the tables when it sanitizes the message, before
		// anything else is checked.
		var terr *rt.TxError
		if loadedW, loadedR, terr = l.loadLookups(msg, src, env.Slot); terr != nil {
			res.reject = terr
			return res
		}
		keys = make([]solana.PublicKey, 0, len(msg.AccountKeys)+len(loadedW)+len(loadedR))
		keys = append(append(append(keys, msg.AccountKeys...), loadedW...), loadedR...)
		if hasDuplicate(keys) {
			res.reject = rt.ErrAccountLoadedTwice
			return res
		}
		res.keys = keys
	}
	if len(keys) > MaxAccountLocks {
		res.reject = rt.ErrTooManyAccountLocks
		return res
	}
	n := len(keys)
	nStatic := len(msg.AccountKeys)
	flags := make([]bool, 3*n)
	signer, writable, called := flags[:n:n], flags[n:2*n:2*n], flags[2*n:]
	upgradeable := false
	for _, ix := range msg.Instructions {
		called[ix.ProgramIDIndex] = true
	}
	for _, k := range keys {
		upgradeable = upgradeable || k == rt.BPFLoaderUpgradeableID
	}
	for i := range keys {
		if i < nStatic {
			signer[i] = msg.IsSigner(i)
			writable[i] = writableAt(msg, i, called[i], upgradeable)
		} else {
			writable[i] = i < nStatic+len(loadedW) && !reservedKeys[keys[i]] && !(called[i] && !upgradeable)
		}
	}
	var nonce *nonceInfo
	if h, ok := l.hashes[msg.RecentBlockhash]; !ok || h >= nextHeight || nextHeight-1-h > MaxProcessingAge {
		if nonce = l.durableNonce(msg, keys, signer, writable, src, env); nonce == nil {
			res.reject = rt.ErrBlockhashNotFound
			return res
		}
	}
	if src.seen(tx.Signatures[0]) {
		res.reject = rt.ErrAlreadyProcessed
		return res
	}
	budget, berr := rt.ParseBudget(msg, l.exec.IsBuiltin)
	if berr != nil {
		res.reject = berr
		return res
	}
	res.unitPrice = statsUnitPrice(budget)
	fee := satAdd(satMul(uint64(l.cfg.LamportsPerSignature), uint64(len(tx.Signatures))), budget.PriorityFee())
	if nonce != nil && nonce.lamportsPerSignature == 0 {
		fee = 0 // Agave charges nothing when the nonce recorded a zero fee rate
	}
	payer := src.get(keys[0])
	if payer == nil && fee == 0 && l.cfg.AllowUnfundedFeePayers {
		payer = &Account{Owner: spl.SystemProgramID}
	}
	// A fee payer is a System account, or an initialized nonce account,
	// which must keep its rent-exempt minimum.
	var payerReserve uint64
	switch {
	case payer == nil:
		res.reject = rt.ErrAccountNotFound
		return res
	case payer.Owner != spl.SystemProgramID:
		res.reject = rt.ErrInvalidAccountForFee
		return res
	case len(payer.Data) != 0:
		if st, err := spl.DecodeNonce(payer.Data); err != nil || !st.Initialized || len(payer.Data) != spl.NonceAccountSize {
			res.reject = rt.ErrInvalidAccountForFee
			return res
		}
		payerReserve = l.cfg.Rent.MinimumBalance(spl.NonceAccountSize)
	}
	if payer.Lamports < payerReserve || payer.Lamports-payerReserve < fee {
		res.reject = rt.ErrInsufficientFundsForFee
		return res
	}
	if min0 := l.cfg.Rent.MinimumBalance(len(payer.Data)); payer.Lamports >= min0 && payer.Lamports-fee != 0 && payer.Lamports-fee < min0 {
		res.reject = rt.InsufficientFundsForRent(0)
		return res
	}

	orig := make([]*Account, 2*n)
	work := orig[n:]
	orig = orig[:n:n]
	balances := make([]uint64, 2*n)
	meta := &TxMeta{Fee: fee, PreBalances: balances[:n:n], PostBalances: balances[n:]}
	var loaded, roData, ro int
	for i, k := range keys {
		a := payer
		if i > 0 {
			a = src.get(k)
		}
		orig[i] = a
		if a != nil {
			meta.PreBalances[i] = a.Lamports
			loaded += len(a.Data)
			if !writable[i] {
				roData += len(a.Data)
				ro++
			}
		}
		loaded += 64
	}
	// Writable copies may be committed, so each gets its own allocation;
	// read-only copies are always thrown away and share two slabs (this
	// runs for every transaction).
	slab := make([]Account, 0, ro)
	data := make([]byte, 0, roData)
	for i, a := range orig {
		switch {
		case a == nil:
			work[i] = &Account{Owner: spl.SystemProgramID}
		case writable[i]:
			work[i] = a.Clone()
		default:
			slab = append(slab, *a)
			w := &slab[len(slab)-1]
			if a.Data != nil {
				data = append(data, a.Data...)
				// Capped capacity: growing one copy's data reallocates it
				// instead of running into the next one.
				w.Data = data[len(data)-len(a.Data) : len(data) : len(data)]
			}
			work[i] = w
		}
	}
	work[0].Lamports -= fee
	res.loaded = uint32(min(loaded, 1<<31))
	res.keys, res.work, res.meta = keys, work, meta
	meta.PreTokenBalances = tokenBalances(orig, src.get)

	var err *rt.TxError
	for _, ix := range msg.Instructions {
		switch p := orig[ix.ProgramIDIndex]; {
		case p == nil:
			err = rt.ErrProgramAccountNotFound
		case !p.Executable:
			err = rt.ErrInvalidProgramForExecution
		}
		if err != nil {
			break
		}
	}
	if err == nil {
		// On the stack for the usual handful of accounts.
		var preRentBuf [16]rentState
		preRent := preRentBuf[:0]
		if n > len(preRentBuf) {
			preRent = make([]rentState, 0, n)
		}
		preRent = preRent[:n]
		for i, a := range work {
			if writable[i] {
				preRent[i] = l.rentStateOf(a)
			}
		}
		txc := &rt.TxContext{Keys: keys, Accounts: work, Signer: signer, Writable: writable, Env: env, ComputeLimit: budget.UnitLimit}
		err = l.exec.Run(txc, msg.Instructions)
		if err == nil {
			for i, a := range work {
				// The incinerator may hold any balance: Agave burns it when
				// the block ends (freeze).
				if writable[i] && keys[i] != spl.IncineratorID && !rentTransitionAllowed(preRent[i], l.rentStateOf(a)) {
					err = rt.InsufficientFundsForRent(i)
					break
				}
			}
		}
		meta.Logs = txc.Logs
		if meta.Logs == nil {
			meta.Logs = []string{}
		}
		meta.ComputeUnits = txc.ComputeUsed
		meta.InnerInstructions = txc.Inner
		meta.ReturnData = txc.ReturnData
	}
	res.err = err

	if err == nil {
		nw := 0
		for i := range work {
			if writable[i] {
				nw++
			}
		}
		// One allocation for the writes rather than one per doubling.
		res.writes = make([]AccountWrite, 0, nw)
		for i, a := range work {
			meta.PostBalances[i] = a.Lamports
			if writable[i] && changed(orig[i], a) {
				res.writes = append(res.writes, AccountWrite{Key: keys[i], Account: a})
			}
		}
		meta.PostTokenBalances = tokenBalances(work, func(k solana.PublicKey) *Account {
			for i := range keys {
				if keys[i] == k {
					return work[i]
				}
			}
			return src.get(k)
		})
	} else {
		copy(meta.PostBalances, meta.PreBalances)
		meta.PostBalances[0] -= fee
		meta.PostTokenBalances = meta.PreTokenBalances
		// A failed transaction still pays its fee and, if it used a durable
		// nonce, still advances it, so it cannot be replayed.
		var p *Account
		if fee > 0 || (nonce != nil && nonce.index == 0) {
			p = payer.Clone()
			if nonce != nil && nonce.index == 0 {
				p.Data = nonce.advanced.Data
			}
			p.Lamports -= fee
			res.writes = []AccountWrite{{Key: keys[0], Account: p}}
		}
		if nonce != nil && nonce.index != 0 {
			res.writes = append(res.writes, AccountWrite{Key: keys[nonce.index], Account: nonce.advanced})
		}
	}
	if len(loadedW)+len(loadedR) > 0 {
		meta.LoadedWritable, meta.LoadedReadonly = loadedW, loadedR
	}
	nw := 0
	for _, w := range writable {
		if w {
			nw++
		}
	}
	dataBytes := 0
	for _, ix := range msg.Instructions {
		dataBytes += len(ix.Data)
	}
	meta.CostUnits = uint64(signatureCost*len(tx.Signatures)+writeLockCost*nw+dataBytes/dataBytesPerCU) +
		meta.ComputeUnits + uint64((loaded+loadedBytesPage-1)/loadedBytesPage*loadedBytesPageCost)
	return res
}

// writableAt is whether account i of msg is write-locked: Agave demotes
// writes to reserved accounts and to invoked programs (unless the
// upgradeable loader is in the message); the fee payer is always writable.
func writableAt(msg *txwire.Message, i int, invoked, upgradeable bool) bool {
	return i == 0 || (msg.IsWritable(i) && !reservedKeys[msg.AccountKeys[i]] && !(invoked && !upgradeable))
}

func changed(orig, a *Account) bool {
	if orig == nil {
		return a.Lamports != 0
	}
	return orig.Lamports != a.Lamports || orig.Owner != a.Owner || orig.Executable != a.Executable || !bytes.Equal(orig.Data, a.Data)
}

func satAdd(a, b uint64) uint64 {
	if c := a + b; c >= a {
		return c
	}
	return ^uint64(0)
}

func satMul(a, b uint64) uint64 {
	if a != 0 && b > ^uint64(0)/a {
		return ^uint64(0)
	}
	return a * b
}

// rentState is Agave's RentState: uninitialized (no lamports), rent-paying
// (below the minimum for its size) or rent-exempt.
type rentState struct {
	paying   bool
	lamports uint64
	size     int
}

func (l *Ledger) rentStateOf(a *Account) rentState {
	if a.Lamports == 0 || a.Lamports >= l.cfg.Rent.MinimumBalance(len(a.Data)) {
		return rentState{}
	}
	return rentState{paying: true, lamports: a.Lamports, size: len(a.Data)}
}

// rentTransitionAllowed: an account may end rent-exempt or empty; it may
// stay rent-paying only if it already was, kept its size and did not gain
// lamports.
func rentTransitionAllowed(pre, post rentState) bool {
	if !post.paying {
		return true
	}
	return pre.paying && pre.size == post.size && post.lamports <= pre.lamports
}

// tokenBalances lists the token accounts among accts with their balances,
// for pre/postTokenBalances; mint decimals come from mintOf. Accounts
// whose mint cannot be read are left out, as Agave does. It reads the
// layouts in place rather than through spl.DecodeTokenAccount and
// spl.DecodeMint, which allocate, because it runs twice per transaction.
func tokenBalances(accts []*Account, mintOf func(solana.PublicKey) *Account) []TokenBalance {
	// Sized for the accounts the token programs own (those the mint check
	// leaves out just leave room): one allocation per transaction instead
	// of one per doubling.
	n := 0
	for _, a := range accts {
		if a != nil && spl.IsTokenProgram(a.Owner) {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	out := make([]TokenBalance, 0, n)
	for i, a := range accts {
		tk, ok := tokenKeysOf(a)
		if !ok {
			continue
		}
		m := mintOf(tk.mint)
		if m == nil || !spl.IsTokenProgram(m.Owner) || len(m.Data) < spl.MintSize || m.Data[45] != 1 {
			continue // 45: is_initialized
		}
		out = append(out, TokenBalance{
			AccountIndex: uint8(i), Mint: tk.mint, Owner: tk.owner, ProgramID: a.Owner,
			Amount: spl.TokenAmountOf(a.Data), Decimals: m.Data[44], // 44: decimals
		})
	}
	if len(out) == 0 {
		return nil // as before: no token account is no list
	}
	return out
}

// executeAndCommit runs a queued transaction on the working slot and
// commits its effects. It runs on the slot loop with mu held.
func (l *Ledger) executeAndCommit(p *pending) outcome {
	if l.failure != nil {
		return outcome{err: fmt.Errorf("ledger halted: %w", l.failure)}
	}
	res := l.execute(p.tx, bankSource{l}, l.working.height, l.env())
	if p.preflight && (res.reject != nil || res.err != nil) {
		return outcome{sim: l.simResult(res, p.tx, nil, l.working.slot)}
	}
	if res.reject != nil {
		return outcome{reject: res.reject}
	}
	// The record takes the execution's write list (nothing else holds
	// it), each entry set to the value the bank now holds.
	writes := res.writes
	if writes == nil {
		writes = []AccountWrite{}
	}
	rec := &TxRecord{
		Signature: p.tx.Signatures[0], Slot: l.working.slot, Index: uint32(len(l.working.txs)),
		BlockTime: l.working.time, Raw: p.raw, Err: res.err, Meta: res.meta, tx: p.tx,
		Writes: writes,
	}
	for i, w := range writes {
		l.put(w.Key, w.Account)
		writes[i].Account = l.bank.get(w.Key)
	}
	l.working.txs = append(l.working.txs, rec)
	l.working.prices = append(l.working.prices, res.unitPrice)
	l.status.put(statusKeyOf(rec.Signature), statusEntry{slot: rec.Slot, err: rec.Err})
	l.txCount++
	return outcome{rec: rec}
}

// SendOptions are sendTransaction's options.
type SendOptions struct {
	// SkipPreflight sends without verifying signatures or simulating
	// first: failures then only show in the signature status, and a
	// transaction that cannot land is silently dropped.
	SkipPreflight bool
	// PreflightCommitment is the state the preflight simulation runs
	// against (JSON-RPC default: finalized).
	PreflightCommitment Commitment
}

// Send is sendTransaction: decode, verify signatures, simulate at the
// preflight commitment, then submit. It returns the transaction's
// signature once the transaction has executed or was dropped. Errors:
// *InvalidTransactionError, ErrSignatureVerification, *PreflightError, a
// halted or closed ledger, or the context's error.
//
// A preflight at processed commitment is fused with execution: the
// transaction runs once, and lands only if it succeeds, which is what a
// simulation immediately followed by execution would give.
func (l *Ledger) Send(ctx context.Context, raw []byte, o SendOptions) (solana.Signature, error) {
	tx, err := DecodeTransaction(raw)
	if err != nil {
		return solana.Signature{}, err
	}
	if err := l.checkLookups(tx, o.PreflightCommitment); err != nil {
		return solana.Signature{}, err
	}
	sig := tx.Signatures[0]
	ok := l.verifier.verify(tx)
	if !ok && l.closed.Load() {
		return sig, ErrClosed
	}
	if o.SkipPreflight {
		if !ok {
			return sig, nil // the TPU drops it; the caller never hears back
		}
		_, err := l.submit(ctx, &pending{tx: tx, raw: raw})
		return sig, err
	}
	if !ok {
		return sig, ErrSignatureVerification
	}
	if err := l.Health(); err != nil {
		return sig, err
	}
	if o.PreflightCommitment != Processed {
		if err := l.forkPrefetch(ctx, tx); err != nil {
			return sig, err
		}
		l.mu.RLock()
		sim := l.simulateLocked(tx, SimulateOptions{Commitment: o.PreflightCommitment})
		l.mu.RUnlock()
		if sim.Err != nil {
			return sig, &PreflightError{Result: sim}
		}
	}
	out, err := l.submit(ctx, &pending{tx: tx, raw: raw, preflight: o.PreflightCommitment == Processed})
	switch {
	case err != nil:
		return sig, err
	case out.sim != nil:
		return sig, &PreflightError{Result: out.sim}
	case out.err != nil:
		return sig, out.err
	}
	return sig, nil
}

// SimulateOptions are simulateTransaction's options.
type SimulateOptions struct {
	Commitment Commitment
	// SigVerify checks the signatures first (ErrSignatureVerification).
	SigVerify bool
	// ReplaceRecentBlockhash runs with the latest blockhash instead of the
	// transaction's (and so never fails with BlockhashNotFound).
	ReplaceRecentBlockhash bool
	// Accounts whose post-simulation state to return.
	Accounts []solana.PublicKey
}

// BlockhashInfo is a blockhash and the last block height it is valid at.
type BlockhashInfo struct {
	Blockhash            solana.Hash
	LastValidBlockHeight uint64
}

// SimulateResult is simulateTransaction's result.
type SimulateResult struct {
	// Slot is the slot of the state simulated against.
	Slot uint64
	Err  *rt.TxError
	// Logs is nil when the transaction failed before execution.
	Logs                   []string
	Accounts               []*Account // aligned with SimulateOptions.Accounts; nil: none
	UnitsConsumed          uint64
	ReturnData             *rt.ReturnData
	InnerInstructions      []rt.InnerInstructions
	Replacement            *BlockhashInfo
	Fee                    uint64
	PreBalances            []uint64
	PostBalances           []uint64
	PreTokenBalances       []TokenBalance
	PostTokenBalances      []TokenBalance
	LoadedAccountsDataSize uint32
}

// Simulate is simulateTransaction: it runs the transaction against the
// state at a commitment level and reports what would happen, without
// changing anything. The transaction need not be signed unless SigVerify
// is set. Errors: *InvalidTransactionError (also for address tables a v0
// message cannot use), ErrSignatureVerification.
func (l *Ledger) Simulate(ctx context.Context, raw []byte, o SimulateOptions) (*SimulateResult, error) {
	tx, err := DecodeTransaction(raw)
	if err != nil {
		return nil, err
	}
	if o.SigVerify && o.ReplaceRecentBlockhash {
		return nil, errors.New("sigVerify may not be used with replaceRecentBlockhash")
	}
	if err := l.checkLookups(tx, o.Commitment); err != nil {
		return nil, err
	}
	if o.SigVerify && !l.verifier.verify(tx) {
		return nil, ErrSignatureVerification
	}
	if err := l.forkPrefetch(ctx, tx); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.simulateLocked(tx, o), nil
}

// simulateLocked runs tx against a commitment's state. Callers hold mu
// for reading, which keeps the state still while the transaction runs.
func (l *Ledger) simulateLocked(tx *txwire.Transaction, o SimulateOptions) *SimulateResult {
	cut := l.cutoff(o.Commitment)
	nextHeight := l.working.height
	if o.Commitment != Processed {
		nextHeight = l.headerAtOrBefore(cut).height + 1
	}
	var repl *BlockhashInfo
	if o.ReplaceRecentBlockhash {
		h := l.latestAt(o.Commitment)
		tx.Message.RecentBlockhash = h.hash
		repl = &BlockhashInfo{Blockhash: h.hash, LastValidBlockHeight: h.height + MaxProcessingAge}
	}
	res := l.execute(tx, viewSource{l: l, cut: cut}, nextHeight, l.env())
	sim := l.simResult(res, tx, o.Accounts, cut)
	sim.Replacement = repl
	return sim
}

// simResult turns an execution into a simulation result.
func (l *Ledger) simResult(res *execResult, tx *txwire.Transaction, accounts []solana.PublicKey, slot uint64) *SimulateResult {
	sim := &SimulateResult{Slot: slot, Err: res.reject, LoadedAccountsDataSize: res.loaded}
	if res.reject != nil {
		return sim
	}
	m := res.meta
	sim.Err = res.err
	sim.Logs = m.Logs
	sim.UnitsConsumed = m.ComputeUnits
	sim.ReturnData = m.ReturnData
	sim.InnerInstructions = m.InnerInstructions
	sim.Fee = m.Fee
	sim.PreBalances, sim.PostBalances = m.PreBalances, m.PostBalances
	sim.PreTokenBalances, sim.PostTokenBalances = m.PreTokenBalances, m.PostTokenBalances
	if accounts != nil {
		// Agave returns the post-simulation state of the transaction's own
		// accounts and null for the others.
		sim.Accounts = make([]*Account, len(accounts))
		if res.err == nil {
			for i, k := range accounts {
				for j, tk := range res.keys {
					if tk == k && res.work[j].Lamports > 0 {
						sim.Accounts[i] = res.work[j]
					}
				}
			}
		}
	}
	return sim
}
