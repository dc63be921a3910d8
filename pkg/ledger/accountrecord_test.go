package ledger

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/spl"
)

// TestAccountRecord round-trips accounts through the account log's
// compact encoding and checks what it is for: a token account's record
// is much smaller than encodeAccount's.
func TestAccountRecord(t *testing.T) {
	owner := solana.PublicKeyFromBytes(bytes.Repeat([]byte{7}, 32))
	token := spl.TokenAccount{Mint: owner, Owner: owner, Amount: 1_000_000, State: spl.StateInitialized}.Encode()
	rng := rand.New(rand.NewPCG(1, 2))
	sparse := make([]byte, 3000)
	for i := range sparse {
		if rng.IntN(3) == 0 {
			sparse[i] = byte(rng.Uint32())
		}
	}
	for _, tc := range []struct {
		name string
		a    Account
	}{
		{"empty", Account{Lamports: 1, Owner: owner}},
		{"zero lamports", Account{Owner: owner, RentEpoch: 5}},
		{"token", Account{Lamports: 2_039_280, Owner: spl.TokenProgramID, RentEpoch: ^uint64(0), Data: token}},
		{"all zeros", Account{Lamports: 1 << 62, Owner: owner, Data: make([]byte, 100)}},
		{"short zero runs", Account{Lamports: 9, Owner: owner, Data: []byte{1, 0, 2, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0}}},
		{"leading zeros", Account{Owner: owner, Data: []byte{0, 0, 0, 0, 0, 9, 9}}},
		{"no zeros", Account{Owner: owner, Executable: true, RentEpoch: ^uint64(0), Data: bytes.Repeat([]byte{1}, 50)}},
		{"sparse", Account{Lamports: 77, Owner: owner, RentEpoch: 1 << 40, Data: sparse}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			enc := appendAccountRecord(nil, &tc.a)
			got, err := decodeAccount(enc)
			if err != nil {
				t.Fatal(err)
			}
			if got.Lamports != tc.a.Lamports || got.Owner != tc.a.Owner || got.Executable != tc.a.Executable ||
				got.RentEpoch != tc.a.RentEpoch || !bytes.Equal(got.Data, tc.a.Data) || (got.Data == nil) != (len(tc.a.Data) == 0) {
				t.Fatalf("decoded %+v, want %+v", got, tc.a)
			}
			if tc.name == "token" {
				if old := len(encodeAccount(&tc.a)); len(enc) > old*2/3 {
					t.Fatalf("token account: %d bytes compact, %d before", len(enc), old)
				}
			}
			// Every strict prefix is refused, as is trailing data.
			for i := 0; i < len(enc); i++ {
				if _, err := decodeAccount(enc[:i]); err == nil && i > 0 {
					t.Fatalf("prefix of %d of %d bytes decoded", i, len(enc))
				}
			}
			if _, err := decodeAccount(append(enc, 0)); err == nil {
				t.Fatal("trailing byte accepted")
			}
		})
	}
	// Records of the old encodings still read: encodeAccount's, and the
	// second format's (owner whole, before the flags).
	for _, a := range []*Account{
		{Lamports: 5, Owner: owner, RentEpoch: 3, Data: token},
		{Lamports: 2_039_280, Owner: spl.TokenProgramID, RentEpoch: ^uint64(0), Data: token},
		{Lamports: 1, Owner: solana.SystemProgramID, Executable: true},
	} {
		for name, enc := range map[string][]byte{"encodeAccount": encodeAccount(a), "format 2": appendAccountRecordV2(nil, a)} {
			got, err := decodeAccount(enc)
			if err != nil || got.Lamports != a.Lamports || got.Owner != a.Owner || got.Executable != a.Executable ||
				got.RentEpoch != a.RentEpoch || !bytes.Equal(got.Data, a.Data) {
				t.Fatalf("%s: %+v, %v", name, got, err)
			}
		}
	}
	// Known owners take one byte; an index past the list is refused.
	for i, o := range knownOwners {
		a := &Account{Lamports: 1, Owner: o}
		enc := appendAccountRecord(nil, a)
		if other := appendAccountRecord(nil, &Account{Lamports: 1, Owner: owner}); len(other)-len(enc) != 31 {
			t.Fatalf("known owner %d: %d bytes, %d with another owner", i, len(enc), len(other))
		}
		if got, err := decodeAccount(enc); err != nil || got.Owner != o {
			t.Fatalf("known owner %d: %+v, %v", i, got, err)
		}
		enc[3] = byte(len(knownOwners))
		if _, err := decodeAccount(enc); err == nil {
			t.Fatalf("owner index %d accepted", enc[3])
		}
	}
}

// appendAccountRecordV2 is the record format before ferry-ledger-6
// (accountRecordFormatV2), which logs written then hold.
func appendAccountRecordV2(b []byte, a *Account) []byte {
	rec := appendAccountRecord(nil, &Account{Lamports: a.Lamports, Owner: solana.PublicKeyFromBytes(bytes.Repeat([]byte{0xee}, 32)), Executable: a.Executable, RentEpoch: a.RentEpoch, Data: a.Data})
	d := decoder{b: rec}
	d.u8()
	d.uvarint()
	flags := d.u8()
	d.key()
	e := encoder{b: b}
	e.u8(accountRecordFormatV2)
	e.uvarint(a.Lamports)
	e.key(a.Owner)
	e.u8(flags)
	return append(e.b, rec[d.off:]...)
}

// FuzzAccountRecord: any account round-trips; any bytes decode or fail
// without panicking, and an account decoded from them survives its own
// encoding.
func FuzzAccountRecord(f *testing.F) {
	f.Add([]byte{}, uint64(0), false)
	f.Add([]byte{0, 0, 0, 0, 1}, uint64(1<<63), true)
	f.Add(appendAccountRecord(nil, &Account{Lamports: 3, Data: []byte{1, 0, 0, 0, 0, 0, 2}}), ^uint64(0), false)
	f.Fuzz(func(t *testing.T, data []byte, n uint64, exec bool) {
		a := &Account{Lamports: n, RentEpoch: n ^ 0xff, Executable: exec, Data: data}
		got, err := decodeAccount(appendAccountRecord(nil, a))
		if err != nil || got.Lamports != a.Lamports || got.RentEpoch != a.RentEpoch || got.Executable != exec || !bytes.Equal(got.Data, data) {
			t.Fatalf("round trip of %d data bytes: %+v, %v", len(data), got, err)
		}
		// With a mint dictionary: the data's first 32 bytes named in it.
		mints := []solana.PublicKey{{1}, {2}}
		if len(data) >= 32 {
			mints[1] = solana.PublicKeyFromBytes(data[:32])
			got, err := decodeAccountRecordWith(nil, appendAccountRecordRef(nil, a, 1), mints)
			if err != nil || got.Lamports != a.Lamports || !bytes.Equal(got.Data, data) {
				t.Fatalf("round trip of %d data bytes with the mint named: %+v, %v", len(data), got, err)
			}
		}
		for _, format := range []byte{accountRecordFormat, accountRecordFormatV2} {
			raw := append([]byte{format}, data...)
			// Any bytes decode or fail with the dictionary too.
			decodeAccountRecordWith(nil, raw, mints)
			got, err := decodeAccountRecord(raw)
			if err != nil {
				continue
			}
			if re := appendAccountRecord(nil, got); !bytes.Equal(re, raw) {
				// Several encodings of one account may exist (a literal
				// holding zeros); the decoded value must survive its own.
				again, err := decodeAccountRecord(re)
				if err != nil || !bytes.Equal(again.Data, got.Data) || again.Lamports != got.Lamports || again.Owner != got.Owner {
					t.Fatalf("re-encoding a decoded record: %+v, %v", again, err)
				}
			}
		}
	})
}

// TestAccountRecordMintRef: a record naming its data's first 32 bytes in
// the account log's mint dictionary reads back whole with the dictionary,
// takes at least 31 bytes less than the plain record (a mint index below
// 128), and is refused without the entry it names, as are a
// second-format record claiming a reference and a reference in data
// shorter than a mint.
func TestAccountRecordMintRef(t *testing.T) {
	mint := solana.PublicKeyFromBytes(bytes.Repeat([]byte{9}, 32))
	owner := solana.PublicKeyFromBytes(bytes.Repeat([]byte{7}, 32))
	mints := []solana.PublicKey{owner, mint}
	for _, tc := range []struct {
		name string
		a    *Account
	}{
		{"token account", &Account{Lamports: 2_039_280, Owner: spl.TokenProgramID, RentEpoch: ^uint64(0),
			Data: spl.TokenAccount{Mint: mint, Owner: owner, Amount: 1_000_000, State: spl.StateInitialized}.Encode()}},
		{"empty amount", &Account{Lamports: 2_039_280, Owner: spl.TokenProgramID, RentEpoch: ^uint64(0),
			Data: spl.TokenAccount{Mint: mint, Owner: owner, State: spl.StateInitialized}.Encode()}},
		{"mint only", &Account{Lamports: 1, Owner: spl.TokenProgramID, Data: mint[:]}},
		{"mint and zeros", &Account{Lamports: 1, Owner: spl.TokenProgramID, Data: append(mint[:], make([]byte, 40)...)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plain := appendAccountRecord(nil, tc.a)
			enc := appendAccountRecordRef(nil, tc.a, 1)
			if len(plain)-len(enc) < 31 {
				t.Fatalf("record %d bytes, %d without the dictionary", len(enc), len(plain))
			}
			for _, scratch := range []*Account{nil, {Data: make([]byte, 300)}} {
				got, err := decodeAccountRecordWith(scratch, enc, mints)
				if err != nil || got.Lamports != tc.a.Lamports || got.Owner != tc.a.Owner || got.RentEpoch != tc.a.RentEpoch || !bytes.Equal(got.Data, tc.a.Data) {
					t.Fatalf("decoded %+v, %v", got, err)
				}
			}
			if got, err := decodeAccountWith(enc, mints); err != nil || !bytes.Equal(got.Data, tc.a.Data) {
				t.Fatalf("decodeAccountWith: %+v, %v", got, err)
			}
			for _, dict := range [][]solana.PublicKey{nil, mints[:1]} {
				if _, err := decodeAccountRecordWith(nil, enc, dict); !errors.Is(err, errCorrupt) {
					t.Fatalf("with %d mints: %v", len(dict), err)
				}
			}
		})
	}
	// Shorter data than a mint is written whole, whatever the caller asks.
	short := &Account{Lamports: 1, Owner: spl.TokenProgramID, Data: []byte{1, 2, 3}}
	if enc := appendAccountRecordRef(nil, short, 0); !bytes.Equal(enc, appendAccountRecord(nil, short)) {
		t.Fatal("data shorter than a mint named in the dictionary")
	}
	// A reference claiming less data than a mint, and the second format
	// with the reference flag, are refused.
	bad := []byte{accountRecordFormat, 1, recMintRef | recKnownOwner | recRentEpochMax, 1, 0, 31}
	if _, err := decodeAccountRecordWith(nil, bad, mints); !errors.Is(err, errCorrupt) {
		t.Fatalf("reference in 31 bytes of data: %v", err)
	}
	v2 := append([]byte{accountRecordFormatV2, 1}, owner[:]...)
	v2 = append(v2, recMintRef, 0, 32)
	if _, err := decodeAccountRecordWith(nil, v2, mints); !errors.Is(err, errCorrupt) {
		t.Fatalf("second format with a reference: %v", err)
	}
}
