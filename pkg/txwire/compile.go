package txwire

import (
	"fmt"
	"slices"

	"github.com/gagliardetto/solana-go"
)

// Compile builds a legacy message with @solana/web3.js 1.x
// Transaction.compileMessage rules:
//
//  1. copy every account meta in instruction order, then append each distinct
//     program id (first-seen order) as a read-only non-signer;
//  2. de-duplicate by key, keeping the first position and OR-ing the flags;
//  3. sort signers first, then writable first, then by the base58
//     localeCompare order implemented by CompareBase58;
//  4. move the fee payer to index 0 as a writable signer.
//
// Compile does not modify ixs.
func Compile(feePayer solana.PublicKey, ixs []Instruction, recentBlockhash solana.Hash) (*Message, error) {
	type entry struct {
		key      solana.PublicKey
		b58      string
		signer   bool
		writable bool
	}
	n := 1
	for _, ix := range ixs {
		n += len(ix.Accounts) + 1
	}
	entries := make([]entry, 0, n)
	index := make(map[solana.PublicKey]int, n)
	add := func(key solana.PublicKey, signer, writable bool) {
		if i, ok := index[key]; ok {
			entries[i].signer = entries[i].signer || signer
			entries[i].writable = entries[i].writable || writable
			return
		}
		index[key] = len(entries)
		entries = append(entries, entry{key: key, signer: signer, writable: writable})
	}
	for _, ix := range ixs {
		for _, m := range ix.Accounts {
			add(m.PublicKey, m.IsSigner, m.IsWritable)
		}
	}
	for _, ix := range ixs {
		add(ix.ProgramID, false, false)
	}

	// The fee payer is pulled out before sorting and always goes first.
	if i, ok := index[feePayer]; ok {
		entries = slices.Delete(entries, i, i+1)
	}
	for i := range entries {
		entries[i].b58 = entries[i].key.String()
	}
	slices.SortFunc(entries, func(a, b entry) int {
		if a.signer != b.signer {
			if a.signer {
				return -1
			}
			return 1
		}
		if a.writable != b.writable {
			if a.writable {
				return -1
			}
			return 1
		}
		return CompareBase58(a.b58, b.b58)
	})
	entries = slices.Insert(entries, 0, entry{key: feePayer, signer: true, writable: true})
	if len(entries) > 256 {
		return nil, fmt.Errorf("compile message: %d accounts exceed the limit of 256", len(entries))
	}

	m := &Message{
		Version:         Legacy,
		AccountKeys:     make([]solana.PublicKey, len(entries)),
		RecentBlockhash: recentBlockhash,
		Instructions:    make([]CompiledInstruction, len(ixs)),
	}
	pos := make(map[solana.PublicKey]uint8, len(entries))
	for i, e := range entries {
		m.AccountKeys[i] = e.key
		pos[e.key] = uint8(i)
		switch {
		case e.signer:
			m.Header.NumRequiredSignatures++
			if !e.writable {
				m.Header.NumReadonlySignedAccounts++
			}
		case !e.writable:
			m.Header.NumReadonlyUnsignedAccounts++
		}
	}
	for i, ix := range ixs {
		ci := CompiledInstruction{
			ProgramIDIndex: pos[ix.ProgramID],
			Accounts:       make([]uint8, len(ix.Accounts)),
			Data:           ix.Data,
		}
		for j, a := range ix.Accounts {
			ci.Accounts[j] = pos[a.PublicKey]
		}
		m.Instructions[i] = ci
	}
	return m, nil
}

// CompareBase58 orders two base58 strings as JavaScript's
// a.localeCompare(b, "en", {sensitivity: "variant", caseFirst: "lower"})
// does, which is how web3.js 1.x sorts account keys within a role class:
// digits before letters, letters compared case-insensitively first, a prefix
// before a longer string, and on a case-only difference lower case first.
// It returns -1, 0 or +1.
func CompareBase58(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if d := primaryWeight(a[i]) - primaryWeight(b[i]); d != 0 {
			return sign(d)
		}
	}
	if len(a) != len(b) {
		return sign(len(a) - len(b))
	}
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			if a[i] >= 'a' && a[i] <= 'z' {
				return -1
			}
			return 1
		}
	}
	return 0
}

func primaryWeight(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'z':
		return 10 + int(c-'a')
	case c >= 'A' && c <= 'Z':
		return 10 + int(c-'A')
	}
	return 100 + int(c)
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}
