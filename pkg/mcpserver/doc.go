// Package mcpserver is ferry's Model Context Protocol endpoint: the payments
// API's operations as MCP tools, served at POST /mcp next to the REST API,
// compatible with the hosted payments.magicblock.app MCP endpoint
// (payments-api.md §5.15).
//
// # Transport
//
// POST /mcp is stateless Streamable HTTP with plain JSON responses (no
// sessions, no SSE), served by the official Go SDK
// (github.com/modelcontextprotocol/go-sdk) with Stateless and JSONResponse
// set. Protocol versions 2025-03-26, 2025-06-18 and 2025-11-25 use the
// initialize handshake (notifications answer 202 with no body); 2026-07-28
// uses server/discover and the Mcp-Method / Mcp-Name headers, which the SDK
// enforces. In front of the SDK, as the hosted service does, the handler
//
//   - adds "application/json, text/event-stream" to Accept;
//   - sets Content-Type: application/json when it is missing or text/plain;
//   - turns the SDK's plain-text transport errors into JSON-RPC error
//     bodies: unparsable bodies give 400 {"code":-32700,"message":"Parse
//     error"}, other media types 415 {"code":-32000,"message":"Unsupported
//     Media Type: Content-Type must be application/json"}, internal failures
//     500 {"code":-32603,"message":"Internal server error"}, an unknown
//     method -32601, an invalid request -32600 and anything else (a foreign
//     Host header on a loopback listener, an oversized body, an unsupported
//     MCP-Protocol-Version header) -32000 with the SDK's text, each with
//     the SDK's HTTP status and "id": null.
//
// Before the SDK decodes a body, the handler refuses one nested deeper than
// Config.MaxJSONDepth (127 levels: 400 {"code":-32700,"message":"Parse
// error","data":"JSON nested deeper than 127 levels"}) and a JSON-RPC
// batch of more than Config.MaxBatch messages (32: 400 {"code":-32600,
// "message":"Invalid Request: batch of N messages exceeds the limit of
// 32"}). Batches exist only in protocol version 2025-03-26 (a request
// without an MCP-Protocol-Version header counts as that version); the SDK
// refuses them under 2025-06-18 and later. An answer larger than
// Config.MaxResponseBytes (8 MiB) is replaced by {"code":-32051,"message":
// "Response too large: ..."}.
//
// GET /mcp returns an information document (405 "Method Not Allowed" with
// Allow: POST when the client asks for text/event-stream), GET
// /.well-known/mcp.json a discovery document, and DELETE /mcp 405 with
// Allow: POST.
//
// # Tools
//
// The hosted API's five tools keep its names, titles, result texts and
// schemas: spl.deposit, spl.withdraw, spl.transfer, spl.getBalance and
// spl.getPrivateBalance. ferry adds spl.initializeMint, transaction.inspect,
// transaction.send, routes.list, chain.getSignatureStatuses,
// chain.getTransaction and chain.getSlot. Tools that mirror a REST route take
// the REST request type as input schema (schema.Of(T).JSONSchema(), the
// same struct the REST handler decodes) and the REST response type as
// output schema, decode their arguments with schema.Decode exactly as the
// REST handler decodes a body, and call the same api.Service method. A
// successful result is
//
//	{"content":[{"type":"text","text":"Built an unsigned SPL transfer transaction."}],
//	 "structuredContent":<the REST response body>}
//
// No tool takes or returns a private key: builds return unsigned
// transactions, and transaction.send takes a transaction the caller signed.
//
// # Errors
//
// A tool that fails (invalid arguments included) returns a result with
// "isError": true instead of a JSON-RPC error, so that the model sees the
// problem and can correct it. Its content holds two text blocks: first
// "<CODE>: <message>", then the exact REST error body, e.g.
//
//	{"error":{"code":"VALIDATION_ERROR","message":"Missing required fields: from","issues":[...]}}
//
// and its _meta holds the REST status under "ferry.sh/httpStatus". The
// error body is deliberately not put in structuredContent: a tool's
// structuredContent must match its output schema, and clients (the
// TypeScript SDK among them) validate it even on error results. Protocol
// problems (unknown tool, malformed request) are JSON-RPC errors.
//
// # Authentication
//
// Tokens are never tool arguments, so they stay out of the model's
// context: a client that holds a login token sends it as the Authorization
// header of its POST /mcp requests ("Bearer <pubkey>.<token>", as for
// REST), and the tools apply it exactly as their REST routes do.
// spl.getPrivateBalance requires one (unlike the hosted MCP tool, which
// takes none): without it the result is an error, 401
// MISSING_AUTH_TOKEN; a token that does not verify (not issued by this
// server for the cluster, or on a TEE cluster refused by its rollup;
// unsigned, forged, expired, mock) is 401 INVALID_AUTH_TOKEN, and another
// wallet's token 403 TOKEN_IDENTITY_MISMATCH. spl.transfer and
// transaction.send check a token when one is sent, and the chain tools
// pass a token the TEE rollup accepted to that rollup, and nowhere else.
//
// The cluster argument of every tool follows the REST API's outbound
// rules: a custom URL must be a configured endpoint or one the operator
// allowed (ferry serve --allow-upstream), else the result is an error,
// 400 UPSTREAM_NOT_ALLOWED, and no connection is made. No tool takes or
// returns a private key.
package mcpserver
