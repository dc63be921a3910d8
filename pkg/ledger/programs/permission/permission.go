// Package permission is a minimal native implementation of MagicBlock's
// permission (ACL) program (ACLseoPoyC3cBqoUtkbjZ4aDrkurZW86v19pXz2XQnp1)
// for ferry's ledgers: it creates and updates the permission account
// ["permission:", account] that eSPL ix 6, 12 and 22 (base) and ix 16
// (ephemeral, hosted-API form) attach to eATAs, transfer queues, stealth
// pools and group receipts. Ferry records the members but enforces no
// read restrictions (a private ER's TEE would); see docs/localnet.md.
//
// Instruction data is ferry-local: a one-byte discriminator followed by
// the member list (count u8 ‖ count × (key[32] ‖ flags u8)).
package permission

import (
	"errors"
	"fmt"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/delegation"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/internal/progutil"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/magic"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// ProgramID is the permission program's id.
var ProgramID = espl.PermissionProgramID

// BaseCost is the compute units one instruction charges.
const BaseCost = 2_000

// Member flags.
const (
	// FlagAuthority lets a member update the permission.
	FlagAuthority uint8 = 1 << 0
	// FlagRead marks a member allowed to read the account on a private ER.
	FlagRead uint8 = 1 << 1
)

// MaxMembers bounds a permission's member list.
const MaxMembers = 16

// Instruction discriminators.
const (
	DiscCreate uint8 = 0
	DiscUpdate uint8 = 1
)

// Errors (ferry-local custom codes).
var (
	// ErrUnauthorized: the signer is not an authority member.
	ErrUnauthorized = runtime.Custom(0)
)

// Registration returns the program's registration.
func Registration() *runtime.Registration {
	return &runtime.Registration{ID: ProgramID, Name: "Permission Program", Program: runtime.ProgramFunc(execute), BaseCost: BaseCost}
}

// Member is one entry of a permission.
type Member struct {
	Key   solana.PublicKey
	Flags uint8
}

// Permission is the permission account (ferry's layout): version u8 (1) ‖
// bump u8 ‖ account[32] ‖ count u8 ‖ count × (key[32] ‖ flags u8).
type Permission struct {
	Bump    uint8
	Account solana.PublicKey
	Members []Member
}

// Size is the account size of a permission with n members.
func Size(n int) int { return 35 + 33*n }

// ErrInvalidPermission is returned for data that does not decode.
var ErrInvalidPermission = errors.New("invalid permission")

// Encode serializes p.
func (p Permission) Encode() []byte {
	b := make([]byte, 0, Size(len(p.Members)))
	b = append(b, 1, p.Bump)
	b = append(b, p.Account[:]...)
	b = append(b, byte(len(p.Members)))
	for _, m := range p.Members {
		b = append(append(b, m.Key[:]...), m.Flags)
	}
	return b
}

// Decode parses a permission account.
func Decode(data []byte) (Permission, error) {
	if len(data) < 35 || data[0] != 1 || len(data) != Size(int(data[34])) {
		return Permission{}, fmt.Errorf("decode permission: %w", ErrInvalidPermission)
	}
	p := Permission{Bump: data[1], Account: solana.PublicKeyFromBytes(data[2:34])}
	for i := 0; i < int(data[34]); i++ {
		o := 35 + 33*i
		p.Members = append(p.Members, Member{Key: solana.PublicKeyFromBytes(data[o : o+32]), Flags: data[o+32]})
	}
	return p, nil
}

// Address is the permission PDA of account.
func Address(account solana.PublicKey) solana.PublicKey {
	k, _ := espl.FindPermission(account)
	return k
}

func encodeMembers(d uint8, members []Member) []byte {
	b := []byte{d, byte(len(members))}
	for _, m := range members {
		b = append(append(b, m.Key[:]...), m.Flags)
	}
	return b
}

func decodeMembers(b []byte) ([]Member, error) {
	if len(b) < 1 || int(b[0]) > MaxMembers || len(b) != 1+33*int(b[0]) {
		return nil, fmt.Errorf("%w: bad member list", ErrInvalidPermission)
	}
	out := make([]Member, b[0])
	for i := range out {
		o := 1 + 33*i
		out[i] = Member{Key: solana.PublicKeyFromBytes(b[o : o+32]), Flags: b[o+32]}
	}
	return out, nil
}

// Create builds Create for a program to invoke (signing for account, its
// PDA): create account's permission with members, idempotently. payer
// funds it through the System program (base), or, with sponsoredByVault,
// the ephemeral vault does through the Magic program (ephemeral rollup).
// Accounts: 0 account S · 1 permission W · 2 payer S W (or the vault W) ·
// 3 System program (or the Magic program).
func Create(account, payer solana.PublicKey, members []Member, sponsoredByVault bool) txwire.Instruction {
	metas := []txwire.AccountMeta{txwire.Signer(account), txwire.Writable(Address(account))}
	if sponsoredByVault {
		metas = append(metas, txwire.Writable(magic.VaultID), txwire.Readonly(magic.ProgramID))
	} else {
		metas = append(metas, txwire.WritableSigner(payer), txwire.Readonly(spl.SystemProgramID))
	}
	return txwire.Instruction{ProgramID: ProgramID, Accounts: metas, Data: encodeMembers(DiscCreate, members)}
}

// Update builds Update: an authority member replaces the member list;
// payer tops up the rent when the account grows. Accounts: 0 authority S ·
// 1 permission W · 2 payer S W · 3 System program.
func Update(authority, account, payer solana.PublicKey, members []Member) txwire.Instruction {
	return txwire.Instruction{ProgramID: ProgramID, Data: encodeMembers(DiscUpdate, members), Accounts: []txwire.AccountMeta{
		txwire.Signer(authority), txwire.Writable(Address(account)), txwire.WritableSigner(payer), txwire.Readonly(spl.SystemProgramID),
	}}
}

func execute(ctx *runtime.Context) error {
	if err := ctx.Consume(BaseCost); err != nil {
		return err
	}
	data := ctx.Data()
	if _, ok := delegation.ParseUndelegateCallback(data); ok {
		return delegation.TakeBack(ctx)
	}
	if len(data) == 0 {
		return runtime.ErrInvalidInstructionData
	}
	members, err := decodeMembers(data[1:])
	if err != nil {
		ctx.Log(err.Error())
		return runtime.ErrInvalidInstructionData
	}
	switch data[0] {
	case DiscCreate:
		ctx.Log("Instruction: CreatePermission")
		return create(ctx, members)
	case DiscUpdate:
		ctx.Log("Instruction: UpdatePermission")
		return update(ctx, members)
	}
	return runtime.ErrInvalidInstructionData
}

func create(ctx *runtime.Context, members []Member) error {
	a, err := ctx.Accounts(4)
	if err != nil {
		return err
	}
	acct, perm, payer, funder := a[0], a[1], a[2], a[3]
	// The permissioned account's owner program consents by signing for it.
	if err := progutil.Signer(ctx, acct, "permissioned account"); err != nil {
		return err
	}
	key, bump, err := progutil.Find(ctx, ProgramID, []byte(espl.SeedPermission), acct.Key[:])
	if err != nil {
		return err
	}
	if err := progutil.Key(ctx, perm, key, "permission"); err != nil {
		return err
	}
	if perm.Owner == ProgramID {
		return nil // idempotent
	}
	if err := progutil.Writable(ctx, perm, "permission"); err != nil {
		return err
	}
	data := Permission{Bump: bump, Account: acct.Key, Members: members}.Encode()
	seeds := [][]byte{[]byte(espl.SeedPermission), acct.Key[:], {bump}}
	switch funder.Key {
	case spl.SystemProgramID:
		if err := progutil.SignerWritable(ctx, payer, "payer"); err != nil {
			return err
		}
		if err := progutil.CreatePDA(ctx, payer, perm, seeds, len(data), ProgramID); err != nil {
			return err
		}
	case magic.ProgramID:
		if err := ctx.Invoke(magic.CreateEphemeralAccount(perm.Key, uint32(len(data))), seeds); err != nil {
			return err
		}
	default:
		ctx.Logf("%s is neither the System nor the Magic program", funder.Key)
		return runtime.ErrIncorrectProgramID
	}
	copy(perm.Data, data)
	return nil
}

func update(ctx *runtime.Context, members []Member) error {
	a, err := ctx.Accounts(4)
	if err != nil {
		return err
	}
	auth, perm, payer := a[0], a[1], a[2]
	if err := progutil.Signer(ctx, auth, "authority"); err != nil {
		return err
	}
	if err := progutil.Owner(ctx, perm, ProgramID, "permission"); err != nil {
		return err
	}
	if err := progutil.Writable(ctx, perm, "permission"); err != nil {
		return err
	}
	p, err := Decode(perm.Data)
	if err != nil {
		return runtime.ErrInvalidAccountData
	}
	allowed := false
	for _, m := range p.Members {
		allowed = allowed || (m.Key == auth.Key && m.Flags&FlagAuthority != 0)
	}
	if !allowed {
		ctx.Logf("%s is not an authority of %s", auth.Key, perm.Key)
		return ErrUnauthorized
	}
	p.Members = members
	data := p.Encode()
	if need := ctx.Env().Rent.MinimumBalance(len(data)); need > perm.Lamports {
		if err := progutil.SignerWritable(ctx, payer, "payer"); err != nil {
			return err
		}
		if err := ctx.Invoke(spl.SystemTransfer(payer.Key, perm.Key, need-perm.Lamports)); err != nil {
			return err
		}
	}
	perm.Data = data
	return nil
}
