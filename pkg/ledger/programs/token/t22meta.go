package token

import (
	"encoding/binary"
	"unicode/utf8"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
)

// Token metadata (spl-token-metadata-interface) and token group
// (spl-token-group-interface) as Token-2022 implements them inside the
// mint: the TokenMetadata extension is a borsh-encoded, variable-length
// TLV value the program reallocates the mint for; TokenGroup and
// TokenGroupMember are fixed-size.

var (
	errMetaIncorrectMintAuthority   = runtime.Custom(CodeMetadataIncorrectMintAuthority)
	errMetaIncorrectUpdateAuthority = runtime.Custom(CodeMetadataIncorrectUpdateAuthority)
	errMetaImmutable                = runtime.Custom(CodeMetadataImmutable)
	errMetaKeyNotFound              = runtime.Custom(CodeMetadataKeyNotFound)
	errGroupSizeExceedsNewMaxSize   = runtime.Custom(CodeGroupSizeExceedsNewMaxSize)
	errGroupSizeExceedsMaxSize      = runtime.Custom(CodeGroupSizeExceedsMaxSize)
	errGroupImmutable               = runtime.Custom(CodeGroupImmutable)
	errGroupIncorrectMintAuthority  = runtime.Custom(CodeGroupIncorrectMintAuthority)
	errGroupIncorrectUpdateAuth     = runtime.Custom(CodeGroupIncorrectUpdateAuthority)
	errGroupMemberIsGroup           = runtime.Custom(CodeGroupMemberAccountIsGroupAccount)
)

// TokenMetadata is the TokenMetadata extension's value.
type TokenMetadata struct {
	UpdateAuthority solana.PublicKey // zero: none
	Mint            solana.PublicKey
	Name, Symbol    string
	URI             string
	Additional      [][2]string
}

// borshReader reads borsh-encoded values; any short or invalid input
// sets bad.
type borshReader struct {
	b   []byte
	bad bool
}

func (r *borshReader) take(n int) []byte {
	if r.bad || len(r.b) < n {
		r.bad = true
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *borshReader) u32() uint32 {
	b := r.take(4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

func (r *borshReader) str() string {
	n := r.u32()
	b := r.take(int(n))
	if b == nil || !utf8.Valid(b) {
		r.bad = true
		return ""
	}
	return string(b)
}

// DecodeTokenMetadata decodes a TokenMetadata value (borsh, exact).
func DecodeTokenMetadata(b []byte) (*TokenMetadata, bool) {
	r := &borshReader{b: b}
	m := &TokenMetadata{}
	copy(m.UpdateAuthority[:], r.take(32))
	copy(m.Mint[:], r.take(32))
	m.Name, m.Symbol, m.URI = r.str(), r.str(), r.str()
	n := r.u32()
	for i := uint32(0); i < n && !r.bad; i++ {
		k, v := r.str(), r.str()
		m.Additional = append(m.Additional, [2]string{k, v})
	}
	if r.bad || len(r.b) != 0 {
		return nil, false
	}
	return m, true
}

func appendStr(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// Encode is the borsh encoding of a TokenMetadata value.
func (m *TokenMetadata) Encode() []byte {
	b := append([]byte{}, m.UpdateAuthority[:]...)
	b = append(b, m.Mint[:]...)
	b = appendStr(appendStr(appendStr(b, m.Name), m.Symbol), m.URI)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(m.Additional)))
	for _, kv := range m.Additional {
		b = appendStr(appendStr(b, kv[0]), kv[1])
	}
	return b
}

// resize grows or shrinks an account the program owns.
func resize(ref *runtime.AccountRef, n int) {
	if n == len(ref.Data) {
		return
	}
	d := make([]byte, n)
	copy(d, ref.Data)
	ref.Data = d
}

// setAccountType is set_account_type for a state that just grew past its
// base size: an uninitialized type byte becomes kind.
func setAccountType(data []byte, kind byte) error {
	s, err := splitState(data, kind)
	if err != nil {
		return err
	}
	if kind == acctTypeAccount && data[accState] == stateUninitialized {
		return runtime.ErrInvalidAccountData
	}
	if s.typ == nil {
		return runtime.ErrInvalidAccountData
	}
	if s.typ[0] == acctTypeUninitialized {
		s.typ[0] = kind
	}
	if s.typ[0] != kind {
		return runtime.ErrInvalidAccountData
	}
	return nil
}

// newLenFor is try_get_new_account_len_for_extension_len: the account
// size once extension t holds n bytes.
func newLenFor(s *tstate, t uint16, n int) (int, error) {
	_, used, err := s.types()
	if err != nil {
		return 0, err
	}
	cur := tlvOffset + used
	if v, err := s.ext(t, acctTypeMint); err == nil {
		cur -= tlvHeaderLen + len(v)
	}
	total := cur + tlvHeaderLen + n
	if total == 355 {
		total += 2
	}
	return total, nil
}

// reallocExt is realloc: the TLV entry of t becomes n bytes, moving the
// entries after it and zeroing what was freed or added.
func reallocExt(s *tstate, t uint16, n int) ([]byte, error) {
	off, err := s.find(t, false)
	if err != nil {
		return nil, err
	}
	_, used, err := s.types()
	if err != nil {
		return nil, err
	}
	old := int(binary.LittleEndian.Uint16(s.tlv[off+2:]))
	if old < n && used+n-old > len(s.tlv) {
		return nil, runtime.ErrInvalidAccountData
	}
	binary.LittleEndian.PutUint16(s.tlv[off+2:], uint16(n))
	start := off + tlvHeaderLen
	copy(s.tlv[start+n:], s.tlv[start+old:used])
	switch {
	case old > n:
		clear(s.tlv[used-(old-n) : used])
	case old < n:
		clear(s.tlv[start+old : start+n])
	}
	return s.tlv[start : start+n], nil
}

// allocVariable is alloc_and_serialize_variable_len_extension for the
// mint's TokenMetadata: the account is resized to fit value exactly.
func allocVariable(ref *runtime.AccountRef, t uint16, value []byte, overwrite bool) error {
	prev := len(ref.Data)
	s, err := unpackState(ref.Data, acctTypeMint)
	if err != nil {
		return err
	}
	newLen, err := newLenFor(s, t, len(value))
	if err != nil {
		return err
	}
	exists := s.has(t, acctTypeMint)
	if exists && !overwrite {
		return ErrExtensionAlreadyInitialized
	}
	write := func() error {
		s, err := unpackState(ref.Data, acctTypeMint)
		if err != nil {
			return err
		}
		var v []byte
		if exists {
			v, err = reallocExt(s, t, len(value))
		} else {
			v, err = s.alloc(t, acctTypeMint, len(value), false)
		}
		if err != nil {
			return err
		}
		copy(v, value)
		return nil
	}
	if prev < newLen {
		resize(ref, newLen)
		if !exists && prev <= tlvOffset-1 {
			if err := setAccountType(ref.Data, acctTypeMint); err != nil {
				return err
			}
		}
		return write()
	}
	if err := write(); err != nil {
		return err
	}
	resize(ref, newLen)
	return nil
}

// allocFixed is alloc_and_serialize for TokenGroup / TokenGroupMember.
func allocFixed(ref *runtime.AccountRef, t uint16, value []byte) error {
	prev := len(ref.Data)
	s, err := unpackState(ref.Data, acctTypeMint)
	if err != nil {
		return err
	}
	newLen, err := newLenFor(s, t, len(value))
	if err != nil {
		return err
	}
	if newLen > prev {
		resize(ref, newLen)
	}
	if prev <= tlvOffset-1 {
		if err := setAccountType(ref.Data, acctTypeMint); err != nil {
			return err
		}
	}
	s, err = unpackState(ref.Data, acctTypeMint)
	if err != nil {
		return err
	}
	v, err := s.alloc(t, acctTypeMint, len(value), false)
	if err != nil {
		return err
	}
	copy(v, value)
	return nil
}

func (p *t22) tokenMetadata(disc [8]byte, d []byte) error {
	r := &borshReader{b: d}
	switch disc {
	case discMetaInitialize:
		name, symbol, uri := r.str(), r.str(), r.str()
		if r.bad || len(r.b) != 0 {
			return ErrInvalidInstruction
		}
		p.log("TokenMetadataInstruction: Initialize")
		return p.metadataInitialize(name, symbol, uri)
	case discMetaUpdateField:
		kind := r.take(1)
		key := ""
		if kind != nil && kind[0] == 3 {
			key = r.str()
		}
		value := r.str()
		if r.bad || len(r.b) != 0 || kind[0] > 3 {
			return ErrInvalidInstruction
		}
		p.log("TokenMetadataInstruction: UpdateField")
		return p.metadataUpdate(func(m *TokenMetadata) error {
			switch kind[0] {
			case 0:
				m.Name = value
			case 1:
				m.Symbol = value
			case 2:
				m.URI = value
			default:
				for i := range m.Additional {
					if m.Additional[i][0] == key {
						m.Additional[i][1] = value
						return nil
					}
				}
				m.Additional = append(m.Additional, [2]string{key, value})
			}
			return nil
		})
	case discMetaRemoveKey:
		idem := r.take(1)
		key := r.str()
		if r.bad || len(r.b) != 0 || idem[0] > 1 {
			return ErrInvalidInstruction
		}
		p.log("TokenMetadataInstruction: RemoveKey")
		return p.metadataUpdate(func(m *TokenMetadata) error {
			for i := range m.Additional {
				if m.Additional[i][0] == key {
					m.Additional = append(m.Additional[:i], m.Additional[i+1:]...)
					return nil
				}
			}
			if idem[0] == 0 {
				return errMetaKeyNotFound
			}
			return nil
		})
	case discMetaUpdateAuthority:
		auth := r.take(32)
		if r.bad || len(r.b) != 0 {
			return ErrInvalidInstruction
		}
		p.log("TokenMetadataInstruction: UpdateAuthority")
		return p.metadataUpdate(func(m *TokenMetadata) error {
			copy(m.UpdateAuthority[:], auth)
			return nil
		})
	default: // Emit
		start, end := optU64(r), optU64(r)
		if r.bad || len(r.b) != 0 {
			return ErrInvalidInstruction
		}
		p.log("TokenMetadataInstruction: Emit")
		return p.metadataEmit(start, end)
	}
}

func optU64(r *borshReader) *uint64 {
	tag := r.take(1)
	if tag == nil || tag[0] > 1 {
		r.bad = true
		return nil
	}
	if tag[0] == 0 {
		return nil
	}
	b := r.take(8)
	if b == nil {
		return nil
	}
	v := binary.LittleEndian.Uint64(b)
	return &v
}

func (p *t22) metadataInitialize(name, symbol, uri string) error {
	accts, err := p.accounts(4)
	if err != nil {
		return err
	}
	meta, update, mint, mintAuth := accts[0], accts[1], accts[2], accts[3]
	if meta.Key != mint.Key {
		p.log("Metadata for a mint must be initialized in the mint itself.")
		return ErrMintMismatch
	}
	if err := p.own(mint); err != nil {
		return err
	}
	m, err := unpackState(mint.Data, acctTypeMint)
	if err != nil {
		return err
	}
	if !mintAuth.IsSigner {
		return runtime.ErrMissingRequiredSignature
	}
	if ma, ok := tOpt(m.base, mintAuthority); !ok || ma != mintAuth.Key {
		return errMetaIncorrectMintAuthority
	}
	if !m.has(extMetadataPointer, acctTypeMint) {
		p.log("A mint with metadata must have the metadata-pointer extension initialized")
		return ErrInvalidExtensionCombination
	}
	if update.Key.IsZero() {
		return runtime.ErrInvalidArgument
	}
	md := &TokenMetadata{UpdateAuthority: update.Key, Mint: mint.Key, Name: name, Symbol: symbol, URI: uri}
	return allocVariable(meta, extTokenMetadata, md.Encode(), false)
}

// metadataUpdate loads the metadata (accounts: metadata, update
// authority), checks the update authority, applies fn and stores it.
func (p *t22) metadataUpdate(fn func(m *TokenMetadata) error) error {
	accts, err := p.accounts(2)
	if err != nil {
		return err
	}
	meta, auth := accts[0], accts[1]
	if err := p.own(meta); err != nil {
		return err
	}
	s, err := unpackState(meta.Data, acctTypeMint)
	if err != nil {
		return err
	}
	v, err := s.ext(extTokenMetadata, acctTypeMint)
	if err != nil {
		return err
	}
	md, ok := DecodeTokenMetadata(v)
	if !ok {
		return runtime.ErrBorshIoError
	}
	if !auth.IsSigner {
		return runtime.ErrMissingRequiredSignature
	}
	if md.UpdateAuthority.IsZero() {
		return errMetaImmutable
	}
	if md.UpdateAuthority != auth.Key {
		return errMetaIncorrectUpdateAuthority
	}
	if err := fn(md); err != nil {
		return err
	}
	return allocVariable(meta, extTokenMetadata, md.Encode(), true)
}

func (p *t22) metadataEmit(start, end *uint64) error {
	meta, err := p.account(0)
	if err != nil {
		return err
	}
	if err := p.own(meta); err != nil {
		return err
	}
	s, err := unpackState(meta.Data, acctTypeMint)
	if err != nil {
		return err
	}
	v, err := s.ext(extTokenMetadata, acctTypeMint)
	if err != nil {
		return err
	}
	lo, hi := uint64(0), uint64(len(v))
	if start != nil {
		lo = *start
	}
	if end != nil {
		hi = *end
	}
	if lo <= hi && hi <= uint64(len(v)) {
		return p.ctx.SetReturnData(v[lo:hi])
	}
	return nil
}

func (p *t22) tokenGroup(disc [8]byte, d []byte) error {
	switch disc {
	case discGroupInitialize:
		if len(d) != 40 {
			return ErrInvalidInstruction
		}
		p.log("TokenGroupInstruction: InitializeGroup")
		return p.groupInitialize(d[:32], binary.LittleEndian.Uint64(d[32:]))
	case discGroupUpdateMaxSize:
		if len(d) != 8 {
			return ErrInvalidInstruction
		}
		p.log("TokenGroupInstruction: UpdateGroupMaxSize")
		return p.groupUpdate(func(g []byte) error {
			maxSize := binary.LittleEndian.Uint64(d)
			if u64At(g, 64) > maxSize {
				return errGroupSizeExceedsNewMaxSize
			}
			putU64(g, 72, maxSize)
			return nil
		})
	case discGroupUpdateAuth:
		if len(d) != 32 {
			return ErrInvalidInstruction
		}
		p.log("TokenGroupInstruction: UpdateGroupAuthority")
		return p.groupUpdate(func(g []byte) error {
			copy(g[:32], d)
			return nil
		})
	default:
		if len(d) != 0 {
			return ErrInvalidInstruction
		}
		p.log("TokenGroupInstruction: InitializeMember")
		return p.groupInitializeMember()
	}
}

// groupMintCheck is the mint-authority check of the group instructions.
func (p *t22) groupMintCheck(mint, mintAuth *runtime.AccountRef, pointer uint16, what string) error {
	if err := p.own(mint); err != nil {
		return err
	}
	m, err := unpackState(mint.Data, acctTypeMint)
	if err != nil {
		return err
	}
	if !mintAuth.IsSigner {
		return runtime.ErrMissingRequiredSignature
	}
	if ma, ok := tOpt(m.base, mintAuthority); !ok || ma != mintAuth.Key {
		return errGroupIncorrectMintAuthority
	}
	if !m.has(pointer, acctTypeMint) {
		p.log("A mint with " + what + " configurations must have the " + what + "-pointer extension initialized")
		return ErrInvalidExtensionCombination
	}
	return nil
}

func (p *t22) groupInitialize(updateAuthority []byte, maxSize uint64) error {
	accts, err := p.accounts(3)
	if err != nil {
		return err
	}
	group, mint, mintAuth := accts[0], accts[1], accts[2]
	if group.Key != mint.Key {
		p.log("Group configurations for a mint must be initialized in the mint itself.")
		return ErrMintMismatch
	}
	if err := p.groupMintCheck(mint, mintAuth, extGroupPointer, "group"); err != nil {
		return err
	}
	v := make([]byte, 80)
	copy(v, updateAuthority)
	putKey(v, 32, mint.Key)
	putU64(v, 72, maxSize)
	return allocFixed(group, extTokenGroup, v)
}

func checkGroupAuthority(auth *runtime.AccountRef, g []byte) error {
	if !auth.IsSigner {
		return runtime.ErrMissingRequiredSignature
	}
	ua, ok := nonZero(g[:32])
	if !ok {
		return errGroupImmutable
	}
	if ua != auth.Key {
		return errGroupIncorrectUpdateAuth
	}
	return nil
}

func (p *t22) groupUpdate(fn func(g []byte) error) error {
	accts, err := p.accounts(2)
	if err != nil {
		return err
	}
	group, auth := accts[0], accts[1]
	if err := p.own(group); err != nil {
		return err
	}
	s, err := unpackState(group.Data, acctTypeMint)
	if err != nil {
		return err
	}
	g, err := s.ext(extTokenGroup, acctTypeMint)
	if err != nil {
		return err
	}
	if err := checkGroupAuthority(auth, g); err != nil {
		return err
	}
	return fn(g)
}

func (p *t22) groupInitializeMember() error {
	accts, err := p.accounts(5)
	if err != nil {
		return err
	}
	member, memberMint, memberMintAuth, group, groupAuth := accts[0], accts[1], accts[2], accts[3], accts[4]
	if err := p.own(group); err != nil {
		return err
	}
	if member.Key != memberMint.Key {
		p.log("Group member configurations for a mint must be initialized in the mint itself.")
		return ErrMintMismatch
	}
	if err := p.groupMintCheck(memberMint, memberMintAuth, extGroupMemberPointer, "group member"); err != nil {
		return err
	}
	if member.Key == group.Key {
		return errGroupMemberIsGroup
	}
	s, err := unpackState(group.Data, acctTypeMint)
	if err != nil {
		return err
	}
	g, err := s.ext(extTokenGroup, acctTypeMint)
	if err != nil {
		return err
	}
	if err := checkGroupAuthority(groupAuth, g); err != nil {
		return err
	}
	size, maxSize := u64At(g, 64), u64At(g, 72)
	if size >= maxSize {
		return errGroupSizeExceedsMaxSize
	}
	size++
	putU64(g, 64, size)
	v := make([]byte, 72)
	putKey(v, 0, memberMint.Key)
	putKey(v, 32, group.Key)
	putU64(v, 64, size)
	return allocFixed(member, extTokenGroupMember, v)
}
