// Package loadgen drives a ledger with signed SPL TransferChecked
// transactions for benchmarks: World creates many funded owners with token
// accounts as genesis accounts (no setup transactions), SignTransfers
// pre-signs distinct transfers between them, and Run sends them to a
// JSON-RPC endpoint from concurrent clients and waits until every one is
// confirmed.
package loadgen

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger"
	rt "github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// World is a mint (6 decimals) and Owners, each with lamports for fees
// and an associated token account holding 1 000 tokens, and Recipients:
// token accounts of the mint that only receive (AddRecipients).
type World struct {
	Mint       solana.PublicKey
	Owners     []ed25519.PrivateKey
	ATAs       []solana.PublicKey
	Recipients []solana.PublicKey
}

// AddRecipients adds n token accounts (empty, owned by owner 0) at
// addresses derived from their index: a world of many accounts without
// deriving a key pair or an associated address for each.
func (w *World) AddRecipients(n int) {
	start := len(w.Recipients)
	w.Recipients = append(w.Recipients, make([]solana.PublicKey, n)...)
	Parallel(n, func(i int) {
		h := sha256.Sum256(binary.LittleEndian.AppendUint64([]byte("loadgen-recipient"), uint64(start+i)))
		w.Recipients[start+i] = solana.PublicKeyFromBytes(h[:])
	})
}

// NewWorld derives n owners deterministically.
func NewWorld(n int) *World {
	h := sha256.Sum256([]byte("loadgen-mint"))
	w := &World{Mint: solana.PublicKeyFromBytes(ed25519.NewKeyFromSeed(h[:])[32:])}
	for i := 0; i < n; i++ {
		var seed [32]byte
		binary.LittleEndian.PutUint64(seed[:], uint64(i)+1)
		k := ed25519.NewKeyFromSeed(seed[:])
		w.Owners = append(w.Owners, k)
		w.ATAs = append(w.ATAs, spl.AssociatedTokenAddress(pub(k), w.Mint, spl.TokenProgramID))
	}
	return w
}

func pub(k ed25519.PrivateKey) solana.PublicKey { return solana.PublicKeyFromBytes(k[32:]) }

// Genesis returns the accounts to put in ledger.Config.Genesis.
func (w *World) Genesis() []ledger.GenesisAccount {
	rent := rt.DefaultRent
	auth := w.Mint
	out := []ledger.GenesisAccount{{Key: w.Mint, Account: ledger.Account{
		Lamports: rent.MinimumBalance(spl.MintSize), Owner: spl.TokenProgramID,
		Data: spl.Mint{MintAuthority: &auth, Supply: uint64(len(w.Owners)) * 1_000_000_000, Decimals: 6, IsInitialized: true}.Encode(),
	}}}
	for i, k := range w.Owners {
		out = append(out,
			ledger.GenesisAccount{Key: pub(k), Account: ledger.Account{Lamports: 1_000_000_000_000, Owner: spl.SystemProgramID}},
			ledger.GenesisAccount{Key: w.ATAs[i], Account: ledger.Account{
				Lamports: rent.MinimumBalance(spl.TokenAccountSize), Owner: spl.TokenProgramID,
				Data: spl.TokenAccount{Mint: w.Mint, Owner: pub(k), Amount: 1_000_000_000, State: spl.StateInitialized}.Encode(),
			}},
		)
	}
	for _, r := range w.Recipients {
		out = append(out, ledger.GenesisAccount{Key: r, Account: ledger.Account{
			Lamports: rent.MinimumBalance(spl.TokenAccountSize), Owner: spl.TokenProgramID,
			Data: spl.TokenAccount{Mint: w.Mint, Owner: pub(w.Owners[0]), State: spl.StateInitialized}.Encode(),
		}})
	}
	return out
}

// SignPayments pre-signs n distinct TransferChecked transactions on all
// cores, the pattern of a ledger with many accounts: transaction j is
// paid and signed by owner j mod N and sends 1 + j/N base units to a
// recipient drawn at random (seeded by seed), so most go to accounts
// no recent transaction wrote.
func (w *World) SignPayments(n int, blockhash solana.Hash, seed uint64) [][]byte {
	out := make([][]byte, n)
	Parallel(n, func(j int) {
		i := j % len(w.Owners)
		h := sha256.Sum256(binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, seed), uint64(j)))
		to := w.Recipients[binary.LittleEndian.Uint64(h[:])%uint64(len(w.Recipients))]
		out[j] = w.signTransfer(i, to, uint64(1+j/len(w.Owners)), blockhash)
	})
	return out
}

// signTransfer signs owner i's TransferChecked of amount base units to
// the token account to.
func (w *World) signTransfer(i int, to solana.PublicKey, amount uint64, blockhash solana.Hash) []byte {
	msg, err := txwire.Compile(pub(w.Owners[i]), []txwire.Instruction{
		spl.TokenTransferChecked(spl.TokenProgramID, w.ATAs[i], w.Mint, to, pub(w.Owners[i]), amount, 6),
	}, blockhash)
	if err != nil {
		panic(err) // unreachable: the instruction has 5 accounts
	}
	tx := txwire.NewUnsigned(msg)
	if err := tx.Sign(w.Owners[i]); err != nil {
		panic(err)
	}
	return tx.Bytes()
}

// SignTransfers pre-signs n distinct TransferChecked transactions on all
// cores: transaction j is paid and signed by owner j mod N and sends
// 1 + j/N base units to the next owner, so no two are identical and
// consecutive transactions have different fee payers.
func (w *World) SignTransfers(n int, blockhash solana.Hash) [][]byte {
	out := make([][]byte, n)
	Parallel(n, func(j int) {
		i := j % len(w.Owners)
		next := (i + 1) % len(w.Owners)
		out[j] = w.signTransfer(i, w.ATAs[next], uint64(1+j/len(w.Owners)), blockhash)
	})
	return out
}

// Parallel runs fn(0..n-1) on all cores.
func Parallel(n int, fn func(int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		}()
	}
	wg.Wait()
}
