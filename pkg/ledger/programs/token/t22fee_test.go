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

// feeMintData is a Token-2022 mint (2 decimals) with a TransferFeeConfig
// whose withdraw-withheld authority is auth (none when zero) and whose
// mint holds withheld fees.
func feeMintData(auth solana.PublicKey, withheld uint64) []byte {
	d := make([]byte, 166+4+108)
	d[44], d[45] = 2, 1 // decimals, initialized
	d[165] = 1          // AccountType::Mint
	binary.LittleEndian.PutUint16(d[166:], 1)
	binary.LittleEndian.PutUint16(d[168:], 108)
	copy(d[170+32:], auth[:])
	binary.LittleEndian.PutUint64(d[170+64:], withheld)
	return d
}

// feeAccountData is a token account of mint with a TransferFeeAmount
// extension holding withheld fees.
func feeAccountData(mint, owner solana.PublicKey, amount, withheld uint64) []byte {
	d := make([]byte, 166+4+8)
	copy(d, mint[:])
	copy(d[32:], owner[:])
	binary.LittleEndian.PutUint64(d[64:], amount)
	d[108] = 1 // initialized
	d[165] = 2 // AccountType::Account
	binary.LittleEndian.PutUint16(d[166:], 2)
	binary.LittleEndian.PutUint16(d[168:], 8)
	binary.LittleEndian.PutUint64(d[170:], withheld)
	return d
}

// TestWithdrawWithheldOrder: both withheld-fee withdrawals check the
// destination's owner before the mint, its extension and its authority,
// and its data only after the authority, as Token-2022 does (found by the
// differential test against the real program), and move the withheld
// fees when everything is in order.
func TestWithdrawWithheldOrder(t *testing.T) {
	prog := token.Token2022.ID()
	withdrawer, src, feeDst := key("withdrawer"), key("fee-src"), key("fee-dst")
	fromMint := func(f *fixture) txwire.Instruction {
		return ix(prog, []byte{26, 2}, txwire.Writable(f.mint), txwire.Writable(feeDst), txwire.Signer(withdrawer))
	}
	fromAccounts := func(f *fixture) txwire.Instruction {
		return ix(prog, []byte{26, 3, 1}, txwire.Readonly(f.mint), txwire.Writable(feeDst), txwire.Signer(withdrawer), txwire.Writable(src))
	}
	set := func(f *fixture, k, owner solana.PublicKey, data []byte) {
		f.h.SetAccount(k, runtime.Account{Lamports: f.h.Env.Rent.MinimumBalance(len(data)), Owner: owner, Data: data})
	}
	type dstKind int
	const (
		dstMissing dstKind = iota
		dstSystem
		dstGarbage
		dstValid
	)
	for _, tc := range []struct {
		name     string
		withdraw func(*fixture) txwire.Instruction
		auth     solana.PublicKey
		noExt    bool
		dst      dstKind
		err      *runtime.InstructionError
	}{
		{"mint/missing-destination-before-authority", fromMint, solana.PublicKey{}, false, dstMissing, runtime.ErrIncorrectProgramID},
		{"mint/system-destination-before-extension", fromMint, withdrawer, true, dstSystem, runtime.ErrIncorrectProgramID},
		{"mint/destination-data-after-authority", fromMint, solana.PublicKey{}, false, dstGarbage, token.ErrNoAuthorityExists},
		{"mint/ok", fromMint, withdrawer, false, dstValid, nil},
		{"accounts/missing-destination-before-authority", fromAccounts, solana.PublicKey{}, false, dstMissing, runtime.ErrIncorrectProgramID},
		{"accounts/missing-destination-right-authority", fromAccounts, withdrawer, false, dstMissing, runtime.ErrIncorrectProgramID},
		{"accounts/system-destination-before-extension", fromAccounts, withdrawer, true, dstSystem, runtime.ErrIncorrectProgramID},
		{"accounts/destination-data-after-authority", fromAccounts, solana.PublicKey{}, false, dstGarbage, token.ErrNoAuthorityExists},
		{"accounts/ok", fromAccounts, withdrawer, false, dstValid, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, token.Token2022)
			mint := feeMintData(tc.auth, 70)
			if tc.noExt {
				mint = mint[:82]
			}
			set(f, f.mint, prog, mint)
			set(f, src, prog, feeAccountData(f.mint, alice, 0, 30))
			switch tc.dst {
			case dstSystem:
				f.h.Fund(feeDst, 1_000_000)
			case dstGarbage:
				set(f, feeDst, prog, make([]byte, 10))
			case dstValid:
				set(f, feeDst, prog, feeAccountData(f.mint, bob, 5, 0))
			}
			res := f.h.Run(payer, tc.withdraw(f))
			if tc.err != nil {
				res.RequireError(t, 0, tc.err)
				return
			}
			res.RequireSuccess(t)
			got := binary.LittleEndian.Uint64(f.h.Account(feeDst).Data[64:])
			want := uint64(5 + 70)
			if tc.name == "accounts/ok" {
				want = 5 + 30
				if w := binary.LittleEndian.Uint64(f.h.Account(src).Data[170:]); w != 0 {
					t.Errorf("source still withholds %d", w)
				}
			} else if w := binary.LittleEndian.Uint64(f.h.Account(f.mint).Data[170+64:]); w != 0 {
				t.Errorf("mint still withholds %d", w)
			}
			if got != want {
				t.Errorf("destination holds %d, want %d", got, want)
			}
		})
	}
}

// FuzzTransferFee feeds arbitrary Token-2022 instructions over a mint with
// a TransferFeeConfig (no mint authority, 1% fee) and three accounts of it:
// no panics, lamports conserved (FuzzInstruction) and tokens conserved —
// the supply always equals the balances plus the fees withheld in the
// accounts and in the mint, whatever moved.
func FuzzTransferFee(f *testing.F) {
	const s, w = 0x10, 0x20
	prog := token.Token2022.ID()
	withdrawer, feeA, feeB, feeC, blank := key("withdrawer"), key("fee-a"), key("fee-b"), key("fee-c"), key("fee-blank")
	// Pool indexes: 0 mint, 1 feeA (alice), 2 feeB (bob), 3 feeC (bob),
	// 4 alice, 5 bob, 6 withdrawer, 7 blank, 8 rent sysvar, 9 stranger.
	pool := func(fx *fixture) []solana.PublicKey {
		return []solana.PublicKey{fx.mint, feeA, feeB, feeC, alice, bob, withdrawer, blank, spl.SysvarRentID, stranger}
	}
	u64 := func(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
	for _, seed := range []struct{ data, sel []byte }{
		{append(append(append([]byte{26, 1}, u64(1000)...), 2), u64(10)...), []byte{1 | w, 0, 2 | w, 4 | s}},
		{[]byte{26, 2}, []byte{0 | w, 2 | w, 6 | s}},
		{[]byte{26, 3, 2}, []byte{0, 3 | w, 6 | s, 1 | w, 2 | w}},
		{[]byte{26, 4}, []byte{0 | w, 1 | w, 2 | w}},
		{append(append([]byte{26, 5}, 200, 0), u64(50)...), []byte{0 | w, 6 | s}},
		{append([]byte{byte(spl.TokenBurnCheckedOp)}, append(u64(7), 2)...), []byte{1 | w, 0 | w, 4 | s}},
		{append([]byte{byte(spl.TokenTransferCheckedOp)}, append(u64(300), 2)...), []byte{1 | w, 0, 3 | w, 4 | s}},
		{[]byte{26, 4}, []byte{0 | w, 3 | w, 2 | w, 2 | w}},
		{[]byte{byte(spl.TokenCloseAccountOp)}, []byte{3 | w, 5 | w, 5 | s}},
	} {
		f.Add(seed.data, seed.sel)
	}
	f.Fuzz(func(t *testing.T, data, sel []byte) {
		fx := newFixture(t, token.Token2022)
		fx.h.CheckRent = false
		set := func(k, owner solana.PublicKey, d []byte) {
			fx.h.SetAccount(k, runtime.Account{Lamports: fx.h.Env.Rent.MinimumBalance(len(d)), Owner: owner, Data: d})
		}
		m := feeMintData(withdrawer, 40)
		binary.LittleEndian.PutUint64(m[36:], 10_000+20+30+40) // supply: balances + withheld
		v := m[170:]
		copy(v, withdrawer[:]) // transfer-fee config authority
		for _, off := range []int{72, 90} {
			binary.LittleEndian.PutUint16(v[off+16:], 100) // 1%
			binary.LittleEndian.PutUint64(v[off+8:], 1_000)
		}
		set(fx.mint, prog, m)
		set(feeA, prog, feeAccountData(fx.mint, alice, 10_000, 20))
		set(feeB, prog, feeAccountData(fx.mint, bob, 0, 30))
		set(feeC, prog, feeAccountData(fx.mint, bob, 0, 0))
		fx.blank(blank, 300)
		res := fx.h.FuzzInstruction(prog, pool(fx), data, sel)
		if res.Err != nil {
			return
		}
		ma := fx.h.Account(fx.mint)
		if ma == nil || len(ma.Data) < 170+108 {
			t.Fatalf("the fee mint changed shape\n%s", res)
		}
		total := binary.LittleEndian.Uint64(ma.Data[170+64:])
		for _, k := range []solana.PublicKey{feeA, feeB, feeC} {
			a := fx.h.Account(k)
			if a == nil || a.Owner != prog || len(a.Data) < 178 {
				continue // closed (only an empty account can be)
			}
			total += binary.LittleEndian.Uint64(a.Data[64:]) + binary.LittleEndian.Uint64(a.Data[170:])
		}
		if supply := binary.LittleEndian.Uint64(ma.Data[36:]); supply != total {
			t.Fatalf("supply %d != balances + withheld %d\n%s", supply, total, res)
		}
	})
}
