package espl_test

import (
	"crypto/sha256"
	"testing"

	"github.com/gagliardetto/solana-go"

	es "github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/ledger/programs"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/delegation"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/espl"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/magic"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/permission"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/programtest"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

func key(name string) solana.PublicKey {
	h := sha256.Sum256([]byte(name))
	return solana.PublicKeyFromBytes(h[:])
}

// wallet returns an on-curve key (a real wallet address).
func wallet(t testing.TB) solana.PublicKey { return solana.NewWallet().PublicKey() }

var (
	validator = solana.NewWallet().PublicKey()
	mintAuth  = solana.NewWallet().PublicKey()
)

const decimals = 6

// world is a base-layer harness with the eSPL, DLP and ACL programs, a
// mint (decimals 6) and a funded user holding tokens in its ATA.
type world struct {
	t     testing.TB
	h     *programtest.Harness
	mint  solana.PublicKey
	user  solana.PublicKey
	queue solana.PublicKey
	vault solana.PublicKey
	vata  solana.PublicKey
	rent  solana.PublicKey
}

func baseRegs() []*runtime.Registration {
	return append(programs.Builtins(),
		delegation.Registration(delegation.Config{DefaultValidator: validator}),
		permission.Registration(),
		espl.Registration(espl.Config{Validator: validator}))
}

func newBase(t testing.TB) *world {
	h := programtest.New(t, baseRegs()...)
	w := &world{t: t, h: h, mint: wallet(t), user: wallet(t)}
	a := mintAuth
	h.AddMint(w.mint, spl.TokenProgramID, spl.Mint{Decimals: decimals, Supply: 1_000_000_000, MintAuthority: &a})
	h.AddTokenAccount(w.ata(w.user), spl.TokenProgramID, spl.TokenAccount{Mint: w.mint, Owner: w.user, Amount: 1_000_000_000})
	h.Fund(w.user, 100*programtest.SOL)
	h.Fund(validator, 100*programtest.SOL)
	w.queue, _ = es.FindTransferQueue(w.mint, validator)
	w.vault, _ = es.FindGlobalVault(w.mint)
	w.vata = w.ata(w.vault)
	w.rent, _ = es.FindRentPDA()
	return w
}

func (w *world) ata(owner solana.PublicKey) solana.PublicKey {
	return spl.AssociatedTokenAddress(owner, w.mint, spl.TokenProgramID)
}

func (w *world) balance(k solana.PublicKey) uint64 {
	a := w.h.Account(k)
	if a == nil {
		return 0
	}
	return spl.TokenAmountOf(a.Data)
}

// initializeMint runs the hosted API's initialize-mint instruction list
// (espl-program.md §8.8).
func (w *world) initializeMint() {
	w.t.Helper()
	p := w.user
	w.h.Run(p,
		es.InitTransferQueue(es.InitTransferQueueArgs{Payer: p, Mint: w.mint, Validator: validator}),
		es.InitRentPDA(es.InitRentPDAArgs{Payer: p}),
		spl.SystemTransfer(p, w.rent, es.RentPDATargetLamports),
		es.DelegateTransferQueue(es.DelegateTransferQueueArgs{Payer: p, Mint: w.mint, Validator: validator}),
		es.InitGlobalVault(es.InitGlobalVaultArgs{Payer: p, Mint: w.mint}),
		spl.CreateAssociatedTokenAccount(p, w.vault, w.mint, spl.TokenProgramID, true),
		es.DelegateEphemeralATA(es.DelegateEphemeralATAArgs{Payer: p, Owner: w.vault, Mint: w.mint, Validator: validator}),
	).RequireSuccess(w.t)
}

func (w *world) eata(owner solana.PublicKey) solana.PublicKey {
	k, _ := es.FindEphemeralATA(owner, w.mint)
	return k
}

func (w *world) decodeEATA(owner solana.PublicKey) es.EphemeralATA {
	w.t.Helper()
	a := w.h.Account(w.eata(owner))
	if a == nil {
		w.t.Fatalf("eATA of %s missing", owner)
	}
	e, err := es.DecodeEphemeralATA(a.Data)
	if err != nil {
		w.t.Fatal(err)
	}
	return e
}

func (w *world) record(account solana.PublicKey) es.DelegationRecord {
	w.t.Helper()
	k, _ := es.FindDelegationRecord(account)
	a := w.h.Account(k)
	if a == nil {
		w.t.Fatalf("no delegation record for %s", account)
	}
	r, err := es.DecodeDelegationRecord(a.Data)
	if err != nil {
		w.t.Fatal(err)
	}
	return r
}

// ephemeralWorld is an ephemeral-rollup harness: eSPL (ephemeral), ACL,
// the Magic program and action executor, with the Magic genesis accounts,
// a mint clone and a queue clone (as the bridge clones them).
type ephemeralWorld struct {
	*world
}

func ephemeralRegs() []*runtime.Registration {
	cfg := magic.Config{Validator: validator}
	return append(programs.Builtins(), permission.Registration(), magic.Registration(cfg), magic.ActionExecutorRegistration(cfg),
		espl.Registration(espl.Config{Validator: validator, Ephemeral: true}))
}

func newEphemeral(t testing.TB, capacity int) *ephemeralWorld {
	h := programtest.New(t, ephemeralRegs()...)
	w := &world{t: t, h: h, mint: wallet(t), user: wallet(t)}
	a := mintAuth
	h.AddMint(w.mint, spl.TokenProgramID, spl.Mint{Decimals: decimals, Supply: 1_000_000_000_000, MintAuthority: &a})
	for k, acct := range magic.GenesisAccounts() {
		h.SetAccount(k, *acct)
	}
	h.Fund(validator, programtest.SOL)
	w.queue, _ = es.FindTransferQueue(w.mint, validator)
	w.vault, _ = es.FindGlobalVault(w.mint)
	w.vata = w.ata(w.vault)
	w.rent, _ = es.FindRentPDA()
	_, bump := es.FindTransferQueue(w.mint, validator)
	qdata := es.NewTransferQueueAccount(es.TransferQueueHeader{Version: 1, Bump: bump, Mint: w.mint, Validator: validator, NextTaskID: 1}, capacity)
	h.SetAccount(w.queue, runtime.Account{Lamports: h.Env.Rent.MinimumBalance(len(qdata)), Owner: espl.ProgramID, Data: qdata})
	e := &ephemeralWorld{world: w}
	e.project(w.queue, 0)
	return e
}

// project clones owner's eATA (as delegated) and projects its balance into
// owner's ATA, as the validator does.
func (e *ephemeralWorld) project(owner solana.PublicKey, amount uint64) {
	k, bump := es.FindEphemeralATA(owner, e.mint)
	data := es.EphemeralATA{Owner: owner, Mint: e.mint, Amount: amount, Bump: bump}.Encode()
	e.h.SetAccount(k, runtime.Account{Lamports: e.h.Env.Rent.MinimumBalance(len(data)), Owner: espl.ProgramID, Data: data})
	e.h.AddTokenAccount(e.ata(owner), spl.TokenProgramID, spl.TokenAccount{Mint: e.mint, Owner: owner, Amount: amount})
}

func (e *ephemeralWorld) context() *magic.Context {
	e.t.Helper()
	c, err := magic.DecodeContext(e.h.Account(magic.ContextID).Data)
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

func (e *ephemeralWorld) queueState() es.TransferQueue {
	e.t.Helper()
	q, err := es.OpenTransferQueue(e.h.Account(e.queue).Data)
	if err != nil {
		e.t.Fatal(err)
	}
	return q
}

func mustIx(t testing.TB) func(txwire.Instruction, error) txwire.Instruction {
	return func(ix txwire.Instruction, err error) txwire.Instruction {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return ix
	}
}
