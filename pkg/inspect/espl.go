package inspect

import (
	"fmt"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/espl"
)

// decodeESPL names MagicBlock Ephemeral SPL Token instructions with their
// arguments and account roles.
func decodeESPL(data []byte, accounts []solana.PublicKey) (Decoded, error) {
	if len(data) == 0 {
		return Decoded{}, fmt.Errorf("empty eSPL instruction")
	}
	d, err := espl.Decode(data, accounts)
	if err != nil {
		return Decoded{Name: fmt.Sprintf("%s (ESPL %d)", espl.Name(data[0]), data[0])}, err
	}
	out := Decoded{Name: fmt.Sprintf("%s (ESPL %d)", d.Discriminator(), data[0])}
	for _, f := range d.Fields() {
		out.Params = append(out.Params, Param{f.Name, f.Value})
	}
	for _, a := range d.Accounts() {
		out.Roles = append(out.Roles, a.Name)
	}
	return out, nil
}

func registerESPL(in *Inspector) {
	in.Register(espl.ProgramID, "Ephemeral SPL Token program", decodeESPL)
	in.Label(espl.DelegationProgramID, "Delegation program")
	in.Label(espl.MagicProgramID, "Magic program")
	in.Label(espl.MagicContextID, "Magic context")
	in.Label(espl.MagicVaultID, "Magic vault")
	in.Label(espl.PermissionProgramID, "Permission (ACL) program")
	in.Label(espl.HydraProgramID, "Hydra program")
	for _, v := range espl.Validators() {
		in.Label(v.Identity, "validator ("+v.Region+")")
	}
	rent, _ := espl.FindRentPDA()
	in.Label(rent, "ESPL rent PDA")
}
