package espl

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/spl"
)

// Seeds of the eSPL, DLP, ACL and Hydra PDAs (§3). They are exported for
// code that re-derives or signs for a PDA from its stored bump.
const (
	SeedRent                       = "rent"
	SeedQueue                      = "queue"
	SeedGroupReceipt               = "group-receipt"
	SeedQueueRefill                = "queue-refill"
	SeedLamports                   = "lamports"
	SeedStash                      = "stash"
	SeedCrank                      = "crank"
	SeedStealthPool                = "stealth_pool"
	StealthHandleHashDomain        = "stealth_pool_handle"
	SeedDelegation                 = "delegation"
	SeedDelegationMetadata         = "delegation-metadata"
	SeedBuffer                     = "buffer"
	SeedMagicFeeVault              = "magic-fee-vault"
	SeedStateDiff                  = "state-diff"
	SeedCommitStateRecord          = "commit-state-record"
	SeedUndelegateBuffer           = "undelegate-buffer"
	SeedFeesVault                  = "fees-vault"
	SeedValidatorFeesVault         = "v-fees-vault"
	SeedBalance                    = "balance"
	SeedPermission                 = "permission:"
	pdaMarker                      = "ProgramDerivedAddress"
	maxSeeds                       = 16 // including the bump
	maxSeedLen                     = 32
	maxPDAPreimage                 = maxSeeds*maxSeedLen + 32 + len(pdaMarker)
	groupIDMax              uint32 = 0xFFFFFF
)

// ErrInvalidSeeds is returned by FindProgramAddress and
// CreateProgramAddress for too many or too long seeds, and by
// CreateProgramAddress when the address falls on the curve.
var ErrInvalidSeeds = errors.New("invalid PDA seeds")

// CreateProgramAddress computes the program address of seeds (which must
// already include the bump) under program, as Solana's
// create_program_address does. It fails when a seed is longer than 32
// bytes, when there are more than 16 seeds, or when the hash is a valid
// ed25519 point. It does not allocate.
func CreateProgramAddress(seeds [][]byte, program solana.PublicKey) (solana.PublicKey, error) {
	if len(seeds) > maxSeeds {
		return solana.PublicKey{}, fmt.Errorf("create program address: %d seeds: %w", len(seeds), ErrInvalidSeeds)
	}
	var buf [maxPDAPreimage]byte
	n := 0
	for _, s := range seeds {
		if len(s) > maxSeedLen {
			return solana.PublicKey{}, fmt.Errorf("create program address: %d-byte seed: %w", len(s), ErrInvalidSeeds)
		}
		n += copy(buf[n:], s)
	}
	n += copy(buf[n:], program[:])
	n += copy(buf[n:], pdaMarker)
	h := sha256.Sum256(buf[:n])
	if solana.IsOnCurve(h[:]) {
		return solana.PublicKey{}, fmt.Errorf("create program address: address is on the curve: %w", ErrInvalidSeeds)
	}
	return h, nil
}

// FindProgramAddress finds the canonical program address of seeds under
// program: the first bump from 255 down to 1 whose address is off the
// curve, as Solana's find_program_address does. It is a non-allocating
// equivalent of solana.FindProgramAddress.
func FindProgramAddress(seeds [][]byte, program solana.PublicKey) (solana.PublicKey, uint8, error) {
	if len(seeds) >= maxSeeds {
		return solana.PublicKey{}, 0, fmt.Errorf("find program address: %d seeds: %w", len(seeds), ErrInvalidSeeds)
	}
	for _, s := range seeds {
		if len(s) > maxSeedLen {
			return solana.PublicKey{}, 0, fmt.Errorf("find program address: %d-byte seed: %w", len(s), ErrInvalidSeeds)
		}
	}
	k, bump, ok := findPDA(&program, seeds...)
	if !ok {
		return solana.PublicKey{}, 0, fmt.Errorf("find program address: no viable bump: %w", ErrInvalidSeeds)
	}
	return k, bump, nil
}

// findPDA is FindProgramAddress without seed validation; callers pass
// at most 15 seeds of at most 32 bytes.
func findPDA(program *solana.PublicKey, seeds ...[]byte) (solana.PublicKey, uint8, bool) {
	var buf [maxPDAPreimage]byte
	n := 0
	for _, s := range seeds {
		n += copy(buf[n:], s)
	}
	bumpAt := n
	n++
	n += copy(buf[n:], program[:])
	n += copy(buf[n:], pdaMarker)
	for bump := 255; bump > 0; bump-- {
		buf[bumpAt] = byte(bump)
		h := sha256.Sum256(buf[:n])
		if !solana.IsOnCurve(h[:]) {
			return h, uint8(bump), true
		}
	}
	return solana.PublicKey{}, 0, false
}

// mustPDA derives a PDA whose seeds are valid by construction. Failing
// to find a bump has probability 2^-255.
func mustPDA(program *solana.PublicKey, seeds ...[]byte) (solana.PublicKey, uint8) {
	k, bump, ok := findPDA(program, seeds...)
	if !ok {
		panic("espl: no viable PDA bump")
	}
	return k, bump
}

// pdaKind identifies one derivation rule; it is part of the cache key.
type pdaKind uint8

const (
	kindEATA pdaKind = iota + 1
	kindVault
	kindRent
	kindShuttleMetadata
	kindQueue
	kindGroupReceipt
	kindQueueRefill
	kindLamports
	kindStash
	kindCrank
	kindStealthPool
	kindDelegation
	kindDelegationMetadata
	kindBuffer
	kindMagicFeeVault
	kindStateDiff
	kindCommitStateRecord
	kindUndelegateBuffer
	kindFeesVault
	kindValidatorFeesVault
	kindBalance
	kindPermission
	kindATA
)

// pdaKey fully determines one derivation. It has no padding, so Go maps
// hash it as one block of memory.
type pdaKey struct {
	a, b, c solana.PublicKey
	n       uint32
	kind    pdaKind
	hlen    uint8 // stealth pools: handle length
	pad     [2]byte
}

// derive computes the address of k.
func derive(k *pdaKey) (solana.PublicKey, uint8) {
	switch k.kind {
	case kindEATA:
		return mustPDA(&ProgramID, k.a[:], k.b[:])
	case kindVault:
		return mustPDA(&ProgramID, k.a[:])
	case kindRent:
		return mustPDA(&ProgramID, []byte(SeedRent))
	case kindShuttleMetadata:
		var id [4]byte
		binary.LittleEndian.PutUint32(id[:], k.n)
		return mustPDA(&ProgramID, k.a[:], k.b[:], id[:])
	case kindQueue:
		return mustPDA(&ProgramID, []byte(SeedQueue), k.a[:], k.b[:])
	case kindGroupReceipt:
		var id [4]byte
		binary.LittleEndian.PutUint32(id[:], k.n)
		return mustPDA(&ProgramID, []byte(SeedGroupReceipt), k.a[:], k.b[:], id[:])
	case kindQueueRefill:
		return mustPDA(&ProgramID, []byte(SeedQueueRefill), k.a[:])
	case kindLamports:
		return mustPDA(&ProgramID, []byte(SeedLamports), k.a[:], k.b[:], k.c[:])
	case kindStash:
		return mustPDA(&ProgramID, []byte(SeedStash), k.a[:], k.b[:])
	case kindCrank:
		return mustPDA(&HydraProgramID, []byte(SeedCrank), k.a[:])
	case kindStealthPool:
		n := int(k.hlen)
		switch {
		case n <= 32:
			return mustPDA(&ProgramID, []byte(SeedStealthPool), k.a[:n])
		case n <= 64:
			return mustPDA(&ProgramID, []byte(SeedStealthPool), k.a[:], k.b[:n-32])
		default:
			return mustPDA(&ProgramID, []byte(SeedStealthPool), k.a[:], k.b[:])
		}
	case kindDelegation:
		return mustPDA(&DelegationProgramID, []byte(SeedDelegation), k.a[:])
	case kindDelegationMetadata:
		return mustPDA(&DelegationProgramID, []byte(SeedDelegationMetadata), k.a[:])
	case kindBuffer:
		return mustPDA(&k.b, []byte(SeedBuffer), k.a[:])
	case kindMagicFeeVault:
		return mustPDA(&DelegationProgramID, []byte(SeedMagicFeeVault), k.a[:])
	case kindStateDiff:
		return mustPDA(&DelegationProgramID, []byte(SeedStateDiff), k.a[:])
	case kindCommitStateRecord:
		return mustPDA(&DelegationProgramID, []byte(SeedCommitStateRecord), k.a[:])
	case kindUndelegateBuffer:
		return mustPDA(&DelegationProgramID, []byte(SeedUndelegateBuffer), k.a[:])
	case kindFeesVault:
		return mustPDA(&DelegationProgramID, []byte(SeedFeesVault))
	case kindValidatorFeesVault:
		return mustPDA(&DelegationProgramID, []byte(SeedValidatorFeesVault), k.a[:])
	case kindBalance:
		return mustPDA(&DelegationProgramID, []byte(SeedBalance), k.a[:], []byte{byte(k.n)})
	case kindPermission:
		return mustPDA(&PermissionProgramID, []byte(SeedPermission), k.a[:])
	case kindATA:
		return spl.AssociatedTokenAddressBump(k.a, k.b, k.c)
	}
	panic(fmt.Sprintf("espl: unknown PDA kind %d", k.kind))
}

// Key constructors shared by the pure functions and the Cache methods.

func keyEATA(owner, mint solana.PublicKey) pdaKey {
	return pdaKey{kind: kindEATA, a: owner, b: mint}
}
func keyVault(mint solana.PublicKey) pdaKey { return pdaKey{kind: kindVault, a: mint} }
func keyRent() pdaKey                       { return pdaKey{kind: kindRent} }
func keyShuttleMetadata(owner, mint solana.PublicKey, id uint32) pdaKey {
	return pdaKey{kind: kindShuttleMetadata, a: owner, b: mint, n: id}
}
func keyQueue(mint, validator solana.PublicKey) pdaKey {
	return pdaKey{kind: kindQueue, a: mint, b: validator}
}
func keyGroupReceipt(queue, source solana.PublicKey, id uint32) pdaKey {
	return pdaKey{kind: kindGroupReceipt, a: queue, b: source, n: id}
}
func keyQueueRefill(queue solana.PublicKey) pdaKey { return pdaKey{kind: kindQueueRefill, a: queue} }
func keyLamports(payer, destination solana.PublicKey, salt [32]byte) pdaKey {
	return pdaKey{kind: kindLamports, a: payer, b: destination, c: salt}
}
func keyStash(user, mint solana.PublicKey) pdaKey {
	return pdaKey{kind: kindStash, a: user, b: mint}
}
func keyCrank(stash solana.PublicKey, shuttleID uint32) pdaKey {
	binary.LittleEndian.PutUint32(stash[:4], shuttleID)
	return pdaKey{kind: kindCrank, a: stash}
}
func keyOf(kind pdaKind, a solana.PublicKey) pdaKey { return pdaKey{kind: kind, a: a} }
func keyBuffer(account, ownerProgram solana.PublicKey) pdaKey {
	return pdaKey{kind: kindBuffer, a: account, b: ownerProgram}
}
func keyBalance(authority solana.PublicKey, index uint8) pdaKey {
	return pdaKey{kind: kindBalance, a: authority, n: uint32(index)}
}
func keyATA(owner, mint, tokenProgram solana.PublicKey) pdaKey {
	return pdaKey{kind: kindATA, a: owner, b: mint, c: tokenProgram}
}

// keyStealthPool validates handle and packs its seeds into a key.
func keyStealthPool(handle []byte) (pdaKey, error) {
	if err := ValidateHandle(handle); err != nil {
		return pdaKey{}, err
	}
	k := pdaKey{kind: kindStealthPool, hlen: uint8(len(handle))}
	switch n := len(handle); {
	case n <= 32:
		copy(k.a[:], handle)
	case n <= 64:
		copy(k.a[:], handle[:32])
		copy(k.b[:], handle[32:])
	default:
		copy(k.a[:], handle[:32])
		k.b = stealthHandleHash(handle)
	}
	return k, nil
}

func stealthHandleHash(handle []byte) [32]byte {
	var buf [len(StealthHandleHashDomain) + MaxHandleLen]byte
	n := copy(buf[:], StealthHandleHashDomain)
	n += copy(buf[n:], handle)
	return sha256.Sum256(buf[:n])
}

// FindEphemeralATA derives the ephemeral ATA (eATA) of owner for mint:
// ESPL PDA [owner, mint].
func FindEphemeralATA(owner, mint solana.PublicKey) (solana.PublicKey, uint8) {
	k := keyEATA(owner, mint)
	return derive(&k)
}

// FindGlobalVault derives the global vault of mint: ESPL PDA [mint].
func FindGlobalVault(mint solana.PublicKey) (solana.PublicKey, uint8) {
	k := keyVault(mint)
	return derive(&k)
}

// FindVaultEphemeralATA derives the vault's eATA: ESPL PDA [vault, mint]
// where vault = FindGlobalVault(mint).
func FindVaultEphemeralATA(mint solana.PublicKey) (solana.PublicKey, uint8) {
	return (*Cache)(nil).FindVaultEphemeralATA(mint)
}

// FindVaultATA derives the vault's token account: the ATA of the global
// vault (an off-curve owner) for mint under tokenProgram.
func FindVaultATA(mint, tokenProgram solana.PublicKey) (solana.PublicKey, uint8) {
	return (*Cache)(nil).FindVaultATA(mint, tokenProgram)
}

// FindRentPDA derives the global rent PDA that sponsors shuttle and queue
// rent: ESPL PDA ["rent"].
func FindRentPDA() (solana.PublicKey, uint8) {
	k := keyRent()
	return derive(&k)
}

// FindShuttleMetadata derives the shuttle metadata account (the SDK's
// "shuttleEphemeralAta"): ESPL PDA [owner, mint, u32le(shuttleID)].
func FindShuttleMetadata(owner, mint solana.PublicKey, shuttleID uint32) (solana.PublicKey, uint8) {
	k := keyShuttleMetadata(owner, mint, shuttleID)
	return derive(&k)
}

// FindShuttleEphemeralATA derives the shuttle's eATA (the SDK's
// "shuttleAta"): ESPL PDA [shuttleMetadata, mint].
func FindShuttleEphemeralATA(shuttleMetadata, mint solana.PublicKey) (solana.PublicKey, uint8) {
	return FindEphemeralATA(shuttleMetadata, mint)
}

// FindShuttleWalletATA derives the shuttle's token account: the ATA of the
// shuttle metadata account for mint under tokenProgram.
func FindShuttleWalletATA(shuttleMetadata, mint, tokenProgram solana.PublicKey) (solana.PublicKey, uint8) {
	return spl.AssociatedTokenAddressBump(shuttleMetadata, mint, tokenProgram)
}

// FindTransferQueue derives the transfer queue of (mint, validator):
// ESPL PDA ["queue", mint, validator].
func FindTransferQueue(mint, validator solana.PublicKey) (solana.PublicKey, uint8) {
	k := keyQueue(mint, validator)
	return derive(&k)
}

// FindQueueEphemeralATA derives the queue's eATA: ESPL PDA [queue, mint].
func FindQueueEphemeralATA(queue, mint solana.PublicKey) (solana.PublicKey, uint8) {
	return FindEphemeralATA(queue, mint)
}

// FindQueueVaultATA derives the queue's token account: the ATA of the
// queue for mint under tokenProgram.
func FindQueueVaultATA(queue, mint, tokenProgram solana.PublicKey) (solana.PublicKey, uint8) {
	return spl.AssociatedTokenAddressBump(queue, mint, tokenProgram)
}

// FindGroupReceipt derives the receipt of one queued group: ESPL PDA
// ["group-receipt", queue, sourceAuthority, u32le(groupID)]. Valid group
// ids are 1..0xFFFFFF (see ValidGroupID); the derivation itself accepts
// any u32.
func FindGroupReceipt(queue, sourceAuthority solana.PublicKey, groupID uint32) (solana.PublicKey, uint8) {
	k := keyGroupReceipt(queue, sourceAuthority, groupID)
	return derive(&k)
}

// FindQueueRefillState derives the queue-refill state: ESPL PDA
// ["queue-refill", queue].
func FindQueueRefillState(queue solana.PublicKey) (solana.PublicKey, uint8) {
	k := keyQueueRefill(queue)
	return derive(&k)
}

// FindLamportsPDA derives a sponsored-lamports PDA: ESPL PDA
// ["lamports", payer, destination, salt].
func FindLamportsPDA(payer, destination solana.PublicKey, salt [32]byte) (solana.PublicKey, uint8) {
	k := keyLamports(payer, destination, salt)
	return derive(&k)
}

// FindQueueRefillLamportsPDA derives the queue-refill lamports PDA: the
// lamports PDA with payer = rent PDA, destination = queue and salt = the
// queue's bytes.
func FindQueueRefillLamportsPDA(queue solana.PublicKey) (solana.PublicKey, uint8) {
	return (*Cache)(nil).FindQueueRefillLamportsPDA(queue)
}

// FindStash derives the swap-flow stash: ESPL PDA ["stash", user, mint].
func FindStash(user, mint solana.PublicKey) (solana.PublicKey, uint8) {
	k := keyStash(user, mint)
	return derive(&k)
}

// FindHydraCrank derives the Hydra crank PDA of the swap flow: Hydra PDA
// ["crank", stash'] where stash' is the stash address with its first four
// bytes overwritten by u32le(shuttleID).
func FindHydraCrank(stash solana.PublicKey, shuttleID uint32) (solana.PublicKey, uint8) {
	k := keyCrank(stash, shuttleID)
	return derive(&k)
}

// FindStealthPool derives the stealth pool of handle (§3.1). The handle is
// 1..255 bytes of UTF-8, used verbatim (no trimming or case folding).
func FindStealthPool(handle []byte) (solana.PublicKey, uint8, error) {
	k, err := keyStealthPool(handle)
	if err != nil {
		return solana.PublicKey{}, 0, fmt.Errorf("derive stealth pool: %w", err)
	}
	addr, bump := derive(&k)
	return addr, bump, nil
}

// FindDelegationRecord derives the DLP delegation record of account: DLP
// PDA ["delegation", account].
func FindDelegationRecord(account solana.PublicKey) (solana.PublicKey, uint8) {
	k := keyOf(kindDelegation, account)
	return derive(&k)
}

// FindDelegationMetadata derives the DLP delegation metadata of account:
// DLP PDA ["delegation-metadata", account].
func FindDelegationMetadata(account solana.PublicKey) (solana.PublicKey, uint8) {
	k := keyOf(kindDelegationMetadata, account)
	return derive(&k)
}

// FindDelegateBuffer derives the delegate buffer of account: PDA
// ["buffer", account] under ownerProgram, the program that owns account
// before delegation (ProgramID for eATAs, shuttles, queues and pools;
// PermissionProgramID for permission accounts).
func FindDelegateBuffer(account, ownerProgram solana.PublicKey) (solana.PublicKey, uint8) {
	k := keyBuffer(account, ownerProgram)
	return derive(&k)
}

// FindMagicFeeVault derives a validator's magic fee vault: DLP PDA
// ["magic-fee-vault", validator].
func FindMagicFeeVault(validator solana.PublicKey) (solana.PublicKey, uint8) {
	k := keyOf(kindMagicFeeVault, validator)
	return derive(&k)
}

// FindStateDiff derives DLP PDA ["state-diff", account].
func FindStateDiff(account solana.PublicKey) (solana.PublicKey, uint8) {
	k := keyOf(kindStateDiff, account)
	return derive(&k)
}

// FindCommitStateRecord derives DLP PDA ["commit-state-record", account].
func FindCommitStateRecord(account solana.PublicKey) (solana.PublicKey, uint8) {
	k := keyOf(kindCommitStateRecord, account)
	return derive(&k)
}

// FindUndelegateBuffer derives DLP PDA ["undelegate-buffer", account].
func FindUndelegateBuffer(account solana.PublicKey) (solana.PublicKey, uint8) {
	k := keyOf(kindUndelegateBuffer, account)
	return derive(&k)
}

// FindFeesVault derives DLP PDA ["fees-vault"].
func FindFeesVault() (solana.PublicKey, uint8) {
	k := pdaKey{kind: kindFeesVault}
	return derive(&k)
}

// FindValidatorFeesVault derives DLP PDA ["v-fees-vault", validator].
func FindValidatorFeesVault(validator solana.PublicKey) (solana.PublicKey, uint8) {
	k := keyOf(kindValidatorFeesVault, validator)
	return derive(&k)
}

// FindBalance derives DLP PDA ["balance", authority, u8 index].
func FindBalance(authority solana.PublicKey, index uint8) (solana.PublicKey, uint8) {
	k := keyBalance(authority, index)
	return derive(&k)
}

// FindPermission derives the ACL permission account of account: ACL PDA
// ["permission:", account] (the colon is part of the seed).
func FindPermission(account solana.PublicKey) (solana.PublicKey, uint8) {
	k := keyOf(kindPermission, account)
	return derive(&k)
}

// ValidGroupID reports whether id is a usable 24-bit group id
// (1..0xFFFFFF).
func ValidGroupID(id uint32) bool { return id != 0 && id <= groupIDMax }
