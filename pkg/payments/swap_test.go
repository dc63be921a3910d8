package payments

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

func TestBumpComputeUnitLimit(t *testing.T) {
	limit := func(n uint32) txwire.Instruction {
		return txwire.Instruction{ProgramID: spl.ComputeBudgetProgramID, Data: binary.LittleEndian.AppendUint32([]byte{2}, n)}
	}
	price := txwire.Instruction{ProgramID: spl.ComputeBudgetProgramID, Data: []byte{3, 1, 0, 0, 0, 0, 0, 0, 0}}
	cases := []struct {
		name string
		in   []txwire.Instruction
		want []uint32 // the limits after, in order (0 for a non-limit instruction)
	}{
		{"raised", []txwire.Instruction{price, limit(100_000)}, []uint32{0, 140_000}},
		{"capped", []txwire.Instruction{limit(1_399_999)}, []uint32{1_400_000}},
		{"only the first", []txwire.Instruction{limit(1), limit(1)}, []uint32{40_001, 1}},
		{"none added", []txwire.Instruction{price, spl.Memo("x")}, []uint32{0, 0}},
		// A malformed limit (wrong length) is not one.
		{"malformed", []txwire.Instruction{{ProgramID: spl.ComputeBudgetProgramID, Data: []byte{2, 1, 0, 0}}}, []uint32{0}},
	}
	for _, c := range cases {
		orig := make([][]byte, len(c.in))
		for i, ix := range c.in {
			orig[i] = append([]byte(nil), ix.Data...)
		}
		in := append([]txwire.Instruction(nil), c.in...)
		bumpComputeUnitLimit(in, ScheduleComputeUnits)
		if len(in) != len(c.want) {
			t.Fatalf("%s: %d instructions", c.name, len(in))
		}
		for i, ix := range in {
			got := uint32(0)
			if ix.ProgramID == spl.ComputeBudgetProgramID && len(ix.Data) == 5 && ix.Data[0] == 2 {
				got = binary.LittleEndian.Uint32(ix.Data[1:])
			}
			if got != c.want[i] {
				t.Errorf("%s: instruction %d limit %d, want %d", c.name, i, got, c.want[i])
			}
			// The caller's data is never written to.
			if !bytes.Equal(c.in[i].Data, orig[i]) {
				t.Errorf("%s: instruction %d data modified in place", c.name, i)
			}
		}
	}
}

func TestSchedulePrivateTransferArgs(t *testing.T) {
	k := func(s string) solana.PublicKey { return pub(keyFromSeed(s)) }
	ok := SchedulePrivateTransferArgs{User: k("user"), Mint: k("mint"), Destination: k("dest"), Validator: k("validator"), Split: 1, MaxDelayMs: 5}
	if _, err := SchedulePrivateTransfer(ok); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*SchedulePrivateTransferArgs){
		"no user":      func(a *SchedulePrivateTransferArgs) { a.User = solana.PublicKey{} },
		"no validator": func(a *SchedulePrivateTransferArgs) { a.Validator = solana.PublicKey{} },
		"max < min":    func(a *SchedulePrivateTransferArgs) { a.MinDelayMs = 6 },
		"split 0":      func(a *SchedulePrivateTransferArgs) { a.Split = 0 },
		"off-curve validator": func(a *SchedulePrivateTransferArgs) {
			a.Validator = solana.MustPublicKeyFromBase58("4RvdEGaUyChj3AketeBZoY1EotNtPveMFUXL8DVetrAp") // the rent PDA
		},
	} {
		a := ok
		mut(&a)
		if _, err := SchedulePrivateTransfer(a); err == nil {
			t.Errorf("%s: built", name)
		}
	}
}
