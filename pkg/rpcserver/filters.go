package rpcserver

import (
	"fmt"

	"github.com/ferry-sh/ferry/pkg/ledger"
)

// MaxFilters is Agave's MAX_GET_PROGRAM_ACCOUNT_FILTERS.
const MaxFilters = maxProgramAccountFilters

// Filter is one account filter of getProgramAccounts and programSubscribe
// (Agave's RpcFilterType): {"dataSize":N}, {"memcmp":{"offset":N,
// "bytes":..., "encoding":...}} or "tokenAccountState". Decode a list with
// encoding/json, then check it with VerifyFilters, which decodes the memcmp
// bytes: getProgramAccounts and programSubscribe share one implementation
// (decodeFilter, verifyFilters, accountFilter.matches).
type Filter struct {
	raw rawFilter
	f   accountFilter // set by VerifyFilters
}

// UnmarshalJSON reads one filter in Agave's serde form.
func (f *Filter) UnmarshalJSON(b []byte) error {
	r, err := decodeFilter(b)
	if err != nil {
		return err
	}
	*f = Filter{raw: r}
	return nil
}

// VerifyFilters checks a filter list as Agave's verify_filters does and
// decodes the memcmp bytes. Its errors are -32602 with Agave's messages.
func VerifyFilters(fs []Filter) error {
	raw := make([]rawFilter, len(fs))
	for i := range fs {
		raw[i] = fs[i].raw
	}
	out, err := verifyFilters(raw)
	if err != nil {
		return err
	}
	for i := range fs {
		fs[i].f = out[i]
	}
	return nil
}

// Allows reports whether an account passes the filter (Agave's
// filter_allows). The filter must have been checked by VerifyFilters.
func (f Filter) Allows(a *ledger.Account) bool { return f.f.matches(a.Data) }

// Key is a canonical form of a verified filter: equal keys filter alike.
func (f Filter) Key() string {
	switch {
	case f.f.dataSize != nil:
		return fmt.Sprintf("size:%d", *f.f.dataSize)
	case f.f.memcmp != nil:
		return fmt.Sprintf("memcmp:%d:%x", f.f.memcmp.offset, f.f.memcmp.bytes)
	}
	return "tokenAccountState"
}

// FiltersAllow reports whether an account passes every filter.
func FiltersAllow(fs []Filter, a *ledger.Account) bool {
	for _, f := range fs {
		if !f.Allows(a) {
			return false
		}
	}
	return true
}
