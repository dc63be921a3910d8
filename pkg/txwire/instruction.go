package txwire

import "github.com/gagliardetto/solana-go"

// AccountMeta is one account an instruction reads or writes.
type AccountMeta struct {
	PublicKey  solana.PublicKey
	IsSigner   bool
	IsWritable bool
}

// Meta returns an AccountMeta; it keeps instruction builders short.
func Meta(key solana.PublicKey, signer, writable bool) AccountMeta {
	return AccountMeta{PublicKey: key, IsSigner: signer, IsWritable: writable}
}

// Readonly is a read-only, non-signer account.
func Readonly(key solana.PublicKey) AccountMeta { return AccountMeta{PublicKey: key} }

// Writable is a writable, non-signer account.
func Writable(key solana.PublicKey) AccountMeta {
	return AccountMeta{PublicKey: key, IsWritable: true}
}

// Signer is a read-only signer account.
func Signer(key solana.PublicKey) AccountMeta {
	return AccountMeta{PublicKey: key, IsSigner: true}
}

// WritableSigner is a writable signer account.
func WritableSigner(key solana.PublicKey) AccountMeta {
	return AccountMeta{PublicKey: key, IsSigner: true, IsWritable: true}
}

// Instruction is an uncompiled instruction: a program, the accounts it
// touches in the program's expected order, and opaque data.
type Instruction struct {
	ProgramID solana.PublicKey
	Accounts  []AccountMeta
	Data      []byte
}

// RequiredSigners returns the keys that must sign a transaction built from
// ixs with the given fee payer, in the hosted API's order: the fee payer
// first, then every signer account in instruction and account order, each
// key once. This is not the order of the signatures on the wire.
func RequiredSigners(feePayer solana.PublicKey, ixs []Instruction) []solana.PublicKey {
	out := []solana.PublicKey{feePayer}
	for _, ix := range ixs {
		for _, m := range ix.Accounts {
			if !m.IsSigner {
				continue
			}
			seen := false
			for _, k := range out {
				if k == m.PublicKey {
					seen = true
					break
				}
			}
			if !seen {
				out = append(out, m.PublicKey)
			}
		}
	}
	return out
}
