package ledger

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
)

// The on-disk encodings are small hand-written binary formats: JSON or gob
// would dominate the per-slot commit cost at thousands of transactions per
// slot. Every record starts with a format version byte so the layout can
// evolve.

const (
	accountFormat = 1
	txFormat      = 1
	blockFormat   = 1
)

var errCorrupt = errors.New("corrupt record")

type encoder struct{ b []byte }

func (e *encoder) u8(v uint8)       { e.b = append(e.b, v) }
func (e *encoder) u64(v uint64)     { e.b = binary.LittleEndian.AppendUint64(e.b, v) }
func (e *encoder) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) varint(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) raw(b []byte)     { e.b = append(e.b, b...) }
func (e *encoder) bytes(b []byte)   { e.uvarint(uint64(len(b))); e.b = append(e.b, b...) }
func (e *encoder) str(s string)     { e.uvarint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *encoder) key(k [32]byte)   { e.b = append(e.b, k[:]...) }
func (e *encoder) bool(v bool)      { e.u8(boolByte(v)) }
func (e *encoder) sig(s [64]byte)   { e.b = append(e.b, s[:]...) }
func (e *encoder) count(n int)      { e.uvarint(uint64(n)) }
func (e *encoder) u64s(v []uint64) {
	e.count(len(v))
	for _, x := range v {
		e.uvarint(x)
	}
}
func (e *encoder) txErr(t *runtime.TxError) {
	if t == nil {
		e.bytes(nil)
		return
	}
	j, _ := json.Marshal(t) // TxError.MarshalJSON never fails
	e.bytes(j)
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

type decoder struct {
	b   []byte
	off int
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s at byte %d", errCorrupt, what, d.off)
	}
}

func (d *decoder) take(n int, what string) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || len(d.b)-d.off < n {
		d.fail(what)
		return nil
	}
	s := d.b[d.off : d.off+n : d.off+n]
	d.off += n
	return s
}

func (d *decoder) u8() uint8 {
	if b := d.take(1, "u8"); b != nil {
		return b[0]
	}
	return 0
}

func (d *decoder) u64() uint64 {
	if b := d.take(8, "u64"); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		d.fail("uvarint")
		return 0
	}
	d.off += n
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b[d.off:])
	if n <= 0 {
		d.fail("varint")
		return 0
	}
	d.off += n
	return v
}

// count reads a length and checks it against the bytes left, assuming
// each element takes at least minSize bytes, so corrupt input cannot make
// the decoder allocate huge slices.
func (d *decoder) count(minSize int) int {
	n := d.uvarint()
	if d.err == nil && n > uint64(len(d.b)-d.off)/uint64(max(minSize, 1)) {
		d.fail("length")
		return 0
	}
	return int(n)
}

func (d *decoder) bytes() []byte {
	n := d.count(1)
	b := d.take(n, "bytes")
	if n == 0 {
		return nil
	}
	return append([]byte(nil), b...)
}

func (d *decoder) str() string { return string(d.take(d.count(1), "string")) }

func (d *decoder) key() (k solana.PublicKey) {
	copy(k[:], d.take(32, "key"))
	return
}

func (d *decoder) hash() (h solana.Hash) {
	copy(h[:], d.take(32, "hash"))
	return
}

func (d *decoder) sig() (s solana.Signature) {
	copy(s[:], d.take(64, "signature"))
	return
}

func (d *decoder) bool() bool { return d.u8() != 0 }

func (d *decoder) u64s() []uint64 {
	n := d.count(1)
	if d.err != nil {
		return nil
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = d.uvarint()
	}
	return out
}

func (d *decoder) txErr() *runtime.TxError {
	j := d.take(d.count(1), "error")
	if d.err != nil || len(j) == 0 {
		return nil
	}
	var t runtime.TxError
	if err := json.Unmarshal(j, &t); err != nil {
		d.fail("transaction error: " + err.Error())
		return nil
	}
	return &t
}

func (d *decoder) done() error {
	if d.err == nil && d.off != len(d.b) {
		d.fail("trailing bytes")
	}
	return d.err
}

// encodeAccount is lamports u64 | owner | executable | rent epoch u64 | data.
func encodeAccount(a *Account) []byte {
	return appendAccount(make([]byte, 0, 1+8+32+1+8+len(a.Data)), a)
}

// appendAccount appends encodeAccount(a) to b.
func appendAccount(b []byte, a *Account) []byte {
	e := encoder{b: b}
	e.u8(accountFormat)
	e.u64(a.Lamports)
	e.key(a.Owner)
	e.bool(a.Executable)
	e.u64(a.RentEpoch)
	e.raw(a.Data)
	return e.b
}

// accountRecordFormat marks the account log's compact encoding of an
// account (appendAccountRecord). encodeAccount stays as it is: genesis
// hashes it. Records of accountRecordFormatV2 (before ferry-ledger-6:
// the owner always whole, before the flags) still read.
const (
	accountRecordFormat   = 3
	accountRecordFormatV2 = 2
)

// knownOwners are the owners a compact record names by their index in
// this list (recKnownOwner) instead of 32 bytes: nearly every account a
// payment flow writes is owned by one of the first three. The list is
// part of the record format: entries are only ever appended.
var knownOwners = [...]solana.PublicKey{
	solana.MustPublicKeyFromBase58("11111111111111111111111111111111"),
	solana.MustPublicKeyFromBase58("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"),
	solana.MustPublicKeyFromBase58("TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb"),
	solana.MustPublicKeyFromBase58("DELeGGvXpWV2fqJUhqcF5ZSYMS4JTLjteaAMARRSaeSh"),
	solana.MustPublicKeyFromBase58("SPLxh1LVZzEkX99H6rqYizhytLWPZVV296zyYDPagv2"),
	solana.MustPublicKeyFromBase58("BPFLoaderUpgradeab1e11111111111111111111111"),
	solana.MustPublicKeyFromBase58("BPFLoader2111111111111111111111111111111111"),
	solana.MustPublicKeyFromBase58("NativeLoader1111111111111111111111111111111"),
	solana.MustPublicKeyFromBase58("Sysvar1111111111111111111111111111111111111"),
	solana.MustPublicKeyFromBase58("AddressLookupTab1e1111111111111111111111111"),
	solana.MustPublicKeyFromBase58("Vote111111111111111111111111111111111111111"),
	solana.MustPublicKeyFromBase58("Stake11111111111111111111111111111111111111"),
}

// knownOwner returns owner's index in knownOwners.
func knownOwner(owner solana.PublicKey) (byte, bool) {
	for i := range knownOwners {
		if knownOwners[i] == owner {
			return byte(i), true
		}
	}
	return 0, false
}

// minZeroRun is the shortest run of zero bytes a compact record elides:
// a shorter one costs more in lengths than it saves.
const minZeroRun = 4

// maxRecordData bounds the data length a compact record may claim, so a
// damaged one cannot make a read allocate without limit (accounts are at
// most 10 MiB; genesis and cheat codes stay well under this).
const maxRecordData = 64 << 20

// Account flags of a compact record.
const (
	recExecutable   = 1 << 0
	recRentEpochMax = 1 << 1 // the rent epoch is u64 max (rent exempt)
	recKnownOwner   = 1 << 2 // the owner is knownOwners[next byte]
	// recMintRef: the data's first 32 bytes (a token account's mint) are
	// the account log's mint dictionary's entry of the uvarint before the
	// data length (accountLog.mints); the data pairs cover the rest.
	recMintRef = 1 << 3
)

// appendAccountRecord appends a's compact encoding, the account log's:
//
//	format (3) | uvarint lamports | flags | owner (its index in
//	knownOwners, 1 byte, with recKnownOwner; else 32 bytes) | [uvarint
//	rent epoch, unless recRentEpochMax] | [uvarint mint, with
//	recMintRef] | uvarint data length | the data (after its first 32
//	bytes, with recMintRef) as (uvarint n, n literal bytes, uvarint z: z
//	zero bytes) pairs until the length is covered (the last pair may stop
//	after its literal)
//
// A token account's 165 bytes carry about 90 zeros (empty delegate,
// native and close-authority options, a zero delegated amount), and its
// owner is the token program, so its record is ~130 bytes instead of
// encodeAccount's ~255: the account log is most of what a transfer
// writes after its history. (accountRecordFormatV2 had the owner whole,
// before the flags.)
func appendAccountRecord(b []byte, a *Account) []byte {
	return appendAccountRecordRef(b, a, -1)
}

// appendAccountRecordRef is appendAccountRecord with the data's first 32
// bytes named by mint, their index in the account log's mint dictionary
// (recMintRef), unless mint is negative. Only the account log's records
// use it: the dictionary is the log's.
func appendAccountRecordRef(b []byte, a *Account, mint int) []byte {
	e := encoder{b: b}
	e.u8(accountRecordFormat)
	e.uvarint(a.Lamports)
	var flags uint8
	if a.Executable {
		flags |= recExecutable
	}
	if a.RentEpoch == ^uint64(0) {
		flags |= recRentEpochMax
	}
	idx, known := knownOwner(a.Owner)
	if known {
		flags |= recKnownOwner
	}
	if mint >= 0 && len(a.Data) >= 32 {
		flags |= recMintRef
	}
	e.u8(flags)
	if known {
		e.u8(idx)
	} else {
		e.key(a.Owner)
	}
	if flags&recRentEpochMax == 0 {
		e.uvarint(a.RentEpoch)
	}
	d := a.Data
	if flags&recMintRef != 0 {
		e.uvarint(uint64(mint))
	}
	e.uvarint(uint64(len(d)))
	if flags&recMintRef != 0 {
		d = d[32:]
	}
	lit := 0 // start of the pending literal
	for i := 0; i < len(d); {
		if d[i] != 0 {
			i++
			continue
		}
		j := i
		for j < len(d) && d[j] == 0 {
			j++
		}
		if j-i >= minZeroRun || j == len(d) {
			e.bytes(d[lit:i])
			e.uvarint(uint64(j - i))
			lit = j
		}
		i = j
	}
	if lit < len(d) {
		e.bytes(d[lit:])
	}
	return e.b
}

// decodeAccountRecord decodes appendAccountRecord's encoding.
func decodeAccountRecord(b []byte) (*Account, error) {
	return decodeAccountRecordWith(nil, b, nil)
}

// decodeAccountRecordInto decodes appendAccountRecord's encoding into
// scratch, reusing its data array when it is large enough, and returns
// it; with a nil scratch it allocates the account. The data is nil for
// an account without data.
func decodeAccountRecordInto(scratch *Account, b []byte) (*Account, error) {
	return decodeAccountRecordWith(scratch, b, nil)
}

// decodeAccountRecordWith is decodeAccountRecordInto for a record that
// may name its mint in mints, the account log's dictionary
// (appendAccountRecordRef): a record naming one outside it is corrupt.
func decodeAccountRecordWith(scratch *Account, b []byte, mints []solana.PublicKey) (*Account, error) {
	d := decoder{b: b}
	var h Account
	var flags uint8
	if d.u8() == accountRecordFormatV2 {
		h.Lamports, h.Owner = d.uvarint(), d.key()
		if flags = d.u8(); flags&(recKnownOwner|recMintRef) != 0 {
			return nil, fmt.Errorf("%w: account record flags", errCorrupt)
		}
	} else {
		h.Lamports = d.uvarint()
		if flags = d.u8(); flags&recKnownOwner == 0 {
			h.Owner = d.key()
		} else if i := d.u8(); d.err == nil && int(i) < len(knownOwners) {
			h.Owner = knownOwners[i]
		} else if d.err == nil {
			return nil, fmt.Errorf("%w: account record owner %d", errCorrupt, i)
		}
	}
	h.Executable = flags&recExecutable != 0
	if flags&recRentEpochMax != 0 {
		h.RentEpoch = ^uint64(0)
	} else {
		h.RentEpoch = d.uvarint()
	}
	mint := -1
	if flags&recMintRef != 0 {
		if m := d.uvarint(); d.err == nil && m < uint64(len(mints)) {
			mint = int(m)
		} else if d.err == nil {
			return nil, fmt.Errorf("%w: account record mint %d of %d", errCorrupt, m, len(mints))
		}
	}
	n := d.uvarint()
	if d.err != nil {
		return nil, d.err
	}
	if flags&^(recExecutable|recRentEpochMax|recKnownOwner|recMintRef) != 0 || n > maxRecordData || (mint >= 0 && n < 32) {
		return nil, fmt.Errorf("%w: account record", errCorrupt)
	}
	a := scratch
	if a == nil {
		a = &Account{}
	}
	switch {
	case n > 0 && uint64(cap(a.Data)) >= n:
		h.Data = a.Data[:n]
		clear(h.Data) // zero runs are skipped below
	case n > 0:
		h.Data = make([]byte, n)
	}
	*a = h
	pos := uint64(0)
	if mint >= 0 {
		copy(a.Data, mints[mint][:])
		pos = 32
	}
	for pos < n {
		lit := d.uvarint()
		if d.err != nil || lit > n-pos || lit > uint64(len(b)-d.off) {
			return nil, fmt.Errorf("%w: account record data", errCorrupt)
		}
		copy(a.Data[pos:], b[d.off:d.off+int(lit)])
		d.off += int(lit)
		pos += lit
		if pos == n {
			break
		}
		z := d.uvarint()
		if d.err != nil || z > n-pos || lit+z == 0 {
			return nil, fmt.Errorf("%w: account record data", errCorrupt)
		}
		pos += z
	}
	if d.off != len(b) {
		return nil, fmt.Errorf("%w: account record: %d trailing bytes", errCorrupt, len(b)-d.off)
	}
	return a, nil
}

// decodeAccount decodes encodeAccount's encoding, or the account log's
// compact one (decodeAccountRecord).
func decodeAccount(b []byte) (*Account, error) { return decodeAccountWith(b, nil) }

// decodeAccountWith is decodeAccount for a record of the account log,
// whose mint dictionary is mints (decodeAccountRecordWith).
func decodeAccountWith(b []byte, mints []solana.PublicKey) (*Account, error) {
	if len(b) > 0 && (b[0] == accountRecordFormat || b[0] == accountRecordFormatV2) {
		return decodeAccountRecordWith(nil, b, mints)
	}
	d := decoder{b: b}
	if v := d.u8(); d.err == nil && v != accountFormat {
		return nil, fmt.Errorf("%w: account format %d", errCorrupt, v)
	}
	a := &Account{Lamports: d.u64(), Owner: d.key(), Executable: d.bool(), RentEpoch: d.u64()}
	if d.err != nil {
		return nil, d.err
	}
	if rest := b[d.off:]; len(rest) > 0 {
		a.Data = append([]byte(nil), rest...)
	}
	return a, nil
}

func encodeTokenBalances(e *encoder, tbs []TokenBalance) {
	e.count(len(tbs))
	for _, t := range tbs {
		e.u8(t.AccountIndex)
		e.key(t.Mint)
		e.key(t.Owner)
		e.key(t.ProgramID)
		e.uvarint(t.Amount)
		e.u8(t.Decimals)
	}
}

func decodeTokenBalances(d *decoder) []TokenBalance {
	n := d.count(1 + 96 + 1 + 1)
	if n == 0 || d.err != nil {
		return nil
	}
	out := make([]TokenBalance, n)
	for i := range out {
		out[i] = TokenBalance{AccountIndex: d.u8(), Mint: d.key(), Owner: d.key(), ProgramID: d.key(), Amount: d.uvarint(), Decimals: d.u8()}
	}
	return out
}

// encodeTx encodes a landed transaction with its metadata.
func encodeTx(r *TxRecord) []byte {
	return appendTx(make([]byte, 0, 256+len(r.Raw)+64*len(r.Meta.Logs)), r)
}

// appendTx appends encodeTx(r) to b.
func appendTx(b []byte, r *TxRecord) []byte {
	e := encoder{b: b}
	e.u8(txFormat)
	e.sig(r.Signature)
	e.uvarint(r.Slot)
	e.uvarint(uint64(r.Index))
	e.varint(r.BlockTime)
	e.bytes(r.Raw)
	e.txErr(r.Err)
	m := r.Meta
	e.uvarint(m.Fee)
	e.u64s(m.PreBalances)
	e.u64s(m.PostBalances)
	encodeTokenBalances(&e, m.PreTokenBalances)
	encodeTokenBalances(&e, m.PostTokenBalances)
	e.bool(m.Logs != nil)
	e.count(len(m.Logs))
	for _, l := range m.Logs {
		e.str(l)
	}
	e.uvarint(m.ComputeUnits)
	e.uvarint(m.CostUnits)
	e.count(len(m.InnerInstructions))
	for _, in := range m.InnerInstructions {
		e.u8(in.Index)
		e.count(len(in.Instructions))
		for _, ix := range in.Instructions {
			e.u8(ix.ProgramIDIndex)
			e.bytes(ix.Accounts)
			e.bytes(ix.Data)
			e.uvarint(uint64(ix.StackHeight))
		}
	}
	e.bool(m.ReturnData != nil)
	if m.ReturnData != nil {
		e.key(m.ReturnData.ProgramID)
		e.bytes(m.ReturnData.Data)
	}
	// Optional trailing section (records written before it end above):
	// the addresses loaded through lookup tables.
	if len(m.LoadedWritable)+len(m.LoadedReadonly) > 0 {
		for _, keys := range [][]solana.PublicKey{m.LoadedWritable, m.LoadedReadonly} {
			e.count(len(keys))
			for _, k := range keys {
				e.key(k)
			}
		}
	}
	return e.b
}

func decodeTx(b []byte) (*TxRecord, error) {
	d := decoder{b: b}
	if v := d.u8(); d.err == nil && v != txFormat {
		return nil, fmt.Errorf("%w: transaction format %d", errCorrupt, v)
	}
	r := &TxRecord{Signature: d.sig(), Slot: d.uvarint(), Index: uint32(d.uvarint()), BlockTime: d.varint(), Raw: d.bytes(), Err: d.txErr()}
	m := &TxMeta{Fee: d.uvarint(), PreBalances: d.u64s(), PostBalances: d.u64s()}
	m.PreTokenBalances = decodeTokenBalances(&d)
	m.PostTokenBalances = decodeTokenBalances(&d)
	hasLogs := d.bool()
	n := d.count(1)
	if hasLogs && d.err == nil {
		m.Logs = make([]string, n)
		for i := range m.Logs {
			m.Logs[i] = d.str()
		}
	}
	m.ComputeUnits = d.uvarint()
	m.CostUnits = d.uvarint()
	if n := d.count(2); n > 0 && d.err == nil {
		m.InnerInstructions = make([]runtime.InnerInstructions, n)
		for i := range m.InnerInstructions {
			in := &m.InnerInstructions[i]
			in.Index = d.u8()
			k := d.count(4)
			if d.err != nil {
				break
			}
			in.Instructions = make([]runtime.InnerInstruction, k)
			for j := range in.Instructions {
				in.Instructions[j] = runtime.InnerInstruction{ProgramIDIndex: d.u8(), Accounts: d.bytes(), Data: d.bytes(), StackHeight: int(d.uvarint())}
			}
		}
	}
	if d.bool() {
		m.ReturnData = &runtime.ReturnData{ProgramID: d.key(), Data: d.bytes()}
	}
	if d.err == nil && d.off < len(d.b) {
		for _, dst := range []*[]solana.PublicKey{&m.LoadedWritable, &m.LoadedReadonly} {
			n := d.count(32)
			for i := 0; i < n && d.err == nil; i++ {
				*dst = append(*dst, d.key())
			}
		}
	}
	if err := d.done(); err != nil {
		return nil, fmt.Errorf("decode transaction record: %w", err)
	}
	r.Meta = m
	return r, nil
}

// blockRecord is what the store keeps per block: the header, the running
// transaction count and each transaction's signature and error, which is
// enough to rebuild the status cache after a restart.
type blockRecord struct {
	BlockInfo
	TxCount uint64 // transactions in all blocks up to and including this one
	Errs    []*runtime.TxError
	// Keys are the signatures' status keys, set instead of Signatures
	// by decodeBlockKeys, which leaves Errs nil when none failed.
	Keys []statusKey
}

// err is the error of transaction i.
func (r *blockRecord) err(i int) *runtime.TxError {
	if r.Errs == nil {
		return nil
	}
	return r.Errs[i]
}

func encodeBlock(r *blockRecord) []byte {
	e := encoder{b: make([]byte, 0, 128+70*len(r.Signatures))}
	e.u8(blockFormat)
	e.uvarint(r.Slot)
	e.uvarint(r.ParentSlot)
	e.uvarint(r.Height)
	e.key(r.Blockhash)
	e.key(r.PreviousBlockhash)
	e.varint(r.Time)
	e.uvarint(r.TxCount)
	e.count(len(r.Signatures))
	for i, s := range r.Signatures {
		e.sig(s)
		e.txErr(r.Errs[i])
	}
	return e.b
}

func decodeBlock(b []byte) (*blockRecord, error) { return decodeBlockRecord(b, false) }

// decodeBlockKeys decodes a block record keeping only each signature's
// status key (Keys, not Signatures): all an open needs of the recent
// blocks, a quarter of the bytes to copy.
func decodeBlockKeys(b []byte) (*blockRecord, error) { return decodeBlockRecord(b, true) }

func decodeBlockRecord(b []byte, keysOnly bool) (*blockRecord, error) {
	d := decoder{b: b}
	if v := d.u8(); d.err == nil && v != blockFormat {
		return nil, fmt.Errorf("%w: block format %d", errCorrupt, v)
	}
	r := &blockRecord{}
	r.Slot, r.ParentSlot, r.Height = d.uvarint(), d.uvarint(), d.uvarint()
	r.Blockhash, r.PreviousBlockhash = d.hash(), d.hash()
	r.Time = d.varint()
	r.TxCount = d.uvarint()
	n := d.count(65)
	if d.err == nil && n > 0 {
		if keysOnly {
			// Most blocks have no failure: no slice of n pointers for
			// the collector to scan.
			r.Keys = make([]statusKey, n)
			for i := 0; i < n; i++ {
				r.Keys[i] = statusKeyOf(d.sig())
				if err := d.txErr(); err != nil {
					if r.Errs == nil {
						r.Errs = make([]*runtime.TxError, n)
					}
					r.Errs[i] = err
				}
			}
		} else {
			r.Errs = make([]*runtime.TxError, n)
			r.Signatures = make([]solana.Signature, n)
			for i := 0; i < n; i++ {
				r.Signatures[i] = d.sig()
				r.Errs[i] = d.txErr()
			}
		}
	}
	if err := d.done(); err != nil {
		return nil, fmt.Errorf("decode block record: %w", err)
	}
	return r, nil
}
