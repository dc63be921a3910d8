package cmdutil

import (
	"bufio"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gagliardetto/solana-go"
)

// ReadKeypairFile reads a Solana CLI keypair file: a JSON array of 64 bytes
// (32-byte seed followed by the public key).
func ReadKeypairFile(path string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read keypair: %w", err)
	}
	var raw []int
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("read keypair %s: not a JSON array of bytes: %w", path, err)
	}
	if len(raw) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("read keypair %s: %d bytes, want 64", path, len(raw))
	}
	key := make([]byte, ed25519.PrivateKeySize)
	for i, v := range raw {
		if v < 0 || v > 255 {
			return nil, fmt.Errorf("read keypair %s: byte %d out of range", path, i)
		}
		key[i] = byte(v)
	}
	priv := ed25519.NewKeyFromSeed(key[:32])
	if string(priv[32:]) != string(key[32:]) {
		return nil, fmt.Errorf("read keypair %s: public key does not match the secret key", path)
	}
	return priv, nil
}

// WriteKeypairFile writes key in the Solana CLI format with mode 0600,
// refusing to overwrite an existing file.
func WriteKeypairFile(path string, key ed25519.PrivateKey) error {
	nums := make([]int, len(key))
	for i, b := range key {
		nums[i] = int(b)
	}
	b, _ := json.Marshal(nums)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("write keypair: %w", err)
	}
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("write keypair: %w", err)
	}
	if _, err := fh.Write(b); err != nil {
		fh.Close()
		return fmt.Errorf("write keypair: %w", err)
	}
	return fh.Close()
}

// PublicKeyOf returns the public key of an ed25519 private key.
func PublicKeyOf(k ed25519.PrivateKey) solana.PublicKey {
	var p solana.PublicKey
	copy(p[:], k[32:])
	return p
}

// KeypairPath is the default signer: --keypair, FERRY_KEYPAIR, the config
// file, the Solana CLI config's keypair_path, ~/.config/solana/id.json, and
// $FERRY_HOME/id.json when there is no usable home directory.
func (f *Factory) KeypairPath() (string, error) {
	if f.Keypair != "" {
		return f.Keypair, nil
	}
	if p := f.Getenv("FERRY_KEYPAIR"); p != "" {
		return p, nil
	}
	if cfg, err := f.Config(); err == nil && cfg.Keypair != "" {
		return cfg.Keypair, nil
	}
	if p := f.solanaConfigValue("keypair_path"); p != "" {
		return p, nil
	}
	if home := f.Getenv("HOME"); home != "" && home != "/no-home" {
		return filepath.Join(home, ".config", "solana", "id.json"), nil
	}
	if h := f.Getenv("FERRY_HOME"); h != "" {
		return filepath.Join(h, "id.json"), nil
	}
	return "", errors.New("no keypair: pass --keypair or set FERRY_KEYPAIR")
}

// LoadKeypair reads the default signer.
func (f *Factory) LoadKeypair() (ed25519.PrivateKey, error) {
	p, err := f.KeypairPath()
	if err != nil {
		return nil, err
	}
	return ReadKeypairFile(p)
}

// solanaConfigValue reads one top-level key of the Solana CLI config file
// (~/.config/solana/cli/config.yml, or $SOLANA_CONFIG). The file is simple
// "key: value" YAML, so a line scanner is enough.
func (f *Factory) solanaConfigValue(key string) string {
	p := f.Getenv("SOLANA_CONFIG")
	if p == "" {
		home := f.Getenv("HOME")
		if home == "" || home == "/no-home" {
			return ""
		}
		p = filepath.Join(home, ".config", "solana", "cli", "config.yml")
	}
	fh, err := os.Open(p)
	if err != nil {
		return ""
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return ""
}
