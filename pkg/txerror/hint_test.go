package txerror

import (
	"context"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// fixedBalances answers from maps; absent keys are unknown.
type fixedBalances struct {
	lamports map[solana.PublicKey]uint64
	tokens   map[solana.PublicKey]uint64
	missing  map[solana.PublicKey]bool
}

func (f fixedBalances) Lamports(_ context.Context, k solana.PublicKey) (uint64, bool) {
	v, ok := f.lamports[k]
	return v, ok
}

func (f fixedBalances) Token(_ context.Context, k solana.PublicKey) (uint64, uint8, bool, bool) {
	if f.missing[k] {
		return 0, 0, false, true
	}
	v, ok := f.tokens[k]
	return v, 6, ok, ok
}

func TestFundsHint(t *testing.T) {
	payer, src, dst, mint := solana.PublicKey{1}, solana.PublicKey{2}, solana.PublicKey{3}, solana.PublicKey{4}
	compile := func(ix txwire.Instruction) *txwire.Transaction {
		m, err := txwire.Compile(payer, []txwire.Instruction{ix}, solana.Hash{})
		if err != nil {
			t.Fatal(err)
		}
		return &txwire.Transaction{Message: *m}
	}
	tokenTx := compile(spl.TokenTransferChecked(spl.TokenProgramID, src, mint, dst, payer, 5_000_000, 6))
	sysTx := compile(spl.SystemTransfer(payer, dst, 2_000_000_000))
	one := uint32(1)
	tokenErr := &Explained{Instruction: 0, Program: spl.TokenProgramID, Custom: &one, Name: "InsufficientFunds"}
	sysErr := &Explained{Instruction: 0, Program: spl.SystemProgramID, Custom: &one, Name: "ResultWithNegativeLamports"}
	feeErr := &Explained{Instruction: -1, Name: "InsufficientFundsForFee"}
	for _, c := range []struct {
		name string
		ex   *Explained
		tx   *txwire.Transaction
		b    fixedBalances
		want string
	}{
		{"token", tokenErr, tokenTx, fixedBalances{tokens: map[solana.PublicKey]uint64{src: 1_500_000}},
			src.String() + " holds 1.5 (1500000 base units), the instruction moves 5 (5000000 base units)"},
		{"token account missing", tokenErr, tokenTx, fixedBalances{missing: map[solana.PublicKey]bool{src: true}},
			src.String() + " holds 0 (it does not exist yet), the instruction moves 5000000 base units"},
		{"token balance unknown", tokenErr, tokenTx, fixedBalances{}, "the instruction moves 5000000 base units from " + src.String()},
		{"system", sysErr, sysTx, fixedBalances{lamports: map[solana.PublicKey]uint64{payer: 1_000_000_000}},
			payer.String() + " has 1 SOL, the instruction moves 2 SOL"},
		{"fee", feeErr, sysTx, fixedBalances{lamports: map[solana.PublicKey]uint64{payer: 1000}}, "the fee payer " + payer.String() + " has 0.000001 SOL"},
		{"fee unknown", feeErr, sysTx, fixedBalances{}, ""},
		{"other error", &Explained{Instruction: 0, Program: spl.TokenProgramID, Name: "InvalidAccountData"}, tokenTx, fixedBalances{}, ""},
		{"instruction out of range", &Explained{Instruction: 7, Program: spl.TokenProgramID, Custom: &one}, tokenTx, fixedBalances{}, ""},
	} {
		if got := FundsHint(context.Background(), c.ex, c.tx, c.b); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
