package keyfile

import (
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRoundTripAndParseErrors(t *testing.T) {
	_, k, _ := ed25519.GenerateKey(nil)
	back, err := Parse(Encode(k))
	if err != nil || !back.Equal(k) {
		t.Fatalf("round trip: %v", err)
	}
	mismatched := append(ed25519.PrivateKey(nil), k...)
	mismatched[63] ^= 1 // the public half no longer matches the seed
	bad := Encode(mismatched)
	cases := map[string]string{
		`{}`:                                    "not a JSON array",
		`[1,2,3]`:                               "3 bytes, want 64",
		string(bad):                             "does not match",
		"[" + strings.Repeat("256,", 63) + "1]": "out of range",
	}
	for in, want := range cases {
		if _, err := Parse([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%.20s…) = %v, want %q", in, err, want)
		}
	}
}

func TestWriteNeverOverwrites(t *testing.T) {
	p := filepath.Join(t.TempDir(), "nested", "id.json")
	_, k, _ := ed25519.GenerateKey(nil)
	if err := Write(p, k); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(p)
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode())
	}
	_, k2, _ := ed25519.GenerateKey(nil)
	if err := Write(p, k2); !errors.Is(err, os.ErrExist) {
		t.Fatalf("second write: %v", err)
	}
	got, err := Read(p)
	if err != nil || !got.Equal(k) {
		t.Fatal("the original key was not kept")
	}
}

func TestLoadOrCreate(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "validator.json")
	k1, created, err := LoadOrCreate(p)
	if err != nil || !created {
		t.Fatalf("create: %v %v", created, err)
	}
	k2, created, err := LoadOrCreate(p)
	if err != nil || created || !k2.Equal(k1) {
		t.Fatalf("reload: %v %v", created, err)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
	if err := os.WriteFile(p, []byte("[1]"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadOrCreate(p); err == nil {
		t.Fatal("a corrupt key file must be an error, never silently replaced")
	}
}
