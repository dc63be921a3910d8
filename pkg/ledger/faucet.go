package ledger

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/gagliardetto/solana-go"

	rt "github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// Faucet funds wallets on a ledger with real, signed transactions from the
// faucet keypair, so every airdrop and mint has a queryable signature and
// goes through the same pipeline as any other transaction.
type Faucet struct {
	l   *Ledger
	key ed25519.PrivateKey
}

// Faucet returns the ledger's faucet.
func (l *Ledger) Faucet() *Faucet { return &Faucet{l: l, key: l.faucet} }

// PublicKey is the faucet's address.
func (f *Faucet) PublicKey() solana.PublicKey { return pubkeyOf(f.key) }

// Airdrop transfers lamports from the faucet (System transfer) and returns
// the transaction's signature once it is processed.
func (f *Faucet) Airdrop(ctx context.Context, to solana.PublicKey, lamports uint64) (solana.Signature, error) {
	if lamports == 0 {
		return solana.Signature{}, errors.New("airdrop: lamports must be positive")
	}
	sig, err := f.Run(ctx, []txwire.Instruction{spl.SystemTransfer(f.PublicKey(), to, lamports)})
	if err != nil {
		return sig, fmt.Errorf("airdrop %d lamports to %s: %w", lamports, to, err)
	}
	return sig, nil
}

// MintOptions describe a test mint.
type MintOptions struct {
	Decimals uint8
	// Authority is the mint authority (default: the faucet, so MintTo
	// works).
	Authority *solana.PublicKey
	// FreezeAuthority is optional.
	FreezeAuthority *solana.PublicKey
	// Token2022 creates the mint under Token-2022 instead of SPL Token.
	Token2022 bool
	// Key is the mint's keypair (default: a new random one).
	Key ed25519.PrivateKey
}

// CreateMint creates and initializes a mint, paid by the faucet, and
// returns its address.
func (f *Faucet) CreateMint(ctx context.Context, o MintOptions) (solana.PublicKey, solana.Signature, error) {
	key := o.Key
	if key == nil {
		var err error
		if _, key, err = ed25519.GenerateKey(rand.Reader); err != nil {
			return solana.PublicKey{}, solana.Signature{}, fmt.Errorf("create mint: %w", err)
		}
	}
	mint := pubkeyOf(key)
	program := spl.TokenProgramID
	if o.Token2022 {
		program = spl.Token2022ProgramID
	}
	auth := f.PublicKey()
	if o.Authority != nil {
		auth = *o.Authority
	}
	ixs := []txwire.Instruction{
		spl.SystemCreateAccount(f.PublicKey(), mint, f.l.cfg.Rent.MinimumBalance(spl.MintSize), spl.MintSize, program),
		spl.TokenInitializeMint2(program, mint, o.Decimals, auth, o.FreezeAuthority),
	}
	sig, err := f.Run(ctx, ixs, key)
	if err != nil {
		return mint, sig, fmt.Errorf("create mint: %w", err)
	}
	return mint, sig, nil
}

// MintTo mints amount base units of mint to owner's associated token
// account, creating it if needed. The faucet must be the mint authority
// (the default of CreateMint).
func (f *Faucet) MintTo(ctx context.Context, mint, owner solana.PublicKey, amount uint64) (solana.Signature, error) {
	m, _ := f.l.Account(mint, Processed)
	if m == nil || !spl.IsTokenProgram(m.Owner) {
		return solana.Signature{}, fmt.Errorf("mint to %s: %s is not a mint", owner, mint)
	}
	program := m.Owner
	ata := spl.AssociatedTokenAddress(owner, mint, program)
	ixs := []txwire.Instruction{
		spl.CreateAssociatedTokenAccount(f.PublicKey(), owner, mint, program, true),
		spl.TokenMintTo(program, mint, ata, f.PublicKey(), amount),
	}
	sig, err := f.Run(ctx, ixs)
	if err != nil {
		return sig, fmt.Errorf("mint %d of %s to %s: %w", amount, mint, owner, err)
	}
	return sig, nil
}

// Run signs ixs with the faucet as fee payer (plus extra signers), sends
// the transaction through the pipeline and waits until it is processed. A
// landed transaction that failed is an error carrying its *runtime.TxError.
// An identical transaction already landed in this blockhash's lifetime
// (same instructions, same blockhash) is retried with the next blockhash.
func (f *Faucet) Run(ctx context.Context, ixs []txwire.Instruction, signers ...ed25519.PrivateKey) (solana.Signature, error) {
	for {
		bh, _ := f.l.LatestBlockhash(Processed)
		msg, err := txwire.Compile(f.PublicKey(), ixs, bh.Blockhash)
		if err != nil {
			return solana.Signature{}, err
		}
		tx := txwire.NewUnsigned(msg)
		if err := tx.Sign(append([]ed25519.PrivateKey{f.key}, signers...)...); err != nil {
			return solana.Signature{}, err
		}
		rec, err := f.l.Process(ctx, tx.Bytes())
		if errors.Is(err, rt.ErrAlreadyProcessed) && !f.l.cfg.ManualSlots {
			// Wait for a new blockhash so the retry is a new transaction.
			if err := f.l.WaitForSlot(ctx, f.l.Slot(Processed)+1, Processed); err != nil {
				return tx.ID(), err
			}
			continue
		}
		if err != nil {
			return tx.ID(), err
		}
		if rec.Err != nil {
			return rec.Signature, rec.Err
		}
		return rec.Signature, nil
	}
}
