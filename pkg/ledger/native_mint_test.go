package ledger

import (
	"bytes"
	"math"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// nativeMintBytes is Agave's native_mint::ACCOUNT_DATA: no mint authority,
// supply 0, decimals 9 (byte 44), initialized (byte 45), no freeze
// authority.
var nativeMintBytes = func() []byte {
	b := make([]byte, 82)
	b[44], b[45] = 9, 1
	return b
}()

// requireNativeMints checks both native mints at commitment c.
func requireNativeMints(t *testing.T, l *Ledger, c Commitment) {
	t.Helper()
	for _, tc := range []struct {
		key, owner solana.PublicKey
		lamports   uint64
	}{
		{spl.NativeMintID, spl.TokenProgramID, 1_000_000_000},
		{spl.NativeMint2022ID, spl.Token2022ProgramID, 1_461_600},
	} {
		a, _ := l.Account(tc.key, c)
		if a == nil {
			t.Fatalf("native mint %s missing at %s", tc.key, c)
		}
		if a.Owner != tc.owner || a.Lamports != tc.lamports || !bytes.Equal(a.Data, nativeMintBytes) || a.Executable || a.RentEpoch != math.MaxUint64 {
			t.Errorf("native mint %s = owner %s lamports %d executable %v rent epoch %d data % x",
				tc.key, a.Owner, a.Lamports, a.Executable, a.RentEpoch, a.Data)
		}
	}
}

func TestNativeMintsAtGenesis(t *testing.T) {
	l := openTest(t, Config{})
	requireNativeMints(t, l, Finalized)
	// A ledger without the token programs has no native mints.
	bare := openTest(t, Config{NoBuiltins: true})
	for _, k := range []solana.PublicKey{spl.NativeMintID, spl.NativeMint2022ID} {
		if a, _ := bare.Account(k, Processed); a != nil {
			t.Errorf("ledger without token programs has %s", k)
		}
	}
}

// dropNativeMints makes l look like a ledger created before it had native
// mints (a data directory from an older ferry), keeping what else the
// addresses should hold.
func dropNativeMints(t *testing.T, l *Ledger, replace map[solana.PublicKey]*Account) {
	t.Helper()
	ctx := ctxT(t)
	if _, err := l.Apply(ctx, func(w AccountWriter) error {
		for _, k := range []solana.PublicKey{spl.NativeMintID, spl.NativeMint2022ID} {
			w.Set(k, replace[k])
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.AdvanceSlot(ctx); err != nil {
		t.Fatal(err)
	}
}

// appliedIn is what the Apply calls of l's working slot wrote.
func appliedIn(l *Ledger) [][]AccountWrite {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.working.applied
}

func TestNativeMintsAddedOnResume(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Name: "base", DataDir: dir, ManualSlots: true}
	l, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dropNativeMints(t, l, nil)
	tip, genesis := l.Slot(Confirmed), l.GenesisHash()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	l, err = Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	requireNativeMints(t, l, Processed)
	if l.GenesisHash() != genesis {
		t.Error("genesis hash changed")
	}
	// One Apply in the first new slot wrote them; history before it is
	// untouched (the finalized state, the old tip, still lacks them).
	if got := l.Slot(Processed); got != tip+1 {
		t.Errorf("working slot %d, want %d", got, tip+1)
	}
	ap := appliedIn(l)
	if len(ap) != 1 || len(ap[0]) != 2 || ap[0][0].Key != spl.NativeMintID || ap[0][1].Key != spl.NativeMint2022ID {
		t.Fatalf("applied %+v", ap)
	}
	if a, _ := l.Account(spl.NativeMintID, Finalized); a != nil {
		t.Error("native mint appeared in finalized history")
	}
	if _, err := l.AdvanceSlot(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	requireNativeMints(t, l, Confirmed)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	// Once: the next open finds them and writes nothing.
	l, err = Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	requireNativeMints(t, l, Finalized)
	if ap := appliedIn(l); len(ap) != 0 {
		t.Errorf("second resume applied %+v", ap)
	}
}

// TestNativeMintResumeKeepsParkedLamports covers addresses that received
// SOL while the mint did not exist (they become the mint, keeping a larger
// balance) and an address taken by something else (left alone).
func TestNativeMintResumeKeepsParkedLamports(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Name: "base", DataDir: dir, ManualSlots: true}
	l, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	other := solana.MustPublicKeyFromBase58("Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo")
	taken := &Account{Lamports: 5_000_000, Owner: other, Data: []byte{1, 2, 3}}
	dropNativeMints(t, l, map[solana.PublicKey]*Account{
		spl.NativeMintID:     {Lamports: 7_000_000_000, Owner: spl.SystemProgramID},
		spl.NativeMint2022ID: taken,
	})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, err = Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	a, _ := l.Account(spl.NativeMintID, Processed)
	if a == nil || a.Owner != spl.TokenProgramID || a.Lamports != 7_000_000_000 || !bytes.Equal(a.Data, nativeMintBytes) {
		t.Errorf("SPL native mint = %+v", a)
	}
	b, _ := l.Account(spl.NativeMint2022ID, Processed)
	if b == nil || b.Owner != other || b.Lamports != taken.Lamports || !bytes.Equal(b.Data, taken.Data) {
		t.Errorf("taken address rewritten: %+v", b)
	}
}

// TestWrappedSOLLedgerFlow wraps SOL the way @solana/spl-token's
// createWrappedNativeAccount does, moves it with TransferChecked and
// unwraps it with CloseAccount, as real transactions, checking every
// lamport (fees, the rent-exempt reserve) and the transactions' token
// balances.
func TestWrappedSOLLedgerFlow(t *testing.T) {
	l := openTest(t, Config{})
	const (
		sol     = 1_000_000_000
		reserve = 2_039_280
	)
	if got := l.MinimumBalanceForRentExemption(spl.TokenAccountSize); got != reserve {
		t.Fatalf("rent-exempt minimum for 165 bytes = %d", got)
	}
	alice, bob := fundedWallet(t, l, 10*sol), fundedWallet(t, l, sol)
	a, b := pubkeyOf(alice), pubkeyOf(bob)
	aATA := spl.AssociatedTokenAddress(a, spl.NativeMintID, spl.TokenProgramID)
	bATA := spl.AssociatedTokenAddress(b, spl.NativeMintID, spl.TokenProgramID)
	balance := func(k solana.PublicKey) uint64 {
		v, _ := l.Balance(k, Processed)
		return v
	}
	wsol := func(k solana.PublicKey) spl.TokenAccount {
		t.Helper()
		acc, _ := l.Account(k, Processed)
		if acc == nil {
			t.Fatalf("%s missing", k)
		}
		ta, err := spl.DecodeTokenAccount(acc.Data)
		if err != nil {
			t.Fatal(err)
		}
		if ta.IsNative == nil || *ta.IsNative != reserve || acc.Lamports != reserve+ta.Amount || acc.RentEpoch != math.MaxUint64 {
			t.Errorf("%s: is_native %v amount %d lamports %d rent epoch %d", k, ta.IsNative, ta.Amount, acc.Lamports, acc.RentEpoch)
		}
		return ta
	}
	tb := func(tbs []TokenBalance, keys []solana.PublicKey, k solana.PublicKey) *TokenBalance {
		for i := range tbs {
			if keys[tbs[i].AccountIndex] == k {
				return &tbs[i]
			}
		}
		return nil
	}
	keysOf := func(rec *TxRecord) []solana.PublicKey {
		tx, err := txwire.Decode(rec.Raw)
		if err != nil {
			t.Fatal(err)
		}
		return tx.Message.AccountKeys
	}

	// Wrap 2 SOL.
	rec := mustProcess(t, l, buildTx(t, l, alice, []txwire.Instruction{
		spl.CreateAssociatedTokenAccount(a, a, spl.NativeMintID, spl.TokenProgramID, true),
		spl.SystemTransfer(a, aATA, 2*sol),
		spl.TokenSyncNative(spl.TokenProgramID, aATA),
	}))
	aliceFees := rec.Meta.Fee
	if got := balance(a); got != 10*sol-2*sol-reserve-rec.Meta.Fee {
		t.Errorf("alice after wrap %d", got)
	}
	if ta := wsol(aATA); ta.Amount != 2*sol || ta.Owner != a || ta.Mint != spl.NativeMintID {
		t.Errorf("alice wSOL %+v", ta)
	}
	keys := keysOf(rec)
	if tb(rec.Meta.PreTokenBalances, keys, aATA) != nil {
		t.Error("pre token balance for an account that did not exist")
	}
	if p := tb(rec.Meta.PostTokenBalances, keys, aATA); p == nil || p.Amount != 2*sol || p.Decimals != 9 || p.Mint != spl.NativeMintID || p.Owner != a || p.ProgramID != spl.TokenProgramID {
		t.Errorf("post token balance %+v", p)
	}

	// Send 0.5 SOL of it to bob (alice pays for bob's ATA).
	aliceBefore := balance(a)
	rec = mustProcess(t, l, buildTx(t, l, alice, []txwire.Instruction{
		spl.CreateAssociatedTokenAccount(a, b, spl.NativeMintID, spl.TokenProgramID, true),
		spl.TokenTransferChecked(spl.TokenProgramID, aATA, spl.NativeMintID, bATA, a, sol/2, 9),
	}))
	aliceFees += rec.Meta.Fee
	if got := balance(a); got != aliceBefore-reserve-rec.Meta.Fee {
		t.Errorf("alice after transfer %d, want %d", got, aliceBefore-reserve-rec.Meta.Fee)
	}
	if wsol(aATA).Amount != 3*sol/2 || wsol(bATA).Amount != sol/2 {
		t.Error("amounts after transfer")
	}
	keys = keysOf(rec)
	if p := tb(rec.Meta.PreTokenBalances, keys, aATA); p == nil || p.Amount != 2*sol {
		t.Errorf("alice pre token balance %+v", p)
	}
	if p := tb(rec.Meta.PostTokenBalances, keys, bATA); p == nil || p.Amount != sol/2 || p.Owner != b {
		t.Errorf("bob post token balance %+v", p)
	}

	// Bob unwraps: the reserve comes back with the tokens.
	bobBefore := balance(b)
	rec = mustProcess(t, l, buildTx(t, l, bob, []txwire.Instruction{
		spl.TokenCloseAccount(spl.TokenProgramID, bATA, b, b),
	}))
	if got := balance(b); got != bobBefore+reserve+sol/2-rec.Meta.Fee {
		t.Errorf("bob after unwrap %d", got)
	}
	if acc, _ := l.Account(bATA, Processed); acc != nil {
		t.Errorf("closed ATA still exists: %+v", acc)
	}
	keys = keysOf(rec)
	if p := tb(rec.Meta.PreTokenBalances, keys, bATA); p == nil || p.Amount != sol/2 {
		t.Errorf("bob pre token balance %+v", p)
	}
	if p := tb(rec.Meta.PostTokenBalances, keys, bATA); p != nil {
		t.Errorf("post token balance of a closed account %+v", p)
	}

	// Alice unwraps the rest; overall she spent her fees and bob's ATA
	// rent (which bob got back, with the half SOL).
	fees := aliceFees + mustProcess(t, l, buildTx(t, l, alice, []txwire.Instruction{
		spl.TokenCloseAccount(spl.TokenProgramID, aATA, a, a),
	})).Meta.Fee
	if got := balance(a); got != 10*sol-sol/2-reserve-fees {
		t.Errorf("alice at the end %d, want %d (fees %d)", got, 10*sol-sol/2-reserve-fees, fees)
	}
	// The mint itself is untouched by wrapping.
	requireNativeMints(t, l, Processed)
}
