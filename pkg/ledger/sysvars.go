package ledger

import (
	"encoding/binary"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/spl"
)

// Sysvar sizes: Agave allocates these sysvar accounts at their full size
// from the start, so their lamports never change.
const (
	// RecentBlockhashesMaxEntries is how many blockhashes the
	// RecentBlockhashes sysvar lists.
	RecentBlockhashesMaxEntries = 150
	slotHashesSize              = 8 + spl.SlotHashesMaxEntries*40
	recentBlockhashesSize       = 8 + RecentBlockhashesMaxEntries*40
)

// refreshSysvars rewrites the SlotHashes and RecentBlockhashes sysvars
// for the working slot on top of parent. Callers hold mu.
//
// Both change every slot and can be rebuilt from the block list, so they
// are kept out of the slot's writes: they are neither persisted nor sent
// to block subscribers, and reads at every commitment see the working
// slot's values. After a restart SlotHashes lists only the blocks still in
// memory; the lookup-table rules that depend on it compute recency from
// slot numbers, so tables behave the same.
func (l *Ledger) refreshSysvars(parent *blockHeader) {
	sh := make([]byte, slotHashesSize)
	n := 0
	if old := l.bank.get(spl.SysvarSlotHashesID); old != nil && len(old.Data) == slotHashesSize {
		prev := int(min(binary.LittleEndian.Uint64(old.Data), spl.SlotHashesMaxEntries))
		n = min(prev+1, spl.SlotHashesMaxEntries)
		binary.LittleEndian.PutUint64(sh[8:], parent.slot)
		copy(sh[16:48], parent.hash[:])
		copy(sh[48:8+40*n], old.Data[8:])
	} else {
		for i := len(l.recent) - 1; i >= 0 && n < spl.SlotHashesMaxEntries; i-- {
			h := l.recent[i]
			binary.LittleEndian.PutUint64(sh[8+40*n:], h.slot)
			copy(sh[16+40*n:48+40*n], h.hash[:])
			n++
		}
	}
	binary.LittleEndian.PutUint64(sh, uint64(n))
	l.setSysvar(spl.SysvarSlotHashesID, sh)

	rb := make([]byte, recentBlockhashesSize)
	n = 0
	for i := len(l.recent) - 1; i >= 0 && n < RecentBlockhashesMaxEntries; i-- {
		copy(rb[8+40*n:40+40*n], l.recent[i].hash[:])
		binary.LittleEndian.PutUint64(rb[40+40*n:], uint64(l.cfg.LamportsPerSignature))
		n++
	}
	binary.LittleEndian.PutUint64(rb, uint64(n))
	l.setSysvar(spl.SysvarRecentBlockhashesID, rb)
}

// setSysvar replaces a sysvar account in the bank without recording the
// write in the working slot (refreshSysvars). Callers hold mu.
//
// A durable ledger never writes these accounts to its store, so they stay
// in the bank's memory (accountSet.persisted drops only written values)
// and their program-index entry stays in the in-memory index.
func (l *Ledger) setSysvar(key solana.PublicKey, data []byte) {
	a := sysvarAccount(l.cfg.Rent, data)
	old := l.bank.get(key)
	l.bank.set(key, a)
	var was uint64
	if old == nil {
		l.programs.add(a.Owner, key)
	} else {
		was = old.Lamports
	}
	// The supply counts the sysvar from the start (it has no history).
	l.capital += a.Lamports - was
	l.capBase += a.Lamports - was
	l.unstored += a.Lamports - was
}
