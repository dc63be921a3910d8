package token_test

import (
	"encoding/binary"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/programs/token"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// Wrapped SOL: every instruction path that treats native accounts (or the
// native mint) specially, under both programs, checked against the
// programs' processors (solana-program/token and token-2022 processor.rs).
// The fixture's wsolA (alice) holds 1 SOL wrapped, wsolB (bob) none; both
// carry the 165-byte reserve. The harness checks lamport conservation.

// nativeState asserts a native account's reserve, amount and lamports.
func nativeState(t *testing.T, f *fixture, k solana.PublicKey, reserve, amount uint64) {
	t.Helper()
	a := f.h.TokenAccount(k)
	if a.IsNative == nil || *a.IsNative != reserve || a.Amount != amount || f.h.Lamports(k) != reserve+amount {
		t.Errorf("%s: is_native %v amount %d lamports %d, want reserve %d amount %d lamports %d",
			k, a.IsNative, a.Amount, f.h.Lamports(k), reserve, amount, reserve+amount)
	}
}

// prefunded stores an uninitialized 165-byte account of the fixture's
// program holding lamports.
func prefunded(f *fixture, k solana.PublicKey, lamports uint64) {
	f.h.SetAccount(k, runtime.Account{Lamports: lamports, Owner: f.prog, Data: make([]byte, spl.TokenAccountSize)})
}

func TestNativeInitializeAccount(t *testing.T) {
	acct := key("new-wsol")
	const extra = 250_000_000
	want := func(t *testing.T, f *fixture) {
		nativeState(t, f, acct, rentToken, extra)
		a := f.h.TokenAccount(acct)
		if a.Mint != f.nativeMint || a.Owner != carol || a.State != spl.StateInitialized || a.Delegate != nil || a.CloseAuthority != nil {
			t.Errorf("%+v", a)
		}
	}
	runTokenCases(t, []tokenCase{
		{name: "initialize-account",
			setup: func(f *fixture) { prefunded(f, acct, rentToken+extra) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{initAccount(f.prog, acct, f.nativeMint, carol)}
			},
			check: want},
		{name: "initialize-account2",
			setup: func(f *fixture) { prefunded(f, acct, rentToken+extra) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{initAccount2(f.prog, acct, f.nativeMint, carol)}
			},
			check: want},
		{name: "initialize-account3",
			setup: func(f *fixture) { prefunded(f, acct, rentToken+extra) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenInitializeAccount3(f.prog, acct, f.nativeMint, carol)}
			},
			check: want},
		{name: "initialize-account3-exactly-rent-exempt",
			setup: func(f *fixture) { prefunded(f, acct, rentToken) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenInitializeAccount3(f.prog, acct, f.nativeMint, carol)}
			},
			check: func(t *testing.T, f *fixture) { nativeState(t, f, acct, rentToken, 0) }},
		{name: "initialize-account3-not-rent-exempt",
			setup: func(f *fixture) { prefunded(f, acct, rentToken-1) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenInitializeAccount3(f.prog, acct, f.nativeMint, carol)}
			},
			err: token.ErrNotRentExempt},
		{name: "create-and-initialize",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{
					spl.SystemCreateAccount(payer, acct, rentToken+extra, spl.TokenAccountSize, f.prog),
					spl.TokenInitializeAccount3(f.prog, acct, f.nativeMint, carol),
				}
			},
			check: want},
		// SPL Token never reads the native mint when initializing a wrapped
		// account; Token-2022 unpacks it like any mint.
		{name: "initialize-without-native-mint", only: classicOnly,
			setup: func(f *fixture) { delete(f.h.Accounts, f.nativeMint); prefunded(f, acct, rentToken+extra) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenInitializeAccount3(f.prog, acct, f.nativeMint, carol)}
			},
			check: want},
		{name: "initialize-without-native-mint", only: t22Only,
			setup: func(f *fixture) { delete(f.h.Accounts, f.nativeMint); prefunded(f, acct, rentToken+extra) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenInitializeAccount3(f.prog, acct, f.nativeMint, carol)}
			},
			// Token-2022 checks the mint's owner first: a missing mint is
			// a System account.
			err: runtime.ErrIncorrectProgramID},
		{name: "initialize-with-foreign-native-mint", only: t22Only,
			setup: func(f *fixture) { f.h.Account(f.nativeMint).Owner = foreignPrg; prefunded(f, acct, rentToken+extra) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenInitializeAccount3(f.prog, acct, f.nativeMint, carol)}
			},
			err: runtime.ErrIncorrectProgramID},
		{name: "initialize-twice",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenInitializeAccount3(f.prog, f.wsolB, f.nativeMint, carol)}
			},
			err: token.ErrAlreadyInUse},
	})
}

func TestNativeSyncNative(t *testing.T) {
	withRentSysvar := func(f *fixture, k, sysvar solana.PublicKey) txwire.Instruction {
		in := spl.TokenSyncNative(f.prog, k)
		in.Accounts = append(in.Accounts, txwire.Readonly(sysvar))
		return in
	}
	runTokenCases(t, []tokenCase{
		{name: "system-transfer-then-sync",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{
					spl.SystemTransfer(payer, f.wsolB, 700_000_000),
					spl.TokenSyncNative(f.prog, f.wsolB),
				}
			},
			logs:  []string{"Program log: Instruction: SyncNative"},
			check: func(t *testing.T, f *fixture) { nativeState(t, f, f.wsolB, rentToken, 700_000_000) }},
		{name: "nothing-to-sync",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenSyncNative(f.prog, f.wsolA)}
			},
			check: func(t *testing.T, f *fixture) { nativeState(t, f, f.wsolA, rentToken, programtestSOL) }},
		{name: "lamports-below-reserve",
			setup: func(f *fixture) { f.h.Account(f.wsolB).Lamports = rentToken - 1 },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenSyncNative(f.prog, f.wsolB)}
			},
			err: token.ErrOverflow},
		{name: "uninitialized",
			setup: func(f *fixture) { f.blank(f.wsolB, spl.TokenAccountSize) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenSyncNative(f.prog, f.wsolB)}
			},
			err: runtime.ErrUninitializedAccount},
		{name: "no-account",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{ix(f.prog, []byte{byte(spl.TokenSyncNativeOp)})}
			},
			err: runtime.ErrNotEnoughAccountKeys},
		{name: "mint-account",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenSyncNative(f.prog, f.nativeMint)}
			},
			err: runtime.ErrInvalidAccountData},
		{name: "frozen-non-native",
			setup: func(f *fixture) { f.edit(f.dst, func(a *spl.TokenAccount) { a.State = spl.StateFrozen }) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenSyncNative(f.prog, f.dst)}
			},
			err: token.ErrNonNativeNotSupported},
		// SPL Token keeps the recorded reserve and never lowers the amount.
		// p-token recomputes the reserve from the account's size.
		{name: "recomputes-reserve", only: classicOnly,
			setup: func(f *fixture) { f.edit(f.wsolA, func(a *spl.TokenAccount) { r := uint64(1_000); a.IsNative = &r }) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenSyncNative(f.prog, f.wsolA)}
			},
			check: func(t *testing.T, f *fixture) {
				if a := f.h.TokenAccount(f.wsolA); *a.IsNative != rentToken || a.Amount != programtestSOL {
					t.Errorf("%+v", a)
				}
			}},
		{name: "ignores-extra-accounts", only: classicOnly,
			setup: func(f *fixture) { f.h.Account(f.wsolB).Lamports += 9 },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{withRentSysvar(f, f.wsolB, stranger)}
			},
			check: func(t *testing.T, f *fixture) { nativeState(t, f, f.wsolB, rentToken, 9) }},
		// Token-2022 recomputes and stores the reserve, reads an optional
		// Rent sysvar account, and takes a lower amount too.
		{name: "recomputes-reserve", only: t22Only,
			setup: func(f *fixture) { f.edit(f.wsolA, func(a *spl.TokenAccount) { r := uint64(1_000); a.IsNative = &r }) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenSyncNative(f.prog, f.wsolA)}
			},
			check: func(t *testing.T, f *fixture) { nativeState(t, f, f.wsolA, rentToken, programtestSOL) }},
		{name: "lamports-below-amount", only: t22Only,
			setup: func(f *fixture) { f.edit(f.wsolA, func(a *spl.TokenAccount) { a.Amount += 1 }) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenSyncNative(f.prog, f.wsolA)}
			},
			check: func(t *testing.T, f *fixture) { nativeState(t, f, f.wsolA, rentToken, programtestSOL) }},
		{name: "rent-sysvar", only: t22Only,
			setup: func(f *fixture) { f.h.Account(f.wsolB).Lamports += 9 },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{withRentSysvar(f, f.wsolB, spl.SysvarRentID)}
			},
			check: func(t *testing.T, f *fixture) { nativeState(t, f, f.wsolB, rentToken, 9) }},
		{name: "not-the-rent-sysvar", only: t22Only,
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{withRentSysvar(f, f.wsolB, stranger)}
			},
			err: runtime.ErrInvalidArgument},
	})
}

func TestNativeTransfer(t *testing.T) {
	const amount = 250_000_000
	moved := func(t *testing.T, f *fixture) {
		nativeState(t, f, f.wsolA, rentToken, programtestSOL-amount)
		nativeState(t, f, f.wsolB, rentToken, amount)
	}
	untouched := func(t *testing.T, f *fixture) {
		nativeState(t, f, f.wsolA, rentToken, programtestSOL)
		nativeState(t, f, f.wsolB, rentToken, 0)
	}
	runTokenCases(t, []tokenCase{
		{name: "transfer",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransfer(f.prog, f.wsolA, f.wsolB, alice, amount)}
			},
			check: moved},
		{name: "transfer-checked",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransferChecked(f.prog, f.wsolA, f.nativeMint, f.wsolB, alice, amount, 9)}
			},
			check: moved},
		{name: "transfer-checked-decimals",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransferChecked(f.prog, f.wsolA, f.nativeMint, f.wsolB, alice, amount, 6)}
			},
			err: token.ErrMintDecimalsMismatch},
		{name: "transfer-checked-other-native-mint", only: classicOnly,
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransferChecked(f.prog, f.wsolA, spl.NativeMint2022ID, f.wsolB, alice, amount, 9)}
			},
			err: token.ErrMintMismatch},
		// Token-2022 checks the mint's owner before comparing it.
		{name: "transfer-checked-other-native-mint", only: t22Only,
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransferChecked(f.prog, f.wsolA, spl.NativeMintID, f.wsolB, alice, amount, 9)}
			},
			err: runtime.ErrIncorrectProgramID},
		{name: "whole-balance",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransfer(f.prog, f.wsolA, f.wsolB, alice, programtestSOL)}
			},
			check: func(t *testing.T, f *fixture) {
				nativeState(t, f, f.wsolA, rentToken, 0)
				nativeState(t, f, f.wsolB, rentToken, programtestSOL)
			}},
		// The reserve is not spendable: lamports above the amount do not
		// count until synced.
		{name: "more-than-amount",
			setup: func(f *fixture) { f.h.Account(f.wsolA).Lamports += programtestSOL },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransfer(f.prog, f.wsolA, f.wsolB, alice, programtestSOL+1)}
			},
			err: token.ErrInsufficientFunds},
		{name: "self-transfer",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransfer(f.prog, f.wsolA, f.wsolA, alice, amount)}
			},
			check: func(t *testing.T, f *fixture) { nativeState(t, f, f.wsolA, rentToken, programtestSOL) }},
		{name: "zero",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransfer(f.prog, f.wsolA, f.wsolB, alice, 0)}
			},
			check: untouched},
		{name: "by-delegate",
			setup: func(f *fixture) {
				f.edit(f.wsolA, func(a *spl.TokenAccount) { d := carol; a.Delegate, a.DelegatedAmount = &d, amount })
			},
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransfer(f.prog, f.wsolA, f.wsolB, carol, amount)}
			},
			check: func(t *testing.T, f *fixture) {
				moved(t, f)
				if a := f.h.TokenAccount(f.wsolA); a.Delegate != nil || a.DelegatedAmount != 0 {
					t.Errorf("delegate left %+v", a)
				}
			}},
		{name: "wrong-owner",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransfer(f.prog, f.wsolA, f.wsolB, bob, amount)}
			},
			err: token.ErrOwnerMismatch},
		{name: "to-non-native",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenTransfer(f.prog, f.wsolA, f.dst, alice, amount)}
			},
			err: token.ErrMintMismatch},
		{name: "approve-then-delegate-transfer",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{
					spl.TokenApprove(f.prog, f.wsolA, carol, alice, amount),
					spl.TokenTransferChecked(f.prog, f.wsolA, f.nativeMint, f.wsolB, carol, amount, 9),
				}
			},
			check: moved},
	})
}

func TestNativeCloseAccount(t *testing.T) {
	runTokenCases(t, []tokenCase{
		// Closing unwraps: every lamport, reserve included, goes to the
		// destination whatever the token amount.
		{name: "unwrap",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenCloseAccount(f.prog, f.wsolA, carol, alice)}
			},
			check: func(t *testing.T, f *fixture) {
				if f.h.Account(f.wsolA) != nil || f.h.Lamports(carol) != rentToken+programtestSOL {
					t.Errorf("account %+v, carol %d", f.h.Account(f.wsolA), f.h.Lamports(carol))
				}
			}},
		{name: "unwrap-unsynced-lamports",
			setup: func(f *fixture) { f.h.Account(f.wsolB).Lamports += 123 },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenCloseAccount(f.prog, f.wsolB, bob, bob)}
			},
			check: func(t *testing.T, f *fixture) {
				if f.h.Lamports(bob) != rentToken+123 {
					t.Errorf("bob %d", f.h.Lamports(bob))
				}
			}},
		{name: "close-authority",
			setup: func(f *fixture) { f.edit(f.wsolA, func(a *spl.TokenAccount) { c := carol; a.CloseAuthority = &c }) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenCloseAccount(f.prog, f.wsolA, stranger, carol)}
			},
			check: func(t *testing.T, f *fixture) {
				if f.h.Lamports(stranger) != rentToken+programtestSOL {
					t.Errorf("stranger %d", f.h.Lamports(stranger))
				}
			}},
		{name: "owner-when-close-authority-set",
			setup: func(f *fixture) { f.edit(f.wsolA, func(a *spl.TokenAccount) { c := carol; a.CloseAuthority = &c }) },
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{spl.TokenCloseAccount(f.prog, f.wsolA, alice, alice)}
			},
			err: token.ErrOwnerMismatch},
		{name: "unsigned",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{unsigned(spl.TokenCloseAccount(f.prog, f.wsolA, alice, alice), alice)}
			},
			err: runtime.ErrMissingRequiredSignature},
		{name: "transfer-then-unwrap-in-one-tx",
			ixs: func(f *fixture) []txwire.Instruction {
				return []txwire.Instruction{
					spl.TokenTransfer(f.prog, f.wsolA, f.wsolB, alice, 400_000_000),
					spl.TokenCloseAccount(f.prog, f.wsolA, alice, alice),
				}
			},
			check: func(t *testing.T, f *fixture) {
				if f.h.Lamports(alice) != rentToken+600_000_000 {
					t.Errorf("alice %d", f.h.Lamports(alice))
				}
				nativeState(t, f, f.wsolB, rentToken, 400_000_000)
			}},
	})
}

func TestNativeMintRefusals(t *testing.T) {
	newMint := func(f *fixture) []txwire.Instruction {
		return []txwire.Instruction{spl.TokenInitializeMint2(f.prog, f.nativeMint, 9, mintAuth, nil)}
	}
	fa := freezeAuth
	runTokenCases(t, []tokenCase{
		{name: "mint-to", ixs: func(f *fixture) []txwire.Instruction {
			return []txwire.Instruction{spl.TokenMintTo(f.prog, f.nativeMint, f.wsolB, mintAuth, 1)}
		}, err: token.ErrNativeNotSupported},
		{name: "mint-to-checked", ixs: func(f *fixture) []txwire.Instruction {
			return []txwire.Instruction{spl.TokenMintToChecked(f.prog, f.nativeMint, f.wsolB, mintAuth, 1, 9)}
		}, err: token.ErrNativeNotSupported},
		// The native account check comes before the mint's (missing)
		// authority is looked at.
		{name: "mint-to-zero", ixs: func(f *fixture) []txwire.Instruction {
			return []txwire.Instruction{spl.TokenMintTo(f.prog, f.nativeMint, f.wsolB, stranger, 0)}
		}, err: token.ErrNativeNotSupported},
		{name: "burn", ixs: func(f *fixture) []txwire.Instruction {
			return []txwire.Instruction{spl.TokenBurn(f.prog, f.wsolA, f.nativeMint, alice, 1)}
		}, err: token.ErrNativeNotSupported},
		{name: "burn-checked", ixs: func(f *fixture) []txwire.Instruction {
			return []txwire.Instruction{burnChecked(f.prog, f.wsolA, f.nativeMint, alice, 1, 9)}
		}, err: token.ErrNativeNotSupported},
		{name: "freeze", ixs: func(f *fixture) []txwire.Instruction {
			return []txwire.Instruction{spl.TokenFreezeAccount(f.prog, f.wsolA, f.nativeMint, freezeAuth)}
		}, err: token.ErrNativeNotSupported},
		// Thaw checks the state first: a native account is never frozen.
		{name: "thaw", ixs: func(f *fixture) []txwire.Instruction {
			return []txwire.Instruction{spl.TokenThawAccount(f.prog, f.wsolA, f.nativeMint, freezeAuth)}
		}, err: token.ErrInvalidState},
		{name: "initialize-mint2", ixs: newMint, err: token.ErrAlreadyInUse},
		{name: "initialize-mint", ixs: func(f *fixture) []txwire.Instruction {
			return []txwire.Instruction{initMint(f.prog, f.nativeMint, 9, mintAuth, &fa)}
		}, err: token.ErrAlreadyInUse},
		{name: "set-mint-authority", ixs: func(f *fixture) []txwire.Instruction {
			return []txwire.Instruction{spl.TokenSetAuthority(f.prog, f.nativeMint, mintAuth, spl.AuthorityMintTokens, &fa)}
		}, err: token.ErrFixedSupply},
		{name: "set-freeze-authority", ixs: func(f *fixture) []txwire.Instruction {
			return []txwire.Instruction{spl.TokenSetAuthority(f.prog, f.nativeMint, freezeAuth, spl.AuthorityFreezeAccount, &fa)}
		}, err: token.ErrMintCannotFreeze},
		{name: "close-native-mint", ixs: func(f *fixture) []txwire.Instruction {
			return []txwire.Instruction{spl.TokenCloseAccount(f.prog, f.nativeMint, alice, alice)}
		}, err: runtime.ErrInvalidAccountData},
	})
}

// TestNativeMintQueries runs the read-only instructions against the
// genesis native mints.
func TestNativeMintQueries(t *testing.T) {
	for _, prog := range []*token.Program{token.Token, token.Token2022} {
		t.Run(prog.ID().String(), func(t *testing.T) {
			f := newFixture(t, prog)
			res := f.h.Run(payer, getAccountDataSize(f.prog, f.nativeMint))
			res.RequireSuccess(t)
			if res.ReturnData == nil || binary.LittleEndian.Uint64(res.ReturnData.Data) != spl.TokenAccountSize {
				t.Errorf("GetAccountDataSize: %+v", res.ReturnData)
			}
			if prog == token.Token2022 {
				res := f.h.Run(payer, getAccountDataSize(f.prog, f.nativeMint, 7))
				res.RequireSuccess(t)
				if got := binary.LittleEndian.Uint64(res.ReturnData.Data); got != 170 {
					t.Errorf("GetAccountDataSize(ImmutableOwner) = %d", got)
				}
			}
			res = f.h.Run(payer, ix(f.prog, opAmount(spl.TokenAmountToUiAmountOp, 1_500_000_000), txwire.Readonly(f.nativeMint)))
			res.RequireSuccess(t)
			if string(res.ReturnData.Data) != "1.5" {
				t.Errorf("AmountToUiAmount = %q", res.ReturnData.Data)
			}
			res = f.h.Run(payer, ix(f.prog, append([]byte{byte(spl.TokenUiAmountToAmountOp)}, "0.000000001"...), txwire.Readonly(f.nativeMint)))
			res.RequireSuccess(t)
			if got := binary.LittleEndian.Uint64(res.ReturnData.Data); got != 1 {
				t.Errorf("UiAmountToAmount = %d", got)
			}
			// The other program's native mint is not this program's.
			other := spl.NativeMint2022ID
			if prog == token.Token2022 {
				other = spl.NativeMintID
			}
			f.h.Run(payer, getAccountDataSize(f.prog, other)).RequireError(t, 0, runtime.ErrIncorrectProgramID)
		})
	}
}
