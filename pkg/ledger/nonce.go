package ledger

import (
	"encoding/binary"

	"github.com/gagliardetto/solana-go"

	rt "github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// nonceInfo is the durable nonce a transaction uses instead of a recent
// blockhash.
type nonceInfo struct {
	// index is the nonce account's position in the transaction's keys.
	index int
	// advanced is the nonce account as it is left if the transaction
	// fails: the nonce moved on to DurableNonce(bank blockhash).
	advanced *Account
	// lamportsPerSignature is the fee rate the nonce recorded.
	lamportsPerSignature uint64
}

// durableNonce checks Agave's durable-nonce rule for a message whose
// blockhash is not a recent one: its first instruction is the System
// program's AdvanceNonceAccount on a writable, initialized, System-owned
// nonce account whose stored nonce is the message's blockhash, signed (in
// that instruction) by the nonce authority, and the nonce can still
// advance in this bank. It returns nil when the message is not a valid
// nonce transaction.
func (l *Ledger) durableNonce(msg *txwire.Message, keys []solana.PublicKey, signer, writable []bool, src source, env rt.Env) *nonceInfo {
	next := spl.DurableNonce(env.Blockhash)
	if msg.RecentBlockhash == next || len(msg.Instructions) == 0 {
		return nil
	}
	ix := msg.Instructions[0]
	if int(ix.ProgramIDIndex) >= len(keys) || keys[ix.ProgramIDIndex] != spl.SystemProgramID {
		return nil
	}
	if len(ix.Data) < 4 || binary.LittleEndian.Uint32(ix.Data) != uint32(spl.SystemAdvanceNonceAccountOp) {
		return nil
	}
	if len(ix.Accounts) == 0 || int(ix.Accounts[0]) >= len(keys) || !writable[ix.Accounts[0]] {
		return nil
	}
	idx := int(ix.Accounts[0])
	a := src.get(keys[idx])
	if a == nil || a.Owner != spl.SystemProgramID {
		return nil
	}
	st, err := spl.DecodeNonce(a.Data)
	if err != nil || !st.Initialized || st.Nonce != msg.RecentBlockhash {
		return nil
	}
	authorized := false
	for _, ai := range ix.Accounts {
		if int(ai) < len(keys) && signer[ai] && keys[ai] == st.Authority {
			authorized = true
		}
	}
	if !authorized {
		return nil
	}
	adv := a.Clone()
	spl.NonceState{Version: spl.NonceVersionCurrent, Initialized: true, Authority: st.Authority, Nonce: next,
		LamportsPerSignature: env.LamportsPerSignature}.EncodeInto(adv.Data)
	return &nonceInfo{index: idx, advanced: adv, lamportsPerSignature: st.LamportsPerSignature}
}

// nonceFeeRateAt is nonceFeeRate against the state at commitment c.
func (l *Ledger) nonceFeeRateAt(msg *txwire.Message, c Commitment) (uint64, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.nonceFeeRate(msg, viewSource{l: l, cut: l.cutoff(c)}, l.env())
}

// nonceFeeRate is what getFeeForMessage needs of a durable-nonce message
// whose blockhash is not recent: the nonce's recorded fee rate, if the
// message is a valid nonce transaction at the commitment. Callers hold mu.
func (l *Ledger) nonceFeeRate(msg *txwire.Message, src source, env rt.Env) (uint64, bool) {
	n := len(msg.AccountKeys)
	flags := make([]bool, 3*n)
	signer, writable, called := flags[:n:n], flags[n:2*n:2*n], flags[2*n:]
	for _, ix := range msg.Instructions {
		if int(ix.ProgramIDIndex) < n {
			called[ix.ProgramIDIndex] = true
		}
	}
	for i := range msg.AccountKeys {
		signer[i] = msg.IsSigner(i)
		writable[i] = writableAt(msg, i, called[i], false)
	}
	ni := l.durableNonce(msg, msg.AccountKeys, signer, writable, src, env)
	if ni == nil {
		return 0, false
	}
	return ni.lamportsPerSignature, true
}

// hasDuplicate reports whether a key appears twice (a v0 message's loaded
// addresses may repeat a static key or each other).
func hasDuplicate(keys []solana.PublicKey) bool {
	seen := make(map[solana.PublicKey]struct{}, len(keys))
	for _, k := range keys {
		if _, dup := seen[k]; dup {
			return true
		}
		seen[k] = struct{}{}
	}
	return false
}
