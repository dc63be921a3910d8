package cmdutil

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/spl"
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

// fundsHint says how much there is and how much is needed, for the
// errors that mean "not enough".
func fundsHint(ctx context.Context, ex *txerror.Explained, tx *txwire.Transaction, node *chainclient.Client) string {
	if node == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	m := &tx.Message
	accountOf := func(ix, j int) (solana.PublicKey, bool) {
		if ix < 0 || ix >= len(m.Instructions) || j >= len(m.Instructions[ix].Accounts) {
			return solana.PublicKey{}, false
		}
		k := int(m.Instructions[ix].Accounts[j])
		if k >= len(m.AccountKeys) {
			return solana.PublicKey{}, false
		}
		return m.AccountKeys[k], true
	}
	switch {
	case ex.Instruction < 0 && (ex.Name == "InsufficientFundsForFee" || ex.Name == "AccountNotFound"):
		if len(m.AccountKeys) == 0 {
			return ""
		}
		payer := m.AccountKeys[0]
		bal, err := node.GetBalance(ctx, payer, chainclient.Confirmed)
		if err != nil {
			return ""
		}
		return fmt.Sprintf("the fee payer %s has %s SOL", payer, spl.UIAmountString(bal, 9))
	case ex.Custom != nil && *ex.Custom == 1 && (ex.Program == spl.TokenProgramID || ex.Program == spl.Token2022ProgramID):
		in, err := spl.DecodeToken(m.Instructions[ex.Instruction].Data)
		if err != nil {
			return ""
		}
		src, ok := accountOf(ex.Instruction, 0)
		if !ok {
			return ""
		}
		b, err := node.GetTokenAccountBalance(ctx, src, chainclient.Confirmed)
		if err != nil {
			if a, aerr := node.GetAccountInfo(ctx, src, chainclient.Confirmed); aerr == nil && a == nil {
				return fmt.Sprintf("%s holds 0 (it does not exist yet), the instruction moves %d base units", src, in.Amount)
			}
			return fmt.Sprintf("the instruction moves %d base units from %s", in.Amount, src)
		}
		return fmt.Sprintf("%s holds %s (%d base units), the instruction moves %s (%d base units)",
			src, FormatUIAmount(b.Amount, b.Decimals), b.Amount, FormatUIAmount(in.Amount, b.Decimals), in.Amount)
	case ex.Custom != nil && *ex.Custom == 1 && ex.Program == spl.SystemProgramID:
		in, err := spl.DecodeSystem(m.Instructions[ex.Instruction].Data)
		if err != nil {
			return ""
		}
		from, ok := accountOf(ex.Instruction, 0)
		if !ok {
			return ""
		}
		bal, err := node.GetBalance(ctx, from, chainclient.Confirmed)
		if err != nil {
			return ""
		}
		return fmt.Sprintf("%s has %s SOL, the instruction moves %s SOL", from, spl.UIAmountString(bal, 9), spl.UIAmountString(in.Lamports, 9))
	}
	return ""
}
