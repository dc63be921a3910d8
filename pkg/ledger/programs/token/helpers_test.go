package token_test

import (
	"crypto/sha256"
	"encoding/binary"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/programs"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/programtest"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/system"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/token"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// key derives a deterministic test key from a name.
func key(name string) solana.PublicKey {
	return solana.PublicKeyFromBytes(func() []byte { h := sha256.Sum256([]byte(name)); return h[:] }())
}

var (
	payer      = key("payer")
	alice      = key("alice")
	bob        = key("bob")
	carol      = key("carol")
	mintAuth   = key("mint-authority")
	freezeAuth = key("freeze-authority")
	stranger   = key("stranger")
	foreignPrg = key("some-other-program")
)

const (
	decimals   = 6
	supply     = 1_000_000
	rentToken  = 2_039_280 // 165 bytes
	rentMint   = 1_461_600 // 82 bytes
	rentMultis = 3_361_680 // 355 bytes
)

// fixture is a small token world under one of the two programs: mint (6
// decimals, supply 1_000_000, mint and freeze authorities), mint2, token
// accounts src (alice, all the supply), dst (bob, 0), other (bob, mint2),
// and two wrapped-SOL accounts wsolA (alice, 1 SOL) and wsolB (bob, 0).
type fixture struct {
	h                             *programtest.Harness
	prog                          solana.PublicKey
	nativeMint                    solana.PublicKey
	mint, mint2                   solana.PublicKey
	src, dst, other, wsolA, wsolB solana.PublicKey
}

func newFixture(t testing.TB, prog *token.Program) *fixture {
	f := &fixture{
		h:    programtest.New(t, system.Registration(), token.Registration(), token.Registration2022()),
		prog: prog.ID(), nativeMint: prog.NativeMint(),
		mint: key("mint"), mint2: key("mint2"),
		src: key("src"), dst: key("dst"), other: key("other"), wsolA: key("wsolA"), wsolB: key("wsolB"),
	}
	f.h.Fund(payer, 100*programtest.SOL)
	ma, fa := mintAuth, freezeAuth
	f.h.AddMint(f.mint, f.prog, spl.Mint{MintAuthority: &ma, FreezeAuthority: &fa, Supply: supply, Decimals: decimals})
	f.h.AddMint(f.mint2, f.prog, spl.Mint{MintAuthority: &ma, Decimals: 9})
	// The native mints as the ledger creates them at genesis.
	for k, a := range programs.GenesisAccounts(f.h.Env.Rent) {
		f.h.SetAccount(k, *a)
	}
	f.h.AddTokenAccount(f.src, f.prog, spl.TokenAccount{Mint: f.mint, Owner: alice, Amount: supply})
	f.h.AddTokenAccount(f.dst, f.prog, spl.TokenAccount{Mint: f.mint, Owner: bob})
	f.h.AddTokenAccount(f.other, f.prog, spl.TokenAccount{Mint: f.mint2, Owner: bob})
	reserve := uint64(rentToken)
	f.h.AddTokenAccount(f.wsolA, f.prog, spl.TokenAccount{Mint: f.nativeMint, Owner: alice, Amount: programtest.SOL, IsNative: &reserve})
	f.h.AddTokenAccount(f.wsolB, f.prog, spl.TokenAccount{Mint: f.nativeMint, Owner: bob, IsNative: &reserve})
	return f
}

// edit decodes the token account at k, applies fn and stores it back.
func (f *fixture) edit(k solana.PublicKey, fn func(a *spl.TokenAccount)) {
	acc := f.h.Account(k)
	a, err := spl.DecodeTokenAccount(acc.Data)
	if err != nil {
		panic(err)
	}
	fn(&a)
	a.EncodeInto(acc.Data)
}

// editMint decodes the mint at k, applies fn and stores it back.
func (f *fixture) editMint(k solana.PublicKey, fn func(m *spl.Mint)) {
	acc := f.h.Account(k)
	m, err := spl.DecodeMint(acc.Data)
	if err != nil {
		panic(err)
	}
	fn(&m)
	m.EncodeInto(acc.Data)
}

// blank stores an uninitialized, rent-exempt account of n bytes owned by
// the fixture's program.
func (f *fixture) blank(k solana.PublicKey, n int) {
	f.h.SetAccount(k, runtime.Account{Lamports: f.h.Env.Rent.MinimumBalance(n), Owner: f.prog, Data: make([]byte, n)})
}

func ix(prog solana.PublicKey, data []byte, metas ...txwire.AccountMeta) txwire.Instruction {
	return txwire.Instruction{ProgramID: prog, Accounts: metas, Data: data}
}

func opAmount(op spl.TokenOp, amount uint64) []byte {
	return binary.LittleEndian.AppendUint64([]byte{byte(op)}, amount)
}

func initMint(prog, mint solana.PublicKey, dec uint8, auth solana.PublicKey, freeze *solana.PublicKey) txwire.Instruction {
	d := append([]byte{byte(spl.TokenInitializeMintOp), dec}, auth[:]...)
	if freeze != nil {
		d = append(append(d, 1), freeze[:]...)
	} else {
		d = append(d, 0)
	}
	return ix(prog, d, txwire.Writable(mint), txwire.Readonly(spl.SysvarRentID))
}

func initAccount(prog, acct, mint, owner solana.PublicKey) txwire.Instruction {
	return ix(prog, []byte{byte(spl.TokenInitializeAccountOp)},
		txwire.Writable(acct), txwire.Readonly(mint), txwire.Readonly(owner), txwire.Readonly(spl.SysvarRentID))
}

func initAccount2(prog, acct, mint, owner solana.PublicKey) txwire.Instruction {
	return ix(prog, append([]byte{byte(spl.TokenInitializeAccount2Op)}, owner[:]...),
		txwire.Writable(acct), txwire.Readonly(mint), txwire.Readonly(spl.SysvarRentID))
}

func approveChecked(prog, src, mint, delegate, owner solana.PublicKey, amount uint64, dec uint8) txwire.Instruction {
	return ix(prog, append(opAmount(spl.TokenApproveCheckedOp, amount), dec),
		txwire.Writable(src), txwire.Readonly(mint), txwire.Readonly(delegate), txwire.Signer(owner))
}

func burnChecked(prog, acct, mint, owner solana.PublicKey, amount uint64, dec uint8) txwire.Instruction {
	return ix(prog, append(opAmount(spl.TokenBurnCheckedOp, amount), dec),
		txwire.Writable(acct), txwire.Writable(mint), txwire.Signer(owner))
}

func initMultisig(prog, ms solana.PublicKey, m uint8, withRent bool, signers ...solana.PublicKey) txwire.Instruction {
	op := spl.TokenInitializeMultisig2Op
	metas := []txwire.AccountMeta{txwire.Writable(ms)}
	if withRent {
		op = spl.TokenInitializeMultisigOp
		metas = append(metas, txwire.Readonly(spl.SysvarRentID))
	}
	for _, s := range signers {
		metas = append(metas, txwire.Readonly(s))
	}
	return ix(prog, []byte{byte(op), m}, metas...)
}

func getAccountDataSize(prog, mint solana.PublicKey, exts ...uint16) txwire.Instruction {
	d := []byte{byte(spl.TokenGetAccountDataSizeOp)}
	for _, e := range exts {
		d = binary.LittleEndian.AppendUint16(d, e)
	}
	return ix(prog, d, txwire.Readonly(mint))
}

// viaMultisig turns the authority at index i of an instruction into a
// non-signing multisig account followed by the given signer accounts.
func viaMultisig(in txwire.Instruction, i int, signers ...solana.PublicKey) txwire.Instruction {
	metas := append([]txwire.AccountMeta(nil), in.Accounts...)
	metas[i].IsSigner = false
	for _, s := range signers {
		metas = append(metas, txwire.Signer(s))
	}
	in.Accounts = metas
	return in
}

// unsigned clears the signer flag of key in an instruction.
func unsigned(in txwire.Instruction, k solana.PublicKey) txwire.Instruction {
	metas := append([]txwire.AccountMeta(nil), in.Accounts...)
	for i := range metas {
		if metas[i].PublicKey == k {
			metas[i].IsSigner = false
		}
	}
	in.Accounts = metas
	return in
}
