package main

import (
	"os"
	"path/filepath"
	"testing"

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
	})
}
