package ledger

import (
	"errors"

	"github.com/gagliardetto/solana-go"

	rt "github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// loadLookups resolves a v0 message's address-table lookups against src at
// slot, as Agave's bank does when it sanitizes the message: the writable
// addresses of every table in order, then the read-only ones. A table that
// is missing or no longer active is AddressLookupTableNotFound (a
// deactivated table may be closed at any time, so the two are not told
// apart); an index past the addresses usable in this slot is
// InvalidAddressLookupTableIndex.
func (l *Ledger) loadLookups(msg *txwire.Message, src source, slot uint64) (writable, readonly []solana.PublicKey, terr *rt.TxError) {
	for _, lk := range msg.AddressTableLookups {
		a := src.get(lk.AccountKey)
		if a == nil {
			return nil, nil, rt.ErrAddressLookupTableNotFound
		}
		if a.Owner != spl.AddressLookupTableProgramID {
			return nil, nil, rt.ErrInvalidAddressLookupTableOwner
		}
		t, err := spl.DecodeLookupTable(a.Data)
		if err != nil {
			return nil, nil, rt.ErrInvalidAddressLookupTableData
		}
		if t.Status(slot) == spl.TableDeactivated {
			return nil, nil, rt.ErrAddressLookupTableNotFound
		}
		active := t.Addresses[:t.ActiveAddresses(slot)]
		if writable, err = appendLookedUp(writable, active, lk.WritableIndexes); err != nil {
			return nil, nil, rt.ErrInvalidAddressLookupTableIndex
		}
		if readonly, err = appendLookedUp(readonly, active, lk.ReadonlyIndexes); err != nil {
			return nil, nil, rt.ErrInvalidAddressLookupTableIndex
		}
	}
	return writable, readonly, nil
}

var errLookupIndex = errors.New("lookup index out of range")

func appendLookedUp(dst, active []solana.PublicKey, indexes []uint8) ([]solana.PublicKey, error) {
	for _, i := range indexes {
		if int(i) >= len(active) {
			return nil, errLookupIndex
		}
		dst = append(dst, active[i])
	}
	return dst, nil
}

// checkLookups resolves a v0 message's address tables against the state
// at commitment c, as Agave's RPC does when it sanitizes a transaction
// handed to sendTransaction or simulateTransaction: a table that cannot be
// used makes the transaction invalid (JSON-RPC -32602) rather than a
// dropped or failed one.
func (l *Ledger) checkLookups(tx *txwire.Transaction, c Commitment) error {
	if len(tx.Message.AddressTableLookups) == 0 {
		return nil
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	if _, _, terr := l.loadLookups(&tx.Message, viewSource{l: l, cut: l.cutoff(c)}, l.working.slot); terr != nil {
		return &InvalidTransactionError{Err: terr, TxErr: terr}
	}
	return nil
}
