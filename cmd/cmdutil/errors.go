package cmdutil

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/chainclient"
)

// Exit statuses: the contract every ferry command keeps (ferry help
// exit-codes, and the man pages). Scripts may rely on them.
const (
	// ExitOK: the command, and with --confirm the whole operation,
	// succeeded.
	ExitOK = 0
	// ExitError: anything not covered below (an unexpected failure).
	ExitError = 1
	// ExitUsage: the command was invoked wrongly (unknown flag, malformed
	// flag value, missing argument); nothing was sent.
	ExitUsage = 2
	// ExitValidation: the request was understood but refused before
	// anything was sent (a validation error of the API's rules, a keypair
	// file that is not one, an unknown mint, a route that does not exist).
	ExitValidation = 3
	// ExitFailed: a transaction was rejected by a program (in preflight
	// simulation or on chain), or the operation it started ended in a
	// refund or did not settle.
	ExitFailed = 4
	// ExitTimeout: the operation did not finish in time (--timeout, or a
	// blockhash that expired before the transaction landed: safe to
	// rebuild and send again).
	ExitTimeout = 5
	// ExitUnavailable: an upstream (chain node, router, payments API)
	// could not be reached, failed, or reported it is unhealthy (a halted
	// ledger).
	ExitUnavailable = 6
	// ExitAuth: authentication or authorization failed (401/403: a missing
	// or expired login token).
	ExitAuth = 7
)

// ExitCodesHelp documents the exit statuses (ferry help exit-codes).
const ExitCodesHelp = `Every ferry command exits with one of these statuses:

  0  success; with --confirm, the whole operation settled (a deposit is on
     the rollup, every payout of a private transfer is paid, a withdrawal is
     back on base)
  1  an unexpected error
  2  usage error: unknown flag, malformed value (e.g. --amount 0x10), missing
     argument; nothing was sent
  3  validation error: the request was refused before anything was sent
     (the API's validation rules, a file that is not a keypair, an unknown
     recipient)
  4  the transaction failed: a program rejected it (preflight or on chain),
     or the operation ended in a refund or did not settle
  5  timeout: --timeout passed before the operation finished, or the
     blockhash expired before the transaction landed (then it did not land
     and is safe to rebuild and send again)
  6  an upstream (chain node, router, payments API) is unreachable, failing
     or unhealthy (e.g. a halted ledger)
  7  authentication failed (a missing or expired login token; see ferry login)

Errors are one line on stderr: "error: CODE: message" for errors with a code
(the payments API's codes), "error: message" otherwise. With --output json
they are one JSON object on stderr instead:

  {"error": {"code": "TRANSACTION_FAILED", "message": "...", "details": {...}, "exitCode": 4}}
`

// UsageError is a mistake in how a command was invoked (ExitUsage).
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

// UsageErrorf builds a UsageError.
func UsageErrorf(format string, args ...any) error {
	return &UsageError{msg: fmt.Sprintf(format, args...)}
}

// InputError is input that was understood but cannot be used: a keypair
// file that is not a keypair, an address that is none (ExitValidation).
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// InputErrorf builds an InputError.
func InputErrorf(format string, args ...any) error {
	return &InputError{Err: fmt.Errorf(format, args...)}
}

// CodedError carries its own exit status and machine code (an operation
// that was refunded, a timeout of --confirm).
type CodedError struct {
	// Exit is the process exit status.
	Exit int
	// Code is the machine code shown before the message
	// (e.g. "OPERATION_REFUNDED").
	Code    string
	Message string
	// Details are shown with --output json.
	Details any
	Err     error
}

func (e *CodedError) Error() string {
	if e.Code == "" {
		return e.Message
	}
	return e.Code + ": " + e.Message
}
func (e *CodedError) Unwrap() error { return e.Err }

// SilentError exits with Code without printing anything more; the command
// has already reported what happened.
type SilentError struct{ Code int }

func (e *SilentError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// ExitCode is Report with plain-text output.
func ExitCode(err error, w io.Writer) int { return Report(err, w, false) }

// Report maps err to the process exit status (see the Exit constants) and
// prints it on w: one line, "error: CODE: message" for coded errors and
// "error: message" otherwise; with asJSON one JSON object
// {"error":{"code","message","details","exitCode"}}.
func Report(err error, w io.Writer, asJSON bool) int {
	if err == nil {
		return ExitOK
	}
	var silent *SilentError
	if errors.As(err, &silent) {
		return silent.Code
	}
	code := Classify(err)
	machine, msg, details := describe(err)
	if asJSON {
		body := jsonError{Code: machine, Message: msg, Details: details, ExitCode: code}
		var ae *apierr.Error
		if errors.As(err, &ae) {
			body.Issues = ae.Issues
		}
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(map[string]any{"error": body})
		return code
	}
	if machine != "" && !isGenericCode(machine) {
		fmt.Fprintf(w, "error: %s: %s\n", machine, msg)
	} else {
		fmt.Fprintf(w, "error: %s\n", msg)
	}
	return code
}

// jsonError is an error as --output json prints it on stderr: the API's
// error object plus the exit status.
type jsonError struct {
	Code     string         `json:"code"`
	Message  string         `json:"message"`
	Details  any            `json:"details,omitempty"`
	Issues   []apierr.Issue `json:"issues,omitempty"`
	ExitCode int            `json:"exitCode"`
}

// Generic codes are only shown in JSON: a plain line says enough.
func isGenericCode(c string) bool {
	switch c {
	case "USAGE_ERROR", "INVALID_INPUT", "ERROR", "UNAVAILABLE", "TIMEOUT":
		return true
	}
	return false
}

// describe returns the machine code, the one-line message and the details
// of err.
func describe(err error) (code, msg string, details any) {
	var usage *UsageError
	var coded *CodedError
	var ae *apierr.Error
	switch {
	case errors.As(err, &usage):
		return "USAGE_ERROR", usage.msg, nil
	case errors.As(err, &coded):
		return coded.Code, coded.Message, coded.Details
	case errors.As(err, &ae):
		return ae.Code, apiMessage(ae), ae.Details
	}
	var input *InputError
	if errors.As(err, &input) {
		return "INVALID_INPUT", err.Error(), nil
	}
	switch Classify(err) {
	case ExitUnavailable:
		// A server must not say why an upstream is unreachable (a port
		// scan oracle), so TransportError's text never does; the CLI
		// talks to the user's own endpoints and names the cause.
		msg := err.Error()
		var te *chainclient.TransportError
		var reach *reachError // already says what to do
		if errors.As(err, &te) && te.Err != nil && !errors.As(err, &reach) {
			msg += " (" + te.Err.Error() + ")"
		}
		return "UNAVAILABLE", msg, nil
	case ExitTimeout:
		return "TIMEOUT", err.Error(), nil
	}
	return "ERROR", err.Error(), nil
}

func apiMessage(ae *apierr.Error) string {
	msg := ae.Message
	if len(ae.Issues) > 0 {
		parts := make([]string, len(ae.Issues))
		for i, is := range ae.Issues {
			parts[i] = issueText(is)
		}
		return strings.Join(parts, "; ")
	}
	d, ok := ae.Details.(map[string]any)
	switch {
	case ok && d["hint"] != nil:
		msg += fmt.Sprintf(" (%v)", d["hint"])
	case ok && d["message"] != nil:
		msg += fmt.Sprintf(" (%v)", d["message"])
	case ok && d["err"] != nil:
		// A transaction that landed and failed: its TransactionError.
		if b, err := json.Marshal(d["err"]); err == nil {
			msg += fmt.Sprintf(" (%s)", b)
		}
	}
	return msg
}

// Classify maps err to its exit status (the Exit constants).
func Classify(err error) int {
	if err == nil {
		return ExitOK
	}
	var silent *SilentError
	var usage *UsageError
	var coded *CodedError
	var input *InputError
	switch {
	case errors.As(err, &silent):
		return silent.Code
	case errors.As(err, &usage):
		return ExitUsage
	case errors.As(err, &coded):
		return coded.Exit
	}
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return classifyAPI(ae)
	}
	switch {
	case errors.As(err, &input), errors.Is(err, os.ErrNotExist), errors.Is(err, os.ErrPermission):
		return ExitValidation
	}
	return classifyTransport(err)
}

func classifyAPI(ae *apierr.Error) int {
	switch ae.Code {
	case "TRANSACTION_FAILED":
		return ExitFailed
	case "TRANSACTION_EXPIRED":
		return ExitTimeout
	case "INVALID_AUTH_TOKEN", "MISSING_AUTH_TOKEN", "TOKEN_IDENTITY_MISMATCH", "INVALID_CHALLENGE",
		"CHALLENGE_EXPIRED", "INVALID_SIGNATURE", "SIGNATURE_VERIFICATION_FAILED":
		return ExitAuth
	}
	if d, ok := ae.Details.(map[string]any); ok && d["err"] != nil {
		// A preflight simulation that a program failed.
		return ExitFailed
	}
	switch {
	case ae.Status == http.StatusUnauthorized || ae.Status == http.StatusForbidden:
		return ExitAuth
	case ae.Status == http.StatusGatewayTimeout || ae.Status == http.StatusRequestTimeout:
		return ExitTimeout
	case ae.Status >= 400 && ae.Status < 500:
		return ExitValidation
	case ae.Status == http.StatusBadGateway || ae.Status == http.StatusServiceUnavailable:
		return ExitUnavailable
	}
	if c := classifyTransport(ae.Err); c != ExitError {
		return c
	}
	return ExitError
}

// classifyTransport recognises errors of reaching an upstream.
func classifyTransport(err error) int {
	if err == nil {
		return ExitError
	}
	var te *chainclient.TransportError
	var he *chainclient.HTTPError
	var re *chainclient.RPCError
	var failed *chainclient.TransactionFailedError
	switch {
	case errors.As(err, &failed):
		return ExitFailed
	case errors.Is(err, chainclient.ErrBlockhashExpired), errors.Is(err, context.DeadlineExceeded):
		return ExitTimeout
	case errors.As(err, &te):
		return ExitUnavailable
	case errors.As(err, &he):
		switch {
		case he.StatusCode == http.StatusUnauthorized || he.StatusCode == http.StatusForbidden:
			return ExitAuth
		case he.StatusCode >= 500 || he.StatusCode == http.StatusTooManyRequests:
			return ExitUnavailable
		}
	case errors.As(err, &re):
		if re.Code == -32005 {
			return ExitUnavailable
		}
	}
	return ExitError
}

func issueText(is apierr.Issue) string {
	if strings.HasSuffix(is.Message, " is required") || len(is.Path) == 0 {
		return is.Message
	}
	parts := make([]string, len(is.Path))
	for i, p := range is.Path {
		parts[i] = fmt.Sprint(p)
	}
	return strings.Join(parts, ".") + ": " + is.Message
}

// FlagIssues rewrites a validation error's field paths into flag names
// (fromBalance → --from-balance), so CLI users see what to type.
func FlagIssues(err error) error {
	var ae *apierr.Error
	if !errors.As(err, &ae) || len(ae.Issues) == 0 {
		return err
	}
	c := *ae
	c.Issues = make([]apierr.Issue, len(ae.Issues))
	for i, is := range ae.Issues {
		if len(is.Path) > 0 {
			if name, ok := is.Path[0].(string); ok {
				flag := "--" + Kebab(name)
				if is.Message == name+" is required" {
					is.Message = flag + " is required"
				}
				is.Path = append([]any{flag}, is.Path[1:]...)
			}
		}
		c.Issues[i] = is
	}
	return &c
}

// MaxArgs is cobra.MaximumNArgs with a usage error (exit status 2) that
// names the first extra argument.
func MaxArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > n {
			return UsageErrorf("unexpected argument %q (see '%s --help')", args[n], cmd.CommandPath())
		}
		return nil
	}
}
