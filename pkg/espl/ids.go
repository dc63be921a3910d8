package espl

import "github.com/gagliardetto/solana-go"

// Program and well-known account ids (§1). The SPL programs (Token,
// Token-2022, ATA, Memo, System) and the native mint live in package spl.
var (
	// ProgramID is the Ephemeral SPL Token program ("ESPL", "e-token").
	ProgramID = solana.MustPublicKeyFromBase58("SPLxh1LVZzEkX99H6rqYizhytLWPZVV296zyYDPagv2")
	// DelegationProgramID is MagicBlock's delegation program ("DLP").
	DelegationProgramID = solana.MustPublicKeyFromBase58("DELeGGvXpWV2fqJUhqcF5ZSYMS4JTLjteaAMARRSaeSh")
	// MagicProgramID is the ER-native Magic program (commit/undelegate).
	MagicProgramID = solana.MustPublicKeyFromBase58("Magic11111111111111111111111111111111111111")
	// MagicContextID is the ER's Magic context account.
	MagicContextID = solana.MustPublicKeyFromBase58("MagicContext1111111111111111111111111111111")
	// MagicVaultID is the ER rent vault (the SDK's EPHEMERAL_VAULT_ID).
	MagicVaultID = solana.MustPublicKeyFromBase58("MagicVau1t999999999999999999999999999999999")
	// PermissionProgramID is the ACL (permission) program.
	PermissionProgramID = solana.MustPublicKeyFromBase58("ACLseoPoyC3cBqoUtkbjZ4aDrkurZW86v19pXz2XQnp1")
	// HydraProgramID is the Hydra scheduler/crank program (swap flows only).
	HydraProgramID = solana.MustPublicKeyFromBase58("Hydra17i1feui9deaxu6d1TzSQMRNHeBRkDR1Awy7zea")
)

// Stablecoin mints the hosted API uses as defaults (§1).
var (
	USDCMainnet = solana.MustPublicKeyFromBase58("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")
	USDCDevnet  = solana.MustPublicKeyFromBase58("4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU")
	USDTMainnet = solana.MustPublicKeyFromBase58("Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB")
	USDTDevnet  = solana.MustPublicKeyFromBase58("BQnB36y4tTb9K1fTXkU71Q8WQa4HSNNqYw4T3agViD1y")
)

// Address lookup tables the hosted API uses for the private base→base v0
// path (§1, §11.5).
var (
	PrivateTransferLUTMainnet = solana.MustPublicKeyFromBase58("54M1BrqVSg1UGTmhH44gQPsPVyuMpmcVBkaY2wYNSVZB")
	PrivateTransferLUTDevnet  = solana.MustPublicKeyFromBase58("E26JGdRsdKkGe6oRU4Un24agZjBF2Bg9z1ctfZByETRo")
)

// ER validator identities (§1.1). The identity is the delegation
// authority, part of the transfer-queue seeds and the recipient of the
// sealed boxes of private transfers.
var (
	ValidatorAsia  = solana.MustPublicKeyFromBase58("MAS1Dt9qreoRMQ14YQuhg8UTZMMzDdKhmkZMECCzk57")
	ValidatorEU    = solana.MustPublicKeyFromBase58("MEUGGrYPxKk17hCr7wpT6s8dtNokZj5U2L57vjYMS8e")
	ValidatorUS    = solana.MustPublicKeyFromBase58("MUS3hc9TCw4cGC12vHNoYcCGzJG1txjgQLZWVoeNHNd")
	ValidatorTEE   = solana.MustPublicKeyFromBase58("MTEWGuqxUpYZGFJQcp8tLN7x5v9BSeoFHYWQQ3n3xzo")
	ValidatorLocal = solana.MustPublicKeyFromBase58("mAGicPQYBMvcYveUZA5F5UNNwyHvfYh5xkLS2Fr1mev")
	// DefaultValidator is the hosted API's fallback when getIdentity fails
	// (the Asia validator).
	DefaultValidator = ValidatorAsia
	// ValidatorTEELegacy is the TEE identity an older docs page lists; the
	// current docs and the hosted API use ValidatorTEE.
	ValidatorTEELegacy = solana.MustPublicKeyFromBase58("FnE6VJT5QNZdedZPnCoLsARgBwoE6DeJNjBs2H1gySXA")
)

// ValidatorInfo describes one MagicBlock ER validator (§1.1).
type ValidatorInfo struct {
	Region     string // "as", "eu", "us", "tee" or "local"
	Identity   solana.PublicKey
	MainnetRPC string
	DevnetRPC  string // empty when there is none
}

// Validators returns the known ER validators in the order of §1.1. The
// slice is freshly allocated; callers may modify it.
func Validators() []ValidatorInfo {
	return []ValidatorInfo{
		{"as", ValidatorAsia, "https://as.magicblock.app", "https://devnet-as.magicblock.app"},
		{"eu", ValidatorEU, "https://eu.magicblock.app", "https://devnet-eu.magicblock.app"},
		{"us", ValidatorUS, "https://us.magicblock.app", "https://devnet-us.magicblock.app"},
		{"tee", ValidatorTEE, "https://mainnet-tee.magicblock.app", "https://devnet-tee.magicblock.app"},
		{"local", ValidatorLocal, "http://localhost:7799", ""},
	}
}

// Delegation routers (§1.1).
const (
	RouterMainnet = "https://router.magicblock.app/"
	RouterDevnet  = "https://devnet-router.magicblock.app/"
)
