package cmdutil

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/cluster"
	"github.com/ferry-sh/ferry/pkg/outcome"
)

// DefaultOperationTimeout is --timeout's default for send --confirm and
// confirm --watch: long enough for a private transfer's longest payout
// delay (600 s) plus settling, short enough that a stuck validator is
// reported.
const DefaultOperationTimeout = 15 * time.Minute

// errTimeout is the cause of a context that --timeout ended.
var errTimeout = errors.New("--timeout passed")

// WithOperationTimeout bounds ctx by d (no bound when d is 0), with a
// cause that OperationError recognises.
func WithOperationTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, d, errTimeout)
}

// Follower reports the steps of an operation: one JSON object per event on
// stdout with --output json (unless --json or --jq pick from the final
// result), a progress line per step on a terminal's stderr (and, with
// --verbose, in pipes too).
type Follower struct {
	f     *Factory
	start time.Time
	last  string // the last line printed, not repeated by the final step
}

// NewFollower starts reporting; elapsed times count from now.
func (f *Factory) NewFollower() *Follower { return &Follower{f: f, start: time.Now()} }

// Streaming reports whether events go to stdout as JSON lines.
func (fl *Follower) Streaming() bool {
	return fl.f.JSON() && len(fl.f.JSONFields) == 0 && fl.f.JQ == ""
}

// Result prints the final object of a followed operation with --output
// json: one more line of the event stream, or (with --json/--jq picking
// fields) the filtered document.
func (fl *Follower) Result(v any) error {
	if !fl.Streaming() {
		return fl.f.PrintJSON(v)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(fl.f.IO.Out, "%s\n", b)
	return err
}

// Event reports one step.
func (fl *Follower) Event(ev outcome.Event) {
	f := fl.f
	elapsed := time.Since(fl.start)
	if fl.Streaming() {
		line := struct {
			outcome.Event
			ElapsedMs int64 `json:"elapsedMs"`
		}{ev, elapsed.Milliseconds()}
		b, err := json.Marshal(line)
		if err == nil {
			fmt.Fprintf(f.IO.Out, "%s\n", b)
		}
		return
	}
	if !f.IO.IsStderrTTY() && !f.Verbose {
		return
	}
	switch ev.Event {
	case "settling":
		f.IO.SetProgressLabel(ev.Message)
		if !f.IO.IsStderrTTY() {
			fmt.Fprintf(f.IO.ErrOut, "… %s\n", ev.Message)
		}
		return
	}
	mark := okStyle.Render("✓")
	switch ev.Event {
	case "refunded", "failed":
		mark = warnStyle.Render("✗")
	case "unknown":
		mark = warnStyle.Render("?")
	}
	f.IO.StopProgress()
	if ev.Message != fl.last {
		fl.last = ev.Message
		fmt.Fprintf(f.IO.StyledErr(), "%s %s %s\n", mark, ev.Message, keyStyle.Render(fmt.Sprintf("(%.1fs)", elapsed.Seconds())))
	}
	switch ev.Event {
	case "settled", "refunded", "failed", "unknown":
	default:
		f.IO.StartProgress("Following the operation")
	}
}

// OutcomeError turns a finished operation into the command's error: nil
// when it settled (or is not followed on this cluster), else a
// *CodedError with ExitFailed.
func OutcomeError(res *outcome.Result) error {
	switch res.Status {
	case outcome.Refunded:
		return &CodedError{Exit: ExitFailed, Code: "OPERATION_REFUNDED", Message: res.Message, Details: res}
	case outcome.Failed:
		return &CodedError{Exit: ExitFailed, Code: "OPERATION_FAILED", Message: res.Message, Details: res}
	}
	return nil
}

// OperationError explains why following an operation stopped: --timeout
// (ExitTimeout), a node that reports it is halted (ExitUnavailable), or
// err itself. what names the wait ("confirming", "waiting for the
// payouts"), sig the transaction.
func OperationError(ctx context.Context, err error, what, sig string, timeout time.Duration) error {
	cause := context.Cause(ctx)
	var halted *outcome.HaltedError
	switch {
	case errors.As(cause, &halted), errors.As(err, &halted):
		return &CodedError{Exit: ExitUnavailable, Code: "NODE_UNHEALTHY", Message: fmt.Sprintf("gave up %s %s: %v", what, sig, halted), Err: err}
	case errors.Is(cause, errTimeout):
		return &CodedError{Exit: ExitTimeout, Code: "TIMEOUT",
			Message: fmt.Sprintf("--timeout %s passed while %s %s; it may still complete: check with `ferry confirm --watch %s`", timeout, what, sig, sig), Err: err}
	}
	return err
}

// Tracker follows op on the selected cluster: settlement is followed on
// the local cluster (see pkg/outcome). Its rollup reads carry the token
// of op's owner (flagToken, FERRY_AUTH_TOKEN or the stored login), since
// a rollup that filters reads (a TEE one, or ferry's local one) shows an
// operation's private records only to its owner.
func Tracker(f *Factory, ep cluster.Endpoints, base, eph *chainclient.Client, poll time.Duration, follow *Follower, op outcome.Operation, flagToken string) *outcome.Tracker {
	if eph != nil {
		if tok := f.RollupToken(flagToken, ep.Name, op.Owner.String()); tok != "" {
			eph = eph.WithToken(tok)
		}
	}
	return &outcome.Tracker{Base: base, Ephemeral: eph, Follow: ep.Kind == cluster.Local, PollInterval: poll, OnEvent: follow.Event}
}
