package main

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/ferry-sh/ferry/cmd"
)

// TestMain lets the test binary act as the ferry command inside scripts.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"ferry": func() { os.Exit(cmd.Execute()) },
	})
}

// TestScripts runs the end-to-end scripts in testscripts/ against the real
// ferry binary. HOME is /no-home inside scripts, so every script gets its
// own FERRY_HOME.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testscripts",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("FERRY_HOME", filepath.Join(env.WorkDir, ".ferry"))
			env.Setenv("NO_COLOR", "1")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"waitfile":  cmdWaitFile,
			"serveenv":  cmdServeEnv,
			"jsonget":   cmdJSONGet,
			"capture":   cmdCapture,
			"waitfor":   cmdWaitFor,
			"treehash":  cmdTreeHash,
			"exits":     cmdExits,
			"docblocks": cmdDocBlocks,
		},
	})
}

// waitfile FILE [TIMEOUT]: wait until FILE exists and is not empty (a
// background `ferry serve --addr-file FILE` is listening). TIMEOUT is a Go
// duration, 60s by default.
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: waitfile FILE [TIMEOUT]")
	}
	timeout := 60 * time.Second
	if len(args) == 2 {
		d, err := time.ParseDuration(args[1])
		ts.Check(err)
		timeout = d
	}
	path := ts.MkAbs(args[0])
	deadline := time.Now().Add(timeout)
	for {
		if st, err := os.Stat(path); err == nil && st.Size() > 0 {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s did not appear within %v", args[0], timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// serveenv ADDRFILE: point the CLI at the `ferry serve` whose address file
// is ADDRFILE. Sets FERRY_RPC_URL, FERRY_EPHEMERAL_URL, FERRY_ROUTER_URL and
// FERRY_API_URL (the CLI's overrides of the local cluster), RPC_URL,
// EPHEMERAL_URL, ROUTER_URL, API_URL and the host:port forms RPC_ADDR,
// EPHEMERAL_ADDR, ROUTER_ADDR, API_ADDR, for each endpoint the file lists.
func cmdServeEnv(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: serveenv ADDRFILE")
	}
	var urls map[string]string
	if err := json.Unmarshal([]byte(ts.ReadFile(args[0])), &urls); err != nil {
		ts.Fatalf("read %s: %v", args[0], err)
	}
	for key, name := range map[string]string{"rpc": "RPC_URL", "ephemeral": "EPHEMERAL_URL", "router": "ROUTER_URL", "api": "API_URL"} {
		if u, ok := urls[key]; ok {
			ts.Setenv(name, u)
			ts.Setenv("FERRY_"+name, u)
			ts.Setenv(strings.TrimSuffix(name, "_URL")+"_ADDR", strings.TrimPrefix(u, "http://"))
		}
	}
}

// jsonget FILE PATH VAR: set VAR to the value at PATH (dot-separated keys
// and array indexes, "." for the whole document) of the JSON in FILE
// ("stdout" is the last command's output). Strings are set unquoted,
// anything else as JSON.
func cmdJSONGet(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: jsonget FILE PATH VAR")
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(ts.ReadFile(args[0])))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		ts.Fatalf("%s is not JSON: %v", args[0], err)
	}
	if args[1] != "." {
		for _, part := range strings.Split(args[1], ".") {
			switch x := v.(type) {
			case map[string]any:
				var ok bool
				if v, ok = x[part]; !ok {
					ts.Fatalf("%s: no %q in %s", args[0], part, args[1])
				}
			case []any:
				i, err := strconv.Atoi(part)
				if err != nil || i < 0 || i >= len(x) {
					ts.Fatalf("%s: no index %q in %s", args[0], part, args[1])
				}
				v = x[i]
			default:
				ts.Fatalf("%s: %s: %q is not an object or array", args[0], args[1], part)
			}
		}
	}
	if s, ok := v.(string); ok {
		ts.Setenv(args[2], s)
		return
	}
	b, _ := json.Marshal(v)
	ts.Setenv(args[2], string(b))
}

// capture VAR: set VAR to the last command's stdout without surrounding
// whitespace (a signature, a mint address).
func cmdCapture(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: capture VAR")
	}
	ts.Setenv(args[0], strings.TrimSpace(ts.ReadFile("stdout")))
}

// waitfor TIMEOUT REGEXP PROGRAM [ARGS...]: run PROGRAM until it succeeds
// with a stdout that matches REGEXP (for state that settles
// asynchronously, like a private payout), at most for TIMEOUT. The last
// run's output is the script's stdout and stderr.
func cmdWaitFor(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: waitfor TIMEOUT REGEXP PROGRAM [ARGS...]")
	}
	timeout, err := time.ParseDuration(args[0])
	ts.Check(err)
	re, err := regexp.Compile("(?m)" + args[1])
	ts.Check(err)
	deadline := time.Now().Add(timeout)
	for tries := 1; ; tries++ {
		err := ts.Exec(args[2], args[3:]...)
		if err == nil && re.MatchString(ts.ReadFile("stdout")) {
			return
		}
		if time.Now().After(deadline) {
			msg := fmt.Sprintf("no match for %q after %d tries in %v", args[1], tries, timeout)
			if err != nil {
				msg += fmt.Sprintf(" (last run: %v)", err)
			}
			ts.Fatalf("%s", msg)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// exits N PROGRAM [ARGS...]: run PROGRAM and check that it exits with
// status N (ferry's exit codes are a contract: ferry help exit-codes).
// Its output is the script's stdout and stderr, as with exec.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits N PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}

// treehash DIR FILE: write a digest of the tree under DIR to FILE (compare
// two with cmp): every directory, and every file with its content hash;
// the database files of a running ledger (under base/ and ephemeral/),
// which the ledger keeps rewriting, with their inode instead, so that a
// deleted and recreated ledger still shows.
func cmdTreeHash(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: treehash DIR FILE")
	}
	root := ts.MkAbs(args[0])
	var lines []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			lines = append(lines, rel+"/")
			return nil
		}
		if strings.HasPrefix(rel, "base/") || strings.HasPrefix(rel, "ephemeral/") {
			st, err := os.Stat(p)
			if err != nil {
				return err
			}
			lines = append(lines, fmt.Sprintf("%s inode %d", rel, fileID(st)))
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		lines = append(lines, fmt.Sprintf("%s %x", rel, sha256.Sum256(b)))
		return nil
	})
	ts.Check(err)
	sort.Strings(lines)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
}

// DocSkipMarker, on the line right before a ```sh block of README.md or
// docs/guide.md, exempts that block from being run by docblocks; the
// marker must say why (e.g. it needs the internet, or it starts the
// server the harness starts itself).
const DocSkipMarker = "<!-- not run by the tests:"

// docblocks FILE OUT: write every ```sh block of the markdown file FILE
// (relative to the repository root) that is not marked with DocSkipMarker
// to OUT as one bash script (set -eo pipefail, each block headed by its
// line number), so that a script can run the documentation's commands
// exactly as written.
func cmdDocBlocks(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: docblocks FILE OUT")
	}
	b, err := os.ReadFile(args[0])
	ts.Check(err)
	var out strings.Builder
	out.WriteString("set -eo pipefail\n")
	lines := strings.Split(string(b), "\n")
	blocks := 0
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```sh" {
			continue
		}
		skip := i > 0 && strings.HasPrefix(strings.TrimSpace(lines[i-1]), DocSkipMarker)
		if skip && !strings.HasSuffix(strings.TrimSpace(lines[i-1]), "-->") {
			ts.Fatalf("%s:%d: the skip marker must say why and end with -->", args[0], i)
		}
		j := i + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) != "```" {
			j++
		}
		if j == len(lines) {
			ts.Fatalf("%s:%d: unterminated code block", args[0], i+1)
		}
		if !skip {
			blocks++
			fmt.Fprintf(&out, "\n# %s:%d\n%s\n", args[0], i+1, strings.Join(lines[i+1:j], "\n"))
		}
		i = j
	}
	if blocks == 0 {
		ts.Fatalf("%s has no ```sh block to run", args[0])
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(out.String()), 0o644))
}
