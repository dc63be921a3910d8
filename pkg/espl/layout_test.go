package espl

import (
	"bytes"
	"encoding/binary"
	"errors"
	mrand "math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"
)

func TestEphemeralATALayout(t *testing.T) {
	a := EphemeralATA{Owner: vOwner, Mint: vMint, Amount: 123456789, Bump: 254}
	b := a.Encode()
	if len(b) != 80 || !bytes.Equal(b[:32], vOwner[:]) || !bytes.Equal(b[32:64], vMint[:]) ||
		binary.LittleEndian.Uint64(b[64:]) != 123456789 || b[72] != 254 || !bytes.Equal(b[73:], make([]byte, 7)) {
		t.Fatalf("encoding %x", b)
	}
	got, err := DecodeEphemeralATA(b)
	if err != nil || got != a {
		t.Errorf("round trip %+v, %v", got, err)
	}
	legacy, err := DecodeEphemeralATA(b[:72])
	if err != nil || !legacy.Legacy || legacy.Bump != 0 || legacy.Amount != a.Amount || legacy.Owner != vOwner {
		t.Errorf("legacy %+v, %v", legacy, err)
	}
	if len(legacy.Encode()) != 80 {
		t.Error("legacy re-encodes to the current size")
	}
	for _, n := range []int{0, 71, 73, 79, 81} {
		if _, err := DecodeEphemeralATA(make([]byte, n)); !errors.Is(err, ErrInvalidAccount) {
			t.Errorf("%d bytes: %v", n, err)
		}
	}
}

func TestGlobalVaultLayouts(t *testing.T) {
	ta := testKey(5)
	cur := GlobalVault{Layout: GlobalVaultV3, Bump: 253, Mint: vMint, TokenAccount: ta}
	b := cur.Encode()
	if len(b) != 65 || b[0] != 253 || !bytes.Equal(b[1:33], vMint[:]) || !bytes.Equal(b[33:], ta[:]) {
		t.Fatalf("V3 %x", b)
	}
	if (GlobalVault{Mint: vMint, TokenAccount: ta, Bump: 253}).Encode(); !bytes.Equal((GlobalVault{Mint: vMint, TokenAccount: ta, Bump: 253}).Encode(), b) {
		t.Error("zero layout is not V3")
	}
	for _, v := range []GlobalVault{cur, {Layout: GlobalVaultV2, Mint: vMint, TokenAccount: ta}, {Layout: GlobalVaultV1, Mint: vMint}} {
		got, err := DecodeGlobalVault(v.Encode())
		if err != nil || got != v {
			t.Errorf("layout %d: %+v, %v", v.Layout, got, err)
		}
	}
	padded, err := DecodeGlobalVault(append(b, 0, 0, 0))
	if err != nil || padded != cur {
		t.Errorf("padded V3: %+v, %v", padded, err)
	}
	for _, n := range []int{0, 31, 33, 63} {
		if _, err := DecodeGlobalVault(make([]byte, n)); !errors.Is(err, ErrInvalidAccount) {
			t.Errorf("%d bytes: %v", n, err)
		}
	}
}

func TestShuttleMetadataLayout(t *testing.T) {
	s := ShuttleMetadata{Owner: vOwner, Payer: testKey(1), ID: 0xdeadbeef, Bump: 255}
	b := s.Encode()
	if len(b) != 72 || binary.LittleEndian.Uint32(b[64:]) != 0xdeadbeef || b[68] != 255 {
		t.Fatalf("encoding %x", b)
	}
	got, err := DecodeShuttleMetadata(b)
	if err != nil || got != s {
		t.Errorf("round trip %+v, %v", got, err)
	}
	if _, err := DecodeShuttleMetadata(b[:71]); err == nil {
		t.Error("71 bytes accepted")
	}
}

func TestDelegationRecordLayout(t *testing.T) {
	r := DelegationRecord{Authority: vValidator, Owner: ProgramID, DelegationSlot: 99, Lamports: 1_000, CommitFrequencyMs: 30_000}
	b := r.Encode()
	if len(b) != 96 || binary.LittleEndian.Uint64(b) != 100 || !bytes.Equal(b[8:40], vValidator[:]) {
		t.Fatalf("encoding %x", b)
	}
	got, err := DecodeDelegationRecord(b)
	if err != nil || got != r {
		t.Errorf("round trip %+v, %v", got, err)
	}
	if v, ok := DelegationRecordValidator(b[:40]); !ok || v != vValidator {
		t.Error("API-style validator read")
	}
	if _, ok := DelegationRecordValidator(b[:39]); ok {
		t.Error("39 bytes accepted by the API-style read")
	}
	bad := bytes.Clone(b)
	bad[0] = 101
	if _, err := DecodeDelegationRecord(bad); !errors.Is(err, ErrInvalidAccount) {
		t.Error("wrong discriminator accepted")
	}
	if _, err := DecodeDelegationRecord(b[:95]); !errors.Is(err, ErrInvalidAccount) {
		t.Error("short record accepted")
	}
}

func TestDelegationMetadataLayout(t *testing.T) {
	m := DelegationMetadata{LastUpdateNonce: 5, IsUndelegatable: true, RentPayer: testKey(3),
		Seeds: [][]byte{vOwner[:], vMint[:], {}, []byte("queue")}}
	b, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeDelegationMetadata(b)
	if err != nil || !reflect.DeepEqual(got, m) {
		t.Errorf("round trip %+v, %v", got, err)
	}
	if _, err := (DelegationMetadata{Seeds: [][]byte{make([]byte, 33)}}).Encode(); err == nil {
		t.Error("33-byte seed accepted")
	}
	if _, err := (DelegationMetadata{Seeds: make([][]byte, 17)}).Encode(); err == nil {
		t.Error("17 seeds accepted")
	}
	if _, err := DecodeDelegationMetadata(b[:len(b)-1]); err == nil {
		t.Error("truncated seeds accepted")
	}
}

func TestGroupReceiptLayout(t *testing.T) {
	g := GroupReceipt{Bump: 254, GroupID: 0xABCDEF, Queue: testKey(1), Source: vOwner, DestinationOwner: testKey(2),
		Amount: 10, ClientRefID: 42, CreatedAt: 1_700_000_000_000, Split: 3, Executed: 1}
	b := g.Encode()
	if len(b) != GroupReceiptSize {
		t.Fatalf("%d bytes", len(b))
	}
	got, err := DecodeGroupReceipt(b)
	if err != nil || got != g {
		t.Errorf("round trip %+v, %v", got, err)
	}
	b[0] = 2
	if _, err := DecodeGroupReceipt(b); err == nil {
		t.Error("version 2 accepted")
	}
}

func TestStealthPoolLayout(t *testing.T) {
	p := StealthPool{Bump: 255, Flags: StealthFlagSplitAcrossKeys, Authority: testKey(1),
		Handle: []byte("john.doe@magicblock.id"), Destinations: []solana.PublicKey{testKey(2), testKey(3)}}
	b, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 619 || string(b[:8]) != "stpool@1" || b[42] != 22 || b[298] != 2 || !StealthPoolInitialized(b) {
		t.Fatalf("encoding: len %d", len(b))
	}
	got, err := DecodeStealthPool(b)
	if err != nil || !reflect.DeepEqual(got, p) || !got.SplitAcrossKeys() {
		t.Errorf("round trip %+v, %v", got, err)
	}
	mut := func(f func(b []byte)) []byte { c := bytes.Clone(b); f(c); return c }
	for name, data := range map[string][]byte{
		"discriminator": mut(func(b []byte) { b[0] = 'x' }),
		"unknown flag":  mut(func(b []byte) { b[9] = 3 }),
		"zero count":    mut(func(b []byte) { b[298] = 0 }),
		"count 11":      mut(func(b []byte) { b[298] = 11 }),
		"empty handle":  mut(func(b []byte) { b[42] = 0 }),
		"pad garbage":   mut(func(b []byte) { b[297] = 1 }),
		"zero dest":     mut(func(b []byte) { clear(b[299+32 : 299+64]) }),
		"short":         b[:618],
	} {
		if _, err := DecodeStealthPool(data); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	if StealthPoolInitialized(mut(func(b []byte) { b[298] = 0 })) {
		t.Error("zero count reported initialized")
	}
	if _, err := (StealthPool{Handle: []byte("a"), Destinations: make([]solana.PublicKey, 11)}).Encode(); err == nil {
		t.Error("11 destinations encoded")
	}
}

func TestHandleStorage(t *testing.T) {
	for _, n := range []int{1, 32, 33, 64, 65, 255} {
		h := []byte(strings.Repeat("h", n))
		st, err := EncodeHandle(h)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeHandle(st[:])
		if err != nil || !bytes.Equal(got, h) || st[0] != byte(n) {
			t.Errorf("%d bytes: %v", n, err)
		}
	}
	for _, h := range [][]byte{nil, make([]byte, 256), {0xc3}} {
		if _, err := EncodeHandle(h); !errors.Is(err, ErrInvalidHandle) {
			t.Errorf("handle %x accepted", h)
		}
		if _, _, err := FindStealthPool(h); !errors.Is(err, ErrInvalidHandle) {
			t.Errorf("pool for %x derived", h)
		}
	}
	if _, err := DecodeHandle(make([]byte, 255)); err == nil {
		t.Error("255-byte storage accepted")
	}
	// Case is significant.
	a, _, _ := FindStealthPool([]byte("Alice"))
	b, _, _ := FindStealthPool([]byte("alice"))
	if a == b {
		t.Error("handles are case-folded")
	}
}

func TestQueueHeaderAndEntryLayout(t *testing.T) {
	h := TransferQueueHeader{Version: 1, Bump: 255, Mint: vMint, Length: 3, NextGroupID: 77, NextTaskID: 9,
		CrankTaskID: -1, Validator: vValidator}
	b := h.Encode()
	if len(b) != 96 || b[0] != 1 || b[1] != 255 || !bytes.Equal(b[8:40], vMint[:]) || binary.LittleEndian.Uint32(b[40:]) != 3 ||
		binary.LittleEndian.Uint32(b[44:]) != 77 || binary.LittleEndian.Uint32(b[52:]) != 9 || !bytes.Equal(b[64:], vValidator[:]) {
		t.Fatalf("header %x", b)
	}
	got, err := DecodeTransferQueueHeader(b)
	if err != nil || got != h {
		t.Errorf("header round trip %+v, %v", got, err)
	}
	e := QueuedTransfer{Source: testKey(1), DestinationOwner: testKey(2), Amount: 5, ReadyAt: -5, ClientRefID: 42,
		TaskID: 8, Flags: QueuedFlagCreateIdempotentATA, GroupID: 0x0c0b0a}
	eb := e.Encode()
	if len(eb) != 96 || eb[92] != 1 || !bytes.Equal(eb[93:], []byte{0x0a, 0x0b, 0x0c}) {
		t.Fatalf("entry %x", eb)
	}
	ge, err := DecodeQueuedTransfer(eb)
	if err != nil || ge != e {
		t.Errorf("entry round trip %+v, %v", ge, err)
	}
}

func TestTransferQueueHeap(t *testing.T) {
	const capacity = 64
	data := NewTransferQueueAccount(TransferQueueHeader{Version: TransferQueueVersion, Mint: vMint, Validator: vValidator, Length: 9}, capacity)
	q, err := OpenTransferQueue(data)
	if err != nil {
		t.Fatal(err)
	}
	if q.Len() != 0 || q.Cap() != capacity || len(data) != TransferQueueSize(capacity) {
		t.Fatalf("len %d cap %d", q.Len(), q.Cap())
	}
	if _, err := q.Pop(); !errors.Is(err, ErrQueueEmpty) {
		t.Error("pop from empty")
	}
	r := mrand.New(mrand.NewPCG(1, 2))
	var model []int64
	for round := 0; round < 2000; round++ {
		if r.IntN(3) != 0 && q.Len() < q.Cap() {
			e := QueuedTransfer{ReadyAt: int64(r.IntN(50)) - 10, Amount: uint64(round), GroupID: uint32(round)}
			if err := q.Push(e); err != nil {
				t.Fatal(err)
			}
			model = append(model, e.ReadyAt)
		} else if q.Len() > 0 {
			e, err := q.Pop()
			if err != nil {
				t.Fatal(err)
			}
			min := slices.Min(model)
			if e.ReadyAt != min {
				t.Fatalf("round %d: popped ready_at %d, min is %d", round, e.ReadyAt, min)
			}
			model = slices.Delete(model, slices.Index(model, min), slices.Index(model, min)+1)
			// The vacated slot is zeroed.
			if !bytes.Equal(q.slot(q.Len()), make([]byte, QueuedTransferSize)) {
				t.Fatal("vacated slot not zeroed")
			}
		}
		checkHeap(t, q)
		if q.Len() != len(model) {
			t.Fatalf("len %d, model %d", q.Len(), len(model))
		}
	}
	// Fill to capacity.
	for q.Len() < q.Cap() {
		if err := q.Push(QueuedTransfer{ReadyAt: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.Push(QueuedTransfer{}); !errors.Is(err, ErrQueueFull) {
		t.Errorf("push to full: %v", err)
	}
	// The header's other fields survive heap operations.
	h := q.Header()
	if h.Mint != vMint || h.Validator != vValidator || h.Version != TransferQueueVersion || int(h.Length) != q.Len() {
		t.Errorf("header %+v", h)
	}
}

func checkHeap(t *testing.T, q TransferQueue) {
	t.Helper()
	for i := 1; i < q.Len(); i++ {
		if q.At(i).ReadyAt < q.At((i-1)/2).ReadyAt {
			t.Fatalf("heap violated at %d", i)
		}
	}
}

func TestTransferQueuePopReadyAndHeader(t *testing.T) {
	q, _ := OpenTransferQueue(NewTransferQueueAccount(TransferQueueHeader{}, 4))
	for _, at := range []int64{30, 10, 20} {
		q.Push(QueuedTransfer{ReadyAt: at})
	}
	if _, ok := q.PopReady(9); ok {
		t.Error("popped before ready")
	}
	if e, ok := q.PopReady(10); !ok || e.ReadyAt != 10 {
		t.Errorf("PopReady(10) = %+v, %v", e, ok)
	}
	if e, ok := q.Peek(); !ok || e.ReadyAt != 20 {
		t.Errorf("peek %+v", e)
	}
	h := q.Header()
	h.NextGroupID, h.CrankTaskID = 5, 77
	if err := q.SetHeader(h); err != nil {
		t.Fatal(err)
	}
	if g := q.Header(); g.NextGroupID != 5 || g.CrankTaskID != 77 || q.Len() != 2 {
		t.Errorf("header %+v", g)
	}
	h.Length = 5
	if err := q.SetHeader(h); err == nil {
		t.Error("length over capacity accepted")
	}
	bad := NewTransferQueueAccount(TransferQueueHeader{}, 1)
	binary.LittleEndian.PutUint32(bad[40:], 2)
	if _, err := OpenTransferQueue(bad); err == nil {
		t.Error("corrupt length accepted")
	}
	if _, err := OpenTransferQueue(make([]byte, 95)); err == nil {
		t.Error("short account accepted")
	}
	defer func() {
		if recover() == nil {
			t.Error("At out of range did not panic")
		}
	}()
	q.At(2)
}
