package espl

import (
	"fmt"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// ---- ix 21 UpdateStealthPool (ER) ----

// UpdateStealthPoolArgs are the arguments of UpdateStealthPool.
type UpdateStealthPoolArgs struct {
	Payer        solana.PublicKey
	Authority    solana.PublicKey // signs
	Handle       []byte           // 1..255 bytes of UTF-8, verbatim
	Flags        uint8            // StealthFlagSplitAcrossKeys or 0
	Destinations []solana.PublicKey
	Cache        *Cache
}

// UpdateStealthPool builds ix 21 (sent to the ER with the bearer token):
// set a pool's flags and destinations. Data [21] ‖ handleStorage[256] ‖
// flags ‖ count ‖ count × 32. It fails for an invalid handle, unknown flag
// bits or a destination count outside 1..10.
func UpdateStealthPool(a UpdateStealthPoolArgs) (txwire.Instruction, error) {
	pool, _, err := a.Cache.FindStealthPool(a.Handle)
	if err != nil {
		return txwire.Instruction{}, fmt.Errorf("build ix 21: %w", err)
	}
	ix := UpdateStealthPoolIx{
		Payer: a.Payer, Pool: pool, Authority: a.Authority, SystemProgram: spl.SystemProgramID,
		Handle: a.Handle, Flags: a.Flags, Destinations: a.Destinations,
	}
	if err := ix.Validate(); err != nil {
		return txwire.Instruction{}, fmt.Errorf("build ix 21: %w", err)
	}
	return ix.Instruction(), nil
}

// UpdateStealthPoolIx is ix 21 UpdateStealthPool.
type UpdateStealthPoolIx struct {
	Payer         solana.PublicKey // S W
	Pool          solana.PublicKey // W
	Authority     solana.PublicKey // S
	SystemProgram solana.PublicKey

	Handle       []byte
	Flags        uint8
	Destinations []solana.PublicKey
}

// Discriminator is IxUpdateStealthPool.
func (UpdateStealthPoolIx) Discriminator() Discriminator { return IxUpdateStealthPool }

// Validate checks the handle, flags and destinations (see
// ValidateStealthDestinations).
func (ix UpdateStealthPoolIx) Validate() error {
	if err := ValidateHandle(ix.Handle); err != nil {
		return err
	}
	return ValidateStealthDestinations(ix.Flags, ix.Destinations)
}

// Instruction encodes ix. An invalid handle is encoded as zero storage; a
// decoded instruction always has a valid one.
func (ix UpdateStealthPoolIx) Instruction() txwire.Instruction {
	h, _ := EncodeHandle(ix.Handle)
	data := make([]byte, 0, 1+HandleStorageSize+2+32*len(ix.Destinations))
	data = append(data, byte(ix.Discriminator()))
	data = append(data, h[:]...)
	data = append(data, ix.Flags, byte(len(ix.Destinations)))
	for _, d := range ix.Destinations {
		data = append(data, d[:]...)
	}
	return build(ix.Discriminator(), ix.refs(), data)
}

func (ix *UpdateStealthPoolIx) decodeData(args []byte) error {
	if len(args) < HandleStorageSize+2 {
		return argLenErr(len(args), "at least 258")
	}
	h, err := DecodeHandle(args[:HandleStorageSize])
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidInstruction, err)
	}
	count := int(args[HandleStorageSize+1])
	if len(args) != HandleStorageSize+2+32*count {
		return argLenErr(len(args), fmt.Sprintf("%d for %d destinations", HandleStorageSize+2+32*count, count))
	}
	ix.Handle = append([]byte(nil), h...)
	ix.Flags = args[HandleStorageSize]
	ix.Destinations = make([]solana.PublicKey, count)
	for i := range ix.Destinations {
		copy(ix.Destinations[i][:], args[HandleStorageSize+2+32*i:])
	}
	return nil
}

// Fields lists handle, flags and each destination.
func (ix UpdateStealthPoolIx) Fields() []Field {
	f := []Field{{"handle", fmt.Sprintf("%q", ix.Handle)}, fU64("flags", uint64(ix.Flags)),
		fU64("destinationCount", uint64(len(ix.Destinations)))}
	for i, d := range ix.Destinations {
		f = append(f, fKey(fmt.Sprintf("destination[%d]", i), d))
	}
	return f
}

// Accounts lists the accounts by role.
func (ix UpdateStealthPoolIx) Accounts() []Account { return accountsOf(&ix) }

func (ix *UpdateStealthPoolIx) refs() []*solana.PublicKey {
	return []*solana.PublicKey{&ix.Payer, &ix.Pool, &ix.Authority, &ix.SystemProgram}
}

// ---- ix 22 EnsureStealthPoolDelegated ----

// EnsureStealthPoolDelegatedArgs are the arguments of
// EnsureStealthPoolDelegated.
type EnsureStealthPoolDelegatedArgs struct {
	Payer     solana.PublicKey
	Authority solana.PublicKey // signs
	Handle    []byte
	Validator solana.PublicKey // zero → omitted (257-byte data)
	Cache     *Cache
}

// EnsureStealthPoolDelegated builds ix 22 (base): create the pool and its
// permission if needed and delegate the pool. Data [22] ‖
// handleStorage[256] [‖ validator]. It fails for an invalid handle.
func EnsureStealthPoolDelegated(a EnsureStealthPoolDelegatedArgs) (txwire.Instruction, error) {
	pool, _, err := a.Cache.FindStealthPool(a.Handle)
	if err != nil {
		return txwire.Instruction{}, fmt.Errorf("build ix 22: %w", err)
	}
	perm, _ := a.Cache.FindPermission(pool)
	buf, rec, meta := a.Cache.delegationPDAs(pool, ProgramID)
	return EnsureStealthPoolDelegatedIx{
		Payer: a.Payer, Pool: pool, Permission: perm, OwnerProgram: ProgramID, Buffer: buf, DelegationRecord: rec,
		DelegationMetadata: meta, DelegationProgram: DelegationProgramID, SystemProgram: spl.SystemProgramID,
		PermissionProgram: PermissionProgramID, Authority: a.Authority, Handle: a.Handle,
		Validator: optKey(a.Validator),
	}.Instruction(), nil
}

// EnsureStealthPoolDelegatedIx is ix 22 EnsureStealthPoolDelegated.
type EnsureStealthPoolDelegatedIx struct {
	Payer              solana.PublicKey // S W
	Pool               solana.PublicKey // W
	Permission         solana.PublicKey // W, permission(pool)
	OwnerProgram       solana.PublicKey // ESPL
	Buffer             solana.PublicKey // W
	DelegationRecord   solana.PublicKey // W
	DelegationMetadata solana.PublicKey // W
	DelegationProgram  solana.PublicKey
	SystemProgram      solana.PublicKey
	PermissionProgram  solana.PublicKey
	Authority          solana.PublicKey // S

	Handle    []byte
	Validator *solana.PublicKey
}

// Discriminator is IxEnsureStealthPoolDelegated.
func (EnsureStealthPoolDelegatedIx) Discriminator() Discriminator {
	return IxEnsureStealthPoolDelegated
}

// Instruction encodes ix. An invalid handle is encoded as zero storage.
func (ix EnsureStealthPoolDelegatedIx) Instruction() txwire.Instruction {
	h, _ := EncodeHandle(ix.Handle)
	data := make([]byte, 0, 1+HandleStorageSize+32)
	data = append(data, byte(ix.Discriminator()))
	data = append(data, h[:]...)
	return build(ix.Discriminator(), ix.refs(), appendOptKey(data, ix.Validator))
}

func (ix *EnsureStealthPoolDelegatedIx) decodeData(args []byte) error {
	if len(args) != HandleStorageSize && len(args) != HandleStorageSize+32 {
		return argLenErr(len(args), "256 or 288")
	}
	h, err := DecodeHandle(args[:HandleStorageSize])
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidInstruction, err)
	}
	ix.Handle = append([]byte(nil), h...)
	ix.Validator, _ = optKeyArg(args[HandleStorageSize:])
	return nil
}

// Fields lists handle and validator.
func (ix EnsureStealthPoolDelegatedIx) Fields() []Field {
	return fOptKey([]Field{{"handle", fmt.Sprintf("%q", ix.Handle)}}, "validator", ix.Validator)
}

// Accounts lists the accounts by role.
func (ix EnsureStealthPoolDelegatedIx) Accounts() []Account { return accountsOf(&ix) }

func (ix *EnsureStealthPoolDelegatedIx) refs() []*solana.PublicKey {
	return []*solana.PublicKey{&ix.Payer, &ix.Pool, &ix.Permission, &ix.OwnerProgram, &ix.Buffer,
		&ix.DelegationRecord, &ix.DelegationMetadata, &ix.DelegationProgram, &ix.SystemProgram,
		&ix.PermissionProgram, &ix.Authority}
}
