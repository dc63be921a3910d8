package ledger

import (
	"crypto/ed25519"
	"encoding/binary"
	"errors"
	"slices"
	"testing"

	"github.com/gagliardetto/solana-go"

	rt "github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// toV0 turns a compiled legacy message into a v0 message that loads the
// given keys (none a signer or a program) through table, whose addresses
// are addrs.
func toV0(t testing.TB, m *txwire.Message, table solana.PublicKey, addrs, load []solana.PublicKey) *txwire.Message {
	t.Helper()
	type entry struct {
		key      solana.PublicKey
		writable bool
	}
	var statics, lw, lr []entry
	for i, k := range m.AccountKeys {
		e := entry{k, m.IsWritable(i)}
		switch {
		case !slices.Contains(load, k):
			statics = append(statics, e)
		case e.writable:
			lw = append(lw, e)
		default:
			lr = append(lr, e)
		}
	}
	out := &txwire.Message{Version: txwire.V0, RecentBlockhash: m.RecentBlockhash, Header: m.Header}
	lk := txwire.AddressTableLookup{AccountKey: table}
	ro := 0
	for i, e := range statics {
		out.AccountKeys = append(out.AccountKeys, e.key)
		if i >= int(m.Header.NumRequiredSignatures) && !e.writable {
			ro++
		}
	}
	out.Header.NumReadonlyUnsignedAccounts = uint8(ro)
	index := func(k solana.PublicKey) uint8 {
		i := slices.Index(addrs, k)
		if i < 0 {
			t.Fatalf("%s is not in the table", k)
		}
		return uint8(i)
	}
	all := slices.Clone(out.AccountKeys)
	for _, e := range lw {
		lk.WritableIndexes = append(lk.WritableIndexes, index(e.key))
		all = append(all, e.key)
	}
	for _, e := range lr {
		lk.ReadonlyIndexes = append(lk.ReadonlyIndexes, index(e.key))
		all = append(all, e.key)
	}
	out.AddressTableLookups = []txwire.AddressTableLookup{lk}
	for _, ix := range m.Instructions {
		c := txwire.CompiledInstruction{ProgramIDIndex: uint8(slices.Index(all, m.AccountKeys[ix.ProgramIDIndex])), Data: ix.Data}
		for _, a := range ix.Accounts {
			c.Accounts = append(c.Accounts, uint8(slices.Index(all, m.AccountKeys[a])))
		}
		out.Instructions = append(out.Instructions, c)
	}
	return out
}

func signMsg(t testing.TB, m *txwire.Message, keys ...ed25519.PrivateKey) []byte {
	t.Helper()
	tx := txwire.NewUnsigned(m)
	if err := tx.Sign(keys...); err != nil {
		t.Fatal(err)
	}
	return tx.Bytes()
}

// makeTable creates a lookup table holding addrs (extended in this slot)
// and returns its key.
func makeTable(t *testing.T, l *Ledger, payer ed25519.PrivateKey, addrs []solana.PublicKey) solana.PublicKey {
	t.Helper()
	create, key := spl.ALTCreate(pubkeyOf(payer), pubkeyOf(payer), l.Slot(Processed)-1)
	mustProcess(t, l, buildTx(t, l, payer, []txwire.Instruction{create, spl.ALTExtend(key, pubkeyOf(payer), pubkeyOf(payer), addrs)}))
	return key
}

// TestLookupTableLoading runs v0 transactions through a table: addresses
// added in this slot are not usable until the next, loaded accounts are
// locked and written like static ones, the meta lists them, and Agave's
// loading errors reject the transaction without charging it.
func TestLookupTableLoading(t *testing.T) {
	l := openTest(t, Config{})
	ctx := ctxT(t)
	if _, err := l.AdvanceSlot(ctx); err != nil {
		t.Fatal(err)
	}
	payer := fundedWallet(t, l, 10_000_000_000)
	to, memoSigner := solana.PublicKey{0xd1}, solana.PublicKey{0xd2}
	addrs := []solana.PublicKey{to, spl.SysvarClockID, memoSigner}
	table := makeTable(t, l, payer, addrs)

	transfer := func() []byte {
		bh, _ := l.LatestBlockhash(Processed)
		// System Transfer ignores the extra read-only account.
		ix := spl.SystemTransfer(pubkeyOf(payer), to, 1_000_000)
		ix.Accounts = append(ix.Accounts, txwire.Readonly(spl.SysvarClockID))
		m, err := txwire.Compile(pubkeyOf(payer), []txwire.Instruction{ix, spl.Memo(bh.Blockhash.String())}, bh.Blockhash)
		if err != nil {
			t.Fatal(err)
		}
		return signMsg(t, toV0(t, m, table, addrs, []solana.PublicKey{to, spl.SysvarClockID}), payer)
	}
	// Extended in this slot: not yet usable.
	if _, err := l.Process(ctx, transfer()); !errors.Is(err, rt.ErrInvalidAddressLookupTableIndex) {
		t.Fatalf("same-slot use: %v", err)
	}
	if _, err := l.AdvanceSlot(ctx); err != nil {
		t.Fatal(err)
	}
	raw := transfer()
	if _, err := l.Send(ctx, raw, SendOptions{SkipPreflight: true, PreflightCommitment: Processed}); err != nil {
		t.Fatal(err)
	}
	tx, _ := DecodeTransaction(raw)
	st, _ := l.SignatureStatuses([]solana.Signature{tx.Signatures[0]})
	if st[0] == nil || st[0].Err != nil {
		t.Fatalf("v0 transfer: %+v", st[0])
	}
	if _, err := l.AdvanceSlot(ctx); err != nil {
		t.Fatal(err)
	}
	if a, _ := l.Account(to, Processed); a == nil || a.Lamports != 1_000_000 {
		t.Fatalf("recipient %+v", a)
	}
	rec, err := l.Transaction(tx.Signatures[0], Processed)
	if err != nil || rec == nil {
		t.Fatal(err)
	}
	if !slices.Equal(rec.Meta.LoadedWritable, []solana.PublicKey{to}) || !slices.Equal(rec.Meta.LoadedReadonly, []solana.PublicKey{spl.SysvarClockID}) {
		t.Fatalf("loaded addresses %v / %v", rec.Meta.LoadedWritable, rec.Meta.LoadedReadonly)
	}

	// Loading errors, in Agave's words; none is charged.
	before, _ := l.Account(pubkeyOf(payer), Processed)
	bh, _ := l.LatestBlockhash(Processed)
	legacy, _ := txwire.Compile(pubkeyOf(payer), []txwire.Instruction{spl.SystemTransfer(pubkeyOf(payer), to, 1)}, bh.Blockhash)
	for _, tc := range []struct {
		name string
		edit func(m *txwire.Message)
		want *rt.TxError
	}{
		{"missing table", func(m *txwire.Message) { m.AddressTableLookups[0].AccountKey = solana.PublicKey{0xee} }, rt.ErrAddressLookupTableNotFound},
		{"not a table", func(m *txwire.Message) { m.AddressTableLookups[0].AccountKey = pubkeyOf(payer) }, rt.ErrInvalidAddressLookupTableOwner},
		{"not a table's data", func(m *txwire.Message) { m.AddressTableLookups[0].AccountKey = spl.NativeMintID }, rt.ErrInvalidAddressLookupTableOwner},
		{"index past the end", func(m *txwire.Message) { m.AddressTableLookups[0].WritableIndexes[0] = 3 }, rt.ErrInvalidAddressLookupTableIndex},
		{"duplicate of a static key", func(m *txwire.Message) {
			m.AddressTableLookups[0].ReadonlyIndexes = []uint8{0}
			m.AccountKeys = append(m.AccountKeys[:2:2], to)
		}, rt.ErrAccountLoadedTwice},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := toV0(t, legacy, table, addrs, []solana.PublicKey{to})
			tc.edit(m)
			_, err := l.Process(ctx, signMsg(t, m, payer))
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			// sendTransaction refuses it as Agave's RPC does.
			if tc.want != rt.ErrAccountLoadedTwice {
				var inv *InvalidTransactionError
				if _, err := l.Send(ctx, signMsg(t, m, payer), SendOptions{SkipPreflight: true, PreflightCommitment: Processed}); !errors.As(err, &inv) || !errors.Is(inv.TxErr, tc.want) {
					t.Fatalf("send: %v", err)
				}
			}
		})
	}
	if after, _ := l.Account(pubkeyOf(payer), Processed); after.Lamports != before.Lamports {
		t.Fatalf("rejected transactions were charged: %d → %d", before.Lamports, after.Lamports)
	}

	// A deactivated table serves until its slot leaves SlotHashes.
	mustProcess(t, l, buildTx(t, l, payer, []txwire.Instruction{spl.ALTDeactivate(table, pubkeyOf(payer))}))
	if _, err := l.AdvanceSlot(ctx); err != nil {
		t.Fatal(err)
	}
	mustProcess(t, l, transfer())
	if _, err := l.AdvanceSlots(ctx, spl.SlotHashesMaxEntries); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Process(ctx, transfer()); !errors.Is(err, rt.ErrAddressLookupTableNotFound) {
		t.Fatalf("deactivated table: %v", err)
	}
	mustProcess(t, l, buildTx(t, l, payer, []txwire.Instruction{spl.ALTClose(table, pubkeyOf(payer), pubkeyOf(payer))}))
	if a, _ := l.Account(table, Processed); a != nil {
		t.Fatalf("closed table still there: %+v", a)
	}
}

// TestSysvars: SlotHashes lists the previous slots newest first (at most
// 512) and RecentBlockhashes the last 150 blockhashes with their fee rate,
// both at Agave's fixed account sizes.
func TestSysvars(t *testing.T) {
	l := openTest(t, Config{})
	ctx := ctxT(t)
	if _, err := l.AdvanceSlots(ctx, 600); err != nil {
		t.Fatal(err)
	}
	sh, _ := l.Account(spl.SysvarSlotHashesID, Processed)
	if sh == nil || len(sh.Data) != 8+512*40 || sh.Owner != SysvarOwnerID {
		t.Fatalf("SlotHashes %+v", sh)
	}
	if n := binary.LittleEndian.Uint64(sh.Data); n != 512 {
		t.Fatalf("SlotHashes holds %d entries", n)
	}
	working := l.Slot(Processed)
	for i := 0; i < 512; i++ {
		slot := binary.LittleEndian.Uint64(sh.Data[8+40*i:])
		if slot != working-1-uint64(i) {
			t.Fatalf("entry %d is slot %d, want %d", i, slot, working-1-uint64(i))
		}
	}
	latest, _ := l.LatestBlockhash(Processed)
	if !slices.Equal(sh.Data[16:48], latest.Blockhash[:]) {
		t.Fatal("SlotHashes' newest entry is not the latest block")
	}
	rb, _ := l.Account(spl.SysvarRecentBlockhashesID, Processed)
	if rb == nil || len(rb.Data) != 8+150*40 || binary.LittleEndian.Uint64(rb.Data) != 150 {
		t.Fatalf("RecentBlockhashes %+v", rb)
	}
	if !slices.Equal(rb.Data[8:40], latest.Blockhash[:]) || binary.LittleEndian.Uint64(rb.Data[40:]) != uint64(l.cfg.LamportsPerSignature) {
		t.Fatal("RecentBlockhashes' newest entry")
	}
	supply, _ := l.Supply(Processed)
	if _, err := l.AdvanceSlot(ctx); err != nil {
		t.Fatal(err)
	}
	if again, _ := l.Supply(Processed); again != supply {
		t.Fatalf("refreshing the sysvars changed the supply: %d → %d", supply, again)
	}
}

// TestDurableNonce follows Agave's nonce rules: a transaction whose first
// instruction advances a nonce and whose blockhash is that nonce's value
// runs however old the nonce is; it advances the nonce even when it fails
// (and pays its fee); it cannot be replayed; and a nonce cannot be used in
// the slot it was advanced in.
func TestDurableNonce(t *testing.T) {
	l := openTest(t, Config{})
	ctx := ctxT(t)
	payer := fundedWallet(t, l, 10_000_000_000)
	auth := fundedWallet(t, l, 1_000_000_000)
	nonce := newKey(t)
	rent := l.cfg.Rent.MinimumBalance(spl.NonceAccountSize)
	mustProcess(t, l, buildTx(t, l, payer, []txwire.Instruction{
		spl.SystemCreateAccount(pubkeyOf(payer), pubkeyOf(nonce), rent, spl.NonceAccountSize, spl.SystemProgramID),
		spl.SystemInitializeNonce(pubkeyOf(nonce), pubkeyOf(auth)),
	}, nonce))
	stored := func() spl.NonceState {
		a, _ := l.Account(pubkeyOf(nonce), Processed)
		st, err := spl.DecodeNonce(a.Data)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	bh, _ := l.LatestBlockhash(Processed)
	if st := stored(); !st.Initialized || st.Authority != pubkeyOf(auth) || st.Nonce != spl.DurableNonce(bh.Blockhash) || st.LamportsPerSignature != 5000 {
		t.Fatalf("initialized nonce %+v", st)
	}
	to := solana.PublicKey{0xd3}
	nonceTx := func(ixs ...txwire.Instruction) []byte {
		all := append([]txwire.Instruction{spl.SystemAdvanceNonce(pubkeyOf(nonce), pubkeyOf(auth))}, ixs...)
		return buildTxWith(t, stored().Nonce, payer, all, auth)
	}
	// Same slot as the advance: the nonce is not usable yet.
	if _, err := l.Process(ctx, nonceTx(spl.SystemTransfer(pubkeyOf(payer), to, 1_000_000))); !errors.Is(err, rt.ErrBlockhashNotFound) {
		t.Fatalf("same-slot nonce: %v", err)
	}
	// Older than any recent blockhash, it still works.
	if _, err := l.AdvanceSlots(ctx, MaxProcessingAge+5); err != nil {
		t.Fatal(err)
	}
	ok := nonceTx(spl.SystemTransfer(pubkeyOf(payer), to, 1_000_000))
	rec := mustProcess(t, l, ok)
	latest, _ := l.LatestBlockhash(Processed)
	if st := stored(); st.Nonce != spl.DurableNonce(latest.Blockhash) {
		t.Fatal("a successful nonce transaction did not advance the nonce to the bank's blockhash")
	}
	if rec.Meta.Fee != 10_000 {
		t.Fatalf("fee %d", rec.Meta.Fee)
	}
	// Replaying it: the nonce has moved on.
	if _, err := l.Process(ctx, ok); !errors.Is(err, rt.ErrBlockhashNotFound) {
		t.Fatalf("replay: %v", err)
	}
	// A failing nonce transaction lands, pays and still advances.
	if _, err := l.AdvanceSlot(ctx); err != nil {
		t.Fatal(err)
	}
	payerBefore, _ := l.Account(pubkeyOf(payer), Processed)
	old := stored().Nonce
	failing := nonceTx(spl.SystemTransfer(pubkeyOf(payer), to, 1<<62))
	rec, err := l.Process(ctx, failing)
	if err != nil || rec.Err == nil {
		t.Fatalf("failing nonce transaction: %v %+v", err, rec)
	}
	latest, _ = l.LatestBlockhash(Processed)
	if st := stored(); st.Nonce == old || st.Nonce != spl.DurableNonce(latest.Blockhash) {
		t.Fatal("a failed nonce transaction did not advance the nonce")
	}
	if after, _ := l.Account(pubkeyOf(payer), Processed); after.Lamports != payerBefore.Lamports-10_000 {
		t.Fatalf("failed nonce transaction charged %d", payerBefore.Lamports-after.Lamports)
	}
	// Not a nonce transaction: advance second, wrong authority, stale value.
	if _, err := l.AdvanceSlot(ctx); err != nil {
		t.Fatal(err)
	}
	value := stored().Nonce
	for _, tc := range []struct {
		name string
		raw  []byte
	}{
		{"advance second", buildTxWith(t, value, payer, []txwire.Instruction{spl.Memo("x"), spl.SystemAdvanceNonce(pubkeyOf(nonce), pubkeyOf(auth))}, auth)},
		{"authority not signing", buildTxWith(t, value, payer, []txwire.Instruction{spl.SystemAdvanceNonce(pubkeyOf(nonce), pubkeyOf(payer))})},
		{"stale value", buildTxWith(t, old, payer, []txwire.Instruction{spl.SystemAdvanceNonce(pubkeyOf(nonce), pubkeyOf(auth))}, auth)},
	} {
		if _, err := l.Process(ctx, tc.raw); !errors.Is(err, rt.ErrBlockhashNotFound) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	// getFeeForMessage prices a nonce message by its nonce's fee rate.
	tx, _ := DecodeTransaction(nonceTx(spl.Memo("fee")))
	if fee, _ := l.FeeForMessage(&tx.Message, Processed); fee == nil || *fee != 10_000 {
		t.Fatalf("fee for a nonce message: %v", fee)
	}
	tx, _ = DecodeTransaction(buildTxWith(t, old, payer, []txwire.Instruction{spl.SystemAdvanceNonce(pubkeyOf(nonce), pubkeyOf(auth))}, auth))
	if fee, _ := l.FeeForMessage(&tx.Message, Processed); fee != nil {
		t.Fatalf("fee for a stale nonce message: %d", *fee)
	}
}

// TestIncinerator: lamports sent to the incinerator are exempt from the
// rent rule and burned when the block ends.
func TestIncinerator(t *testing.T) {
	l := openTest(t, Config{})
	ctx := ctxT(t)
	payer := fundedWallet(t, l, 10_000_000_000)
	mustProcess(t, l, buildTx(t, l, payer, []txwire.Instruction{spl.SystemTransfer(pubkeyOf(payer), spl.IncineratorID, 1000)}))
	if a, _ := l.Account(spl.IncineratorID, Processed); a == nil || a.Lamports != 1000 {
		t.Fatalf("incinerator %+v", a)
	}
	supply, _ := l.Supply(Processed)
	if _, err := l.AdvanceSlot(ctx); err != nil {
		t.Fatal(err)
	}
	if a, _ := l.Account(spl.IncineratorID, Processed); a != nil {
		t.Fatalf("incinerator not burned: %+v", a)
	}
	if after, _ := l.Supply(Processed); after != supply-1000 {
		t.Fatalf("supply %d → %d", supply, after)
	}
}
