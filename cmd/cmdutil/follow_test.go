package cmdutil

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ferry-sh/ferry/pkg/iostreams"
	"github.com/ferry-sh/ferry/pkg/outcome"
)

func TestFollowerOutput(t *testing.T) {
	steps := []outcome.Event{
		{Event: "confirmed", Kind: outcome.KindDeposit, Message: "Confirmed on base"},
		{Event: "settling", Kind: outcome.KindDeposit, Message: "waiting for the rollup validator"},
		{Event: "credited", Kind: outcome.KindDeposit, Message: "5 credited to X on the rollup"},
		{Event: "settled", Kind: outcome.KindDeposit, Message: "5 credited to X on the rollup"},
	}
	run := func(output string, tty, verbose bool, jq string) (string, string) {
		ios, _, out, errOut := iostreams.Test()
		ios.SetTTY(false, tty, tty)
		ios.SetNoColor(true)
		f := &Factory{IO: ios, Output: output, Verbose: verbose, JQ: jq}
		fl := f.NewFollower()
		for _, ev := range steps {
			fl.Event(ev)
		}
		ios.StopProgress()
		return out.String(), errOut.String()
	}
	// JSON: one object per step on stdout, nothing on stderr.
	out, errOut := run(OutputJSON, false, false, "")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], `{"event":"confirmed","kind":"deposit","message":"Confirmed on base",`) || !strings.Contains(lines[3], `"elapsedMs":`) || errOut != "" {
		t.Errorf("json: %q / %q", out, errOut)
	}
	// --jq picks from the final result only: no stream.
	if out, _ := run(OutputJSON, false, false, ".outcome"); out != "" {
		t.Errorf("json with --jq streamed: %q", out)
	}
	// A pipe: quiet.
	if out, errOut := run(OutputText, false, false, ""); out != "" || errOut != "" {
		t.Errorf("pipe: %q / %q", out, errOut)
	}
	// --verbose in a pipe: one line per step, the repeated final message once.
	_, errOut = run(OutputText, false, true, "")
	want := []string{"✓ Confirmed on base", "… waiting for the rollup validator", "✓ 5 credited to X on the rollup"}
	got := strings.Split(strings.TrimSpace(errOut), "\n")
	if len(got) != len(want) {
		t.Fatalf("verbose: %q", errOut)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("verbose line %d: %q, want prefix %q", i, got[i], want[i])
		}
	}
	// A terminal: progress lines on stderr.
	_, errOut = run(OutputText, true, false, "")
	if !strings.Contains(errOut, "✓ Confirmed on base") || !strings.Contains(errOut, "✓ 5 credited to X on the rollup") {
		t.Errorf("tty: %q", errOut)
	}
}

func TestOperationError(t *testing.T) {
	// --timeout.
	ctx, cancel := WithOperationTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	err := OperationError(ctx, ctx.Err(), "confirming", "SIG", 2*time.Second)
	if Classify(err) != ExitTimeout || !strings.HasPrefix(err.Error(), "TIMEOUT: --timeout 2s passed while confirming SIG") {
		t.Errorf("timeout: %v", err)
	}
	// A halted node.
	hctx, hcancel := context.WithCancelCause(context.Background())
	hcancel(&outcome.HaltedError{Layer: "ephemeral", URL: "http://127.0.0.1:7799", Err: errors.New("Node is unhealthy")})
	err = OperationError(hctx, context.Canceled, "following the deposit of", "SIG", 0)
	if Classify(err) != ExitUnavailable || !strings.Contains(err.Error(), "NODE_UNHEALTHY: gave up following the deposit of SIG: the ephemeral node at http://127.0.0.1:7799 reports it is unhealthy") {
		t.Errorf("halted: %v", err)
	}
	// Anything else is returned as it is.
	plain := errors.New("boom")
	if err := OperationError(context.Background(), plain, "x", "SIG", 0); err != plain {
		t.Errorf("plain: %v", err)
	}
}
