package auth

import (
	"crypto/ed25519"
	"fmt"

	"github.com/ferry-sh/ferry/pkg/keyfile"
)

// KeyFileName is the server key's file name in the data directory.
const KeyFileName = "auth-key.json"

// LoadOrCreateKey reads the token-signing key at path (a Solana CLI
// keypair file: a JSON array of 64 bytes), creating it with mode 0600 (and
// its directory with 0700) when it does not exist. Keeping the key across
// restarts keeps issued tokens valid.
func LoadOrCreateKey(path string) (ed25519.PrivateKey, error) {
	k, _, err := keyfile.LoadOrCreate(path)
	if err != nil {
		return nil, fmt.Errorf("auth key: %w", err)
	}
	return k, nil
}
