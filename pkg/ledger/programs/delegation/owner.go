package delegation

import (
	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/internal/progutil"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
)

// OwnerDelegation is what an owner program passes to DelegateFromOwner.
type OwnerDelegation struct {
	Payer   *runtime.AccountRef // signs; pays the buffer, record and metadata rent
	Account *runtime.AccountRef // the PDA to delegate, owned by the calling program
	Buffer  *runtime.AccountRef // ["buffer", account] under the calling program
	Seeds   [][]byte            // Account's seeds, bump excluded
	Bump    uint8
	// Validator is the delegation's authority; nil lets DLP use its
	// default (the local validator).
	Validator *solana.PublicKey
}

// DelegateFromOwner is the owner-program side of a delegation, as the
// real delegation SDK's delegate_account does it: copy the account's data
// to the ["buffer", account] PDA, zero the account and assign it to DLP,
// invoke DLP's Delegate signed by the account's seeds (DLP copies the data
// back and creates the record and metadata), then close the buffer. The
// transaction must hold DLP, the record and metadata PDAs and the System
// program.
func DelegateFromOwner(ctx *runtime.Context, d OwnerDelegation) error {
	self := ctx.ProgramID()
	if d.Account.Owner != self {
		ctx.Logf("%s is not owned by %s", d.Account.Key, self)
		return runtime.ErrInvalidAccountOwner
	}
	bufKey, bufBump, err := progutil.Find(ctx, self, []byte(espl.SeedBuffer), d.Account.Key[:])
	if err != nil {
		return err
	}
	if err := progutil.Key(ctx, d.Buffer, bufKey, "delegate buffer"); err != nil {
		return err
	}
	bufSeeds := [][]byte{[]byte(espl.SeedBuffer), d.Account.Key[:], {bufBump}}
	if err := progutil.CreatePDA(ctx, d.Payer, d.Buffer, bufSeeds, len(d.Account.Data), self); err != nil {
		return err
	}
	copy(d.Buffer.Data, d.Account.Data)
	clear(d.Account.Data)
	d.Account.Owner = ProgramID
	ix, err := Delegate(DelegateArgs{
		Payer: d.Payer.Key, Account: d.Account.Key, OwnerProgram: self, Seeds: d.Seeds, Validator: d.Validator,
	})
	if err != nil {
		ctx.Log(err.Error())
		return runtime.ErrInvalidSeeds
	}
	if err := ctx.Invoke(ix, progutil.WithBump(d.Seeds, d.Bump)); err != nil {
		return err
	}
	progutil.Close(d.Buffer, d.Payer)
	return nil
}
