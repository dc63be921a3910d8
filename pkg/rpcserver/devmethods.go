package rpcserver

import (
	"context"
	"errors"

	"github.com/ferry-sh/ferry/pkg/ledger"
)

// MethodHaltLedger is the cheat method that halts a development node as a
// full disk would (ledger.Ledger.FailCommits): every later slot commit
// fails, nothing more becomes confirmed, /health and getHealth report it,
// and the payments API answers LEDGER_HALTED. It lets an application test
// its handling of a halted node; restarting ferry serve recovers, from the
// last durable slot.
const MethodHaltLedger = "ferry_haltLedger"

// MethodAdvanceSlot is the cheat method that ends the working slot now,
// whatever the slot clock says (or the next n slots, with {"slots": n}),
// and answers once the last block is durable: {"slot": the last slot that
// ended, "blockhash": the new latest blockhash}. With
// a long --slot-time it moves the chain one block at a time, so tests can
// reproduce what happens across blocks (a durable nonce advancing, a
// lookup table's deactivation cool-down) deterministically.
const MethodAdvanceSlot = "ferry_advanceSlot"

// MaxAdvanceSlots bounds how many slots one ferry_advanceSlot call ends:
// enough to outlast a lookup table's 512-slot deactivation cool-down.
const MaxAdvanceSlots = 1024

// DefaultHaltReason is the failure a halted node reports when
// ferry_haltLedger names none.
const DefaultHaltReason = "simulated disk full (ferry_haltLedger)"

// maxHaltReason bounds the reason a caller may give (it is logged and
// echoed by /health).
const maxHaltReason = 200

// EnableDevMethods registers the development cheat methods of a local
// node: ferry_haltLedger [{"reason"?: string}] returns the reason the
// node will report; ferry_advanceSlot [{"slots"?: n}] ends the working
// slot, or n slots (see MethodAdvanceSlot). Like the faucet they are local-only (browsers may
// call them only from allowed origins).
func (h *Handler) EnableDevMethods() {
	h.HandleLocalOnly(MethodAdvanceSlot, func(ctx context.Context, p Params) (any, error) {
		if err := p.Count(0, 1); err != nil {
			return nil, err
		}
		cfg := struct {
			Slots int `json:"slots"`
		}{Slots: 1}
		if err := p.Config(0, &cfg); err != nil {
			return nil, err
		}
		if cfg.Slots < 1 || cfg.Slots > MaxAdvanceSlots {
			return nil, InvalidParam("Invalid param: slots must be between 1 and %d", MaxAdvanceSlots)
		}
		slot, err := h.l.AdvanceSlots(ctx, cfg.Slots)
		if err != nil {
			return nil, Errorf(CodeInternalError, "advance slot: %v", err)
		}
		bh, _ := h.l.LatestBlockhash(ledger.Processed)
		return map[string]any{"slot": slot, "blockhash": bh.Blockhash.String()}, nil
	})
	h.HandleLocalOnly(MethodHaltLedger, func(_ context.Context, p Params) (any, error) {
		if err := p.Count(0, 1); err != nil {
			return nil, err
		}
		var cfg struct {
			Reason string `json:"reason"`
		}
		if err := p.Config(0, &cfg); err != nil {
			return nil, err
		}
		if len(cfg.Reason) > maxHaltReason {
			return nil, InvalidParam("Invalid param: reason longer than %d bytes", maxHaltReason)
		}
		reason := cfg.Reason
		if reason == "" {
			reason = DefaultHaltReason
		}
		h.l.FailCommits(errors.New(reason))
		return map[string]string{"halting": reason}, nil
	})
}
