package cmdutil

import (
	"bufio"
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/keyfile"
)

// ReadKeypairFile reads a Solana CLI keypair file: a JSON array of 64 bytes
// (32-byte seed followed by the public key). Its errors name the cause:
// no such file, no permission to read it, or not a keypair (an
// *InputError, exit status 3, wrapping the os error where there is one).
func ReadKeypairFile(path string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &InputError{Err: &keyfileError{msg: fmt.Sprintf("keypair %s: %s", path, KeyfileProblem(err)), err: err}}
	}
	k, err := keyfile.Parse(b)
	if err != nil {
		return nil, &InputError{Err: fmt.Errorf("%s is not a keypair file (want a Solana CLI keypair: a JSON array of 64 bytes): %w", path, err)}
	}
	return k, nil
}

// keyfileError is a short message that still unwraps to the os error.
type keyfileError struct {
	msg string
	err error
}

func (e *keyfileError) Error() string { return e.msg }
func (e *keyfileError) Unwrap() error { return e.err }

// KeyfileProblem says in a few words why a key file could not be opened.
func KeyfileProblem(err error) string {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "no such file"
	case errors.Is(err, os.ErrPermission):
		return "permission denied (the file must be readable by you; keypairs are usually mode 0600)"
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// WriteKeypairFile writes key in the Solana CLI format with mode 0600,
// refusing to overwrite an existing file.
func WriteKeypairFile(path string, key ed25519.PrivateKey) error { return keyfile.Write(path, key) }

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
