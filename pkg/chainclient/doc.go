// Package chainclient is the Solana JSON-RPC client ferry uses to talk to
// real clusters, MagicBlock ephemeral-rollup (ER) validators, the MagicBlock
// router and ferry's own embedded chain nodes.
//
// The client is a thin layer over net/http with one typed method per RPC
// method ferry needs, plus Call and CallRaw for anything else. It requests
// base64 account data explicitly, tolerates unknown fields, accepts both the
// context-wrapped ({"context":…,"value":…}) and the bare result shapes where
// servers differ (getBlockhashForAccounts is bare on the router and wrapped
// on ER validators), and never prints a ?token= (or api-key) query value in an
// error message.
//
// Errors say which method was called at which (redacted) URL and wrap the
// cause: a *RPCError for a JSON-RPC error object, a *HTTPError for a non-2xx
// reply without one, and a *TransportError when the server could not be
// reached at all.
//
// Cached wraps a Client with the caches that let a transaction build run
// without an RPC round trip in steady state (latest blockhash, mint token
// program, validator identity), and Pool keeps one Cached per endpoint.
// Client.Confirm implements the polling confirmation loop of chain-rpc.md §4.
package chainclient
