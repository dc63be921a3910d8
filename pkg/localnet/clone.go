package localnet

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/magic"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// cursorFlushSlots: after scanning this many base slots without work the
// cursor is persisted anyway, so a restart does not rescan them (each
// flush is one write on the ephemeral ledger; a restart reads at most
// this many base blocks back from history).
const cursorFlushSlots = 32

// bridgeState reads the validator's cursor and queues from the ephemeral
// ledger (processed: the bridge is its only writer).
func (b *bridge) bridgeState() (*magic.BridgeState, error) {
	a, _ := b.p.Ephemeral.Account(magic.BridgeStateID, ledger.Processed)
	if a == nil {
		return nil, errors.New("bridge state account missing from the ephemeral ledger")
	}
	return magic.DecodeBridgeState(a.Data)
}

// baseToEphemeral walks confirmed base blocks after the cursor and, for
// each successful transaction, clones what it delegated to this validator
// (step 1) and runs the post-delegation actions of each shuttle it opened
// (step 2 + k for its k-th shuttle instruction).
func (b *bridge) baseToEphemeral(ctx context.Context) (bool, error) {
	st, err := b.bridgeState()
	if err != nil {
		return false, err
	}
	cursor := st.Cursor
	from := cursor
	if from.Less(b.scanned) {
		from = b.scanned
	}
	tip := b.p.Base.Slot(ledger.Confirmed)
	if b.liveFrom != 0 && !b.syncing {
		// Slots past the newest delivered block come with their delivery,
		// which triggers another pass.
		tip = min(tip, max(b.liveTip, b.liveFrom-1))
	}
	for slot := range b.live {
		if slot < from.Slot {
			delete(b.live, slot)
		}
	}
	work := false
	start := max(from.Slot, 1)
	if first := b.p.Base.FirstAvailableBlock(); start < first && start <= tip {
		// History pruned (--limit-ledger-size) before the validator walked
		// it, e.g. while the rollup was halted: those slots are gone.
		b.log.Warn("base history was pruned before the validator walked it; eSPL transactions in those slots are not acted on",
			"from", start, "firstAvailable", first)
		start = first
	}
	// Only slots with blocks: a time travel skips many.
	slots, err := b.p.Base.Blocks(start, tip, maxScanBlocks, ledger.Confirmed)
	if err != nil {
		return false, fmt.Errorf("list base blocks: %w", err)
	}
	for _, slot := range slots {
		if err := ctx.Err(); err != nil {
			return work, err
		}
		txs, err := b.baseRecords(slot)
		if err != nil {
			return work, err
		}
		for _, br := range txs {
			if slot == from.Slot && br.index < from.Tx {
				continue
			}
			did, err := b.processBaseTx(ctx, cursor, slot, br.index, br.rec)
			work = work || did
			if err != nil {
				return work, err
			}
		}
		delete(b.live, slot)
		b.scanned = magic.Position{Slot: slot, Tx: math.MaxUint32}
	}
	if !work && b.scanned.Slot >= cursor.Slot+cursorFlushSlots {
		if err := b.flushCursor(ctx, b.scanned); err != nil {
			return work, err
		}
	}
	return work, nil
}

// baseRecord is a successful base transaction that invokes the eSPL
// program, with its index in its block.
type baseRecord struct {
	index uint32
	rec   *ledger.TxRecord
}

// baseRecords returns the eSPL transactions of a confirmed base slot:
// those the subscription delivered, or for a slot before it (or not
// delivered yet, during Sync) the block read back from history.
func (b *bridge) baseRecords(slot uint64) ([]baseRecord, error) {
	if b.liveFrom != 0 && slot >= b.liveFrom && slot <= b.liveTip {
		return b.live[slot], nil
	}
	_, txs, err := b.p.Base.Block(slot, ledger.Confirmed)
	if err != nil {
		return nil, fmt.Errorf("read base block %d: %w", slot, err)
	}
	return esplRecords(txs), nil
}

// esplRecords keeps the successful transactions of a block that invoke
// the eSPL program (and those that do not decode, which processBaseTx
// reports).
func esplRecords(txs []*ledger.TxRecord) []baseRecord {
	var out []baseRecord
	for i, rec := range txs {
		if rec.Err != nil {
			continue
		}
		if tx, err := rec.Transaction(); err == nil && !invokes(&tx.Message, espl.ProgramID) {
			continue
		}
		out = append(out, baseRecord{index: uint32(i), rec: rec})
	}
	return out
}

// invokes reports whether one of msg's instructions calls program.
func invokes(msg *txwire.Message, program solana.PublicKey) bool {
	for _, ci := range msg.Instructions {
		if int(ci.ProgramIDIndex) < len(msg.AccountKeys) && msg.AccountKeys[ci.ProgramIDIndex] == program {
			return true
		}
	}
	return false
}

// maxScanBlocks bounds the base blocks one pass reads; the next pass goes
// on from there.
const maxScanBlocks = 4096

// flushCursor records pos as done without other work.
func (b *bridge) flushCursor(ctx context.Context, pos magic.Position) error {
	_, err := b.p.Ephemeral.Apply(ctx, func(w ledger.AccountWriter) error {
		st, err := writerBridgeState(w)
		if err != nil {
			return err
		}
		if !st.Cursor.Less(pos) {
			return nil
		}
		st.Cursor = pos
		setBridgeState(w, st)
		return nil
	})
	return err
}

func writerBridgeState(w ledger.AccountWriter) (*magic.BridgeState, error) {
	a := w.Get(magic.BridgeStateID)
	if a == nil {
		return nil, errors.New("bridge state account missing")
	}
	return magic.DecodeBridgeState(a.Data)
}

func setBridgeState(w ledger.AccountWriter, st *magic.BridgeState) {
	a := w.Get(magic.BridgeStateID)
	a.Data = st.Encode()
	w.Set(magic.BridgeStateID, a)
}

// baseTx is what one base transaction asks of the validator.
type baseTx struct {
	slot uint64
	// candidates are the writable accounts of its eSPL instructions:
	// those delegated to this validator in this slot get cloned.
	candidates []solana.PublicKey
	// shuttles are its shuttle instructions (ix 24, 25, 26).
	shuttles []espl.Decoded
}

func analyze(rec *ledger.TxRecord, slot uint64) (*baseTx, error) {
	tx, err := rec.Transaction()
	if err != nil {
		return nil, err
	}
	out := &baseTx{slot: slot}
	seen := map[solana.PublicKey]bool{}
	m := &tx.Message
	for _, ci := range m.Instructions {
		if int(ci.ProgramIDIndex) >= len(m.AccountKeys) || m.AccountKeys[ci.ProgramIDIndex] != espl.ProgramID {
			continue
		}
		keys := make([]solana.PublicKey, 0, len(ci.Accounts))
		for _, a := range ci.Accounts {
			if int(a) >= len(m.AccountKeys) {
				return nil, fmt.Errorf("instruction account index %d out of range", a)
			}
			k := m.AccountKeys[a]
			keys = append(keys, k)
			if m.IsWritable(int(a)) && !seen[k] {
				seen[k] = true
				out.candidates = append(out.candidates, k)
			}
		}
		d, err := espl.Decode(ci.Data, keys)
		if err != nil {
			continue // not one the validator acts on
		}
		switch d.(type) {
		case espl.DepositShuttleIx, espl.PrivateTransferIx, espl.WithdrawShuttleIx:
			out.shuttles = append(out.shuttles, d)
		}
	}
	return out, nil
}

// processBaseTx performs the steps of one base transaction that the
// cursor does not show as done.
func (b *bridge) processBaseTx(ctx context.Context, cursor magic.Position, slot uint64, i uint32, rec *ledger.TxRecord) (bool, error) {
	bt, err := analyze(rec, slot)
	if err != nil {
		b.log.Warn("skipping undecodable base transaction", "slot", slot, "tx", rec.Signature, "err", err)
		return false, nil
	}
	if len(bt.candidates) == 0 {
		return false, nil
	}
	work := false
	if pos := (magic.Position{Slot: slot, Tx: i, Step: 1}); cursor.Less(pos) {
		did, err := b.clone(ctx, pos, bt)
		if err != nil {
			return work, fmt.Errorf("clone delegations of base tx %s: %w", rec.Signature, err)
		}
		work = work || did
	}
	for k, d := range bt.shuttles {
		pos := magic.Position{Slot: slot, Tx: i, Step: uint32(2 + k)}
		if !cursor.Less(pos) {
			continue
		}
		if err := b.runActions(ctx, pos, d); err != nil {
			return true, fmt.Errorf("post-delegation actions of base tx %s: %w", rec.Signature, err)
		}
		work = true
	}
	return work, nil
}

// delegated is a base account delegated to this validator.
type delegated struct {
	key     solana.PublicKey
	account *ledger.Account
	record  espl.DelegationRecord
}

// delegatedIn returns the base account if it is delegated to this
// validator in slot (a later delegation, or one that has since ended, is
// not this transaction's to clone).
func (b *bridge) delegatedIn(k solana.PublicKey, slot uint64) (*delegated, bool) {
	a, _ := b.p.Base.Account(k, ledger.Confirmed)
	if a == nil || a.Owner != espl.DelegationProgramID {
		return nil, false
	}
	rk, _ := espl.FindDelegationRecord(k)
	r, _ := b.p.Base.Account(rk, ledger.Confirmed)
	if r == nil {
		return nil, false
	}
	rec, err := espl.DecodeDelegationRecord(r.Data)
	if err != nil || rec.Authority != b.me || rec.DelegationSlot != slot {
		return nil, false
	}
	return &delegated{key: k, account: a, record: rec}, true
}

// clone copies the accounts this transaction delegated to the validator
// into the ephemeral ledger (with their original owner) together with
// what they need there: the mint of an eATA, the projection of its
// balance into its owner's ATA, a shuttle's metadata; a transfer queue is
// registered for the crank. One Apply does all of it and advances the
// cursor, so it happens exactly once.
func (b *bridge) clone(ctx context.Context, pos magic.Position, bt *baseTx) (bool, error) {
	var dels []*delegated
	for _, k := range bt.candidates {
		if d, ok := b.delegatedIn(k, bt.slot); ok {
			dels = append(dels, d)
		}
	}
	if len(dels) == 0 {
		return false, nil
	}
	// Base reads happen outside the Apply (it runs on the ephemeral
	// ledger's slot loop and must stay short).
	type extra struct {
		mint, meta *ledger.Account
	}
	extras := make([]extra, len(dels))
	for i, d := range dels {
		if e, err := espl.DecodeEphemeralATA(d.account.Data); err == nil && d.record.Owner == espl.ProgramID {
			extras[i].mint = b.rollupMint(e.Mint)
			if m, _ := b.p.Base.Account(e.Owner, ledger.Confirmed); m != nil && m.Owner == espl.ProgramID && len(m.Data) == espl.ShuttleMetadataSize {
				extras[i].meta = m
			}
		}
	}
	rent := b.p.Ephemeral.Rent()
	_, err := b.p.Ephemeral.Apply(ctx, func(w ledger.AccountWriter) error {
		st, err := writerBridgeState(w)
		if err != nil {
			return err
		}
		if !st.Cursor.Less(pos) {
			return nil
		}
		for i, d := range dels {
			if w.Get(d.key) != nil && !staleClone(w, d) {
				continue // already on the rollup
			}
			w.Set(d.key, &ledger.Account{Lamports: d.account.Lamports, Owner: d.record.Owner, Data: d.account.Data})
			if d.record.Owner != espl.ProgramID {
				continue
			}
			if e, err := espl.DecodeEphemeralATA(d.account.Data); err == nil {
				x := extras[i]
				if x.mint == nil || !spl.IsTokenProgram(x.mint.Owner) {
					return fmt.Errorf("eATA %s: mint %s missing on base", d.key, e.Mint)
				}
				w.Set(e.Mint, x.mint)
				if x.meta != nil && w.Get(e.Owner) == nil {
					w.Set(e.Owner, x.meta)
				}
				project(w, rent, e, x.mint.Owner)
				continue
			}
			if _, err := espl.OpenTransferQueue(d.account.Data); err == nil && len(d.account.Data) != espl.StealthPoolSize {
				h, _ := espl.DecodeTransferQueueHeader(d.account.Data)
				if h.Validator == b.me && !containsKey(st.Queues, d.key) {
					st.Queues = append(st.Queues, d.key)
				}
			}
		}
		st.Cursor = pos
		setBridgeState(w, st)
		return nil
	})
	if err != nil {
		return false, err
	}
	for _, d := range dels {
		b.log.Debug("cloned delegation", "account", d.key, "owner", d.record.Owner, "slot", bt.slot)
	}
	return true, nil
}

// rollupMint is the base mint as the rollup gets it. The rollup's copy of
// a mint is a decimals source whose supply the crank's burns reduce
// (docs/localnet.md §4), so it must cover every claim on the rollup. A
// native mint's supply is always 0 (wrapped SOL is backed by lamports,
// never minted), so its copy carries the global vault's balance instead:
// everything deposited into the rollup, and so at least what the crank
// can burn. Other mints' supply already counts the vault.
func (b *bridge) rollupMint(key solana.PublicKey) *ledger.Account {
	m, _ := b.p.Base.Account(key, ledger.Confirmed)
	if m == nil || (key != spl.NativeMintID && key != spl.NativeMint2022ID) {
		return m
	}
	mint, err := spl.DecodeMint(m.Data)
	if err != nil {
		return m
	}
	vaultATA, _ := espl.FindVaultATA(key, m.Owner)
	va, _ := b.p.Base.Account(vaultATA, ledger.Confirmed)
	if va == nil {
		return m
	}
	vault, err := spl.DecodeTokenAccount(va.Data)
	if err != nil || vault.Amount <= mint.Supply {
		return m
	}
	mint.Supply = vault.Amount
	c := m.Clone()
	c.Data = append(mint.Encode(), m.Data[spl.MintSize:]...)
	return c
}

// staleClone reports whether the rollup still holds the clone of an
// earlier delegation of d's account, left behind by an eviction that did
// not happen (its projection is drained and frozen): it is replaced.
func staleClone(w ledger.AccountWriter, d *delegated) bool {
	e, err := espl.DecodeEphemeralATA(d.account.Data)
	if err != nil || d.record.Owner != espl.ProgramID {
		return false
	}
	for _, tp := range []solana.PublicKey{spl.TokenProgramID, spl.Token2022ProgramID} {
		a := w.Get(spl.AssociatedTokenAddress(e.Owner, e.Mint, tp))
		if a == nil || a.Owner != tp {
			continue
		}
		if ta, err := spl.DecodeTokenAccount(a.Data); err == nil && ta.State == spl.StateFrozen && ta.Amount == 0 {
			return true
		}
	}
	return false
}

// project writes the ephemeral projection of eATA e: its owner's ATA (same
// address as on base) holding the eATA's amount. A plain token account
// already at that address (tokens sent to it on the rollup while the eATA
// was not delegated) keeps its balance, which joins the eATA's.
func project(w ledger.AccountWriter, rent runtime.Rent, e espl.EphemeralATA, tokenProgram solana.PublicKey) {
	ata := spl.AssociatedTokenAddress(e.Owner, e.Mint, tokenProgram)
	amount := e.Amount
	if cur := w.Get(ata); cur != nil && cur.Owner == tokenProgram {
		if ta, err := spl.DecodeTokenAccount(cur.Data); err == nil && ta.Mint == e.Mint && ta.Owner == e.Owner && ta.State == spl.StateInitialized {
			amount += ta.Amount
		}
	}
	data := spl.TokenAccount{Mint: e.Mint, Owner: e.Owner, Amount: amount, State: spl.StateInitialized}.Encode()
	if tokenProgram == spl.Token2022ProgramID {
		// The ATA program gives Token-2022 accounts the ImmutableOwner
		// extension: account type, then its empty TLV entry.
		data = append(data, spl.AccountTypeAccount, 7, 0, 0, 0)
	}
	w.Set(ata, &ledger.Account{Lamports: rent.MinimumBalance(len(data)), Owner: tokenProgram, Data: data})
}

func containsKey(ks []solana.PublicKey, k solana.PublicKey) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

// runActions executes the post-delegation actions of one shuttle
// instruction on the ephemeral ledger, in one transaction that also
// advances the cursor. If the actions fail (say, the withdrawn balance is
// not there), the shuttle is closed instead, which refunds whatever it
// holds to its owner on base.
func (b *bridge) runActions(ctx context.Context, pos magic.Position, d espl.Decoded) error {
	plan, err := b.actions(d)
	if err != nil {
		return err
	}
	if !plan.delegated {
		return b.flushCursor(ctx, pos)
	}
	if len(plan.actions) > 0 {
		rec, err := b.execute(ctx, pos, plan.signers, plan.actions)
		if err != nil {
			return err
		}
		if rec.Err == nil || failedAt(rec, 0, magic.ErrCursorNotAdvanced) {
			return nil
		}
		b.log.Warn("post-delegation actions failed; refunding the shuttle", "shuttle", plan.shuttle, "err", rec.Err, "logs", logsOf(rec))
	}
	rec, err := b.execute(ctx, pos, plan.signers, plan.fallback)
	if err != nil {
		return err
	}
	if rec.Err != nil && !failedAt(rec, 0, magic.ErrCursorNotAdvanced) {
		// Nothing more can be done for this shuttle; do not block the
		// ones after it.
		b.log.Error("closing a shuttle failed; it stays delegated", "shuttle", plan.shuttle, "err", rec.Err, "logs", logsOf(rec))
		return b.flushCursor(ctx, pos)
	}
	return nil
}

func (b *bridge) execute(ctx context.Context, pos magic.Position, signers []solana.PublicKey, actions []txwire.Instruction) (*ledger.TxRecord, error) {
	exec, err := magic.ExecuteActions(b.me, signers, actions)
	if err != nil {
		return nil, err
	}
	return b.send(ctx, b.p.Ephemeral, magic.AdvanceBaseCursor(b.me, pos), exec)
}

// actionPlan is the post-delegation actions of one shuttle.
type actionPlan struct {
	shuttle   solana.PublicKey
	delegated bool // the shuttle is delegated to this validator
	signers   []solana.PublicKey
	actions   []txwire.Instruction
	fallback  []txwire.Instruction
}

// actions builds the post-delegation actions a shuttle instruction
// registered (espl-program.md §7 ix 24, 26; §9.3 for ix 25).
func (b *bridge) actions(d espl.Decoded) (*actionPlan, error) {
	var owner, payer, mint, tp, source solana.PublicKey
	var id uint32
	switch v := d.(type) {
	case espl.DepositShuttleIx:
		owner, payer, mint, tp, source, id = v.Owner, v.Payer, v.Mint, v.TokenProgram, v.Source, v.ShuttleID
	case espl.PrivateTransferIx:
		owner, payer, mint, tp, source, id = v.Owner, v.Payer, v.Mint, v.TokenProgram, v.Source, v.ShuttleID
	case espl.WithdrawShuttleIx:
		owner, payer, mint, tp, source, id = v.Owner, v.Payer, v.Mint, v.TokenProgram, v.OwnerATA, v.ShuttleID
	default:
		return nil, fmt.Errorf("not a shuttle instruction: %T", d)
	}
	meta, _ := espl.FindShuttleMetadata(owner, mint, id)
	seata, _ := espl.FindEphemeralATA(meta, mint)
	plan := &actionPlan{shuttle: seata, signers: []solana.PublicKey{owner}}
	if _, ok := b.delegatedTo(seata); !ok {
		return plan, nil
	}
	plan.delegated = true
	// The shuttle's rent goes back to whoever paid it (its metadata's
	// payer); what is left in it goes back to the owner's source account.
	closeShuttle := espl.UndelegateAndCloseShuttle(espl.UndelegateAndCloseShuttleArgs{
		Payer: b.me, RentReimbursement: payer, Owner: owner, Mint: mint, TokenProgram: tp, ShuttleID: id, Destination: source,
	})
	plan.fallback = []txwire.Instruction{closeShuttle}
	merge := espl.MergeShuttle(espl.MergeShuttleArgs{Owner: owner, Mint: mint, TokenProgram: tp, ShuttleID: id})
	switch v := d.(type) {
	case espl.DepositShuttleIx:
		merge = espl.MergeShuttle(espl.MergeShuttleArgs{Owner: owner, Mint: mint, TokenProgram: tp, ShuttleID: id, Destination: v.Destination})
		plan.actions = []txwire.Instruction{merge, closeShuttle}
	case espl.WithdrawShuttleIx:
		decimals, err := b.decimals(mint)
		if err != nil {
			return nil, err
		}
		wallet := spl.AssociatedTokenAddress(meta, mint, tp)
		pull := spl.TokenTransferChecked(tp, spl.AssociatedTokenAddress(owner, mint, tp), mint, wallet, owner, v.Amount, decimals)
		plan.actions = []txwire.Instruction{pull, closeShuttle}
	case espl.PrivateTransferIx:
		payload, err := espl.OpenPrivateTransfer(b.key, v)
		if err != nil {
			b.log.Warn("cannot open a private transfer; refunding it", "shuttle", seata, "err", err)
			return plan, nil
		}
		q16, ok := v.QueueInstruction(payload)
		if !ok || q16.Validate() != nil {
			b.log.Warn("private transfer payload rejected; refunding it", "shuttle", seata)
			return plan, nil
		}
		decimals, err := b.decimals(mint)
		if err != nil {
			return nil, err
		}
		_, fee, _, _ := espl.PrivateTransferAmounts(v.Amount, v.ExactOut)
		plan.actions = []txwire.Instruction{merge, q16.Instruction()}
		if fee > 0 {
			ownerATA := spl.AssociatedTokenAddress(owner, mint, tp)
			plan.actions = append(plan.actions, spl.TokenTransferChecked(tp, ownerATA, mint, q16.QueueVaultATA, owner, fee, decimals))
		}
		plan.actions = append(plan.actions, closeShuttle)
	}
	return plan, nil
}

// delegatedTo reports whether a base account is delegated to this
// validator, with its record.
func (b *bridge) delegatedTo(k solana.PublicKey) (espl.DelegationRecord, bool) {
	a, _ := b.p.Base.Account(k, ledger.Confirmed)
	if a == nil || a.Owner != espl.DelegationProgramID {
		return espl.DelegationRecord{}, false
	}
	rk, _ := espl.FindDelegationRecord(k)
	r, _ := b.p.Base.Account(rk, ledger.Confirmed)
	if r == nil {
		return espl.DelegationRecord{}, false
	}
	rec, err := espl.DecodeDelegationRecord(r.Data)
	return rec, err == nil && rec.Authority == b.me
}

func (b *bridge) decimals(mint solana.PublicKey) (uint8, error) {
	a, _ := b.p.Base.Account(mint, ledger.Confirmed)
	if a == nil {
		return 0, fmt.Errorf("mint %s missing on base", mint)
	}
	m, err := spl.DecodeMint(a.Data)
	if err != nil {
		return 0, fmt.Errorf("mint %s: %w", mint, err)
	}
	return m.Decimals, nil
}
