package cmdutil

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

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
		if len(ae.Issues) > 0 {
			parts := make([]string, len(ae.Issues))
			for i, is := range ae.Issues {
				parts[i] = issueText(is)
			}
			msg = strings.Join(parts, "; ")
		} else if d, ok := ae.Details.(map[string]any); ok && d["message"] != nil {
			msg += fmt.Sprintf(" (%v)", d["message"])
		} else if ok && d["err"] != nil {
			// A transaction that landed and failed: its TransactionError.
			if b, err := json.Marshal(d["err"]); err == nil {
				msg += fmt.Sprintf(" (%s)", b)
			}
		}
		fmt.Fprintf(w, "error: %s: %s\n", ae.Code, msg)
		return 1
	}
	fmt.Fprintf(w, "error: %s\n", err)
	return 1
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
