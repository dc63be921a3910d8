package rpcserver

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/gagliardetto/solana-go"
	"github.com/mr-tron/base58"

	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// DefaultMaxProgramAccounts is Options.MaxProgramAccounts' default. A
// getProgramAccounts answer of that many token accounts is about 40 MB of
// JSON in base64.
const DefaultMaxProgramAccounts = 100_000

// CodeScanError is Agave's -32012 ScanError.
const CodeScanError = -32012

// getProgramAccounts filter limits (Agave's rpc-client-api filter.rs and
// request.rs).
const (
	maxProgramAccountFilters = 4
	maxMemcmpBytes           = 128
	maxMemcmpBase58          = 175
	maxMemcmpBase64          = 172
)

// accountFilter is one getProgramAccounts filter, decoded and checked.
type accountFilter struct {
	dataSize          *uint64
	memcmp            *memcmpFilter
	tokenAccountState bool
}

type memcmpFilter struct {
	offset uint64
	bytes  []byte
}

// matches is Agave's filter_allows.
func (f *accountFilter) matches(data []byte) bool {
	switch {
	case f.dataSize != nil:
		return uint64(len(data)) == *f.dataSize
	case f.memcmp != nil:
		m := f.memcmp
		return m.offset <= uint64(len(data)) && uint64(len(data))-m.offset >= uint64(len(m.bytes)) &&
			bytes.Equal(data[m.offset:m.offset+uint64(len(m.bytes))], m.bytes)
	}
	return validTokenAccountData(data)
}

// validTokenAccountData is Token-2022's GenericTokenAccount check behind
// the tokenAccountState filter: an initialized 165-byte account, or a
// longer one whose account-type byte says Account.
func validTokenAccountData(d []byte) bool {
	if len(d) == spl.TokenAccountSize {
		return d[108] != byte(spl.StateUninitialized)
	}
	return len(d) > spl.TokenAccountSize && d[spl.TokenAccountSize] == spl.AccountTypeAccount
}

// decodeFilters decodes the filters' JSON shape (Agave's serde step: its
// errors are "Invalid params: ..."); verifyFilters then applies Agave's
// semantic checks.
func decodeFilters(raw []json.RawMessage) ([]rawFilter, error) {
	out := make([]rawFilter, len(raw))
	for i, r := range raw {
		f, err := decodeFilter(r)
		if err != nil {
			return nil, InvalidParams("%s", err)
		}
		out[i] = f
	}
	return out, nil
}

// rawFilter is a filter before its memcmp bytes are decoded.
type rawFilter struct {
	dataSize          *uint64
	memcmp            *rawMemcmp
	tokenAccountState bool
}

type rawMemcmp struct {
	offset   uint64
	encoding string // base58, base64 or bytes
	text     string
	bytes    []byte
}

const filterVariants = "expected one of `dataSize`, `memcmp`, `tokenAccountState`"

func decodeFilter(r json.RawMessage) (rawFilter, error) {
	r = bytes.TrimSpace(r)
	if len(r) > 0 && r[0] == '"' {
		var s string
		if err := json.Unmarshal(r, &s); err != nil {
			return rawFilter{}, errors.New(jsonErrorText(err))
		}
		if s != "tokenAccountState" {
			return rawFilter{}, fmt.Errorf("unknown variant `%s`, %s", s, filterVariants)
		}
		return rawFilter{tokenAccountState: true}, nil
	}
	var m map[string]json.RawMessage
	if len(r) == 0 || r[0] != '{' || json.Unmarshal(r, &m) != nil {
		return rawFilter{}, fmt.Errorf("invalid type: %s, expected enum RpcFilterType", jsonKind(r))
	}
	if len(m) != 1 {
		return rawFilter{}, errors.New("invalid type: map, expected a map with a single key")
	}
	for k, v := range m {
		switch k {
		case "dataSize":
			var n uint64
			if err := json.Unmarshal(v, &n); err != nil {
				return rawFilter{}, errors.New(jsonErrorText(err))
			}
			return rawFilter{dataSize: &n}, nil
		case "memcmp":
			mc, err := decodeMemcmp(v)
			return rawFilter{memcmp: mc}, err
		case "tokenAccountState":
			if !bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
				return rawFilter{}, fmt.Errorf("invalid type: %s, expected unit", jsonKind(bytes.TrimSpace(v)))
			}
			return rawFilter{tokenAccountState: true}, nil
		default:
			return rawFilter{}, fmt.Errorf("unknown variant `%s`, %s", k, filterVariants)
		}
	}
	panic("unreachable")
}

func decodeMemcmp(v json.RawMessage) (*rawMemcmp, error) {
	var m struct {
		Offset   *uint64         `json:"offset"`
		Bytes    json.RawMessage `json:"bytes"`
		Encoding *string         `json:"encoding"`
	}
	if t := bytes.TrimSpace(v); len(t) == 0 || t[0] != '{' {
		return nil, fmt.Errorf("invalid type: %s, expected struct Memcmp", jsonKind(t))
	}
	if err := json.Unmarshal(v, &m); err != nil {
		return nil, errors.New(jsonErrorText(err))
	}
	if m.Bytes == nil {
		return nil, errors.New("missing field `bytes`")
	}
	if m.Offset == nil {
		return nil, errors.New("missing field `offset`")
	}
	out := &rawMemcmp{offset: *m.Offset, encoding: "base58"}
	if m.Encoding != nil {
		switch e := *m.Encoding; e {
		case "base58", "base64", "bytes":
			out.encoding = e
		case "binary": // the deprecated name of base58
		default:
			return nil, fmt.Errorf("unknown variant `%s`, expected one of `base58`, `base64`, `bytes`", e)
		}
	}
	b := bytes.TrimSpace(m.Bytes)
	switch {
	case len(b) > 0 && b[0] == '"':
		if out.encoding == "bytes" {
			return nil, errors.New("invalid type: string, expected a sequence of bytes for encoding `bytes`")
		}
		if err := json.Unmarshal(b, &out.text); err != nil {
			return nil, errors.New(jsonErrorText(err))
		}
	case len(b) > 0 && b[0] == '[':
		if err := json.Unmarshal(b, &out.bytes); err != nil {
			return nil, errors.New("data did not match any variant of untagged enum DataType")
		}
		if out.bytes == nil {
			out.bytes = []byte{}
		}
		out.encoding = "bytes"
	default:
		return nil, errors.New("data did not match any variant of untagged enum DataType")
	}
	return out, nil
}

// verifyFilters is Agave's verify_filters: at most four filters, memcmp
// data decodable and at most 128 bytes, with Agave's messages.
func verifyFilters(raw []rawFilter) ([]accountFilter, error) {
	if len(raw) > maxProgramAccountFilters {
		return nil, InvalidParam("Too many filters provided; max %d", maxProgramAccountFilters)
	}
	out := make([]accountFilter, len(raw))
	for i, r := range raw {
		out[i] = accountFilter{dataSize: r.dataSize, tokenAccountState: r.tokenAccountState}
		if r.memcmp == nil {
			continue
		}
		b, err := memcmpBytes(r.memcmp)
		if err != nil {
			return nil, InvalidParam("Invalid param: %s", err)
		}
		out[i].memcmp = &memcmpFilter{offset: r.memcmp.offset, bytes: b}
	}
	return out, nil
}

// errDataTooLarge is RpcFilterError::DataTooLarge as Agave prints it.
var errDataTooLarge = errors.New("DataTooLarge")

func memcmpBytes(m *rawMemcmp) ([]byte, error) {
	switch m.encoding {
	case "base58":
		if len(m.text) > maxMemcmpBase58 {
			return nil, errDataTooLarge
		}
		if err := base58Error(m.text); err != nil {
			return nil, err
		}
		b, err := base58.Decode(m.text)
		if err != nil {
			return nil, fmt.Errorf("Base58DecodeError(%v)", err)
		}
		if len(b) > maxMemcmpBytes {
			return nil, errDataTooLarge
		}
		return b, nil
	case "base64":
		if len(m.text) > maxMemcmpBase64 {
			return nil, errDataTooLarge
		}
		b, err := base64.StdEncoding.Strict().DecodeString(m.text)
		if err != nil {
			return nil, fmt.Errorf("Base64DecodeError(%s)", base64Error(m.text, err))
		}
		if len(b) > maxMemcmpBytes {
			return nil, errDataTooLarge
		}
		return b, nil
	}
	if len(m.bytes) > maxMemcmpBytes {
		return nil, errDataTooLarge
	}
	return m.bytes, nil
}

const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// base58Error is the bs58 crate's decode error for s, as Rust's Debug
// prints it, or nil if s is valid base58.
func base58Error(s string) error {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 0x80:
			return fmt.Errorf("Base58DecodeError(NonAsciiCharacter { index: %d })", i)
		case strings.IndexByte(base58Alphabet, c) < 0:
			return fmt.Errorf("Base58DecodeError(InvalidCharacter { character: %s, index: %d })", rustChar(c), i)
		}
	}
	return nil
}

// rustChar is Rust's Debug form of an ASCII char.
func rustChar(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '\\':
		return `'\\'`
	case '\n':
		return `'\n'`
	case '\r':
		return `'\r'`
	case '\t':
		return `'\t'`
	case 0:
		return `'\0'`
	}
	if c < 0x20 || c == 0x7f {
		return fmt.Sprintf(`'\u{%x}'`, c)
	}
	return "'" + string(rune(c)) + "'"
}

// base64Error renders a standard-base64 decode failure the way the Rust
// base64 crate's DecodeError prints (InvalidByte, InvalidLength,
// InvalidLastSymbol, InvalidPadding).
func base64Error(s string, err error) string {
	var ce base64.CorruptInputError
	off := len(s)
	if errors.As(err, &ce) {
		off = int(ce)
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := 0; i < len(s); i++ {
		if c := s[i]; strings.IndexByte(alphabet, c) < 0 && c != '=' {
			return fmt.Sprintf("InvalidByte(%d, %d)", i, c)
		}
	}
	if pad := strings.IndexByte(s, '='); pad >= 0 && strings.TrimRight(s[pad:], "=") != "" {
		return fmt.Sprintf("InvalidByte(%d, %d)", pad, '=')
	}
	data := strings.TrimRight(s, "=")
	switch {
	case len(data)%4 == 1:
		return fmt.Sprintf("InvalidLength(%d)", len(data))
	case len(s)%4 != 0 || len(s)-len(data) > 2:
		return "InvalidPadding"
	case off < len(s):
		return fmt.Sprintf("InvalidLastSymbol(%d, %d)", min(off, len(data)-1), data[min(off, len(data)-1)])
	}
	return "InvalidPadding"
}

// tokenIndexHint is Agave's get_spl_token_owner_filter and
// get_spl_token_mint_filter: when the filters only accept initialized
// token accounts of one owner (or mint), the token indexes give the
// candidates. A zero key is left to the program index: uninitialized
// accounts have zero bytes there and the token indexes hold only
// initialized accounts.
func tokenIndexHint(program solana.PublicKey, filters []accountFilter) (owner, mint *solana.PublicKey) {
	if !spl.IsTokenProgram(program) {
		return nil, nil
	}
	tokenOnly := false
	var o, m *solana.PublicKey
	for _, f := range filters {
		switch {
		case f.tokenAccountState:
			tokenOnly = true
		case f.dataSize != nil:
			tokenOnly = tokenOnly || *f.dataSize == spl.TokenAccountSize
		case f.memcmp.offset == spl.TokenAccountSize && program == spl.Token2022ProgramID:
			tokenOnly = tokenOnly || bytes.Equal(f.memcmp.bytes, []byte{spl.AccountTypeAccount})
		case len(f.memcmp.bytes) == 32 && (f.memcmp.offset == 0 || f.memcmp.offset == 32):
			k := solana.PublicKeyFromBytes(f.memcmp.bytes)
			if k.IsZero() {
				continue
			}
			if f.memcmp.offset == 32 {
				o = &k
			} else {
				m = &k
			}
		}
	}
	if !tokenOnly {
		return nil, nil
	}
	if o != nil {
		return o, nil
	}
	return nil, m
}

func (h *Handler) getProgramAccounts(ctx context.Context, p Params) (any, error) {
	if err := p.Count(1, 2); err != nil {
		return nil, err
	}
	var cfg struct {
		accountConfig
		Filters     []json.RawMessage `json:"filters"`
		WithContext bool              `json:"withContext"`
		SortResults *bool             `json:"sortResults"`
	}
	if err := p.Config(1, &cfg); err != nil {
		return nil, err
	}
	raw, err := decodeFilters(cfg.Filters)
	if err != nil {
		return nil, err
	}
	program, err := p.Pubkey(0)
	if err != nil {
		return nil, err
	}
	filters, err := verifyFilters(raw)
	if err != nil {
		return nil, err
	}
	c, err := cfg.level()
	if err != nil {
		return nil, err
	}
	enc, err := cfg.encoding()
	if err != nil {
		return nil, err
	}
	if err := h.minContext(c, cfg.MinContextSlot); err != nil {
		return nil, err
	}
	q := ledger.ProgramQuery{
		Limit:    h.opts.MaxProgramAccounts,
		Unsorted: cfg.SortResults != nil && !*cfg.SortResults,
		Keep: func(_ solana.PublicKey, a *ledger.Account) bool {
			for i := range filters {
				if !filters[i].matches(a.Data) {
					return false
				}
			}
			return true
		},
	}
	q.TokenOwner, q.TokenMint = tokenIndexHint(program, filters)
	accts, slot, err := h.l.ProgramAccounts(program, c, q)
	if err != nil {
		return nil, h.scanError(err)
	}
	out, err := h.keyedAccounts(ctx, accts, enc, cfg.DataSlice, c)
	if err != nil {
		return nil, err
	}
	if cfg.WithContext {
		return h.wrap(slot, out), nil
	}
	return out, nil
}

// scanError reports a query over MaxProgramAccounts as Agave reports a
// scan over its accounts-index scan limit.
func (h *Handler) scanError(err error) error {
	var tooMany *ledger.TooManyAccountsError
	if errors.As(err, &tooMany) {
		return &Error{Code: CodeScanError, Message: "scan aborted: The accumulated scan results exceeded the limit",
			Data: map[string]any{"maxProgramAccounts": tooMany.Limit}}
	}
	return err
}

// keyedAccounts encodes query results; the whole answer fails on the
// first account that cannot be encoded (base58 over 128 bytes), as in
// Agave.
func (h *Handler) keyedAccounts(ctx context.Context, accts []ledger.KeyedAccount, enc string, slice *dataSlice, c ledger.Commitment) ([]uiKeyedAccount, error) {
	// A scan lists only what the caller may read (a rollup that filters
	// reads leaves private accounts out) and is charged against the
	// request's response budget before anything is encoded.
	accts = h.VisibleAccounts(ctx, accts)
	out := make([]uiKeyedAccount, len(accts))
	mints := h.mintReader(c)
	for i, a := range accts {
		if err := chargeAccount(ctx, a.Account, enc, slice); err != nil {
			return nil, err
		}
		ui, err := encodeAccount(a.Account, enc, slice, mints)
		if err != nil {
			return nil, err
		}
		out[i] = uiKeyedAccount{Pubkey: a.Key, Account: ui}
	}
	return out, nil
}

// tokenFilterParam is getTokenAccountsBy*'s second parameter, decoded but
// not yet checked against the bank.
type tokenFilterParam struct {
	mint, program *solana.PublicKey
}

func decodeTokenFilter(p Params, i int) (tokenFilterParam, error) {
	var filter struct {
		Mint      *string `json:"mint"`
		ProgramID *string `json:"programId"`
	}
	if err := p.Decode(i, &filter); err != nil || (filter.Mint == nil) == (filter.ProgramID == nil) {
		return tokenFilterParam{}, InvalidParams("data did not match any variant of untagged enum RpcTokenAccountsFilter")
	}
	var f tokenFilterParam
	var err error
	if filter.Mint != nil {
		var k solana.PublicKey
		k, err = ParsePubkey(*filter.Mint)
		f.mint = &k
	} else {
		var k solana.PublicKey
		k, err = ParsePubkey(*filter.ProgramID)
		f.program = &k
	}
	return f, err
}

// resolve is Agave's get_token_program_id_and_mint: a mint must exist at
// the commitment and be a token mint; a program must be a token program.
func (h *Handler) resolveTokenFilter(f tokenFilterParam, c ledger.Commitment) (ledger.TokenFilter, error) {
	if f.program != nil {
		if !spl.IsTokenProgram(*f.program) {
			return ledger.TokenFilter{}, InvalidParam("Invalid param: unrecognized Token program id")
		}
		return ledger.TokenFilter{ProgramID: f.program}, nil
	}
	if *f.mint == spl.NativeMintID {
		return ledger.TokenFilter{Mint: f.mint}, nil // Agave answers for it without reading it
	}
	a, _ := h.l.Account(*f.mint, c)
	if a == nil {
		return ledger.TokenFilter{}, InvalidParam("Invalid param: could not find mint")
	}
	if _, err := spl.DecodeMint(a.Data); err != nil {
		return ledger.TokenFilter{}, InvalidParam("Invalid param: mint could not be unpacked")
	}
	if !spl.IsTokenProgram(a.Owner) {
		return ledger.TokenFilter{}, InvalidParam("Invalid param: not a Token mint")
	}
	owner := a.Owner
	return ledger.TokenFilter{Mint: f.mint, ProgramID: &owner}, nil
}

// tokenAccountsBy is getTokenAccountsByOwner and getTokenAccountsByDelegate.
func (h *Handler) tokenAccountsBy(ctx context.Context, p Params, query func(solana.PublicKey, ledger.TokenFilter, ledger.Commitment) ([]ledger.KeyedAccount, uint64)) (any, error) {
	if err := p.Count(2, 3); err != nil {
		return nil, err
	}
	key, err := p.Pubkey(0)
	if err != nil {
		return nil, err
	}
	tf, err := decodeTokenFilter(p, 1)
	if err != nil {
		return nil, err
	}
	cfg, c, enc, err := h.accountArgs(p, 2)
	if err != nil {
		return nil, err
	}
	f, err := h.resolveTokenFilter(tf, c)
	if err != nil {
		return nil, err
	}
	accts, slot := query(key, f, c)
	if limit := h.opts.MaxProgramAccounts; limit > 0 && len(accts) > limit {
		return nil, h.scanError(&ledger.TooManyAccountsError{Limit: limit})
	}
	out, err := h.keyedAccounts(ctx, accts, enc, cfg.DataSlice, c)
	if err != nil {
		return nil, err
	}
	return h.wrap(slot, out), nil
}

func (h *Handler) getTokenAccountsByOwner(ctx context.Context, p Params) (any, error) {
	return h.tokenAccountsBy(ctx, p, h.l.TokenAccountsByOwner)
}

func (h *Handler) getTokenAccountsByDelegate(ctx context.Context, p Params) (any, error) {
	return h.tokenAccountsBy(ctx, p, h.l.TokenAccountsByDelegate)
}
