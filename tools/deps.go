//go:build tools

// Package tools pins dependencies that are used before every package that
// imports them exists, so that `go mod tidy` keeps them in go.mod.
package tools

import (
	_ "charm.land/lipgloss/v2"
	_ "filippo.io/edwards25519"
	_ "github.com/gagliardetto/solana-go"
	_ "github.com/gagliardetto/solana-go/rpc"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/mr-tron/base58"
	_ "github.com/oasisprotocol/curve25519-voi/primitives/ed25519"
	_ "github.com/rogpeppe/go-internal/testscript"
	_ "github.com/spf13/cobra"
	_ "github.com/spf13/cobra/doc"
	_ "go.etcd.io/bbolt"
	_ "golang.org/x/crypto/nacl/box"
	_ "golang.org/x/term"
)
