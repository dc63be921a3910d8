package rpcserver

import (
	"context"
	"errors"
)

// MethodHaltLedger is the cheat method that halts a development node as a
// full disk would (ledger.Ledger.FailCommits): every later slot commit
// fails, nothing more becomes confirmed, /health and getHealth report it,
// and the payments API answers LEDGER_HALTED. It lets an application test
// its handling of a halted node; restarting ferry serve recovers, from the
// last durable slot.
const MethodHaltLedger = "ferry_haltLedger"

// DefaultHaltReason is the failure a halted node reports when
// ferry_haltLedger names none.
const DefaultHaltReason = "simulated disk full (ferry_haltLedger)"

// maxHaltReason bounds the reason a caller may give (it is logged and
// echoed by /health).
const maxHaltReason = 200

// EnableDevMethods registers the development cheat methods of a local
// node: ferry_haltLedger [{"reason"?: string}] returns the reason the
// node will report. Like the faucet they are local-only (browsers may call
// them only from allowed origins).
func (h *Handler) EnableDevMethods() {
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
