package devchain

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/inputlimit"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// MaxStoredProfiles is how many profiles a node keeps for
// surfnet_getTransactionProfile and surfnet_getProfileResultsByTag
// (surfpool's default profiling map capacity); the oldest is dropped first.
const MaxStoredProfiles = 200

// MaxProfileTag bounds a profile's tag.
const MaxProfileTag = 256

// Profile depths and the default encoding of profiled accounts.
const (
	DepthTransaction = "transaction"
	DepthInstruction = "instruction"
	// DefaultProfileEncoding is surfpool's default (RpcProfileResultConfig).
	DefaultProfileEncoding = "jsonParsed"
)

// ProfileConfig is surfpool's RpcProfileResultConfig: how a profile is
// rendered.
type ProfileConfig struct {
	Encoding string `json:"encoding,omitempty" validate:"enum=base58|base64|base64+zstd|jsonParsed" default:"jsonParsed" doc:"Encoding of the accounts in the profile."`
	Depth    string `json:"depth,omitempty" validate:"enum=transaction|instruction" default:"instruction" doc:"instruction adds one profile per instruction; transaction profiles the whole transaction only."`
}

func (c *ProfileConfig) normalize() error {
	if c.Encoding == "" {
		c.Encoding = DefaultProfileEncoding
	}
	switch c.Encoding {
	case "binary", "base58", "base64", "base64+zstd", "jsonParsed":
	default:
		return invalid("Invalid params: unknown variant `%s`, expected one of `binary`, `base58`, `base64`, `jsonParsed`, `base64+zstd`", inputlimit.Truncate(c.Encoding, inputlimit.MaxEcho))
	}
	if c.Depth == "" {
		c.Depth = DepthInstruction
	}
	if c.Depth != DepthInstruction && c.Depth != DepthTransaction {
		return invalid("Invalid params: unknown variant `%s`, expected `transaction` or `instruction`", inputlimit.Truncate(c.Depth, inputlimit.MaxEcho))
	}
	return nil
}

// ProfileRequest is surfnet_profileTransaction / ferry_profileTransaction.
type ProfileRequest struct {
	// Transaction is a wire transaction in base64, signed or not: its
	// signatures are not checked and its blockhash is replaced by the
	// latest, so a stale build profiles too.
	Transaction string `json:"transaction" validate:"required,minlen=1" doc:"Wire transaction in base64, signed or not (signatures are not checked; the blockhash is replaced by the latest)."`
	Tag         string `json:"tag,omitempty" validate:"maxbytes=256" doc:"Tag to find the profile by later (surfnet_getProfileResultsByTag)."`
	ProfileConfig
}

// Profile is surfpool's UiKeyedProfileResult: what a transaction would do,
// in total and instruction by instruction, without committing anything.
type Profile struct {
	Slot uint64 `json:"slot"`
	// Key is the profile's id (a UUID).
	Key                 string        `json:"key"`
	InstructionProfiles []ProfileStep `json:"instructionProfiles,omitempty"`
	TransactionProfile  ProfileStep   `json:"transactionProfile"`
	// ReadonlyAccountStates are the read-only accounts, as they are.
	ReadonlyAccountStates keyedValues `json:"readonlyAccountStates"`
}

// ProfileStep is surfpool's UiProfileResult: one instruction (the
// instructions up to it run, and the difference is this one's) or the
// whole transaction.
type ProfileStep struct {
	// AccountStates maps each account (of the instruction, or of the
	// transaction) to {"type":"readonly"} or {"type":"writable",
	// "accountChange":{"type":"create"|"update"|"delete"|"unchanged",
	// "data":...}}.
	AccountStates        keyedValues `json:"accountStates"`
	ComputeUnitsConsumed uint64      `json:"computeUnitsConsumed"`
	LogMessages          []string    `json:"logMessages"`
	ErrorMessage         *string     `json:"errorMessage"`
}

// keyedValues is a JSON object that keeps its keys in order (the
// transaction's account order), as surfpool's IndexMap does.
type keyedValues []keyedValue

type keyedValue struct {
	key   string
	value any
}

// MarshalJSON writes the object in order.
func (kv keyedValues) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range kv {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(e.key)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(e.value)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// accountState is surfpool's UiAccountProfileState.
type accountState struct {
	Type   string         `json:"type"`
	Change *accountChange `json:"accountChange,omitempty"`
}

// accountChange is surfpool's UiAccountChange (adjacently tagged).
type accountChange struct {
	Type string `json:"type"`
	Data any    `json:"data"`
}

// profileRun is a profile as executed, rendered on each read.
type profileRun struct {
	slot     uint64
	key      string
	tag      string
	keys     []solana.PublicKey
	writable []bool
	pre      []*ledger.Account
	steps    []stepRun // one per instruction, in order
	total    stepRun
}

// stepRun is one simulation: the accounts after it (aligned with keys),
// its compute units, logs and error.
type stepRun struct {
	accounts []int // indexes into keys this step reports
	before   []*ledger.Account
	after    []*ledger.Account
	units    uint64
	logs     []string
	err      *string
}

// profiles is a node's bounded store of profiles.
type profiles struct {
	mu    sync.Mutex
	order []string
	byKey map[string]*profileRun
}

func (p *profiles) add(r *profileRun) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byKey == nil {
		p.byKey = map[string]*profileRun{}
	}
	if len(p.order) >= MaxStoredProfiles {
		delete(p.byKey, p.order[0])
		p.order = p.order[1:]
	}
	p.order = append(p.order, r.key)
	p.byKey[r.key] = r
}

func (p *profiles) get(key string) *profileRun {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.byKey[key]
}

func (p *profiles) tagged(tag string) []*profileRun {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*profileRun
	for _, k := range p.order {
		if r := p.byKey[k]; r.tag == tag {
			out = append(out, r)
		}
	}
	return out
}

// ProfileTransaction simulates a transaction without committing it and
// reports its compute units, logs, error and account changes, in total
// and per instruction (each instruction is the simulation of the
// instructions up to it, minus the one before). All simulations run in one
// pause of the slot loop, so they see the same state. The profile is kept
// (MaxStoredProfiles) under its key and tag.
func (n *Node) ProfileTransaction(ctx context.Context, req ProfileRequest) (*Profile, error) {
	cfg := req.ProfileConfig
	if err := cfg.normalize(); err != nil {
		return nil, err
	}
	if len(req.Tag) > MaxProfileTag {
		return nil, invalid("Invalid params: tag longer than %d bytes", MaxProfileTag)
	}
	if n.encode == nil {
		return nil, &Error{Code: CodeInternalError, Message: "profiling needs an account encoder (devchain.Config.Encode)"}
	}
	tx, raw, err := decodeTransaction(req.Transaction)
	if err != nil {
		return nil, err
	}
	run := &profileRun{key: newUUID(), tag: req.Tag}
	err = atomically(ctx, n.l, func(w ledger.AccountWriter) error {
		run.slot = w.Slot()
		if err := run.resolveKeys(&tx.Message, w); err != nil {
			return err
		}
		run.pre = make([]*ledger.Account, len(run.keys))
		for i, k := range run.keys {
			run.pre[i] = w.Get(k)
		}
		all := make([]int, len(run.keys))
		for i := range all {
			all[i] = i
		}
		sim, err := n.simulate(ctx, raw, run.keys)
		if err != nil {
			return err
		}
		run.total = run.step(all, run.pre, sim)
		if cfg.Depth != DepthInstruction {
			return nil
		}
		before, prev := run.pre, (*ledger.SimulateResult)(nil)
		for i, ix := range tx.Message.Instructions {
			prefix := txwire.Transaction{Signatures: tx.Signatures, Message: tx.Message}
			prefix.Message.Instructions = tx.Message.Instructions[:i+1]
			sim, err := n.simulate(ctx, prefix.Bytes(), run.keys)
			if err != nil {
				return err
			}
			st := run.step(instructionAccounts(ix, len(run.keys)), before, sim)
			if prev != nil {
				st.units = sim.UnitsConsumed - min(prev.UnitsConsumed, sim.UnitsConsumed)
				if len(prev.Logs) <= len(st.logs) {
					st.logs = st.logs[len(prev.Logs):]
				}
			}
			run.steps = append(run.steps, st)
			if st.err != nil {
				break // the instructions after a failed one never run
			}
			before, prev = st.after, sim
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	n.profiles.add(run)
	n.log.Debug("profiled transaction", "key", run.key, "tag", run.tag, "units", run.total.units)
	return run.render(n.encode, cfg)
}

// resolveKeys sets the run's account keys and their writability: the
// message's static keys, then the addresses it loads through lookup tables
// (writable ones first), read from the tables as they are now; the
// simulations check the tables themselves and report a table they cannot
// use as the transaction's error.
func (r *profileRun) resolveKeys(msg *txwire.Message, w ledger.AccountWriter) error {
	var loadedW, loadedR []solana.PublicKey
	for _, lk := range msg.AddressTableLookups {
		a := w.Get(lk.AccountKey)
		if a == nil || a.Owner != spl.AddressLookupTableProgramID {
			return invalid("Invalid params: address lookup table %s not found", lk.AccountKey)
		}
		t, err := spl.DecodeLookupTable(a.Data)
		if err != nil {
			return invalid("Invalid params: address lookup table %s: %v", lk.AccountKey, err)
		}
		pick := func(idx []uint8, out *[]solana.PublicKey) error {
			for _, i := range idx {
				if int(i) >= len(t.Addresses) {
					return invalid("Invalid params: address lookup table %s has no index %d", lk.AccountKey, i)
				}
				*out = append(*out, t.Addresses[i])
			}
			return nil
		}
		if err := pick(lk.WritableIndexes, &loadedW); err != nil {
			return err
		}
		if err := pick(lk.ReadonlyIndexes, &loadedR); err != nil {
			return err
		}
	}
	nStatic := len(msg.AccountKeys)
	r.keys = append(append(append(make([]solana.PublicKey, 0, nStatic+len(loadedW)+len(loadedR)), msg.AccountKeys...), loadedW...), loadedR...)
	called := make([]bool, len(r.keys))
	for _, ix := range msg.Instructions {
		if int(ix.ProgramIDIndex) < len(called) {
			called[ix.ProgramIDIndex] = true
		}
	}
	r.writable = make([]bool, len(r.keys))
	for i := range r.keys {
		// Invoked programs are demoted to read-only, as the runtime does.
		w := i >= nStatic && i < nStatic+len(loadedW)
		if i < nStatic {
			w = msg.IsWritable(i)
		}
		r.writable[i] = w && !called[i]
	}
	return nil
}

// simulate runs raw at processed commitment with the latest blockhash and
// returns the state of keys after it.
func (n *Node) simulate(ctx context.Context, raw []byte, keys []solana.PublicKey) (*ledger.SimulateResult, error) {
	sim, err := n.l.Simulate(ctx, raw, ledger.SimulateOptions{Commitment: ledger.Processed, ReplaceRecentBlockhash: true, Accounts: keys})
	if err != nil {
		return nil, internal("simulate", err)
	}
	return sim, nil
}

// step turns a simulation into a step over the accounts at idx: their
// state before (the previous step's after) and after. A failed simulation
// changes nothing but the fee payer's balance (PostBalances).
func (r *profileRun) step(idx []int, before []*ledger.Account, sim *ledger.SimulateResult) stepRun {
	st := stepRun{accounts: idx, before: before, after: make([]*ledger.Account, len(r.keys)),
		units: sim.UnitsConsumed, logs: sim.Logs}
	for i := range r.keys {
		switch {
		case sim.Err == nil && sim.Accounts != nil:
			st.after[i] = sim.Accounts[i]
		case r.pre[i] != nil && i < len(sim.PostBalances):
			a := r.pre[i].Clone()
			a.Lamports = sim.PostBalances[i]
			st.after[i] = a
		default:
			st.after[i] = r.pre[i]
		}
	}
	if sim.Err != nil {
		msg := sim.Err.Error()
		st.err = &msg
	}
	return st
}

// instructionAccounts are the distinct account indexes an instruction
// names among the n static keys, in order.
func instructionAccounts(ix txwire.CompiledInstruction, n int) []int {
	seen := map[uint8]bool{}
	var out []int
	for _, a := range ix.Accounts {
		if !seen[a] && int(a) < n {
			seen[a] = true
			out = append(out, int(a))
		}
	}
	return out
}

// render builds surfpool's result shape from a run.
func (r *profileRun) render(enc AccountEncoder, cfg ProfileConfig) (*Profile, error) {
	out := &Profile{Slot: r.slot, Key: r.key, ReadonlyAccountStates: keyedValues{}}
	var err error
	if out.TransactionProfile, err = r.renderStep(&r.total, enc, cfg.Encoding); err != nil {
		return nil, err
	}
	if cfg.Depth == DepthInstruction {
		out.InstructionProfiles = make([]ProfileStep, 0, len(r.steps))
		for i := range r.steps {
			st, err := r.renderStep(&r.steps[i], enc, cfg.Encoding)
			if err != nil {
				return nil, err
			}
			out.InstructionProfiles = append(out.InstructionProfiles, st)
		}
	}
	for i, k := range r.keys {
		if r.writable[i] || r.pre[i] == nil {
			continue
		}
		ui, err := enc(r.pre[i], cfg.Encoding)
		if err != nil {
			return nil, renderError(err)
		}
		out.ReadonlyAccountStates = append(out.ReadonlyAccountStates, keyedValue{k.String(), ui})
	}
	return out, nil
}

func (r *profileRun) renderStep(st *stepRun, enc AccountEncoder, encoding string) (ProfileStep, error) {
	ps := ProfileStep{AccountStates: keyedValues{}, ComputeUnitsConsumed: st.units, LogMessages: st.logs, ErrorMessage: st.err}
	ui := func(a *ledger.Account) (any, error) {
		if a == nil {
			return nil, nil
		}
		v, err := enc(a, encoding)
		if err != nil {
			return nil, renderError(err)
		}
		return v, nil
	}
	for _, i := range st.accounts {
		state := accountState{Type: "readonly"}
		if r.writable[i] {
			pre, post := st.before[i], st.after[i]
			var ch accountChange
			var err error
			switch {
			case pre == nil && post == nil:
				ch = accountChange{Type: "unchanged"}
			case pre == nil:
				ch.Type = "create"
				ch.Data, err = ui(post)
			case post == nil:
				ch.Type = "delete"
				ch.Data, err = ui(pre)
			case sameAccount(pre, post):
				ch.Type = "unchanged"
				ch.Data, err = ui(pre)
			default:
				var a, b any
				if a, err = ui(pre); err == nil {
					b, err = ui(post)
				}
				ch = accountChange{Type: "update", Data: [2]any{a, b}}
			}
			if err != nil {
				return ps, err
			}
			state = accountState{Type: "writable", Change: &ch}
		}
		ps.AccountStates = append(ps.AccountStates, keyedValue{r.keys[i].String(), state})
	}
	return ps, nil
}

// renderError keeps the encoder's refusals (*Error: base58 data too large)
// and reports anything else as internal.
func renderError(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return internal("render account", err)
}

// sameAccount compares what an account holds (the rent epoch is derived by
// the ledger when it stores an account, so it is not compared).
func sameAccount(a, b *ledger.Account) bool {
	return a.Lamports == b.Lamports && a.Owner == b.Owner && a.Executable == b.Executable && bytes.Equal(a.Data, b.Data)
}

// GetProfileRequest is surfnet_getTransactionProfile.
type GetProfileRequest struct {
	Key string `json:"key" validate:"required,minlen=1" doc:"Profile key (the UUID profileTransaction returned)."`
	ProfileConfig
}

// TransactionProfile returns a stored profile, rendered with cfg, or nil
// when the key is unknown (surfpool also profiles every sent transaction
// under its signature; ferry keeps only profileTransaction's results).
func (n *Node) TransactionProfile(req GetProfileRequest) (*Profile, uint64, error) {
	cfg := req.ProfileConfig
	if err := cfg.normalize(); err != nil {
		return nil, 0, err
	}
	r := n.profiles.get(req.Key)
	if r == nil {
		return nil, n.l.Slot(ledger.Processed), nil
	}
	p, err := r.render(n.encode, cfg)
	return p, r.slot, err
}

// ProfilesByTagRequest is surfnet_getProfileResultsByTag.
type ProfilesByTagRequest struct {
	Tag string `json:"tag" validate:"required" doc:"The tag given to profileTransaction."`
	ProfileConfig
}

// ProfilesByTag returns the stored profiles with a tag, oldest first, or
// nil when none has it.
func (n *Node) ProfilesByTag(req ProfilesByTagRequest) ([]Profile, error) {
	cfg := req.ProfileConfig
	if err := cfg.normalize(); err != nil {
		return nil, err
	}
	runs := n.profiles.tagged(req.Tag)
	if len(runs) == 0 {
		return nil, nil
	}
	out := make([]Profile, 0, len(runs))
	for _, r := range runs {
		p, err := r.render(n.encode, cfg)
		if err != nil {
			return nil, err
		}
		out = append(out, *p)
	}
	return out, nil
}

// decodeTransaction decodes a base64 wire transaction, refusing it as
// surfpool does: "Invalid base64 transaction" or "Failed to deserialize
// transaction", with the cause as data.
func decodeTransaction(s string) (*txwire.Transaction, []byte, error) {
	if len(s) > inputlimit.MaxTransactionBase64 {
		return nil, nil, &Error{Code: CodeInvalidParams, Message: "Invalid base64 transaction",
			Data: fmt.Sprintf("%d characters, more than a %d-byte transaction takes", len(s), txwire.MaxWireSize)}
	}
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, nil, &Error{Code: CodeInvalidParams, Message: "Invalid base64 transaction", Data: err.Error()}
	}
	tx, err := ledger.DecodeTransaction(raw)
	if err != nil {
		return nil, nil, &Error{Code: CodeInvalidParams, Message: "Failed to deserialize transaction", Data: err.Error()}
	}
	return tx, raw, nil
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
