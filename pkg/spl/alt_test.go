package spl

import (
	"bytes"
	"errors"
	"testing"

	"github.com/gagliardetto/solana-go"
)

func TestDecodeLookupTable(t *testing.T) {
	auth := solana.PublicKey{7}
	full := LookupTable{DeactivationSlot: 9, LastExtendedSlot: 8, LastExtendedSlotStartIndex: 1, Authority: &auth,
		Addresses: []solana.PublicKey{{1}, {2}}}
	enc := func(lt LookupTable) []byte {
		b := make([]byte, LookupTableMetaSize+32*len(lt.Addresses))
		lt.EncodeMeta(b)
		for i, a := range lt.Addresses {
			copy(b[LookupTableMetaSize+32*i:], a[:])
		}
		return b
	}
	good := enc(full)
	if got, err := DecodeLookupTable(good); err != nil || got.DeactivationSlot != 9 || got.LastExtendedSlot != 8 ||
		got.LastExtendedSlotStartIndex != 1 || *got.Authority != auth || len(got.Addresses) != 2 || got.Addresses[1] != (solana.PublicKey{2}) {
		t.Fatalf("decode: %+v %v", got, err)
	}
	frozen := enc(LookupTable{DeactivationSlot: LookupTableActive})
	if got, err := DecodeLookupTable(frozen); err != nil || got.Authority != nil || len(got.Addresses) != 0 {
		t.Fatalf("frozen: %+v %v", got, err)
	}
	for _, tc := range []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, ErrInvalidAccount},
		{"uninitialized", make([]byte, LookupTableMetaSize), ErrUninitializedTable},
		{"uninitialized and short", []byte{0, 0, 0, 0}, ErrUninitializedTable},
		{"unknown state", append([]byte{2, 0, 0, 0}, good[4:]...), ErrInvalidAccount},
		{"bad option tag", func() []byte { b := bytes.Clone(good); b[21] = 2; return b }(), ErrInvalidAccount},
		{"short metadata", good[:40], ErrInvalidAccount},
		{"partial address", good[:len(good)-1], ErrInvalidAccount},
	} {
		if _, err := DecodeLookupTable(tc.data); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestLookupTableStatus(t *testing.T) {
	for _, tc := range []struct {
		deactivation, current uint64
		want                  LookupTableStatus
	}{
		{LookupTableActive, 5, TableActivated},
		{100, 100, TableDeactivating},
		{100, 101, TableDeactivating},
		{100, 612, TableDeactivating},
		{100, 613, TableDeactivated},
	} {
		lt := LookupTable{DeactivationSlot: tc.deactivation}
		if got := lt.Status(tc.current); got != tc.want {
			t.Errorf("deactivated at %d, slot %d: %v, want %v", tc.deactivation, tc.current, got, tc.want)
		}
	}
}

// FuzzDecodeLookupTable: no input panics, and whatever decodes re-encodes
// to the same metadata and addresses.
func FuzzDecodeLookupTable(f *testing.F) {
	auth := solana.PublicKey{7}
	b := make([]byte, LookupTableMetaSize+32)
	(&LookupTable{DeactivationSlot: LookupTableActive, Authority: &auth}).EncodeMeta(b)
	f.Add(b)
	f.Add(make([]byte, LookupTableMetaSize))
	f.Add([]byte{1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		lt, err := DecodeLookupTable(data)
		if err != nil {
			return
		}
		out := make([]byte, len(data))
		lt.EncodeMeta(out)
		copy(out[LookupTableMetaSize:], data[LookupTableMetaSize:])
		again, err := DecodeLookupTable(out)
		if err != nil || again.DeactivationSlot != lt.DeactivationSlot || again.LastExtendedSlot != lt.LastExtendedSlot ||
			(again.Authority == nil) != (lt.Authority == nil) || len(again.Addresses) != len(lt.Addresses) {
			t.Fatalf("round trip: %+v vs %+v (%v)", again, lt, err)
		}
	})
}

// FuzzDecodeNonce: no input panics; an initialized nonce re-encodes to the
// bytes it was decoded from.
func FuzzDecodeNonce(f *testing.F) {
	b := make([]byte, NonceAccountSize)
	NonceState{Version: 1, Initialized: true, Authority: solana.PublicKey{1}, Nonce: solana.Hash{2}, LamportsPerSignature: 5000}.EncodeInto(b)
	f.Add(b)
	f.Add(make([]byte, 8))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := DecodeNonce(data)
		if err != nil || !st.Initialized {
			return
		}
		out := bytes.Clone(data)
		st.EncodeInto(out)
		if !bytes.Equal(out, data) {
			t.Fatalf("re-encoded %x, decoded from %x", out, data)
		}
	})
}
