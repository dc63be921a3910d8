// Command ferry is a wallet companion and local backend for SPL token
// payments on Solana with MagicBlock ephemeral rollups.
package main

import (
	"os"

	"github.com/ferry-sh/ferry/cmd"
)

//go:generate go run ./internal/docgen/gen -repo .

func main() { os.Exit(cmd.Execute()) }
