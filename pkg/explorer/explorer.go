// Package explorer is the local explorer page of ferry serve (/explorer on
// the payments API's listener): both chains' slots and live throughput,
// the demo and pinned wallets' balances on base and rollup, every
// transaction explained as `ferry inspect` explains it, accounts decoded
// where ferry knows their layout, and the rollup's state (delegations,
// pending intents, the private transfer queues and settlements).
//
// The page is a client of ferry's public interfaces. Its JavaScript reads
// the chain nodes' JSON-RPC and subscribes to their PubSub websockets (the
// endpoints ferry serve prints), exactly as any dapp would. What the
// browser cannot do itself — run ferry's Go decoders and the explanation
// of `ferry inspect` and `ferry send` — the package serves as a few
// read-only JSON endpoints under /explorer/api/. They read the chain nodes
// through the same public JSON-RPC, anonymously, so they never see what
// the rollup hides from anonymous readers (private accounts answer
// -32090 there too, and the views say so); their inputs are length-checked
// and their answers bounded by Options.
//
// Everything the page needs (HTML, JavaScript, CSS) is embedded in the
// binary; it loads no third-party resource and its Content-Security-Policy
// allows only this origin and the chain nodes.
package explorer

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/api"
	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// Path is where the page is served on the API listener.
const Path = "/explorer"

// Paths of the page's assets and JSON endpoints.
const (
	PathScript  = Path + "/app.js"
	PathStyle   = Path + "/app.css"
	PathTx      = Path + "/api/tx"
	PathAccount = Path + "/api/account"
	PathRollup  = Path + "/api/rollup"
)

// Error codes of the JSON endpoints (in the API's error envelope).
const (
	CodeInvalidSignature = "INVALID_SIGNATURE"
	CodeInvalidAddress   = "INVALID_ADDRESS"
	CodeInvalidLayer     = "INVALID_LAYER"
	CodeNotFound         = "NOT_FOUND"
	CodeResponseTooLarge = "RESPONSE_TOO_LARGE"
	CodeChainUnavailable = "CHAIN_UNAVAILABLE"
)

// Layers.
const (
	LayerBase      = "base"
	LayerEphemeral = "ephemeral"
)

// Defaults of Options.
const (
	DefaultMaxResponseBytes  = 1 << 20
	DefaultMaxDelegations    = 200
	DefaultMaxQueues         = 8
	DefaultQueueHistory      = 50
	DefaultPayoutHistory     = 100
	DefaultSettlementHistory = 20
	DefaultAccountHistory    = 20
	DefaultMaxTokenAccounts  = 50
	DefaultMaxLogLines       = 300
	DefaultRequestTimeout    = 10 * time.Second
)

// Options bound what one request to the JSON endpoints may cost. Zero
// values mean the defaults. No endpoint ever scans all accounts or all
// blocks: accounts come from the owner-program index
// (getProgramAccounts, getTokenAccountsByOwner) and history from
// getSignaturesForAddress pages of these sizes.
type Options struct {
	// MaxResponseBytes is the largest JSON answer; a view that would be
	// larger is refused with 507 RESPONSE_TOO_LARGE (DefaultMaxResponseBytes,
	// 1 MiB). The lists below keep ordinary views far smaller.
	MaxResponseBytes int
	// MaxDelegations is how many delegated accounts the rollup view lists
	// (DefaultMaxDelegations, 200); it reports the total.
	MaxDelegations int
	// MaxQueues is how many transfer queues the rollup view follows
	// (DefaultMaxQueues, 8).
	MaxQueues int
	// QueueHistory is how many of a queue's latest rollup transactions
	// the rollup view reads for queued transfers (DefaultQueueHistory, 50).
	QueueHistory int
	// PayoutHistory is how many of a queue's latest base transactions it
	// reads for payouts (DefaultPayoutHistory, 100).
	PayoutHistory int
	// SettlementHistory is how many of the validator's latest base
	// transactions the rollup view lists (DefaultSettlementHistory, 20).
	SettlementHistory int
	// AccountHistory is how many signatures per layer the account view
	// lists (DefaultAccountHistory, 20).
	AccountHistory int
	// MaxTokenAccounts is how many token accounts per layer the account
	// view lists for a wallet (DefaultMaxTokenAccounts, 50).
	MaxTokenAccounts int
	// MaxLogLines is how many log lines the transaction view returns
	// (DefaultMaxLogLines, 300); it says how many were left out.
	MaxLogLines int
	// RequestTimeout bounds the chain reads of one request
	// (DefaultRequestTimeout, 10 s).
	RequestTimeout time.Duration
}

func (o Options) normalized() Options {
	def := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	def(&o.MaxResponseBytes, DefaultMaxResponseBytes)
	def(&o.MaxDelegations, DefaultMaxDelegations)
	def(&o.MaxQueues, DefaultMaxQueues)
	def(&o.QueueHistory, DefaultQueueHistory)
	def(&o.PayoutHistory, DefaultPayoutHistory)
	def(&o.SettlementHistory, DefaultSettlementHistory)
	def(&o.AccountHistory, DefaultAccountHistory)
	def(&o.MaxTokenAccounts, DefaultMaxTokenAccounts)
	def(&o.MaxLogLines, DefaultMaxLogLines)
	o.QueueHistory = min(o.QueueHistory, chainclient.MaxSignaturesForLimit)
	o.PayoutHistory = min(o.PayoutHistory, chainclient.MaxSignaturesForLimit)
	o.SettlementHistory = min(o.SettlementHistory, chainclient.MaxSignaturesForLimit)
	o.AccountHistory = min(o.AccountHistory, chainclient.MaxSignaturesForLimit)
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	return o
}

// Endpoints are the public URLs the page talks to (ferry serve's address
// file keys).
type Endpoints struct {
	RPC         string `json:"rpc"`
	RPCWS       string `json:"rpcWs"`
	Ephemeral   string `json:"ephemeral"`
	EphemeralWS string `json:"ephemeralWs"`
	Router      string `json:"router,omitempty"`
}

// Wallet is a named address the overview lists (the demo wallets). Only
// public keys: keypair files never reach the page.
type Wallet struct {
	Name    string `json:"name"`
	Address string `json:"address"`
}

// Config configures the explorer.
type Config struct {
	// Endpoints are the chain nodes' public URLs, given to the page.
	Endpoints Endpoints
	// Base and Ephemeral read the chain nodes for the JSON endpoints,
	// without a token (ferry serve points them in-process at the nodes'
	// public JSON-RPC handlers).
	Base, Ephemeral *chainclient.Client
	// Validator is the local rollup's validator identity.
	Validator solana.PublicKey
	// Mint is the demo mint (zero: none) and Decimals its decimals.
	Mint     solana.PublicKey
	Decimals uint8
	// Wallets are listed on the overview (the demo wallets).
	Wallets []Wallet
	Options Options
	Logger  *slog.Logger
}

// Explorer serves the page and its JSON endpoints.
type Explorer struct {
	cfg  Config
	opts Options
	log  *slog.Logger
	page []byte
	csp  string
}

//go:embed assets
var assets embed.FS

var pageTemplate = template.Must(template.ParseFS(assets, "assets/index.html"))

// pageConfig is what the page's script reads from the document.
type pageConfig struct {
	Endpoints Endpoints `json:"endpoints"`
	Validator string    `json:"validator"`
	Mint      string    `json:"mint,omitempty"`
	Decimals  uint8     `json:"decimals"`
	Wallets   []Wallet  `json:"wallets"`
	// Programs are the well-known addresses the page subscribes to.
	Programs struct {
		Token        string `json:"token"`
		Token2022    string `json:"token2022"`
		Delegation   string `json:"delegation"`
		MagicContext string `json:"magicContext"`
	} `json:"programs"`
	API struct {
		Tx      string `json:"tx"`
		Account string `json:"account"`
		Rollup  string `json:"rollup"`
	} `json:"api"`
}

// New returns the explorer of cfg. Base and Ephemeral are required.
func New(cfg Config) (*Explorer, error) {
	if cfg.Base == nil || cfg.Ephemeral == nil {
		return nil, errors.New("start explorer: the base and ephemeral chain clients are required")
	}
	e := &Explorer{cfg: cfg, opts: cfg.Options.normalized(), log: cfg.Logger}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	pc := pageConfig{Endpoints: cfg.Endpoints, Validator: cfg.Validator.String(), Decimals: cfg.Decimals, Wallets: cfg.Wallets}
	if pc.Wallets == nil {
		pc.Wallets = []Wallet{}
	}
	if !cfg.Mint.IsZero() {
		pc.Mint = cfg.Mint.String()
	}
	pc.API.Tx, pc.API.Account, pc.API.Rollup = PathTx, PathAccount, PathRollup
	pc.Programs.Token, pc.Programs.Token2022 = spl.TokenProgramID.String(), spl.Token2022ProgramID.String()
	pc.Programs.Delegation, pc.Programs.MagicContext = espl.DelegationProgramID.String(), espl.MagicContextID.String()
	cj, err := json.Marshal(pc)
	if err != nil {
		return nil, fmt.Errorf("start explorer: %w", err)
	}
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, map[string]any{
		"Config": string(cj), "Wallets": pc.Wallets, "Endpoints": cfg.Endpoints, "Validator": pc.Validator, "Mint": pc.Mint,
		"Script": PathScript, "Style": PathStyle,
	}); err != nil {
		return nil, fmt.Errorf("start explorer: render page: %w", err)
	}
	e.page = b.Bytes()
	e.csp = contentSecurityPolicy(cfg.Endpoints)
	return e, nil
}

// contentSecurityPolicy allows scripts and styles from this origin only
// (no inline script), and connections to this origin and the chain nodes
// (their HTTP and websocket URLs, including the upgrade on the RPC ports).
func contentSecurityPolicy(ep Endpoints) string {
	connect := []string{"'self'"}
	seen := map[string]bool{}
	add := func(raw string) {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return
		}
		for _, scheme := range []string{u.Scheme, wsScheme(u.Scheme)} {
			o := scheme + "://" + u.Host
			if scheme != "" && !seen[o] {
				seen[o] = true
				connect = append(connect, o)
			}
		}
	}
	for _, u := range []string{ep.RPC, ep.RPCWS, ep.Ephemeral, ep.EphemeralWS, ep.Router} {
		add(u)
	}
	return "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src " +
		strings.Join(connect, " ") + "; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
}

// wsScheme is the websocket scheme of an HTTP scheme and back.
func wsScheme(s string) string {
	switch s {
	case "http":
		return "ws"
	case "https":
		return "wss"
	case "ws":
		return "http"
	case "wss":
		return "https"
	}
	return ""
}

// Mount registers the page and its endpoints on the payments API server
// (GET, and HEAD), behind its middleware (request ids, logging, panics),
// hidden from /doc.
func (e *Explorer) Mount(s *api.Server) {
	get := func(path, id, summary string, h http.HandlerFunc) {
		s.Handle(api.Operation{Method: http.MethodGet, Path: path, ID: id, Tag: "Explorer", Summary: summary}, h, true)
	}
	get(Path, "explorerPage", "The explorer page", e.servePage)
	get(Path+"/", "explorerPageSlash", "The explorer page", e.servePage)
	get(PathScript, "explorerScript", "The explorer's script", e.serveAsset("assets/app.js", "text/javascript; charset=utf-8"))
	get(PathStyle, "explorerStyle", "The explorer's style sheet", e.serveAsset("assets/app.css", "text/css; charset=utf-8"))
	get(PathTx, "explorerTx", "A transaction explained", e.serveJSON(e.txView))
	get(PathAccount, "explorerAccount", "An account decoded", e.serveJSON(e.accountView))
	get(PathRollup, "explorerRollup", "The rollup's state", e.serveJSON(e.rollupView))
}

// ServeHTTP serves the explorer on its own (tests, or another mux).
func (e *Explorer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, apierr.New(http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "Method Not Allowed"))
		return
	}
	switch r.URL.Path {
	case Path, Path + "/":
		e.servePage(w, r)
	case PathScript:
		e.serveAsset("assets/app.js", "text/javascript; charset=utf-8")(w, r)
	case PathStyle:
		e.serveAsset("assets/app.css", "text/css; charset=utf-8")(w, r)
	case PathTx:
		e.serveJSON(e.txView)(w, r)
	case PathAccount:
		e.serveJSON(e.accountView)(w, r)
	case PathRollup:
		e.serveJSON(e.rollupView)(w, r)
	default:
		writeError(w, apierr.New(http.StatusNotFound, apierr.CodeNotFound, "Route not found"))
	}
}

func securityHeaders(h http.Header) {
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
}

func (e *Explorer) servePage(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	securityHeaders(h)
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", e.csp)
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Length", strconv.Itoa(len(e.page)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(e.page)
	}
}

func (e *Explorer) serveAsset(name, contentType string) http.HandlerFunc {
	b, err := assets.ReadFile(name)
	if err != nil {
		panic("explorer: missing embedded asset " + name) // a build defect, caught by every test
	}
	return func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		securityHeaders(h)
		h.Set("Content-Type", contentType)
		h.Set("Cache-Control", "no-cache")
		h.Set("Content-Length", strconv.Itoa(len(b)))
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			w.Write(b)
		}
	}
}

// serveJSON answers a view as JSON within the response budget.
func (e *Explorer) serveJSON(view func(ctx context.Context, q url.Values) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		securityHeaders(w.Header())
		w.Header().Set("Cache-Control", "no-store")
		if len(r.URL.RawQuery) > maxQueryBytes {
			writeError(w, apierr.Newf(http.StatusRequestURITooLong, "QUERY_TOO_LONG", "query of %d bytes; at most %d", len(r.URL.RawQuery), maxQueryBytes))
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), e.opts.RequestTimeout)
		defer cancel()
		v, err := view(ctx, r.URL.Query())
		if err != nil {
			ae := apierr.As(err)
			if ae.Status >= 500 {
				e.log.Warn("explorer view failed", "path", r.URL.Path, "err", err)
			}
			writeError(w, ae)
			return
		}
		b, err := json.Marshal(v)
		if err != nil {
			writeError(w, apierr.Internal(err))
			return
		}
		if len(b) > e.opts.MaxResponseBytes {
			writeError(w, apierr.Newf(http.StatusInsufficientStorage, CodeResponseTooLarge,
				"the view is %d bytes, over the explorer's %d-byte budget (explorer.Options.MaxResponseBytes)", len(b), e.opts.MaxResponseBytes))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			w.Write(b)
		}
	}
}

// maxQueryBytes bounds a JSON endpoint's query string: a signature, an
// address and a layer name fit many times over.
const maxQueryBytes = 512

func writeError(w http.ResponseWriter, e *apierr.Error) {
	b := e.Body()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(e.Status)
	w.Write(b)
}

// chainError reports a failed read of a chain node.
func chainError(layer string, err error) *apierr.Error {
	if ae, ok := err.(*apierr.Error); ok {
		return ae
	}
	return apierr.Newf(http.StatusBadGateway, CodeChainUnavailable, "reading the %s node: %s", layer, apierr.RedactURLs(err.Error())).Wrap(err)
}

// parseSignature reads a base58 transaction signature, length-checked
// before decoding.
func parseSignature(s string) (solana.Signature, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return solana.Signature{}, apierr.BadRequest(CodeInvalidSignature, "signature is required")
	}
	if len(s) > 88 {
		return solana.Signature{}, apierr.BadRequest(CodeInvalidSignature, "signature is not a base58 transaction signature (too long)")
	}
	sig, err := solana.SignatureFromBase58(s)
	if err != nil {
		return solana.Signature{}, apierr.BadRequest(CodeInvalidSignature, "signature is not a base58 transaction signature")
	}
	return sig, nil
}

// parseAddress reads a base58 public key, length-checked before decoding.
func parseAddress(s string) (solana.PublicKey, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return solana.PublicKey{}, apierr.BadRequest(CodeInvalidAddress, "address is required")
	}
	if len(s) > 44 {
		return solana.PublicKey{}, apierr.BadRequest(CodeInvalidAddress, "address is not a base58 public key (too long)")
	}
	k, err := solana.PublicKeyFromBase58(s)
	if err != nil {
		return solana.PublicKey{}, apierr.BadRequest(CodeInvalidAddress, "address is not a base58 public key")
	}
	return k, nil
}

// parseLayer reads an optional layer name ("" when absent).
func parseLayer(s string) (string, error) {
	switch s = strings.TrimSpace(s); s {
	case "", LayerBase, LayerEphemeral:
		return s, nil
	}
	return "", apierr.BadRequest(CodeInvalidLayer, `layer must be "base" or "ephemeral"`)
}

func (e *Explorer) client(layer string) *chainclient.Client {
	if layer == LayerEphemeral {
		return e.cfg.Ephemeral
	}
	return e.cfg.Base
}
