package server

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/ferry-sh/ferry/pkg/rpcserver"
)

// TestLimitLedgerSizeInServe: with LimitLedgerSize (--limit-ledger-size)
// the running node prunes its own history: once enough transactions and
// slots went by, getFirstAvailableBlock moves past the first
// transaction's slot, getBlock of that slot answers Agave's -32001
// naming the first available block, getTransaction of it is null, and
// the newest transactions are still served.
func TestLimitLedgerSizeInServe(t *testing.T) {
	const limit, sent = 20, 60
	o := fast(t.TempDir(), "")
	o.LimitLedgerSize = limit
	serveOnce(t, o, func(info *Info) {
		ctx := context.Background()
		url := info.URLs[KeyRPC]
		c := rpc.New(url)
		// slotOf is the slot of a confirmed transaction (0: not confirmed).
		slotOf := func(sig solana.Signature) uint64 {
			t.Helper()
			var out struct {
				Result struct {
					Value []*struct {
						Slot               uint64 `json:"slot"`
						ConfirmationStatus string `json:"confirmationStatus"`
					} `json:"value"`
				} `json:"result"`
			}
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"getSignatureStatuses","params":[["%s"],{"searchTransactionHistory":true}]}`, sig)
			postJSON(t, url, body, &out)
			if len(out.Result.Value) != 1 || out.Result.Value[0] == nil || out.Result.Value[0].ConfirmationStatus == "processed" {
				return 0
			}
			return out.Result.Value[0].Slot
		}
		// Each airdrop waits for the previous one to be confirmed, so they
		// land in different slots: pruning removes whole slots, and one
		// slot holding them all could never go.
		sigs := make([]solana.Signature, sent)
		slots := make([]uint64, sent)
		for i := range sigs {
			sig, err := c.RequestAirdrop(ctx, solana.NewWallet().PublicKey(), 1_000_000_000, rpc.CommitmentConfirmed)
			if err != nil {
				t.Fatalf("airdrop %d: %v", i, err)
			}
			sigs[i] = sig
			waitFor(t, fmt.Sprintf("airdrop %d to be confirmed", i), func() bool { slots[i] = slotOf(sig); return slots[i] != 0 })
		}
		oldest, last := slots[0], slots[sent-1]
		if oldest == last {
			t.Fatalf("every airdrop landed in slot %d", oldest)
		}

		// Pruning needs the slot to be older than the recent blocks the
		// node always keeps (152 slots), so this waits for the slot clock,
		// however slow the machine; the deadline is only a hang guard.
		var first uint64
		deadline := time.Now().Add(3 * time.Minute)
		for {
			var out struct {
				Result uint64 `json:"result"`
			}
			postJSON(t, url, `{"jsonrpc":"2.0","id":1,"method":"getFirstAvailableBlock"}`, &out)
			if first = out.Result; first > oldest {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("getFirstAvailableBlock stayed at %d, not past slot %d of the first of %d airdrops (limit %d)", first, oldest, sent, limit)
			}
			time.Sleep(50 * time.Millisecond)
		}

		var blk struct {
			Error *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		postJSON(t, url, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"getBlock","params":[%d,{"maxSupportedTransactionVersion":0}]}`, oldest), &blk)
		want := fmt.Sprintf("Block %d cleaned up, does not exist on node. First available block: %d", oldest, first)
		if blk.Error == nil || blk.Error.Code != rpcserver.CodeBlockCleanedUp || blk.Error.Message != want {
			t.Fatalf("getBlock(%d) after pruning: %+v, want %d %q", oldest, blk.Error, rpcserver.CodeBlockCleanedUp, want)
		}
		var tx struct {
			Result *struct{} `json:"result"`
			Error  *struct{} `json:"error"`
		}
		postJSON(t, url, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"getTransaction","params":["%s",{"maxSupportedTransactionVersion":0}]}`, sigs[0]), &tx)
		if tx.Result != nil || tx.Error != nil {
			t.Fatalf("getTransaction of a pruned transaction: %+v", tx)
		}
		// The newest transactions are within the limit and stay.
		if first > last {
			t.Fatalf("first available block %d is past the last airdrop's slot %d: more than %d of the newest transactions pruned", first, last, limit)
		}
		if _, err := c.GetTransaction(ctx, sigs[sent-1], &rpc.GetTransactionOpts{Commitment: rpc.CommitmentConfirmed}); err != nil {
			t.Fatalf("getTransaction of the newest airdrop: %v", err)
		}
	})
}
