// Package router implements the MagicBlock router: a JSON-RPC service that
// lists the ephemeral-rollup (ER) nodes (getRoutes), names the closest one
// (getIdentity), says whether an account is delegated and to which node
// (getDelegationStatus), and hands out a blockhash from the chain a set of
// accounts lives on (getBlockhashForAccounts). See chain-rpc.md §9.
//
// Handler serves any Backend over HTTP. Registry is the standard Backend; it
// runs in two modes:
//
//   - local (NewLocal): one node, ferry's embedded ER, with delegation state
//     read straight from the embedded base ledger;
//   - gateway (NewGateway): a configured list of real ER nodes (e.g. for
//     "ferry serve --cluster devnet"), with delegation state read from a
//     base-layer RPC.
//
// Registry reaches chains only through two small interfaces, AccountReader
// and BlockhashSource, so an in-process ledger plugs in without an RPC hop.
package router

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/chainclient"
)

// DelegationProgram is the address of MagicBlock's delegation program
// (DLP). A delegated account is owned by it on the base layer.
const DelegationProgram = "DELeGGvXpWV2fqJUhqcF5ZSYMS4JTLjteaAMARRSaeSh"

// DelegationProgramID returns DelegationProgram as a key.
func DelegationProgramID() solana.PublicKey { return solana.MustPublicKeyFromBase58(DelegationProgram) }

// Delegation record layout (espl-program.md §3.2).
const (
	DelegationRecordDiscriminator = 100
	DelegationRecordSize          = 96
)

// Local-mode defaults.
const (
	// DefaultLocalCountryCode is the countryCode of the embedded ER node.
	// XLC lies in ISO 3166-1's user-assigned alpha-3 range (XAA–XZZ), so it
	// can never name a real country, and reads as "local".
	DefaultLocalCountryCode = "XLC"
	// DefaultLocalBlockTimeMs is the embedded ER's slot time.
	DefaultLocalBlockTimeMs = 50
)

// Account is the part of an account's state the router reads.
type Account struct {
	Lamports uint64
	Owner    solana.PublicKey
	Data     []byte
}

// AccountReader reads base-layer accounts. GetAccount returns nil, nil for
// an account that does not exist.
type AccountReader interface {
	GetAccount(ctx context.Context, key solana.PublicKey) (*Account, error)
}

// MultiAccountReader is an AccountReader that can also read many accounts
// at once; Registry uses it when available to save round trips. The result
// is aligned with keys, nil for missing accounts.
type MultiAccountReader interface {
	AccountReader
	GetAccounts(ctx context.Context, keys []solana.PublicKey) ([]*Account, error)
}

// AccountReaderFunc adapts a function to AccountReader.
type AccountReaderFunc func(ctx context.Context, key solana.PublicKey) (*Account, error)

// GetAccount calls f.
func (f AccountReaderFunc) GetAccount(ctx context.Context, key solana.PublicKey) (*Account, error) {
	return f(ctx, key)
}

// BlockhashSource yields a chain's latest blockhash.
type BlockhashSource interface {
	LatestBlockhash(ctx context.Context) (chainclient.Blockhash, error)
}

// BlockhashSourceFunc adapts a function to BlockhashSource.
type BlockhashSourceFunc func(ctx context.Context) (chainclient.Blockhash, error)

// LatestBlockhash calls f.
func (f BlockhashSourceFunc) LatestBlockhash(ctx context.Context) (chainclient.Blockhash, error) {
	return f(ctx)
}

// Backend is what Handler serves.
type Backend interface {
	// Routes lists the ER nodes.
	Routes(ctx context.Context) ([]chainclient.Route, error)
	// Identity names the closest ER node.
	Identity(ctx context.Context) (chainclient.Identity, error)
	// DelegationStatus reports whether key is delegated, and where.
	DelegationStatus(ctx context.Context, key solana.PublicKey) (chainclient.DelegationStatus, error)
	// BlockhashForAccounts returns a blockhash from the ER the accounts are
	// delegated to, or from the base layer if none is.
	BlockhashForAccounts(ctx context.Context, keys []solana.PublicKey) (chainclient.Blockhash, error)
}

// ErrConflictingDelegations is returned by BlockhashForAccounts when the
// accounts are delegated to different ER nodes. Its text is the MagicBlock
// router's.
var ErrConflictingDelegations = errors.New("transaction contains accounts that were delegated to different ER nodes")

// UnknownNodeError reports an account delegated to a validator the router
// has no route for.
type UnknownNodeError struct{ Identity solana.PublicKey }

func (e *UnknownNodeError) Error() string {
	return "account has been delegated to unknown ER node: " + e.Identity.String()
}

// MissingRecordError reports an account owned by the delegation program
// whose delegation record is missing or malformed, so the node it is
// delegated to cannot be known.
type MissingRecordError struct{ Account solana.PublicKey }

func (e *MissingRecordError) Error() string {
	return "account " + e.Account.String() + " is delegated but has no valid delegation record"
}

// Node is one ER node of a Registry.
type Node struct {
	chainclient.Route
	// Blockhash is where the node's blockhashes come from.
	Blockhash BlockhashSource
}

// Config configures a Registry.
type Config struct {
	// Nodes in order of preference: Nodes[0] is the "closest" node that
	// getIdentity names.
	Nodes []Node
	// Base reads base-layer accounts (delegated accounts and their
	// delegation records).
	Base AccountReader
	// BaseBlockhash is the base layer's blockhash, for accounts that are
	// not delegated.
	BaseBlockhash BlockhashSource
}

// Registry is the standard Backend: a fixed set of ER nodes plus
// delegation state read from the base layer. It is safe for concurrent
// use and keeps no state of its own beyond its configuration.
type Registry struct {
	nodes  []Node
	byID   map[solana.PublicKey]int
	base   AccountReader
	baseBH BlockhashSource
	dlp    solana.PublicKey
}

// New checks cfg and returns a Registry.
func New(cfg Config) (*Registry, error) {
	if cfg.Base == nil || cfg.BaseBlockhash == nil {
		return nil, errors.New("create router: base account reader and blockhash source are required")
	}
	r := &Registry{base: cfg.Base, baseBH: cfg.BaseBlockhash, byID: map[solana.PublicKey]int{}, dlp: DelegationProgramID()}
	for i, n := range cfg.Nodes {
		if n.Identity.IsZero() {
			return nil, fmt.Errorf("create router: node %d has no identity", i)
		}
		if _, dup := r.byID[n.Identity]; dup {
			return nil, fmt.Errorf("create router: node %s listed twice", n.Identity)
		}
		if n.Blockhash == nil {
			return nil, fmt.Errorf("create router: node %s has no blockhash source", n.Identity)
		}
		fqdn, err := chainclient.NormalizeFQDN(n.FQDN)
		if err != nil {
			return nil, fmt.Errorf("create router: node %s: %w", n.Identity, err)
		}
		n.FQDN = fqdn
		r.byID[n.Identity] = len(r.nodes)
		r.nodes = append(r.nodes, n)
	}
	return r, nil
}

// LocalConfig configures a single-node Registry for ferry's embedded ER.
type LocalConfig struct {
	// Identity is the ER validator's identity (its keypair's public key).
	Identity solana.PublicKey
	// URL is the ER's RPC URL, reported as fqdn.
	URL string
	// CountryCode defaults to DefaultLocalCountryCode.
	CountryCode string
	// BlockTimeMs defaults to DefaultLocalBlockTimeMs. The base fee is 0.
	BlockTimeMs uint16
	// Blockhash is the ER's blockhash source.
	Blockhash BlockhashSource
	// Base and BaseBlockhash read the embedded base ledger.
	Base          AccountReader
	BaseBlockhash BlockhashSource
}

// NewLocal returns a Registry with the embedded ER as its only node.
func NewLocal(cfg LocalConfig) (*Registry, error) {
	if cfg.CountryCode == "" {
		cfg.CountryCode = DefaultLocalCountryCode
	}
	if cfg.BlockTimeMs == 0 {
		cfg.BlockTimeMs = DefaultLocalBlockTimeMs
	}
	return New(Config{
		Nodes: []Node{{
			Route:     chainclient.Route{Identity: cfg.Identity, FQDN: cfg.URL, BlockTimeMs: cfg.BlockTimeMs, CountryCode: cfg.CountryCode},
			Blockhash: cfg.Blockhash,
		}},
		Base: cfg.Base, BaseBlockhash: cfg.BaseBlockhash,
	})
}

// GatewayConfig configures a Registry in front of real ER nodes.
type GatewayConfig struct {
	// Routes are the ER nodes, closest first (see DevnetRoutes and
	// MainnetRoutes). Each node's blockhash is fetched from its fqdn.
	Routes []chainclient.Route
	// Base is the base-layer RPC.
	Base *chainclient.Client
	// Commitment for reads and blockhashes; default confirmed, as the
	// MagicBlock router uses.
	Commitment chainclient.Commitment
	// Cache configures the per-node blockhash caches (chainclient.Cached).
	Cache chainclient.CacheOptions
	// ClientOptions configure the clients for the node URLs.
	ClientOptions []chainclient.Option
}

// NewGateway returns a Registry that routes to real ER nodes and reads
// delegation state from a base RPC. Blockhashes are cached briefly (see
// chainclient.CacheOptions) so bursts share requests.
func NewGateway(cfg GatewayConfig) (*Registry, error) {
	if cfg.Base == nil {
		return nil, errors.New("create router: a base RPC client is required")
	}
	if cfg.Commitment == "" {
		cfg.Commitment = chainclient.Confirmed
	}
	nodes := make([]Node, 0, len(cfg.Routes))
	for _, rt := range cfg.Routes {
		fqdn, err := chainclient.NormalizeFQDN(rt.FQDN)
		if err != nil {
			return nil, fmt.Errorf("create router: node %s: %w", rt.Identity, err)
		}
		c, err := chainclient.New(fqdn, cfg.ClientOptions...)
		if err != nil {
			return nil, fmt.Errorf("create router: node %s: %w", rt.Identity, err)
		}
		rt.FQDN = fqdn
		nodes = append(nodes, Node{Route: rt, Blockhash: RPCBlockhash{Client: chainclient.NewCached(c, cfg.Cache), Commitment: cfg.Commitment}})
	}
	return New(Config{
		Nodes:         nodes,
		Base:          RPCAccounts{Client: cfg.Base, Commitment: cfg.Commitment},
		BaseBlockhash: RPCBlockhash{Client: chainclient.NewCached(cfg.Base, cfg.Cache), Commitment: cfg.Commitment},
	})
}

// DevnetRoutes returns MagicBlock's public devnet ER nodes (chain-rpc.md
// §9.1), Asia first. The TEE node is left out: it needs a token.
func DevnetRoutes() []chainclient.Route { return publicRoutes("devnet-") }

// MainnetRoutes returns MagicBlock's public mainnet ER nodes, Asia first.
func MainnetRoutes() []chainclient.Route { return publicRoutes("") }

func publicRoutes(prefix string) []chainclient.Route {
	mk := func(id, region, country string) chainclient.Route {
		return chainclient.Route{Identity: solana.MustPublicKeyFromBase58(id), FQDN: "https://" + prefix + region + ".magicblock.app",
			BaseFee: 0, BlockTimeMs: 50, CountryCode: country}
	}
	return []chainclient.Route{
		mk("MAS1Dt9qreoRMQ14YQuhg8UTZMMzDdKhmkZMECCzk57", "as", "SGP"),
		mk("MEUGGrYPxKk17hCr7wpT6s8dtNokZj5U2L57vjYMS8e", "eu", "DEU"),
		mk("MUS3hc9TCw4cGC12vHNoYcCGzJG1txjgQLZWVoeNHNd", "us", "USA"),
	}
}

// Routes lists the nodes in configuration order.
func (r *Registry) Routes(ctx context.Context) ([]chainclient.Route, error) {
	out := make([]chainclient.Route, len(r.nodes))
	for i, n := range r.nodes {
		out[i] = n.Route
	}
	return out, nil
}

// Identity names the first node.
func (r *Registry) Identity(ctx context.Context) (chainclient.Identity, error) {
	if len(r.nodes) == 0 {
		return chainclient.Identity{}, errors.New("no ER nodes are configured")
	}
	return chainclient.Identity{Identity: r.nodes[0].Identity, FQDN: r.nodes[0].FQDN}, nil
}

// NodeFor returns the node with identity id.
func (r *Registry) NodeFor(id solana.PublicKey) (Node, bool) {
	i, ok := r.byID[id]
	if !ok {
		return Node{}, false
	}
	return r.nodes[i], true
}

// delegation is one account's delegation state.
type delegation struct {
	delegated bool
	record    *chainclient.DelegationRecord // nil if missing or malformed
}

// DelegationStatus reports whether key is delegated: owned by the
// delegation program on the base layer. For a delegated account it adds the
// delegation record and, when the record's validator is a known node, that
// node's fqdn. (The MagicBlock router answers an error for a validator it
// does not know; ferry still returns the record so callers can see where
// the account went.)
func (r *Registry) DelegationStatus(ctx context.Context, key solana.PublicKey) (chainclient.DelegationStatus, error) {
	ds, err := r.delegations(ctx, []solana.PublicKey{key})
	if err != nil {
		return chainclient.DelegationStatus{}, err
	}
	d := ds[0]
	st := chainclient.DelegationStatus{IsDelegated: d.delegated, DelegationRecord: d.record}
	if d.record != nil {
		if n, ok := r.NodeFor(d.record.Authority); ok {
			st.FQDN = n.FQDN
		}
	}
	return st, nil
}

// BlockhashForAccounts returns the latest blockhash of the single ER node
// the delegated accounts among keys belong to, or the base layer's when
// none is delegated. Accounts delegated to different nodes give
// ErrConflictingDelegations; a node without a route gives *UnknownNodeError.
func (r *Registry) BlockhashForAccounts(ctx context.Context, keys []solana.PublicKey) (chainclient.Blockhash, error) {
	keys = dedupe(keys)
	ds, err := r.delegations(ctx, keys)
	if err != nil {
		return chainclient.Blockhash{}, err
	}
	var authority solana.PublicKey
	found := false
	for i, d := range ds {
		if !d.delegated {
			continue
		}
		if d.record == nil {
			return chainclient.Blockhash{}, &MissingRecordError{Account: keys[i]}
		}
		if found && d.record.Authority != authority {
			return chainclient.Blockhash{}, ErrConflictingDelegations
		}
		authority, found = d.record.Authority, true
	}
	if !found {
		bh, err := r.baseBH.LatestBlockhash(ctx)
		if err != nil {
			return chainclient.Blockhash{}, fmt.Errorf("get base-layer blockhash: %w", err)
		}
		return bh, nil
	}
	n, ok := r.NodeFor(authority)
	if !ok {
		return chainclient.Blockhash{}, &UnknownNodeError{Identity: authority}
	}
	bh, err := n.Blockhash.LatestBlockhash(ctx)
	if err != nil {
		return chainclient.Blockhash{}, fmt.Errorf("get blockhash of ER node %s: %w", n.Identity, err)
	}
	return bh, nil
}

// delegations reads the delegation state of keys: each account and its
// delegation record, in one batch when the reader supports it.
func (r *Registry) delegations(ctx context.Context, keys []solana.PublicKey) ([]delegation, error) {
	all := make([]solana.PublicKey, 0, 2*len(keys))
	all = append(all, keys...)
	for _, k := range keys {
		pda, err := DelegationRecordAddress(k)
		if err != nil {
			return nil, err
		}
		all = append(all, pda)
	}
	accts, err := r.read(ctx, all)
	if err != nil {
		return nil, fmt.Errorf("read delegation state of %s: %w", describeKeys(keys), err)
	}
	out := make([]delegation, len(keys))
	for i := range keys {
		acct, rec := accts[i], accts[len(keys)+i]
		if acct == nil || acct.Owner != r.dlp {
			continue
		}
		out[i].delegated = true
		if rec != nil && rec.Owner == r.dlp && rec.Lamports > 0 {
			if dr, err := ParseDelegationRecord(rec.Data); err == nil {
				out[i].record = &dr
			}
		}
	}
	return out, nil
}

func (r *Registry) read(ctx context.Context, keys []solana.PublicKey) ([]*Account, error) {
	if m, ok := r.base.(MultiAccountReader); ok {
		accts, err := m.GetAccounts(ctx, keys)
		if err == nil && len(accts) != len(keys) {
			err = fmt.Errorf("asked for %d accounts, got %d", len(keys), len(accts))
		}
		return accts, err
	}
	out := make([]*Account, len(keys))
	for i, k := range keys {
		a, err := r.base.GetAccount(ctx, k)
		if err != nil {
			return nil, err
		}
		out[i] = a
	}
	return out, nil
}

func describeKeys(keys []solana.PublicKey) string {
	switch len(keys) {
	case 0:
		return "no accounts"
	case 1:
		return keys[0].String()
	}
	return fmt.Sprintf("%d accounts", len(keys))
}

func dedupe(keys []solana.PublicKey) []solana.PublicKey {
	seen := make(map[solana.PublicKey]bool, len(keys))
	out := keys[:0:0]
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// DelegationRecordAddress returns the delegation record PDA of account:
// seeds ["delegation", account] under the delegation program.
func DelegationRecordAddress(account solana.PublicKey) (solana.PublicKey, error) {
	pda, _, err := solana.FindProgramAddress([][]byte{[]byte("delegation"), account[:]}, DelegationProgramID())
	if err != nil {
		return solana.PublicKey{}, fmt.Errorf("derive delegation record of %s: %w", account, err)
	}
	return pda, nil
}

// ParseDelegationRecord decodes a delegation record (espl-program.md §3.2):
// u64 discriminator 100, authority[32], owner[32], delegation_slot u64,
// lamports u64, commit_frequency_ms u64.
func ParseDelegationRecord(data []byte) (chainclient.DelegationRecord, error) {
	if len(data) < DelegationRecordSize {
		return chainclient.DelegationRecord{}, fmt.Errorf("parse delegation record: %d bytes, want %d", len(data), DelegationRecordSize)
	}
	if d := binary.LittleEndian.Uint64(data[0:8]); d != DelegationRecordDiscriminator {
		return chainclient.DelegationRecord{}, fmt.Errorf("parse delegation record: discriminator %d, want %d", d, DelegationRecordDiscriminator)
	}
	var rec chainclient.DelegationRecord
	copy(rec.Authority[:], data[8:40])
	copy(rec.Owner[:], data[40:72])
	rec.DelegationSlot = binary.LittleEndian.Uint64(data[72:80])
	rec.Lamports = binary.LittleEndian.Uint64(data[80:88])
	return rec, nil
}

// EncodeDelegationRecord is the inverse of ParseDelegationRecord.
func EncodeDelegationRecord(rec chainclient.DelegationRecord, commitFrequencyMs uint64) []byte {
	b := make([]byte, DelegationRecordSize)
	binary.LittleEndian.PutUint64(b[0:8], DelegationRecordDiscriminator)
	copy(b[8:40], rec.Authority[:])
	copy(b[40:72], rec.Owner[:])
	binary.LittleEndian.PutUint64(b[72:80], rec.DelegationSlot)
	binary.LittleEndian.PutUint64(b[80:88], rec.Lamports)
	binary.LittleEndian.PutUint64(b[88:96], commitFrequencyMs)
	return b
}

// RPCAccounts is an AccountReader (and MultiAccountReader) over a
// base-layer RPC.
type RPCAccounts struct {
	Client     *chainclient.Client
	Commitment chainclient.Commitment
}

// GetAccount reads one account with getAccountInfo.
func (a RPCAccounts) GetAccount(ctx context.Context, key solana.PublicKey) (*Account, error) {
	acct, err := a.Client.GetAccountInfo(ctx, key, a.Commitment)
	if err != nil || acct == nil {
		return nil, err
	}
	return &Account{Lamports: acct.Lamports, Owner: acct.Owner, Data: acct.Data}, nil
}

// GetAccounts reads accounts with getMultipleAccounts.
func (a RPCAccounts) GetAccounts(ctx context.Context, keys []solana.PublicKey) ([]*Account, error) {
	accts, err := a.Client.GetMultipleAccounts(ctx, keys, a.Commitment)
	if err != nil {
		return nil, err
	}
	out := make([]*Account, len(accts))
	for i, acct := range accts {
		if acct != nil {
			out[i] = &Account{Lamports: acct.Lamports, Owner: acct.Owner, Data: acct.Data}
		}
	}
	return out, nil
}

// RPCBlockhash is a BlockhashSource over RPC; Client is typically a
// *chainclient.Client or a *chainclient.Cached.
type RPCBlockhash struct {
	Client interface {
		GetLatestBlockhash(ctx context.Context, commitment chainclient.Commitment) (chainclient.Blockhash, error)
	}
	Commitment chainclient.Commitment
}

// LatestBlockhash calls getLatestBlockhash.
func (b RPCBlockhash) LatestBlockhash(ctx context.Context) (chainclient.Blockhash, error) {
	return b.Client.GetLatestBlockhash(ctx, b.Commitment)
}
