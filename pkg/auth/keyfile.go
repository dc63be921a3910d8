package auth

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// KeyFileName is the server key's file name in the data directory.
const KeyFileName = "auth-key.json"

// LoadOrCreateKey reads the token-signing key at path (a Solana CLI
// keypair file: a JSON array of 64 bytes), creating it with mode 0600 (and
// its directory with 0700) when it does not exist. Keeping the key across
// restarts keeps issued tokens valid.
func LoadOrCreateKey(path string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		var raw []byte
		var nums []int
		if err := json.Unmarshal(b, &nums); err != nil {
			return nil, fmt.Errorf("read auth key %s: not a JSON byte array: %w", path, err)
		}
		for _, n := range nums {
			if n < 0 || n > 255 {
				return nil, fmt.Errorf("read auth key %s: byte %d out of range", path, n)
			}
			raw = append(raw, byte(n))
		}
		if len(raw) != ed25519.PrivateKeySize {
			return nil, fmt.Errorf("read auth key %s: %d bytes, want %d", path, len(raw), ed25519.PrivateKeySize)
		}
		k := ed25519.NewKeyFromSeed(raw[:32])
		if string(k[32:]) != string(raw[32:]) {
			return nil, fmt.Errorf("read auth key %s: public half does not match the secret", path)
		}
		return k, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read auth key: %w", err)
	}
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("create auth key: %w", err)
	}
	nums := make([]int, len(k))
	for i, c := range k {
		nums[i] = int(c)
	}
	data, _ := json.Marshal(nums)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create auth key: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".auth-key-*")
	if err != nil {
		return nil, fmt.Errorf("create auth key: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err == nil {
		_, err = tmp.Write(data)
		if err == nil {
			err = tmp.Sync()
		}
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			// Link rather than rename, so a concurrent creator's key wins
			// consistently instead of being silently replaced.
			if err = os.Link(tmp.Name(), path); errors.Is(err, os.ErrExist) {
				return LoadOrCreateKey(path)
			}
		}
	} else {
		tmp.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("create auth key %s: %w", path, err)
	}
	return k, nil
}
