// Package devchain is the development side of `ferry serve`: cheatcodes
// that put a local chain node into the state a test needs, and controls
// that make the local rollup validator act now.
//
// # State cheatcodes
//
// A Node serves the cheatcodes of one ledger (the base layer or the
// ephemeral rollup): set an account, set a token account (creating the
// associated token account if needed), set a mint, reset an account to its
// genesis value, profile a transaction without committing it, and export
// or import a snapshot of accounts. Every write goes through the ledger's
// privileged Apply, so it lands atomically in the working slot, is
// persisted with it, moves the ledger's indexes and lamport supply, and
// reaches PubSub subscribers like any validator write (it is listed in the
// block's Applied writes). Every write is logged with the method, the node
// and the accounts it wrote.
//
// The JSON-RPC names and parameter shapes are surfpool's (surfnet_*), so
// its SDKs and documentation apply, with ferry_* aliases and a few
// ferry-only methods (ferry_setMint, ferry_importSnapshot,
// ferry_haltLedger). Methods lists them; pkg/rpcserver registers them as
// local-only methods, pkg/mcpserver exposes the typed calls as MCP tools
// and `ferry dev` calls them over JSON-RPC.
//
// # Rollup controls
//
// A Rollup asks the local validator (pkg/localnet, which implements
// RollupController) to commit or undelegate an eATA now, to settle queued
// private payouts now, and to show the transfer queues. How each one stays
// honest on chain is documented on RollupController and in
// docs/localnet.md.
package devchain
