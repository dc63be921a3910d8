// Command gen regenerates ferry's command reference and completions:
//
//	go generate ./...
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/ferry-sh/ferry/internal/docgen"
)

func main() {
	repo := flag.String("repo", ".", "repository root")
	flag.Parse()
	if err := docgen.Write(*repo); err != nil {
		fmt.Fprintln(os.Stderr, "docgen:", err)
		os.Exit(1)
	}
}
