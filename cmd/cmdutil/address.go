package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/inputlimit"
	"github.com/ferry-sh/ferry/pkg/submit"
)

// ResolveAddress turns a command-line wallet argument into an address: a
// base58 public key, or the path of a Solana CLI keypair file (whose public
// key is used). An empty argument means the default keypair's address.
func (f *Factory) ResolveAddress(arg string) (solana.PublicKey, error) {
	if arg == "" {
		k, err := f.LoadKeypair()
		if err != nil {
			p, _ := f.KeypairPath()
			if errors.Is(err, os.ErrNotExist) {
				return solana.PublicKey{}, fmt.Errorf("no address given and no keypair at %s: pass an ADDRESS, --keypair FILE, or create one with `ferry keygen`", p)
			}
			return solana.PublicKey{}, err
		}
		return PublicKeyOf(k), nil
	}
	if k, err := inputlimit.PublicKey(arg); err == nil { // length-checked before decoding
		return k, nil
	}
	if _, err := os.Stat(arg); err == nil || LooksLikePath(arg) {
		k, err := ReadKeypairFile(arg)
		if err != nil {
			return solana.PublicKey{}, err
		}
		return PublicKeyOf(k), nil
	}
	return solana.PublicKey{}, UsageErrorf("%q is neither a base58 address nor a keypair file", arg)
}

// MaxProcessingAge is how many blocks a blockhash stays valid after the
// block that produced it (Agave's MAX_PROCESSING_AGE).
const MaxProcessingAge = 150

// WaitConfirmed waits until sig is confirmed on c, for a transaction whose
// blockhash is at most as recent as the chain's current block height (an
// airdrop, a faucet transaction, a transaction without its build
// response): its last valid block height cannot exceed the current
// height plus MaxProcessingAge, so that bound decides when it expired.
// Failures are the payments API's errors (TRANSACTION_FAILED,
// TRANSACTION_EXPIRED, RPC_ERROR).
func WaitConfirmed(ctx context.Context, c *chainclient.Client, sig solana.Signature, s *submit.Sender) error {
	h, err := c.GetBlockHeight(ctx, chainclient.Processed)
	if err != nil {
		return fmt.Errorf("confirm %s: %w", sig, err)
	}
	if s == nil {
		s = &submit.Sender{}
	}
	return s.Confirm(ctx, c, sig, h+MaxProcessingAge)
}
