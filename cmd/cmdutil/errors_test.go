package cmdutil

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/outcome"
)

func TestExitCodes(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, ExitOK},
		{"usage", UsageErrorf("bad flag"), ExitUsage},
		{"wrapped usage", fmt.Errorf("x: %w", UsageErrorf("bad")), ExitUsage},
		{"validation", apierr.Validation(apierr.Issue{Message: "amount is required"}), ExitValidation},
		{"api 400", apierr.BadRequest("MINT_NOT_FOUND", "no mint"), ExitValidation},
		{"input", InputErrorf("not a keypair"), ExitValidation},
		{"missing file", &os.PathError{Op: "open", Path: "x", Err: os.ErrNotExist}, ExitValidation},
		{"tx failed", apierr.BadRequest("TRANSACTION_FAILED", "Transaction failed"), ExitFailed},
		{"preflight", apierr.New(http.StatusBadGateway, apierr.CodeRPC, "Failed to send transaction").WithDetails(map[string]any{"err": json.RawMessage(`{"InstructionError":[0,{"Custom":1}]}`)}), ExitFailed},
		{"landed failed", &chainclient.TransactionFailedError{Err: json.RawMessage(`"x"`)}, ExitFailed},
		{"refunded", OutcomeError(&outcome.Result{Status: outcome.Refunded}), ExitFailed},
		{"withdraw failed", OutcomeError(&outcome.Result{Status: outcome.Failed}), ExitFailed},
		{"expired", apierr.New(http.StatusBadGateway, "TRANSACTION_EXPIRED", "expired"), ExitTimeout},
		{"gateway timeout", apierr.New(http.StatusGatewayTimeout, apierr.CodeRPC, "Timed out"), ExitTimeout},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), ExitTimeout},
		{"unreachable", &chainclient.TransportError{Err: errors.New("refused")}, ExitUnavailable},
		{"rpc 502", apierr.New(http.StatusBadGateway, apierr.CodeRPC, "Failed to send transaction").WithDetails(map[string]any{"message": "boom"}), ExitUnavailable},
		{"unhealthy", &chainclient.RPCError{Code: -32005, Message: "Node is unhealthy"}, ExitUnavailable},
		{"http 503", &chainclient.HTTPError{StatusCode: 503}, ExitUnavailable},
		{"auth 401", apierr.New(http.StatusUnauthorized, "INVALID_AUTH_TOKEN", "bad token"), ExitAuth},
		{"auth code", apierr.New(http.StatusBadRequest, "CHALLENGE_EXPIRED", "expired"), ExitAuth},
		{"http 403", &chainclient.HTTPError{StatusCode: 403}, ExitAuth},
		{"silent", &SilentError{Code: 4}, 4},
		{"other", errors.New("boom"), ExitError},
		{"internal", apierr.New(500, "INTERNAL_ERROR", "x"), ExitError},
	} {
		if got := Classify(c.err); got != c.want {
			t.Errorf("%s: Classify = %d, want %d", c.name, got, c.want)
		}
		var buf bytes.Buffer
		if got := Report(c.err, &buf, false); got != c.want {
			t.Errorf("%s: Report = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestReportFormats(t *testing.T) {
	err := apierr.BadRequest("TRANSACTION_FAILED", "Transaction failed").WithDetails(map[string]any{"err": "x", "hint": "SPL Token program error InsufficientFunds"})
	var text bytes.Buffer
	Report(err, &text, false)
	if text.String() != "error: TRANSACTION_FAILED: Transaction failed (SPL Token program error InsufficientFunds)\n" {
		t.Errorf("text: %q", text.String())
	}
	var js bytes.Buffer
	if code := Report(err, &js, true); code != ExitFailed {
		t.Fatalf("code %d", code)
	}
	var got struct {
		Error struct {
			Code     string         `json:"code"`
			Message  string         `json:"message"`
			Details  map[string]any `json:"details"`
			ExitCode int            `json:"exitCode"`
		} `json:"error"`
	}
	if e := json.Unmarshal(js.Bytes(), &got); e != nil || strings.Count(js.String(), "\n") != 1 {
		t.Fatalf("not one JSON line: %q %v", js.String(), e)
	}
	if got.Error.Code != "TRANSACTION_FAILED" || got.Error.ExitCode != 4 || got.Error.Details["hint"] == nil {
		t.Errorf("json: %+v", got)
	}
	js.Reset()
	Report(UsageErrorf("--amount: bad"), &js, true)
	if !strings.Contains(js.String(), `"code":"USAGE_ERROR"`) || !strings.Contains(js.String(), `"exitCode":2`) {
		t.Errorf("usage json: %s", js.String())
	}
	text.Reset()
	Report(&chainclient.TransportError{Err: errors.New("refused")}, &text, false)
	if text.String() != "error: upstream unreachable (refused)\n" {
		t.Errorf("transport text: %q", text.String())
	}
}
