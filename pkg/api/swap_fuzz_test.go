package api

import (
	"bytes"
	"errors"
	"net/http"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// FuzzPrivateSwapRebuild: whatever a swap upstream answers (the /swap
// JSON, the transaction in it, the lookup table a lookup names), the
// private swap either fails with a 502 SWAP_UPSTREAM_ERROR or "too large",
// or returns a v0 transaction of at most 1232 bytes that starts with the
// stash ATA's creation, keeps the upstream's instructions and ends with
// ix 29.
func FuzzPrivateSwapRebuild(f *testing.F) {
	owner, validator, recipient := pubOf(seedKey("owner")), pubOf(seedKey("validator")), pubOf(seedKey("recipient"))
	mint := solana.MustPublicKeyFromBase58(usdcMint)
	looked := pubOf(seedKey("looked up"))
	table := txwire.LookupTable{Key: pubOf(seedKey("table")), Addresses: []solana.PublicKey{looked}}
	limit := txwire.Instruction{ProgramID: spl.ComputeBudgetProgramID, Data: []byte{2, 0xa0, 0x86, 1, 0}}
	memo := spl.Memo("jupiter-mock")
	memo.Accounts = []txwire.AccountMeta{txwire.Readonly(looked)}
	m, _ := txwire.CompileV0(owner, []txwire.Instruction{limit, memo}, solana.Hash{1}, []txwire.LookupTable{table})
	f.Add([]byte(`{"swapTransaction":"`+txwire.NewUnsigned(m).Base64()+`","lastValidBlockHeight":1}`), tableData(looked))
	f.Add([]byte(`{"swapTransaction":"%%%%"}`), []byte{})
	f.Add([]byte(`{"swapTransaction":"AQID"}`), tableData())
	f.Add([]byte(`[]`), []byte{1})
	ps := &payments.PrivateSwap{SchedulePrivateTransferArgs: payments.SchedulePrivateTransferArgs{
		User: owner, Mint: mint, ShuttleID: 7, Destination: recipient, MaxDelayMs: 5, Split: 1, Validator: validator,
	}}
	f.Fuzz(func(t *testing.T, answer, tableAccount []byte) {
		check := func(err error) {
			t.Helper()
			ae := apierr.As(err)
			if ae.Status != http.StatusBadGateway || ae.Code != CodeSwapUpstreamError {
				t.Fatalf("%v", err)
			}
		}
		b64, err := parseSwapAnswer(answer)
		if err != nil {
			check(err)
			return
		}
		tx, err := decodeSwapTransaction(b64)
		if err != nil {
			check(err)
			return
		}
		var tables []txwire.LookupTable
		if addrs, err := txwire.DecodeLookupTable(tableAccount); err == nil {
			for _, l := range tx.Message.AddressTableLookups {
				tables = append(tables, txwire.LookupTable{Key: l.AccountKey, Addresses: addrs})
			}
		} else if !errors.Is(err, txwire.ErrLookupTable) {
			t.Fatal(err)
		}
		out, err := ps.Rebuild(tx, tables)
		switch {
		case errors.Is(err, payments.ErrSwapTooLarge), errors.Is(err, txwire.ErrDecompile):
			return
		case err != nil:
			t.Fatalf("rebuild: %v", err)
		}
		if len(out) > txwire.MaxWireSize {
			t.Fatalf("%d bytes", len(out))
		}
		back, err := txwire.Decode(out)
		if err != nil || back.Message.Version != txwire.V0 {
			t.Fatalf("rebuilt transaction: %v", err)
		}
		byKey := map[solana.PublicKey][]solana.PublicKey{}
		for _, tb := range tables {
			byKey[tb.Key] = tb.Addresses
		}
		_, ixs, err := txwire.Decompile(&back.Message, byKey)
		if err != nil || len(ixs) != len(tx.Message.Instructions)+2 {
			t.Fatalf("rebuilt instructions: %d, %v", len(ixs), err)
		}
		if ixs[0].ProgramID != spl.AssociatedTokenProgramID || !bytes.Equal(ixs[0].Data, []byte{1}) ||
			ixs[len(ixs)-1].ProgramID != espl.ProgramID || ixs[len(ixs)-1].Data[0] != 29 {
			t.Fatalf("rebuilt transaction does not wrap the swap")
		}
	})
}
