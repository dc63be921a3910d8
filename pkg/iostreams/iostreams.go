// Package iostreams is the CLI's view of its standard streams: whether each
// is a terminal, whether colour is wanted, styled writing that degrades to
// plain text in pipes, and a progress spinner on a terminal's stderr.
package iostreams

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/charmbracelet/colorprofile"
	"golang.org/x/term"
)

// IOStreams bundles stdin, stdout and stderr with their terminal state.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	inTTY, outTTY, errTTY bool
	noColor               bool
	environ               []string

	mu       sync.Mutex
	progress *spinner
}

// System returns streams bound to the process's stdin, stdout and stderr.
func System() *IOStreams {
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		inTTY:   term.IsTerminal(int(os.Stdin.Fd())),
		outTTY:  term.IsTerminal(int(os.Stdout.Fd())),
		errTTY:  term.IsTerminal(int(os.Stderr.Fd())),
		environ: os.Environ(),
	}
}

// Test returns streams backed by buffers, none of them a terminal.
func Test() (s *IOStreams, in, out, errOut *bytes.Buffer) {
	in, out, errOut = &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}

// SetTTY overrides terminal detection (tests).
func (s *IOStreams) SetTTY(in, out, errOut bool) { s.inTTY, s.outTTY, s.errTTY = in, out, errOut }

// SetNoColor disables colour regardless of the environment (--no-color).
func (s *IOStreams) SetNoColor(v bool) { s.noColor = v }

// IsStdinTTY reports whether stdin is a terminal.
func (s *IOStreams) IsStdinTTY() bool { return s.inTTY }

// IsStdoutTTY reports whether stdout is a terminal.
func (s *IOStreams) IsStdoutTTY() bool { return s.outTTY }

// IsStderrTTY reports whether stderr is a terminal.
func (s *IOStreams) IsStderrTTY() bool { return s.errTTY }

func (s *IOStreams) env() []string {
	env := s.environ
	if s.noColor {
		env = append(append([]string(nil), env...), "NO_COLOR=1")
	}
	return env
}

// ColorEnabled reports whether styled stdout output keeps its colours.
func (s *IOStreams) ColorEnabled() bool {
	if !s.outTTY {
		return false
	}
	return colorprofile.Env(s.env()) > colorprofile.NoTTY && !s.noColor && os.Getenv("NO_COLOR") == "" && envGet(s.environ, "NO_COLOR") == ""
}

func envGet(env []string, k string) string {
	for _, kv := range env {
		if len(kv) > len(k) && kv[:len(k)] == k && kv[len(k)] == '=' {
			return kv[len(k)+1:]
		}
	}
	return ""
}

// Styled wraps w so that ANSI styles are downsampled to what the terminal
// supports and stripped entirely in pipes, with NO_COLOR or --no-color.
func (s *IOStreams) Styled(w io.Writer) io.Writer {
	tty := (w == s.Out && s.outTTY) || (w == s.ErrOut && s.errTTY)
	cw := colorprofile.NewWriter(w, s.env())
	if !tty || s.noColor || envGet(s.environ, "NO_COLOR") != "" {
		cw.Profile = colorprofile.NoTTY
	}
	return cw
}

// StyledOut is Styled(s.Out).
func (s *IOStreams) StyledOut() io.Writer { return s.Styled(s.Out) }

// StyledErr is Styled(s.ErrOut).
func (s *IOStreams) StyledErr() io.Writer { return s.Styled(s.ErrOut) }

type spinner struct {
	stop chan struct{}
	done chan struct{}

	mu    sync.Mutex
	label string
}

func (sp *spinner) getLabel() string {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.label
}

// StartProgress shows a spinner with label and elapsed time on stderr while
// a long operation runs. It does nothing when stderr is not a terminal, so
// pipes and CI logs stay clean.
func (s *IOStreams) StartProgress(label string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.errTTY || s.progress != nil {
		return
	}
	sp := &spinner{stop: make(chan struct{}), done: make(chan struct{}), label: label}
	s.progress = sp
	go func() {
		defer close(sp.done)
		frames := []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}
		start := time.Now()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			fmt.Fprintf(s.ErrOut, "\r\033[K%s %s (%.1fs)", frames[i%len(frames)], sp.getLabel(), time.Since(start).Seconds())
			select {
			case <-sp.stop:
				fmt.Fprint(s.ErrOut, "\r\033[K")
				return
			case <-t.C:
			}
		}
	}()
}

// SetProgressLabel changes the running spinner's label (nothing happens
// without one).
func (s *IOStreams) SetProgressLabel(label string) {
	s.mu.Lock()
	sp := s.progress
	s.mu.Unlock()
	if sp != nil {
		sp.mu.Lock()
		sp.label = label
		sp.mu.Unlock()
	}
}

// StopProgress removes the spinner, if any.
func (s *IOStreams) StopProgress() {
	s.mu.Lock()
	sp := s.progress
	s.progress = nil
	s.mu.Unlock()
	if sp != nil {
		close(sp.stop)
		<-sp.done
	}
}
