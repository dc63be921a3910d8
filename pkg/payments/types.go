package payments

// TransferRequest is the body of POST /v1/spl/transfer, the input of the MCP
// tool spl.transfer and the flags of `ferry transfer`.
//
// Per ferry's interface specification, visibility, fromBalance and
// toBalance are required (the hosted API defaults them) and amount is at
// least 1.
type TransferRequest struct {
	From               string `json:"from" validate:"required,pubkey" doc:"Sender wallet (the token owner, not a token account)."`
	To                 string `json:"to" validate:"required,minlen=1,maxbytes=255" doc:"Recipient wallet, or an initialized stealth handle (private base-to-base only)."`
	Mint               string `json:"mint" validate:"required,pubkey" doc:"Token mint."`
	Amount             int64  `json:"amount" validate:"required,min=1,safe" doc:"Amount in base units (a JSON integer)."`
	Visibility         string `json:"visibility" validate:"required,enum=public|private" doc:"public: a plain token transfer; private: encrypted destination, delays and split payouts."`
	FromBalance        string `json:"fromBalance" validate:"required,enum=base|ephemeral" doc:"Balance the tokens leave: the base layer or the ephemeral rollup."`
	ToBalance          string `json:"toBalance" validate:"required,enum=base|ephemeral" doc:"Balance the tokens arrive in."`
	Cluster            string `json:"cluster,omitempty" doc:"mainnet, devnet, mainnet-private, devnet-private, local, or a custom http(s) base RPC URL."`
	Validator          string `json:"validator,omitempty" validate:"pubkey" doc:"Ephemeral rollup validator; resolved with getIdentity when omitted."`
	InitIfMissing      *bool  `json:"initIfMissing,omitempty" default:"false" doc:"Private base-to-ephemeral: create the recipient's ATA, ephemeral ATA, permission and delegation."`
	InitAtasIfMissing  *bool  `json:"initAtasIfMissing,omitempty" default:"false" doc:"From the base layer: idempotently create the sender's associated token account."`
	InitVaultIfMissing *bool  `json:"initVaultIfMissing,omitempty" default:"false" doc:"Create the global vault (and, for private routes, the transfer queue) if missing."`
	Memo               string `json:"memo,omitempty" doc:"UTF-8 text appended as a final Memo instruction."`
	MinDelayMs         string `json:"minDelayMs,omitempty" validate:"digits" default:"0" doc:"Private only: minimum payout delay in milliseconds (digit string)."`
	MaxDelayMs         string `json:"maxDelayMs,omitempty" validate:"digits" doc:"Private only: maximum payout delay in milliseconds (digit string, at most 600000); defaults to minDelayMs."`
	ClientRefID        string `json:"clientRefId,omitempty" validate:"digits" doc:"Private only: u64 reference (digit string) carried, encrypted, with each payout."`
	Split              *int64 `json:"split,omitempty" validate:"min=1,max=15" default:"1" doc:"Private only: number of payout pieces (1-15)."`
	ExactOut           *bool  `json:"exactOut,omitempty" default:"true" doc:"true: the recipient gets amount and fees are paid on top; false: fees come out of amount."`
	PlatformFeeBps     *int64 `json:"platformFeeBps,omitempty" validate:"min=0,max=10000" default:"0" doc:"Platform fee in basis points (base-layer sources only)."`
	PlatformFeeAccount string `json:"platformFeeAccount,omitempty" validate:"pubkey" doc:"Token account receiving the platform fee; required when platformFeeBps > 0."`
	Gasless            *bool  `json:"gasless,omitempty" default:"false" doc:"Let the server's sponsor pay network fees (approved stablecoins only; needs a configured sponsor)."`
	Legacy             *bool  `json:"legacy,omitempty" default:"false" doc:"Accepted for compatibility; ferry always builds legacy transactions."`
}

// DepositRequest is the body of POST /v1/spl/deposit: move tokens from the
// owner's base-layer ATA into their ephemeral-rollup balance.
type DepositRequest struct {
	Owner              string `json:"owner" validate:"required,pubkey" doc:"Token owner; also the fee payer."`
	Amount             int64  `json:"amount" validate:"required,min=1,safe" doc:"Amount in base units."`
	Mint               string `json:"mint,omitempty" validate:"pubkey" doc:"Token mint; defaults to the cluster's USDC (assumed SPL Token)."`
	Cluster            string `json:"cluster,omitempty" doc:"mainnet, devnet, mainnet-private, devnet-private, local, or a custom http(s) base RPC URL."`
	Validator          string `json:"validator,omitempty" validate:"pubkey" doc:"Ephemeral rollup validator; resolved with getIdentity when omitted."`
	InitIfMissing      *bool  `json:"initIfMissing,omitempty" default:"true" doc:"Initialize the owner's ephemeral ATA."`
	InitVaultIfMissing *bool  `json:"initVaultIfMissing,omitempty" default:"false" doc:"Initialize the global vault and vault ATA."`
	InitAtasIfMissing  *bool  `json:"initAtasIfMissing,omitempty" default:"false" doc:"Idempotently create the owner's associated token account."`
	Idempotent         *bool  `json:"idempotent,omitempty" default:"true" doc:"false selects the legacy deposit path (ESPL 2 + delegate)."`
	Private            *bool  `json:"private,omitempty" default:"true" doc:"Create the ephemeral ATA permission (ESPL 6)."`
}

// WithdrawRequest is the body of POST /v1/spl/withdraw: move tokens from the
// owner's ephemeral-rollup balance back to their base-layer ATA.
type WithdrawRequest struct {
	Owner             string `json:"owner" validate:"required,pubkey" doc:"Token owner; also the fee payer."`
	Mint              string `json:"mint" validate:"required,pubkey" doc:"Token mint."`
	Amount            int64  `json:"amount" validate:"required,min=1,safe" doc:"Amount in base units."`
	Cluster           string `json:"cluster,omitempty" doc:"mainnet, devnet, mainnet-private, devnet-private, local, or a custom http(s) base RPC URL."`
	Validator         string `json:"validator,omitempty" validate:"pubkey" doc:"Ephemeral rollup validator; resolved with getIdentity when omitted."`
	InitIfMissing     *bool  `json:"initIfMissing,omitempty" default:"true" doc:"Initialize the owner's ephemeral ATA if missing."`
	InitAtasIfMissing *bool  `json:"initAtasIfMissing,omitempty" default:"false" doc:"Idempotently create the owner's associated token account."`
	EscrowIndex       *int64 `json:"escrowIndex,omitempty" validate:"min=0,max=255" doc:"Accepted for compatibility; the shuttle path ignores it."`
	Idempotent        *bool  `json:"idempotent,omitempty" default:"true" doc:"false selects the legacy withdraw path (ESPL 3; undelegate first)."`
}

// InitializeMintRequest is the body of POST /v1/spl/initialize-mint: the
// one-time setup of a mint's transfer queue, rent PDA and vault for a
// validator.
type InitializeMintRequest struct {
	Payer     string `json:"payer" validate:"required,pubkey" doc:"Fee payer and funder of the setup accounts."`
	Mint      string `json:"mint" validate:"required,pubkey" doc:"Token mint."`
	Cluster   string `json:"cluster,omitempty" doc:"mainnet, devnet, mainnet-private, devnet-private, local, or a custom http(s) base RPC URL."`
	Validator string `json:"validator,omitempty" validate:"pubkey" doc:"Ephemeral rollup validator; resolved with getIdentity when omitted."`
}

// Fees are the totals a transfer charges, as decimal strings.
type Fees struct {
	Lamports string `json:"lamports" doc:"Lamports charged on top of network fees (2039280 for private base-to-base setup)."`
	Tokens   string `json:"tokens" doc:"Token base units charged: privacy fee + platform fee + relay fee."`
}

// UnsignedTransaction is the build response (UnsignedTransactionResponse):
// an unsigned transaction the caller signs and submits to SendTo.
type UnsignedTransaction struct {
	Kind                 string   `json:"kind" doc:"deposit, withdraw, transfer, initializeMint, undelegateEphemeralAta or stealthPool."`
	Version              string   `json:"version" doc:"Transaction format: legacy."`
	TransactionBase64    string   `json:"transactionBase64" doc:"Unsigned wire transaction (signatures zeroed), base64."`
	SendTo               string   `json:"sendTo" doc:"Where to submit: base or ephemeral."`
	SendRPCEndpoint      string   `json:"sendRpcEndpoint,omitempty" doc:"Exact ephemeral RPC to submit to (ephemeral sends)."`
	From                 string   `json:"from,omitempty" doc:"Transfers only: the request's fromBalance."`
	RecentBlockhash      string   `json:"recentBlockhash" doc:"Blockhash the transaction uses."`
	LastValidBlockHeight uint64   `json:"lastValidBlockHeight" doc:"Last block height at which the transaction is valid."`
	InstructionCount     int      `json:"instructionCount" doc:"Number of instructions."`
	RequiredSigners      []string `json:"requiredSigners" doc:"Keys that must sign: fee payer first, then every other signer."`
	Validator            string   `json:"validator,omitempty" doc:"Validator the route uses."`
	Fees                 *Fees    `json:"fees,omitempty" doc:"Transfers only: fees charged."`
}

// InitializeMintResponse is UnsignedTransaction plus the accounts it sets up.
type InitializeMintResponse struct {
	UnsignedTransaction
	TransferQueue string `json:"transferQueue" doc:"Transfer queue PDA [\"queue\", mint, validator]."`
	RentPDA       string `json:"rentPda" doc:"Global rent PDA [\"rent\"]."`
}

// Layer names used by sendTo, fromBalance and toBalance.
const (
	Base      = "base"
	Ephemeral = "ephemeral"
)

// Visibility values.
const (
	Public  = "public"
	Private = "private"
)

// Response kinds.
const (
	KindDeposit        = "deposit"
	KindWithdraw       = "withdraw"
	KindTransfer       = "transfer"
	KindInitializeMint = "initializeMint"
)

func boolOr(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}
