package mcpserver

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"reflect"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ferry-sh/ferry/pkg/api"
	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/devchain"
	"github.com/ferry-sh/ferry/pkg/inputlimit"
)

// Paths served by the handler.
const (
	// Path is the MCP endpoint.
	Path = "/mcp"
	// WellKnownPath is the discovery document.
	WellKnownPath = "/.well-known/mcp.json"
)

// The hosted API's server identity (payments-api.md §5.15), which ferry
// reports by default so that clients written for it see the same server.
const (
	ServerName    = "spl-private-payments-api"
	ServerVersion = "0.1.0"
	WebsiteURL    = "https://www.magicblock.xyz/"
)

// Defaults of the limits in Config.
const (
	// DefaultMaxBodyBytes bounds a POST /mcp body.
	DefaultMaxBodyBytes = 1 << 20
	// DefaultMaxBatch bounds the messages of a JSON-RPC batch. Only
	// protocol version 2025-03-26 has batches (2025-06-18 removed them,
	// and the SDK refuses them under later versions); a client batches an
	// initialize with its notification or a few tool calls, so 32 leaves
	// room while bounding the work one POST can ask for.
	DefaultMaxBatch = 32
	// DefaultMaxResponseBytes bounds the answer to one POST: tool results
	// are REST responses of a few KiB, tools/list about 30 KiB.
	DefaultMaxResponseBytes = 8 << 20
)

// Config configures the MCP endpoint. Service and Clusters are required.
type Config struct {
	// Service runs the payments operations, exactly as for the REST API
	// (api.Server.Service).
	Service *api.Service
	// Clusters resolves the cluster argument of the chain tools and
	// routes.list: the same resolver the Service was built with.
	Clusters *api.Clusters
	// Logger receives the causes of 5xx tool errors (default: discard).
	Logger *slog.Logger
	// Origin returns the scheme and host ("http://127.0.0.1:8080") that the
	// GET /mcp and discovery documents put in front of their paths. The
	// default uses the request: https when it came over TLS, else http,
	// and its Host header.
	Origin func(r *http.Request) string
	// Implementation is the serverInfo of initialize and server/discover;
	// nil means the hosted API's (ServerName, ServerVersion, WebsiteURL).
	Implementation *mcp.Implementation
	// MaxBodyBytes bounds a POST /mcp body (default DefaultMaxBodyBytes);
	// larger bodies get 413.
	MaxBodyBytes int64
	// MaxBatch bounds the messages of a JSON-RPC batch (DefaultMaxBatch);
	// a larger batch gets 400 -32600 before the SDK decodes it.
	MaxBatch int
	// MaxJSONDepth bounds how deep a body may nest
	// (inputlimit.DefaultMaxJSONDepth); deeper bodies get 400 -32700
	// before the SDK decodes them.
	MaxJSONDepth int
	// MaxResponseBytes bounds the answer to one POST
	// (DefaultMaxResponseBytes); a larger answer is replaced by a -32051
	// "Response too large" error.
	MaxResponseBytes int64
	// Dev, if set, adds the development tools (dev.*): the cheatcodes and
	// rollup controls of ferry serve's local chain. A gateway has none.
	Dev *devchain.Chain
	// DisableLocalhostProtection turns off the SDK's DNS-rebinding check
	// (a request that reached a loopback listener with a non-loopback Host
	// header gets 403). Only for a loopback listener behind a proxy that
	// rewrites Host.
	DisableLocalhostProtection bool
}

// Handler serves /mcp and /.well-known/mcp.json. It is an http.Handler that
// can run on its own or be mounted on the payments API (Mount).
type Handler struct {
	svc      *api.Service
	clusters *api.Clusters
	dev      *devchain.Chain
	log      *slog.Logger
	origin   func(*http.Request) string
	impl     mcp.Implementation
	tools    []*tool
	server   *mcp.Server
	sdk      http.Handler

	maxBody, maxResponse int64
	maxBatch, maxDepth   int
}

// New returns the MCP handler of cfg.
func New(cfg Config) (*Handler, error) {
	if cfg.Service == nil {
		return nil, errors.New("create MCP endpoint: Config.Service is required")
	}
	if cfg.Clusters == nil {
		return nil, errors.New("create MCP endpoint: Config.Clusters is required")
	}
	h := &Handler{svc: cfg.Service, clusters: cfg.Clusters, dev: cfg.Dev, log: cfg.Logger, origin: cfg.Origin}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.origin == nil {
		h.origin = requestOrigin
	}
	h.impl = mcp.Implementation{Name: ServerName, Version: ServerVersion, WebsiteURL: WebsiteURL}
	if cfg.Implementation != nil {
		h.impl = *cfg.Implementation
	}
	// A non-nil Capabilities drops the SDK's default "logging" capability:
	// initialize then answers {"capabilities":{"tools":{"listChanged":true}}},
	// as the hosted API does (the tools capability is inferred).
	sdkLog := slog.New(warnAndAbove{h.log.Handler()}) // the SDK logs every stateless "session" at info
	h.server = mcp.NewServer(&h.impl, &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{}, Logger: sdkLog})
	h.tools = h.buildTools()
	for _, t := range h.tools {
		h.server.AddTool(t.mcpTool(), h.toolHandler(t))
	}
	maxBody := cfg.MaxBodyBytes
	if maxBody <= 0 {
		maxBody = DefaultMaxBodyBytes
	}
	h.maxBody, h.maxBatch, h.maxDepth, h.maxResponse = maxBody, cfg.MaxBatch, cfg.MaxJSONDepth, cfg.MaxResponseBytes
	if h.maxBatch <= 0 {
		h.maxBatch = DefaultMaxBatch
	}
	if h.maxDepth <= 0 {
		h.maxDepth = inputlimit.DefaultMaxJSONDepth
	}
	if h.maxResponse <= 0 {
		h.maxResponse = DefaultMaxResponseBytes
	}
	h.sdk = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return h.server }, &mcp.StreamableHTTPOptions{
		Stateless:                  true,
		JSONResponse:               true,
		Logger:                     sdkLog,
		MaxRequestBodyBytes:        maxBody,
		DisableLocalhostProtection: cfg.DisableLocalhostProtection,
	})
	return h, nil
}

// warnAndAbove passes only warnings and errors to its handler.
type warnAndAbove struct{ slog.Handler }

func (w warnAndAbove) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && w.Handler.Enabled(ctx, l)
}

func (w warnAndAbove) WithAttrs(as []slog.Attr) slog.Handler {
	return warnAndAbove{w.Handler.WithAttrs(as)}
}
func (w warnAndAbove) WithGroup(name string) slog.Handler {
	return warnAndAbove{w.Handler.WithGroup(name)}
}

// requestOrigin is the default Config.Origin.
func requestOrigin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// ServeHTTP implements http.Handler for Path and WellKnownPath; any other
// path is the API's 404 NOT_FOUND.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case Path:
		switch r.Method {
		case http.MethodPost:
			h.servePOST(w, r)
		case http.MethodGet, http.MethodHead:
			if acceptsEventStream(r) {
				methodNotAllowed(w)
				return
			}
			h.writeDocument(w, r, h.infoDocument(h.origin(r)))
		default:
			methodNotAllowed(w)
		}
	case WellKnownPath:
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
			return
		}
		h.writeDocument(w, r, h.discoveryDocument(h.origin(r)))
	default:
		writeAPIError(w, apierr.New(http.StatusNotFound, apierr.CodeNotFound, "Route not found"))
	}
}

// methodNotAllowed is the hosted API's answer to GET (with Accept:
// text/event-stream) and DELETE on /mcp: no standalone SSE stream, no
// sessions to end.
func methodNotAllowed(w http.ResponseWriter) {
	w.Header().Set("Allow", "POST")
	http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
}

func acceptsEventStream(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			mt, _, _ := strings.Cut(part, ";")
			if strings.EqualFold(strings.TrimSpace(mt), "text/event-stream") {
				return true
			}
		}
	}
	return false
}

// Mount registers the handler on the payments API server, behind its
// middleware (request ids, logging, CORS): POST /mcp, documented in /doc
// under the MCP tag, and GET /mcp, DELETE /mcp and GET
// /.well-known/mcp.json, which the hosted API leaves out of /doc. Call it
// before serving.
func (h *Handler) Mount(s *api.Server) {
	s.Handle(api.Operation{
		Method: http.MethodPost, Path: Path, ID: "mcp", Tag: "MCP",
		Summary: "MCP endpoint (stateless Streamable HTTP, JSON responses)",
		Description: "JSON-RPC 2.0 Model Context Protocol endpoint: initialize (protocol versions 2025-03-26 to 2025-11-25) or " +
			"server/discover (2026-07-28, with Mcp-Method/Mcp-Name headers), tools/list and tools/call. No sessions; notifications " +
			"get 202. Tools: " + strings.Join(h.ToolNames(), ", ") + ". A tool result carries a short text and, in structuredContent, " +
			"the REST response; a failed call is a result with isError true whose content holds the REST error body. " +
			"Transport errors are JSON-RPC errors: 400 -32700 Parse error (also for bodies nested deeper than 127 levels), " +
			"400 -32600 for batches (protocol 2025-03-26 only) of more than 32 messages, 415 -32000 Unsupported Media Type.",
		Request: reflect.TypeFor[api.MCPRequest](), Response: reflect.TypeFor[api.MCPResponse](),
		ErrorBodies: map[int]api.ErrorSchema{
			http.StatusBadRequest:            {Type: reflect.TypeFor[api.MCPResponse](), Example: jsonRPCError(-32700, "Parse error")},
			http.StatusRequestEntityTooLarge: {Type: reflect.TypeFor[api.MCPResponse](), Example: jsonRPCError(CodeServerError, "request body exceeds 1048576 bytes")},
			http.StatusUnsupportedMediaType: {Type: reflect.TypeFor[api.MCPResponse](),
				Example: jsonRPCError(-32000, "Unsupported Media Type: Content-Type must be application/json")},
			http.StatusInternalServerError: {Type: reflect.TypeFor[api.MCPResponse](), Example: jsonRPCError(-32603, "Internal server error")},
		},
	}, h, false)
	s.Handle(api.Operation{Method: http.MethodGet, Path: Path, ID: "mcpInfo", Tag: "MCP", Summary: "MCP endpoint information"}, h, true)
	s.Handle(api.Operation{Method: http.MethodDelete, Path: Path, ID: "mcpDelete", Tag: "MCP", Summary: "405: the endpoint has no sessions"}, h, true)
	s.Handle(api.Operation{Method: http.MethodGet, Path: WellKnownPath, ID: "mcpDiscovery", Tag: "MCP", Summary: "MCP discovery document"}, h, true)
}

// jsonRPCError is a documented JSON-RPC error answer.
func jsonRPCError(code int, message string) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": message}}
}

// ToolNames lists the tools, in tools/list order.
func (h *Handler) ToolNames() []string {
	names := make([]string, len(h.tools))
	for i, t := range h.tools {
		names[i] = t.name
	}
	return names
}

// ToolSummary is one tool in the GET /mcp and discovery documents.
type ToolSummary struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

func (h *Handler) summaries() []ToolSummary {
	out := make([]ToolSummary, len(h.tools))
	for i, t := range h.tools {
		out[i] = ToolSummary{Name: t.name, Description: t.description}
	}
	return out
}

// InfoDocument is the body of GET /mcp.
type InfoDocument struct {
	Name      string        `json:"name"`
	Version   string        `json:"version"`
	Transport string        `json:"transport"`
	Mode      string        `json:"mode"`
	Endpoint  string        `json:"endpoint"`
	Discovery string        `json:"discovery"`
	Methods   []string      `json:"methods"`
	Inspector InspectorInfo `json:"inspector"`
	Tools     []ToolSummary `json:"tools"`
}

// InspectorInfo tells the MCP Inspector how to connect.
type InspectorInfo struct {
	Transport string `json:"transport"`
	URL       string `json:"url"`
}

func (h *Handler) infoDocument(origin string) *InfoDocument {
	return &InfoDocument{
		Name: h.impl.Name, Version: h.impl.Version, Transport: "streamable-http", Mode: "stateless-json-response",
		Endpoint: origin + Path, Discovery: origin + WellKnownPath, Methods: []string{http.MethodPost},
		Inspector: InspectorInfo{Transport: "Streamable HTTP", URL: origin + Path},
		Tools:     h.summaries(),
	}
}

// DiscoveryDocument is the body of GET /.well-known/mcp.json.
type DiscoveryDocument struct {
	Name             string             `json:"name"`
	Version          string             `json:"version"`
	Description      string             `json:"description"`
	WebsiteURL       string             `json:"websiteUrl,omitempty"`
	DocumentationURL string             `json:"documentationUrl"`
	OpenAPIURL       string             `json:"openApiUrl"`
	Transport        DiscoveryTransport `json:"transport"`
	Capabilities     map[string]bool    `json:"capabilities"`
	Tools            []ToolSummary      `json:"tools"`
}

// DiscoveryTransport is the transport section of DiscoveryDocument.
type DiscoveryTransport struct {
	Type         string   `json:"type"`
	Endpoint     string   `json:"endpoint"`
	Stateless    bool     `json:"stateless"`
	JSONResponse bool     `json:"jsonResponse"`
	Methods      []string `json:"methods"`
}

// discoveryDescription extends the hosted text with ferry's extra tools.
const discoveryDescription = "Stateless MCP server for building SPL token transactions and reading base or private balances; " +
	"ferry also inspects and sends transactions, lists rollup routes and reads chain state."

func (h *Handler) discoveryDocument(origin string) *DiscoveryDocument {
	return &DiscoveryDocument{
		Name: h.impl.Name, Version: h.impl.Version, Description: discoveryDescription, WebsiteURL: h.impl.WebsiteURL,
		DocumentationURL: origin + "/reference", OpenAPIURL: origin + "/doc",
		Transport: DiscoveryTransport{Type: "streamable-http", Endpoint: origin + Path, Stateless: true, JSONResponse: true,
			Methods: []string{http.MethodPost}},
		Capabilities: map[string]bool{"tools": true, "resources": false, "prompts": false},
		Tools:        h.summaries(),
	}
}

func (h *Handler) writeDocument(w http.ResponseWriter, r *http.Request, v any) {
	body, err := encodeJSON(v)
	if err != nil {
		h.log.Error("encode MCP document", "path", r.URL.Path, "err", err)
		writeAPIError(w, apierr.Internal(err))
		return
	}
	writeJSON(w, http.StatusOK, body)
}

// writeAPIError writes the REST error envelope (for paths this handler
// does not serve).
func writeAPIError(w http.ResponseWriter, e *apierr.Error) {
	body, err := encodeJSON(apierr.Envelope{Error: e})
	if err != nil {
		http.Error(w, e.Message, e.Status)
		return
	}
	writeJSON(w, e.Status, body)
}
