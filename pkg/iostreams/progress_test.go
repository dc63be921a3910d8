package iostreams

import (
	"strings"
	"testing"
)

func TestProgressLabel(t *testing.T) {
	s, _, _, errOut := Test()
	// Not a terminal: no spinner, and relabelling is a no-op.
	s.StartProgress("a")
	s.SetProgressLabel("b")
	s.StopProgress()
	if errOut.Len() != 0 {
		t.Fatalf("spinner in a pipe: %q", errOut.String())
	}

	s.SetTTY(false, false, true)
	s.StartProgress("first")
	s.SetProgressLabel("second")
	s.mu.Lock()
	got := s.progress.getLabel()
	s.mu.Unlock()
	s.StopProgress()
	if got != "second" {
		t.Errorf("label %q, want second", got)
	}
	if out := errOut.String(); !strings.HasSuffix(out, "\r\033[K") || !strings.Contains(out, "s)") {
		t.Errorf("spinner output %q", out)
	}
	s.SetProgressLabel("after stop") // no spinner: nothing happens
}
