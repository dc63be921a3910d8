// Package txwire turns instructions into Solana wire transactions and back.
//
// It compiles legacy messages exactly as @solana/web3.js 1.x does (the hosted
// payments API's byte format), encodes and decodes legacy and v0 transactions,
// computes the signers a transaction needs, enforces the 1232-byte packet limit
// and signs with ed25519 keys.
//
// The compiler deliberately does not use solana-go's NewTransaction: that
// function sorts account metas before de-duplicating them, which can mark the
// wrong account writable, and it orders keys by raw bytes instead of web3.js's
// base58 localeCompare order.
package txwire
