package rpcserver

import (
	"unicode/utf8"

	"github.com/gagliardetto/solana-go"
	"github.com/mr-tron/base58"

	"github.com/ferry-sh/ferry/pkg/spl"
)

// parsedInstruction is a jsonParsed instruction of a known program.
type parsedInstruction struct {
	Program     string           `json:"program"`
	ProgramID   solana.PublicKey `json:"programId"`
	Parsed      any              `json:"parsed"`
	StackHeight *int             `json:"stackHeight"`
}

// rawInstruction is a jsonParsed instruction of any other program
// ("partially decoded").
type rawInstruction struct {
	ProgramID   solana.PublicKey   `json:"programId"`
	Accounts    []solana.PublicKey `json:"accounts"`
	Data        string             `json:"data"`
	StackHeight *int               `json:"stackHeight"`
}

type parsedBody struct {
	Type string         `json:"type"`
	Info map[string]any `json:"info"`
}

// parseInstruction renders an instruction in jsonParsed form: System, SPL
// Token (and Token-2022), Associated Token Account and Memo instructions
// are parsed like Agave's transaction-status parsers (the common ones);
// everything else is partially decoded.
func parseInstruction(keys []solana.PublicKey, programIdx uint8, accts []byte, data []byte, height *int) any {
	raw := func() any {
		r := rawInstruction{Data: base58.Encode(data), StackHeight: height, Accounts: []solana.PublicKey{}}
		if int(programIdx) < len(keys) {
			r.ProgramID = keys[programIdx]
		}
		for _, a := range accts {
			if int(a) < len(keys) {
				r.Accounts = append(r.Accounts, keys[a])
			}
		}
		return r
	}
	if int(programIdx) >= len(keys) {
		return raw()
	}
	for _, a := range accts {
		if int(a) >= len(keys) {
			return raw()
		}
	}
	acct := func(i int) (solana.PublicKey, bool) {
		if i >= len(accts) {
			return solana.PublicKey{}, false
		}
		return keys[accts[i]], true
	}
	pid := keys[programIdx]
	var name string
	var parsed any
	switch {
	case pid == spl.SystemProgramID:
		name, parsed = "system", parseSystem(data, acct)
	case spl.IsTokenProgram(pid):
		name, parsed = programName(pid), parseToken(data, acct)
	case pid == spl.AssociatedTokenProgramID:
		name, parsed = "spl-associated-token-account", parseATA(data, acct)
	case pid == spl.MemoProgramID || pid == spl.MemoV1ProgramID:
		if utf8.Valid(data) {
			name, parsed = "spl-memo", string(data)
		}
	}
	if parsed == nil {
		return raw()
	}
	return parsedInstruction{Program: name, ProgramID: pid, Parsed: parsed, StackHeight: height}
}

type acctFn func(int) (solana.PublicKey, bool)

// fill maps field names to instruction accounts; it fails if one is
// missing.
func fill(info map[string]any, acct acctFn, names ...string) bool {
	for i, n := range names {
		k, ok := acct(i)
		if !ok {
			return false
		}
		info[n] = k
	}
	return true
}

func parseSystem(data []byte, acct acctFn) any {
	in, err := spl.DecodeSystem(data)
	if err != nil {
		return nil
	}
	info := map[string]any{}
	var kind string
	switch in.Op {
	case spl.SystemTransferOp:
		kind = "transfer"
		if !fill(info, acct, "source", "destination") {
			return nil
		}
		info["lamports"] = in.Lamports
	case spl.SystemCreateAccountOp:
		kind = "createAccount"
		if !fill(info, acct, "source", "newAccount") {
			return nil
		}
		info["lamports"], info["space"], info["owner"] = in.Lamports, in.Space, in.Owner
	case spl.SystemAssignOp:
		kind = "assign"
		if !fill(info, acct, "account") {
			return nil
		}
		info["owner"] = in.Owner
	case spl.SystemAllocateOp:
		kind = "allocate"
		if !fill(info, acct, "account") {
			return nil
		}
		info["space"] = in.Space
	default:
		return nil
	}
	return parsedBody{Type: kind, Info: info}
}

func parseToken(data []byte, acct acctFn) any {
	in, err := spl.DecodeToken(data)
	if err != nil {
		return nil
	}
	info := map[string]any{}
	var kind string
	var names []string
	amount := func() { info["amount"] = uintString(in.Amount) }
	checked := func() { info["tokenAmount"] = tokenAmount(in.Amount, in.Decimals) }
	switch in.Op {
	case spl.TokenTransferOp:
		kind, names = "transfer", []string{"source", "destination", "authority"}
		amount()
	case spl.TokenTransferCheckedOp:
		kind, names = "transferChecked", []string{"source", "mint", "destination", "authority"}
		checked()
	case spl.TokenMintToOp:
		kind, names = "mintTo", []string{"mint", "account", "mintAuthority"}
		amount()
	case spl.TokenMintToCheckedOp:
		kind, names = "mintToChecked", []string{"mint", "account", "mintAuthority"}
		checked()
	case spl.TokenBurnOp:
		kind, names = "burn", []string{"account", "mint", "authority"}
		amount()
	case spl.TokenBurnCheckedOp:
		kind, names = "burnChecked", []string{"account", "mint", "authority"}
		checked()
	case spl.TokenApproveOp:
		kind, names = "approve", []string{"source", "delegate", "owner"}
		amount()
	case spl.TokenRevokeOp:
		kind, names = "revoke", []string{"source", "owner"}
	case spl.TokenCloseAccountOp:
		kind, names = "closeAccount", []string{"account", "destination", "owner"}
	case spl.TokenFreezeAccountOp:
		kind, names = "freezeAccount", []string{"account", "mint", "freezeAuthority"}
	case spl.TokenThawAccountOp:
		kind, names = "thawAccount", []string{"account", "mint", "freezeAuthority"}
	case spl.TokenSyncNativeOp:
		kind, names = "syncNative", []string{"account"}
	case spl.TokenInitializeImmutableOwnerOp:
		kind, names = "initializeImmutableOwner", []string{"account"}
	case spl.TokenGetAccountDataSizeOp:
		kind, names = "getAccountDataSize", []string{"mint"}
	case spl.TokenInitializeMintOp, spl.TokenInitializeMint2Op:
		kind, names = "initializeMint2", []string{"mint"}
		if in.Op == spl.TokenInitializeMintOp {
			kind, names = "initializeMint", []string{"mint", "rentSysvar"}
		}
		info["decimals"], info["mintAuthority"] = in.Decimals, in.MintAuthority
		if in.FreezeAuthority != nil {
			info["freezeAuthority"] = *in.FreezeAuthority
		}
	case spl.TokenInitializeAccountOp:
		kind, names = "initializeAccount", []string{"account", "mint", "owner", "rentSysvar"}
	case spl.TokenInitializeAccount2Op:
		kind, names = "initializeAccount2", []string{"account", "mint", "rentSysvar"}
		info["owner"] = in.Owner
	case spl.TokenInitializeAccount3Op:
		kind, names = "initializeAccount3", []string{"account", "mint"}
		info["owner"] = in.Owner
	default:
		return nil
	}
	if !fill(info, acct, names...) {
		return nil
	}
	return parsedBody{Type: kind, Info: info}
}

func parseATA(data []byte, acct acctFn) any {
	op, err := spl.DecodeATA(data)
	if err != nil || op == spl.ATARecoverNested {
		return nil
	}
	kind := "create"
	if op == spl.ATACreateIdempotent {
		kind = "createIdempotent"
	}
	info := map[string]any{}
	if !fill(info, acct, "source", "account", "wallet", "mint", "systemProgram", "tokenProgram") {
		return nil
	}
	return parsedBody{Type: kind, Info: info}
}
