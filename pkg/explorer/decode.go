package explorer

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/inspect"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/magic"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/permission"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// Decoded is an account's data read with the layout ferry knows for it.
type Decoded struct {
	// Kind names the layout: "token account", "mint", "ephemeral ATA", …
	Kind   string  `json:"kind"`
	Fields []Field `json:"fields"`
	// Entries are a readable transfer queue's entries.
	Entries []QueueEntry `json:"entries,omitempty"`
}

// Field is one decoded value. Ref says what Value names, for links:
// "account" for an address, "" for plain text.
type Field struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Ref   string `json:"ref,omitempty"`
}

// QueueEntry is one entry of a transfer queue.
type QueueEntry struct {
	Source           string `json:"source"`
	DestinationOwner string `json:"destinationOwner"`
	Amount           string `json:"amount"`
	ReadyAt          int64  `json:"readyAt"`
	GroupID          uint32 `json:"groupId"`
	TaskID           uint32 `json:"taskId"`
}

// labels are the well-known names `ferry inspect` gives programs and
// accounts.
var labels = inspect.New().Labels

func init() {
	labels[magic.ActionExecutorID] = "Post-delegation action executor"
	labels[magic.BridgeStateID] = "Validator bridge state"
}

// labelOf names a well-known address ("" when it is not one).
func labelOf(k solana.PublicKey) string { return labels[k] }

func addr(name string, k solana.PublicKey) Field {
	return Field{Name: name, Value: k.String(), Ref: "account"}
}

func optAddr(name string, k *solana.PublicKey) Field {
	if k == nil {
		return Field{Name: name, Value: "none"}
	}
	return addr(name, *k)
}

func text(name string, v any) Field { return Field{Name: name, Value: fmt.Sprint(v)} }

func unixMs(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano) }

// decodeAccount decodes data of an account at key owned by owner, or
// returns nil when ferry knows no layout for it.
func decodeAccount(key, owner solana.PublicKey, data []byte) *Decoded {
	switch {
	case spl.IsTokenProgram(owner):
		return decodeToken(data)
	case owner == espl.ProgramID:
		return decodeESPLAccount(key, data)
	case owner == espl.DelegationProgramID:
		return decodeDLPAccount(data)
	case owner == magic.ProgramID:
		return decodeMagicAccount(key, data)
	case owner == permission.ProgramID:
		return decodePermission(data)
	}
	return nil
}

func decodeToken(data []byte) *Decoded {
	if len(data) == spl.MintSize || (len(data) > spl.TokenAccountSize && data[spl.TokenAccountSize] == 1) {
		m, err := spl.DecodeMint(data)
		if err == nil {
			return &Decoded{Kind: "mint", Fields: []Field{
				text("supply", m.Supply), text("decimals", m.Decimals),
				optAddr("mint authority", m.MintAuthority), optAddr("freeze authority", m.FreezeAuthority),
				text("initialized", m.IsInitialized),
			}}
		}
	}
	a, err := spl.DecodeTokenAccount(data)
	if err != nil {
		return nil
	}
	d := &Decoded{Kind: "token account", Fields: []Field{
		addr("mint", a.Mint), addr("owner", a.Owner), text("amount", a.Amount), text("state", a.State),
		optAddr("delegate", a.Delegate),
	}}
	if a.IsNative != nil {
		d.Fields = append(d.Fields, text("wrapped SOL rent reserve", *a.IsNative))
	}
	return d
}

func decodeESPLAccount(key solana.PublicKey, data []byte) *Decoded {
	switch n := len(data); {
	case n == espl.EphemeralATASize || n == espl.EphemeralATALegacySize:
		// 72 bytes are a legacy eATA or a shuttle's metadata: an eATA
		// sits at the PDA of its owner and mint.
		a, err := espl.DecodeEphemeralATA(data)
		if pda, _ := espl.FindEphemeralATA(a.Owner, a.Mint); err == nil && (n == espl.EphemeralATASize || pda == key) {
			return &Decoded{Kind: "ephemeral ATA (eATA)", Fields: []Field{addr("owner", a.Owner), addr("mint", a.Mint), text("amount", a.Amount)}}
		}
		if m, err := espl.DecodeShuttleMetadata(data); err == nil && n == espl.ShuttleMetadataSize {
			return &Decoded{Kind: "shuttle metadata", Fields: []Field{addr("owner", m.Owner), addr("payer", m.Payer), text("shuttle id", m.ID)}}
		}
	case n == espl.GroupReceiptSize:
		if g, err := espl.DecodeGroupReceipt(data); err == nil {
			return &Decoded{Kind: "group receipt (queued transfer)", Fields: []Field{
				addr("queue", g.Queue), addr("source", g.Source), addr("destination owner", g.DestinationOwner),
				text("amount", g.Amount), text("group id", g.GroupID), text("split", g.Split), text("paid out", g.Executed),
				text("created", unixMs(g.CreatedAt)),
			}}
		}
	case n >= espl.StealthPoolSize && string(data[:8]) == espl.StealthPoolDiscriminator:
		if p, err := espl.DecodeStealthPool(data); err == nil {
			d := &Decoded{Kind: "stealth pool", Fields: []Field{addr("authority", p.Authority), text("split across keys", p.SplitAcrossKeys())}}
			for i, k := range p.Destinations {
				d.Fields = append(d.Fields, addr("destination "+strconv.Itoa(i), k))
			}
			return d
		}
	case n >= espl.TransferQueueHeaderSize && (n-espl.TransferQueueHeaderSize)%espl.QueuedTransferSize == 0 && data[0] == espl.TransferQueueVersion:
		if d := decodeQueue(data); d != nil {
			return d
		}
	case n >= espl.GlobalVaultSizeV1 && n <= espl.GlobalVaultSize:
		if v, err := espl.DecodeGlobalVault(data); err == nil {
			d := &Decoded{Kind: "global vault", Fields: []Field{addr("mint", v.Mint)}}
			if v.Layout != espl.GlobalVaultV1 {
				d.Fields = append(d.Fields, addr("token account", v.TokenAccount))
			}
			return d
		}
	}
	return nil
}

// decodeQueue decodes a transfer queue: its header and, in queue order,
// its entries.
func decodeQueue(data []byte) *Decoded {
	q, err := espl.OpenTransferQueue(data)
	if err != nil {
		return nil
	}
	h := q.Header()
	d := &Decoded{Kind: "transfer queue", Fields: []Field{
		addr("mint", h.Mint), addr("validator", h.Validator), text("queued entries", h.Length), text("capacity", q.Cap()),
		text("next task id", h.NextTaskID), text("crank task id", h.CrankTaskID),
	}}
	for i := 0; i < q.Len() && i < q.Cap(); i++ {
		e := q.At(i)
		d.Entries = append(d.Entries, QueueEntry{
			Source: e.Source.String(), DestinationOwner: e.DestinationOwner.String(), Amount: strconv.FormatUint(e.Amount, 10),
			ReadyAt: e.ReadyAt, GroupID: e.GroupID, TaskID: e.TaskID,
		})
	}
	return d
}

func decodeDLPAccount(data []byte) *Decoded {
	if len(data) < 8 {
		return nil
	}
	switch binary.LittleEndian.Uint64(data) {
	case espl.DelegationRecordDisc:
		if r, err := espl.DecodeDelegationRecord(data); err == nil {
			return &Decoded{Kind: "delegation record", Fields: []Field{
				addr("validator", r.Authority), addr("owner program", r.Owner), text("delegation slot", r.DelegationSlot),
				text("lamports", r.Lamports), text("commit frequency (ms)", r.CommitFrequencyMs),
			}}
		}
	case espl.DelegationMetadataDisc:
		if m, err := espl.DecodeDelegationMetadata(data); err == nil {
			return &Decoded{Kind: "delegation metadata", Fields: []Field{
				addr("rent payer", m.RentPayer), text("undelegatable", m.IsUndelegatable), text("seeds", len(m.Seeds)),
				text("last update nonce", m.LastUpdateNonce),
			}}
		}
	}
	return nil
}

func decodeMagicAccount(key solana.PublicKey, data []byte) *Decoded {
	switch key {
	case magic.ContextID:
		c, err := magic.DecodeContext(data)
		if err != nil {
			return nil
		}
		d := &Decoded{Kind: "Magic context (pending intents)", Fields: []Field{text("pending intents", len(c.Intents)), text("next intent id", c.NextID)}}
		for _, it := range c.Intents {
			d.Fields = append(d.Fields, Field{Name: fmt.Sprintf("intent %d", it.ID), Value: intentSummary(it)})
		}
		return d
	case magic.BridgeStateID:
		s, err := magic.DecodeBridgeState(data)
		if err != nil {
			return nil
		}
		d := &Decoded{Kind: "validator bridge state", Fields: []Field{
			text("base cursor", fmt.Sprintf("slot %d, transaction %d, step %d", s.Cursor.Slot, s.Cursor.Tx, s.Cursor.Step)),
		}}
		for i, q := range s.Queues {
			d.Fields = append(d.Fields, addr("transfer queue "+strconv.Itoa(i), q))
		}
		return d
	}
	return nil
}

func decodePermission(data []byte) *Decoded {
	p, err := permission.Decode(data)
	if err != nil {
		return nil
	}
	d := &Decoded{Kind: "permission (who may read the account on the rollup)", Fields: []Field{addr("account", p.Account)}}
	for _, m := range p.Members {
		var flags []string
		if m.Flags&permission.FlagAuthority != 0 {
			flags = append(flags, "authority")
		}
		if m.Flags&permission.FlagRead != 0 {
			flags = append(flags, "read")
		}
		d.Fields = append(d.Fields, Field{Name: "member (" + fmt.Sprint(flags) + ")", Value: m.Key.String(), Ref: "account"})
	}
	return d
}
