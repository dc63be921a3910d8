package payments

// This file holds the request and response types of the endpoints beyond
// the four transfer builds: undelegation, stealth pools, mint status, the
// queue crank and balances. As for TransferRequest, one type drives the
// REST validation, the OpenAPI document, MCP tool schemas and CLI flags.

// UndelegateEphemeralATARequest is the body of POST
// /v1/spl/undelegate-ephemeral-ata: commit a wallet's ephemeral ATA on the
// rollup it is delegated to and hand it back to the base layer.
type UndelegateEphemeralATARequest struct {
	Payer   string `json:"payer" validate:"required,pubkey" doc:"Wallet whose ephemeral ATA is undelegated; signer and fee payer."`
	Mint    string `json:"mint" validate:"required,pubkey" doc:"Token mint."`
	Cluster string `json:"cluster,omitempty" doc:"mainnet, devnet, mainnet-private, devnet-private, local, or a custom http(s) base RPC URL."`
}

// UndelegateEphemeralATAResponse is the undelegation transaction. It is
// sent to the rollup the account is delegated to, so SendRPCEndpoint is
// always set.
type UndelegateEphemeralATAResponse struct {
	UnsignedTransaction
}

// StealthPoolRequest is the body of POST /v1/spl/stealth-pool: create (or
// update) the stealth pool of a handle, which private base-to-base
// transfers can then address by name.
type StealthPoolRequest struct {
	Payer           string   `json:"payer" validate:"required,pubkey" doc:"Signer and fee payer of both transactions."`
	Authority       string   `json:"authority" validate:"required,pubkey" doc:"Signer that manages the pool."`
	Handle          string   `json:"handle" validate:"required,minlen=1,maxbytes=255" msg:"Handle must be 255 UTF-8 bytes or fewer." doc:"Pool name: 1-255 UTF-8 bytes, used verbatim (case-sensitive, not trimmed)."`
	Destinations    []string `json:"destinations" validate:"required,items=pubkey,minitems=1,maxitems=10" doc:"Owner wallets (not token accounts) that receive the payouts."`
	SplitAcrossKeys *bool    `json:"splitAcrossKeys,omitempty" default:"false" doc:"Spread payouts across the destinations (flag bit 0)."`
	Validator       string   `json:"validator,omitempty" validate:"pubkey" doc:"Ephemeral rollup validator the pool is delegated to; resolved with getIdentity when omitted."`
	Cluster         string   `json:"cluster,omitempty" doc:"mainnet, devnet, mainnet-private, devnet-private, local, or a custom http(s) base RPC URL."`
}

// StealthPoolResponse is the pool's two transactions: the top-level fields
// are the rollup update (ESPL 21, sent to the ephemeral rollup with the
// bearer token); SetupTransaction creates and delegates the pool on base
// (ESPL 22) and must land first. Both need the payer's and the authority's
// signatures.
type StealthPoolResponse struct {
	UnsignedTransaction
	StealthPool      string               `json:"stealthPool" doc:"Stealth pool PDA of the handle."`
	SetupTransaction *UnsignedTransaction `json:"setupTransaction" doc:"Base-layer setup transaction; send and confirm it before the update."`
}

// StealthPoolStatusRequest is the query of GET /v1/spl/stealth-pool.
type StealthPoolStatusRequest struct {
	Handle  string `json:"handle" validate:"required,minlen=1,maxbytes=255" msg:"Handle must be 255 UTF-8 bytes or fewer." doc:"Pool name (1-255 UTF-8 bytes, verbatim)."`
	Cluster string `json:"cluster,omitempty" doc:"mainnet, devnet, mainnet-private, devnet-private, local, or a custom http(s) base RPC URL."`
}

// StealthPoolStatusResponse tells whether a handle's pool exists. The
// destinations are never returned.
type StealthPoolStatusResponse struct {
	StealthPool string `json:"stealthPool" doc:"Stealth pool PDA of the handle."`
	Exists      bool   `json:"exists" doc:"The pool exists on base, owned by the eSPL or delegation program."`
}

// MintInitializationRequest is the query of GET
// /v1/spl/is-mint-initialized.
type MintInitializationRequest struct {
	Mint      string `json:"mint" validate:"required,pubkey" doc:"Token mint."`
	Cluster   string `json:"cluster,omitempty" doc:"mainnet, devnet, mainnet-private, devnet-private, local, or a custom http(s) base RPC URL."`
	Validator string `json:"validator,omitempty" validate:"pubkey" doc:"Ephemeral rollup validator; resolved with getIdentity when omitted."`
}

// MintInitializationResponse reports whether initialize-mint ran for the
// (mint, validator) pair.
type MintInitializationResponse struct {
	Mint          string `json:"mint" doc:"Token mint."`
	Validator     string `json:"validator" doc:"Validator checked."`
	TransferQueue string `json:"transferQueue" doc:"Transfer queue PDA [\"queue\", mint, validator]."`
	Initialized   bool   `json:"initialized" doc:"The queue exists on base and is delegated (owned by the delegation program)."`
}

// TransferQueueEnsureCrankRequest is the body of POST
// /v1/spl/transfer-queue/ensure-crank.
type TransferQueueEnsureCrankRequest struct {
	Mint      string `json:"mint" validate:"required,pubkey" doc:"Token mint."`
	Cluster   string `json:"cluster,omitempty" doc:"mainnet, devnet, mainnet-private, devnet-private, local, or a custom http(s) base RPC URL."`
	Validator string `json:"validator,omitempty" validate:"pubkey" doc:"Ephemeral rollup validator; resolved with getIdentity when omitted."`
}

// TransferQueueEnsureCrankResponse is the crank transaction that was sent.
type TransferQueueEnsureCrankResponse struct {
	Mint           string `json:"mint" doc:"Token mint."`
	Validator      string `json:"validator" doc:"Validator whose queue was cranked."`
	TransferQueue  string `json:"transferQueue" doc:"Transfer queue PDA."`
	CrankSignature string `json:"crankSignature" doc:"Signature of the ESPL 17 crank transaction."`
}

// BalanceRequest is the query of GET /v1/spl/balance and GET
// /v1/spl/private-balance.
type BalanceRequest struct {
	Address string `json:"address" validate:"required,pubkey" doc:"Wallet (token owner) address; off-curve owners are allowed."`
	Mint    string `json:"mint" validate:"required,pubkey" doc:"Token mint."`
	Cluster string `json:"cluster,omitempty" doc:"mainnet, devnet, mainnet-private, devnet-private, local, or a custom http(s) base RPC URL."`
}

// BalanceResponse is a token balance in base units.
type BalanceResponse struct {
	Address  string `json:"address" doc:"Wallet address."`
	Mint     string `json:"mint" doc:"Token mint."`
	ATA      string `json:"ata" doc:"The wallet's associated token account (on base, and as mirrored on the rollup)."`
	Location string `json:"location" doc:"base or ephemeral."`
	Balance  string `json:"balance" doc:"Balance in base units, as a decimal string."`
}

// Response kinds of the endpoints in this file.
const (
	KindUndelegateEphemeralATA = "undelegateEphemeralAta"
	KindStealthPool            = "stealthPool"
)

// Error codes of the endpoints in this file (payments-api.md §3.2).
const (
	CodeEphemeralEndpointUnresolved = "EPHEMERAL_ENDPOINT_UNRESOLVED"
	CodeValidatorMismatch           = "VALIDATOR_MISMATCH"
	CodeEATADelegatedElsewhere      = "EATA_DELEGATED_ELSEWHERE"
)
