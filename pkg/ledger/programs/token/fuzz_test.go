package token_test

import (
	"encoding/binary"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/programs/token"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// FuzzToken feeds arbitrary instruction data and account selections to
// SPL Token (even first byte of prog) or Token-2022 (odd) over a populated
// fixture: no panics, and successes conserve lamports and keep the mint's
// supply equal to the sum of the fixture's balances.
func FuzzToken(f *testing.F) {
	const s, w = 0x10, 0x20
	fx := newFixture(f, token.Token)
	ms, blank, blank170 := key("multisig"), key("blank"), key("blank170")
	// Pool indexes: 0 mint, 1 mint2, 2 src, 3 dst, 4 other, 5 wsolA,
	// 6 wsolB, 7 native mint, 8 alice, 9 bob, 10 mintAuth, 11 freezeAuth,
	// 12 multisig, 13 blank, 14 rent sysvar, 15 blank170.
	pool := func(fx *fixture) []solana.PublicKey {
		return []solana.PublicKey{fx.mint, fx.mint2, fx.src, fx.dst, fx.other, fx.wsolA, fx.wsolB, fx.nativeMint,
			alice, bob, mintAuth, freezeAuth, ms, blank, spl.SysvarRentID, blank170}
	}
	c := carol
	for _, seed := range []struct {
		data []byte
		sel  []byte
	}{
		{spl.TokenTransfer(fx.prog, fx.src, fx.dst, alice, 5).Data, []byte{2 | w, 3 | w, 8 | s}},
		{spl.TokenTransferChecked(fx.prog, fx.src, fx.mint, fx.dst, alice, 5, decimals).Data, []byte{2 | w, 0, 3 | w, 8 | s}},
		{spl.TokenTransfer(fx.prog, fx.wsolA, fx.wsolB, alice, 5).Data, []byte{5 | w, 6 | w, 8 | s}},
		{spl.TokenMintTo(fx.prog, fx.mint, fx.dst, mintAuth, 5).Data, []byte{0 | w, 3 | w, 10 | s}},
		{spl.TokenBurn(fx.prog, fx.src, fx.mint, alice, 5).Data, []byte{2 | w, 0 | w, 8 | s}},
		{spl.TokenApprove(fx.prog, fx.src, bob, alice, 5).Data, []byte{2 | w, 9, 8 | s}},
		{spl.TokenRevoke(fx.prog, fx.src, alice).Data, []byte{2 | w, 8 | s}},
		{spl.TokenSetAuthority(fx.prog, fx.src, alice, spl.AuthorityAccountOwner, &c).Data, []byte{2 | w, 8 | s}},
		{spl.TokenCloseAccount(fx.prog, fx.dst, bob, bob).Data, []byte{3 | w, 9 | w, 9 | s}},
		{spl.TokenFreezeAccount(fx.prog, fx.src, fx.mint, freezeAuth).Data, []byte{2 | w, 0, 11 | s}},
		{spl.TokenSyncNative(fx.prog, fx.wsolB).Data, []byte{6 | w}},
		{spl.TokenInitializeMint2(fx.prog, blank, 2, alice, nil).Data, []byte{13 | w}},
		{spl.TokenInitializeAccount3(fx.prog, blank, fx.mint, bob).Data, []byte{13 | w, 0}},
		{spl.TokenInitializeImmutableOwner(fx.prog, blank170).Data, []byte{15 | w}},
		{[]byte{byte(spl.TokenInitializeMultisig2Op), 2}, []byte{12 | w, 8, 9, 10}},
		{[]byte{byte(spl.TokenGetAccountDataSizeOp), 7, 0}, []byte{0}},
		{append([]byte{byte(spl.TokenUiAmountToAmountOp)}, "1.25"...), []byte{0}},
		{opAmount(spl.TokenAmountToUiAmountOp, 12345), []byte{0}},
	} {
		f.Add(byte(0), seed.data, seed.sel)
		f.Add(byte(1), seed.data, seed.sel)
	}
	f.Fuzz(func(t *testing.T, prog byte, data, sel []byte) {
		p := token.Token
		if prog%2 == 1 {
			p = token.Token2022
		}
		fx := newFixture(t, p)
		fx.h.CheckRent = false
		fx.blank(ms, spl.MultisigSize)
		fx.blank(blank, spl.TokenAccountSize)
		fx.blank(blank170, 170)
		res := fx.h.FuzzInstruction(fx.prog, pool(fx), data, sel)
		if res.Err != nil {
			return
		}
		var sum uint64
		for _, k := range []solana.PublicKey{fx.src, fx.dst, blank, blank170} {
			a := fx.h.Account(k)
			if a == nil || a.Owner != fx.prog || len(a.Data) < spl.TokenAccountSize {
				continue
			}
			if ta, err := spl.DecodeTokenAccount(a.Data[:spl.TokenAccountSize]); err == nil && ta.Mint == fx.mint && ta.State != spl.StateUninitialized {
				sum += ta.Amount
			}
		}
		m := fx.h.Account(fx.mint)
		if m != nil && m.Owner == fx.prog && len(m.Data) == spl.MintSize && m.Data[45] == 1 {
			if supply := binary.LittleEndian.Uint64(m.Data[36:44]); supply != sum {
				t.Fatalf("supply %d != sum of balances %d\n%s", supply, sum, res)
			}
		}
	})
}
