package permission_test

import (
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/programs"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/permission"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/programtest"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
)

var (
	payer = solana.NewWallet().PublicKey()
	acct  = solana.NewWallet().PublicKey() // signs directly here; programs sign for PDAs
	auth  = solana.NewWallet().PublicKey()
)

func harness(t testing.TB) *programtest.Harness {
	h := programtest.New(t, append(programs.Builtins(), permission.Registration())...)
	h.Fund(payer, programtest.SOL)
	h.Fund(auth, programtest.SOL)
	return h
}

func TestCreateAndUpdate(t *testing.T) {
	h := harness(t)
	members := []permission.Member{{Key: auth, Flags: permission.FlagAuthority}}
	create := permission.Create(acct, payer, members, false)
	h.Run(payer, create).RequireSuccess(t)
	p, err := permission.Decode(h.Account(permission.Address(acct)).Data)
	if err != nil || p.Account != acct || len(p.Members) != 1 || p.Members[0] != members[0] {
		t.Fatalf("permission %+v %v", p, err)
	}
	h.Run(payer, create).RequireSuccess(t) // idempotent

	more := append(members, permission.Member{Key: payer, Flags: permission.FlagRead})
	h.Run(payer, permission.Update(payer, acct, payer, more)).RequireError(t, 0, permission.ErrUnauthorized)
	h.Run(auth, permission.Update(auth, acct, auth, more)).RequireSuccess(t)
	if p, _ := permission.Decode(h.Account(permission.Address(acct)).Data); len(p.Members) != 2 {
		t.Fatalf("members %+v", p.Members)
	}
	// The permissioned account must sign.
	ix := permission.Create(solana.NewWallet().PublicKey(), payer, members, false)
	ix.Accounts[0].IsSigner = false
	h.Run(payer, ix).RequireError(t, 0, runtime.ErrMissingRequiredSignature)
}

func FuzzPermission(f *testing.F) {
	pool := []solana.PublicKey{acct, permission.Address(acct), payer, spl.SystemProgramID, auth}
	f.Add(permission.Create(acct, payer, []permission.Member{{Key: auth, Flags: 1}}, false).Data, []byte{0x10, 0x21, 0x32, 3})
	f.Add(permission.Update(auth, acct, payer, nil).Data, []byte{0x14, 0x21, 0x32, 3})
	f.Fuzz(func(t *testing.T, data, sel []byte) {
		h := harness(t)
		h.CheckRent = false
		h.Run(payer, permission.Create(acct, payer, []permission.Member{{Key: auth, Flags: 1}}, false))
		h.FuzzInstruction(permission.ProgramID, pool, data, sel)
		_, _ = permission.Decode(data)
	})
}
