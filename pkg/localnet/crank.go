package localnet

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/ledger"
	esplprog "github.com/ferry-sh/ferry/pkg/ledger/programs/espl"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// maxCrankTxsPerPass bounds how long one pass cranks before it lets the
// other work (and block notifications) through.
const maxCrankTxsPerPass = 64

// ephemeralNowMs is the ephemeral ledger's clock in unix milliseconds, as
// the crank instruction sees it (the working slot's Clock sysvar).
func (b *bridge) ephemeralNowMs() int64 {
	a, _ := b.p.Ephemeral.Account(spl.SysvarClockID, ledger.Processed)
	if a == nil || len(a.Data) < 40 {
		return 0
	}
	return int64(binary.LittleEndian.Uint64(a.Data[32:40])) * 1000
}

// crank pays out ready queue entries: for each queue it serves, it pops
// the entries whose ready time has come (CrankReadyTransfers on the
// rollup, which burns their claims and schedules the base payouts as
// intents; ephemeralToBase then pays them).
func (b *bridge) crank(ctx context.Context) (bool, error) {
	st, err := b.bridgeState()
	if err != nil {
		return false, err
	}
	work := false
	for _, q := range st.Queues {
		for n := 0; n < maxCrankTxsPerPass; n++ {
			did, err := b.crankOnce(ctx, q)
			if errors.Is(err, errRetry) {
				return work || did, nil
			}
			if err != nil {
				return work, err
			}
			if !did {
				break
			}
			work = true
		}
	}
	return work, nil
}

// crankOnce pops up to MaxCrankEntries ready entries of one queue.
func (b *bridge) crankOnce(ctx context.Context, queue solana.PublicKey) (bool, error) {
	a, _ := b.p.Ephemeral.Account(queue, ledger.Processed)
	if a == nil {
		return false, nil
	}
	// Predict which entries the program will pop by popping from a copy.
	tq, err := espl.OpenTransferQueue(append([]byte(nil), a.Data...))
	if err != nil {
		return false, fmt.Errorf("queue %s: %w", queue, err)
	}
	now := b.ephemeralNowMs()
	var entries []esplprog.CrankEntry
	for len(entries) < esplprog.MaxCrankEntries {
		e, ok := tq.PopReady(now)
		if !ok {
			break
		}
		entries = append(entries, esplprog.CrankEntry{Source: e.Source, GroupID: e.GroupID, Destination: e.DestinationOwner})
	}
	if len(entries) == 0 {
		return false, nil
	}
	h := tq.Header()
	m, _ := b.p.Ephemeral.Account(h.Mint, ledger.Processed)
	if m == nil {
		return false, fmt.Errorf("queue %s: mint %s missing on the rollup", queue, h.Mint)
	}
	ix, err := esplprog.CrankReadyTransfers(b.me, queue, h.Mint, m.Owner, entries)
	if err != nil {
		return false, err
	}
	rec, err := b.sendAs(ctx, stepCrank, b.p.Ephemeral, ix)
	if err != nil {
		return false, err
	}
	if rec.Err != nil {
		if failedAt(rec, 0, esplprog.ErrNothingReady) {
			return false, nil // the slot turned over between the read and the send
		}
		return false, fmt.Errorf("crank queue %s: %v (logs %q)", queue, rec.Err, logsOf(rec))
	}
	return true, nil
}
