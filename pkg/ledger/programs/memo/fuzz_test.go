package memo_test

import (
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/programs/memo"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/programtest"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// FuzzMemo feeds arbitrary data and accounts to both memo programs: no
// panics; v2 succeeds exactly when every account signs and the data is
// UTF-8, v1 exactly when the data is UTF-8.
func FuzzMemo(f *testing.F) {
	pool := []solana.PublicKey{payer, alice, bob}
	f.Add(false, []byte("invoice 42"), []byte{0x11})
	f.Add(false, []byte{0xff}, []byte{})
	f.Add(true, []byte("v1"), []byte{0x01})
	f.Fuzz(func(t *testing.T, v1 bool, data, sel []byte) {
		h := programtest.New(t, memo.Registration(), memo.RegistrationV1())
		program := spl.MemoProgramID
		if v1 {
			program = spl.MemoV1ProgramID
		}
		res := h.FuzzInstruction(program, pool, data, sel)
		allSign := true
		signs := map[solana.PublicKey]bool{}
		for _, b := range sel[:min(len(sel), programtest.MaxFuzzAccounts)] {
			signs[pool[int(b&0x0f)%len(pool)]] = signs[pool[int(b&0x0f)%len(pool)]] || b&0x10 != 0
		}
		for _, ok := range signs {
			allSign = allSign && ok
		}
		want := validUTF8(data) && (v1 || allSign)
		if (res.Err == nil) != want {
			t.Fatalf("want success=%v: %s", want, res)
		}
	})
}
