package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/cluster"
	"github.com/ferry-sh/ferry/pkg/keyfile"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/localnet"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// Demo files in the data directory.
const (
	// DemoFile records the demo mint and wallets, so a restart shows the
	// same ones.
	DemoFile = "demo.json"
	// WalletsDir holds the demo wallets' keypair files.
	WalletsDir = "wallets"
)

// Demo defaults.
const (
	DefaultDemoDecimals = 6
	// DefaultDemoLamports is each demo wallet's airdrop (100 SOL).
	DefaultDemoLamports = 100 * 1_000_000_000
	// DefaultDemoTokens is each demo wallet's demo-mint balance in base
	// units (1000 tokens of 6 decimals).
	DefaultDemoTokens = 1_000 * 1_000_000
)

// DefaultDemoWallets are the demo wallets' names.
var DefaultDemoWallets = []string{"alice", "bob", "carol"}

// DemoOptions configure the demo mint and wallets of local mode. The zero
// value makes the defaults.
type DemoOptions struct {
	// Disabled makes no demo mint and no wallets.
	Disabled bool
	// Wallets are the wallets' names (DefaultDemoWallets when nil).
	Wallets []string
	// Lamports and Tokens fund each wallet (defaults above).
	Lamports, Tokens uint64
}

// Demo is what local mode sets up on first start: a mint whose authority
// is the faucet (so `ferry mint` mints more), set up for private payments
// (initialize-mint), and funded wallets whose keypair files are in the
// data directory, like those solana-test-validator and anvil print.
type Demo struct {
	Mint     string       `json:"mint"`
	Decimals uint8        `json:"decimals"`
	Wallets  []DemoWallet `json:"wallets"`
}

// DemoWallet is one demo wallet and what it was funded with.
type DemoWallet struct {
	Name    string `json:"name"`
	Address string `json:"address"`
	// Keypair is the path of its Solana CLI keypair file.
	Keypair  string `json:"keypair"`
	Lamports uint64 `json:"lamports"`
	Tokens   uint64 `json:"tokens"`
}

// demoStagingPrefix names the directories in which a demo's wallets are
// made before the demo is complete.
const demoStagingPrefix = ".demo-staging-"

// ensureDemo returns the demo of dir, creating it when there is none (or
// its mint is not on the ledger, e.g. after the ledgers were deleted by
// hand); created reports that it made one. In memory (dir == "") the
// keypairs go to a temporary directory removed at shutdown.
//
// Creation is all or nothing. The wallets' keys are made in a staging
// directory and funded there; only then does the staging directory become
// wallets/ and, last, demo.json is written (atomically): demo.json is the
// mark of a complete demo. A start that stopped before writing it left
// either a staging directory or a wallets/ without demo.json; both are
// discarded and the demo is made again with new keys, so no wallet is
// ever funded twice and the banner says the demo was created now.
func ensureDemo(ctx context.Context, p *localnet.Pair, o DemoOptions, dir string, s *Server) (d *Demo, created bool, err error) {
	if o.Disabled {
		return nil, false, nil
	}
	if dir != "" {
		if d, err := readDemo(dir); err != nil {
			return nil, false, err
		} else if d != nil {
			if m, err := solana.PublicKeyFromBase58(d.Mint); err == nil {
				if a, _ := p.Base.Account(m, ledger.Processed); a != nil {
					return d, false, nil
				}
			}
		}
		// No complete demo: whatever an unfinished one left goes.
		if err := removeDemoStaging(dir); err != nil {
			return nil, false, fmt.Errorf("demo wallets: %w", err)
		}
		if err := os.RemoveAll(filepath.Join(dir, WalletsDir)); err != nil {
			return nil, false, fmt.Errorf("demo wallets: %w", err)
		}
	}
	var staging, walletDir string
	if dir == "" {
		tmp, err := os.MkdirTemp("", "ferry-demo-wallets-")
		if err != nil {
			return nil, false, fmt.Errorf("demo wallets: %w", err)
		}
		s.OnShutdown(func(context.Context) error { return os.RemoveAll(tmp) })
		staging, walletDir = tmp, tmp
	} else {
		if staging, err = os.MkdirTemp(dir, demoStagingPrefix); err != nil {
			return nil, false, fmt.Errorf("demo wallets: %w", err)
		}
		walletDir = filepath.Join(dir, WalletsDir)
	}
	d, err = createDemo(ctx, p, o, staging, walletDir)
	if err != nil {
		return nil, false, err
	}
	// Clients read at "confirmed" (the planner, ferry balance): serve
	// only once the demo is confirmed on base, so the first command after
	// startup already sees it. The rollup side needs no wait: the bridge
	// works through base slots in order, so the queue's delegation is
	// cloned before any later transfer's post-delegation action runs.
	if err := p.Base.WaitForSlot(ctx, p.Base.Slot(ledger.Processed), ledger.Confirmed); err != nil {
		return nil, false, fmt.Errorf("demo: %w", err)
	}
	if dir != "" {
		if err := os.Rename(staging, walletDir); err != nil {
			return nil, false, fmt.Errorf("demo wallets: %w", err)
		}
		if err := writeDemo(dir, d); err != nil {
			return nil, false, err
		}
	}
	return d, true, nil
}

// removeDemoStaging deletes the staging directories an unfinished demo
// creation left in dir.
func removeDemoStaging(dir string) error {
	old, err := filepath.Glob(filepath.Join(dir, demoStagingPrefix+"*"))
	if err != nil {
		return err
	}
	for _, p := range old {
		if err := os.RemoveAll(p); err != nil {
			return err
		}
	}
	return nil
}

// createDemo makes the demo mint and wallets: the keys are written to
// keyDir, and the Demo records them under walletDir, where they will be.
func createDemo(ctx context.Context, p *localnet.Pair, o DemoOptions, keyDir, walletDir string) (*Demo, error) {
	names := o.Wallets
	if names == nil {
		names = DefaultDemoWallets
	}
	lamports, tokens := o.Lamports, o.Tokens
	if lamports == 0 {
		lamports = DefaultDemoLamports
	}
	if tokens == 0 {
		tokens = DefaultDemoTokens
	}
	f := p.Base.Faucet()
	mint, _, err := f.CreateMint(ctx, ledger.MintOptions{Decimals: DefaultDemoDecimals})
	if err != nil {
		return nil, fmt.Errorf("demo mint: %w", err)
	}
	if err := initializeMint(ctx, p, mint); err != nil {
		return nil, fmt.Errorf("demo mint: %w", err)
	}
	d := &Demo{Mint: mint.String(), Decimals: DefaultDemoDecimals}
	for _, name := range names {
		key, created, err := keyfile.LoadOrCreate(filepath.Join(keyDir, name+".json"))
		if err != nil {
			return nil, fmt.Errorf("demo wallet %s: %w", name, err)
		}
		if !created {
			// The staging directory is new: a key already there is not
			// ours, and funding it could fund a wallet twice.
			return nil, fmt.Errorf("demo wallet %s: %s already exists", name, filepath.Join(keyDir, name+".json"))
		}
		owner := solana.PublicKeyFromBytes(key[32:])
		if _, err := f.Airdrop(ctx, owner, lamports); err != nil {
			return nil, fmt.Errorf("demo wallet %s: %w", name, err)
		}
		if _, err := f.MintTo(ctx, mint, owner, tokens); err != nil {
			return nil, fmt.Errorf("demo wallet %s: %w", name, err)
		}
		d.Wallets = append(d.Wallets, DemoWallet{Name: name, Address: owner.String(), Keypair: filepath.Join(walletDir, name+".json"), Lamports: lamports, Tokens: tokens})
	}
	return d, nil
}

// initializeMint runs the one-time setup of (mint, local validator) for
// private payments (POST /v1/spl/initialize-mint), paid by the faucet.
// It builds against processed state so that it needs no slot to pass.
func initializeMint(ctx context.Context, p *localnet.Pair, mint solana.PublicKey) error {
	faucet := p.Base.FaucetKey()
	out, err := (&payments.Planner{}).InitializeMint(ctx, processedChain{p}, &payments.InitializeMintRequest{
		Payer: solana.PublicKeyFromBytes(faucet[32:]).String(), Mint: mint.String(),
	})
	if err != nil {
		return fmt.Errorf("initialize mint: %w", err)
	}
	tx, err := txwire.DecodeBase64(out.TransactionBase64)
	if err != nil {
		return fmt.Errorf("initialize mint: %w", err)
	}
	if err := tx.Sign(faucet); err != nil {
		return fmt.Errorf("initialize mint: %w", err)
	}
	rec, err := p.Base.Process(ctx, tx.Bytes())
	if err != nil {
		return fmt.Errorf("initialize mint: %w", err)
	}
	if rec.Err != nil {
		return fmt.Errorf("initialize mint: %w", rec.Err)
	}
	return nil
}

// processedChain is a payments.Chain over the pair at processed
// commitment (the demo setup runs before any slot has passed).
type processedChain struct{ p *localnet.Pair }

func (c processedChain) LatestBlockhash(_ context.Context, layer string) (payments.Blockhash, error) {
	l := c.p.Base
	if layer == payments.Ephemeral {
		l = c.p.Ephemeral
	}
	bh, _ := l.LatestBlockhash(ledger.Processed)
	return payments.Blockhash{Hash: bh.Blockhash, LastValidBlockHeight: bh.LastValidBlockHeight}, nil
}

func (c processedChain) Account(_ context.Context, key solana.PublicKey) (*payments.Account, error) {
	a, _ := c.p.Base.Account(key, ledger.Processed)
	if a == nil {
		return nil, nil
	}
	return &payments.Account{Owner: a.Owner, Lamports: a.Lamports, Data: a.Data}, nil
}

func (c processedChain) Identity(context.Context) (solana.PublicKey, error) {
	return c.p.Identity(), nil
}

func (c processedChain) EphemeralEndpoint() string { return "" }

func (c processedChain) Cluster() cluster.Kind { return cluster.Local }

func readDemo(dir string) (*Demo, error) {
	b, err := os.ReadFile(filepath.Join(dir, DemoFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read demo wallets: %w", err)
	}
	var d Demo
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, DemoFile), err)
	}
	return &d, nil
}

func writeDemo(dir string, d *Demo) error {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return fmt.Errorf("write demo wallets: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".demo-*.json")
	if err != nil {
		return fmt.Errorf("write demo wallets: %w", err)
	}
	_, werr := tmp.Write(append(b, '\n'))
	if err := errors.Join(werr, tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write demo wallets: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, DemoFile)); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write demo wallets: %w", err)
	}
	return nil
}
