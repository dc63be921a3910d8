// Package keyfile reads and writes ed25519 keypairs in the Solana CLI
// format: a JSON array of 64 integers, the 32-byte seed followed by the
// public key. Wallets, the validator identity, the faucet and the API's
// token-signing key are all stored this way, with mode 0600.
package keyfile

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Parse errors: ErrFormat for text that is not a JSON array of bytes,
// ErrInvalidKey for an array that is not a valid ed25519 keypair.
var (
	ErrFormat     = errors.New("not a JSON array of bytes")
	ErrInvalidKey = errors.New("not a valid keypair")
)

// Parse decodes the JSON form and checks that the public half matches the
// secret seed.
func Parse(b []byte) (ed25519.PrivateKey, error) {
	var nums []int
	if err := json.Unmarshal(b, &nums); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	raw := make([]byte, len(nums))
	for i, n := range nums {
		if n < 0 || n > 255 {
			return nil, fmt.Errorf("%w: byte %d out of range", ErrFormat, i)
		}
		raw[i] = byte(n)
	}
	if len(raw) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("%w: %d bytes, want %d", ErrInvalidKey, len(raw), ed25519.PrivateKeySize)
	}
	k := ed25519.NewKeyFromSeed(raw[:32])
	if string(k[32:]) != string(raw[32:]) {
		return nil, fmt.Errorf("%w: the public key does not match the secret key", ErrInvalidKey)
	}
	return k, nil
}

// Encode returns the JSON form of k.
func Encode(k ed25519.PrivateKey) []byte {
	nums := make([]int, len(k))
	for i, c := range k {
		nums[i] = int(c)
	}
	b, _ := json.Marshal(nums)
	return b
}

// Read reads the keypair at path.
func Read(path string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read keypair: %w", err)
	}
	k, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("read keypair %s: %w", path, err)
	}
	return k, nil
}

// Write stores k at path (mode 0600, parent directories 0700) and refuses
// to replace an existing file: the only copy of a wallet must never be
// overwritten by accident. The error wraps os.ErrExist in that case.
func Write(path string, k ed25519.PrivateKey) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("write keypair: %w", err)
	}
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("write keypair: %w", err)
	}
	if _, err := fh.Write(Encode(k)); err != nil {
		fh.Close()
		os.Remove(path)
		return fmt.Errorf("write keypair %s: %w", path, err)
	}
	if err := fh.Close(); err != nil {
		os.Remove(path)
		return fmt.Errorf("write keypair %s: %w", path, err)
	}
	return nil
}

// LoadOrCreate reads the keypair at path, or generates one and stores it
// there when the file does not exist. The new key is written to a temporary
// file and linked into place: a crash never leaves a truncated key, and of
// two processes creating it at once, both end up with the key that won.
// created reports whether this call stored the key.
func LoadOrCreate(path string) (k ed25519.PrivateKey, created bool, err error) {
	b, err := os.ReadFile(path)
	if err == nil {
		k, err := Parse(b)
		if err != nil {
			return nil, false, fmt.Errorf("read keypair %s: %w", path, err)
		}
		return k, false, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, false, fmt.Errorf("read keypair: %w", err)
	}
	if _, k, err = ed25519.GenerateKey(rand.Reader); err != nil {
		return nil, false, fmt.Errorf("generate keypair: %w", err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, false, fmt.Errorf("store keypair: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return nil, false, fmt.Errorf("store keypair: %w", err)
	}
	defer os.Remove(tmp.Name()) // the linked name keeps the file
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return nil, false, fmt.Errorf("store keypair: %w", err)
	}
	if _, err := tmp.Write(Encode(k)); err != nil {
		tmp.Close()
		return nil, false, fmt.Errorf("store keypair: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return nil, false, fmt.Errorf("store keypair: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return nil, false, fmt.Errorf("store keypair: %w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return LoadOrCreate(path)
		}
		return nil, false, fmt.Errorf("store keypair: %w", err)
	}
	return k, true, nil
}
