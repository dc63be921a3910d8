package cmdutil

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/txerror"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// ExplainProgramError adds to a send's error what the transaction error
// means: the failing instruction's program and error name, and for a lack
// of funds the balance there is and the amount needed (read from the node
// of layer). Other errors are returned unchanged.
func ExplainProgramError(ctx context.Context, err error, tx *txwire.Transaction, base, eph *chainclient.Client, layer string) error {
	var ae *apierr.Error
	if !errors.As(err, &ae) {
		return err
	}
	d, ok := ae.Details.(map[string]any)
	if !ok || d["err"] == nil {
		return err
	}
	raw, jerr := json.Marshal(d["err"])
	if jerr != nil {
		return err
	}
	m := &tx.Message
	programs := make([]solana.PublicKey, len(m.Instructions))
	for i, ci := range m.Instructions {
		if int(ci.ProgramIDIndex) < len(m.AccountKeys) {
			programs[i] = m.AccountKeys[ci.ProgramIDIndex]
		}
	}
	ex, ok := txerror.Explain(raw, programs)
	if !ok {
		return err
	}
	node := base
	if layer == "ephemeral" && eph != nil {
		node = eph
	}
	hint := ex.Text()
	if h := fundsHint(ctx, ex, tx, node); h != "" {
		hint += "; " + h
	}
	c := *ae
	nd := make(map[string]any, len(d)+2)
	for k, v := range d {
		nd[k] = v
	}
	nd["hint"], nd["error"] = hint, ex
	c.Details = nd
	return &c
}

// nodeBalances reads a funds hint's balances from a chain node
// (confirmed), within 5 s.
type nodeBalances struct{ node *chainclient.Client }

func (n nodeBalances) Lamports(ctx context.Context, key solana.PublicKey) (uint64, bool) {
	bal, err := n.node.GetBalance(ctx, key, chainclient.Confirmed)
	return bal, err == nil
}

func (n nodeBalances) Token(ctx context.Context, key solana.PublicKey) (uint64, uint8, bool, bool) {
	b, err := n.node.GetTokenAccountBalance(ctx, key, chainclient.Confirmed)
	if err == nil {
		return b.Amount, b.Decimals, true, true
	}
	if a, aerr := n.node.GetAccountInfo(ctx, key, chainclient.Confirmed); aerr == nil && a == nil {
		return 0, 0, false, true
	}
	return 0, 0, false, false
}

// fundsHint says how much there is and how much is needed, for the
// errors that mean "not enough" (txerror.FundsHint, with the balances
// the node holds now).
func fundsHint(ctx context.Context, ex *txerror.Explained, tx *txwire.Transaction, node *chainclient.Client) string {
	if node == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return txerror.FundsHint(ctx, ex, tx, nodeBalances{node})
}
