package txerror

import (
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/spl"
)

func TestExplain(t *testing.T) {
	progs := []solana.PublicKey{spl.ComputeBudgetProgramID, spl.TokenProgramID, spl.SystemProgramID, espl.ProgramID}
	for _, c := range []struct {
		in   string
		text string
	}{
		{`{"InstructionError":[1,{"Custom":1}]}`, "SPL Token program error InsufficientFunds (custom program error 0x1) in instruction 1: the source account holds fewer tokens than the instruction moves"},
		{`{"InstructionError":[2,{"Custom":1}]}`, "System program error ResultWithNegativeLamports (custom program error 0x1) in instruction 2: the account has fewer lamports (SOL) than the instruction moves"},
		{`{"InstructionError":[3,{"Custom":106}]}`, "Ephemeral SPL Token program error InvalidQueue (custom program error 0x6a) in instruction 3: the transfer queue is missing or not delegated (run ferry init-mint for this mint)"},
		{`{"InstructionError":[3,{"Custom":7}]}`, "Ephemeral SPL Token program error Custom(7) (custom program error 0x7) in instruction 3"},
		{`{"InstructionError":[0,"MissingRequiredSignature"]}`, "Compute Budget program error MissingRequiredSignature in instruction 0: a required signature is missing"},
		{`{"InstructionError":[9,{"Custom":1}]}`, "unknown program error Custom(1) (custom program error 0x1) in instruction 9"},
		{`"BlockhashNotFound"`, "BlockhashNotFound: the blockhash expired or belongs to the other layer: rebuild and send again"},
		{`"InsufficientFundsForFee"`, "InsufficientFundsForFee: the fee payer has too few lamports for the fee"},
		{`{"InsufficientFundsForRent":{"account_index":2}}`, "InsufficientFundsForRent: an account would be left below rent exemption"},
	} {
		ex, ok := Explain([]byte(c.in), progs)
		if !ok || ex.Text() != c.text {
			t.Errorf("%s:\n got %v %q\nwant %q", c.in, ok, textOf(ex), c.text)
		}
	}
	for _, bad := range []string{`null`, `{}`, `{"InstructionError":[0]}`, `{"InstructionError":[-1,"X"]}`, `[1,2]`, `{"a":1,"b":2}`} {
		if _, ok := Explain([]byte(bad), progs); ok {
			t.Errorf("%s explained", bad)
		}
	}
}

func textOf(e *Explained) string {
	if e == nil {
		return ""
	}
	return e.Text()
}
