// Package inspect explains a Solana transaction in human terms before anyone
// signs it: which programs it calls, what each instruction does (with
// amounts and parameters), which accounts it touches and in which role, who
// must sign, and whether it is within the size limit.
package inspect

import (
	"encoding/hex"
	"fmt"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/txwire"
)

// Description is the explanation of one transaction. It serializes to JSON
// for `ferry inspect --output json` and the MCP transaction.inspect tool.
type Description struct {
	Version         string        `json:"version"`
	Size            int           `json:"size"`
	MaxSize         int           `json:"maxSize"`
	FeePayer        string        `json:"feePayer"`
	RecentBlockhash string        `json:"recentBlockhash"`
	Signatures      []Signature   `json:"signatures"`
	Accounts        []Account     `json:"accounts"`
	Instructions    []Instruction `json:"instructions"`
	Warnings        []string      `json:"warnings,omitempty"`
}

// Signature is one required signer and whether its signature is present.
type Signature struct {
	Signer    string `json:"signer"`
	Signed    bool   `json:"signed"`
	Signature string `json:"signature,omitempty"`
}

// Account is one account of the message.
type Account struct {
	Index    int    `json:"index"`
	Pubkey   string `json:"pubkey"`
	Signer   bool   `json:"signer"`
	Writable bool   `json:"writable"`
	Label    string `json:"label,omitempty"` // well-known name, e.g. "SPL Token program"
	Lookup   bool   `json:"lookup,omitempty"`
}

// Instruction is one decoded instruction.
type Instruction struct {
	Index     int               `json:"index"`
	ProgramID string            `json:"programId"`
	Program   string            `json:"program"`
	Name      string            `json:"name"`
	Params    []Param           `json:"params,omitempty"`
	Accounts  []InstructionAcct `json:"accounts"`
	DataHex   string            `json:"data"`
	Error     string            `json:"error,omitempty"` // why the data did not decode
}

// Param is a named instruction parameter, in the order the program defines.
type Param struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// InstructionAcct is an account as the instruction uses it.
type InstructionAcct struct {
	Role     string `json:"role"`
	Pubkey   string `json:"pubkey"`
	Signer   bool   `json:"signer"`
	Writable bool   `json:"writable"`
}

// Decoded is what a program decoder reports for one instruction.
type Decoded struct {
	Name   string
	Params []Param
	Roles  []string // role names of the instruction's accounts, in order
}

// Decoder decodes one program's instruction data; accounts are the
// instruction's account keys in order.
type Decoder func(data []byte, accounts []solana.PublicKey) (Decoded, error)

// Program is a known program: its name and decoder.
type Program struct {
	Name   string
	Decode Decoder
}

// Inspector explains transactions with a table of known programs and
// labelled accounts. The zero value knows nothing; use New for the built-in
// programs.
type Inspector struct {
	Programs map[solana.PublicKey]Program
	Labels   map[solana.PublicKey]string
}

// Describe explains tx.
func (in *Inspector) Describe(tx *txwire.Transaction) *Description {
	m := &tx.Message
	d := &Description{
		Version:         m.Version.String(),
		Size:            len(tx.Bytes()),
		MaxSize:         txwire.MaxWireSize,
		RecentBlockhash: m.RecentBlockhash.String(),
	}
	if len(m.AccountKeys) > 0 {
		d.FeePayer = m.AccountKeys[0].String()
	}
	if d.Size > txwire.MaxWireSize {
		d.Warnings = append(d.Warnings, fmt.Sprintf("transaction is %d bytes, over the %d-byte limit", d.Size, txwire.MaxWireSize))
	}
	if err := m.Sanitize(); err != nil {
		d.Warnings = append(d.Warnings, "message does not sanitize: "+err.Error())
	}
	for i, s := range m.Signers() {
		sig := Signature{Signer: s.String()}
		if i < len(tx.Signatures) && !tx.Signatures[i].IsZero() {
			sig.Signed, sig.Signature = true, tx.Signatures[i].String()
		}
		d.Signatures = append(d.Signatures, sig)
	}
	keys := make([]solana.PublicKey, 0, len(m.AccountKeys)+m.NumLookupAccounts())
	keys = append(keys, m.AccountKeys...)
	for i, k := range m.AccountKeys {
		d.Accounts = append(d.Accounts, Account{Index: i, Pubkey: k.String(), Signer: m.IsSigner(i), Writable: m.IsWritable(i), Label: in.Labels[k]})
	}
	// Accounts loaded from lookup tables are unknown without the table
	// contents; they are listed by table and index.
	lookupName := map[int]string{}
	writableLookup := map[int]bool{}
	idx := len(m.AccountKeys)
	for _, pass := range []bool{true, false} {
		for _, l := range m.AddressTableLookups {
			list := l.ReadonlyIndexes
			if pass {
				list = l.WritableIndexes
			}
			for _, ti := range list {
				lookupName[idx] = fmt.Sprintf("%s[%d]", l.AccountKey, ti)
				writableLookup[idx] = pass
				keys = append(keys, solana.PublicKey{})
				d.Accounts = append(d.Accounts, Account{Index: idx, Pubkey: lookupName[idx], Writable: pass, Lookup: true})
				idx++
			}
		}
	}
	for i, ci := range m.Instructions {
		ins := Instruction{Index: i, DataHex: hex.EncodeToString(ci.Data), Accounts: []InstructionAcct{}}
		var pid solana.PublicKey
		if int(ci.ProgramIDIndex) < len(m.AccountKeys) {
			pid = m.AccountKeys[ci.ProgramIDIndex]
		}
		ins.ProgramID = pid.String()
		accts := make([]solana.PublicKey, 0, len(ci.Accounts))
		for _, a := range ci.Accounts {
			if int(a) < len(keys) {
				accts = append(accts, keys[a])
			}
		}
		prog, known := in.Programs[pid]
		ins.Program = in.Labels[pid]
		var dec Decoded
		if known {
			ins.Program = prog.Name
			var err error
			dec, err = prog.Decode(ci.Data, accts)
			if err != nil {
				ins.Error = err.Error()
				d.Warnings = append(d.Warnings, fmt.Sprintf("instruction %d (%s): %v", i, prog.Name, err))
			}
		}
		if ins.Program == "" {
			ins.Program = "unknown program"
		}
		ins.Name, ins.Params = dec.Name, dec.Params
		if ins.Name == "" {
			ins.Name = "unknown instruction"
		}
		for j, a := range ci.Accounts {
			role := fmt.Sprintf("account %d", j)
			if j < len(dec.Roles) && dec.Roles[j] != "" {
				role = dec.Roles[j]
			}
			ia := InstructionAcct{Role: role}
			switch {
			case int(a) < len(m.AccountKeys):
				ia.Pubkey = m.AccountKeys[a].String()
				ia.Signer, ia.Writable = m.IsSigner(int(a)), m.IsWritable(int(a))
			case lookupName[int(a)] != "":
				ia.Pubkey, ia.Writable = lookupName[int(a)], writableLookup[int(a)]
			default:
				ia.Pubkey = fmt.Sprintf("invalid index %d", a)
			}
			ins.Accounts = append(ins.Accounts, ia)
		}
		d.Instructions = append(d.Instructions, ins)
	}
	return d
}
