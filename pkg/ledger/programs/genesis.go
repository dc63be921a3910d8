package programs

import (
	"math"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// NativeMintLamports is the balance of SPL Token's native mint at genesis:
// one SOL, what Agave's genesis (create_genesis_config_with_leader_ex, used
// by solana-test-validator) gives it.
const NativeMintLamports = 1_000_000_000

// NativeMintDecimals is both native mints' decimals: lamports per SOL is
// 10^9.
const NativeMintDecimals = 9

// NativeMintData is the 82-byte state of both native mints: no mint
// authority, supply 0, 9 decimals, initialized, no freeze authority, and
// no Token-2022 extensions (Token-2022's CreateNativeMint packs a bare
// Mint). It is the same bytes as Agave's inline native_mint::ACCOUNT_DATA.
func NativeMintData() []byte {
	return spl.Mint{Decimals: NativeMintDecimals, IsInitialized: true}.Encode()
}

// GenesisAccounts returns the accounts the builtin programs expect to find
// on any cluster, for the ledger to create at genesis: the two wrapped-SOL
// mints, without which wrapped-SOL token accounts and their ATAs cannot be
// created. Program ids themselves are not included.
//
//   - So11111111111111111111111111111111111111112, owned by SPL Token, with
//     NativeMintLamports (Agave's genesis account);
//   - 9pan9bMn5HatX4EJdBwg9VgCa7Uz5HL8N1m5D3NdXejP, owned by Token-2022,
//     with the rent-exempt minimum for 82 bytes (1 461 600 lamports at
//     Agave's rent), what Token-2022's CreateNativeMint funds it with.
//
// Both hold NativeMintData and have rent epoch u64::MAX, as every
// rent-exempt account on a current cluster.
func GenesisAccounts(rent runtime.Rent) map[solana.PublicKey]*runtime.Account {
	return map[solana.PublicKey]*runtime.Account{
		spl.NativeMintID: {
			Lamports: NativeMintLamports, Owner: spl.TokenProgramID,
			Data: NativeMintData(), RentEpoch: math.MaxUint64,
		},
		spl.NativeMint2022ID: {
			Lamports: rent.MinimumBalance(spl.MintSize), Owner: spl.Token2022ProgramID,
			Data: NativeMintData(), RentEpoch: math.MaxUint64,
		},
	}
}
