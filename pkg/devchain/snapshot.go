package devchain

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/gagliardetto/solana-go"
	"github.com/mr-tron/base58"

	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
)

// MaxSnapshotAccounts bounds one export or import: a node with more
// accounts is exported by naming them (ExportRequest.Accounts).
const MaxSnapshotAccounts = 10_000

// AccountSnapshot is surfpool's AccountSnapshot, one account of a
// snapshot (the format of surfnet_exportSnapshot and surfpool's
// --snapshot file).
type AccountSnapshot struct {
	Lamports   uint64 `json:"lamports"`
	Owner      string `json:"owner"`
	Executable bool   `json:"executable"`
	RentEpoch  Epoch  `json:"rentEpoch"`
	// Data is the account data in base64.
	Data string `json:"data"`
	// ParsedData is the account as jsonParsed shows it ({"program",
	// "parsed", "space"}), when asked for and parseable; ignored on import.
	ParsedData json.RawMessage `json:"parsedData"`
}

// Epoch is an account's rent epoch in a snapshot. It reads any JSON
// number: a JavaScript client that passes a snapshot through writes
// u64::MAX, every rent-exempt account's rent epoch, as
// 18446744073709552000, which reads as u64::MAX again. (The ledger stores
// what Agave does whatever the snapshot says.)
type Epoch uint64

// UnmarshalJSON reads an integer, or a float that rounds past u64 (as
// u64::MAX).
func (e *Epoch) UnmarshalJSON(b []byte) error {
	if v, err := strconv.ParseUint(string(b), 10, 64); err == nil {
		*e = Epoch(v)
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	switch {
	case err != nil || f < 0 || f != math.Trunc(f):
		return fmt.Errorf("rentEpoch %s is not a u64", b)
	case f >= math.MaxUint64:
		*e = math.MaxUint64
	default:
		*e = Epoch(f)
	}
	return nil
}

// Snapshot maps base58 addresses to accounts. A null account is refused
// on import (surfpool reads it as "fetch from the remote", and ferry serve
// has no remote).
type Snapshot map[string]*AccountSnapshot

// ExportRequest is surfnet_exportSnapshot / ferry_exportSnapshot (surfpool's
// ExportSnapshotConfig, flattened).
type ExportRequest struct {
	// Accounts, when given, are the accounts to export (surfpool's
	// filter.includeAccounts); otherwise every account of the node is.
	Accounts []string `json:"accounts,omitempty" validate:"items=pubkey" doc:"Export only these accounts (base58); default: every account of the node."`
	// ExcludeAccounts are left out.
	ExcludeAccounts []string `json:"excludeAccounts,omitempty" validate:"items=pubkey" doc:"Accounts to leave out (base58)."`
	// IncludeProgramAccounts keeps program accounts (executable ones and
	// the loaders' program data) in a whole-node export; named accounts
	// are always exported.
	IncludeProgramAccounts bool `json:"includeProgramAccounts,omitempty" doc:"In a whole-node export, keep program accounts (left out by default)."`
	ExcludeSysvars         bool `json:"excludeSysvars,omitempty" doc:"Leave out sysvar accounts."`
	IncludeParsedAccounts  bool `json:"includeParsedAccounts,omitempty" doc:"Add parsedData (jsonParsed) to accounts ferry can parse (mints, token accounts, ...)."`
	// PreTransaction exports the accounts a transaction references, as
	// they are before it runs (surfpool's scope {"preTransaction": tx}).
	PreTransaction string `json:"preTransaction,omitempty" doc:"A wire transaction in base64: export the accounts it references, as they are before it runs."`
}

// ExportResult is an exported snapshot.
type ExportResult struct {
	Node string `json:"node" doc:"The chain node exported: base or ephemeral."`
	Slot uint64 `json:"slot" doc:"Slot of the state exported (processed)."`
	// Accounts maps addresses to accounts; an account named in the
	// request that does not exist is absent.
	Accounts Snapshot `json:"accounts" doc:"Address to account (lamports, owner, executable, rentEpoch, data in base64, parsedData)."`
}

// ExportSnapshot reads accounts of the node, all at one moment (one pause
// of the slot loop), in surfpool's snapshot format.
func (n *Node) ExportSnapshot(ctx context.Context, req ExportRequest) (*ExportResult, error) {
	var named []solana.PublicKey
	for _, s := range req.Accounts {
		k, err := parseKey(s)
		if err != nil {
			return nil, err
		}
		named = append(named, k)
	}
	if req.PreTransaction != "" {
		if len(named) > 0 {
			return nil, invalid("Invalid params: accounts and preTransaction are exclusive")
		}
		tx, _, err := decodeTransaction(req.PreTransaction)
		if err != nil {
			return nil, err
		}
		named = tx.Message.AccountKeys
	}
	if len(named) > MaxSnapshotAccounts {
		return nil, invalid("Invalid params: %d accounts; at most %d per export", len(named), MaxSnapshotAccounts)
	}
	exclude := map[solana.PublicKey]bool{}
	for _, s := range req.ExcludeAccounts {
		k, err := parseKey(s)
		if err != nil {
			return nil, err
		}
		exclude[k] = true
	}
	if req.IncludeParsedAccounts && n.encode == nil {
		return nil, &Error{Code: CodeInternalError, Message: "parsed accounts need an account encoder (devchain.Config.Encode)"}
	}
	out := &ExportResult{Node: n.name, Accounts: Snapshot{}}
	err := atomically(ctx, n.l, func(w ledger.AccountWriter) error {
		out.Slot = w.Slot()
		keys, whole := named, named == nil
		if whole {
			all, _ := n.l.LargestAccounts(MaxSnapshotAccounts+1, ledger.Processed, exclude)
			if len(all) > MaxSnapshotAccounts {
				return invalid("Invalid params: the %s node has more than %d accounts; name the accounts to export", n.name, MaxSnapshotAccounts)
			}
			for _, b := range all {
				keys = append(keys, b.Key)
			}
		}
		for _, k := range keys {
			a := w.Get(k)
			switch {
			case a == nil, exclude[k]:
				continue
			case req.ExcludeSysvars && a.Owner == ledger.SysvarOwnerID:
				continue
			case whole && !req.IncludeProgramAccounts && isProgramAccount(a):
				continue
			}
			s, err := n.snapshotOf(a, req.IncludeParsedAccounts)
			if err != nil {
				return err
			}
			out.Accounts[k.String()] = s
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// isProgramAccount reports a program or a loader's program data.
func isProgramAccount(a *ledger.Account) bool {
	return a.Executable || a.Owner == runtime.BPFLoaderUpgradeableID || a.Owner == runtime.NativeLoaderID
}

func (n *Node) snapshotOf(a *ledger.Account, parsed bool) (*AccountSnapshot, error) {
	s := &AccountSnapshot{Lamports: a.Lamports, Owner: a.Owner.String(), Executable: a.Executable, RentEpoch: Epoch(a.RentEpoch),
		Data: base64.StdEncoding.EncodeToString(a.Data)}
	if !parsed {
		return s, nil
	}
	ui, err := n.encode(a, "jsonParsed")
	if err != nil {
		return nil, renderError(err)
	}
	b, err := json.Marshal(ui)
	if err != nil {
		return nil, internal("render account", err)
	}
	var v struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, internal("render account", err)
	}
	// Data ferry cannot parse comes back as ["<base64>", "base64"].
	if bytes.HasPrefix(bytes.TrimSpace(v.Data), []byte("{")) {
		s.ParsedData = v.Data
	}
	return s, nil
}

// ImportResult is what an import wrote.
type ImportResult struct {
	WriteResult
	// Skipped are the entries left alone: sysvars, which the ledger
	// maintains itself.
	Skipped []string `json:"skipped" doc:"Entries left alone (sysvars, which the ledger maintains)."`
}

// ImportSnapshot writes every account of a snapshot in one privileged
// write (all or none): each replaces the account at its address; an entry
// with 0 lamports deletes it. Sysvar entries are skipped (the ledger
// rewrites them itself).
func (n *Node) ImportSnapshot(ctx context.Context, snap Snapshot) (*ImportResult, error) {
	if len(snap) == 0 {
		return nil, invalid("Invalid params: the snapshot has no accounts")
	}
	if len(snap) > MaxSnapshotAccounts {
		return nil, invalid("Invalid params: %d accounts; at most %d per import", len(snap), MaxSnapshotAccounts)
	}
	type entry struct {
		key solana.PublicKey
		a   *ledger.Account
	}
	entries := make([]entry, 0, len(snap))
	for addr, s := range snap {
		k, err := parseKey(addr)
		if err != nil {
			return nil, err
		}
		a, err := s.account(addr)
		if err != nil {
			return nil, err
		}
		entries = append(entries, entry{k, a})
	}
	sort.Slice(entries, func(i, j int) bool { return bytes.Compare(entries[i].key[:], entries[j].key[:]) < 0 })
	out := &ImportResult{Skipped: []string{}}
	res, err := n.write(ctx, "importSnapshot", func(w ledger.AccountWriter) ([]solana.PublicKey, error) {
		var keys []solana.PublicKey
		for _, e := range entries {
			cur := w.Get(e.key)
			if (cur != nil && cur.Owner == ledger.SysvarOwnerID) || e.a.Owner == ledger.SysvarOwnerID {
				out.Skipped = append(out.Skipped, e.key.String())
				continue
			}
			w.Set(e.key, e.a)
			keys = append(keys, e.key)
		}
		return keys, nil
	})
	if err != nil {
		return nil, err
	}
	out.WriteResult = *res
	return out, nil
}

// account decodes one snapshot entry.
func (s *AccountSnapshot) account(addr string) (*ledger.Account, error) {
	if s == nil {
		return nil, invalid("Invalid params: account %s is null (surfpool fetches it from its remote; ferry serve has none): give its data", addr)
	}
	owner, err := parseKey(s.Owner)
	if err != nil {
		return nil, err
	}
	if base64.StdEncoding.DecodedLen(len(s.Data)) > MaxAccountDataBytes+2 {
		return nil, invalid("Invalid params: account %s: data longer than %d bytes", addr, MaxAccountDataBytes)
	}
	data, err := base64.StdEncoding.DecodeString(s.Data)
	if err != nil {
		return nil, invalid("Invalid params: account %s: data is not base64: %v", addr, err)
	}
	if len(data) > MaxAccountDataBytes {
		return nil, invalid("Invalid params: account %s: data longer than %d bytes", addr, MaxAccountDataBytes)
	}
	return &ledger.Account{Lamports: s.Lamports, Owner: owner, Data: data, Executable: s.Executable, RentEpoch: uint64(s.RentEpoch)}, nil
}

// ParseSnapshot reads the snapshot files `ferry dev import` takes:
// surfpool's format (a map of address to account, or the whole
// surfnet_exportSnapshot / ferry_exportSnapshot result with it as
// "value" or "accounts"), or `solana account --output json` output (one
// {"pubkey", "account"} object, or an array of them).
func ParseSnapshot(b []byte) (Snapshot, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil, fmt.Errorf("parse snapshot: empty")
	}
	if b[0] == '[' {
		var list []json.RawMessage
		if err := json.Unmarshal(b, &list); err != nil {
			return nil, fmt.Errorf("parse snapshot: %w", err)
		}
		out := Snapshot{}
		for i, item := range list {
			one, err := parseCLIAccount(item)
			if err != nil {
				return nil, fmt.Errorf("parse snapshot: item %d: %w", i, err)
			}
			for k, v := range one {
				out[k] = v
			}
		}
		return out, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, fmt.Errorf("parse snapshot: %w", err)
	}
	if _, ok := top["pubkey"]; ok {
		return parseCLIAccount(b)
	}
	for _, wrapper := range []string{"value", "accounts"} {
		if inner, ok := top[wrapper]; ok && len(top) <= 4 {
			return ParseSnapshot(inner)
		}
	}
	out := make(Snapshot, len(top))
	for k, raw := range top {
		var s *AccountSnapshot
		if err := decodeStrict(raw, &s); err != nil {
			return nil, fmt.Errorf("parse snapshot: account %s: %w", k, err)
		}
		out[k] = s
	}
	return out, nil
}

// cliAccount is `solana account --output json`: the address and the
// account as getAccountInfo shows it.
type cliAccount struct {
	Pubkey  string `json:"pubkey"`
	Account struct {
		Lamports   uint64    `json:"lamports"`
		Data       [2]string `json:"data"`
		Owner      string    `json:"owner"`
		Executable bool      `json:"executable"`
		RentEpoch  Epoch     `json:"rentEpoch"`
		Space      *uint64   `json:"space"`
	} `json:"account"`
}

func parseCLIAccount(b []byte) (Snapshot, error) {
	var c cliAccount
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, err
	}
	var data []byte
	var err error
	switch c.Account.Data[1] {
	case "base64":
		data, err = base64.StdEncoding.DecodeString(c.Account.Data[0])
	case "base58":
		data, err = base58.Decode(c.Account.Data[0])
	default:
		return nil, fmt.Errorf("account %s: data encoding %q (use base64: solana account --output json)", c.Pubkey, c.Account.Data[1])
	}
	if err != nil {
		return nil, fmt.Errorf("account %s: data: %w", c.Pubkey, err)
	}
	return Snapshot{c.Pubkey: {Lamports: c.Account.Lamports, Owner: c.Account.Owner, Executable: c.Account.Executable,
		RentEpoch: c.Account.RentEpoch, Data: base64.StdEncoding.EncodeToString(data)}}, nil
}

// decodeStrict decodes JSON refusing unknown fields, with the offending
// field named.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the JSON value")
	}
	return nil
}
