package localnet

import (
	"context"
	"fmt"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/delegation"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/magic"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// magicContext reads the Magic context at a commitment level.
func (b *bridge) magicContext(c ledger.Commitment) (*magic.Context, error) {
	a, _ := b.p.Ephemeral.Account(magic.ContextID, c)
	if a == nil {
		return nil, fmt.Errorf("magic context missing from the ephemeral ledger")
	}
	return magic.DecodeContext(a.Data)
}

// guard is the id of the last intent executed on base, at a commitment
// level.
func (b *bridge) guard(c ledger.Commitment) uint64 {
	a, _ := b.p.Base.Account(delegation.GuardAddress(b.me), c)
	if a == nil {
		return 0
	}
	g, err := delegation.DecodeGuard(a.Data)
	if err != nil {
		return 0
	}
	return g.LastIntentID
}

// ephemeralToBase executes, in id order, the intents of the confirmed
// Magic context that the base guard has not seen: each in one base
// transaction that first advances the guard, so it lands exactly once.
func (b *bridge) ephemeralToBase(ctx context.Context) (bool, error) {
	mc, err := b.magicContext(ledger.Confirmed)
	if err != nil {
		return false, err
	}
	done := b.guard(ledger.Processed)
	work := false
	for _, it := range mc.Intents {
		if it.ID <= done {
			continue
		}
		if err := ctx.Err(); err != nil {
			return work, err
		}
		if err := b.executeIntent(ctx, it); err != nil {
			return work, fmt.Errorf("intent %d (%s of %s): %w", it.ID, it.Kind, it.Account, err)
		}
		work = true
	}
	return work, nil
}

func (b *bridge) executeIntent(ctx context.Context, it magic.Intent) error {
	ixs := []txwire.Instruction{delegation.IntentGuard(b.me, it.ID)}
	switch it.Kind {
	case magic.KindCommit:
		ixs = append(ixs, delegation.CommitState(b.me, it.Account, it.Data))
	case magic.KindCommitAndUndelegate:
		payer, err := b.rentPayer(it.Account)
		if err != nil {
			return b.skipIntent(ctx, it, err)
		}
		ixs = append(ixs, delegation.CommitAndUndelegate(delegation.CommitAndUndelegateArgs{
			Validator: b.me, Account: it.Account, OwnerProgram: it.Owner, RentPayer: payer, Data: it.Data,
		}))
	}
	if it.Action != nil {
		if err := b.checkAction(it); err != nil {
			return b.skipIntent(ctx, it, err)
		}
		ixs = append(ixs, it.Action.Instruction())
	}
	rec, err := b.sendAs(ctx, intentStep(it), b.p.Base, ixs...)
	if err != nil {
		return err
	}
	switch {
	case rec.Err == nil:
		delete(b.failing, it.ID)
	case failedAt(rec, 0, delegation.ErrIntentAlreadyExecuted):
		return nil
	default:
		// Skipping would lose what the intent carries (a payout already
		// burned on the rollup, a drained balance), so it is retried, and
		// the intents after it wait: a stuck validator with a loud log is
		// better than lost tokens.
		b.failing[it.ID]++
		if n := b.failing[it.ID]; n == 1 || n%100 == 0 {
			b.log.Error("intent failed on base; retrying", "intent", it.ID, "kind", it.Kind, "attempts", n, "err", rec.Err, "logs", logsOf(rec))
		}
		return fmt.Errorf("base transaction failed: %v", rec.Err)
	}
	if it.Kind == magic.KindCommitAndUndelegate {
		return b.evict(ctx, it)
	}
	return nil
}

// checkAction applies the rules the Magic program enforced when the
// action was scheduled, again, before the validator signs it on base.
func (b *bridge) checkAction(it magic.Intent) error {
	if it.Action.ProgramID != it.Owner {
		return fmt.Errorf("base action program %s is not the scheduling program %s", it.Action.ProgramID, it.Owner)
	}
	for _, m := range it.Action.Accounts {
		if m.IsSigner && m.PublicKey != b.me {
			return fmt.Errorf("base action signer %s is not the validator", m.PublicKey)
		}
	}
	return nil
}

// rentPayer is the payer recorded in a delegation's metadata on base.
func (b *bridge) rentPayer(account solana.PublicKey) (solana.PublicKey, error) {
	mk, _ := espl.FindDelegationMetadata(account)
	a, _ := b.p.Base.Account(mk, ledger.Processed)
	if a == nil {
		return solana.PublicKey{}, fmt.Errorf("%s has no delegation metadata on base", account)
	}
	md, err := espl.DecodeDelegationMetadata(a.Data)
	if err != nil {
		return solana.PublicKey{}, err
	}
	return md.RentPayer, nil
}

// skipIntent gives up on an intent that can never execute (an action the
// validator must not sign, an account that is not delegated on base): the
// guard moves past it so the intents after it still run, and the failure
// is logged.
func (b *bridge) skipIntent(ctx context.Context, it magic.Intent, cause error) error {
	b.log.Error("intent cannot execute on base; skipping it", "intent", it.ID, "kind", it.Kind, "account", it.Account, "err", cause)
	rec, err := b.send(ctx, b.p.Base, delegation.IntentGuard(b.me, it.ID))
	if err != nil {
		return err
	}
	if rec.Err != nil && !failedAt(rec, 0, delegation.ErrIntentAlreadyExecuted) {
		return fmt.Errorf("skip intent %d: %v", it.ID, rec.Err)
	}
	return nil
}

// evict removes an undelegated account and what its intent named (its
// drained projection, a shuttle's metadata) from the ephemeral ledger:
// they belong to base again.
func (b *bridge) evict(ctx context.Context, it magic.Intent) error {
	keys := append([]solana.PublicKey{it.Account}, it.Evict...)
	_, err := b.p.Ephemeral.Apply(ctx, func(w ledger.AccountWriter) error {
		for _, k := range keys {
			w.Set(k, nil)
		}
		return nil
	})
	return err
}

// accept drops from the Magic context the intents whose execution on
// base is durable (the confirmed guard), so the context stays small.
func (b *bridge) accept(ctx context.Context) (bool, error) {
	done := b.guard(ledger.Confirmed)
	if done == 0 {
		return false, nil
	}
	mc, err := b.magicContext(ledger.Processed)
	if err != nil {
		return false, err
	}
	if len(mc.Intents) == 0 || mc.Intents[0].ID > done {
		return false, nil
	}
	rec, err := b.sendAs(ctx, stepAccept, b.p.Ephemeral, magic.AcceptIntents(b.me, done))
	if err != nil {
		return false, err
	}
	if rec.Err != nil {
		return false, fmt.Errorf("accept intents up to %d: %v", done, rec.Err)
	}
	return true, nil
}
