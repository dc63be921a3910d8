package api

// Examples of the OpenAPI document (/doc): one per request body and 200
// response of every operation (named ones where an operation has several
// shapes), the hosted document's (payments-api.md §5.16) where it has
// them. The document test checks each against its schema.

// Example keys and values (real base58 keys; the owner and recipient are
// the hosted documentation's).
const (
	exOwner      = "3rXKwQ1kpjBd5tdcco32qsvqUh1BnZjcYnS5kYrP7AYE"
	exRecipient  = "Bt9oNR5cCtnfuMmXgWELd6q5i974PdEMQDUE55nBC57L"
	exDest       = "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU"
	exUSDC       = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
	exUSDT       = "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB"
	exWSOL       = "So11111111111111111111111111111111111111112"
	exValidator  = "MAS1Dt9qreoRMQ14YQuhg8UTZMMzDdKhmkZMECCzk57"
	exBlockhash  = "BvjSKLa8Jq4LfJHEgoJk3BWCvxXpZk2m31NhvTMjgg5m"
	exQueue      = "xkHohgjxvBtvr9x6NJwXNNGJYYiDdLJbCTaNvxCRm2S"
	exRentPDA    = "4RvdEGaUyChj3AketeBZoY1EotNtPveMFUXL8DVetrAp"
	exATA        = "HQ6fRTZyj9WYiYmwHsezgqYNsdWe4VaF6TZVsbZXUnzu"
	exStashATA   = "5JhzxDt4re1DiBB8w7w7EDnoVhdELHF78eGL5zdeWYyB"
	exCrank      = "vgcPuZK7kipr6QsRrnAjAdfzne7nmECj1Fo6gh8PgTG"
	exPool       = "FMuvtJSeaMhqhjXqi3KqAMTuWoPe3Qqe2rX6USmsCVRb"
	exSignature  = "4JeBrmYAiTXBfLC6zMaUrMWoMEtWt9BCQACqGGpxDsqzEimx7Q2RmZC5YUDYsgfhi1fK3uHcuapEtEqVg7qwZRhz"
	exTxBase64   = "AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAABAAkQ"
	exRollupURL  = "https://as.magicblock.app"
	exTEEURL     = "https://mainnet-tee.magicblock.app"
	exTokenJWT   = exOwner + ".eyJhbGciOiJFZERTQSIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIzclhLd1ExayJ9.c2lnbmF0dXJl"
	exLastHeight = 284512337
)

// namedExample is one of several examples of a body.
type namedExample struct {
	Summary string
	Value   any
}

// opExample is what an operation's examples are.
type opExample struct {
	Request   any                     // the request body's example
	Requests  map[string]namedExample // or several, by name
	Response  any                     // the 200 body's example
	Responses map[string]namedExample // or several, by name
}

func unsigned(kind, sendTo string, count int, extra map[string]any) map[string]any {
	m := map[string]any{
		"kind": kind, "version": "legacy", "transactionBase64": exTxBase64, "sendTo": sendTo,
		"recentBlockhash": exBlockhash, "lastValidBlockHeight": exLastHeight, "instructionCount": count,
		"requiredSigners": []any{exOwner}, "validator": exValidator,
	}
	for k, v := range extra {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	return m
}

// swapQuoteExample is the hosted document's USDC → USDT quote.
func swapQuoteExample() map[string]any {
	return map[string]any{
		"inputMint": exUSDC, "inAmount": "1000000", "outputMint": exUSDT, "outAmount": "999519", "otherAmountThreshold": "994522",
		"swapMode": "ExactIn", "slippageBps": 50, "platformFee": nil, "priceImpactPct": "0",
		"routePlan": []any{
			map[string]any{"swapInfo": map[string]any{"ammKey": "DB3sUCP2H4icbeKmK6yb6nUxU5ogbcRHtGuq7W2RoRwW", "label": "HumidiFi",
				"inputMint": exUSDC, "outputMint": exWSOL, "inAmount": "1000000", "outAmount": "11687625"}, "percent": 100, "bps": nil},
			map[string]any{"swapInfo": map[string]any{"ammKey": "4rJggoVMajEUtipev1XhSMjESYk8Zibz6CDHPtUe1mem", "label": "GoonFi V2",
				"inputMint": exWSOL, "outputMint": exUSDT, "inAmount": "11687625", "outAmount": "999519"}, "percent": 100, "bps": nil},
		},
		"contextSlot": 414697033, "timeTaken": 0.001218002,
	}
}

// transferRequestExample is the hosted document's TransferRequest example
// (a gasless private base-to-base payment; no init flags, no split).
func transferRequestExample() map[string]any {
	return map[string]any{
		"from": exOwner, "to": exRecipient, "mint": exUSDC, "amount": 5000000, "visibility": "private",
		"fromBalance": "base", "toBalance": "base", "memo": "Order #1042", "minDelayMs": "0", "maxDelayMs": "0",
		"clientRefId": "42", "gasless": true,
	}
}

// opExamples are the examples of each operation, by operationId.
func opExamples() map[string]opExample {
	return map[string]opExample{
		"getHealth":    {Response: map[string]any{"status": "ok"}},
		"getChallenge": {Response: map[string]any{"challenge": "Login to Query Filtering Service\nTimestamp: 1767225600\nUser: " + exOwner}},
		"login": {
			Request: map[string]any{"pubkey": exOwner, "challenge": "Login to Query Filtering Service\nTimestamp: 1767225600\nUser: " + exOwner,
				"signature": exSignature, "cluster": "mainnet-private"},
			Response: map[string]any{"token": exTokenJWT, "expiresAt": 1769817600000},
		},
		"deposit": {
			Request:  map[string]any{"owner": exOwner, "amount": 1000000, "mint": exUSDC, "cluster": "mainnet"},
			Response: unsigned("deposit", "base", 3, nil),
		},
		"transfer": {
			Request: transferRequestExample(),
			Response: unsigned("transfer", "base", 4, map[string]any{"from": "base", "requiredSigners": []any{exDest, exOwner},
				"fees": map[string]any{"lamports": "2039280", "tokens": "205000"}}),
		},
		"withdraw": {
			Request:  map[string]any{"owner": exOwner, "mint": exUSDC, "amount": 1000000},
			Response: unsigned("withdraw", "base", 2, nil),
		},
		"initializeMint": {
			Request:  map[string]any{"payer": exOwner, "mint": exUSDC},
			Response: unsigned("initializeMint", "base", 7, map[string]any{"transferQueue": exQueue, "rentPda": exRentPDA}),
		},
		"isMintInitialized": {Response: map[string]any{"mint": exUSDC, "validator": exValidator, "transferQueue": exQueue, "initialized": true}},
		"ensureTransferQueueCrank": {
			Request:  map[string]any{"mint": exUSDC, "cluster": "mainnet"},
			Response: map[string]any{"mint": exUSDC, "validator": exValidator, "transferQueue": exQueue, "crankSignature": exSignature},
		},
		"undelegateEphemeralAta": {
			Request: map[string]any{"payer": exOwner, "mint": exUSDC, "cluster": "mainnet-private"},
			Response: unsigned("undelegateEphemeralAta", "ephemeral", 1, map[string]any{"sendRpcEndpoint": exTEEURL,
				"validator": "MTEWGuqxUpYZGFJQcp8tLN7x5v9BSeoFHYWQQ3n3xzo"}),
		},
		"getBalance":        {Response: map[string]any{"address": exOwner, "mint": exUSDC, "ata": exATA, "location": "base", "balance": "1000000"}},
		"getPrivateBalance": {Response: map[string]any{"address": exOwner, "mint": exUSDC, "ata": exATA, "location": "ephemeral", "balance": "250000"}},
		"createStealthPool": {
			Request: map[string]any{"payer": exOwner, "authority": exOwner, "handle": "alice.block", "destinations": []any{exRecipient}, "splitAcrossKeys": false},
			Response: unsigned("stealthPool", "ephemeral", 1, map[string]any{"stealthPool": exPool,
				"setupTransaction": unsigned("stealthPool", "base", 1, nil), "validator": exValidator}),
		},
		"getStealthPool": {Response: map[string]any{"stealthPool": exPool, "exists": true}},
		"sendTransaction": {
			Request: map[string]any{"transactionBase64": exTxBase64, "sendTo": "base", "confirm": true, "recentBlockhash": exBlockhash,
				"lastValidBlockHeight": exLastHeight},
			Response: map[string]any{"signature": exSignature, "sendTo": "base", "confirmed": true,
				"confirmationRpcEndpoint": "https://rpc.magicblock.app/mainnet", "confirmationRequiresAuthToken": false},
		},
		"getSwapQuote": {Response: swapQuoteExample()},
		"swap": {
			Requests: map[string]namedExample{
				"private": {Summary: "Private swap + scheduled transfer", Value: map[string]any{"userPublicKey": exOwner, "quoteResponse": swapQuoteExample(),
					"visibility": "private", "destination": exDest, "minDelayMs": "0", "maxDelayMs": "0", "split": 1}},
				"public": {Summary: "Public swap (passed to the upstream as is)", Value: map[string]any{"userPublicKey": exOwner, "quoteResponse": swapQuoteExample()}},
			},
			Responses: map[string]namedExample{
				"private": {Summary: "visibility=private (with the privateTransfer block)", Value: map[string]any{"swapTransaction": exTxBase64,
					"lastValidBlockHeight": 318120000, "privateTransfer": map[string]any{"stashAta": exStashATA, "hydraCrankPda": exCrank, "shuttleId": 2147483647}}},
				"public": {Summary: "visibility=public", Value: map[string]any{"swapTransaction": exTxBase64, "lastValidBlockHeight": 318120000}},
			},
		},
		"mcp": {
			Request: map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
				"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "doc-example", "version": "1.0.0"}}},
			Response: map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{"protocolVersion": "2025-11-25",
				"capabilities": map[string]any{"tools": map[string]any{"listChanged": true}},
				"serverInfo":   map[string]any{"name": "spl-private-payments-api", "version": "0.1.0"}}},
		},
	}
}

// componentExamples are whole-component examples (the hosted document's
// TransferRequest example).
func componentExamples() map[string]any {
	return map[string]any{"TransferRequest": transferRequestExample()}
}

// propertyExamples are examples of single properties, as the hosted
// document gives them.
var propertyExamples = map[string]map[string]any{
	"TransferRequest": {"gasless": true},
	"DepositRequest":  {"private": true},
}

// mcpRequestSchema is the JSON-RPC 2.0 request POST /mcp takes (one
// message; the 2025-03-26 protocol also takes a batch of them).
func mcpRequestSchema() map[string]any {
	return map[string]any{
		"type": "object", "title": "McpRequest",
		"description": "A JSON-RPC 2.0 request or notification of the Model Context Protocol: initialize, notifications/initialized, " +
			"tools/list, tools/call (params {name, arguments}), ping; server/discover for protocol 2026-07-28.",
		"required": []any{"jsonrpc", "method"},
		"properties": map[string]any{
			"jsonrpc": map[string]any{"type": "string", "enum": []any{"2.0"}},
			"id":      map[string]any{"type": []any{"string", "integer"}, "description": "Absent for a notification."},
			"method":  map[string]any{"type": "string", "description": "initialize, tools/list, tools/call, ..."},
			"params":  map[string]any{"type": "object", "description": "Method parameters, e.g. {protocolVersion, capabilities, clientInfo} for initialize."},
		},
	}
}

// mcpResponseSchema is a JSON-RPC 2.0 response of POST /mcp.
func mcpResponseSchema() map[string]any {
	return map[string]any{
		"type": "object", "title": "McpResponse",
		"description": "A JSON-RPC 2.0 response: result, or error {code, message}. A tools/call result holds content (text items) and " +
			"structuredContent (the REST response body); a failed call has isError true.",
		"required": []any{"jsonrpc"},
		"properties": map[string]any{
			"jsonrpc": map[string]any{"type": "string", "enum": []any{"2.0"}},
			"id":      map[string]any{"type": []any{"string", "integer", "null"}},
			"result":  map[string]any{"type": "object"},
			"error": map[string]any{"type": "object", "required": []any{"code", "message"}, "properties": map[string]any{
				"code": map[string]any{"type": "integer"}, "message": map[string]any{"type": "string"}, "data": map[string]any{}}},
		},
	}
}
