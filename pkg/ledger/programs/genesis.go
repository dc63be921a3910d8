package programs

import (
	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// GenesisAccounts returns the accounts the builtin programs expect to find
// on any cluster, for the ledger to create at genesis: the two wrapped-SOL
// mints (So11111111111111111111111111111111111111112 under SPL Token and
// 9pan9bMn5HatX4EJdBwg9VgCa7Uz5HL8N1m5D3NdXejP under Token-2022; 9
// decimals, no authorities), without which wrapped-SOL token accounts and
// their ATAs cannot be created. Program ids themselves are not included.
func GenesisAccounts(rent runtime.Rent) map[solana.PublicKey]*runtime.Account {
	nativeMint := func(owner solana.PublicKey) *runtime.Account {
		return &runtime.Account{
			Lamports: rent.MinimumBalance(spl.MintSize),
			Owner:    owner,
			Data:     spl.Mint{Decimals: 9, IsInitialized: true}.Encode(),
		}
	}
	return map[solana.PublicKey]*runtime.Account{
		spl.NativeMintID:     nativeMint(spl.TokenProgramID),
		spl.NativeMint2022ID: nativeMint(spl.Token2022ProgramID),
	}
}
