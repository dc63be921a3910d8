package payments

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/chainclient"
)

// Error codes the planner returns (payments-api.md §3.2).
const (
	CodeInvalidPublicKey            = "INVALID_PUBLIC_KEY"
	CodeInvalidAmount               = "INVALID_AMOUNT"
	CodeInvalidOwner                = "INVALID_OWNER"
	CodeMintNotFound                = "MINT_NOT_FOUND"
	CodeUnsupportedTokenProgram     = "UNSUPPORTED_TOKEN_PROGRAM"
	CodeUnsupportedTransferRoute    = "UNSUPPORTED_TRANSFER_ROUTE"
	CodeTransactionTooLarge         = "TRANSACTION_TOO_LARGE"
	CodeTransactionBuildError       = "TRANSACTION_BUILD_ERROR"
	CodeInvalidPrivateTransfer      = "INVALID_PRIVATE_TRANSFER"
	CodeInvalidPlatformFee          = "INVALID_PLATFORM_FEE"
	CodeInvalidGaslessMint          = "INVALID_GASLESS_TRANSFER_MINT"
	CodeInvalidGaslessAmount        = "INVALID_GASLESS_TRANSFER_AMOUNT"
	CodeSponsorUnavailable          = "SPONSOR_UNAVAILABLE"
	CodeInvalidStealthHandle        = "INVALID_STEALTH_HANDLE"
	CodeInvalidStealthTransfer      = "INVALID_STEALTH_TRANSFER"
	CodeStealthPoolNotFound         = "STEALTH_POOL_NOT_FOUND"
	CodeEATAValidatorMismatch       = "EATA_VALIDATOR_MISMATCH"
	CodeTransferQueueNotInitialized = "TRANSFER_QUEUE_NOT_INITIALIZED"
)

func badRequest(code, format string, args ...any) *apierr.Error {
	return apierr.New(http.StatusBadRequest, code, fmt.Sprintf(format, args...))
}

func privateTransferError(msg string) *apierr.Error {
	return badRequest(CodeInvalidPrivateTransfer, "%s", msg)
}

// rpcError turns a chain read failure into 502 RPC_ERROR with the cause in
// details (URLs redacted), as the hosted API reports upstream failures: a
// JSON-RPC error's own message, else the error's text.
func rpcError(op string, err error, details map[string]any) *apierr.Error {
	if details == nil {
		details = map[string]any{}
	}
	details["message"] = apierr.RedactURLs(err.Error())
	var re *chainclient.RPCError
	if errors.As(err, &re) {
		details["message"] = apierr.RedactURLs(re.Message)
	}
	return (&apierr.Error{Status: http.StatusBadGateway, Code: apierr.CodeRPC, Message: op, Details: details}).Wrap(err)
}

// asAPIError maps planner failures to the API's error contract: API errors
// pass through; a transaction over the size limit is TRANSACTION_TOO_LARGE;
// anything else a build error.
func asAPIError(err error) error {
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return ae
	}
	return badRequest(CodeTransactionBuildError, "%s", apierr.RedactURLs(err.Error()))
}

// apiResult maps the error of a planner step to the API error contract.
func apiResult[T any](v T, err error) (T, error) {
	if err != nil {
		var zero T
		return zero, asAPIError(err)
	}
	return v, nil
}
