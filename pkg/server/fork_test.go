package server

import (
	"encoding/base64"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/rpcserver"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// remoteCluster is a ledger behind JSON-RPC, the cluster a test forks,
// with a funded wallet and an SBF program account.
type remoteCluster struct {
	url     string
	l       *ledger.Ledger
	payer   solana.PrivateKey
	program solana.PublicKey
}

func newRemote(t *testing.T) *remoteCluster {
	t.Helper()
	payer := solana.NewWallet().PrivateKey
	program := solana.NewWallet().PublicKey()
	l, err := ledger.Open(ledger.Config{Name: "remote", SlotDuration: 20 * time.Millisecond, Genesis: []ledger.GenesisAccount{
		{Key: payer.PublicKey(), Account: ledger.Account{Lamports: 5_000_000_000, Owner: solana.SystemProgramID}},
		{Key: program, Account: ledger.Account{Lamports: 1_141_440, Owner: solana.BPFLoaderUpgradeableProgramID, Executable: true, Data: make([]byte, 36)}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	srv := httptest.NewServer(rpcserver.New(l, rpcserver.Options{}))
	t.Cleanup(srv.Close)
	return &remoteCluster{url: srv.URL, l: l, payer: payer, program: program}
}

// TestForkServed: a local node forked from a remote copies accounts on
// first read, prefetches clones, records the fork slot, refuses a
// transaction calling the remote's SBF program (naming it), and needs the
// remote URL on the allow-list.
func TestForkServed(t *testing.T) {
	r := newRemote(t)
	o := fast("", "")
	o.Demo.Disabled = true
	o.AllowUpstream = []string{"http://127.0.0.1:*"}
	o.Fork = ForkOptions{Cluster: r.url, Clone: []solana.PublicKey{r.payer.PublicKey()}}
	serveNode(t, o, func(n *Node, info *Info) {
		if info.Fork == nil || info.Fork.URL != r.url || info.Fork.Cloned != 1 || info.Fork.Slot > r.l.Slot(ledger.Confirmed) {
			t.Fatalf("fork info %+v", info.Fork)
		}
		base := n.Local.Pair.Base
		if a, _ := base.Account(r.payer.PublicKey(), ledger.Finalized); a == nil || a.Lamports != 5_000_000_000 {
			t.Fatalf("cloned payer %+v", a)
		}
		// A transfer from the forked wallet runs locally; the remote is
		// untouched.
		to := solana.NewWallet().PublicKey()
		bh, _ := base.LatestBlockhash(ledger.Processed)
		send := func(ixs []txwire.Instruction) map[string]any {
			msg, err := txwire.Compile(r.payer.PublicKey(), ixs, bh.Blockhash)
			if err != nil {
				t.Fatal(err)
			}
			tx := txwire.NewUnsigned(msg)
			if err := tx.Sign(ed25519Key(r.payer)); err != nil {
				t.Fatal(err)
			}
			var resp map[string]any
			postJSON(t, info.URLs[KeyRPC], `{"jsonrpc":"2.0","id":1,"method":"sendTransaction","params":["`+base64.StdEncoding.EncodeToString(tx.Bytes())+`",{"encoding":"base64","preflightCommitment":"processed"}]}`, &resp)
			return resp
		}
		if resp := send([]txwire.Instruction{spl.SystemTransfer(r.payer.PublicKey(), to, 1_000_000)}); resp["error"] != nil {
			t.Fatalf("transfer: %v", resp["error"])
		}
		if b, _ := base.Balance(to, ledger.Processed); b != 1_000_000 {
			t.Fatalf("recipient on the fork has %d", b)
		}
		if b, _ := r.l.Balance(to, ledger.Processed); b != 0 {
			t.Fatalf("the remote changed: recipient has %d", b)
		}
		resp := send([]txwire.Instruction{{ProgramID: r.program, Accounts: []txwire.AccountMeta{{PublicKey: r.payer.PublicKey(), IsSigner: true, IsWritable: true}}, Data: []byte{0}}})
		e, _ := resp["error"].(map[string]any)
		if e == nil || e["code"] != float64(rpcserver.CodeInvalidParams) || !strings.Contains(e["message"].(string), "transaction calls program "+r.program.String()+", an SBF program of the forked cluster") {
			t.Fatalf("SBF program call: %v", resp)
		}
	})

	// Not on the allow-list: refused before contacting it.
	o.AllowUpstream = nil
	if _, err := Build(o); err == nil || !isCode(err, apierr.CodeUpstreamNotAllowed) {
		t.Fatalf("fork of a URL not allowed: %v", err)
	}
	// A clone the remote does not have fails the start.
	o.AllowUpstream = []string{"http://127.0.0.1:*"}
	missing := solana.NewWallet().PublicKey()
	o.Fork.Clone = []solana.PublicKey{missing}
	if _, err := Build(o); err == nil || !strings.Contains(err.Error(), "--clone "+missing.String()+": no such account on "+r.url) {
		t.Fatalf("missing clone: %v", err)
	}
	// A fork slot the remote has not reached.
	o.Fork.Clone, o.Fork.Slot = nil, 1<<40
	if _, err := Build(o); err == nil || !strings.Contains(err.Error(), "--fork-slot 1099511627776") {
		t.Fatalf("future fork slot: %v", err)
	}
	o.Fork = ForkOptions{Cluster: "local"}
	if _, err := Build(o); err == nil || !strings.Contains(err.Error(), "cannot fork the local cluster") {
		t.Fatalf("fork of local: %v", err)
	}
}

func isCode(err error, code string) bool {
	var ae *apierr.Error
	return errors.As(err, &ae) && ae.Code == code
}

func ed25519Key(k solana.PrivateKey) []byte { return []byte(k) }

// TestReadCloneFile reads addresses with comments and blank lines and
// refuses what is not an address, naming the line.
func TestReadCloneFile(t *testing.T) {
	a, b := solana.NewWallet().PublicKey(), solana.NewWallet().PublicKey()
	dir := t.TempDir()
	for _, c := range []struct {
		name, body string
		want       []solana.PublicKey
		err        string
	}{
		{"ok", "# mints\n" + a.String() + "\n\n  " + b.String() + "  # a token account\n", []solana.PublicKey{a, b}, ""},
		{"empty", "", nil, ""},
		{"bad", a.String() + "\nnot-a-key\n", nil, `line 2: "not-a-key" is not an address`},
		{"big", strings.Repeat(a.String()+"\n", MaxCloneFileBytes/len(a.String())+1), nil, "larger than"},
	} {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, []byte(c.body), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := ReadCloneFile(path)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("%s: %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || len(got) != len(c.want) {
			t.Fatalf("%s: %v %v", c.name, got, err)
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Fatalf("%s: %v", c.name, got)
			}
		}
	}
	if _, err := ReadCloneFile(filepath.Join(dir, "absent")); err == nil {
		t.Fatal("read a missing file")
	}
}

// FuzzReadCloneFile: any file gives addresses or an error, never a panic.
func FuzzReadCloneFile(f *testing.F) {
	f.Add([]byte("# x\n11111111111111111111111111111111\n"))
	f.Add([]byte("\n\n#\n zz #"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, body []byte) {
		path := filepath.Join(dir, "clones")
		if err := os.WriteFile(path, body, 0o600); err != nil {
			t.Fatal(err)
		}
		keys, err := ReadCloneFile(path)
		if err == nil {
			for _, k := range keys {
				if !strings.Contains(string(body), k.String()) {
					t.Fatalf("%s is not in the file", k)
				}
			}
		}
	})
}
