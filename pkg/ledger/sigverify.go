package ledger

import (
	"crypto/rand"
	"runtime"
	"sync"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/oasisprotocol/curve25519-voi/primitives/ed25519"

	"github.com/ferry-sh/ferry/pkg/txwire"
)

// verifyOptions reject small-order public keys and R points and
// non-canonical encodings, like ed25519-dalek's verify_strict that Agave
// uses, but check the cofactored equation, which batch verification
// needs. The two agree on every signature an honest wallet produces; they
// can only differ on crafted keys with a torsion component.
var verifyOptions = &ed25519.Options{Verify: &ed25519.VerifyOptions{}}

// sigVerifier is the signature verification stage. Callers from any
// goroutine hand it transactions; the workers take whatever is waiting (up to maxVerifyBatch signatures) and check it with one batch
// verification, which costs about half as much per signature as checking
// signatures one by one. Under light load a batch is a single transaction,
// so nothing waits for a batch to fill.
type sigVerifier struct {
	jobs chan *verifyJob
	quit chan struct{}
	wg   sync.WaitGroup
	keys [64]keyShard
}

type verifyJob struct {
	tx   *txwire.Transaction
	ok   bool
	done chan struct{}
}

type keyShard struct {
	mu sync.Mutex
	m  map[solana.PublicKey]*ed25519.ExpandedPublicKey
}

// keysPerShard bounds the expanded key cache at 64 × 256 keys (an expanded
// key takes about 1.5 KiB, so 24 MiB); a full shard is simply emptied.
const keysPerShard = 256

const maxVerifyBatch = 128

// verifyWorkers is half the cores: with fewer workers than cores,
// requests queue up while a batch is being checked, so batches form by
// themselves under load instead of every worker grabbing single
// signatures; when idle, a lone request is checked at once.
func verifyWorkers() int { return max(1, runtime.GOMAXPROCS(0)/2) }

func newSigVerifier() *sigVerifier {
	v := &sigVerifier{jobs: make(chan *verifyJob, 4096), quit: make(chan struct{})}
	for i := 0; i < verifyWorkers(); i++ {
		v.wg.Add(1)
		go v.work()
	}
	return v
}

func (v *sigVerifier) stop() {
	close(v.quit)
	v.wg.Wait()
}

// expanded returns the cached expanded form of a key (point decompression
// and precomputed tables), or nil if it is not a valid point.
func (v *sigVerifier) expanded(k solana.PublicKey) *ed25519.ExpandedPublicKey {
	s := &v.keys[k[0]&63]
	s.mu.Lock()
	e, ok := s.m[k]
	s.mu.Unlock()
	if ok {
		return e
	}
	e, err := ed25519.NewExpandedPublicKey(k[:])
	if err != nil {
		e = nil
	}
	s.mu.Lock()
	if s.m == nil || len(s.m) >= keysPerShard {
		s.m = make(map[solana.PublicKey]*ed25519.ExpandedPublicKey, 64)
	}
	s.m[k] = e
	s.mu.Unlock()
	return e
}

// verify reports whether every required signature of tx is valid. It
// returns false if the ledger is closing.
func (v *sigVerifier) verify(tx *txwire.Transaction) bool {
	j := &verifyJob{tx: tx, done: make(chan struct{})}
	select {
	case v.jobs <- j:
	case <-v.quit:
		return false
	}
	select {
	case <-j.done:
		return j.ok
	case <-v.quit:
		return false
	}
}

// verifyAll checks many transactions; ok[i] is false for nil entries.
func (v *sigVerifier) verifyAll(txs []*txwire.Transaction) []bool {
	jobs := make([]verifyJob, len(txs))
	ok := make([]bool, len(txs))
	for i, tx := range txs {
		if tx == nil {
			continue
		}
		jobs[i] = verifyJob{tx: tx, done: make(chan struct{})}
		select {
		case v.jobs <- &jobs[i]:
		case <-v.quit:
			return ok
		}
	}
	for i := range jobs {
		if jobs[i].done == nil {
			continue
		}
		select {
		case <-jobs[i].done:
			ok[i] = jobs[i].ok
		case <-v.quit:
			return ok
		}
	}
	return ok
}

// Batching under load: once requests arrive faster than lingerRate per
// second, a worker that has fewer than fillSigs signatures in hand waits
// up to maxLinger (or the time fillSigs take to arrive, if shorter) for
// more. Batch verification of 16+ signatures costs 35-50% less per
// signature than single checks, which pays for the wait many times over.
const (
	lingerRate = 2000.0
	fillSigs   = 16
	maxLinger  = time.Millisecond
	rateWindow = 20 * time.Millisecond
)

func (v *sigVerifier) work() {
	defer v.wg.Done()
	batch := make([]*verifyJob, 0, maxVerifyBatch)
	bv := ed25519.NewBatchVerifierWithCapacity(maxVerifyBatch)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var rate float64 // jobs per second seen by this worker
	windowStart, windowJobs := time.Now(), 0
	for {
		select {
		case j := <-v.jobs:
			batch = append(batch[:0], j)
		case <-v.quit:
			return
		}
		sigs := len(batch[0].tx.Signatures)
		var linger <-chan time.Time
		if rate > lingerRate {
			timer.Reset(min(maxLinger, time.Duration(float64(fillSigs)/rate*float64(time.Second))))
			linger = timer.C
		}
	fill:
		for sigs < maxVerifyBatch {
			select {
			case j := <-v.jobs:
				batch = append(batch, j)
				sigs += len(j.tx.Signatures)
				continue
			default:
			}
			if linger == nil || sigs >= fillSigs {
				break
			}
			select {
			case j := <-v.jobs:
				batch = append(batch, j)
				sigs += len(j.tx.Signatures)
			case <-linger:
				linger = nil
				break fill
			case <-v.quit:
				return
			}
		}
		if linger != nil {
			// Go 1.23+ timers never deliver a stale value after Stop or
			// Reset, so there is nothing to drain.
			timer.Stop()
		}
		v.check(bv.Reset(), batch)
		for _, j := range batch {
			close(j.done)
		}
		windowJobs += len(batch)
		if el := time.Since(windowStart); el >= rateWindow {
			rate = float64(windowJobs) / el.Seconds()
			windowStart, windowJobs = time.Now(), 0
		}
	}
}

// minBatch is the smallest batch worth a batch verification; below it
// signatures are checked one by one.
const minBatch = 4

// check verifies a batch and sets each job's result. Jobs with malformed
// signer lists or invalid keys fail without entering the batch.
func (v *sigVerifier) check(bv *ed25519.BatchVerifier, batch []*verifyJob) {
	type span struct{ job, from, to int }
	spans := make([]span, 0, len(batch))
	n := 0
	for i, j := range batch {
		signers := j.tx.Message.Signers()
		if len(signers) != len(j.tx.Signatures) || len(signers) == 0 {
			continue
		}
		exp := make([]*ed25519.ExpandedPublicKey, len(signers))
		valid := true
		for s, k := range signers {
			if exp[s] = v.expanded(k); exp[s] == nil {
				valid = false
				break
			}
		}
		if !valid {
			continue
		}
		msg := j.tx.MessageBytes()
		if len(batch) == 1 && len(signers) < minBatch {
			ok := true
			for s := range signers {
				ok = ok && ed25519.VerifyExpandedWithOptions(exp[s], msg, j.tx.Signatures[s][:], verifyOptions)
			}
			j.ok = ok
			return
		}
		for s := range signers {
			bv.AddExpandedWithOptions(exp[s], msg, j.tx.Signatures[s][:], verifyOptions)
		}
		spans = append(spans, span{i, n, n + len(signers)})
		n += len(signers)
	}
	if n == 0 {
		return
	}
	all, each := bv.Verify(rand.Reader)
	for _, s := range spans {
		ok := true
		if !all {
			for _, e := range each[s.from:s.to] {
				ok = ok && e
			}
		}
		batch[s.job].ok = ok
	}
}
