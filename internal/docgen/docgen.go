// Package docgen writes ferry's command reference (markdown and man pages)
// and shell completions from the cobra command tree. The output is
// reproducible: no generation dates, no machine-specific paths, so a test can
// regenerate it and diff against the committed files.
package docgen

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/ferry-sh/ferry/cmd"
	"github.com/ferry-sh/ferry/cmd/cmdutil"
	"github.com/ferry-sh/ferry/pkg/iostreams"
)

// ManDate is the date printed in man page headers. It is fixed so that
// regeneration is byte-for-byte stable; bump it with releases.
var ManDate = time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)

// Root builds the command tree with an environment-independent factory, so
// that defaults shown in help never depend on the machine.
func Root() *cobra.Command {
	io, _, _, _ := iostreams.Test()
	f := &cmdutil.Factory{IO: io, Getenv: func(string) string { return "" }}
	root := cmd.NewRootCmd(f)
	root.DisableAutoGenTag = true
	return root
}

// Files returns every generated file, keyed by its path relative to the
// repository root: docs/cli/*.md, docs/man/*.1 and completions/ferry.*.
func Files() (map[string][]byte, error) {
	tmp, err := os.MkdirTemp("", "ferry-docgen-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	root := Root()

	md := filepath.Join(tmp, "docs", "cli")
	man := filepath.Join(tmp, "docs", "man")
	for _, d := range []string{md, man} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	if err := doc.GenMarkdownTreeCustom(root, md, func(string) string { return "" }, func(name string) string {
		return strings.TrimSuffix(name, ".md") + ".md"
	}); err != nil {
		return nil, fmt.Errorf("markdown: %w", err)
	}
	if err := doc.GenManTree(root, &doc.GenManHeader{
		Title: "FERRY", Section: "1", Date: &ManDate, Source: "ferry", Manual: "ferry manual",
	}, man); err != nil {
		return nil, fmt.Errorf("man pages: %w", err)
	}

	// Help topics (ferry help exit-codes) are not commands, so the tree
	// generators leave them out; they get a page of their own.
	for _, c := range root.Commands() {
		if !c.IsAdditionalHelpTopicCommand() {
			continue
		}
		name := strings.ReplaceAll(c.CommandPath(), " ", "_")
		var mdb bytes.Buffer
		if err := doc.GenMarkdownCustom(c, &mdb, func(name string) string { return name }); err != nil {
			return nil, fmt.Errorf("markdown %s: %w", c.Name(), err)
		}
		if err := os.WriteFile(filepath.Join(md, name+".md"), mdb.Bytes(), 0o644); err != nil {
			return nil, err
		}
		var manb bytes.Buffer
		if err := doc.GenMan(c, &doc.GenManHeader{Title: "FERRY", Section: "1", Date: &ManDate, Source: "ferry", Manual: "ferry manual"}, &manb); err != nil {
			return nil, fmt.Errorf("man page %s: %w", c.Name(), err)
		}
		if err := os.WriteFile(filepath.Join(man, strings.ReplaceAll(c.CommandPath(), " ", "-")+".1"), manb.Bytes(), 0o644); err != nil {
			return nil, err
		}
	}

	out := map[string][]byte{}
	err = filepath.WalkDir(tmp, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(tmp, p)
		out[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		return nil, err
	}

	completions := map[string]func(*bytes.Buffer) error{
		"completions/ferry.bash": func(b *bytes.Buffer) error { return root.GenBashCompletionV2(b, true) },
		"completions/ferry.zsh":  func(b *bytes.Buffer) error { return root.GenZshCompletion(b) },
		"completions/ferry.fish": func(b *bytes.Buffer) error { return root.GenFishCompletion(b, true) },
		"completions/ferry.ps1":  func(b *bytes.Buffer) error { return root.GenPowerShellCompletionWithDesc(b) },
	}
	for name, gen := range completions {
		var b bytes.Buffer
		if err := gen(&b); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out[name] = b.Bytes()
	}
	return out, nil
}

// Write regenerates the files under repo, removing stale generated files in
// docs/cli, docs/man and completions.
func Write(repo string) error {
	files, err := Files()
	if err != nil {
		return err
	}
	for _, dir := range []string{"docs/cli", "docs/man", "completions"} {
		old, _ := filepath.Glob(filepath.Join(repo, dir, "*"))
		for _, p := range old {
			rel, _ := filepath.Rel(repo, p)
			if _, keep := files[filepath.ToSlash(rel)]; !keep && !strings.HasSuffix(p, "README.md") {
				if err := os.Remove(p); err != nil {
					return err
				}
			}
		}
	}
	for rel, b := range files {
		p := filepath.Join(repo, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
