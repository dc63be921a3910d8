package runtime

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/txwire"
)

// Executor runs instructions against a set of registered programs. It is
// safe for concurrent use: all per-transaction state lives in TxContext.
type Executor struct {
	programs map[solana.PublicKey]*Registration
	// ids caches the base58 form of each program id: every invocation
	// logs it three times, and encoding it is most of a log line's cost.
	ids map[solana.PublicKey]string
	// scratch holds *invokeScratch values for invoke's snapshots.
	scratch sync.Pool
}

// invokeScratch is what one invocation snapshots of its accounts (invoke),
// reused from the executor's pool: allocated for every instruction, the
// snapshots were 4.6 % of the bytes a node allocated under transfers.
type invokeScratch struct {
	snaps []snapshot
	order []int
	buf   []byte
}

// maxScratchData bounds the snapshot buffer an invocation gives back to
// the pool: one that touched a large account does not keep its copy.
const maxScratchData = 64 << 10

// NewExecutor returns an executor for the given programs.
func NewExecutor(regs ...*Registration) *Executor {
	e := &Executor{programs: make(map[solana.PublicKey]*Registration, len(regs)), ids: make(map[solana.PublicKey]string, len(regs))}
	for _, r := range regs {
		e.Register(r)
	}
	return e
}

// IsBuiltin reports whether id is a registered builtin program, which
// Agave's default compute-unit limit counts at
// BuiltinInstructionComputeUnits rather than DefaultInstructionComputeUnits.
// Privileged builtins (the ephemeral rollup's validator programs) run
// other programs' instructions on the transaction's budget, so they count
// as ordinary programs here.
func (e *Executor) IsBuiltin(id solana.PublicKey) bool {
	r, ok := e.programs[id]
	return ok && r.Builtin && !r.Privileged
}

// Register adds or replaces a program. It must not be called while
// transactions are executing.
func (e *Executor) Register(r *Registration) {
	e.programs[r.ID] = r
	e.ids[r.ID] = r.ID.String()
}

// Lookup returns the registration of a program id.
func (e *Executor) Lookup(id solana.PublicKey) (*Registration, bool) {
	r, ok := e.programs[id]
	return r, ok
}

// InnerInstruction is a CPI recorded for transaction metadata. Accounts and
// ProgramIDIndex index the transaction's account keys.
type InnerInstruction struct {
	ProgramIDIndex uint8
	Accounts       []uint8
	Data           []byte
	StackHeight    int
}

// InnerInstructions groups the CPIs of one top-level instruction.
type InnerInstructions struct {
	Index        uint8
	Instructions []InnerInstruction
}

// ReturnData is the last return data a program set.
type ReturnData struct {
	ProgramID solana.PublicKey
	Data      []byte
}

// TxContext is the working state of one transaction. The ledger fills Keys,
// Accounts, Signer, Writable and Env; Accounts are working copies that Run
// mutates in place, so the ledger commits them on success and drops them on
// failure. A nonexistent account must be passed as a zero-lamport account
// owned by the System program.
type TxContext struct {
	Keys     []solana.PublicKey
	Accounts []*Account
	Signer   []bool
	Writable []bool
	Env      Env

	// ComputeLimit is the transaction's compute budget (see ParseBudget);
	// zero is a budget of zero, as a SetComputeUnitLimit(0) asks.
	ComputeLimit uint64

	// Results, filled by Run.
	ComputeUsed uint64
	Logs        []string
	Inner       []InnerInstructions
	ReturnData  *ReturnData

	logBytes  int
	truncated bool
	stack     []solana.PublicKey
	curTop    int
	// top are the top-level instructions.
	top []txwire.CompiledInstruction
}

func (tx *TxContext) log(s string) {
	if tx.truncated {
		return
	}
	if tx.logBytes+len(s) > maxLogBytes {
		tx.truncated = true
		tx.Logs = append(tx.Logs, "Log truncated")
		return
	}
	tx.logBytes += len(s)
	tx.Logs = append(tx.Logs, s)
}

func (tx *TxContext) indexOf(k solana.PublicKey) int {
	for i := range tx.Keys {
		if tx.Keys[i] == k {
			return i
		}
	}
	return -1
}

// Run executes the top-level instructions in order and stops at the first
// failure, returning it as an InstructionError TxError. Account changes made
// before the failure stay in tx.Accounts; the caller discards them.
func (e *Executor) Run(tx *TxContext, ixs []txwire.CompiledInstruction) *TxError {
	tx.top = ixs
	for i, ix := range ixs {
		tx.curTop = i
		if int(ix.ProgramIDIndex) >= len(tx.Keys) {
			return ErrInvalidAccountIndex
		}
		frame := frame{
			programID: tx.Keys[ix.ProgramIDIndex],
			data:      ix.Data,
			idx:       make([]int, len(ix.Accounts)),
			signer:    make([]bool, len(ix.Accounts)),
			writable:  make([]bool, len(ix.Accounts)),
		}
		for j, a := range ix.Accounts {
			if int(a) >= len(tx.Keys) {
				return ErrInvalidAccountIndex
			}
			frame.idx[j] = int(a)
			frame.signer[j] = tx.Signer[a]
			frame.writable[j] = tx.Writable[a]
		}
		if err := e.invoke(tx, &frame); err != nil {
			return InstructionFailed(i, err)
		}
	}
	return nil
}

// frame is one program invocation: which tx accounts it sees and with which
// privileges.
type frame struct {
	programID solana.PublicKey
	data      []byte
	idx       []int
	signer    []bool
	writable  []bool
}

type snapshot struct {
	lamports   uint64
	owner      solana.PublicKey
	executable bool
	data       []byte
}

func (e *Executor) invoke(tx *TxContext, f *frame) *InstructionError {
	depth := len(tx.stack) + 1
	if depth > MaxInvokeStackHeight {
		return ErrCallDepth
	}
	for _, p := range tx.stack {
		// Agave allows only direct self-recursion.
		if p == f.programID && tx.stack[len(tx.stack)-1] != f.programID {
			return ErrReentrancyNotAllowed
		}
	}
	reg, ok := e.programs[f.programID]
	if !ok {
		tx.log("Program is not deployed")
		return ErrUnsupportedProgramID
	}

	// Snapshot the distinct accounts this instruction can see, so the
	// ownership and balance rules can be checked afterwards.
	// Instructions name a handful of accounts, so a linear duplicate check
	// beats a map, and one buffer holds every data snapshot.
	sc, _ := e.scratch.Get().(*invokeScratch)
	if sc == nil {
		sc = new(invokeScratch)
	}
	defer e.putScratch(sc)
	snaps, order := sc.snaps[:0], sc.order[:0]
	size := 0
	for _, ti := range f.idx {
		size += len(tx.Accounts[ti].Data)
	}
	if cap(sc.buf) < size {
		sc.buf = make([]byte, 0, size)
	}
	buf := sc.buf[:0]
	for _, ti := range f.idx {
		if slices.Contains(order, ti) {
			// A duplicate keeps the strongest privilege it was passed with.
			continue
		}
		a := tx.Accounts[ti]
		var data []byte
		if a.Data != nil {
			buf = append(buf, a.Data...)
			data = buf[len(buf)-len(a.Data) : len(buf) : len(buf)]
		}
		snaps = append(snaps, snapshot{lamports: a.Lamports, owner: a.Owner, executable: a.Executable, data: data})
		order = append(order, ti)
	}

	var preSum uint64
	for _, sn := range snaps {
		preSum += sn.lamports
	}

	id := e.ids[f.programID]
	// Every invocation, top-level or CPI, starts with empty return data:
	// what a transaction ends with is what its last program set, if it
	// set anything.
	tx.ReturnData = nil
	tx.log("Program " + id + " invoke [" + strconv.Itoa(depth) + "]")
	tx.stack = append(tx.stack, f.programID)
	startRemaining := tx.ComputeLimit - min(tx.ComputeUsed, tx.ComputeLimit)
	sc.snaps, sc.order = snaps, order
	ctx := &Context{tx: tx, exec: e, frame: f, reg: reg, depth: depth, order: order, snaps: snaps}
	err := execute(reg.Program, ctx)
	tx.stack = tx.stack[:len(tx.stack)-1]

	var ierr *InstructionError
	if err != nil {
		if !errors.As(err, &ierr) {
			tx.log("Program log: " + err.Error())
			ierr = ErrGenericError
		}
	}
	if ierr == nil && ctx.consumed < reg.BaseCost {
		if cerr := ctx.Consume(reg.BaseCost - ctx.consumed); cerr != nil {
			ierr = cerr.(*InstructionError)
		}
	}
	if ierr == nil {
		ierr = verify(tx, f, reg, order, snaps, preSum)
	}
	if !reg.Builtin {
		tx.log("Program " + id + " consumed " + strconv.FormatUint(ctx.consumed, 10) + " of " + strconv.FormatUint(startRemaining, 10) + " compute units")
	}
	if ierr != nil {
		tx.log("Program " + id + " failed: " + ierr.Error())
		return ierr
	}
	if ctx.returnSet && tx.ReturnData != nil && len(tx.ReturnData.Data) > 0 {
		tx.log("Program return: " + id + " " + base64.StdEncoding.EncodeToString(tx.ReturnData.Data))
	}
	tx.log("Program " + id + " success")
	return nil
}

// putScratch gives an invocation's snapshots back to the pool once its
// rules were checked. The snapshots' data (the buffer, or copies a CPI's
// refresh made) are dropped so that the pool holds no account's bytes
// beyond the buffer itself.
func (e *Executor) putScratch(sc *invokeScratch) {
	clear(sc.snaps)
	if cap(sc.buf) > maxScratchData {
		sc.buf = nil
	}
	e.scratch.Put(sc)
}

// execute runs one program invocation. A panicking program must not take the
// ledger down with it: the panic becomes a failed instruction, as a crashing
// BPF program becomes a failed instruction on a real validator.
func execute(p Program, ctx *Context) (err error) {
	defer func() {
		if r := recover(); r != nil {
			ctx.Logf("program panicked: %v", r)
			err = ErrGenericError
		}
	}()
	return p.Execute(ctx)
}

// verify applies Agave's post-instruction account rules: the ownership and
// privilege rules to the changes this program made (see checkRules), and
// the balance rule to the whole instruction, CPIs included: the lamports of
// its distinct accounts must sum to preSum.
func verify(tx *TxContext, f *frame, reg *Registration, order []int, snaps []snapshot, preSum uint64) *InstructionError {
	if err := checkRules(tx, f, reg, order, snaps); err != nil {
		return err
	}
	var post uint64
	for _, ti := range order {
		post += tx.Accounts[ti].Lamports
	}
	if post != preSum {
		return ErrUnbalancedInstruction
	}
	return nil
}

// Data limits of program-owned accounts (Agave).
const (
	// MaxPermittedDataLength is the largest account data (10 MiB).
	MaxPermittedDataLength = 10 * 1024 * 1024
	// MaxPermittedDataIncrease is how much an SBF program may grow an
	// account in one instruction.
	MaxPermittedDataIncrease = 10 * 1024
)

// checkRules checks the changes made to f's accounts since snaps were taken
// against Agave's ownership and privilege rules, as the program f.programID
// made them, in the order Agave applies a program's writes: lamports,
// then data (size, then contents), then owner. Context.Invoke calls it
// before a CPI and refreshes snaps after one, so changes a callee made
// (and that the callee's own frame already verified) are not attributed to
// the caller. A privileged program (see Registration.Privileged) is held
// only to the read-only rules. The executable flag itself protects nothing
// any more (SIMD-0162): a program account's balance may grow like any
// other writable account's, and only the loader may flip the flag.
func checkRules(tx *TxContext, f *frame, reg *Registration, order []int, snaps []snapshot) *InstructionError {
	privileged := reg.Privileged
	for k, ti := range order {
		s := snaps[k]
		a := tx.Accounts[ti]
		writable := false
		for jj, x := range f.idx {
			if x == ti {
				writable = writable || f.writable[jj]
			}
		}
		owned := s.owner == f.programID || privileged
		if a.Lamports != s.lamports {
			switch {
			case a.Lamports < s.lamports && !owned:
				return ErrExternalAccountLamportSpend
			case !writable:
				return ErrReadonlyLamportChange
			}
		}
		if len(a.Data) != len(s.data) {
			if !owned && !(s.owner == SystemProgramID && f.programID == SystemProgramID) {
				return ErrAccountDataSizeChanged
			}
			if len(a.Data) > MaxPermittedDataLength || (!reg.Builtin && len(a.Data) > len(s.data)+MaxPermittedDataIncrease) {
				return ErrInvalidRealloc
			}
		}
		if !bytes.Equal(s.data, a.Data) {
			switch {
			case !writable:
				return ErrReadonlyDataModified
			case !owned:
				return ErrExternalAccountDataModified
			}
		}
		if a.Owner != s.owner {
			if !writable || !owned || (!privileged && !zeroed(a.Data)) {
				return ErrModifiedProgramID
			}
		}
		if a.Executable != s.executable {
			return ErrExecutableModified
		}
	}
	return nil
}

// refresh re-takes the snapshots of a frame's accounts after a CPI.
func refresh(tx *TxContext, order []int, snaps []snapshot) {
	for k, ti := range order {
		a := tx.Accounts[ti]
		snaps[k] = snapshot{lamports: a.Lamports, owner: a.Owner, executable: a.Executable, data: bytes.Clone(a.Data)}
	}
}

func zeroed(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// Sub returns this invocation restricted to instruction accounts
// [first, first+n), for programs that run a batch of inner instructions
// on consecutive slices of their accounts (p-token's Batch). The caller
// checks the bounds.
func (c *Context) Sub(first, n int) *Context {
	f := *c.frame
	f.idx = f.idx[first : first+n : first+n]
	f.signer = f.signer[first : first+n : first+n]
	f.writable = f.writable[first : first+n : first+n]
	sub := *c
	sub.frame = &f
	return &sub
}

// PreviousSiblingProgram is the program of the instruction processed just
// before this one at the same stack height (sol_get_processed_sibling_instruction
// with index 0): the previous top-level instruction for a top-level
// instruction, the previous CPI of the same caller for a CPI.
func (c *Context) PreviousSiblingProgram() (solana.PublicKey, bool) {
	tx := c.tx
	if c.depth == 1 {
		if tx.curTop == 0 || tx.curTop > len(tx.top) {
			return solana.PublicKey{}, false
		}
		return tx.Keys[tx.top[tx.curTop-1].ProgramIDIndex], true
	}
	n := len(tx.Inner)
	if n == 0 || tx.Inner[n-1].Index != uint8(tx.curTop) {
		return solana.PublicKey{}, false
	}
	ins := tx.Inner[n-1].Instructions
	// The last record is this very invocation.
	for i := len(ins) - 2; i >= 0; i-- {
		switch h := ins[i].StackHeight; {
		case h == c.depth:
			return tx.Keys[ins[i].ProgramIDIndex], true
		case h < c.depth:
			return solana.PublicKey{}, false
		}
	}
	return solana.PublicKey{}, false
}

// Context is what a program sees while it executes one instruction.
type Context struct {
	tx        *TxContext
	exec      *Executor
	frame     *frame
	reg       *Registration
	depth     int
	consumed  uint64
	returnSet bool
	// order and snaps are the frame's distinct accounts and their state
	// as last verified (see checkRules).
	order []int
	snaps []snapshot
}

// ProgramID is the id of the executing program.
func (c *Context) ProgramID() solana.PublicKey { return c.frame.programID }

// Data is the instruction data.
func (c *Context) Data() []byte { return c.frame.data }

// Env returns the cluster state (slot, time, rent).
func (c *Context) Env() *Env { return &c.tx.Env }

// StackHeight is 1 for a top-level instruction and grows with each CPI.
func (c *Context) StackHeight() int { return c.depth }

// CallerID is the program that invoked this one by CPI; ok is false for a
// top-level instruction.
func (c *Context) CallerID() (id solana.PublicKey, ok bool) {
	if n := len(c.tx.stack); n >= 2 {
		return c.tx.stack[n-2], true
	}
	return solana.PublicKey{}, false
}

// NumAccounts is the number of accounts passed to the instruction.
func (c *Context) NumAccounts() int { return len(c.frame.idx) }

// AccountRef is one instruction account. Account points at the transaction's
// working copy; mutating it is how a program writes state.
type AccountRef struct {
	Key        solana.PublicKey
	IsSigner   bool
	IsWritable bool
	*Account
}

// Account returns instruction account i, or NotEnoughAccountKeys.
func (c *Context) Account(i int) (*AccountRef, error) {
	if i < 0 || i >= len(c.frame.idx) {
		return nil, ErrNotEnoughAccountKeys
	}
	ti := c.frame.idx[i]
	return &AccountRef{
		Key:        c.tx.Keys[ti],
		IsSigner:   c.frame.signer[i],
		IsWritable: c.frame.writable[i],
		Account:    c.tx.Accounts[ti],
	}, nil
}

// Accounts returns the first n instruction accounts, or NotEnoughAccountKeys.
func (c *Context) Accounts(n int) ([]*AccountRef, error) {
	if n > len(c.frame.idx) {
		return nil, ErrNotEnoughAccountKeys
	}
	// One block for the refs and one for the slice, not one per account:
	// every token instruction asks for its accounts this way.
	refs := make([]AccountRef, n)
	out := make([]*AccountRef, n)
	for i := range out {
		ti := c.frame.idx[i]
		refs[i] = AccountRef{Key: c.tx.Keys[ti], IsSigner: c.frame.signer[i], IsWritable: c.frame.writable[i], Account: c.tx.Accounts[ti]}
		out[i] = &refs[i]
	}
	return out, nil
}

// IsSigner reports whether key signed this instruction (directly or as a PDA
// signer of the calling program).
func (c *Context) IsSigner(key solana.PublicKey) bool {
	for j, ti := range c.frame.idx {
		if c.tx.Keys[ti] == key && c.frame.signer[j] {
			return true
		}
	}
	return false
}

// Log appends "Program log: <msg>".
func (c *Context) Log(msg string) { c.tx.log("Program log: " + msg) }

// Logf appends a formatted "Program log:" line.
func (c *Context) Logf(format string, args ...any) { c.Log(fmt.Sprintf(format, args...)) }

// LogRaw appends a line verbatim (for builtins such as System that log
// without the "Program log:" prefix).
func (c *Context) LogRaw(line string) { c.tx.log(line) }

// Consume charges compute units; it fails with ComputationalBudgetExceeded
// once the transaction budget is spent.
func (c *Context) Consume(units uint64) error {
	c.consumed += units
	c.tx.ComputeUsed += units
	if c.tx.ComputeUsed > c.tx.ComputeLimit {
		c.tx.ComputeUsed = c.tx.ComputeLimit
		return ErrComputationalBudgetExceeded
	}
	return nil
}

// Remaining is the unspent compute budget.
func (c *Context) Remaining() uint64 {
	return c.tx.ComputeLimit - min(c.tx.ComputeUsed, c.tx.ComputeLimit)
}

// SetReturnData sets the transaction's return data (at most 1024 bytes).
func (c *Context) SetReturnData(b []byte) error {
	if len(b) > MaxReturnData {
		return ErrInvalidInstructionData
	}
	c.tx.ReturnData = &ReturnData{ProgramID: c.frame.programID, Data: bytes.Clone(b)}
	c.returnSet = true
	return nil
}

// ReturnData returns the transaction's current return data, if any.
func (c *Context) ReturnData() *ReturnData { return c.tx.ReturnData }

// Invoke performs a cross-program invocation. Every account of ix and the
// callee program itself must be accounts of the transaction. Signer
// privilege comes from this instruction's signers plus the PDAs derived from
// signerSeeds under the calling program; writable privilege must already be
// held by this instruction.
func (c *Context) Invoke(ix txwire.Instruction, signerSeeds ...[][]byte) error {
	tx := c.tx
	var pdas []solana.PublicKey
	for _, seeds := range signerSeeds {
		k, err := solana.CreateProgramAddress(seeds, c.frame.programID)
		if err != nil {
			return ErrInvalidSeeds
		}
		pdas = append(pdas, k)
	}
	pi := tx.indexOf(ix.ProgramID)
	if pi < 0 {
		c.Logf("Unknown program %s", ix.ProgramID)
		return ErrMissingAccount
	}
	f := &frame{
		programID: ix.ProgramID,
		data:      ix.Data,
		idx:       make([]int, len(ix.Accounts)),
		signer:    make([]bool, len(ix.Accounts)),
		writable:  make([]bool, len(ix.Accounts)),
	}
	for j, m := range ix.Accounts {
		ti := tx.indexOf(m.PublicKey)
		if ti < 0 {
			c.Logf("Instruction references an unknown account %s", m.PublicKey)
			return ErrMissingAccount
		}
		callerSigner, callerWritable := false, false
		for jj, x := range c.frame.idx {
			if x == ti {
				callerSigner = callerSigner || c.frame.signer[jj]
				callerWritable = callerWritable || c.frame.writable[jj]
			}
		}
		if m.IsWritable && !callerWritable {
			c.tx.log(fmt.Sprintf("%s's writable privilege escalated", m.PublicKey))
			return ErrPrivilegeEscalation
		}
		if m.IsSigner && !callerSigner && !c.reg.Privileged {
			isPDA := false
			for _, p := range pdas {
				if p == m.PublicKey {
					isPDA = true
					break
				}
			}
			if !isPDA {
				c.tx.log(fmt.Sprintf("%s's signer privilege escalated", m.PublicKey))
				return ErrPrivilegeEscalation
			}
		}
		f.idx[j] = ti
		f.signer[j] = m.IsSigner
		f.writable[j] = m.IsWritable
	}

	rec := InnerInstruction{ProgramIDIndex: uint8(pi), Accounts: make([]uint8, len(f.idx)), Data: bytes.Clone(ix.Data), StackHeight: c.depth + 1}
	for j, ti := range f.idx {
		rec.Accounts[j] = uint8(ti)
	}
	top := uint8(tx.curTop)
	if n := len(tx.Inner); n == 0 || tx.Inner[n-1].Index != top {
		tx.Inner = append(tx.Inner, InnerInstructions{Index: top})
	}
	tx.Inner[len(tx.Inner)-1].Instructions = append(tx.Inner[len(tx.Inner)-1].Instructions, rec)

	// Agave charges the invoke cost to the caller.
	if err := c.Consume(1000); err != nil {
		return err
	}
	// The caller's own changes so far are checked now, as Agave does when
	// it hands the accounts to the callee; what the callee changes is
	// checked in its frame and then becomes the caller's baseline.
	if err := checkRules(tx, c.frame, c.reg, c.order, c.snaps); err != nil {
		return err
	}
	before := tx.ComputeUsed
	if err := c.exec.invoke(tx, f); err != nil {
		return err
	}
	refresh(tx, c.order, c.snaps)
	// Compute used by the callee also counts against the caller's frame in
	// the "consumed" log line.
	c.consumed += tx.ComputeUsed - before
	return nil
}

// CreateProgramAddress is solana.CreateProgramAddress with runtime errors.
func CreateProgramAddress(seeds [][]byte, program solana.PublicKey) (solana.PublicKey, error) {
	k, err := solana.CreateProgramAddress(seeds, program)
	if err != nil {
		if strings.Contains(err.Error(), "max seed length") {
			return k, ErrMaxSeedLengthExceeded
		}
		return k, ErrInvalidSeeds
	}
	return k, nil
}
