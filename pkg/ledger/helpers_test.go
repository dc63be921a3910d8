package ledger

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// openTest opens a manual-slot ledger (in memory unless cfg.DataDir is
// set) that is closed when the test ends.
func openTest(t testing.TB, cfg Config) *Ledger {
	t.Helper()
	cfg.ManualSlots = true
	if cfg.Name == "" {
		cfg.Name = "test"
	}
	l, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Error(err)
		}
	})
	return l
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newKey(t testing.TB) ed25519.PrivateKey {
	t.Helper()
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// buildTx compiles and signs ixs with the latest processed blockhash.
func buildTx(t testing.TB, l *Ledger, payer ed25519.PrivateKey, ixs []txwire.Instruction, signers ...ed25519.PrivateKey) []byte {
	t.Helper()
	bh, _ := l.LatestBlockhash(Processed)
	return buildTxWith(t, bh.Blockhash, payer, ixs, signers...)
}

func buildTxWith(t testing.TB, bh solana.Hash, payer ed25519.PrivateKey, ixs []txwire.Instruction, signers ...ed25519.PrivateKey) []byte {
	t.Helper()
	msg, err := txwire.Compile(pubkeyOf(payer), ixs, bh)
	if err != nil {
		t.Fatal(err)
	}
	tx := txwire.NewUnsigned(msg)
	if err := tx.Sign(append([]ed25519.PrivateKey{payer}, signers...)...); err != nil {
		t.Fatal(err)
	}
	return tx.Bytes()
}

// mustProcess processes a transaction that must land and succeed.
func mustProcess(t testing.TB, l *Ledger, raw []byte) *TxRecord {
	t.Helper()
	rec, err := l.Process(ctxT(t), raw)
	if err != nil {
		t.Fatalf("process: %v", err)
	}
	if rec.Err != nil {
		t.Fatalf("transaction failed: %v\nlogs: %q", rec.Err, rec.Meta.Logs)
	}
	return rec
}

// fundedWallet airdrops lamports to a new key.
func fundedWallet(t testing.TB, l *Ledger, lamports uint64) ed25519.PrivateKey {
	t.Helper()
	k := newKey(t)
	if _, err := l.Faucet().Airdrop(ctxT(t), pubkeyOf(k), lamports); err != nil {
		t.Fatal(err)
	}
	return k
}

// tokenSetup is a mint with decimals 6 and two funded owners holding ATAs.
type tokenSetup struct {
	mint           solana.PublicKey
	alice, bob     ed25519.PrivateKey
	aliceAta, bobA solana.PublicKey
}

func setupToken(t testing.TB, l *Ledger, aliceAmount uint64) tokenSetup {
	t.Helper()
	ctx := ctxT(t)
	f := l.Faucet()
	mint, _, err := f.CreateMint(ctx, MintOptions{Decimals: 6})
	if err != nil {
		t.Fatal(err)
	}
	s := tokenSetup{mint: mint, alice: fundedWallet(t, l, 10_000_000_000), bob: fundedWallet(t, l, 10_000_000_000)}
	s.aliceAta = spl.AssociatedTokenAddress(pubkeyOf(s.alice), mint, spl.TokenProgramID)
	s.bobA = spl.AssociatedTokenAddress(pubkeyOf(s.bob), mint, spl.TokenProgramID)
	if _, err := f.MintTo(ctx, mint, pubkeyOf(s.alice), aliceAmount); err != nil {
		t.Fatal(err)
	}
	mustProcess(t, l, buildTx(t, l, s.bob, []txwire.Instruction{
		spl.CreateAssociatedTokenAccount(pubkeyOf(s.bob), pubkeyOf(s.bob), mint, spl.TokenProgramID, true),
	}))
	return s
}

func tokenAmount(t testing.TB, l *Ledger, key solana.PublicKey, c Commitment) uint64 {
	t.Helper()
	a, _ := l.Account(key, c)
	if a == nil {
		return 0
	}
	ta, err := spl.DecodeTokenAccount(a.Data)
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	return ta.Amount
}

func isTxErr(err error, target error) bool { return errors.Is(err, target) }
