package txerror

import (
	"context"
	"fmt"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// Balances answers what FundsHint asks about accounts. `ferry send` reads
// them from the node the transaction went to; the explorer from the
// transaction's own pre-balances (its metadata).
type Balances interface {
	// Lamports is key's SOL balance; ok is false when it is unknown.
	Lamports(ctx context.Context, key solana.PublicKey) (lamports uint64, ok bool)
	// Token is the token balance of the token account key: exists is
	// false for an account that does not exist, ok false when unknown.
	Token(ctx context.Context, key solana.PublicKey) (amount uint64, decimals uint8, exists, ok bool)
}

// FundsHint says how much there is and how much is needed, for the errors
// that mean "not enough": a fee payer without SOL, a token transfer over
// the source's balance (SPL Token and Token-2022 error 1), a System
// transfer over the sender's lamports. It returns "" for other errors or
// when b does not know the balance.
func FundsHint(ctx context.Context, ex *Explained, tx *txwire.Transaction, b Balances) string {
	if ex == nil || tx == nil || b == nil {
		return ""
	}
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
		bal, ok := b.Lamports(ctx, payer)
		if !ok {
			return ""
		}
		return fmt.Sprintf("the fee payer %s has %s SOL", payer, spl.UIAmountString(bal, 9))
	case ex.Instruction < 0 || ex.Instruction >= len(m.Instructions):
		return ""
	case ex.Custom != nil && *ex.Custom == 1 && (ex.Program == spl.TokenProgramID || ex.Program == spl.Token2022ProgramID):
		in, err := spl.DecodeToken(m.Instructions[ex.Instruction].Data)
		if err != nil {
			return ""
		}
		src, ok := accountOf(ex.Instruction, 0)
		if !ok {
			return ""
		}
		amount, decimals, exists, ok := b.Token(ctx, src)
		switch {
		case ok && !exists:
			return fmt.Sprintf("%s holds 0 (it does not exist yet), the instruction moves %d base units", src, in.Amount)
		case !ok:
			return fmt.Sprintf("the instruction moves %d base units from %s", in.Amount, src)
		}
		return fmt.Sprintf("%s holds %s (%d base units), the instruction moves %s (%d base units)",
			src, spl.UIAmountString(amount, decimals), amount, spl.UIAmountString(in.Amount, decimals), in.Amount)
	case ex.Custom != nil && *ex.Custom == 1 && ex.Program == spl.SystemProgramID:
		in, err := spl.DecodeSystem(m.Instructions[ex.Instruction].Data)
		if err != nil {
			return ""
		}
		from, ok := accountOf(ex.Instruction, 0)
		if !ok {
			return ""
		}
		bal, ok := b.Lamports(ctx, from)
		if !ok {
			return ""
		}
		return fmt.Sprintf("%s has %s SOL, the instruction moves %s SOL", from, spl.UIAmountString(bal, 9), spl.UIAmountString(in.Lamports, 9))
	}
	return ""
}
