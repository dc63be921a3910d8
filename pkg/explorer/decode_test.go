package explorer

import (
	"encoding/json"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/magic"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/permission"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// TestDecodeAccount: each layout ferry knows is recognised by its owner
// and shape, and named with its fields.
func TestDecodeAccount(t *testing.T) {
	owner, mint := solana.PublicKey{1}, solana.PublicKey{2}
	eata, _ := espl.FindEphemeralATA(owner, mint)
	queue, _ := espl.FindTransferQueue(mint, solana.PublicKey{9})
	q := espl.NewTransferQueueAccount(espl.TransferQueueHeader{Version: espl.TransferQueueVersion, Mint: mint, Validator: solana.PublicKey{9}}, 4)
	tq, _ := espl.OpenTransferQueue(q)
	if err := tq.Push(espl.QueuedTransfer{Source: owner, DestinationOwner: solana.PublicKey{3}, Amount: 7, ReadyAt: 1000, GroupID: 5, TaskID: 2}); err != nil {
		t.Fatal(err)
	}
	h := tq.Header()
	h.Length = 1
	tq.SetHeader(h)
	ctx, _ := (&magic.Context{NextID: 2}).Encode()
	for _, c := range []struct {
		name        string
		key, owner  solana.PublicKey
		data        []byte
		kind        string
		field, want string
	}{
		{"token account", solana.PublicKey{5}, spl.TokenProgramID, spl.TokenAccount{Mint: mint, Owner: owner, Amount: 42, State: spl.StateInitialized}.Encode(), "token account", "amount", "42"},
		{"mint", mint, spl.TokenProgramID, spl.Mint{Supply: 9, Decimals: 6, IsInitialized: true}.Encode(), "mint", "decimals", "6"},
		{"eATA", eata, espl.ProgramID, espl.EphemeralATA{Owner: owner, Mint: mint, Amount: 3}.Encode(), "ephemeral ATA (eATA)", "owner", owner.String()},
		{"shuttle metadata", solana.PublicKey{6}, espl.ProgramID, espl.ShuttleMetadata{Owner: owner, Payer: owner, ID: 4}.Encode(), "shuttle metadata", "shuttle id", "4"},
		{"group receipt", solana.PublicKey{7}, espl.ProgramID, espl.GroupReceipt{Queue: queue, Source: owner, Split: 3, Executed: 1}.Encode(), "group receipt (queued transfer)", "paid out", "1"},
		{"queue", queue, espl.ProgramID, q, "transfer queue", "queued entries", "1"},
		{"vault", solana.PublicKey{8}, espl.ProgramID, espl.GlobalVault{Mint: mint}.Encode(), "global vault", "mint", mint.String()},
		{"record", solana.PublicKey{10}, espl.DelegationProgramID, espl.DelegationRecord{Authority: solana.PublicKey{9}, Owner: espl.ProgramID, DelegationSlot: 12}.Encode(), "delegation record", "delegation slot", "12"},
		{"magic context", magic.ContextID, magic.ProgramID, ctx, "Magic context (pending intents)", "next intent id", "2"},
		{"permission", solana.PublicKey{11}, permission.ProgramID, permissionData(t, owner), "permission (who may read the account on the rollup)", "account", eata.String()},
	} {
		d := decodeAccount(c.key, c.owner, c.data)
		if d == nil || d.Kind != c.kind {
			t.Errorf("%s: %+v", c.name, d)
			continue
		}
		got := ""
		for _, f := range d.Fields {
			if f.Name == c.field {
				got = f.Value
			}
		}
		if got != c.want {
			t.Errorf("%s: %s = %q, want %q (%+v)", c.name, c.field, got, c.want, d.Fields)
		}
	}
	if d := decodeQueue(q); len(d.Entries) != 1 || d.Entries[0].Amount != "7" || d.Entries[0].ReadyAt != 1000 || d.Entries[0].TaskID != 2 {
		t.Errorf("queue entries: %+v", d.Entries)
	}
	if d := decodeAccount(solana.PublicKey{}, spl.SystemProgramID, nil); d != nil {
		t.Errorf("a wallet decoded as %+v", d)
	}
}

func permissionData(t *testing.T, owner solana.PublicKey) []byte {
	t.Helper()
	eata, _ := espl.FindEphemeralATA(owner, solana.PublicKey{2})
	b := []byte{1, 0}
	b = append(b, eata[:]...)
	b = append(b, 1)
	b = append(b, owner[:]...)
	b = append(b, permission.FlagAuthority|permission.FlagRead)
	if _, err := permission.Decode(b); err != nil {
		t.Fatalf("permission fixture: %v", err)
	}
	return b
}

// FuzzDecodeAccount: account data from a chain is untrusted; decoding it
// under any owner never panics and always serializes.
func FuzzDecodeAccount(f *testing.F) {
	f.Add(uint8(0), []byte{})
	f.Add(uint8(1), espl.EphemeralATA{}.Encode())
	f.Add(uint8(1), espl.NewTransferQueueAccount(espl.TransferQueueHeader{Version: 1}, 2))
	f.Add(uint8(2), espl.DelegationRecord{}.Encode())
	f.Add(uint8(3), []byte("ferryMC1\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff"))
	f.Add(uint8(4), make([]byte, 165))
	owners := []solana.PublicKey{spl.TokenProgramID, espl.ProgramID, espl.DelegationProgramID, magic.ProgramID, spl.Token2022ProgramID, permission.ProgramID}
	f.Fuzz(func(t *testing.T, o uint8, data []byte) {
		owner := owners[int(o)%len(owners)]
		for _, key := range []solana.PublicKey{{}, magic.ContextID, magic.BridgeStateID} {
			if d := decodeAccount(key, owner, data); d != nil {
				if _, err := json.Marshal(d); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}
