package spl

import (
	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/txwire"
)

// Memo records UTF-8 text in the transaction. The payments API adds memos
// without signer accounts; signers, if given, must sign the transaction.
func Memo(text string, signers ...solana.PublicKey) txwire.Instruction {
	ix := txwire.Instruction{ProgramID: MemoProgramID, Data: []byte(text)}
	for _, s := range signers {
		ix.Accounts = append(ix.Accounts, txwire.Signer(s))
	}
	return ix
}
