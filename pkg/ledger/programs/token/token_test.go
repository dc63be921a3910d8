package token_test

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/programs/token"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

type variant int

const (
	both variant = iota
	classicOnly
	t22Only
)

type tokenCase struct {
	name  string
	only  variant
	setup func(f *fixture)
	ixs   func(f *fixture) []txwire.Instruction
	err   *runtime.InstructionError
	logs  []string
	check func(t *testing.T, f *fixture)
}

func runTokenCases(t *testing.T, cases []tokenCase) {
	t.Helper()
	for _, prog := range []*token.Program{token.Token, token.Token2022} {
		for _, tc := range cases {
			if (tc.only == classicOnly && prog == token.Token2022) || (tc.only == t22Only && prog == token.Token) {
				continue
			}
			name := "token/" + tc.name
			if prog == token.Token2022 {
				name = "token2022/" + tc.name
			}
			t.Run(name, func(t *testing.T) {
				f := newFixture(t, prog)
				if tc.setup != nil {
					tc.setup(f)
				}
				before := f.h.TotalLamports()
				res := f.h.Run(payer, tc.ixs(f)...)
				if tc.err != nil {
					res.RequireError(t, 0, tc.err)
					if !raisedByRuntime[tc.err.Name] {
						// The program logs the error before failing.
						res.RequireLogs(t, "Program log: "+token.ErrorLog(tc.err))
					}
				} else {
					res.RequireSuccess(t)
				}
				res.RequireLogs(t, tc.logs...)
				if f.h.TotalLamports() != before {
					t.Errorf("lamports not conserved: %d → %d", before, f.h.TotalLamports())
				}
				if tc.check != nil {
					tc.check(t, f)
				}
			})
		}
	}
}

// raisedByRuntime are errors the runtime's account rules raise after the
// program returned, so the program logs nothing for them.
var raisedByRuntime = map[string]bool{
	"ExternalAccountDataModified": true, "ExternalAccountLamportSpend": true, "ReadonlyDataModified": true,
	"ReadonlyLamportChange": true, "ModifiedProgramId": true, "UnbalancedInstruction": true,
}

func amountOf(t *testing.T, f *fixture, k solana.PublicKey) uint64 {
	t.Helper()
	return f.h.TokenAccount(k).Amount
}

func TestTransfer(t *testing.T) {
	runTokenCases(t, []tokenCase{
		{name: "ok",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransfer(f.prog, f.src, f.dst, alice, 400)}
			},
			logs: []string{"Program log: Instruction: Transfer"},
			check: func(t *testing.T, f *fixture) {
				if amountOf(t, f, f.src) != supply-400 || amountOf(t, f, f.dst) != 400 {
					t.Error("balances")
				}
			}},
		{name: "checked-ok",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransferChecked(f.prog, f.src, f.mint, f.dst, alice, supply, decimals)}
			},
			logs: []string{"Program log: Instruction: TransferChecked"},
			check: func(t *testing.T, f *fixture) {
				if amountOf(t, f, f.src) != 0 || amountOf(t, f, f.dst) != supply {
					t.Error("balances")
				}
			}},
		{name: "uninitialized-source",
			setup: func(f *fixture) { f.blank(f.src, spl.TokenAccountSize) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransfer(f.prog, f.src, f.dst, alice, 1)}
			},
			err: runtime.ErrUninitializedAccount},
		{name: "uninitialized-destination",
			setup: func(f *fixture) { f.blank(f.dst, spl.TokenAccountSize) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransfer(f.prog, f.src, f.dst, alice, 1)}
			},
			err: runtime.ErrUninitializedAccount},
		{name: "not-a-token-account",
			setup: func(f *fixture) { f.blank(f.dst, 100) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransfer(f.prog, f.src, f.dst, alice, 1)}
			},
			err: runtime.ErrInvalidAccountData},
		{name: "frozen-source",
			setup: func(f *fixture) { f.edit(f.src, func(a *spl.TokenAccount) { a.State = spl.StateFrozen }) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransfer(f.prog, f.src, f.dst, alice, supply+1)}
			},
			err: token.ErrAccountFrozen, logs: []string{"Program log: Error: Account is frozen"}},
		{name: "frozen-destination",
			setup: func(f *fixture) { f.edit(f.dst, func(a *spl.TokenAccount) { a.State = spl.StateFrozen }) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransfer(f.prog, f.src, f.dst, alice, 1)}
			},
			err: token.ErrAccountFrozen},
		{name: "frozen-destination-checked-before-funds", only: classicOnly,
			setup: func(f *fixture) { f.edit(f.dst, func(a *spl.TokenAccount) { a.State = spl.StateFrozen }) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransfer(f.prog, f.src, f.dst, alice, supply+1)}
			},
			err: token.ErrAccountFrozen},
		{name: "funds-checked-before-frozen-destination", only: t22Only,
			setup: func(f *fixture) { f.edit(f.dst, func(a *spl.TokenAccount) { a.State = spl.StateFrozen }) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransfer(f.prog, f.src, f.dst, alice, supply+1)}
			},
			err: token.ErrInsufficientFunds},
		{name: "insufficient-funds",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransfer(f.prog, f.src, f.dst, alice, supply+1)}
			},
			err:  token.ErrInsufficientFunds,
			logs: []string{"Program log: Instruction: Transfer", "Program log: Error: insufficient funds"}},
		{name: "insufficient-funds-checked-before-mint", only: classicOnly,
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransfer(f.prog, f.src, f.other, alice, supply+1)}
			},
			err: token.ErrInsufficientFunds},
		{name: "mint-mismatch",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransfer(f.prog, f.src, f.other, alice, 1)}
			},
			err: token.ErrMintMismatch, logs: []string{"Program log: Error: Account not associated with this Mint"}},
		{name: "mint-checked-before-owner", only: classicOnly,
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransfer(f.prog, f.src, f.other, stranger, 1)}
			},
			err: token.ErrMintMismatch},
		{name: "owner-checked-before-destination-mint", only: t22Only,
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransfer(f.prog, f.src, f.other, stranger, 1)}
			},
			err: token.ErrOwnerMismatch},
		{name: "checked-wrong-mint-account",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransferChecked(f.prog, f.src, f.mint2, f.dst, alice, 1, decimals)}
			},
			err: token.ErrMintMismatch},
		{name: "checked-decimals",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransferChecked(f.prog, f.src, f.mint, f.dst, alice, 1, 9)}
			},
			err: token.ErrMintDecimalsMismatch, logs: []string{"Program log: Error: decimals different from the Mint decimals"}},
		{name: "owner-mismatch",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransfer(f.prog, f.src, f.dst, bob, 1)}
			},
			err: token.ErrOwnerMismatch, logs: []string{"Program log: Error: owner does not match"}},
		{name: "owner-not-signer",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{unsigned(spl.TokenTransfer(f.prog, f.src, f.dst, alice, 1), alice)}
			},
			err: runtime.ErrMissingRequiredSignature, logs: []string{"Program log: Error: MissingRequiredSignature"}},
		{name: "delegate",
			setup: func(f *fixture) {
				f.edit(f.src, func(a *spl.TokenAccount) { d := carol; a.Delegate, a.DelegatedAmount = &d, 500 })
			},
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{
					spl.TokenTransfer(f.prog, f.src, f.dst, carol, 200),
					spl.TokenTransfer(f.prog, f.src, f.dst, carol, 300),
				}
			},
			check: func(t *testing.T, f *fixture) {
				a := f.h.TokenAccount(f.src)
				if a.Amount != supply-500 || a.DelegatedAmount != 0 || a.Delegate != nil {
					t.Errorf("source %+v", a)
				}
			}},
		{name: "delegate-partial",
			setup: func(f *fixture) {
				f.edit(f.src, func(a *spl.TokenAccount) { d := carol; a.Delegate, a.DelegatedAmount = &d, 500 })
			},
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransfer(f.prog, f.src, f.dst, carol, 200)}
			},
			check: func(t *testing.T, f *fixture) {
				a := f.h.TokenAccount(f.src)
				if a.DelegatedAmount != 300 || a.Delegate == nil || *a.Delegate != carol {
					t.Errorf("source %+v", a)
				}
			}},
		{name: "delegate-over-allowance",
			setup: func(f *fixture) {
				f.edit(f.src, func(a *spl.TokenAccount) { d := carol; a.Delegate, a.DelegatedAmount = &d, 100 })
			},
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransfer(f.prog, f.src, f.dst, carol, 101)}
			},
			err: token.ErrInsufficientFunds},
		{name: "delegate-not-signer",
			setup: func(f *fixture) {
				f.edit(f.src, func(a *spl.TokenAccount) { d := carol; a.Delegate, a.DelegatedAmount = &d, 100 })
			},
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{unsigned(spl.TokenTransfer(f.prog, f.src, f.dst, carol, 1), carol)}
			},
			err: runtime.ErrMissingRequiredSignature},
		{name: "owner-still-works-with-delegate",
			setup: func(f *fixture) {
				f.edit(f.src, func(a *spl.TokenAccount) { d := carol; a.Delegate, a.DelegatedAmount = &d, 100 })
			},
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransfer(f.prog, f.src, f.dst, alice, 1000)}
			},
			check: func(t *testing.T, f *fixture) {
				if a := f.h.TokenAccount(f.src); a.DelegatedAmount != 100 {
					t.Errorf("delegated amount changed: %+v", a)
				}
			}},
		{name: "self-transfer",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransfer(f.prog, f.src, f.src, alice, 10)}
			},
			check: func(t *testing.T, f *fixture) {
				if amountOf(t, f, f.src) != supply {
					t.Error("self-transfer changed the balance")
				}
			}},
		{name: "self-transfer-foreign-account",
			setup: func(f *fixture) { f.h.Account(f.src).Owner = foreignPrg },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransfer(f.prog, f.src, f.src, alice, 10)}
			},
			err: runtime.ErrIncorrectProgramID, logs: []string{"Program log: Error: IncorrectProgramId"}},
		{name: "zero-amount-foreign-destination",
			setup: func(f *fixture) { f.h.Account(f.dst).Owner = foreignPrg },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransfer(f.prog, f.src, f.dst, alice, 0)}
			},
			err: runtime.ErrIncorrectProgramID},
		{name: "foreign-source-caught-by-runtime", only: classicOnly,
			setup: func(f *fixture) { f.h.Account(f.src).Owner = foreignPrg },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransfer(f.prog, f.src, f.dst, alice, 1)}
			},
			err: runtime.ErrExternalAccountDataModified},
		{name: "foreign-source-checked", only: t22Only,
			setup: func(f *fixture) { f.h.Account(f.src).Owner = foreignPrg },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransfer(f.prog, f.src, f.dst, alice, 1)}
			},
			err: runtime.ErrIncorrectProgramID},
		{name: "destination-overflow",
			setup: func(f *fixture) { f.edit(f.dst, func(a *spl.TokenAccount) { a.Amount = math.MaxUint64 }) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransfer(f.prog, f.src, f.dst, alice, 1)}
			},
			err: token.ErrOverflow, logs: []string{"Program log: Error: Operation overflowed"}},
		{name: "readonly-destination",
			ixs: func(f *fixture) []txwire.Instruction {
				in := spl.TokenTransfer(f.prog, f.src, f.dst, alice, 1)
				in.Accounts[1].IsWritable = false
				return []txwire.Instruction{in}
			},
			err: runtime.ErrReadonlyDataModified},
		{name: "missing-authority",
			ixs: func(f *fixture) []txwire.Instruction {
				in := spl.TokenTransfer(f.prog, f.src, f.dst, alice, 1)
				in.Accounts = in.Accounts[:2]
				return []txwire.Instruction{in}
			},
			err: runtime.ErrNotEnoughAccountKeys, logs: []string{"Program log: Error: NotEnoughAccountKeys"}},
		{name: "native",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransfer(f.prog, f.wsolA, f.wsolB, alice, 250_000_000)}
			},
			check: func(t *testing.T, f *fixture) {
				if f.h.Lamports(f.wsolA) != rentToken+750_000_000 || f.h.Lamports(f.wsolB) != rentToken+250_000_000 {
					t.Errorf("lamports %d %d", f.h.Lamports(f.wsolA), f.h.Lamports(f.wsolB))
				}
				if amountOf(t, f, f.wsolA) != 750_000_000 || amountOf(t, f, f.wsolB) != 250_000_000 {
					t.Error("amounts")
				}
			}},
	})
}

// TestTransferLogs pins the exact log sequence of a failing transfer
// (chain-rpc.md §5.1, classic program).
func TestTransferLogs(t *testing.T) {
	f := newFixture(t, token.Token)
	res := f.h.Run(payer, spl.TokenTransfer(f.prog, f.src, f.dst, alice, supply+1))
	want := []string{
		"Program TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA invoke [1]",
		"Program log: Instruction: Transfer",
		"Program log: Error: insufficient funds",
		"Program TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA consumed 4645 of 200000 compute units",
		"Program TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA failed: custom program error: 0x1",
	}
	if strings.Join(res.Logs, "\n") != strings.Join(want, "\n") {
		t.Fatalf("logs:\n%s\nwant:\n%s", strings.Join(res.Logs, "\n"), strings.Join(want, "\n"))
	}
	res = f.h.Run(payer, spl.TokenTransferChecked(f.prog, f.src, f.mint, f.dst, alice, 5, decimals))
	res.RequireSuccess(t)
	if res.ComputeUsed != token.Cost(spl.TokenTransferCheckedOp) {
		t.Errorf("TransferChecked used %d CU", res.ComputeUsed)
	}
}

func TestMintBurn(t *testing.T) {
	runTokenCases(t, []tokenCase{
		{name: "mint-to",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenMintTo(f.prog, f.mint, f.dst, mintAuth, 700),
					spl.TokenMintToChecked(f.prog, f.mint, f.dst, mintAuth, 300, decimals)}
			},
			logs: []string{"Program log: Instruction: MintTo", "Program log: Instruction: MintToChecked"},
			check: func(t *testing.T, f *fixture) {
				if amountOf(t, f, f.dst) != 1000 || f.h.Mint(f.mint).Supply != supply+1000 {
					t.Error("mint")
				}
			}},
		{name: "mint-to-wrong-authority",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenMintTo(f.prog, f.mint, f.dst, alice, 1)}
			},
			err: token.ErrOwnerMismatch},
		{name: "mint-to-authority-not-signer",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{unsigned(spl.TokenMintTo(f.prog, f.mint, f.dst, mintAuth, 1), mintAuth)}
			},
			err: runtime.ErrMissingRequiredSignature},
		{name: "mint-to-fixed-supply",
			setup: func(f *fixture) { f.editMint(f.mint, func(m *spl.Mint) { m.MintAuthority = nil }) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenMintTo(f.prog, f.mint, f.dst, mintAuth, 1)}
			},
			err: token.ErrFixedSupply, logs: []string{"Program log: Error: the total supply of this token is fixed"}},
		{name: "mint-to-frozen",
			setup: func(f *fixture) { f.edit(f.dst, func(a *spl.TokenAccount) { a.State = spl.StateFrozen }) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenMintTo(f.prog, f.mint, f.dst, mintAuth, 1)}
			},
			err: token.ErrAccountFrozen},
		{name: "mint-to-native",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenMintTo(f.prog, f.nativeMint, f.wsolB, mintAuth, 1)}
			},
			err: token.ErrNativeNotSupported},
		{name: "mint-to-mismatch",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenMintTo(f.prog, f.mint2, f.dst, mintAuth, 1)}
			},
			err: token.ErrMintMismatch},
		{name: "mint-to-checked-decimals",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenMintToChecked(f.prog, f.mint, f.dst, mintAuth, 1, 2)}
			},
			err: token.ErrMintDecimalsMismatch},
		{name: "mint-to-supply-overflow",
			setup: func(f *fixture) { f.editMint(f.mint, func(m *spl.Mint) { m.Supply = math.MaxUint64 }) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenMintTo(f.prog, f.mint, f.dst, mintAuth, 1)}
			},
			err: token.ErrOverflow},
		{name: "mint-to-uninitialized-mint",
			setup: func(f *fixture) { f.blank(f.mint, spl.MintSize) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenMintTo(f.prog, f.mint, f.dst, mintAuth, 1)}
			},
			err: runtime.ErrUninitializedAccount},
		{name: "burn",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenBurn(f.prog, f.src, f.mint, alice, 100),
					burnChecked(f.prog, f.src, f.mint, alice, 50, decimals)}
			},
			logs: []string{"Program log: Instruction: Burn", "Program log: Instruction: BurnChecked"},
			check: func(t *testing.T, f *fixture) {
				if amountOf(t, f, f.src) != supply-150 || f.h.Mint(f.mint).Supply != supply-150 {
					t.Error("burn")
				}
			}},
		{name: "burn-insufficient",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenBurn(f.prog, f.src, f.mint, alice, supply+1)}
			},
			err: token.ErrInsufficientFunds},
		{name: "burn-mint-mismatch",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenBurn(f.prog, f.src, f.mint2, alice, 1)}
			},
			err: token.ErrMintMismatch},
		{name: "burn-checked-decimals",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{burnChecked(f.prog, f.src, f.mint, alice, 1, 0)}
			},
			err: token.ErrMintDecimalsMismatch},
		{name: "burn-native",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenBurn(f.prog, f.wsolA, f.nativeMint, alice, 1)}
			},
			err: token.ErrNativeNotSupported},
		{name: "burn-frozen",
			setup: func(f *fixture) { f.edit(f.src, func(a *spl.TokenAccount) { a.State = spl.StateFrozen }) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenBurn(f.prog, f.src, f.mint, alice, 1)}
			},
			err: token.ErrAccountFrozen},
		{name: "burn-wrong-owner",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenBurn(f.prog, f.src, f.mint, bob, 1)}
			},
			err: token.ErrOwnerMismatch},
		{name: "burn-by-delegate",
			setup: func(f *fixture) {
				f.edit(f.src, func(a *spl.TokenAccount) { d := carol; a.Delegate, a.DelegatedAmount = &d, 10 })
			},
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenBurn(f.prog, f.src, f.mint, carol, 10)}
			},
			check: func(t *testing.T, f *fixture) {
				if a := f.h.TokenAccount(f.src); a.Delegate != nil || a.Amount != supply-10 {
					t.Errorf("source %+v", a)
				}
			}},
		{name: "burn-incinerator-owned-without-signature",
			setup: func(f *fixture) { f.edit(f.src, func(a *spl.TokenAccount) { a.Owner = spl.IncineratorID }) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenBurn(f.prog, f.src, f.mint, stranger, 10)}
			},
			check: func(t *testing.T, f *fixture) {
				if f.h.Mint(f.mint).Supply != supply-10 {
					t.Error("supply")
				}
			}},
	})
}

func TestApproveRevokeFreeze(t *testing.T) {
	runTokenCases(t, []tokenCase{
		{name: "approve",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenApprove(f.prog, f.src, carol, alice, 77)}
			},
			logs: []string{"Program log: Instruction: Approve"},
			check: func(t *testing.T, f *fixture) {
				if a := f.h.TokenAccount(f.src); a.Delegate == nil || *a.Delegate != carol || a.DelegatedAmount != 77 {
					t.Errorf("%+v", a)
				}
			}},
		{name: "approve-checked",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{approveChecked(f.prog, f.src, f.mint, carol, alice, 77, decimals)}
			}},
		{name: "approve-checked-decimals",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{approveChecked(f.prog, f.src, f.mint, carol, alice, 77, 1)}
			},
			err: token.ErrMintDecimalsMismatch},
		{name: "approve-checked-mint-mismatch",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{approveChecked(f.prog, f.src, f.mint2, carol, alice, 77, 9)}
			},
			err: token.ErrMintMismatch},
		{name: "approve-frozen",
			setup: func(f *fixture) { f.edit(f.src, func(a *spl.TokenAccount) { a.State = spl.StateFrozen }) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenApprove(f.prog, f.src, carol, alice, 77)}
			},
			err: token.ErrAccountFrozen},
		{name: "approve-wrong-owner",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenApprove(f.prog, f.src, carol, carol, 77)}
			},
			err: token.ErrOwnerMismatch},
		{name: "revoke",
			setup: func(f *fixture) {
				f.edit(f.src, func(a *spl.TokenAccount) { d := carol; a.Delegate, a.DelegatedAmount = &d, 10 })
			},
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenRevoke(f.prog, f.src, alice)}
			},
			check: func(t *testing.T, f *fixture) {
				if a := f.h.TokenAccount(f.src); a.Delegate != nil || a.DelegatedAmount != 0 {
					t.Errorf("%+v", a)
				}
			}},
		// Both programs let a delegate give up its own approval.
		{name: "revoke-by-delegate",
			setup: func(f *fixture) {
				f.edit(f.src, func(a *spl.TokenAccount) { d := carol; a.Delegate, a.DelegatedAmount = &d, 10 })
			},
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenRevoke(f.prog, f.src, carol)}
			},
			check: func(t *testing.T, f *fixture) {
				if a := f.h.TokenAccount(f.src); a.Delegate != nil || a.DelegatedAmount != 0 {
					t.Errorf("delegate kept: %+v", a)
				}
			}},
		{name: "freeze-thaw",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenFreezeAccount(f.prog, f.src, f.mint, freezeAuth)}
			},
			logs: []string{"Program log: Instruction: FreezeAccount"},
			check: func(t *testing.T, f *fixture) {
				if f.h.TokenAccount(f.src).State != spl.StateFrozen {
					t.Fatal("not frozen")
				}
				f.h.Run(payer, spl.TokenTransfer(f.prog, f.src, f.dst, alice, 1)).RequireError(t, 0, token.ErrAccountFrozen)
				f.h.Run(payer, spl.TokenThawAccount(f.prog, f.src, f.mint, freezeAuth)).RequireSuccess(t)
				f.h.Run(payer, spl.TokenTransfer(f.prog, f.src, f.dst, alice, 1)).RequireSuccess(t)
			}},
		{name: "freeze-twice",
			setup: func(f *fixture) { f.edit(f.src, func(a *spl.TokenAccount) { a.State = spl.StateFrozen }) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenFreezeAccount(f.prog, f.src, f.mint, freezeAuth)}
			},
			err: token.ErrInvalidState, logs: []string{"Program log: Error: Invalid account state for operation"}},
		{name: "thaw-unfrozen",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenThawAccount(f.prog, f.src, f.mint, freezeAuth)}
			},
			err: token.ErrInvalidState},
		{name: "freeze-no-authority",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenFreezeAccount(f.prog, f.other, f.mint2, freezeAuth)}
			},
			err: token.ErrMintCannotFreeze, logs: []string{"Program log: Error: This token mint cannot freeze accounts"}},
		{name: "freeze-wrong-authority",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenFreezeAccount(f.prog, f.src, f.mint, mintAuth)}
			},
			err: token.ErrOwnerMismatch},
		{name: "freeze-native",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenFreezeAccount(f.prog, f.wsolA, f.nativeMint, freezeAuth)}
			},
			err: token.ErrNativeNotSupported},
		{name: "freeze-mint-mismatch",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenFreezeAccount(f.prog, f.src, f.mint2, freezeAuth)}
			},
			err: token.ErrMintMismatch},
	})
}

func TestSetAuthority(t *testing.T) {
	c := carol
	runTokenCases(t, []tokenCase{
		{name: "account-owner",
			setup: func(f *fixture) {
				f.edit(f.src, func(a *spl.TokenAccount) { d := bob; a.Delegate, a.DelegatedAmount = &d, 10 })
			},
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenSetAuthority(f.prog, f.src, alice, spl.AuthorityAccountOwner, &c)}
			},
			check: func(t *testing.T, f *fixture) {
				if a := f.h.TokenAccount(f.src); a.Owner != carol || a.Delegate != nil || a.DelegatedAmount != 0 {
					t.Errorf("%+v", a)
				}
			}},
		{name: "account-owner-none",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenSetAuthority(f.prog, f.src, alice, spl.AuthorityAccountOwner, nil)}
			},
			err: token.ErrInvalidInstruction},
		{name: "account-owner-wrong-signer",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenSetAuthority(f.prog, f.src, bob, spl.AuthorityAccountOwner, &c)}
			},
			err: token.ErrOwnerMismatch},
		{name: "close-authority",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{
					spl.TokenSetAuthority(f.prog, f.dst, bob, spl.AuthorityCloseAccount, &c),
					spl.TokenCloseAccount(f.prog, f.dst, carol, carol),
				}
			},
			check: func(t *testing.T, f *fixture) {
				if f.h.Account(f.dst) != nil || f.h.Lamports(carol) != rentToken {
					t.Error("close by close authority")
				}
			}},
		{name: "account-unsupported-type",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenSetAuthority(f.prog, f.src, alice, spl.AuthorityMintTokens, &c)}
			},
			err: token.ErrAuthorityTypeNotSupported},
		{name: "frozen-account",
			setup: func(f *fixture) { f.edit(f.src, func(a *spl.TokenAccount) { a.State = spl.StateFrozen }) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenSetAuthority(f.prog, f.src, alice, spl.AuthorityAccountOwner, &c)}
			},
			err: token.ErrAccountFrozen},
		{name: "mint-authority",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{
					spl.TokenSetAuthority(f.prog, f.mint, mintAuth, spl.AuthorityMintTokens, &c),
					spl.TokenMintTo(f.prog, f.mint, f.dst, carol, 5),
				}
			}},
		{name: "disable-mint-authority",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenSetAuthority(f.prog, f.mint, mintAuth, spl.AuthorityMintTokens, nil)}
			},
			check: func(t *testing.T, f *fixture) {
				f.h.Run(payer, spl.TokenSetAuthority(f.prog, f.mint, mintAuth, spl.AuthorityMintTokens, &c)).RequireError(t, 0, token.ErrFixedSupply)
			}},
		{name: "freeze-authority-disabled",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenSetAuthority(f.prog, f.mint2, mintAuth, spl.AuthorityFreezeAccount, &c)}
			},
			err: token.ErrMintCannotFreeze},
		{name: "mint-unsupported-type",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenSetAuthority(f.prog, f.mint, mintAuth, spl.AuthorityCloseAccount, &c)}
			},
			err: token.ErrAuthorityTypeNotSupported},
		{name: "neither-mint-nor-account", only: classicOnly,
			setup: func(f *fixture) { f.blank(f.src, 100) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenSetAuthority(f.prog, f.src, alice, spl.AuthorityAccountOwner, &c)}
			},
			err: runtime.ErrInvalidArgument},
		{name: "neither-mint-nor-account", only: t22Only,
			setup: func(f *fixture) { f.blank(f.src, 100) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenSetAuthority(f.prog, f.src, alice, spl.AuthorityAccountOwner, &c)}
			},
			err: runtime.ErrInvalidAccountData},
		{name: "bad-authority-type", only: classicOnly,
			ixs: func(f *fixture) []txwire.Instruction {
				in := spl.TokenSetAuthority(f.prog, f.src, alice, spl.AuthorityAccountOwner, &c)
				in.Data[1] = 4
				return []txwire.Instruction{in}
			},
			err: token.ErrInvalidInstruction},
		{name: "native-owner-change-clears-close-authority",
			setup: func(f *fixture) {
				f.edit(f.wsolA, func(a *spl.TokenAccount) { x := bob; a.CloseAuthority = &x })
			},
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenSetAuthority(f.prog, f.wsolA, alice, spl.AuthorityAccountOwner, &c)}
			},
			check: func(t *testing.T, f *fixture) {
				if a := f.h.TokenAccount(f.wsolA); a.CloseAuthority != nil || a.Owner != carol {
					t.Errorf("%+v", a)
				}
			}},
	})
}

func TestCloseAndSyncNative(t *testing.T) {
	runTokenCases(t, []tokenCase{
		{name: "close-empty",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenCloseAccount(f.prog, f.dst, carol, bob)}
			},
			logs: []string{"Program log: Instruction: CloseAccount"},
			check: func(t *testing.T, f *fixture) {
				if f.h.Account(f.dst) != nil || f.h.Lamports(carol) != rentToken {
					t.Errorf("dst %+v carol %d", f.h.Account(f.dst), f.h.Lamports(carol))
				}
			}},
		{name: "close-reopen-in-same-tx",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{
					spl.TokenCloseAccount(f.prog, f.dst, payer, bob),
					spl.SystemCreateAccount(payer, f.dst, rentToken, spl.TokenAccountSize, f.prog),
				}
			},
			check: func(t *testing.T, f *fixture) {
				if a := f.h.Account(f.dst); a == nil || a.Owner != f.prog || len(a.Data) != spl.TokenAccountSize || a.Data[108] != 0 {
					t.Errorf("recreated account %+v", a)
				}
			}},
		{name: "close-with-balance",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenCloseAccount(f.prog, f.src, alice, alice)}
			},
			err: token.ErrNonNativeHasBalance, logs: []string{"Program log: Error: Non-native account can only be closed if its balance is zero"}},
		{name: "close-to-self",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenCloseAccount(f.prog, f.dst, f.dst, bob)}
			},
			err: runtime.ErrInvalidAccountData},
		{name: "close-wrong-authority",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenCloseAccount(f.prog, f.dst, bob, alice)}
			},
			err: token.ErrOwnerMismatch},
		{name: "close-native-with-balance",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenCloseAccount(f.prog, f.wsolA, alice, alice)}
			},
			check: func(t *testing.T, f *fixture) {
				if f.h.Lamports(alice) != rentToken+programtestSOL {
					t.Errorf("alice got %d", f.h.Lamports(alice))
				}
			}},
		{name: "close-system-owned-needs-incinerator",
			setup: func(f *fixture) { f.edit(f.dst, func(a *spl.TokenAccount) { a.Owner = runtime.SystemProgramID }) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenCloseAccount(f.prog, f.dst, carol, stranger)}
			},
			err: runtime.ErrInvalidAccountData},
		{name: "sync-native",
			setup: func(f *fixture) { f.h.Account(f.wsolB).Lamports += 5_000 },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenSyncNative(f.prog, f.wsolB)}
			},
			logs: []string{"Program log: Instruction: SyncNative"},
			check: func(t *testing.T, f *fixture) {
				if amountOf(t, f, f.wsolB) != 5_000 {
					t.Error("amount")
				}
			}},
		{name: "sync-native-non-native",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenSyncNative(f.prog, f.dst)}
			},
			err: token.ErrNonNativeNotSupported},
		{name: "sync-native-foreign",
			setup: func(f *fixture) { f.h.Account(f.wsolB).Owner = foreignPrg },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenSyncNative(f.prog, f.wsolB)}
			},
			err: runtime.ErrIncorrectProgramID},
		// p-token sets the amount to the lamports above the reserve even
		// when that lowers it (Token-2022: TestNativeSyncNative).
		{name: "sync-native-lamports-below-amount", only: classicOnly,
			setup: func(f *fixture) { f.edit(f.wsolA, func(a *spl.TokenAccount) { a.Amount += 1 }) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenSyncNative(f.prog, f.wsolA)}
			},
			check: func(t *testing.T, f *fixture) {
				if a := f.h.TokenAccount(f.wsolA); a.Amount != f.h.Account(f.wsolA).Lamports-*a.IsNative {
					t.Errorf("amount %d", a.Amount)
				}
			}},
	})
}

const programtestSOL = 1_000_000_000

func TestInitialize(t *testing.T) {
	newMint, newAcct, ms := key("new-mint"), key("new-account"), key("multisig")
	fa := freezeAuth
	runTokenCases(t, []tokenCase{
		{name: "initialize-mint",
			setup: func(f *fixture) { f.blank(newMint, spl.MintSize) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{initMint(f.prog, newMint, 2, mintAuth, &fa)}
			},
			logs: []string{"Program log: Instruction: InitializeMint"},
			check: func(t *testing.T, f *fixture) {
				m := f.h.Mint(newMint)
				if !m.IsInitialized || m.Decimals != 2 || *m.MintAuthority != mintAuth || *m.FreezeAuthority != freezeAuth || m.Supply != 0 {
					t.Errorf("%+v", m)
				}
			}},
		{name: "initialize-mint2",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{
					spl.SystemCreateAccount(payer, newMint, rentMint, spl.MintSize, f.prog),
					spl.TokenInitializeMint2(f.prog, newMint, 9, mintAuth, nil),
				}
			},
			logs: []string{"Program log: Instruction: InitializeMint2"},
			check: func(t *testing.T, f *fixture) {
				if m := f.h.Mint(newMint); m.FreezeAuthority != nil || m.Decimals != 9 {
					t.Errorf("%+v", m)
				}
			}},
		{name: "initialize-mint-twice",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenInitializeMint2(f.prog, f.mint, 9, mintAuth, nil)}
			},
			err: token.ErrAlreadyInUse, logs: []string{"Program log: Error: account or token already in use"}},
		{name: "initialize-mint-not-rent-exempt",
			setup: func(f *fixture) {
				f.h.SetAccount(newMint, runtime.Account{Lamports: rentMint - 1, Owner: f.prog, Data: make([]byte, spl.MintSize)})
			},
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenInitializeMint2(f.prog, newMint, 9, mintAuth, nil)}
			},
			err: token.ErrNotRentExempt, logs: []string{"Program log: Error: Lamport balance below rent-exempt threshold"}},
		{name: "initialize-mint-wrong-rent-sysvar",
			setup: func(f *fixture) { f.blank(newMint, spl.MintSize) },
			ixs: func(f *fixture) []txwire.Instruction {
				in := initMint(f.prog, newMint, 2, mintAuth, nil)
				in.Accounts[1].PublicKey = spl.SysvarClockID
				return []txwire.Instruction{in}
			},
			err: runtime.ErrInvalidArgument},
		{name: "initialize-mint-wrong-size",
			setup: func(f *fixture) { f.blank(newMint, 83) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenInitializeMint2(f.prog, newMint, 9, mintAuth, nil)}
			},
			err: runtime.ErrInvalidAccountData},
		{name: "initialize-account",
			setup: func(f *fixture) { f.blank(newAcct, spl.TokenAccountSize) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{initAccount(f.prog, newAcct, f.mint, carol)}
			},
			logs: []string{"Program log: Instruction: InitializeAccount"},
			check: func(t *testing.T, f *fixture) {
				a := f.h.TokenAccount(newAcct)
				if a.Owner != carol || a.Mint != f.mint || a.State != spl.StateInitialized || a.IsNative != nil || a.Amount != 0 {
					t.Errorf("%+v", a)
				}
			}},
		{name: "initialize-account2",
			setup: func(f *fixture) { f.blank(newAcct, spl.TokenAccountSize) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{initAccount2(f.prog, newAcct, f.mint, carol)}
			},
			logs: []string{"Program log: Instruction: InitializeAccount2"},
			check: func(t *testing.T, f *fixture) {
				if a := f.h.TokenAccount(newAcct); a.Owner != carol {
					t.Errorf("%+v", a)
				}
			}},
		{name: "initialize-account3",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{
					spl.SystemCreateAccount(payer, newAcct, rentToken, spl.TokenAccountSize, f.prog),
					spl.TokenInitializeAccount3(f.prog, newAcct, f.mint, carol),
				}
			},
			logs: []string{"Program log: Instruction: InitializeAccount3"},
			check: func(t *testing.T, f *fixture) {
				want := spl.TokenAccount{Mint: f.mint, Owner: carol, State: spl.StateInitialized}.Encode()
				if got := f.h.Account(newAcct).Data; string(got) != string(want) {
					t.Errorf("layout %x", got)
				}
			}},
		{name: "initialize-account-twice",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenInitializeAccount3(f.prog, f.dst, f.mint, carol)}
			},
			err: token.ErrAlreadyInUse},
		{name: "initialize-account-not-rent-exempt",
			setup: func(f *fixture) {
				f.h.SetAccount(newAcct, runtime.Account{Lamports: rentToken - 1, Owner: f.prog, Data: make([]byte, spl.TokenAccountSize)})
			},
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenInitializeAccount3(f.prog, newAcct, f.mint, carol)}
			},
			err: token.ErrNotRentExempt},
		{name: "initialize-account-foreign-mint",
			setup: func(f *fixture) {
				f.blank(newAcct, spl.TokenAccountSize)
				f.h.Account(f.mint).Owner = foreignPrg
			},
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenInitializeAccount3(f.prog, newAcct, f.mint, carol)}
			},
			err: runtime.ErrIncorrectProgramID},
		{name: "initialize-account-invalid-mint",
			setup: func(f *fixture) {
				f.blank(newAcct, spl.TokenAccountSize)
				f.blank(newMint, spl.MintSize)
			},
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenInitializeAccount3(f.prog, newAcct, newMint, carol)}
			},
			err: token.ErrInvalidMint, logs: []string{"Program log: Error: Invalid Mint"}},
		{name: "initialize-native-account",
			setup: func(f *fixture) {
				f.h.SetAccount(newAcct, runtime.Account{Lamports: rentToken + 42, Owner: f.prog, Data: make([]byte, spl.TokenAccountSize)})
			},
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenInitializeAccount3(f.prog, newAcct, f.nativeMint, carol)}
			},
			check: func(t *testing.T, f *fixture) {
				a := f.h.TokenAccount(newAcct)
				if a.IsNative == nil || *a.IsNative != rentToken || a.Amount != 42 {
					t.Errorf("%+v", a)
				}
			}},
		{name: "initialize-multisig",
			setup: func(f *fixture) { f.blank(ms, spl.MultisigSize) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{initMultisig(f.prog, ms, 2, true, alice, bob, carol)}
			},
			logs: []string{"Program log: Instruction: InitializeMultisig"},
			check: func(t *testing.T, f *fixture) {
				m, err := spl.DecodeMultisig(f.h.Account(ms).Data)
				if err != nil || m.M != 2 || m.N != 3 || !m.IsInitialized || m.Signers[2] != carol {
					t.Errorf("%+v %v", m, err)
				}
			}},
		{name: "initialize-multisig-no-signers",
			setup: func(f *fixture) { f.blank(ms, spl.MultisigSize) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{initMultisig(f.prog, ms, 1, false)}
			},
			err: token.ErrInvalidNumberOfProvidedSigners},
		{name: "initialize-multisig-m-too-large",
			setup: func(f *fixture) { f.blank(ms, spl.MultisigSize) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{initMultisig(f.prog, ms, 12, false, alice)}
			},
			err: token.ErrInvalidNumberOfRequiredSigners},
		{name: "initialize-multisig-wrong-size", only: classicOnly,
			setup: func(f *fixture) { f.blank(ms, 354) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{initMultisig(f.prog, ms, 1, false, alice)}
			},
			err: runtime.ErrInvalidAccountData},
		{name: "initialize-multisig-wrong-size", only: t22Only,
			setup: func(f *fixture) { f.blank(ms, 354) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{initMultisig(f.prog, ms, 1, false, alice)}
			},
			err: runtime.ErrInvalidArgument},
	})
}

func TestMultisigAuthority(t *testing.T) {
	for _, prog := range []*token.Program{token.Token, token.Token2022} {
		t.Run(prog.ID().String(), func(t *testing.T) {
			f := newFixture(t, prog)
			ms := key("multisig")
			f.blank(ms, spl.MultisigSize)
			f.h.Run(payer, initMultisig(f.prog, ms, 2, false, alice, bob, carol)).RequireSuccess(t)
			msOwned := key("ms-owned")
			f.h.AddTokenAccount(msOwned, f.prog, spl.TokenAccount{Mint: f.mint, Owner: ms, Amount: 100})

			// 2 of 3 sign: ok.
			f.h.Run(payer, viaMultisig(spl.TokenTransfer(f.prog, msOwned, f.dst, ms, 10), 2, alice, carol)).RequireSuccess(t)
			// 1 of 3: not enough.
			f.h.Run(payer, viaMultisig(spl.TokenTransfer(f.prog, msOwned, f.dst, ms, 10), 2, bob)).
				RequireError(t, 0, runtime.ErrMissingRequiredSignature)
			// A listed signer that did not sign fails even if M others did.
			in := viaMultisig(spl.TokenTransfer(f.prog, msOwned, f.dst, ms, 10), 2, alice, carol)
			in.Accounts = append(in.Accounts, txwire.Readonly(bob))
			f.h.Run(payer, in).RequireError(t, 0, runtime.ErrMissingRequiredSignature)
			// The same signer twice counts once.
			f.h.Run(payer, viaMultisig(spl.TokenTransfer(f.prog, msOwned, f.dst, ms, 10), 2, alice, alice)).
				RequireError(t, 0, runtime.ErrMissingRequiredSignature)
			// Non-members do not count.
			f.h.Run(payer, viaMultisig(spl.TokenTransfer(f.prog, msOwned, f.dst, ms, 10), 2, alice, stranger)).
				RequireError(t, 0, runtime.ErrMissingRequiredSignature)
			if got := amountOf(t, f, f.dst); got != 10 {
				t.Errorf("dst %d", got)
			}
			// Re-initializing fails.
			f.h.Run(payer, initMultisig(f.prog, ms, 1, false, alice)).RequireError(t, 0, token.ErrAlreadyInUse)
			// A multisig mint authority.
			f.editMint(f.mint, func(m *spl.Mint) { m.MintAuthority = &ms })
			f.h.Run(payer, viaMultisig(spl.TokenMintTo(f.prog, f.mint, f.dst, ms, 5), 2, bob, carol)).RequireSuccess(t)
			if f.h.Mint(f.mint).Supply != supply+5 {
				t.Error("multisig mint")
			}
		})
	}
}

func TestQueries(t *testing.T) {
	b64 := func(v uint64) string {
		return base64.StdEncoding.EncodeToString(binary.LittleEndian.AppendUint64(nil, v))
	}
	runTokenCases(t, []tokenCase{
		{name: "get-account-data-size",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{getAccountDataSize(f.prog, f.mint)}
			},
			logs: []string{"Program log: Instruction: GetAccountDataSize"}},
		{name: "get-account-data-size-immutable-owner", only: classicOnly,
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{getAccountDataSize(f.prog, f.mint, 7)}
			},
			logs: []string{"Program log: Instruction: GetAccountDataSize", "Program return: TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA " + b64(165)}},
		{name: "get-account-data-size-immutable-owner", only: t22Only,
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{getAccountDataSize(f.prog, f.mint, 7)}
			},
			logs: []string{"Program return: TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb " + b64(170)}},
		{name: "get-account-data-size-mint-extension", only: t22Only,
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{getAccountDataSize(f.prog, f.mint, 1)}
			},
			err: token.ErrExtensionTypeMismatch},
		{name: "get-account-data-size-memo-transfer", only: t22Only,
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{getAccountDataSize(f.prog, f.mint, 8)}
			},
			logs: []string{"Program return: TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb " + b64(171)}},
		{name: "get-account-data-size-foreign-mint",
			setup: func(f *fixture) { f.h.Account(f.mint).Owner = foreignPrg },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{getAccountDataSize(f.prog, f.mint)}
			},
			err: runtime.ErrIncorrectProgramID},
		{name: "get-account-data-size-not-a-mint",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{getAccountDataSize(f.prog, f.src)}
			},
			err: token.ErrInvalidMint},
		{name: "amount-to-ui-amount",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{ix(f.prog, opAmount(spl.TokenAmountToUiAmountOp, 1_500_000), txwire.Readonly(f.mint))}
			},
			logs: []string{"Program log: Instruction: AmountToUiAmount"}},
		{name: "ui-amount-to-amount",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{ix(f.prog, append([]byte{byte(spl.TokenUiAmountToAmountOp)}, "1.5"...), txwire.Readonly(f.mint))}
			},
			logs: []string{"Program log: Instruction: UiAmountToAmount"}},
		{name: "ui-amount-to-amount-too-precise",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{ix(f.prog, append([]byte{byte(spl.TokenUiAmountToAmountOp)}, "0.0000001"...), txwire.Readonly(f.mint))}
			},
			err: runtime.ErrInvalidArgument, logs: []string{"Program log: Error: InvalidArgument"}},
	})

	// Return data contents.
	for _, prog := range []*token.Program{token.Token, token.Token2022} {
		f := newFixture(t, prog)
		res := f.h.Run(payer, ix(f.prog, opAmount(spl.TokenAmountToUiAmountOp, 1_500_000), txwire.Readonly(f.mint)))
		res.RequireSuccess(t)
		if res.ReturnData == nil || string(res.ReturnData.Data) != "1.5" || res.ReturnData.ProgramID != f.prog {
			t.Errorf("AmountToUiAmount return %+v", res.ReturnData)
		}
		res = f.h.Run(payer, ix(f.prog, append([]byte{byte(spl.TokenUiAmountToAmountOp)}, "1.5"...), txwire.Readonly(f.mint)))
		res.RequireSuccess(t)
		if res.ReturnData == nil || binary.LittleEndian.Uint64(res.ReturnData.Data) != 1_500_000 {
			t.Errorf("UiAmountToAmount return %+v", res.ReturnData)
		}
		res = f.h.Run(payer, getAccountDataSize(f.prog, f.mint))
		res.RequireSuccess(t)
		if res.ReturnData == nil || binary.LittleEndian.Uint64(res.ReturnData.Data) != 165 {
			t.Errorf("GetAccountDataSize return %+v", res.ReturnData)
		}
	}
}

func TestImmutableOwner(t *testing.T) {
	acct := key("immutable")
	runTokenCases(t, []tokenCase{
		{name: "classic-is-a-no-op", only: classicOnly,
			setup: func(f *fixture) { f.blank(acct, spl.TokenAccountSize) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenInitializeImmutableOwner(f.prog, acct)}
			},
			logs: []string{"Program log: Instruction: InitializeImmutableOwner", "Program log: Please upgrade to SPL Token 2022 for immutable owner support"},
			check: func(t *testing.T, f *fixture) {
				if string(f.h.Account(acct).Data) != string(make([]byte, spl.TokenAccountSize)) {
					t.Error("data changed")
				}
			}},
		{name: "initialized-account",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenInitializeImmutableOwner(f.prog, f.dst)}
			},
			err: token.ErrAlreadyInUse},
		{name: "needs-room", only: t22Only,
			setup: func(f *fixture) { f.blank(acct, spl.TokenAccountSize) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenInitializeImmutableOwner(f.prog, acct)}
			},
			err: runtime.ErrInvalidAccountData},
		{name: "extension-then-owner-change", only: t22Only,
			setup: func(f *fixture) { f.blank(acct, 170) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{
					spl.TokenInitializeImmutableOwner(f.prog, acct),
					spl.TokenInitializeAccount3(f.prog, acct, f.mint, carol),
				}
			},
			check: func(t *testing.T, f *fixture) {
				data := f.h.Account(acct).Data
				if len(data) != 170 || data[165] != spl.AccountTypeAccount || data[166] != 7 || data[167] != 0 || data[168] != 0 || data[169] != 0 {
					t.Fatalf("layout %x", data[160:])
				}
				a := f.h.TokenAccount(acct)
				if a.Owner != carol || a.Mint != f.mint {
					t.Fatalf("%+v", a)
				}
				b := bob
				res := f.h.Run(payer, spl.TokenSetAuthority(f.prog, acct, carol, spl.AuthorityAccountOwner, &b))
				res.RequireError(t, 0, token.ErrImmutableOwner)
				res.RequireLogs(t, "Program log: The owner authority cannot be changed", "Program TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb failed: custom program error: 0x22")
				// Extended accounts work like base ones.
				f.h.Run(payer, spl.TokenMintTo(f.prog, f.mint, acct, mintAuth, 9), spl.TokenTransfer(f.prog, acct, f.dst, carol, 4)).RequireSuccess(t)
				if got := amountOf(t, f, acct); got != 5 {
					t.Errorf("amount %d", got)
				}
			}},
	})
}

func TestDecodeErrors(t *testing.T) {
	runTokenCases(t, []tokenCase{
		{name: "empty",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{ix(f.prog, nil, txwire.Writable(f.src))}
			},
			err: token.ErrInvalidInstruction, logs: []string{"Program log: Error: Invalid instruction"}},
		{name: "extension-opcode", only: classicOnly,
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{ix(f.prog, []byte{25}, txwire.Writable(f.src))}
			},
			err: token.ErrInvalidInstruction},
		{name: "short-transfer", only: classicOnly,
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{ix(f.prog, []byte{3, 1, 2}, txwire.Writable(f.src))}
			},
			err: token.ErrInvalidInstruction},
		{name: "short-transfer", only: t22Only,
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{ix(f.prog, []byte{3, 1, 2}, txwire.Writable(f.src))}
			},
			err: runtime.ErrInvalidInstructionData},
		{name: "transfer-trailing-bytes-ignored", only: classicOnly,
			ixs: func(f *fixture) []txwire.Instruction {
				in := spl.TokenTransfer(f.prog, f.src, f.dst, alice, 1)
				in.Data = append(in.Data, 0xff)
				return []txwire.Instruction{in}
			}},
		{name: "transfer-trailing-bytes-rejected", only: t22Only,
			ixs: func(f *fixture) []txwire.Instruction {
				in := spl.TokenTransfer(f.prog, f.src, f.dst, alice, 1)
				in.Data = append(in.Data, 0xff)
				return []txwire.Instruction{in}
			},
			err: runtime.ErrInvalidInstructionData},
	})
}

func TestParseUiAmount(t *testing.T) {
	cases := []struct {
		in   string
		dec  uint8
		want uint64
		ok   bool
	}{
		{"1.5", 6, 1_500_000, true}, {"1", 0, 1, true}, {".5", 1, 5, true}, {"1.", 2, 100, true},
		{"1.50000000", 6, 1_500_000, true}, {"+2", 0, 2, true}, {"0", 9, 0, true},
		{"18446744073709551615", 0, math.MaxUint64, true},
		{"", 2, 0, false}, {".", 2, 0, false}, {"1.2.3", 6, 0, false}, {"0.0000001", 6, 0, false},
		{"-1", 0, 0, false}, {"abc", 0, 0, false}, {"18446744073709551616", 0, 0, false}, {"1e3", 0, 0, false},
		{"++1", 0, 0, false},
	}
	for _, c := range cases {
		got, err := token.ParseUiAmount(c.in, c.dec)
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("ParseUiAmount(%q, %d) = %d, %v", c.in, c.dec, got, err)
		}
	}
}
