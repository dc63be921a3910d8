package ledger

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	mathrand "math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"

	rt "github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

func TestGenesisAccounts(t *testing.T) {
	l := openTest(t, Config{})
	rent, _ := l.Account(spl.SysvarRentID, Finalized)
	if rent == nil || rent.Owner != SysvarOwnerID || len(rent.Data) != 17 {
		t.Fatalf("rent sysvar = %+v", rent)
	}
	if got := binary.LittleEndian.Uint64(rent.Data); got != 3480 {
		t.Errorf("lamports_per_byte_year = %d", got)
	}
	if got := math.Float64frombits(binary.LittleEndian.Uint64(rent.Data[8:])); got != 2 {
		t.Errorf("exemption_threshold = %v", got)
	}
	clock, _ := l.Account(spl.SysvarClockID, Processed)
	if clock == nil || len(clock.Data) != 40 || binary.LittleEndian.Uint64(clock.Data) != l.Slot(Processed) {
		t.Fatalf("clock sysvar = %+v", clock)
	}
	for _, tc := range []struct {
		id    solana.PublicKey
		owner solana.PublicKey
	}{
		{spl.SystemProgramID, rt.NativeLoaderID},
		{rt.ComputeBudgetProgramID, rt.NativeLoaderID},
		{spl.TokenProgramID, rt.BPFLoaderUpgradeableID},
		{spl.Token2022ProgramID, rt.BPFLoaderUpgradeableID},
		{spl.AssociatedTokenProgramID, rt.BPFLoaderUpgradeableID},
		{spl.MemoProgramID, rt.BPFLoaderUpgradeableID},
	} {
		a, _ := l.Account(tc.id, Finalized)
		if a == nil || !a.Executable || a.Owner != tc.owner {
			t.Errorf("program %s = %+v", tc.id, a)
		}
	}
	f, _ := l.Account(l.Faucet().PublicKey(), Finalized)
	if f == nil || f.Lamports != DefaultFaucetLamports {
		t.Fatalf("faucet = %+v", f)
	}
	if f.RentEpoch != math.MaxUint64 {
		t.Errorf("faucet rent epoch %d", f.RentEpoch)
	}
}

func TestTokenTransferLifecycle(t *testing.T) {
	l := openTest(t, Config{FinalityDepth: 2})
	ctx := ctxT(t)
	s := setupToken(t, l, 5_000_000)

	raw := buildTx(t, l, s.alice, []txwire.Instruction{
		spl.TokenTransferChecked(spl.TokenProgramID, s.aliceAta, s.mint, s.bobA, pubkeyOf(s.alice), 1_500_000, 6),
		spl.Memo("invoice 42"),
	})
	rec := mustProcess(t, l, raw)
	m := rec.Meta
	if m.Fee != 5000 {
		t.Errorf("fee = %d", m.Fee)
	}
	if m.PreBalances[0]-m.PostBalances[0] != 5000 {
		t.Errorf("payer balances %d -> %d", m.PreBalances[0], m.PostBalances[0])
	}
	if len(m.PreTokenBalances) != 2 || len(m.PostTokenBalances) != 2 {
		t.Fatalf("token balances %+v / %+v", m.PreTokenBalances, m.PostTokenBalances)
	}
	byOwner := func(tbs []TokenBalance, owner solana.PublicKey) uint64 {
		for _, tb := range tbs {
			if tb.Owner == owner {
				if tb.Decimals != 6 || tb.Mint != s.mint || tb.ProgramID != spl.TokenProgramID {
					t.Errorf("token balance %+v", tb)
				}
				return tb.Amount
			}
		}
		t.Fatalf("no token balance for %s", owner)
		return 0
	}
	if byOwner(m.PostTokenBalances, pubkeyOf(s.alice)) != 3_500_000 || byOwner(m.PostTokenBalances, pubkeyOf(s.bob)) != 1_500_000 {
		t.Errorf("post token balances %+v", m.PostTokenBalances)
	}
	logs := strings.Join(m.Logs, "\n")
	if !strings.Contains(logs, "Program TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA invoke [1]") || !strings.Contains(logs, "Program log: Memo (len 10)") {
		t.Errorf("logs:\n%s", logs)
	}
	if m.ComputeUnits == 0 || m.CostUnits == 0 {
		t.Errorf("compute %d cost %d", m.ComputeUnits, m.CostUnits)
	}

	// Processed now; confirmed once the slot is durable; finalized after
	// FinalityDepth more slots.
	st, _ := l.SignatureStatuses([]solana.Signature{rec.Signature})
	if st[0] == nil || st[0].Status != Processed {
		t.Fatalf("status = %+v", st[0])
	}
	if r, _ := l.Transaction(rec.Signature, Confirmed); r != nil {
		t.Fatal("transaction visible at confirmed before its slot is durable")
	}
	if got := tokenAmount(t, l, s.bobA, Confirmed); got != 0 {
		t.Errorf("bob at confirmed before durable = %d", got)
	}
	slot, err := l.AdvanceSlot(ctx)
	if err != nil || slot != rec.Slot {
		t.Fatalf("advance = %d, %v (tx slot %d)", slot, err, rec.Slot)
	}
	st, _ = l.SignatureStatuses([]solana.Signature{rec.Signature})
	if st[0].Status != Confirmed {
		t.Fatalf("status after advance = %+v", st[0])
	}
	if got := tokenAmount(t, l, s.bobA, Confirmed); got != 1_500_000 {
		t.Errorf("bob at confirmed = %d", got)
	}
	if got := tokenAmount(t, l, s.bobA, Finalized); got != 0 {
		t.Errorf("bob at finalized = %d", got)
	}
	got, err := l.Transaction(rec.Signature, Confirmed)
	if err != nil || got == nil || !bytes.Equal(got.Raw, raw) || got.Meta.Fee != 5000 || got.BlockTime == 0 {
		t.Fatalf("transaction = %+v, %v", got, err)
	}
	if _, err := l.AdvanceSlots(ctx, 2); err != nil {
		t.Fatal(err)
	}
	st, _ = l.SignatureStatuses([]solana.Signature{rec.Signature})
	if st[0].Status != Finalized {
		t.Fatalf("status after depth = %+v", st[0])
	}
	if got := tokenAmount(t, l, s.bobA, Finalized); got != 1_500_000 {
		t.Errorf("bob at finalized = %d", got)
	}
	owned, _ := l.TokenAccountsByOwner(pubkeyOf(s.bob), TokenFilter{Mint: &s.mint}, Finalized)
	if len(owned) != 1 || owned[0].Key != s.bobA {
		t.Errorf("token accounts of bob = %+v", owned)
	}
}

func TestFailedTransferKeepsFee(t *testing.T) {
	l := openTest(t, Config{})
	s := setupToken(t, l, 1000)
	before, _ := l.Balance(pubkeyOf(s.alice), Processed)
	rec, err := l.Process(ctxT(t), buildTx(t, l, s.alice, []txwire.Instruction{
		spl.TokenTransferChecked(spl.TokenProgramID, s.aliceAta, s.mint, s.bobA, pubkeyOf(s.alice), 1001, 6),
	}))
	if err != nil {
		t.Fatal(err)
	}
	j, _ := json.Marshal(rec.Err)
	if string(j) != `{"InstructionError":[0,{"Custom":1}]}` {
		t.Fatalf("err = %s", j)
	}
	after, _ := l.Balance(pubkeyOf(s.alice), Processed)
	if before-after != 5000 || rec.Meta.Fee != 5000 {
		t.Fatalf("balance %d -> %d, fee %d", before, after, rec.Meta.Fee)
	}
	if tokenAmount(t, l, s.aliceAta, Processed) != 1000 || tokenAmount(t, l, s.bobA, Processed) != 0 {
		t.Fatal("token balances changed by a failed transfer")
	}
	if !strings.Contains(strings.Join(rec.Meta.Logs, "\n"), "failed: custom program error: 0x1") {
		t.Errorf("logs %q", rec.Meta.Logs)
	}
	if len(rec.Writes) != 1 || rec.Writes[0].Key != pubkeyOf(s.alice) {
		t.Errorf("writes of a failed tx = %+v", rec.Writes)
	}
}

func TestPipelineRejections(t *testing.T) {
	l := openTest(t, Config{})
	ctx := ctxT(t)
	payer := fundedWallet(t, l, 1_000_000_000)
	to := newKey(t)
	transfer := []txwire.Instruction{spl.SystemTransfer(pubkeyOf(payer), pubkeyOf(to), 1_000_000)}
	stale, _ := l.LatestBlockhash(Processed)
	good := buildTx(t, l, payer, transfer)
	mustProcess(t, l, good)
	if _, err := l.AdvanceSlots(ctx, MaxProcessingAge+1); err != nil {
		t.Fatal(err)
	}

	badSig := buildTx(t, l, payer, transfer)
	badSig[5] ^= 1
	broke := newKey(t)
	lowFunds := fundedWallet(t, l, 893_000) // the 5 000 fee would leave 888 000 < 890 880
	big := buildTx(t, l, payer, []txwire.Instruction{spl.Memo(strings.Repeat("x", 1200))})
	sanitize := buildTx(t, l, payer, transfer)
	sanitize[1+64] = 0 // header: zero required signatures

	for _, tc := range []struct {
		name string
		raw  []byte
		want error
	}{
		{"bad signature", badSig, rt.ErrSignatureFailure},
		{"stale blockhash", buildTxWith(t, stale.Blockhash, payer, []txwire.Instruction{spl.SystemTransfer(pubkeyOf(payer), pubkeyOf(to), 7)}), rt.ErrBlockhashNotFound},
		{"unknown blockhash", buildTxWith(t, solana.Hash{1}, payer, transfer), rt.ErrBlockhashNotFound},
		{"fee payer without account", buildTx(t, l, broke, []txwire.Instruction{spl.Memo("hi")}), rt.ErrAccountNotFound},
		{"fee payer left below rent", buildTx(t, l, lowFunds, []txwire.Instruction{spl.Memo("hi")}), rt.InsufficientFundsForRent(0)},
		{"oversize", big, txwire.ErrTooLarge},
		{"malformed", []byte{1, 2, 3}, txwire.ErrMalformed},
		{"sanitize", sanitize, txwire.ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := l.Process(ctx, tc.raw)
			if !isTxErr(err, tc.want) {
				t.Fatalf("err = %v (%T), rec = %+v; want %v", err, err, rec, tc.want)
			}
		})
	}

	t.Run("duplicate", func(t *testing.T) {
		raw := buildTx(t, l, payer, []txwire.Instruction{spl.SystemTransfer(pubkeyOf(payer), pubkeyOf(to), 3)})
		mustProcess(t, l, raw)
		if _, err := l.Process(ctx, raw); !isTxErr(err, rt.ErrAlreadyProcessed) {
			t.Fatalf("same slot: %v", err)
		}
		if _, err := l.AdvanceSlot(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Process(ctx, raw); !isTxErr(err, rt.ErrAlreadyProcessed) {
			t.Fatalf("next slot: %v", err)
		}
	})
	t.Run("insufficient funds for fee", func(t *testing.T) {
		k := newKey(t)
		// Exactly rent-exempt at 0 bytes, fee would leave it rent-paying
		// with the whole balance below the fee: use a payer holding less
		// than the fee.
		if _, err := l.Apply(ctx, func(w AccountWriter) error {
			w.Set(pubkeyOf(k), &Account{Lamports: 4999, Owner: spl.SystemProgramID})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Process(ctx, buildTx(t, l, k, []txwire.Instruction{spl.Memo("x")})); !isTxErr(err, rt.ErrInsufficientFundsForFee) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("rent check keeps fee", func(t *testing.T) {
		before, _ := l.Balance(pubkeyOf(payer), Processed)
		newAcct := newKey(t)
		rec, err := l.Process(ctx, buildTx(t, l, payer, []txwire.Instruction{
			spl.SystemTransfer(pubkeyOf(payer), pubkeyOf(newAcct), 1000),
		}))
		if err != nil {
			t.Fatal(err)
		}
		if !isTxErr(rec.Err, rt.InsufficientFundsForRent(1)) {
			t.Fatalf("err = %v", rec.Err)
		}
		after, _ := l.Balance(pubkeyOf(payer), Processed)
		if before-after != 5000 {
			t.Fatalf("charged %d", before-after)
		}
	})
	t.Run("program account missing", func(t *testing.T) {
		ghost := pubkeyOf(newKey(t))
		rec, err := l.Process(ctx, buildTx(t, l, payer, []txwire.Instruction{{ProgramID: ghost}}))
		if err != nil {
			t.Fatal(err)
		}
		if !isTxErr(rec.Err, rt.ErrProgramAccountNotFound) || rec.Meta.Fee != 5000 {
			t.Fatalf("rec = %+v", rec)
		}
	})
}

func TestPriorityFee(t *testing.T) {
	l := openTest(t, Config{})
	payer := fundedWallet(t, l, 1_000_000_000)
	limit := binary.LittleEndian.AppendUint32([]byte{2}, 100_000)
	price := binary.LittleEndian.AppendUint64([]byte{3}, 25_000) // µlamports per CU
	rec := mustProcess(t, l, buildTx(t, l, payer, []txwire.Instruction{
		{ProgramID: rt.ComputeBudgetProgramID, Data: limit},
		{ProgramID: rt.ComputeBudgetProgramID, Data: price},
		spl.Memo("priority"),
	}))
	if want := uint64(5000 + 2500); rec.Meta.Fee != want {
		t.Fatalf("fee = %d, want %d", rec.Meta.Fee, want)
	}
}

func TestZeroFeeLedger(t *testing.T) {
	l := openTest(t, Config{LamportsPerSignature: -1})
	payer := fundedWallet(t, l, 1_000_000_000)
	rec := mustProcess(t, l, buildTx(t, l, payer, []txwire.Instruction{spl.Memo("free")}))
	if rec.Meta.Fee != 0 || rec.Meta.PreBalances[0] != rec.Meta.PostBalances[0] {
		t.Fatalf("meta %+v", rec.Meta)
	}
}

// TestSortWrites checks sortWrites against a sort of the writes by
// compareKeys, with addresses that share their first 8 bytes.
func TestSortWrites(t *testing.T) {
	rng := mathrand.New(mathrand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 2, 100, 5000} {
		writes := make([]AccountWrite, n)
		for i := range writes {
			for j := range writes[i].Key {
				writes[i].Key[j] = byte(rng.UintN(3)) // shared prefixes
			}
			writes[i].Account = &Account{Lamports: uint64(i)}
		}
		want := slices.Clone(writes)
		slices.SortStableFunc(want, func(a, b AccountWrite) int { return compareKeys(a.Key, b.Key) })
		got := sortWrites(writes)
		if len(got) != n {
			t.Fatalf("%d writes: %d sorted", n, len(got))
		}
		seen := map[*Account]bool{}
		for i := range got {
			if got[i].Key != want[i].Key {
				t.Fatalf("%d writes: position %d is %x, want %x", n, i, got[i].Key[:], want[i].Key[:])
			}
			if seen[got[i].Account] {
				t.Fatalf("%d writes: a write twice", n)
			}
			seen[got[i].Account] = true
		}
	}
}

// BenchmarkSortWrites sorts a slot's writes at a million accounts (12 000
// random addresses) by prefix (sortWrites) and directly by compareKeys.
func BenchmarkSortWrites(b *testing.B) {
	rng := mathrand.New(mathrand.NewPCG(5, 6))
	writes := make([]AccountWrite, 12000)
	for i := range writes {
		for j := range writes[i].Key {
			writes[i].Key[j] = byte(rng.Uint32())
		}
	}
	buf := make([]AccountWrite, len(writes))
	b.Run("prefix", func(b *testing.B) {
		for range b.N {
			sortWrites(writes)
		}
	})
	b.Run("compareKeys", func(b *testing.B) {
		for range b.N {
			copy(buf, writes)
			slices.SortFunc(buf, func(a, b AccountWrite) int { return compareKeys(a.Key, b.Key) })
		}
	})
}
