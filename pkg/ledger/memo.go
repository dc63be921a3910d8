package ledger

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ferry-sh/ferry/pkg/spl"
)

// Memo is the memo field of getSignaturesForAddress: for each top-level
// Memo (v1 or v2) instruction "[<byte length>] <text>", joined with "; ",
// with "(unparseable)" for data that is not UTF-8 (Agave's extract_memos).
// It returns nil when the transaction has no memo.
func (r *TxRecord) Memo() *string {
	tx, err := r.Transaction()
	if err != nil {
		return nil
	}
	var memos []string
	for _, ix := range tx.Message.Instructions {
		if int(ix.ProgramIDIndex) >= len(tx.Message.AccountKeys) {
			continue
		}
		p := tx.Message.AccountKeys[ix.ProgramIDIndex]
		if p != spl.MemoProgramID && p != spl.MemoV1ProgramID {
			continue
		}
		text := "(unparseable)"
		if utf8.Valid(ix.Data) {
			text = string(ix.Data)
		}
		memos = append(memos, fmt.Sprintf("[%d] %s", len(ix.Data), text))
	}
	if len(memos) == 0 {
		return nil
	}
	s := strings.Join(memos, "; ")
	return &s
}
