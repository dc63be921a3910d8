package token

import "github.com/ferry-sh/ferry/pkg/spl"

// Compute units charged per instruction. The values approximate what the
// classic (non-pinocchio) SPL Token program reports on mainnet for the
// common path; they are charged in full once the instruction decodes, before
// any check, so a failing instruction costs the same as a successful one.
// Token-2022 is charged the same table.
var costs = map[spl.TokenOp]uint64{
	spl.TokenInitializeMintOp:           2_967,
	spl.TokenInitializeAccountOp:        4_527,
	spl.TokenInitializeMultisigOp:       3_897,
	spl.TokenTransferOp:                 4_645,
	spl.TokenApproveOp:                  2_904,
	spl.TokenRevokeOp:                   2_677,
	spl.TokenSetAuthorityOp:             3_249,
	spl.TokenMintToOp:                   4_538,
	spl.TokenBurnOp:                     4_753,
	spl.TokenCloseAccountOp:             2_916,
	spl.TokenFreezeAccountOp:            4_303,
	spl.TokenThawAccountOp:              4_296,
	spl.TokenTransferCheckedOp:          6_200,
	spl.TokenApproveCheckedOp:           4_458,
	spl.TokenMintToCheckedOp:            4_601,
	spl.TokenBurnCheckedOp:              4_930,
	spl.TokenInitializeAccount2Op:       4_388,
	spl.TokenSyncNativeOp:               3_045,
	spl.TokenInitializeAccount3Op:       4_188,
	spl.TokenInitializeMultisig2Op:      3_705,
	spl.TokenInitializeMint2Op:          2_780,
	spl.TokenGetAccountDataSizeOp:       1_622,
	spl.TokenInitializeImmutableOwnerOp: 1_405,
	spl.TokenAmountToUiAmountOp:         2_524,
	spl.TokenUiAmountToAmountOp:         3_371,
}

// DecodeFailureCost is charged when the instruction data does not decode.
const DecodeFailureCost = 400

// BaseCost is the minimum the runtime charges a token instruction.
const BaseCost = 100

// Cost is the compute units charged for a decoded instruction.
func Cost(op spl.TokenOp) uint64 { return costs[op] }
