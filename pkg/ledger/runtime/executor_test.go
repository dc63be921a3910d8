package runtime

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/txwire"
)

var (
	progA = solana.MustPublicKeyFromBase58("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
	progB = solana.MustPublicKeyFromBase58("BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB")
)

// testTx builds a TxContext with the given keys; index 0 is a writable signer.
func testTx(keys ...solana.PublicKey) *TxContext {
	tx := &TxContext{Keys: keys, ComputeLimit: 400_000, Env: Env{Rent: DefaultRent}}
	for i := range keys {
		tx.Accounts = append(tx.Accounts, &Account{Owner: SystemProgramID})
		tx.Signer = append(tx.Signer, i == 0)
		tx.Writable = append(tx.Writable, i == 0 || i == 1)
	}
	return tx
}

func TestExecutorOwnershipRules(t *testing.T) {
	payer, acct := solana.NewWallet().PublicKey(), solana.NewWallet().PublicKey()
	cases := []struct {
		name string
		prog func(*Context) error
		want *InstructionError
	}{
		{"ok-owned-data-write", func(c *Context) error {
			a, _ := c.Account(1)
			a.Data[0] = 7
			return nil
		}, nil},
		{"external-data", func(c *Context) error {
			a, _ := c.Account(0)
			a.Data = []byte{1}
			return nil
		}, ErrAccountDataSizeChanged},
		{"external-spend", func(c *Context) error {
			a, _ := c.Account(0)
			b, _ := c.Account(1)
			a.Lamports -= 10
			b.Lamports += 10
			return nil
		}, ErrExternalAccountLamportSpend},
		{"unbalanced", func(c *Context) error {
			b, _ := c.Account(1)
			b.Lamports += 10
			return nil
		}, ErrUnbalancedInstruction},
		{"custom", func(c *Context) error { return Custom(1) }, Custom(1)},
		{"not-enough-keys", func(c *Context) error { _, err := c.Account(5); return err }, ErrNotEnoughAccountKeys},
		{"plain-error", func(c *Context) error { return errors.New("boom") }, ErrGenericError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			exec := NewExecutor(&Registration{ID: progA, Program: ProgramFunc(tc.prog)})
			tx := testTx(payer, acct, progA)
			tx.Accounts[0].Lamports = 100
			tx.Accounts[1] = &Account{Owner: progA, Data: []byte{0}, Lamports: 50}
			ixs := []txwire.CompiledInstruction{{ProgramIDIndex: 2, Accounts: []uint8{0, 1}}}
			err := exec.Run(tx, ixs)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("unexpected error %v; logs %v", err, tx.Logs)
				}
				return
			}
			if err == nil || !errors.Is(err, InstructionFailed(0, tc.want)) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			last := tx.Logs[len(tx.Logs)-1]
			if !strings.HasSuffix(last, "failed: "+tc.want.Error()) {
				t.Fatalf("last log %q", last)
			}
		})
	}
}

func TestInvokePrivilegesAndPDASigner(t *testing.T) {
	payer, other := solana.NewWallet().PublicKey(), solana.NewWallet().PublicKey()
	seeds := [][]byte{[]byte("vault")}
	pda, bump, _ := solana.FindProgramAddress(seeds, progA)
	var sawSigner bool
	callee := ProgramFunc(func(c *Context) error {
		a, err := c.Account(0)
		if err != nil {
			return err
		}
		sawSigner = a.IsSigner
		return nil
	})
	mode := ""
	caller := ProgramFunc(func(c *Context) error {
		switch mode {
		case "pda":
			return c.Invoke(txwire.Instruction{ProgramID: progB, Accounts: []txwire.AccountMeta{txwire.Signer(pda)}}, [][]byte{seeds[0], {bump}})
		case "escalate-signer":
			return c.Invoke(txwire.Instruction{ProgramID: progB, Accounts: []txwire.AccountMeta{txwire.Signer(other)}})
		case "escalate-writable":
			return c.Invoke(txwire.Instruction{ProgramID: progB, Accounts: []txwire.AccountMeta{txwire.Writable(other)}})
		case "unknown-account":
			return c.Invoke(txwire.Instruction{ProgramID: progB, Accounts: []txwire.AccountMeta{txwire.Readonly(solana.NewWallet().PublicKey())}})
		}
		return nil
	})
	for _, tc := range []struct {
		mode string
		want *InstructionError
	}{{"pda", nil}, {"escalate-signer", ErrPrivilegeEscalation}, {"escalate-writable", ErrPrivilegeEscalation}, {"unknown-account", ErrMissingAccount}} {
		t.Run(tc.mode, func(t *testing.T) {
			mode = tc.mode
			sawSigner = false
			exec := NewExecutor(&Registration{ID: progA, Program: caller}, &Registration{ID: progB, Program: callee})
			tx := testTx(payer, pda, other, progA, progB)
			tx.Writable[2] = false
			ixs := []txwire.CompiledInstruction{{ProgramIDIndex: 3, Accounts: []uint8{0, 1, 2, 4}}}
			err := exec.Run(tx, ixs)
			if tc.want == nil {
				if err != nil || !sawSigner {
					t.Fatalf("err=%v signer=%v logs=%v", err, sawSigner, tx.Logs)
				}
				if len(tx.Inner) != 1 || tx.Inner[0].Instructions[0].StackHeight != 2 {
					t.Fatalf("inner = %+v", tx.Inner)
				}
				if !strings.Contains(strings.Join(tx.Logs, "\n"), "Program "+progB.String()+" invoke [2]") {
					t.Fatalf("logs %v", tx.Logs)
				}
				return
			}
			if !errors.Is(err, InstructionFailed(0, tc.want)) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestTxErrorJSON(t *testing.T) {
	cases := []struct {
		err  *TxError
		json string
		text string
	}{
		{InstructionFailed(0, Custom(1)), `{"InstructionError":[0,{"Custom":1}]}`, "Error processing Instruction 0: custom program error: 0x1"},
		{InstructionFailed(2, ErrInvalidAccountData), `{"InstructionError":[2,"InvalidAccountData"]}`, "Error processing Instruction 2: invalid account data for instruction"},
		{InsufficientFundsForRent(1), `{"InsufficientFundsForRent":{"account_index":1}}`, "Transaction results in an account (1) with insufficient funds for rent"},
		{ErrBlockhashNotFound, `"BlockhashNotFound"`, "Blockhash not found"},
		{&TxError{Kind: "DuplicateInstruction", Index: 3}, `{"DuplicateInstruction":3}`, "Transaction contains a duplicate instruction (3) that is not allowed"},
	}
	for _, c := range cases {
		b, err := json.Marshal(c.err)
		if err != nil || string(b) != c.json {
			t.Errorf("marshal %v = %s, %v; want %s", c.err, b, err, c.json)
		}
		if c.err.Error() != c.text {
			t.Errorf("text = %q, want %q", c.err.Error(), c.text)
		}
		var back TxError
		if err := json.Unmarshal(b, &back); err != nil || !errors.Is(&back, c.err) {
			t.Errorf("round trip of %s = %+v, %v", b, back, err)
		}
	}
}

func TestBudget(t *testing.T) {
	cb := solana.MustPublicKeyFromBase58("ComputeBudget111111111111111111111111111111")
	payer := solana.NewWallet().PublicKey()
	m := &txwire.Message{AccountKeys: []solana.PublicKey{payer, cb, progA}, Instructions: []txwire.CompiledInstruction{
		{ProgramIDIndex: 1, Data: []byte{2, 0x40, 0x0d, 0x03, 0x00}},       // limit 200_000
		{ProgramIDIndex: 1, Data: []byte{3, 0x10, 0x27, 0, 0, 0, 0, 0, 0}}, // price 10_000 µlamports
		{ProgramIDIndex: 2},
	}}
	b, err := ParseBudget(m)
	if err != nil {
		t.Fatal(err)
	}
	if b.UnitLimit != 200_000 || b.PriorityFee() != 2000 {
		t.Fatalf("budget %+v fee %d", b, b.PriorityFee())
	}
	m.Instructions = m.Instructions[2:]
	m.Instructions = append(m.Instructions, m.Instructions[0])
	if b, _ := ParseBudget(m); b.UnitLimit != 400_000 {
		t.Fatalf("default limit %d", b.UnitLimit)
	}
}

// TestInvokeAttributesChangesToCallee checks that what a callee changes is
// verified against the callee, not the caller (a caller may CPI into the
// owner of an account to move its lamports), while the caller's own changes
// are still checked and the balance rule covers the whole instruction.
func TestInvokeAttributesChangesToCallee(t *testing.T) {
	payer, x, y := solana.NewWallet().PublicKey(), solana.NewWallet().PublicKey(), solana.NewWallet().PublicKey()
	mover := ProgramFunc(func(c *Context) error { // progB: moves 10 lamports from account 0 to 1
		a, _ := c.Account(0)
		b, _ := c.Account(1)
		a.Lamports -= 10
		b.Lamports += 10
		return nil
	})
	cpi := txwire.Instruction{ProgramID: progB, Accounts: []txwire.AccountMeta{txwire.Writable(x), txwire.Writable(y)}}
	cases := []struct {
		name   string
		caller func(*Context) error
		want   *InstructionError
	}{
		{"callee-moves-lamports", func(c *Context) error { return c.Invoke(cpi) }, nil},
		{"caller-spends-before-cpi", func(c *Context) error {
			a, _ := c.Account(1)
			b, _ := c.Account(2)
			a.Lamports -= 1
			b.Lamports += 1
			return c.Invoke(cpi)
		}, ErrExternalAccountLamportSpend},
		{"caller-spends-after-cpi", func(c *Context) error {
			if err := c.Invoke(cpi); err != nil {
				return err
			}
			a, _ := c.Account(1)
			b, _ := c.Account(2)
			a.Lamports -= 1
			b.Lamports += 1
			return nil
		}, ErrExternalAccountLamportSpend},
		{"caller-mints-after-cpi", func(c *Context) error {
			if err := c.Invoke(cpi); err != nil {
				return err
			}
			b, _ := c.Account(2)
			b.Lamports += 1
			return nil
		}, ErrUnbalancedInstruction},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			exec := NewExecutor(&Registration{ID: progA, Program: ProgramFunc(tc.caller)}, &Registration{ID: progB, Program: mover})
			tx := testTx(payer, x, y, progA, progB)
			tx.Writable[2] = true
			tx.Accounts[1] = &Account{Owner: progB, Lamports: 100}
			tx.Accounts[2] = &Account{Owner: progB, Lamports: 100}
			err := exec.Run(tx, []txwire.CompiledInstruction{{ProgramIDIndex: 3, Accounts: []uint8{0, 1, 2, 4}}})
			if tc.want == nil {
				if err != nil {
					t.Fatalf("err = %v; logs %v", err, tx.Logs)
				}
				if tx.Accounts[1].Lamports != 90 || tx.Accounts[2].Lamports != 110 {
					t.Fatalf("balances %d %d", tx.Accounts[1].Lamports, tx.Accounts[2].Lamports)
				}
				return
			}
			if !errors.Is(err, InstructionFailed(0, tc.want)) {
				t.Fatalf("err = %v, want %v; logs %v", err, tc.want, tx.Logs)
			}
		})
	}
}
