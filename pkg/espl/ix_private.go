package espl

import (
	"crypto/ed25519"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// Sizes of the encrypted fields of ix 25 (§9.1).
const (
	SealedDestinationSize        = 32 + EncryptionOverhead // 80
	PrivateTransferSuffixSize    = 20
	PrivateTransferSuffixRefSize = 28
	sealedSuffixSize             = PrivateTransferSuffixSize + EncryptionOverhead    // 68
	sealedSuffixRefSize          = PrivateTransferSuffixRefSize + EncryptionOverhead // 76
	maxGroupIDRerolls            = 16
)

// PrivateTransferSuffix is the plaintext of ix 25's encrypted suffix:
// minDelayMs u64 ‖ maxDelayMs u64 ‖ split u32 [‖ clientRefId u64] (20 or
// 28 bytes).
type PrivateTransferSuffix struct {
	MinDelayMs  uint64
	MaxDelayMs  uint64
	Split       uint32
	ClientRefID *uint64 // nil → the 20-byte form
}

// Encode returns the 20- or 28-byte plaintext.
func (s PrivateTransferSuffix) Encode() []byte {
	b := make([]byte, 0, PrivateTransferSuffixRefSize)
	b = appendU64(b, s.MinDelayMs)
	b = appendU64(b, s.MaxDelayMs)
	b = appendU32(b, s.Split)
	if s.ClientRefID != nil {
		b = appendU64(b, *s.ClientRefID)
	}
	return b
}

// DecodePrivateTransferSuffix parses a 20- or 28-byte suffix plaintext.
func DecodePrivateTransferSuffix(b []byte) (PrivateTransferSuffix, error) {
	if len(b) != PrivateTransferSuffixSize && len(b) != PrivateTransferSuffixRefSize {
		return PrivateTransferSuffix{}, fmt.Errorf("decode private transfer suffix: %w: %d bytes, want 20 or 28", ErrInvalidInstruction, len(b))
	}
	s := PrivateTransferSuffix{
		MinDelayMs: binary.LittleEndian.Uint64(b),
		MaxDelayMs: binary.LittleEndian.Uint64(b[8:]),
		Split:      binary.LittleEndian.Uint32(b[16:]),
	}
	if len(b) == PrivateTransferSuffixRefSize {
		v := binary.LittleEndian.Uint64(b[20:])
		s.ClientRefID = &v
	}
	return s, nil
}

// GroupIDOf returns the group id the program assigns to the transfers of
// an ix 25: the first three bytes (little-endian) of the sealed
// destination, i.e. of its ephemeral public key (§9.2).
func GroupIDOf(sealedDestination [SealedDestinationSize]byte) uint32 {
	return uint24(sealedDestination[:3])
}

// SealPrivateTransfer produces ix 25's two encrypted fields for key's
// validator: the sealed destination owner (80 bytes) and the sealed
// suffix (68 or 76 bytes). The destination is re-sealed with a fresh
// ephemeral key while its group id (epk[0..3]) would be zero, which the
// program rejects.
func SealPrivateTransfer(key *SealKey, destination solana.PublicKey, suffix PrivateTransferSuffix, rand io.Reader) (sealedDestination [SealedDestinationSize]byte, sealedSuffix []byte, err error) {
	for i := 0; ; i++ {
		if i == maxGroupIDRerolls {
			return sealedDestination, nil, errors.New("seal private transfer: random source keeps producing group id 0")
		}
		if _, err = key.appendSeal(sealedDestination[:0], destination[:], rand); err != nil {
			return sealedDestination, nil, fmt.Errorf("seal private transfer destination: %w", err)
		}
		if GroupIDOf(sealedDestination) != 0 {
			break
		}
	}
	sealedSuffix, err = key.Seal(suffix.Encode(), rand)
	if err != nil {
		return sealedDestination, nil, fmt.Errorf("seal private transfer suffix: %w", err)
	}
	return sealedDestination, sealedSuffix, nil
}

// PrivateTransferPayload is the decrypted content of an ix 25.
type PrivateTransferPayload struct {
	Destination solana.PublicKey // the recipient's owner key
	PrivateTransferSuffix
	GroupID uint32 // derived from the sealed destination, see GroupIDOf
}

// OpenPrivateTransfer decrypts ix's destination and suffix with the
// validator's ed25519 private key.
func OpenPrivateTransfer(validatorKey ed25519.PrivateKey, ix PrivateTransferIx) (PrivateTransferPayload, error) {
	dst, err := Open(validatorKey, ix.EncryptedDestination[:])
	if err != nil {
		return PrivateTransferPayload{}, fmt.Errorf("open ix 25 destination: %w", err)
	}
	if len(dst) != 32 {
		return PrivateTransferPayload{}, fmt.Errorf("open ix 25 destination: %w: %d-byte plaintext, want 32", ErrInvalidInstruction, len(dst))
	}
	plain, err := Open(validatorKey, ix.EncryptedSuffix)
	if err != nil {
		return PrivateTransferPayload{}, fmt.Errorf("open ix 25 suffix: %w", err)
	}
	suf, err := DecodePrivateTransferSuffix(plain)
	if err != nil {
		return PrivateTransferPayload{}, fmt.Errorf("open ix 25 suffix: %w", err)
	}
	return PrivateTransferPayload{
		Destination:           solana.PublicKeyFromBytes(dst),
		PrivateTransferSuffix: suf,
		GroupID:               ix.GroupID(),
	}, nil
}

// ---- ix 25 DepositAndDelegateShuttleEphemeralAtaWithMergeAndPrivateTransfer ----

// PrivateTransferArgs are the arguments of PrivateTransfer.
type PrivateTransferArgs struct {
	Payer        solana.PublicKey // pays fees and the 2 039 280-lamport setup; zero → Owner
	Owner        solana.PublicKey // the sender; signs
	Mint         solana.PublicKey
	TokenProgram solana.PublicKey // zero → SPL Token
	Validator    solana.PublicKey // required: queue seeds and encryption recipient
	// Destination is the recipient's owner key (a wallet or a stealth
	// pool). It only travels sealed; it is never an account.
	Destination solana.PublicKey
	ShuttleID   uint32 // see RandomShuttleID
	Amount      uint64
	// DeductFee takes the 10-bps privacy fee out of Amount (exactOut =
	// false). The default, false, is the SDK and API default exactOut =
	// true: the recipient gets Amount and the sender pays the fee on top.
	DeductFee   bool
	MinDelayMs  uint64
	MaxDelayMs  uint64           // 0 → MinDelayMs
	Split       uint32           // 0 → 1
	ClientRefID *uint64          // nil → 68-byte sealed suffix
	Source      solana.PublicKey // sender's token account; zero → ATA(owner, mint)
	Rand        io.Reader        // ephemeral keys; nil → crypto/rand
	Cache       *Cache           // vault, queue, rent PDA, ATAs and the seal key
}

// PrivateTransfer builds ix 25 (private base→base): deposit into the
// vault through a delegated shuttle whose ER post-actions queue Split
// delayed transfers to the sealed Destination. The data is
// [25] ‖ shuttleId u32 ‖ amount u64 ‖ exactOut u8 ‖ sealedDestination[80] ‖
// 1 ‖ validator[32] ‖ len u8 ‖ sealedSuffix (196 or 204 bytes).
//
// It fails for a zero Owner, Validator or Destination, Amount 0,
// MaxDelayMs < MinDelayMs, a Split larger than the queued amount, or when
// sealing fails.
func PrivateTransfer(a PrivateTransferArgs) (txwire.Instruction, error) {
	ix, err := a.resolve()
	if err != nil {
		return txwire.Instruction{}, err
	}
	return ix.Instruction(), nil
}

func (a *PrivateTransferArgs) resolve() (PrivateTransferIx, error) {
	if a.Owner.IsZero() || a.Validator.IsZero() || a.Destination.IsZero() {
		return PrivateTransferIx{}, fmt.Errorf("build ix 25: %w: owner, validator and destination are required", ErrInvalidInstruction)
	}
	suffix := PrivateTransferSuffix{MinDelayMs: a.MinDelayMs, MaxDelayMs: a.MaxDelayMs, Split: a.Split, ClientRefID: a.ClientRefID}
	if suffix.MaxDelayMs == 0 {
		suffix.MaxDelayMs = suffix.MinDelayMs
	}
	if suffix.Split == 0 {
		suffix.Split = 1
	}
	queued, _, _, ok := PrivateTransferAmounts(a.Amount, !a.DeductFee)
	switch {
	case a.Amount == 0:
		return PrivateTransferIx{}, fmt.Errorf("build ix 25: %w: amount is zero", ErrInvalidInstruction)
	case !ok:
		return PrivateTransferIx{}, fmt.Errorf("build ix 25: %w: amount plus fee overflows", ErrInvalidInstruction)
	case suffix.MaxDelayMs < suffix.MinDelayMs:
		return PrivateTransferIx{}, fmt.Errorf("build ix 25: %w: maxDelayMs %d < minDelayMs %d", ErrInvalidInstruction, suffix.MaxDelayMs, suffix.MinDelayMs)
	case uint64(suffix.Split) > queued:
		return PrivateTransferIx{}, fmt.Errorf("build ix 25: %w: split %d exceeds the queued amount %d", ErrInvalidInstruction, suffix.Split, queued)
	}
	key, err := a.Cache.SealKey(a.Validator)
	if err != nil {
		return PrivateTransferIx{}, fmt.Errorf("build ix 25: %w", err)
	}
	encDest, encSuffix, err := SealPrivateTransfer(key, a.Destination, suffix, a.Rand)
	if err != nil {
		return PrivateTransferIx{}, fmt.Errorf("build ix 25: %w", err)
	}

	c := a.Cache
	tp := tokenProgramOr(a.TokenProgram)
	sh := deriveShuttle(a.Owner, a.Mint, tp, a.ShuttleID)
	rent, _ := c.FindRentPDA()
	vault, _ := c.FindGlobalVault(a.Mint)
	vata, _ := c.FindAssociatedTokenAddress(vault, a.Mint, tp)
	queue, _ := c.FindTransferQueue(a.Mint, a.Validator)
	src := a.Source
	if src.IsZero() {
		src, _ = c.FindAssociatedTokenAddress(a.Owner, a.Mint, tp)
	}
	v := a.Validator
	return PrivateTransferIx{
		Payer: orKey(a.Payer, a.Owner), RentPDA: rent, ShuttleMetadata: sh.meta, ShuttleEphemeralATA: sh.eata,
		ShuttleWalletATA: sh.wallet, Owner: a.Owner, OwnerProgram: ProgramID, Buffer: sh.buffer,
		DelegationRecord: sh.record, DelegationMetadata: sh.dmeta, DelegationProgram: DelegationProgramID,
		AssociatedTokenProgram: spl.AssociatedTokenProgramID, SystemProgram: spl.SystemProgramID, Mint: a.Mint,
		TokenProgram: tp, Vault: vault, Source: src, VaultATA: vata, Queue: queue,
		ShuttleID: a.ShuttleID, Amount: a.Amount, ExactOut: !a.DeductFee, EncryptedDestination: encDest,
		Validator: &v, EncryptedSuffix: encSuffix,
	}, nil
}

// PrivateTransferIx is ix 25
// DepositAndDelegateShuttleEphemeralAtaWithMergeAndPrivateTransfer. The
// destination owner is not an account: it is only inside
// EncryptedDestination.
type PrivateTransferIx struct {
	Payer                  solana.PublicKey // S W
	RentPDA                solana.PublicKey // W
	ShuttleMetadata        solana.PublicKey // W
	ShuttleEphemeralATA    solana.PublicKey // W
	ShuttleWalletATA       solana.PublicKey // W
	Owner                  solana.PublicKey // S, the sender
	OwnerProgram           solana.PublicKey // ESPL
	Buffer                 solana.PublicKey // W
	DelegationRecord       solana.PublicKey // W
	DelegationMetadata     solana.PublicKey // W
	DelegationProgram      solana.PublicKey
	AssociatedTokenProgram solana.PublicKey
	SystemProgram          solana.PublicKey
	Mint                   solana.PublicKey
	TokenProgram           solana.PublicKey
	Vault                  solana.PublicKey
	Source                 solana.PublicKey // W, owner's source ATA
	VaultATA               solana.PublicKey // W
	Queue                  solana.PublicKey // W, must already be delegated

	ShuttleID            uint32
	Amount               uint64
	ExactOut             bool
	EncryptedDestination [SealedDestinationSize]byte
	Validator            *solana.PublicKey // explicit option; nil when the tag is 0
	EncryptedSuffix      []byte
	// LegacyLayout marks the SDK ≤ 0.14 layout without the exactOut byte.
	// The decoder then reports ExactOut = true, the value the hosted API
	// splices in by default; Instruction re-encodes the legacy layout.
	LegacyLayout bool
}

// Discriminator is IxDepositAndDelegateShuttleEphemeralATAWithMergeAndPrivateTransfer.
func (PrivateTransferIx) Discriminator() Discriminator {
	return IxDepositAndDelegateShuttleEphemeralATAWithMergeAndPrivateTransfer
}

// GroupID is the group id of the transfers this instruction queues (see
// GroupIDOf).
func (ix PrivateTransferIx) GroupID() uint32 { return GroupIDOf(ix.EncryptedDestination) }

// Instruction encodes ix.
func (ix PrivateTransferIx) Instruction() txwire.Instruction {
	return build(ix.Discriminator(), ix.refs(), ix.data())
}

func (ix *PrivateTransferIx) data() []byte {
	b := make([]byte, 0, 1+4+8+1+SealedDestinationSize+1+32+1+len(ix.EncryptedSuffix))
	b = append(b, byte(ix.Discriminator()))
	b = appendU32(b, ix.ShuttleID)
	b = appendU64(b, ix.Amount)
	if !ix.LegacyLayout {
		if ix.ExactOut {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	}
	b = append(b, ix.EncryptedDestination[:]...)
	if ix.Validator != nil {
		b = append(b, 1)
		b = append(b, ix.Validator[:]...)
	} else {
		b = append(b, 0)
	}
	b = append(b, byte(len(ix.EncryptedSuffix)))
	return append(b, ix.EncryptedSuffix...)
}

// decodeData parses the current layout and, failing that, the legacy one
// without exactOut (§9.1). A current-layout instruction always parses as
// current; the legacy fallback only applies when it does not.
func (ix *PrivateTransferIx) decodeData(args []byte) error {
	err := ix.decodeLayout(args, false)
	if err == nil {
		return nil
	}
	if ix.decodeLayout(args, true) == nil {
		return nil
	}
	*ix = PrivateTransferIx{}
	return err
}

func (ix *PrivateTransferIx) decodeLayout(args []byte, legacy bool) error {
	fixed := 4 + 8 + SealedDestinationSize + 1
	if !legacy {
		fixed++
	}
	if len(args) < fixed+1 {
		return argLenErr(len(args), fmt.Sprintf("at least %d", fixed+1))
	}
	ix.ShuttleID = binary.LittleEndian.Uint32(args)
	ix.Amount = binary.LittleEndian.Uint64(args[4:])
	off := 12
	ix.LegacyLayout = legacy
	ix.ExactOut = true
	if !legacy {
		switch args[off] {
		case 0:
			ix.ExactOut = false
		case 1:
		default:
			return fmt.Errorf("%w: exactOut byte %d", ErrInvalidInstruction, args[off])
		}
		off++
	}
	copy(ix.EncryptedDestination[:], args[off:])
	off += SealedDestinationSize
	ix.Validator = nil
	switch args[off] {
	case 0:
		off++
	case 1:
		off++
		if len(args) < off+32+1 {
			return argLenErr(len(args), "room for the validator")
		}
		v := solana.PublicKeyFromBytes(args[off : off+32])
		ix.Validator = &v
		off += 32
	default:
		return fmt.Errorf("%w: validator option tag %d", ErrInvalidInstruction, args[off])
	}
	n := int(args[off])
	off++
	if len(args) != off+n {
		return argLenErr(len(args), fmt.Sprintf("%d for a %d-byte suffix", off+n, n))
	}
	ix.EncryptedSuffix = append([]byte(nil), args[off:]...)
	return nil
}

// Fields lists shuttleId, amount, exactOut, validator, groupId and the
// sizes of the encrypted fields. The destination is not shown: it is
// sealed.
func (ix PrivateTransferIx) Fields() []Field {
	f := []Field{fU64("shuttleId", uint64(ix.ShuttleID)), fU64("amount", ix.Amount), fBool("exactOut", ix.ExactOut)}
	f = fOptKey(f, "validator", ix.Validator)
	f = append(f, fU64("groupId", uint64(ix.GroupID())),
		Field{"encryptedDestination", fmt.Sprintf("%d bytes (epk %s…)", len(ix.EncryptedDestination), hex.EncodeToString(ix.EncryptedDestination[:4]))},
		Field{"encryptedSuffix", fmt.Sprintf("%d bytes", len(ix.EncryptedSuffix))})
	if ix.LegacyLayout {
		f = append(f, Field{"layout", "legacy (no exactOut byte)"})
	}
	return f
}

// Accounts lists the accounts by role.
func (ix PrivateTransferIx) Accounts() []Account { return accountsOf(&ix) }

func (ix *PrivateTransferIx) refs() []*solana.PublicKey {
	return []*solana.PublicKey{&ix.Payer, &ix.RentPDA, &ix.ShuttleMetadata, &ix.ShuttleEphemeralATA,
		&ix.ShuttleWalletATA, &ix.Owner, &ix.OwnerProgram, &ix.Buffer, &ix.DelegationRecord, &ix.DelegationMetadata,
		&ix.DelegationProgram, &ix.AssociatedTokenProgram, &ix.SystemProgram, &ix.Mint, &ix.TokenProgram,
		&ix.Vault, &ix.Source, &ix.VaultATA, &ix.Queue}
}

// QueueInstruction assembles the ix 16 that the validator runs on the ER
// as post-action (b) of this ix 25 (§9.3), from the decrypted payload:
// amount = the queued amount (PrivateTransferAmounts with ix.ExactOut),
// groupId = ix.GroupID(), the decrypted delays, split and clientRefId, and
// destination = the decrypted owner. The reference does not list that
// inner instruction's accounts; ferry uses the SDK's choices for a direct
// ix 16: vault authority = the queue, source = reimbursement = the
// owner's ATA, and the 12-account form. ok is false when the amount
// overflows.
func (ix PrivateTransferIx) QueueInstruction(p PrivateTransferPayload) (q DepositAndQueueTransferIx, ok bool) {
	queued, _, _, ok := PrivateTransferAmounts(ix.Amount, ix.ExactOut)
	if !ok {
		return DepositAndQueueTransferIx{}, false
	}
	src := spl.AssociatedTokenAddress(ix.Owner, ix.Mint, ix.TokenProgram)
	qata := spl.AssociatedTokenAddress(ix.Queue, ix.Mint, ix.TokenProgram)
	receipt, _ := FindGroupReceipt(ix.Queue, ix.Owner, ix.GroupID())
	return DepositAndQueueTransferIx{
		Queue: ix.Queue, VaultAuthority: ix.Queue, Mint: ix.Mint, Source: src, QueueVaultATA: qata,
		Destination: p.Destination, Owner: ix.Owner, TokenProgram: ix.TokenProgram, Reimbursement: src,
		GroupReceipt: receipt, MagicVault: MagicVaultID, MagicProgram: MagicProgramID,
		Amount: queued, GroupID: ix.GroupID(), MinDelayMs: p.MinDelayMs, MaxDelayMs: p.MaxDelayMs,
		Split: p.Split, ClientRefID: p.ClientRefID,
	}, true
}
