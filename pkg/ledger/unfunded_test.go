package ledger

import (
	"testing"

	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// TestAllowUnfundedFeePayers checks the ephemeral-rollup rule: on a free
// ledger with AllowUnfundedFeePayers, a keypair that does not exist can pay
// for a transaction (and is not created by it), while without the option,
// or on a ledger that charges fees, it is AccountNotFound as on Agave.
func TestAllowUnfundedFeePayers(t *testing.T) {
	cases := []struct {
		name    string
		cfg     Config
		landed  bool
		wantErr error
	}{
		{"free and allowed", Config{LamportsPerSignature: -1, AllowUnfundedFeePayers: true}, true, nil},
		{"free but not allowed", Config{LamportsPerSignature: -1}, false, runtime.ErrAccountNotFound},
		{"allowed but fees charged", Config{AllowUnfundedFeePayers: true}, false, runtime.ErrAccountNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := openTest(t, tc.cfg)
			payer := newKey(t)
			memo := spl.Memo("hello from nobody")
			rec, err := l.Process(ctxT(t), buildTx(t, l, payer, []txwire.Instruction{memo}))
			if !tc.landed {
				if !isTxErr(err, tc.wantErr) {
					t.Fatalf("want %v, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil || rec.Err != nil {
				t.Fatalf("transaction did not succeed: %v %v", err, rec)
			}
			if a, _ := l.Account(pubkeyOf(payer), Processed); a != nil {
				t.Fatalf("unfunded fee payer was created: %+v", a)
			}
			if rec.Meta.Fee != 0 {
				t.Fatalf("fee %d, want 0", rec.Meta.Fee)
			}
		})
	}
}
