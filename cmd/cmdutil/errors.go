package cmdutil

import (
	"errors"
	"fmt"
	"io"

	"github.com/ferry-sh/ferry/pkg/apierr"
)

// UsageError is a mistake in how a command was invoked (exit status 2).
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

// UsageErrorf builds a UsageError.
func UsageErrorf(format string, args ...any) error {
	return &UsageError{msg: fmt.Sprintf(format, args...)}
}

// SilentError exits with Code without printing anything more; the command
// has already reported what happened.
type SilentError struct{ Code int }

func (e *SilentError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// ExitCode maps an error to the process exit status and prints it as one
// line on w: "error: CODE: message" for API errors, "error: message"
// otherwise. Usage errors exit 2, everything else 1.
func ExitCode(err error, w io.Writer) int {
	if err == nil {
		return 0
	}
	var silent *SilentError
	if errors.As(err, &silent) {
		return silent.Code
	}
	var usage *UsageError
	if errors.As(err, &usage) {
		fmt.Fprintf(w, "error: %s\n", usage.msg)
		return 2
	}
	var ae *apierr.Error
	if errors.As(err, &ae) {
		msg := ae.Message
		for _, is := range ae.Issues {
			msg += fmt.Sprintf("; %s", is.Message)
		}
		fmt.Fprintf(w, "error: %s: %s\n", ae.Code, msg)
		return 1
	}
	fmt.Fprintf(w, "error: %s\n", err)
	return 1
}
