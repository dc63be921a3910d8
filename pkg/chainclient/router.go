package chainclient

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/gagliardetto/solana-go"
)

// Route is one ephemeral-rollup node the MagicBlock router knows
// (service-interface.md §2.5, chain-rpc.md §9.2).
type Route struct {
	Identity solana.PublicKey `json:"identity"`
	// FQDN is the node's RPC URL. The live router includes the scheme;
	// GetRoutes adds https:// to bare host names.
	FQDN        string `json:"fqdn"`
	BaseFee     uint16 `json:"baseFee"`
	BlockTimeMs uint16 `json:"blockTimeMs"`
	// CountryCode is ISO 3166 alpha-3 on the live router (SGP, DEU, USA);
	// older deployments used alpha-2 or region codes.
	CountryCode string `json:"countryCode"`
}

// DelegationRecord is the delegation program's record of a delegated
// account, as getDelegationStatus reports it.
type DelegationRecord struct {
	// Authority is the identity of the validator the account is delegated to.
	Authority solana.PublicKey `json:"authority"`
	// Owner is the account's original owner program.
	Owner          solana.PublicKey `json:"owner"`
	DelegationSlot uint64           `json:"delegationSlot"`
	Lamports       uint64           `json:"lamports"`
}

// DelegationStatus is the getDelegationStatus result. FQDN and
// DelegationRecord are absent unless the account is delegated (ER
// validators answer only isDelegated).
type DelegationStatus struct {
	IsDelegated      bool              `json:"isDelegated"`
	FQDN             string            `json:"fqdn,omitempty"`
	DelegationRecord *DelegationRecord `json:"delegationRecord,omitempty"`
}

// GetRoutes lists the ER nodes a router knows. An ER validator answers [].
func (c *Client) GetRoutes(ctx context.Context) ([]Route, error) {
	var v []Route
	if err := c.Call(ctx, "getRoutes", nil, &v); err != nil {
		return nil, err
	}
	if v == nil {
		v = []Route{}
	}
	for i := range v {
		if n, err := NormalizeFQDN(v[i].FQDN); err == nil {
			v[i].FQDN = n
		}
	}
	return v, nil
}

// GetDelegationStatus asks a router whether key is delegated and to which
// ER node.
func (c *Client) GetDelegationStatus(ctx context.Context, key solana.PublicKey) (DelegationStatus, error) {
	var v *DelegationStatus
	if err := c.Call(ctx, "getDelegationStatus", []any{key}, &v); err != nil {
		return DelegationStatus{}, err
	}
	if v == nil {
		return DelegationStatus{}, c.errorf("getDelegationStatus", "empty result")
	}
	return *v, nil
}

// GetBlockhashForAccounts returns a blockhash from the chain the accounts
// live on: the ER they are delegated to, or the base chain. The router
// answers a bare {blockhash, lastValidBlockHeight}; ER validators alias the
// method to getLatestBlockhash and wrap it in {context, value}. Both are
// accepted.
func (c *Client) GetBlockhashForAccounts(ctx context.Context, keys []solana.PublicKey) (Blockhash, error) {
	if keys == nil {
		keys = []solana.PublicKey{}
	}
	var v *Blockhash
	if err := c.callValue(ctx, "getBlockhashForAccounts", []any{keys}, &v); err != nil {
		return Blockhash{}, err
	}
	if v == nil || v.Hash.IsZero() {
		return Blockhash{}, c.errorf("getBlockhashForAccounts", "no blockhash in result")
	}
	return *v, nil
}

// NormalizeFQDN turns a router fqdn or a user-supplied ER endpoint into a
// canonical URL (payments-api.md §5.10): trimmed; a bare host name gets
// https://; the scheme must be http or https; an origin with path "/" and
// no query or fragment loses the trailing slash.
func NormalizeFQDN(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", fmt.Errorf("normalize endpoint: empty")
	}
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("normalize endpoint %q: %w", RedactURL(s), err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("normalize endpoint %q: scheme must be http or https", RedactURL(s))
	}
	if u.Host == "" {
		return "", fmt.Errorf("normalize endpoint %q: no host", RedactURL(s))
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	if (u.Path == "/" || u.Path == "") && u.RawQuery == "" && u.Fragment == "" && !u.ForceQuery {
		u.Path = ""
		u.RawPath = ""
	}
	return u.String(), nil
}
