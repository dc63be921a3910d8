// Package spl encodes and decodes the well-known Solana programs ferry's
// payment flows touch: System, SPL Token and Token-2022 (core), Associated
// Token Account, Memo and Compute Budget. It holds their program ids,
// instruction encoders and decoders, and the Mint and token-account layouts.
// It is pure data handling: no RPC, no execution.
package spl

import "github.com/gagliardetto/solana-go"

// Program and well-known account ids.
var (
	SystemProgramID          = solana.SystemProgramID
	TokenProgramID           = solana.MustPublicKeyFromBase58("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")
	Token2022ProgramID       = solana.MustPublicKeyFromBase58("TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb")
	AssociatedTokenProgramID = solana.MustPublicKeyFromBase58("ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL")
	MemoProgramID            = solana.MustPublicKeyFromBase58("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr")
	MemoV1ProgramID          = solana.MustPublicKeyFromBase58("Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo")
	ComputeBudgetProgramID   = solana.MustPublicKeyFromBase58("ComputeBudget111111111111111111111111111111")
	NativeMintID             = solana.MustPublicKeyFromBase58("So11111111111111111111111111111111111111112")
	SysvarRentID             = solana.MustPublicKeyFromBase58("SysvarRent111111111111111111111111111111111")
	SysvarClockID            = solana.MustPublicKeyFromBase58("SysvarC1ock11111111111111111111111111111111")
)

// More well-known ids.
var (
	// NativeMint2022ID is Token-2022's wrapped-SOL mint (Token uses NativeMintID).
	NativeMint2022ID = solana.MustPublicKeyFromBase58("9pan9bMn5HatX4EJdBwg9VgCa7Uz5HL8N1m5D3NdXejP")
	// IncineratorID is the burn address: token accounts it owns can be closed
	// without a signature, and lamports sent to it are destroyed.
	IncineratorID = solana.MustPublicKeyFromBase58("1nc1nerator11111111111111111111111111111111")
)

// IsTokenProgram reports whether id is SPL Token or Token-2022.
func IsTokenProgram(id solana.PublicKey) bool {
	return id == TokenProgramID || id == Token2022ProgramID
}

// AssociatedTokenAddress derives the associated token account of owner for
// mint under tokenProgram. Off-curve owners (PDAs) are allowed, as the
// vault and queue ATAs need them.
func AssociatedTokenAddress(owner, mint, tokenProgram solana.PublicKey) solana.PublicKey {
	k, _ := AssociatedTokenAddressBump(owner, mint, tokenProgram)
	return k
}

// AssociatedTokenAddressBump is AssociatedTokenAddress with the bump seed.
func AssociatedTokenAddressBump(owner, mint, tokenProgram solana.PublicKey) (solana.PublicKey, uint8) {
	k, bump, err := solana.FindProgramAddress([][]byte{owner[:], tokenProgram[:], mint[:]}, AssociatedTokenProgramID)
	if err != nil {
		// Unreachable: three 32-byte seeds always have a valid bump in practice
		// (failure probability 2^-256).
		panic("spl: no associated token address bump: " + err.Error())
	}
	return k, bump
}
