package ata_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/programs/ata"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/programtest"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/system"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/token"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

func key(name string) solana.PublicKey {
	h := sha256.Sum256([]byte(name))
	return solana.PublicKeyFromBytes(h[:])
}

var (
	payer    = key("payer")
	wallet   = key("wallet")
	mintAuth = key("mint-authority")
	mint     = key("mint")
)

const (
	rentToken     = 2_039_280 // 165 bytes
	rentToken2022 = 2_074_080 // 170 bytes
)

func newHarness(t testing.TB, tokenProgram solana.PublicKey) *programtest.Harness {
	h := programtest.New(t, system.Registration(), token.Registration(), token.Registration2022(), ata.Registration())
	h.Fund(payer, 10*programtest.SOL)
	ma := mintAuth
	h.AddMint(mint, tokenProgram, spl.Mint{MintAuthority: &ma, Decimals: 6})
	return h
}

func createIx(tokenProgram solana.PublicKey, idempotent bool) txwire.Instruction {
	return spl.CreateAssociatedTokenAccount(payer, wallet, mint, tokenProgram, idempotent)
}

func TestCreateFlow(t *testing.T) {
	for _, tc := range []struct {
		program     solana.PublicKey
		size        int
		lamports    uint64
		immutableTL bool
	}{
		{spl.TokenProgramID, 165, rentToken, false},
		{spl.Token2022ProgramID, 170, rentToken2022, true},
	} {
		t.Run(tc.program.String(), func(t *testing.T) {
			h := newHarness(t, tc.program)
			addr := spl.AssociatedTokenAddress(wallet, mint, tc.program)
			before := h.TotalLamports()
			res := h.Run(payer, createIx(tc.program, false))
			res.RequireSuccess(t)

			// Address, lamports, owner, layout.
			a := h.Account(addr)
			if a == nil || a.Lamports != tc.lamports || a.Owner != tc.program || len(a.Data) != tc.size {
				t.Fatalf("account %+v", a)
			}
			want := spl.TokenAccount{Mint: mint, Owner: wallet, State: spl.StateInitialized}.Encode()
			if !bytes.Equal(a.Data[:165], want) {
				t.Errorf("layout %x", a.Data)
			}
			if tc.immutableTL && !bytes.Equal(a.Data[165:], []byte{spl.AccountTypeAccount, 7, 0, 0, 0}) {
				t.Errorf("Token-2022 extension area %x", a.Data[165:])
			}
			if h.Lamports(payer) != 10*programtest.SOL-tc.lamports || h.TotalLamports() != before {
				t.Errorf("payer %d", h.Lamports(payer))
			}

			// Inner instructions, in order, all at stack height 2.
			inner := res.InnerInstructions(0)
			wantPrograms := []solana.PublicKey{tc.program, runtime.SystemProgramID, tc.program, tc.program}
			if len(inner) != len(wantPrograms) {
				t.Fatalf("%d inner instructions: %+v", len(inner), inner)
			}
			for i, in := range inner {
				if in.ProgramID != wantPrograms[i] || in.StackHeight != 2 {
					t.Errorf("inner %d: %s at height %d", i, in.ProgramID, in.StackHeight)
				}
			}
			if !bytes.Equal(inner[0].Data, []byte{byte(spl.TokenGetAccountDataSizeOp), 7, 0}) || inner[0].Accounts[0] != mint {
				t.Errorf("GetAccountDataSize %+v", inner[0])
			}
			sys, err := spl.DecodeSystem(inner[1].Data)
			if err != nil || sys.Op != spl.SystemCreateAccountOp || sys.Lamports != tc.lamports || sys.Space != uint64(tc.size) || sys.Owner != tc.program {
				t.Errorf("CreateAccount %+v %v", sys, err)
			}
			if inner[1].Accounts[0] != payer || inner[1].Accounts[1] != addr {
				t.Errorf("CreateAccount accounts %v", inner[1].Accounts)
			}
			if !bytes.Equal(inner[2].Data, []byte{byte(spl.TokenInitializeImmutableOwnerOp)}) {
				t.Errorf("InitializeImmutableOwner %x", inner[2].Data)
			}
			if in, err := spl.DecodeToken(inner[3].Data); err != nil || in.Op != spl.TokenInitializeAccount3Op || in.Owner != wallet {
				t.Errorf("InitializeAccount3 %+v %v", in, err)
			}

			sizeReturn := "pQAAAAAAAAA=" // 165
			if tc.size == 170 {
				sizeReturn = "qgAAAAAAAAA="
			}
			res.RequireLogs(t,
				"Program ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL invoke [1]",
				"Program log: Create",
				"Program "+tc.program.String()+" invoke [2]",
				"Program log: Instruction: GetAccountDataSize",
				"Program return: "+tc.program.String()+" "+sizeReturn,
				"Program 11111111111111111111111111111111 invoke [2]",
				"Program 11111111111111111111111111111111 success",
				"Program log: Initialize the associated token account",
				"Program log: Instruction: InitializeImmutableOwner",
				"Program log: Instruction: InitializeAccount3",
				"Program ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL success",
			)
			// The later CPIs start with empty return data, so the
			// transaction ends without any (as on a cluster).
			if res.ReturnData != nil {
				t.Errorf("return data %+v", res.ReturnData)
			}

			// Create again fails (the account is no longer System-owned);
			// CreateIdempotent succeeds without any CPI.
			h.Run(payer, createIx(tc.program, false)).RequireError(t, 0, runtime.ErrIllegalOwner)
			res = h.Run(payer, createIx(tc.program, true))
			res.RequireSuccess(t)
			if len(res.Inner) != 0 {
				t.Errorf("idempotent create made CPIs: %+v", res.Inner)
			}
			wantLogs := []string{
				"Program ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL invoke [1]",
				"Program log: CreateIdempotent",
			}
			if len(res.Logs) != 4 || res.Logs[0] != wantLogs[0] || res.Logs[1] != wantLogs[1] {
				t.Errorf("idempotent logs %q", res.Logs)
			}
			if h.Lamports(payer) != 10*programtest.SOL-tc.lamports {
				t.Error("idempotent create charged the payer")
			}

			// Token-2022 ATAs have an immutable owner.
			if tc.immutableTL {
				other := key("other")
				h.Run(payer, spl.TokenSetAuthority(tc.program, addr, wallet, spl.AuthorityAccountOwner, &other)).
					RequireError(t, 0, token.ErrImmutableOwner)
			}
		})
	}
}

func TestCreateErrors(t *testing.T) {
	addr := spl.AssociatedTokenAddress(wallet, mint, spl.TokenProgramID)
	other := key("other")
	cases := []struct {
		name  string
		setup func(h *programtest.Harness)
		ix    func() txwire.Instruction
		err   *runtime.InstructionError
		logs  []string
	}{
		{name: "wrong-address",
			ix: func() txwire.Instruction {
				in := createIx(spl.TokenProgramID, true)
				in.Accounts[1].PublicKey = other
				return in
			},
			err:  runtime.ErrInvalidSeeds,
			logs: []string{"Program log: Error: Associated address does not match seed derivation"}},
		{name: "idempotent-owner-mismatch",
			setup: func(h *programtest.Harness) {
				h.AddTokenAccount(addr, spl.TokenProgramID, spl.TokenAccount{Mint: mint, Owner: other})
			},
			ix:   func() txwire.Instruction { return createIx(spl.TokenProgramID, true) },
			err:  ata.ErrInvalidOwner,
			logs: []string{"Program log: Associated token account owner does not match address derivation", "Program ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL failed: custom program error: 0x0"}},
		{name: "idempotent-mint-mismatch",
			setup: func(h *programtest.Harness) {
				h.AddTokenAccount(addr, spl.TokenProgramID, spl.TokenAccount{Mint: other, Owner: wallet})
			},
			ix:  func() txwire.Instruction { return createIx(spl.TokenProgramID, true) },
			err: runtime.ErrInvalidAccountData},
		{name: "address-owned-by-another-program",
			setup: func(h *programtest.Harness) {
				h.SetAccount(addr, runtime.Account{Lamports: rentToken, Owner: other, Data: make([]byte, 165)})
			},
			ix:  func() txwire.Instruction { return createIx(spl.TokenProgramID, true) },
			err: runtime.ErrIllegalOwner},
		{name: "payer-too-poor",
			setup: func(h *programtest.Harness) { h.Accounts[payer].Lamports = rentToken - 1 },
			ix:    func() txwire.Instruction { return createIx(spl.TokenProgramID, true) },
			err:   system.ErrResultWithNegativeLamports,
			logs:  []string{"Transfer: insufficient lamports 2039279, need 2039280"}},
		{name: "payer-not-signer",
			ix: func() txwire.Instruction {
				in := spl.CreateAssociatedTokenAccount(other, wallet, mint, spl.TokenProgramID, true)
				in.Accounts[0].IsSigner = false
				return in
			},
			setup: func(h *programtest.Harness) { h.Fund(other, programtest.SOL) },
			err:   runtime.ErrPrivilegeEscalation},
		{name: "uninitialized-mint",
			setup: func(h *programtest.Harness) {
				h.SetAccount(mint, runtime.Account{Lamports: 1_461_600, Owner: spl.TokenProgramID, Data: make([]byte, 82)})
			},
			ix:   func() txwire.Instruction { return createIx(spl.TokenProgramID, true) },
			err:  token.ErrInvalidMint,
			logs: []string{"Program log: Error: Invalid Mint"}},
		{name: "mint-of-other-token-program",
			ix:  func() txwire.Instruction { return createIx(spl.Token2022ProgramID, true) },
			err: runtime.ErrIncorrectProgramID},
		{name: "not-a-token-program",
			ix: func() txwire.Instruction {
				in := createIx(spl.TokenProgramID, true)
				in.Accounts[1].PublicKey = spl.AssociatedTokenAddress(wallet, mint, other)
				in.Accounts[5].PublicKey = other
				return in
			},
			err: runtime.ErrIncorrectProgramID},
		{name: "bad-data",
			ix: func() txwire.Instruction {
				in := createIx(spl.TokenProgramID, true)
				in.Data = []byte{3}
				return in
			},
			err: runtime.ErrInvalidInstructionData},
		{name: "trailing-data",
			ix: func() txwire.Instruction {
				in := createIx(spl.TokenProgramID, true)
				in.Data = []byte{1, 0}
				return in
			},
			err: runtime.ErrInvalidInstructionData},
		{name: "missing-accounts",
			ix: func() txwire.Instruction {
				in := createIx(spl.TokenProgramID, true)
				in.Accounts = in.Accounts[:5]
				return in
			},
			err: runtime.ErrNotEnoughAccountKeys},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, spl.TokenProgramID)
			if tc.setup != nil {
				tc.setup(h)
			}
			before := h.TotalLamports()
			res := h.Run(payer, tc.ix())
			res.RequireError(t, 0, tc.err)
			res.RequireLogs(t, tc.logs...)
			if h.TotalLamports() != before {
				t.Error("lamports changed")
			}
		})
	}
}

// TestCreatePrefunded covers an ATA address that already holds lamports
// (someone sent SOL to it): the program tops it up with Transfer, then
// Allocate and Assign signed by the PDA.
func TestCreatePrefunded(t *testing.T) {
	for _, pre := range []uint64{1_000, rentToken + 5} {
		h := newHarness(t, spl.TokenProgramID)
		addr := spl.AssociatedTokenAddress(wallet, mint, spl.TokenProgramID)
		h.Fund(addr, pre)
		res := h.Run(payer, createIx(spl.TokenProgramID, true))
		res.RequireSuccess(t)
		var ops []spl.SystemOp
		for _, in := range res.InnerInstructions(0) {
			if in.ProgramID == runtime.SystemProgramID {
				d, err := spl.DecodeSystem(in.Data)
				if err != nil {
					t.Fatal(err)
				}
				ops = append(ops, d.Op)
				if d.Op == spl.SystemTransferOp && d.Lamports != rentToken-pre {
					t.Errorf("top-up %d", d.Lamports)
				}
			}
		}
		want := []spl.SystemOp{spl.SystemTransferOp, spl.SystemAllocateOp, spl.SystemAssignOp}
		if pre >= rentToken {
			want = want[1:]
		}
		if len(ops) != len(want) {
			t.Fatalf("pre %d: system ops %v", pre, ops)
		}
		for i := range ops {
			if ops[i] != want[i] {
				t.Fatalf("pre %d: system ops %v", pre, ops)
			}
		}
		if got := h.Lamports(addr); got != max(pre, rentToken) {
			t.Errorf("pre %d: lamports %d", pre, got)
		}
		if a := h.TokenAccount(addr); a.Owner != wallet || a.Amount != 0 {
			t.Errorf("%+v", a)
		}
	}
}

// TestComputeUnits pins the program's own charges.
func TestComputeUnits(t *testing.T) {
	h := newHarness(t, spl.TokenProgramID)
	h.Run(payer, createIx(spl.TokenProgramID, true)).RequireSuccess(t)
	res := h.Run(payer, createIx(spl.TokenProgramID, true))
	res.RequireSuccess(t)
	_, bump := spl.AssociatedTokenAddressBump(wallet, mint, spl.TokenProgramID)
	want := ata.BaseUnits + ata.DerivationAttemptUnits*uint64(256-int(bump))
	if res.ComputeUsed != want {
		t.Errorf("idempotent create used %d CU, want %d", res.ComputeUsed, want)
	}
}

func TestRecoverNested(t *testing.T) {
	prog := spl.TokenProgramID
	h := newHarness(t, prog)
	nestedMint := key("nested-mint")
	ma := mintAuth
	h.AddMint(nestedMint, prog, spl.Mint{MintAuthority: &ma, Decimals: 2, Supply: 50})
	ownerATA := spl.AssociatedTokenAddress(wallet, mint, prog)
	nested := spl.AssociatedTokenAddress(ownerATA, nestedMint, prog)
	dest := spl.AssociatedTokenAddress(wallet, nestedMint, prog)
	h.AddTokenAccount(ownerATA, prog, spl.TokenAccount{Mint: mint, Owner: wallet})
	h.AddTokenAccount(nested, prog, spl.TokenAccount{Mint: nestedMint, Owner: ownerATA, Amount: 50})
	h.AddTokenAccount(dest, prog, spl.TokenAccount{Mint: nestedMint, Owner: wallet})
	h.Fund(wallet, programtest.SOL)

	recoverIx := txwire.Instruction{ProgramID: ata.ProgramID, Data: []byte{byte(spl.ATARecoverNested)}, Accounts: []txwire.AccountMeta{
		txwire.Writable(nested), txwire.Readonly(nestedMint), txwire.Writable(dest), txwire.Readonly(ownerATA),
		txwire.Readonly(mint), txwire.WritableSigner(wallet), txwire.Readonly(prog),
	}}
	unsigned := recoverIx
	unsigned.Accounts = append([]txwire.AccountMeta(nil), recoverIx.Accounts...)
	unsigned.Accounts[5].IsSigner = false
	res := h.Run(payer, unsigned)
	res.RequireError(t, 0, runtime.ErrMissingRequiredSignature)
	res.RequireLogs(t, "Program log: Wallet of the owner associated token account must sign")

	res = h.Run(payer, recoverIx)
	res.RequireSuccess(t)
	res.RequireLogs(t, "Program log: RecoverNested", "Program log: Instruction: TransferChecked", "Program log: Instruction: CloseAccount")
	if h.TokenAccount(dest).Amount != 50 || h.Account(nested) != nil || h.Lamports(wallet) != programtest.SOL+rentToken {
		t.Errorf("dest %d, nested %v, wallet %d", h.TokenAccount(dest).Amount, h.Account(nested), h.Lamports(wallet))
	}
}

// TestReturnDataIsToken checks that the size comes from the token program's
// return data (165 as u64 LE), which the following CPIs clear.
func TestReturnDataIsToken(t *testing.T) {
	h := newHarness(t, spl.TokenProgramID)
	res := h.Run(payer, createIx(spl.TokenProgramID, false))
	res.RequireSuccess(t)
	want := "Program return: " + spl.TokenProgramID.String() + " " + base64.StdEncoding.EncodeToString(binary.LittleEndian.AppendUint64(nil, 165))
	res.RequireLogs(t, want)
	if res.ReturnData != nil {
		t.Fatalf("return data left over: %+v", res.ReturnData)
	}
}
