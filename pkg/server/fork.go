package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/cluster"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/localnet"
)

// ForkOptions make local mode's base layer a lazy fork of a remote
// cluster (ferry serve --fork): it starts empty (genesis only) and copies
// each account from the remote the first time it is read or written
// (ledger.AccountSource).
type ForkOptions struct {
	// Cluster is a moniker (devnet, mainnet, testnet, ...) or an RPC URL.
	// A URL must be allowed by Options.AllowUpstream (else
	// UPSTREAM_NOT_ALLOWED); a moniker's RPC is always allowed.
	Cluster string
	// Slot is the remote slot the fork is taken at: the remote's confirmed
	// slot must have reached it. Zero records the remote's confirmed slot
	// at start. A JSON-RPC node serves only its current state, so accounts
	// are copied as they are when first read, not as of Slot; Slot is
	// recorded (Info.Fork) so a test states what it forked.
	Slot uint64
	// Clone are accounts to copy at start (--clone, --clone-file); an
	// address the remote does not have fails the start.
	Clone []solana.PublicKey
}

// ForkInfo is the fork a local node was started with (Info.Fork).
type ForkInfo struct {
	// URL is the forked cluster's RPC (redacted).
	URL string `json:"url"`
	// Slot is the fork slot (ForkOptions.Slot, or the remote's confirmed
	// slot at start).
	Slot uint64 `json:"slot"`
	// Cloned counts the accounts copied at start.
	Cloned int `json:"cloned"`
}

// ForkTimeout bounds the start of a fork: the remote's slot and the
// prefetched accounts.
const ForkTimeout = 60 * time.Second

// MaxCloneFileBytes bounds a --clone-file.
const MaxCloneFileBytes = 1 << 20

// remoteSource is a ledger.AccountSource over a remote JSON-RPC node.
type remoteSource struct {
	c    *chainclient.Client
	name string
}

func (s *remoteSource) Name() string { return s.name }

func (s *remoteSource) FetchAccounts(ctx context.Context, keys []solana.PublicKey) ([]*ledger.Account, error) {
	got, err := s.c.GetMultipleAccounts(ctx, keys, chainclient.Confirmed)
	if err != nil {
		return nil, err
	}
	out := make([]*ledger.Account, len(got))
	for i, a := range got {
		if a != nil {
			out[i] = &ledger.Account{Lamports: a.Lamports, Owner: a.Owner, Data: a.Data, Executable: a.Executable, RentEpoch: a.RentEpoch}
		}
	}
	return out, nil
}

// forkURL resolves the fork target: a moniker's RPC, or a URL the allow
// list admits.
func forkURL(target string, allow []string) (string, error) {
	name := cluster.Canonical(target)
	if !strings.Contains(target, "://") {
		if strings.Contains(name, "://") {
			return name, nil // a moniker of a base layer only (testnet)
		}
		ep, err := cluster.Resolve(name, cluster.Overrides{})
		if err != nil {
			return "", fmt.Errorf("--fork: %w", err)
		}
		if ep.Kind == cluster.Local {
			return "", fmt.Errorf("--fork: cannot fork the local cluster itself; give a cluster moniker or an RPC URL")
		}
		return ep.BaseRPC, nil
	}
	list, err := cluster.NewAllowList(allow)
	if err != nil {
		return "", err
	}
	if !list.Allows(name) {
		return "", apierr.New(http.StatusBadRequest, apierr.CodeUpstreamNotAllowed,
			fmt.Sprintf("--fork %s is not allowed: add it to --allow-upstream (or %s) to fork it", chainclient.RedactURL(name), cluster.AllowEnv))
	}
	return name, nil
}

// startFork makes p's base ledger a lazy fork and prefetches the clones.
func startFork(o Options, p *localnet.Pair) (*ForkInfo, error) {
	f := o.Fork
	u, err := forkURL(f.Cluster, o.AllowUpstream)
	if err != nil {
		return nil, err
	}
	c, err := chainclient.New(u)
	if err != nil {
		return nil, fmt.Errorf("--fork: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), ForkTimeout)
	defer cancel()
	slot, err := c.GetSlot(ctx, chainclient.Confirmed)
	if err != nil {
		return nil, fmt.Errorf("--fork: read the slot of %s: %w", chainclient.RedactURL(u), err)
	}
	if f.Slot > slot {
		return nil, fmt.Errorf("--fork-slot %d: %s is at slot %d (a JSON-RPC node serves its current state only; fork at or below it)", f.Slot, chainclient.RedactURL(u), slot)
	}
	if f.Slot != 0 {
		slot = f.Slot
	}
	p.Base.SetAccountSource(&remoteSource{c: c, name: chainclient.RedactURL(u)})
	info := &ForkInfo{URL: chainclient.RedactURL(u), Slot: slot}
	if len(f.Clone) > 0 {
		if err := p.Base.Prefetch(ctx, f.Clone...); err != nil {
			return nil, fmt.Errorf("--clone: %w", err)
		}
		got, _ := p.Base.Accounts(f.Clone, ledger.Processed)
		for i, a := range got {
			if a == nil {
				return nil, fmt.Errorf("--clone %s: no such account on %s", f.Clone[i], info.URL)
			}
		}
		info.Cloned = len(f.Clone)
	}
	o.Logger.Info("base layer forked", "cluster", info.URL, "forkSlot", info.Slot, "cloned", info.Cloned)
	return info, nil
}

// ReadCloneFile reads addresses to clone, one per line (blank lines and
// # comments skipped), as --clone-file takes them.
func ReadCloneFile(path string) ([]solana.PublicKey, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--clone-file: %w", err)
	}
	defer fh.Close()
	var out []solana.PublicKey
	sc := bufio.NewScanner(io.LimitReader(fh, MaxCloneFileBytes+1))
	n, size := 0, 0
	for sc.Scan() {
		n++
		size += len(sc.Bytes()) + 1
		if size > MaxCloneFileBytes {
			return nil, fmt.Errorf("--clone-file %s: larger than %d bytes", path, MaxCloneFileBytes)
		}
		line := strings.TrimSpace(sc.Text())
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if line == "" {
			continue
		}
		k, err := solana.PublicKeyFromBase58(line)
		if err != nil {
			return nil, fmt.Errorf("--clone-file %s line %d: %q is not an address", path, n, line)
		}
		out = append(out, k)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--clone-file %s: %w", path, err)
	}
	return out, nil
}
