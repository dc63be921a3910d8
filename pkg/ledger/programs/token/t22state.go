package token

import (
	"encoding/binary"

	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// Token-2022 state layout: the base state (82-byte mint, 165-byte
// account); an extended state is at least 166 bytes: zero padding up to
// byte 165, the account type at 165, then TLV entries (u16 type, u16
// length, value) from 166.
const (
	accountTypeOffset = spl.TokenAccountSize
	tlvOffset         = accountTypeOffset + 1
	tlvHeaderLen      = 4
)

// Account types (byte 165 of an extended state).
const (
	acctTypeUninitialized = 0
	acctTypeMint          = 1
	acctTypeAccount       = 2
)

// tstate is an unpacked Token-2022 mint or account
// (PodStateWithExtensionsMut): views into the account's data.
type tstate struct {
	data []byte
	base []byte
	// typ is the account type byte's slice (empty for a base-only state),
	// tlv the TLV area (nil for a base-only state).
	typ []byte
	tlv []byte
}

// baseLen is the base state size of an account type.
func baseLen(kind byte) int {
	if kind == acctTypeMint {
		return spl.MintSize
	}
	return spl.TokenAccountSize
}

// baseInitialized is the Pod types' is_initialized: an account's state is
// Initialized or Frozen; a mint's flag is any non-zero byte.
func baseInitialized(kind byte, base []byte) bool {
	if kind == acctTypeMint {
		return base[mintInit] != 0
	}
	return base[accState] == stateInitialized || base[accState] == stateFrozen
}

// splitState checks the length and padding of a (possibly extended) state
// and splits it, leaving the account-type check to the caller.
func splitState(data []byte, kind byte) (*tstate, error) {
	bl := baseLen(kind)
	if len(data) == spl.MultisigSize || len(data) < bl {
		return nil, runtime.ErrInvalidAccountData
	}
	s := &tstate{data: data, base: data[:bl]}
	if len(data) == bl {
		return s, nil
	}
	if len(data) < tlvOffset {
		return nil, runtime.ErrInvalidAccountData
	}
	for _, b := range data[bl:accountTypeOffset] {
		if b != 0 {
			return nil, runtime.ErrInvalidAccountData
		}
	}
	if data[accountTypeOffset] > acctTypeAccount {
		return nil, runtime.ErrInvalidAccountData
	}
	s.typ, s.tlv = data[accountTypeOffset:tlvOffset], data[tlvOffset:]
	return s, nil
}

// unpackState is PodStateWithExtensions(Mut)::unpack: an initialized state
// of the given kind.
func unpackState(data []byte, kind byte) (*tstate, error) {
	bl := baseLen(kind)
	if len(data) == spl.MultisigSize || len(data) < bl {
		return nil, runtime.ErrInvalidAccountData
	}
	if !baseInitialized(kind, data[:bl]) {
		return nil, runtime.ErrUninitializedAccount
	}
	s, err := splitState(data, kind)
	if err != nil {
		return nil, err
	}
	if s.typ != nil && s.typ[0] != kind {
		return nil, runtime.ErrInvalidAccountData
	}
	return s, nil
}

// unpackUninitialized is unpack_uninitialized: a state not yet
// initialized (AlreadyInUse otherwise), account type still uninitialized,
// whose first extension (if any) belongs to the kind.
func unpackUninitialized(data []byte, kind byte) (*tstate, error) {
	bl := baseLen(kind)
	if len(data) == spl.MultisigSize || len(data) < bl {
		return nil, runtime.ErrInvalidAccountData
	}
	if baseInitialized(kind, data[:bl]) {
		return nil, ErrAlreadyInUse
	}
	s, err := splitState(data, kind)
	if err != nil {
		return nil, err
	}
	if s.typ != nil && s.typ[0] != acctTypeUninitialized {
		return nil, runtime.ErrInvalidAccountData
	}
	first, err := s.firstType()
	if err != nil {
		return nil, err
	}
	if first != nil && extAccountType(*first) != kind {
		return nil, ErrExtensionBaseMismatch
	}
	return s, nil
}

// firstType is get_first_extension_type.
func (s *tstate) firstType() (*uint16, error) {
	if len(s.tlv) <= 2 {
		return nil, nil
	}
	t := binary.LittleEndian.Uint16(s.tlv)
	if !knownExt(t) {
		return nil, runtime.ErrInvalidAccountData
	}
	if t == extUninitialized {
		return nil, nil
	}
	return &t, nil
}

// types walks the TLV entries (get_tlv_data_info): the extension types in
// order and the bytes they use.
func (s *tstate) types() ([]uint16, int, error) {
	var out []uint16
	tlv := s.tlv
	off := 0
	for off < len(tlv) {
		if len(tlv) < off+2 {
			return out, off, nil
		}
		t := binary.LittleEndian.Uint16(tlv[off:])
		if !knownExt(t) {
			return nil, 0, runtime.ErrInvalidAccountData
		}
		if t == extUninitialized {
			return out, off, nil
		}
		if len(tlv) < off+tlvHeaderLen {
			return nil, 0, runtime.ErrInvalidAccountData
		}
		end := off + tlvHeaderLen + int(binary.LittleEndian.Uint16(tlv[off+2:]))
		if end > len(tlv) {
			return nil, 0, runtime.ErrInvalidAccountData
		}
		out = append(out, t)
		off = end
	}
	return out, off, nil
}

// find is get_extension_indices: the offset (in tlv) of the entry of type
// t, or, with init, of the first free slot.
func (s *tstate) find(t uint16, init bool) (int, error) {
	tlv := s.tlv
	off := 0
	for off < len(tlv) {
		if len(tlv) < off+tlvHeaderLen {
			return 0, runtime.ErrInvalidAccountData
		}
		et := binary.LittleEndian.Uint16(tlv[off:])
		if et == t {
			return off, nil
		}
		if et == extUninitialized {
			if init {
				return off, nil
			}
			return 0, ErrExtensionNotFound
		}
		off += tlvHeaderLen + int(binary.LittleEndian.Uint16(tlv[off+2:]))
	}
	return 0, runtime.ErrInvalidAccountData
}

// ext returns the value bytes of extension t (get_extension_bytes), which
// must belong to kind; for a fixed-size extension the length must match.
func (s *tstate) ext(t uint16, kind byte) ([]byte, error) {
	if extAccountType(t) != kind {
		return nil, runtime.ErrInvalidAccountData
	}
	off, err := s.find(t, false)
	if err != nil {
		return nil, err
	}
	n := int(binary.LittleEndian.Uint16(s.tlv[off+2:]))
	end := off + tlvHeaderLen + n
	if end > len(s.tlv) {
		return nil, runtime.ErrInvalidAccountData
	}
	v := s.tlv[off+tlvHeaderLen : end]
	if size, ok := extSize[t]; ok && size != n {
		return nil, runtime.ErrInvalidArgument
	}
	return v, nil
}

// has reports whether extension t is present and well formed.
func (s *tstate) has(t uint16, kind byte) bool {
	_, err := s.ext(t, kind)
	return err == nil
}

// alloc reserves length bytes for extension t (alloc): in its existing
// entry when overwrite is set (same length only), else in the first free
// slot. It writes the type and length and returns the value bytes.
func (s *tstate) alloc(t uint16, kind byte, length int, overwrite bool) ([]byte, error) {
	if extAccountType(t) != kind {
		return nil, runtime.ErrInvalidAccountData
	}
	off, err := s.find(t, true)
	if err != nil {
		return nil, err
	}
	if len(s.tlv)-off < tlvHeaderLen+length {
		return nil, runtime.ErrInvalidAccountData
	}
	cur := binary.LittleEndian.Uint16(s.tlv[off:])
	if !knownExt(cur) {
		return nil, runtime.ErrInvalidAccountData
	}
	if cur != extUninitialized && !overwrite {
		return nil, ErrExtensionAlreadyInitialized
	}
	binary.LittleEndian.PutUint16(s.tlv[off:], t)
	if overwrite && cur == t && int(binary.LittleEndian.Uint16(s.tlv[off+2:])) != length {
		return nil, ErrInvalidLengthForAlloc
	}
	binary.LittleEndian.PutUint16(s.tlv[off+2:], uint16(length))
	return s.tlv[off+tlvHeaderLen : off+tlvHeaderLen+length], nil
}

// initExt is init_extension: alloc then write the extension's default
// (all zero) value.
func (s *tstate) initExt(t uint16, kind byte, overwrite bool) ([]byte, error) {
	v, err := s.alloc(t, kind, extSize[t], overwrite)
	if err != nil {
		return nil, err
	}
	clear(v)
	return v, nil
}

// initAccountType is init_account_type: on an extended state, the first
// extension must belong to kind, and the type byte is set.
func (s *tstate) initAccountType(kind byte) error {
	first, err := s.firstType()
	if err != nil {
		return err
	}
	if len(s.typ) > 0 {
		if first != nil && extAccountType(*first) != kind {
			return ErrExtensionBaseMismatch
		}
		s.typ[0] = kind
	}
	return nil
}

// accountLen is ExtensionType::try_calculate_account_len: the base size
// when there are no extensions, else 166 plus each distinct extension's
// TLV entry (variable-length ones are refused), adjusted so it is never
// the multisig size.
func accountLen(kind byte, exts []uint16) (int, error) {
	if len(exts) == 0 {
		return baseLen(kind), nil
	}
	seen := map[uint16]bool{}
	n := tlvOffset
	for _, t := range exts {
		if seen[t] {
			continue
		}
		seen[t] = true
		size, ok := extSize[t]
		if !ok {
			return 0, runtime.ErrInvalidArgument
		}
		n += tlvHeaderLen + size
	}
	if n == spl.MultisigSize {
		n += 2
	}
	return n, nil
}

// usedLen is try_get_account_len: the bytes the state needs.
func (s *tstate) usedLen(kind byte) (int, error) {
	types, used, err := s.types()
	if err != nil {
		return 0, err
	}
	if len(types) == 0 {
		return baseLen(kind), nil
	}
	n := tlvOffset + used
	if n == spl.MultisigSize {
		n += 2
	}
	return n, nil
}

// Extension is one Token-2022 TLV entry: its ExtensionType and value.
type Extension struct {
	Type  uint16
	Value []byte
}

// Extensions lists the extensions of Token-2022 mint (account false) or
// token account data in TLV order, as get_extension_types walks them. It
// is nil for base-size data and for a malformed TLV area.
func Extensions(data []byte, account bool) []Extension {
	kind := byte(acctTypeMint)
	if account {
		kind = acctTypeAccount
	}
	s, err := splitState(data, kind)
	if err != nil || s.tlv == nil {
		return nil
	}
	types, _, err := s.types()
	if err != nil {
		return nil
	}
	out := make([]Extension, 0, len(types))
	off := 0
	for _, t := range types {
		n := int(binary.LittleEndian.Uint16(s.tlv[off+2:]))
		out = append(out, Extension{Type: t, Value: s.tlv[off+tlvHeaderLen : off+tlvHeaderLen+n]})
		off += tlvHeaderLen + n
	}
	return out
}

// ExtensionSize is the value size of a fixed-size extension type, or -1
// for TokenMetadata (variable) and unknown types.
func ExtensionSize(t uint16) int {
	if n, ok := extSize[t]; ok {
		return n
	}
	return -1
}
