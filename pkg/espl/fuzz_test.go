package espl

import (
	"bytes"
	"crypto/ed25519"
	"testing"

	"github.com/gagliardetto/solana-go"
)

// fuzzSeeds are valid encodings of every instruction form.
func fuzzSeeds(f *testing.F) {
	for _, tc := range ixCases(f, nil) {
		f.Add(tc.ix.Data, uint8(len(tc.ix.Accounts)))
	}
}

// FuzzDecodeInstruction: Decode never panics, and whatever it accepts
// re-encodes to exactly the same data and keys (the layouts are strict).
func FuzzDecodeInstruction(f *testing.F) {
	fuzzSeeds(f)
	f.Add([]byte{25}, uint8(19))
	f.Add([]byte{16, 1}, uint8(14))
	f.Fuzz(func(t *testing.T, data []byte, nkeys uint8) {
		keys := make([]solana.PublicKey, int(nkeys)%24)
		for i := range keys {
			keys[i] = testKey(byte(i))
		}
		d, err := Decode(data, keys)
		if err != nil {
			return
		}
		ix := d.Instruction()
		if !bytes.Equal(ix.Data, data) {
			t.Fatalf("re-encoded data differs:\n in  %x\n out %x", data, ix.Data)
		}
		for i, m := range ix.Accounts {
			if m.PublicKey != keys[i] {
				t.Fatalf("account %d changed", i)
			}
		}
		_ = Summary(d)
		_ = d.Accounts()
	})
}

// FuzzDecodeAccount runs every account decoder on the same bytes: none
// may panic, and accepted canonical encodings round-trip.
func FuzzDecodeAccount(f *testing.F) {
	f.Add(EphemeralATA{Owner: vOwner, Mint: vMint, Amount: 5, Bump: 1}.Encode())
	f.Add(GlobalVault{Mint: vMint}.Encode())
	f.Add(ShuttleMetadata{ID: 3}.Encode())
	f.Add(DelegationRecord{Authority: vValidator}.Encode())
	m, _ := DelegationMetadata{Seeds: [][]byte{{1, 2}, {3}}}.Encode()
	f.Add(m)
	f.Add(GroupReceipt{GroupID: 4}.Encode())
	sp, _ := StealthPool{Handle: []byte("h"), Destinations: []solana.PublicKey{vOwner}}.Encode()
	f.Add(sp)
	f.Add(TransferQueueHeader{}.Encode())
	f.Add(QueuedTransfer{}.Encode())
	f.Add(PrivateTransferSuffix{Split: 1}.Encode())
	f.Fuzz(func(t *testing.T, data []byte) {
		if a, err := DecodeEphemeralATA(data); err == nil && len(data) == EphemeralATASize && a.Bump == data[72] {
			if enc := a.Encode(); !bytes.Equal(enc[:73], data[:73]) {
				t.Fatal("eATA round trip")
			}
		}
		if v, err := DecodeGlobalVault(data); err == nil && len(data) <= GlobalVaultSize {
			if !bytes.Equal(v.Encode(), data) {
				t.Fatal("vault round trip")
			}
		}
		if s, err := DecodeShuttleMetadata(data); err == nil {
			if enc := s.Encode(); !bytes.Equal(enc[:69], data[:69]) {
				t.Fatal("shuttle round trip")
			}
		}
		if r, err := DecodeDelegationRecord(data); err == nil {
			if !bytes.Equal(r.Encode(), data[:DelegationRecordSize]) {
				t.Fatal("record round trip")
			}
		}
		DelegationRecordValidator(data)
		if m, err := DecodeDelegationMetadata(data); err == nil {
			enc, err := m.Encode()
			if err != nil || !bytes.HasPrefix(data, enc[:16]) || !bytes.Equal(enc[17:], data[17:len(enc)]) {
				t.Fatalf("metadata round trip: %v", err)
			}
		}
		if g, err := DecodeGroupReceipt(data); err == nil {
			enc := g.Encode()
			if !bytes.Equal(enc[:5], data[:5]) || !bytes.Equal(enc[8:], data[8:GroupReceiptSize]) {
				t.Fatal("receipt round trip")
			}
		}
		StealthPoolInitialized(data)
		if p, err := DecodeStealthPool(data); err == nil {
			if _, err := p.Encode(); err != nil {
				t.Fatalf("decoded pool does not re-encode: %v", err)
			}
		}
		if h, err := DecodeTransferQueueHeader(data); err == nil {
			enc := h.Encode()
			if !bytes.Equal(enc[:2], data[:2]) || !bytes.Equal(enc[8:48], data[8:48]) || !bytes.Equal(enc[52:], data[52:96]) {
				t.Fatal("queue header round trip")
			}
		}
		if e, err := DecodeQueuedTransfer(data); err == nil && !bytes.Equal(e.Encode(), data) {
			t.Fatal("entry round trip")
		}
		if s, err := DecodePrivateTransferSuffix(data); err == nil && !bytes.Equal(s.Encode(), data) {
			t.Fatal("suffix round trip")
		}
		if h, err := DecodeHandle(data); err == nil {
			st, err := EncodeHandle(h)
			if err != nil || !bytes.Equal(st[:], data) {
				t.Fatal("handle round trip")
			}
		}
	})
}

// FuzzTransferQueue drives heap operations over arbitrary account bytes:
// no panics, and after any sequence the heap property holds for what the
// operations wrote.
func FuzzTransferQueue(f *testing.F) {
	f.Add(NewTransferQueueAccount(TransferQueueHeader{}, 4), []byte{1, 5, 1, 3, 0, 1, 9, 0, 0})
	f.Add(make([]byte, 96), []byte{1, 1})
	f.Fuzz(func(t *testing.T, account []byte, ops []byte) {
		q, err := OpenTransferQueue(account)
		if err != nil {
			return
		}
		q.Header()
		q.Peek()
		// Normalise to a valid heap first: pop everything (arbitrary bytes
		// need not be a heap), then replay the ops.
		for q.Len() > 0 {
			if _, err := q.Pop(); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i+1 < len(ops); i += 2 {
			if ops[i]%2 == 1 {
				if err := q.Push(QueuedTransfer{ReadyAt: int64(int8(ops[i+1]))}); err != nil && q.Len() < q.Cap() {
					t.Fatal(err)
				}
			} else if q.Len() > 0 {
				top, _ := q.Peek()
				e, err := q.Pop()
				if err != nil || e != top {
					t.Fatal("pop did not return the peeked entry")
				}
			}
			for j := 1; j < q.Len(); j++ {
				if q.At(j).ReadyAt < q.At((j-1)/2).ReadyAt {
					t.Fatal("heap violated")
				}
			}
		}
		q.PopReady(0)
	})
}

// FuzzOpen: opening arbitrary bytes never panics and fails unless the box
// is genuine.
func FuzzOpen(f *testing.F) {
	seed := bytes.Repeat([]byte{7}, ed25519.SeedSize)
	priv := ed25519.NewKeyFromSeed(seed)
	v := solana.PublicKeyFromBytes(priv.Public().(ed25519.PublicKey))
	good, _ := Seal(v, []byte("hello"), nil)
	f.Add(good)
	f.Add(make([]byte, 48))
	f.Fuzz(func(t *testing.T, sealed []byte) {
		out, err := Open(priv, sealed)
		if err == nil && !bytes.Equal(sealed, good) && len(out) != len(sealed)-EncryptionOverhead {
			t.Fatal("opened with a wrong length")
		}
		var pt PrivateTransferIx
		copy(pt.EncryptedDestination[:], sealed)
		pt.EncryptedSuffix = sealed
		OpenPrivateTransfer(priv, pt)
	})
}

// FuzzStealthHandle: handle validation, storage and derivation agree and
// never panic.
func FuzzStealthHandle(f *testing.F) {
	f.Add([]byte("john.doe@magicblock.id"))
	f.Add(bytes.Repeat([]byte("x"), 65))
	f.Add([]byte{0xff})
	f.Fuzz(func(t *testing.T, h []byte) {
		_, _, errPDA := FindStealthPool(h)
		st, errEnc := EncodeHandle(h)
		if (errPDA == nil) != (errEnc == nil) || (errEnc == nil) != (ValidateHandle(h) == nil) {
			t.Fatal("validation disagrees")
		}
		if errEnc == nil {
			back, err := DecodeHandle(st[:])
			if err != nil || !bytes.Equal(back, h) {
				t.Fatal("storage round trip")
			}
		}
	})
}
