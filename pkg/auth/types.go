package auth

// ChallengeRequest is the query of GET /v1/spl/challenge.
type ChallengeRequest struct {
	Pubkey  string `json:"pubkey" validate:"required,pubkey" doc:"Wallet that will sign the challenge."`
	Cluster string `json:"cluster,omitempty" doc:"Cluster whose rollup's auth service issues the challenge (this server on the local cluster, and for a rollup without one)."`
	Mock    *bool  `json:"mock,omitempty" default:"false" doc:"Legacy: return the fixed mock challenge without asking any auth service."`
}

// ChallengeResponse is the challenge to sign.
type ChallengeResponse struct {
	Challenge string `json:"challenge" doc:"Text to sign, as UTF-8 bytes, with the wallet's ed25519 key."`
	Error     string `json:"error,omitempty" doc:"Never set on success."`
}

// LoginRequest is the body of POST /v1/spl/login.
type LoginRequest struct {
	Pubkey    string `json:"pubkey" validate:"required,pubkey" doc:"Wallet that signed the challenge."`
	Challenge string `json:"challenge" validate:"required,minlen=1" doc:"The challenge exactly as received."`
	Signature string `json:"signature" validate:"required,minlen=1" doc:"Base58 ed25519 signature of the challenge's UTF-8 bytes."`
	Cluster   string `json:"cluster,omitempty" doc:"The cluster used for the challenge."`
	Mock      *bool  `json:"mock,omitempty" default:"false" doc:"Legacy: return the fixed mock token without checking anything."`
}

// LoginResponse carries the bearer token.
type LoginResponse struct {
	Token     string `json:"token" doc:"Bearer token bound to the wallet: <pubkey>.<token>."`
	ExpiresAt *int64 `json:"expiresAt,omitempty" doc:"Expiry in milliseconds since the Unix epoch, when known."`
	Error     string `json:"error,omitempty" doc:"Never set on success."`
}

// Mock values (payments-api.md §4.2).
const (
	MockToken           = "mock-auth-token"
	LegacyMockChallenge = "mock-challenge"
)
