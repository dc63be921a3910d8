package cmdutil

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ferry-sh/ferry/pkg/auth"
)

// TokensFileName is the login token store in ferry's configuration
// directory. It holds bearer tokens, so it is written with mode 0600.
const TokensFileName = "tokens.json"

// StoredToken is one login token as `ferry login` keeps it.
type StoredToken struct {
	// Token is the bearer token as /v1/spl/login returned it
	// ("<pubkey>.<token>").
	Token string `json:"token"`
	// ExpiresAt is the expiry in milliseconds since the Unix epoch, when
	// the server said.
	ExpiresAt *int64 `json:"expiresAt,omitempty"`
	// API is the payments API that issued it.
	API string `json:"api,omitempty"`
}

// Inner is the part of the token that is forwarded to a rollup as
// ?token= (the bearer token without its "<pubkey>." binding).
func (t StoredToken) Inner() string {
	_, inner := auth.SplitToken(t.Token)
	return inner
}

// Expired reports whether the token's known expiry has passed.
func (t StoredToken) Expired(now time.Time) bool {
	return t.ExpiresAt != nil && now.UnixMilli() >= *t.ExpiresAt
}

// tokenStore is the file's content: cluster name → wallet → token.
type tokenStore map[string]map[string]StoredToken

// TokensFile is the path of the login token store.
func (f *Factory) TokensFile() (string, error) {
	h, err := f.Home()
	if err != nil {
		return "", err
	}
	return filepath.Join(h, TokensFileName), nil
}

func (f *Factory) readTokens() (tokenStore, string, error) {
	p, err := f.TokensFile()
	if err != nil {
		return nil, "", err
	}
	st := tokenStore{}
	b, err := os.ReadFile(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return st, p, nil
	case err != nil:
		return nil, p, fmt.Errorf("read login tokens: %w", err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, p, fmt.Errorf("read login tokens %s: %w", p, err)
	}
	return st, p, nil
}

// LoginToken returns the unexpired token `ferry login` stored for wallet
// on cluster (a cluster name as cluster.Endpoints.Name has it), if any.
func (f *Factory) LoginToken(cluster, wallet string) (StoredToken, bool) {
	st, _, err := f.readTokens()
	if err != nil {
		return StoredToken{}, false
	}
	t, ok := st[cluster][wallet]
	if !ok || t.Token == "" || t.Expired(time.Now()) {
		return StoredToken{}, false
	}
	return t, true
}

// RollupToken is the bearer token to forward to a rollup as ?token=: flag,
// then FERRY_AUTH_TOKEN, then the token `ferry login` stored for wallet on
// cluster (not looked up when wallet is empty). Only the inner part is
// returned: that is all a rollup ever sees, as with the payments API.
func (f *Factory) RollupToken(flag, cluster, wallet string) string {
	tok := flag
	if tok == "" {
		tok = f.Getenv("FERRY_AUTH_TOKEN")
	}
	if tok == "" && wallet != "" {
		if st, ok := f.LoginToken(cluster, wallet); ok {
			tok = st.Token
		}
	}
	return StoredToken{Token: tok}.Inner()
}

// SaveLoginToken stores t for wallet on cluster, replacing any earlier
// token, and returns the file's path. The file is replaced atomically and
// is readable by its owner only.
func (f *Factory) SaveLoginToken(cluster, wallet string, t StoredToken) (string, error) {
	st, p, err := f.readTokens()
	if err != nil {
		return p, err
	}
	if st[cluster] == nil {
		st[cluster] = map[string]StoredToken{}
	}
	st[cluster][wallet] = t
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return p, fmt.Errorf("save login token: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return p, fmt.Errorf("save login token: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tokens-*.json")
	if err != nil {
		return p, fmt.Errorf("save login token: %w", err)
	}
	// CreateTemp makes the file 0600 already; be explicit for umask-free
	// platforms.
	_, werr := tmp.Write(append(b, '\n'))
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), 0o600)); err != nil {
		os.Remove(tmp.Name())
		return p, fmt.Errorf("save login token: %w", err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		os.Remove(tmp.Name())
		return p, fmt.Errorf("save login token: %w", err)
	}
	return p, nil
}
