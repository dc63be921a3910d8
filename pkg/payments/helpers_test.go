package payments

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"fmt"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/cluster"
	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/schema"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// keyFromSeed returns a deterministic keypair for a label.
func keyFromSeed(label string) ed25519.PrivateKey {
	s := sha256.Sum256([]byte("ferry-payments-test:" + label))
	return ed25519.NewKeyFromSeed(s[:])
}

func pub(k ed25519.PrivateKey) solana.PublicKey { return publicOf(k) }

var (
	validatorKey = keyFromSeed("validator")
	validator    = pub(validatorKey)
	alice        = pub(keyFromSeed("alice"))
	bob          = pub(keyFromSeed("bob"))
	mint         = pub(keyFromSeed("mint"))
	baseHash     = solana.Hash(sha256.Sum256([]byte("base")))
	ephHash      = solana.Hash(sha256.Sum256([]byte("ephemeral")))
)

// testChain is an in-memory Chain with distinct blockhashes per layer so
// tests can tell which layer a transaction was built for.
type testChain struct {
	accounts  map[solana.PublicKey]*Account
	identity  solana.PublicKey
	kind      cluster.Kind
	failReads bool
	identErr  bool
}

func newTestChain() *testChain {
	return &testChain{
		accounts: map[solana.PublicKey]*Account{mint: {Owner: spl.TokenProgramID, Lamports: 1_461_600, Data: spl.Mint{Decimals: 6, IsInitialized: true}.Encode()}},
		identity: validator,
		kind:     cluster.Local,
	}
}

func (c *testChain) LatestBlockhash(_ context.Context, layer string) (Blockhash, error) {
	if c.failReads {
		return Blockhash{}, errors.New("dial http://10.0.0.1:8899: refused")
	}
	if layer == Ephemeral {
		return Blockhash{Hash: ephHash, LastValidBlockHeight: 2150}, nil
	}
	return Blockhash{Hash: baseHash, LastValidBlockHeight: 1150}, nil
}

func (c *testChain) Account(_ context.Context, k solana.PublicKey) (*Account, error) {
	if c.failReads {
		return nil, errors.New("dial http://10.0.0.1:8899: refused")
	}
	return c.accounts[k], nil
}

func (c *testChain) Identity(context.Context) (solana.PublicKey, error) {
	if c.identErr {
		return solana.PublicKey{}, errors.New("getIdentity failed")
	}
	return c.identity, nil
}

func (c *testChain) EphemeralEndpoint() string { return "http://127.0.0.1:7799" }
func (c *testChain) Cluster() cluster.Kind     { return c.kind }

// decodeBody validates a JSON body into T as the API does.
func decodeBody[T any](t *testing.T, body string) *T {
	t.Helper()
	v := new(T)
	if err := schema.Decode([]byte(body), v); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return v
}

// label names an instruction: "espl:25", "token:Transfer",
// "ata:CreateIdempotent", "system:Transfer", "memo".
func label(t *testing.T, pid solana.PublicKey, data []byte) string {
	t.Helper()
	switch pid {
	case espl.ProgramID:
		return fmt.Sprintf("espl:%d", data[0])
	case spl.TokenProgramID, spl.Token2022ProgramID:
		in, err := spl.DecodeToken(data)
		if err != nil {
			t.Fatal(err)
		}
		return "token:" + in.Op.String()
	case spl.AssociatedTokenProgramID:
		op, _ := spl.DecodeATA(data)
		return "ata:" + op.String()
	case spl.SystemProgramID:
		in, _ := spl.DecodeSystem(data)
		return "system:" + in.Op.String()
	case spl.MemoProgramID:
		return "memo"
	}
	return pid.String()
}

// planLabels names the instructions of a plan.
func planLabels(t *testing.T, plan *Plan) []string {
	var ls []string
	for _, ix := range plan.Instructions {
		ls = append(ls, label(t, ix.ProgramID, ix.Data))
	}
	return ls
}

// labels names each instruction of a build response and returns the
// decoded transaction.
func labels(t *testing.T, out *UnsignedTransaction) ([]string, *txwire.Transaction) {
	t.Helper()
	tx, err := txwire.DecodeBase64(out.TransactionBase64)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Message.Sanitize(); err != nil {
		t.Fatal(err)
	}
	var ls []string
	for _, ci := range tx.Message.Instructions {
		ls = append(ls, label(t, tx.Message.AccountKeys[ci.ProgramIDIndex], ci.Data))
	}
	if len(ls) != out.InstructionCount {
		t.Fatalf("instructionCount %d, transaction has %d", out.InstructionCount, len(ls))
	}
	return ls, tx
}

// wantAPIError asserts err is an *apierr.Error with status and code.
func wantAPIError(t *testing.T, err error, status int, code string) *apierr.Error {
	t.Helper()
	var ae *apierr.Error
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v (%T), want %d %s", err, err, status, code)
	}
	if ae.Status != status || ae.Code != code {
		t.Fatalf("err = %d %s %q, want %d %s", ae.Status, ae.Code, ae.Message, status, code)
	}
	return ae
}
