package runtime

import (
	"errors"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/txwire"
)

// TestPrivilegedProgram checks what Registration.Privileged relaxes (owner,
// data and size of foreign accounts, spending their lamports, granting
// signer privilege in a CPI) and what it keeps (read-only accounts, the
// balance rule), against the same programs without the flag.
func TestPrivilegedProgram(t *testing.T) {
	payer, acct, other := solana.NewWallet().PublicKey(), solana.NewWallet().PublicKey(), solana.NewWallet().PublicKey()
	cases := []struct {
		name       string
		prog       func(*Context) error
		privileged *InstructionError // error with the flag (nil: success)
		plain      *InstructionError // error without it
	}{
		// Agave checks a program's writes as lamports, data, then owner: the
		// resize fails first.
		{"take ownership and resize", func(c *Context) error {
			a, _ := c.Account(1)
			a.Owner = progA
			a.Data = []byte{1, 2, 3}
			return nil
		}, nil, ErrAccountDataSizeChanged},
		{"take ownership", func(c *Context) error {
			a, _ := c.Account(1)
			a.Owner = progA
			return nil
		}, nil, ErrModifiedProgramID},
		{"spend foreign lamports", func(c *Context) error {
			a, _ := c.Account(0)
			b, _ := c.Account(1)
			a.Lamports -= 10
			b.Lamports += 10
			return nil
		}, nil, ErrExternalAccountLamportSpend},
		{"read-only data stays read-only", func(c *Context) error {
			a, _ := c.Account(2)
			a.Data = []byte{9}
			return nil
		}, ErrReadonlyDataModified, ErrAccountDataSizeChanged},
		{"unbalanced", func(c *Context) error {
			b, _ := c.Account(1)
			b.Lamports += 1
			return nil
		}, ErrUnbalancedInstruction, ErrUnbalancedInstruction},
		{"grant signer in CPI", func(c *Context) error {
			return c.Invoke(txwire.Instruction{ProgramID: progB, Accounts: []txwire.AccountMeta{txwire.Signer(other)}})
		}, nil, ErrPrivilegeEscalation},
	}
	for _, tc := range cases {
		for _, priv := range []bool{true, false} {
			want := tc.plain
			if priv {
				want = tc.privileged
			}
			t.Run(tc.name, func(t *testing.T) {
				var seen bool
				callee := &Registration{ID: progB, Program: ProgramFunc(func(c *Context) error {
					seen = c.IsSigner(other)
					caller, ok := c.CallerID()
					if !ok || caller != progA {
						t.Errorf("CallerID = %s, %v; want %s", caller, ok, progA)
					}
					return nil
				})}
				exec := NewExecutor(&Registration{ID: progA, Program: ProgramFunc(tc.prog), Privileged: priv}, callee)
				tx := testTx(payer, acct, other, progA, progB)
				tx.Accounts[0].Lamports = 100
				ixs := []txwire.CompiledInstruction{{ProgramIDIndex: 3, Accounts: []uint8{0, 1, 2}}}
				err := exec.Run(tx, ixs)
				if want == nil {
					if err != nil {
						t.Fatalf("privileged=%v: unexpected error %v; logs %v", priv, err, tx.Logs)
					}
					if tc.name == "grant signer in CPI" && !seen {
						t.Fatal("callee did not see the granted signer")
					}
					return
				}
				if err == nil || !errors.Is(err, InstructionFailed(0, want)) {
					t.Fatalf("privileged=%v: err = %v, want %v", priv, err, want)
				}
			})
		}
	}
}

// TestCallerIDTopLevel: a top-level instruction has no caller.
func TestCallerIDTopLevel(t *testing.T) {
	var ok bool
	exec := NewExecutor(&Registration{ID: progA, Program: ProgramFunc(func(c *Context) error {
		_, ok = c.CallerID()
		return nil
	})})
	tx := testTx(solana.NewWallet().PublicKey(), progA)
	if err := exec.Run(tx, []txwire.CompiledInstruction{{ProgramIDIndex: 1}}); err != nil {
		t.Fatal(err)
	}
	if ok {
		t.Fatal("top-level instruction reported a caller")
	}
}
