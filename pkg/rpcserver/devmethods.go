package rpcserver

import (
	"context"
	"errors"

	"github.com/ferry-sh/ferry/pkg/devchain"
	"github.com/ferry-sh/ferry/pkg/ledger"
)

// MethodHaltLedger is the cheat method that halts a development node as a
// full disk would (devchain.Node.Halt).
const MethodHaltLedger = devchain.MethodHaltLedger

// EnableDevMethods registers a development node's cheatcodes and rollup
// controls (devchain.Node.Methods, devchain.Rollup.Methods) under each of
// their names. Like the faucet they are local-only: browsers may call them
// only from Options.FaucetOrigins. A node that never calls it (a gateway,
// or ferry serve --no-cheatcodes) answers -32601 Method not found.
func (h *Handler) EnableDevMethods(methods []devchain.Method) {
	for _, m := range methods {
		call := m.Call
		rpc := func(ctx context.Context, p Params) (any, error) {
			res, err := call(ctx, p)
			if err != nil {
				return nil, devError(err)
			}
			if res.Context {
				return h.wrap(res.Slot, res.Value), nil
			}
			return res.Value, nil
		}
		for _, name := range m.Names {
			h.HandleLocalOnly(name, rpc)
		}
	}
}

// devError turns a cheatcode's refusal into its JSON-RPC error; parameter
// errors of Params are already *Error.
func devError(err error) error {
	var de *devchain.Error
	if errors.As(err, &de) {
		return &Error{Code: de.Code, Message: de.Message, Data: de.Data}
	}
	return err
}

// AccountEncoder renders accounts for the cheatcodes exactly as
// getAccountInfo does (jsonParsed token accounts read their mint at
// processed commitment).
func (h *Handler) AccountEncoder() devchain.AccountEncoder {
	return func(a *ledger.Account, enc string) (any, error) {
		ui, err := encodeAccount(a, enc, nil, h.mintReader(ledger.Processed))
		if err != nil {
			var e *Error
			if errors.As(err, &e) {
				return nil, &devchain.Error{Code: e.Code, Message: e.Message, Data: e.Data}
			}
			return nil, err
		}
		return ui, nil
	}
}
