package runtime

import (
	"encoding/binary"
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

// TestBudget pins Agave's compute-budget rules, each case checked against
// LiteSVM (Agave's runtime): the default limit reserves 3 000 units per
// builtin instruction (Compute Budget's own included) and 200 000 per other
// instruction; decoding ignores trailing bytes; a repeated instruction is
// DuplicateInstruction; the heap size is checked after every instruction
// decoded, then a zero loaded-data limit.
func TestBudget(t *testing.T) {
	cb := solana.MustPublicKeyFromBase58("ComputeBudget111111111111111111111111111111")
	payer := solana.NewWallet().PublicKey()
	system := SystemProgramID
	builtin := func(k solana.PublicKey) bool { return k == system }
	limit := func(n uint32) txwire.CompiledInstruction {
		return txwire.CompiledInstruction{ProgramIDIndex: 1, Data: binary.LittleEndian.AppendUint32([]byte{2}, n)}
	}
	price := func(n uint64) txwire.CompiledInstruction {
		return txwire.CompiledInstruction{ProgramIDIndex: 1, Data: binary.LittleEndian.AppendUint64([]byte{3}, n)}
	}
	heap := func(n uint32) txwire.CompiledInstruction {
		return txwire.CompiledInstruction{ProgramIDIndex: 1, Data: binary.LittleEndian.AppendUint32([]byte{1}, n)}
	}
	loaded := func(n uint32) txwire.CompiledInstruction {
		return txwire.CompiledInstruction{ProgramIDIndex: 1, Data: binary.LittleEndian.AppendUint32([]byte{4}, n)}
	}
	other := txwire.CompiledInstruction{ProgramIDIndex: 2}
	sys := txwire.CompiledInstruction{ProgramIDIndex: 3}
	cases := []struct {
		name  string
		ixs   []txwire.CompiledInstruction
		limit uint64
		fee   uint64
		err   *TxError
	}{
		{"explicit limit and price", []txwire.CompiledInstruction{limit(200_000), price(10_000), other}, 200_000, 2000, nil},
		{"price only: 3k for itself, 200k for the program", []txwire.CompiledInstruction{price(1000), other}, 203_000, 203, nil},
		{"builtin reserve", []txwire.CompiledInstruction{price(1_000_000), sys, other}, 206_000, 206_000, nil},
		{"two programs", []txwire.CompiledInstruction{other, other}, 400_000, 0, nil},
		{"limit capped", []txwire.CompiledInstruction{limit(2_000_000), price(1000)}, MaxComputeUnitLimit, 1400, nil},
		{"zero limit", []txwire.CompiledInstruction{limit(0), other}, 0, 0, nil},
		{"trailing bytes ignored", []txwire.CompiledInstruction{{ProgramIDIndex: 1, Data: append(binary.LittleEndian.AppendUint64([]byte{3}, 1000), 7, 7)}, other}, 203_000, 203, nil},
		{"short data", []txwire.CompiledInstruction{{ProgramIDIndex: 1, Data: []byte{2, 1, 2}}}, 0, 0, InstructionFailed(0, ErrInvalidInstructionData)},
		{"unused variant", []txwire.CompiledInstruction{{ProgramIDIndex: 1, Data: make([]byte, 9)}}, 0, 0, InstructionFailed(0, ErrInvalidInstructionData)},
		{"unknown variant", []txwire.CompiledInstruction{{ProgramIDIndex: 1, Data: []byte{9, 1, 2}}}, 0, 0, InstructionFailed(0, ErrInvalidInstructionData)},
		{"duplicate", []txwire.CompiledInstruction{price(1), price(1)}, 0, 0, &TxError{Kind: "DuplicateInstruction", Index: 1}},
		{"duplicate before bad heap", []txwire.CompiledInstruction{heap(1000), price(1), price(1)}, 0, 0, &TxError{Kind: "DuplicateInstruction", Index: 2}},
		{"bad heap", []txwire.CompiledInstruction{heap(512 * 1024)}, 0, 0, InstructionFailed(0, ErrInvalidInstructionData)},
		{"bad heap before zero loaded limit", []txwire.CompiledInstruction{loaded(0), heap(1000)}, 0, 0, InstructionFailed(1, ErrInvalidInstructionData)},
		{"zero loaded limit", []txwire.CompiledInstruction{loaded(0)}, 0, 0, ErrInvalidLoadedAccountsDataSizeLimit},
		{"loaded limit capped", []txwire.CompiledInstruction{loaded(128 << 20), price(1000), other}, 206_000, 206, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := &txwire.Message{AccountKeys: []solana.PublicKey{payer, cb, progA, system}, Instructions: c.ixs}
			b, err := ParseBudget(m, builtin)
			if c.err != nil {
				if err == nil || !errors.Is(err, c.err) || err.Kind != c.err.Kind {
					t.Fatalf("err %v, want %v", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b.UnitLimit != c.limit || b.PriorityFee() != c.fee {
				t.Fatalf("limit %d fee %d, want %d %d", b.UnitLimit, b.PriorityFee(), c.limit, c.fee)
			}
			if b.LoadedDataLimit > MaxLoadedAccountsDataSize || b.LoadedDataLimit == 0 {
				t.Fatalf("loaded data limit %d", b.LoadedDataLimit)
			}
		})
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
