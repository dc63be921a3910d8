package txwire

import (
	"crypto/ed25519"
	"fmt"

	"github.com/gagliardetto/solana-go"
)

// Sign adds the signature of each key to the transaction. A key that is not
// one of the message's required signers is an error, so a wrong keypair is
// caught before the transaction is sent.
func (t *Transaction) Sign(keys ...ed25519.PrivateKey) error {
	msg := t.MessageBytes()
	signers := t.Message.Signers()
	if len(t.Signatures) != len(signers) {
		t.Signatures = append(t.Signatures, make([]solana.Signature, len(signers)-len(t.Signatures))...)
	}
	for _, k := range keys {
		if len(k) != ed25519.PrivateKeySize {
			return fmt.Errorf("sign: private key has %d bytes, want %d", len(k), ed25519.PrivateKeySize)
		}
		var pub solana.PublicKey
		copy(pub[:], k[32:])
		idx := -1
		for i, s := range signers {
			if s == pub {
				idx = i
				break
			}
		}
		if idx < 0 {
			return fmt.Errorf("sign: %s is not a required signer of this transaction", pub)
		}
		copy(t.Signatures[idx][:], ed25519.Sign(k, msg))
	}
	return nil
}

// MissingSigners lists required signers whose signature slot is still zero.
func (t *Transaction) MissingSigners() []solana.PublicKey {
	var out []solana.PublicKey
	for i, s := range t.Message.Signers() {
		if i >= len(t.Signatures) || t.Signatures[i].IsZero() {
			out = append(out, s)
		}
	}
	return out
}

// VerifySignatures checks every signature with the standard library. The
// embedded ledger uses a faster verifier on its hot path; this one is for
// tools and tests.
func (t *Transaction) VerifySignatures() error {
	msg := t.MessageBytes()
	signers := t.Message.Signers()
	if len(t.Signatures) != len(signers) {
		return fmt.Errorf("verify: %d signatures for %d signers", len(t.Signatures), len(signers))
	}
	for i, s := range signers {
		if !ed25519.Verify(s[:], msg, t.Signatures[i][:]) {
			return fmt.Errorf("verify: signature %d (%s) is invalid", i, s)
		}
	}
	return nil
}
