// Package programtest runs native programs through runtime.Executor the way
// the ledger does, so program tests need only an account set and some
// instructions:
//
//	h := programtest.New(t, programs.Builtins()...)
//	h.Fund(payer, 10*programtest.SOL)
//	res := h.Run(payer, spl.SystemTransfer(payer, to, 5_000_000))
//	res.RequireSuccess(t)
//
// Run compiles the instructions with txwire.Compile (web3.js rules), loads
// the referenced accounts from the harness (a missing account is a
// zero-lamport System account), derives the compute budget from the message,
// executes, applies the rent-state rule to writable accounts, and commits the
// working copies only on success. Fees and signatures are out of scope: every
// signer in the message counts as having signed.
//
// Use it from external test packages (package foo_test) so that test-only
// imports such as the aggregate programs package cannot form a cycle.
package programtest

import (
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// SOL is one SOL in lamports.
const SOL = 1_000_000_000

// Harness holds an account set and an executor. It is not safe for
// concurrent use; create one per test.
type Harness struct {
	tb testing.TB

	// Exec runs the instructions; register extra programs with Exec.Register
	// and mark their ids executable with AddProgram.
	Exec *runtime.Executor
	// Accounts is the committed state. Tests may read and edit it directly.
	Accounts map[solana.PublicKey]*runtime.Account
	// Env is passed to every transaction (rent, slot, clock).
	Env runtime.Env
	// ComputeLimit, when non-zero, replaces the budget derived from the
	// message's Compute Budget instructions.
	ComputeLimit uint64
	// CheckRent applies the ledger's rent-state rule after execution (on by
	// default): every writable account must end rent-exempt, at zero
	// lamports, or rent-paying no worse than before.
	CheckRent bool

	panics []string
}

// New returns a harness whose executor runs regs; each program id is loaded
// as an executable account. The environment uses runtime.DefaultRent, slot 1
// and a fixed Unix timestamp.
func New(tb testing.TB, regs ...*runtime.Registration) *Harness {
	tb.Helper()
	h := &Harness{
		tb:        tb,
		Exec:      runtime.NewExecutor(),
		Accounts:  map[solana.PublicKey]*runtime.Account{},
		Env:       runtime.Env{Slot: 1, UnixTimestamp: 1_700_000_000, Rent: runtime.DefaultRent},
		CheckRent: true,
	}
	for _, r := range regs {
		h.AddProgram(r)
	}
	return h
}

// AddProgram registers r and loads its id as an executable account. A
// panic inside the program fails the test (with its stack), even if the
// runtime recovers it into a failed instruction.
func (h *Harness) AddProgram(r *runtime.Registration) {
	wrapped := *r
	inner := r.Program
	wrapped.Program = runtime.ProgramFunc(func(c *runtime.Context) error {
		defer func() {
			if p := recover(); p != nil {
				h.panics = append(h.panics, fmt.Sprintf("program %s panicked: %v\n%s", r.ID, p, debug.Stack()))
				panic(p)
			}
		}()
		return inner.Execute(c)
	})
	h.Exec.Register(&wrapped)
	h.Accounts[r.ID] = &runtime.Account{Lamports: 1, Owner: runtime.NativeLoaderID, Executable: true}
}

// Account returns the committed account at key, or nil if it does not exist.
func (h *Harness) Account(key solana.PublicKey) *runtime.Account { return h.Accounts[key] }

// SetAccount stores a copy of a at key.
func (h *Harness) SetAccount(key solana.PublicKey, a runtime.Account) {
	h.Accounts[key] = a.Clone()
}

// Lamports is the balance of key (0 if it does not exist).
func (h *Harness) Lamports(key solana.PublicKey) uint64 {
	if a := h.Accounts[key]; a != nil {
		return a.Lamports
	}
	return 0
}

// Fund adds lamports to key, creating a System account if needed.
func (h *Harness) Fund(key solana.PublicKey, lamports uint64) {
	a := h.Accounts[key]
	if a == nil {
		a = &runtime.Account{Owner: runtime.SystemProgramID}
		h.Accounts[key] = a
	}
	a.Lamports += lamports
}

// TotalLamports sums every account's balance, for conservation checks.
func (h *Harness) TotalLamports() uint64 {
	var n uint64
	for _, a := range h.Accounts {
		n += a.Lamports
	}
	return n
}

// AddMint stores an initialized, rent-exempt 82-byte mint owned by program.
func (h *Harness) AddMint(key, program solana.PublicKey, m spl.Mint) {
	m.IsInitialized = true
	h.Accounts[key] = &runtime.Account{Lamports: h.Env.Rent.MinimumBalance(spl.MintSize), Owner: program, Data: m.Encode()}
}

// AddTokenAccount stores a rent-exempt 165-byte token account owned by
// program. A native account (IsNative set) gets reserve + Amount lamports.
func (h *Harness) AddTokenAccount(key, program solana.PublicKey, ta spl.TokenAccount) {
	if ta.State == spl.StateUninitialized {
		ta.State = spl.StateInitialized
	}
	lamports := h.Env.Rent.MinimumBalance(spl.TokenAccountSize)
	if ta.IsNative != nil {
		lamports = *ta.IsNative + ta.Amount
	}
	h.Accounts[key] = &runtime.Account{Lamports: lamports, Owner: program, Data: ta.Encode()}
}

// Mint decodes the mint at key, failing the test if it is not one.
func (h *Harness) Mint(key solana.PublicKey) spl.Mint {
	h.tb.Helper()
	a := h.Accounts[key]
	if a == nil {
		h.tb.Fatalf("mint %s does not exist", key)
	}
	m, err := spl.DecodeMint(a.Data)
	if err != nil {
		h.tb.Fatalf("mint %s: %v", key, err)
	}
	return m
}

// TokenAccount decodes the token account at key, failing the test if it is
// not one.
func (h *Harness) TokenAccount(key solana.PublicKey) spl.TokenAccount {
	h.tb.Helper()
	a := h.Accounts[key]
	if a == nil {
		h.tb.Fatalf("token account %s does not exist", key)
	}
	ta, err := spl.DecodeTokenAccount(a.Data)
	if err != nil {
		h.tb.Fatalf("token account %s: %v", key, err)
	}
	return ta
}

// Run compiles ixs into a legacy message paid by payer and executes it.
func (h *Harness) Run(payer solana.PublicKey, ixs ...txwire.Instruction) *Result {
	h.tb.Helper()
	msg, err := txwire.Compile(payer, ixs, solana.Hash{})
	if err != nil {
		h.tb.Fatalf("compile: %v", err)
	}
	n := len(msg.AccountKeys)
	signer, writable := make([]bool, n), make([]bool, n)
	for i := range msg.AccountKeys {
		signer[i], writable[i] = msg.IsSigner(i), msg.IsWritable(i)
	}
	limit := h.ComputeLimit
	if limit == 0 {
		b, terr := runtime.ParseBudget(msg, h.Exec.IsBuiltin)
		if terr != nil {
			return &Result{Err: terr, Keys: msg.AccountKeys, Message: msg}
		}
		limit = b.UnitLimit
	}
	res := h.RunCompiled(msg.AccountKeys, signer, writable, limit, msg.Instructions)
	res.Message = msg
	return res
}

// RunCompiled executes already-compiled instructions over keys with explicit
// signer and writable flags, which lets tests (and fuzzers) build account
// privileges no compiler would produce. limit 0 means the runtime default.
func (h *Harness) RunCompiled(keys []solana.PublicKey, signer, writable []bool, limit uint64, ixs []txwire.CompiledInstruction) *Result {
	if limit == 0 {
		limit = runtime.DefaultInstructionComputeUnits
	}
	tx := &runtime.TxContext{
		Keys:         keys,
		Signer:       signer,
		Writable:     writable,
		Env:          h.Env,
		ComputeLimit: limit,
		Accounts:     make([]*runtime.Account, len(keys)),
	}
	// Accounts are shared between duplicate keys, like the ledger's loader.
	loaded := map[solana.PublicKey]*runtime.Account{}
	for i, k := range keys {
		if a, ok := loaded[k]; ok {
			tx.Accounts[i] = a
			continue
		}
		a := h.Accounts[k]
		if a == nil {
			a = &runtime.Account{Owner: runtime.SystemProgramID}
		}
		a = a.Clone()
		loaded[k] = a
		tx.Accounts[i] = a
	}
	pre := make([]runtime.Account, len(keys))
	for i, a := range tx.Accounts {
		pre[i] = *a.Clone()
	}
	res := &Result{Keys: keys}
	h.panics = nil
	func() {
		defer func() {
			if p := recover(); p != nil && len(h.panics) == 0 {
				h.panics = append(h.panics, fmt.Sprintf("executor panicked: %v\n%s", p, debug.Stack()))
			}
		}()
		res.Err = h.Exec.Run(tx, ixs)
	}()
	if len(h.panics) > 0 {
		h.tb.Fatalf("%s\n%s", strings.Join(h.panics, "\n"), strings.Join(tx.Logs, "\n"))
	}
	res.Logs, res.Inner, res.ComputeUsed, res.ReturnData = tx.Logs, tx.Inner, tx.ComputeUsed, tx.ReturnData
	if res.Err == nil && h.CheckRent {
		for i := range keys {
			if writable[i] && !rentStateOK(h.Env.Rent, &pre[i], tx.Accounts[i]) {
				res.Err = runtime.InsufficientFundsForRent(i)
				break
			}
		}
	}
	if res.Err != nil {
		return res
	}
	for i, k := range keys {
		if !writable[i] {
			continue
		}
		a := tx.Accounts[i]
		if a.Lamports == 0 {
			delete(h.Accounts, k) // Agave purges zero-lamport accounts
			continue
		}
		h.Accounts[k] = a.Clone()
	}
	return res
}

// rentStateOK is Agave's rent-state transition rule.
func rentStateOK(r runtime.Rent, pre, post *runtime.Account) bool {
	exempt := func(a *runtime.Account) bool { return a.Lamports >= r.MinimumBalance(len(a.Data)) }
	if post.Lamports == 0 || exempt(post) {
		return true
	}
	if pre.Lamports == 0 || exempt(pre) {
		return false
	}
	return len(pre.Data) == len(post.Data) && post.Lamports <= pre.Lamports
}

// Result is the outcome of one transaction.
type Result struct {
	Err         *runtime.TxError
	Logs        []string
	Inner       []runtime.InnerInstructions
	ComputeUsed uint64
	ReturnData  *runtime.ReturnData
	// Keys are the message's account keys (inner instructions index them).
	Keys []solana.PublicKey
	// Message is the compiled message (nil for RunCompiled).
	Message *txwire.Message
}

// InstructionError is the failing instruction's error, or nil.
func (r *Result) InstructionError() *runtime.InstructionError {
	if r.Err == nil || r.Err.Kind != "InstructionError" {
		return nil
	}
	return r.Err.Instruction
}

// String summarises the result and its logs for failure messages.
func (r *Result) String() string {
	status := "ok"
	if r.Err != nil {
		status = r.Err.Error()
	}
	return fmt.Sprintf("%s (%d CU)\n  %s", status, r.ComputeUsed, strings.Join(r.Logs, "\n  "))
}

// RequireSuccess fails the test unless the transaction succeeded.
func (r *Result) RequireSuccess(tb testing.TB) {
	tb.Helper()
	if r.Err != nil {
		tb.Fatalf("transaction failed: %s", r)
	}
}

// RequireError fails the test unless instruction ix failed with want.
func (r *Result) RequireError(tb testing.TB, ix int, want *runtime.InstructionError) {
	tb.Helper()
	if r.Err == nil || !r.Err.Is(runtime.InstructionFailed(ix, want)) {
		tb.Fatalf("want error %v at instruction %d, got: %s", want, ix, r)
	}
}

// RequireTxError fails the test unless the transaction failed with want.
func (r *Result) RequireTxError(tb testing.TB, want *runtime.TxError) {
	tb.Helper()
	if r.Err == nil || !r.Err.Is(want) {
		tb.Fatalf("want %v, got: %s", want, r)
	}
}

// HasLog reports whether some log line equals line exactly.
func (r *Result) HasLog(line string) bool { return slices.Contains(r.Logs, line) }

// RequireLogs fails the test unless lines appear in the logs in this order
// (not necessarily adjacent), each matching a whole log line.
func (r *Result) RequireLogs(tb testing.TB, lines ...string) {
	tb.Helper()
	i := 0
	for _, l := range r.Logs {
		if i < len(lines) && l == lines[i] {
			i++
		}
	}
	if i < len(lines) {
		tb.Fatalf("log line %q not found (in order); got: %s", lines[i], r)
	}
}

// InnerPrograms lists the program ids of the inner instructions of
// top-level instruction top, in execution order.
func (r *Result) InnerPrograms(top int) []solana.PublicKey {
	var out []solana.PublicKey
	for _, ii := range r.Inner {
		if int(ii.Index) != top {
			continue
		}
		for _, in := range ii.Instructions {
			out = append(out, r.Keys[in.ProgramIDIndex])
		}
	}
	return out
}

// Inner is a recorded cross-program invocation with its keys resolved.
type Inner struct {
	ProgramID   solana.PublicKey
	Accounts    []solana.PublicKey
	Data        []byte
	StackHeight int
}

// InnerInstructions returns the inner instructions of top-level instruction
// top in execution order, with their accounts resolved to keys.
func (r *Result) InnerInstructions(top int) []Inner {
	var out []Inner
	for _, ii := range r.Inner {
		if int(ii.Index) != top {
			continue
		}
		for _, in := range ii.Instructions {
			x := Inner{ProgramID: r.Keys[in.ProgramIDIndex], Data: in.Data, StackHeight: in.StackHeight}
			for _, a := range in.Accounts {
				x.Accounts = append(x.Accounts, r.Keys[a])
			}
			out = append(out, x)
		}
	}
	return out
}

// MaxFuzzAccounts caps the accounts FuzzInstruction passes.
const MaxFuzzAccounts = 16

// FuzzInstruction runs one instruction of program with arbitrary data and
// accounts chosen from pool by sel, for fuzz targets: byte b of sel passes
// pool[int(b&0x0f)%len(pool)], a signer if b&0x10 and writable if b&0x20
// (a key's privileges are the union over its uses, as in a message). At
// most MaxFuzzAccounts accounts are passed. It also checks that a
// successful transaction conserved lamports.
func (h *Harness) FuzzInstruction(program solana.PublicKey, pool []solana.PublicKey, data, sel []byte) *Result {
	h.tb.Helper()
	var keys []solana.PublicKey
	var signer, writable []bool
	index := map[solana.PublicKey]int{}
	add := func(k solana.PublicKey, s, w bool) uint8 {
		i, ok := index[k]
		if !ok {
			i = len(keys)
			index[k] = i
			keys = append(keys, k)
			signer, writable = append(signer, false), append(writable, false)
		}
		signer[i] = signer[i] || s
		writable[i] = writable[i] || w
		return uint8(i)
	}
	ci := txwire.CompiledInstruction{Data: data}
	if len(pool) > 0 {
		for _, b := range sel[:min(len(sel), MaxFuzzAccounts)] {
			ci.Accounts = append(ci.Accounts, add(pool[int(b&0x0f)%len(pool)], b&0x10 != 0, b&0x20 != 0))
		}
	}
	ci.ProgramIDIndex = add(program, false, false)
	before := h.TotalLamports()
	res := h.RunCompiled(keys, signer, writable, 0, []txwire.CompiledInstruction{ci})
	if res.Err == nil && h.TotalLamports() != before {
		h.tb.Fatalf("lamports not conserved: %d → %d\n%s", before, h.TotalLamports(), res)
	}
	return res
}
