package inspect

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/spl"
)

// New returns an inspector that knows the System, SPL Token, Token-2022,
// Associated Token Account, Memo and Compute Budget programs. Callers add
// more (e.g. ESPL) with Register.
func New() *Inspector {
	in := &Inspector{Programs: map[solana.PublicKey]Program{}, Labels: map[solana.PublicKey]string{}}
	in.Register(spl.SystemProgramID, "System program", decodeSystem)
	in.Register(spl.TokenProgramID, "SPL Token program", decodeToken)
	in.Register(spl.Token2022ProgramID, "Token-2022 program", decodeToken)
	in.Register(spl.AssociatedTokenProgramID, "Associated Token Account program", decodeATA)
	in.Register(spl.MemoProgramID, "Memo program", decodeMemo)
	in.Register(spl.MemoV1ProgramID, "Memo program (v1)", decodeMemo)
	in.Register(spl.ComputeBudgetProgramID, "Compute Budget program", decodeComputeBudget)
	registerESPL(in)
	in.Labels[spl.NativeMintID] = "Wrapped SOL mint"
	in.Labels[spl.SysvarRentID] = "Rent sysvar"
	in.Labels[spl.SysvarClockID] = "Clock sysvar"
	return in
}

// Register adds a program decoder and labels the program id.
func (in *Inspector) Register(id solana.PublicKey, name string, dec Decoder) {
	in.Programs[id] = Program{Name: name, Decode: dec}
	in.Labels[id] = name
}

// Label names a well-known account.
func (in *Inspector) Label(id solana.PublicKey, name string) { in.Labels[id] = name }

func u64(v uint64) string { return strconv.FormatUint(v, 10) }

func decodeSystem(data []byte, _ []solana.PublicKey) (Decoded, error) {
	in, err := spl.DecodeSystem(data)
	if err != nil {
		return Decoded{}, err
	}
	d := Decoded{Name: in.Op.String()}
	switch in.Op {
	case spl.SystemTransferOp:
		d.Params = []Param{{"lamports", u64(in.Lamports)}}
		d.Roles = []string{"from", "to"}
	case spl.SystemCreateAccountOp:
		d.Params = []Param{{"lamports", u64(in.Lamports)}, {"space", u64(in.Space)}, {"owner", in.Owner.String()}}
		d.Roles = []string{"funder", "new account"}
	case spl.SystemAssignOp:
		d.Params = []Param{{"owner", in.Owner.String()}}
		d.Roles = []string{"account"}
	case spl.SystemAllocateOp:
		d.Params = []Param{{"space", u64(in.Space)}}
		d.Roles = []string{"account"}
	case spl.SystemCreateAccountWithSeedOp:
		d.Params = []Param{{"base", in.Base.String()}, {"seed", in.Seed}, {"lamports", u64(in.Lamports)}, {"space", u64(in.Space)}, {"owner", in.Owner.String()}}
		d.Roles = []string{"funder", "new account", "base"}
	case spl.SystemTransferWithSeedOp:
		d.Params = []Param{{"lamports", u64(in.Lamports)}, {"fromSeed", in.FromSeed}, {"fromOwner", in.FromOwner.String()}}
		d.Roles = []string{"from", "base", "to"}
	}
	return d, nil
}

var tokenRoles = map[spl.TokenOp][]string{
	spl.TokenInitializeMintOp:           {"mint", "rent sysvar"},
	spl.TokenInitializeMint2Op:          {"mint"},
	spl.TokenInitializeAccountOp:        {"account", "mint", "owner", "rent sysvar"},
	spl.TokenInitializeAccount2Op:       {"account", "mint", "rent sysvar"},
	spl.TokenInitializeAccount3Op:       {"account", "mint"},
	spl.TokenTransferOp:                 {"source", "destination", "authority"},
	spl.TokenTransferCheckedOp:          {"source", "mint", "destination", "authority"},
	spl.TokenApproveOp:                  {"source", "delegate", "owner"},
	spl.TokenApproveCheckedOp:           {"source", "mint", "delegate", "owner"},
	spl.TokenRevokeOp:                   {"source", "owner"},
	spl.TokenSetAuthorityOp:             {"target", "current authority"},
	spl.TokenMintToOp:                   {"mint", "destination", "mint authority"},
	spl.TokenMintToCheckedOp:            {"mint", "destination", "mint authority"},
	spl.TokenBurnOp:                     {"account", "mint", "authority"},
	spl.TokenBurnCheckedOp:              {"account", "mint", "authority"},
	spl.TokenCloseAccountOp:             {"account", "destination", "authority"},
	spl.TokenFreezeAccountOp:            {"account", "mint", "freeze authority"},
	spl.TokenThawAccountOp:              {"account", "mint", "freeze authority"},
	spl.TokenSyncNativeOp:               {"account"},
	spl.TokenGetAccountDataSizeOp:       {"mint"},
	spl.TokenInitializeImmutableOwnerOp: {"account"},
}

func decodeToken(data []byte, _ []solana.PublicKey) (Decoded, error) {
	in, err := spl.DecodeToken(data)
	if err != nil {
		return Decoded{}, err
	}
	d := Decoded{Name: in.Op.String(), Roles: tokenRoles[in.Op]}
	switch in.Op {
	case spl.TokenTransferOp, spl.TokenApproveOp, spl.TokenMintToOp, spl.TokenBurnOp, spl.TokenAmountToUiAmountOp:
		d.Params = []Param{{"amount", u64(in.Amount)}}
	case spl.TokenTransferCheckedOp, spl.TokenApproveCheckedOp, spl.TokenMintToCheckedOp, spl.TokenBurnCheckedOp:
		d.Params = []Param{{"amount", u64(in.Amount)}, {"decimals", strconv.Itoa(int(in.Decimals))},
			{"uiAmount", spl.UIAmountString(in.Amount, in.Decimals)}}
	case spl.TokenInitializeMintOp, spl.TokenInitializeMint2Op:
		d.Params = []Param{{"decimals", strconv.Itoa(int(in.Decimals))}, {"mintAuthority", in.MintAuthority.String()}, {"freezeAuthority", optKey(in.FreezeAuthority)}}
	case spl.TokenInitializeAccount2Op, spl.TokenInitializeAccount3Op:
		d.Params = []Param{{"owner", in.Owner.String()}}
	case spl.TokenSetAuthorityOp:
		d.Params = []Param{{"authorityType", strconv.Itoa(int(in.AuthorityType))}, {"newAuthority", optKey(in.NewAuthority)}}
	}
	return d, nil
}

func optKey(k *solana.PublicKey) string {
	if k == nil {
		return "none"
	}
	return k.String()
}

func decodeATA(data []byte, _ []solana.PublicKey) (Decoded, error) {
	op, err := spl.DecodeATA(data)
	if err != nil {
		return Decoded{}, err
	}
	return Decoded{Name: op.String(), Roles: []string{"payer", "associated token account", "wallet", "mint", "system program", "token program"}}, nil
}

func decodeMemo(data []byte, accounts []solana.PublicKey) (Decoded, error) {
	if !utf8.Valid(data) {
		return Decoded{Name: "Memo"}, fmt.Errorf("memo is not valid UTF-8")
	}
	roles := make([]string, len(accounts))
	for i := range roles {
		roles[i] = "signer"
	}
	return Decoded{Name: "Memo", Params: []Param{{"text", string(data)}}, Roles: roles}, nil
}

func decodeComputeBudget(data []byte, _ []solana.PublicKey) (Decoded, error) {
	if len(data) == 0 {
		return Decoded{}, fmt.Errorf("empty compute budget instruction")
	}
	switch {
	case data[0] == 1 && len(data) == 5:
		return Decoded{Name: "RequestHeapFrame", Params: []Param{{"bytes", strconv.Itoa(int(binary.LittleEndian.Uint32(data[1:])))}}}, nil
	case data[0] == 2 && len(data) == 5:
		return Decoded{Name: "SetComputeUnitLimit", Params: []Param{{"units", strconv.Itoa(int(binary.LittleEndian.Uint32(data[1:])))}}}, nil
	case data[0] == 3 && len(data) == 9:
		return Decoded{Name: "SetComputeUnitPrice", Params: []Param{{"microLamports", u64(binary.LittleEndian.Uint64(data[1:]))}}}, nil
	case data[0] == 4 && len(data) == 5:
		return Decoded{Name: "SetLoadedAccountsDataSizeLimit", Params: []Param{{"bytes", strconv.Itoa(int(binary.LittleEndian.Uint32(data[1:])))}}}, nil
	}
	return Decoded{}, fmt.Errorf("unknown compute budget instruction %d", data[0])
}
