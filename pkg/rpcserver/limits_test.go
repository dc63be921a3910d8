package rpcserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/httpguard"
	"github.com/ferry-sh/ferry/pkg/inputlimit"
	"github.com/ferry-sh/ferry/pkg/ledger"
	rt "github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// limitsNode is a handler over a manual-slot ledger with one account of
// dataLen bytes (returned) in genesis.
func limitsNode(t *testing.T, o Options, dataLen int) (*Handler, *ledger.Ledger, solana.PublicKey) {
	t.Helper()
	big := pub(newKey(t))
	l, err := ledger.Open(ledger.Config{Name: "limits", ManualSlots: true, Genesis: []ledger.GenesisAccount{
		{Key: big, Account: rt.Account{Lamports: 1_000_000_000, Owner: spl.SystemProgramID, Data: bytes.Repeat([]byte{7}, dataLen)}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return New(l, o), l, big
}

// minAllocs is the allocations per call of f: the least of three
// measurements, since other goroutines' allocations (the ledger's, the
// race detector's) can only add to a measurement.
func minAllocs(f func()) float64 {
	m := testing.AllocsPerRun(100, f)
	for i := 0; i < 2; i++ {
		m = min(m, testing.AllocsPerRun(100, f))
	}
	return m
}

// rpcError is one decoded response's error (nil on success).
func rpcError(t *testing.T, raw []byte) *Error {
	t.Helper()
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  *Error          `json:"error"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("response %.200s: %v", raw, err)
	}
	return r.Error
}

func TestDeepJSONRefusedBeforeParsing(t *testing.T) {
	h, _, _ := limitsNode(t, Options{}, 0)
	ctx := context.Background()
	nest := func(n int, inner string) string {
		return strings.Repeat("[", n) + inner + strings.Repeat("]", n)
	}
	for _, tc := range []struct {
		name string
		body string
		deep bool
	}{
		{"4 MiB of [", strings.Repeat("[", 4<<20), true},
		{"4 MiB of {\"a\":", strings.Repeat(`{"a":`, 4<<20/5), true},
		{"batch nested one level too deep", nest(inputlimit.DefaultMaxJSONDepth+1, ""), true},
		// A request object (1) whose params (2) hold 125 more arrays: 127 levels.
		{"params at the limit", `{"jsonrpc":"2.0","id":1,"method":"getSlot","params":` + nest(inputlimit.DefaultMaxJSONDepth-1, "") + `}`, false},
		{"params over the limit", `{"jsonrpc":"2.0","id":1,"method":"getSlot","params":` + nest(inputlimit.DefaultMaxJSONDepth, "") + `}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := rpcError(t, h.HandleBody(ctx, []byte(tc.body)))
			tooDeep := e != nil && e.Code == CodeParseError && e.Data == "JSON nested deeper than 127 levels"
			if tooDeep != tc.deep {
				t.Fatalf("error %+v, want depth error %v", e, tc.deep)
			}
		})
	}
	// Refusing 4 MiB of nesting allocates no more than refusing 128 bytes
	// of it: the scanner stops at the limit instead of recursing on.
	// (Under -race both answers are still checked above; the counts are
	// the instrumented runtime's, one allocation apart at random.)
	if raceDetector {
		return
	}
	deep, limit := []byte(strings.Repeat("[", 4<<20)), []byte(strings.Repeat("[", 128))
	allocs := func(b []byte) float64 { return minAllocs(func() { h.HandleBody(ctx, b) }) }
	if big, small := allocs(deep), allocs(limit); big > small {
		t.Errorf("4 MiB deep body: %v allocations, 128-byte one %v", big, small)
	}
}

func TestLongBase58RefusedBeforeDecoding(t *testing.T) {
	h, _, _ := limitsNode(t, Options{}, 0)
	ctx := context.Background()
	long := strings.Repeat("1", 80_000) // 80 KB of valid base58
	for _, body := range []string{
		req("getBalance", long),
		req("getAccountInfo", long),
		req("getMultipleAccounts", []string{long}),
		req("getSignatureStatuses", []string{strings.Repeat("1", 89)}),
		req("getTransaction", long),
		req("isBlockhashValid", long),
		req("getTokenAccountsByOwner", solana.SystemProgramID.String(), map[string]any{"mint": long}),
	} {
		e := rpcError(t, h.HandleBody(ctx, []byte(body)))
		if e == nil || e.Code != CodeInvalidParams || e.Message != "Invalid param: Invalid" {
			t.Errorf("%.60s…: %+v, want -32602 Invalid param: Invalid", body, e)
		}
	}
	// The length check comes before the decoder: an 80 KB key costs what a
	// 45-character one does.
	short := strings.Repeat("1", inputlimit.MaxPubkeyBase58+1)
	a := minAllocs(func() { ParsePubkey(long) })
	b := minAllocs(func() { ParsePubkey(short) })
	if a != b {
		t.Errorf("ParsePubkey: %v allocations for 80 KB, %v for 45 characters", a, b)
	}
	if _, err := ParsePubkey(solana.SystemProgramID.String()); err != nil {
		t.Errorf("a real key: %v", err)
	}
}

func TestErrorMessagesDoNotEchoInput(t *testing.T) {
	h, _, _ := limitsNode(t, Options{}, 0)
	ctx := context.Background()
	junk := strings.Repeat("x", 100_000)
	for _, body := range []string{
		req("getSlot", map[string]any{"commitment": junk}),
		req("getAccountInfo", solana.SystemProgramID.String(), map[string]any{"encoding": junk}),
		req("getBlock", 0, map[string]any{"transactionDetails": junk}),
		req("sendTransaction", "AQID", map[string]any{"encoding": junk}),
		`{"jsonrpc":"2.0","id":1,"method":"getBalance","params":[` + strings.Repeat("9", 100_000) + `]}`,
	} {
		e := rpcError(t, h.HandleBody(ctx, []byte(body)))
		if e == nil || e.Code != CodeInvalidParams {
			t.Fatalf("%.60s…: %+v, want -32602", body, e)
		}
		if len(e.Message) > 300 {
			t.Errorf("%.60s…: message of %d bytes: %.120s…", body, len(e.Message), e.Message)
		}
	}
}

func TestResponseBudget(t *testing.T) {
	// A 3 000-byte account is about 4 KiB of base64.
	h, _, big := limitsNode(t, Options{MaxResponseBytes: 10_000}, 3000)
	ctx := context.Background()
	key := big.String()
	b64 := map[string]any{"encoding": "base64"}

	if e := rpcError(t, h.HandleBody(ctx, []byte(req("getAccountInfo", key, b64)))); e != nil {
		t.Fatalf("one account: %+v", e)
	}
	e := rpcError(t, h.HandleBody(ctx, []byte(req("getMultipleAccounts", []string{key, key, key}, b64))))
	if e == nil || e.Code != CodeResponseTooLarge || !strings.Contains(e.Message, "10000 bytes") {
		t.Fatalf("three accounts (12 KiB): %+v, want -32051", e)
	}
	sliced := map[string]any{"encoding": "base64", "dataSlice": map[string]any{"offset": 0, "length": 100}}
	if e := rpcError(t, h.HandleBody(ctx, []byte(req("getMultipleAccounts", []string{key, key, key}, sliced)))); e != nil {
		t.Fatalf("three sliced accounts: %+v", e)
	}

	// A batch shares the budget: two of three fit, whichever run first;
	// once it is spent the rest are refused.
	batch := "[" + req("getAccountInfo", key, b64) + "," + req("getAccountInfo", key, b64) + "," + req("getAccountInfo", key, b64) + "]"
	var items []json.RawMessage
	if err := json.Unmarshal(h.HandleBody(ctx, []byte(batch)), &items); err != nil || len(items) != 3 {
		t.Fatalf("batch: %d items, %v", len(items), err)
	}
	refused := 0
	for _, it := range items {
		if e := rpcError(t, it); e != nil {
			if e.Code != CodeResponseTooLarge {
				t.Fatalf("item error %+v", e)
			}
			refused++
		}
	}
	if refused != 1 {
		t.Errorf("%d of 3 items refused, want 1", refused)
	}

	// Methods that do not reserve in advance are held to the budget when
	// their answer is encoded.
	small, _, _ := limitsNode(t, Options{MaxResponseBytes: 40}, 0)
	if e := rpcError(t, small.HandleBody(ctx, []byte(req("getVersion")))); e == nil || e.Code != CodeResponseTooLarge {
		t.Errorf("getVersion over a 40-byte budget: %+v", e)
	}
	if e := rpcError(t, small.HandleBody(ctx, []byte(req("getSlot")))); e != nil {
		t.Errorf("getSlot within a 40-byte budget: %+v", e)
	}
}

// TestBatchAmplificationBounded is the reproduction of issue 13: a batch
// of getMultipleAccounts calls asks for ~100x its size in answers; what
// comes back is bounded by the budget, and the refused items say why.
func TestBatchAmplificationBounded(t *testing.T) {
	const budget = 1 << 20
	h, _, big := limitsNode(t, Options{MaxResponseBytes: budget}, 3000)
	keys := make([]string, maxMultipleAccounts)
	for i := range keys {
		keys[i] = big.String()
	}
	one := req("getMultipleAccounts", keys, map[string]any{"encoding": "base64"})
	body := "[" + strings.Repeat(one+",", 99) + one + "]" // asks for ~40 MB
	out := h.HandleBody(context.Background(), []byte(body))
	var items []json.RawMessage
	if err := json.Unmarshal(out, &items); err != nil || len(items) != 100 {
		t.Fatalf("%d items, %v", len(items), err)
	}
	refused := 0
	for _, it := range items {
		if e := rpcError(t, it); e != nil && e.Code == CodeResponseTooLarge {
			refused++
		}
	}
	if refused < 98 {
		t.Errorf("%d items refused; a 1 MiB budget holds at most two 400 KiB answers", refused)
	}
	if max := budget + 100*300; len(out) > max {
		t.Errorf("answer of %d bytes, want at most %d", len(out), max)
	}
}

// post sends body to h as a browser (or not) would.
func post(t *testing.T, h http.Handler, body string, headers ...string) []byte {
	t.Helper()
	r := httptest.NewRequest("POST", "/", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Set(headers[i], headers[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		t.Fatalf("HTTP %d: %s", w.Code, w.Body)
	}
	return w.Body.Bytes()
}

func TestLocalOnlyMethodsRefusedToBrowsers(t *testing.T) {
	allowed, err := httpguard.ParseOrigins([]string{"http://localhost:3000"})
	if err != nil {
		t.Fatal(err)
	}
	h, l, _ := limitsNode(t, Options{FaucetOrigins: allowed}, 0)
	h.EnableFaucet(FaucetOptions{})
	// A future cheat code registered with plain Handle is local-only too.
	h.Handle("ferry_setBalance", func(context.Context, Params) (any, error) { return "changed", nil })
	to := pub(newKey(t)).String()
	// Each airdrop asks a different amount (identical transactions would
	// be deduplicated); landed adds up what the allowed ones sent.
	var amount, landed uint64 = 1_000_000, 0
	airdrop := func() string {
		amount++
		return req("requestAirdrop", to, amount)
	}
	createMint := req(MethodCreateMint)

	for _, tc := range []struct {
		name    string
		body    string
		headers []string
		refused bool
	}{
		{"CLI or SDK (no browser headers)", airdrop(), nil, false},
		{"Node's fetch (Sec-Fetch-Mode only)", airdrop(), []string{"Sec-Fetch-Mode", "cors", "Accept-Language", "*", "User-Agent", "node"}, false},
		{"allowed origin", airdrop(), []string{"Origin", "http://localhost:3000"}, false},
		{"allowed origin, other case and a slash", airdrop(), []string{"Origin", "HTTP://LOCALHOST:3000/"}, false},
		{"foreign origin", airdrop(), []string{"Origin", "https://evil.example"}, true},
		{"foreign origin, text/plain simple request", airdrop(), []string{"Origin", "https://evil.example", "Content-Type", "text/plain"}, true},
		{"another port of localhost", airdrop(), []string{"Origin", "http://localhost:3001"}, true},
		{"sandboxed page", airdrop(), []string{"Origin", "null"}, true},
		{"cross-site fetch without Origin", airdrop(), []string{"Sec-Fetch-Site", "cross-site"}, true},
		{"typed URL (Sec-Fetch-Site none)", airdrop(), []string{"Sec-Fetch-Site", "none"}, false},
		{"ferry_createMint from a foreign origin", createMint, []string{"Origin", "https://evil.example"}, true},
		{"ferry_mintTo from a foreign origin", req(MethodMintTo, to, to, 1), []string{"Origin", "https://evil.example"}, true},
		{"ferry_faucetInfo (a read) from a foreign origin", req(MethodFaucetInfo), []string{"Origin", "https://evil.example"}, false},
		{"any other ferry_* method from a foreign origin", req("ferry_setBalance"), []string{"Origin", "https://evil.example"}, true},
		{"any other ferry_* method without Origin", req("ferry_setBalance"), nil, false},
		{"getBalance from a foreign origin", req("getBalance", to), []string{"Origin", "https://evil.example"}, false},
		{"sendTransaction from a foreign origin", req("sendTransaction", "AQID", map[string]any{"encoding": "base64"}), []string{"Origin", "https://evil.example"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := rpcError(t, post(t, h, tc.body, tc.headers...))
			if got := e != nil && e.Code == CodeOriginNotAllowed; got != tc.refused {
				t.Fatalf("error %+v, want refused=%v", e, tc.refused)
			}
			if tc.refused && !strings.Contains(e.Message, "--allow-origin") {
				t.Errorf("message %q does not say how to allow the origin", e.Message)
			}
			if e == nil && strings.Contains(tc.body, "requestAirdrop") {
				var r struct{ Params []any }
				json.Unmarshal([]byte(tc.body), &r)
				landed += uint64(r.Params[1].(float64))
			}
		})
	}

	// In a batch only the local-only item is refused.
	var items []json.RawMessage
	if err := json.Unmarshal(post(t, h, "["+req("getSlot")+","+airdrop()+"]", "Origin", "https://evil.example"), &items); err != nil || len(items) != 2 {
		t.Fatalf("batch: %v", err)
	}
	if e := rpcError(t, items[0]); e != nil {
		t.Errorf("getSlot in the batch: %+v", e)
	}
	if e := rpcError(t, items[1]); e == nil || e.Code != CodeOriginNotAllowed {
		t.Errorf("requestAirdrop in the batch: %+v", e)
	}

	// Nothing left the faucet for the refused calls: the recipient holds
	// exactly what the five allowed airdrops sent.
	bal, _ := l.Balance(solana.MustPublicKeyFromBase58(to), ledger.Processed)
	if bal != landed || landed != 5*1_000_000+1+2+3+4+10 {
		t.Errorf("recipient holds %d lamports, the allowed airdrops sent %d", bal, landed)
	}

	// "*" allows every origin.
	anyOrigin, _ := httpguard.ParseOrigins([]string{"*"})
	open, _, _ := limitsNode(t, Options{FaucetOrigins: anyOrigin}, 0)
	if e := rpcError(t, post(t, open, airdrop(), "Origin", "https://evil.example")); e != nil {
		t.Errorf("with --allow-origin '*': %+v", e)
	}
}

// TestResponsesInFlight: while answers not yet sent hold the node's
// in-flight bound, a request for another big answer gets -32052; small
// answers still pass; once the answer is sent, big ones pass again.
func TestResponsesInFlight(t *testing.T) {
	// A 100 KiB account is about 137 KiB of base64: a "big" piece.
	h, _, big := limitsNode(t, Options{MaxResponseBytes: 200 << 10, MaxResponseBytesInFlight: 200 << 10}, 100<<10)
	ctx := context.Background()
	getBig := []byte(req("getAccountInfo", big.String(), map[string]any{"encoding": "base64"}))
	parts, _, release := h.answer(ctx, getBig) // held, as while being written to a slow client
	if e := rpcError(t, parts[0]); e != nil {
		t.Fatalf("first big answer: %+v", e)
	}
	e := rpcError(t, h.HandleBody(ctx, getBig))
	if e == nil || e.Code != CodeResponsesInFlight {
		t.Fatalf("second big answer while the first is held: %+v, want -32052", e)
	}
	if e := rpcError(t, h.HandleBody(ctx, []byte(req("getSlot")))); e != nil {
		t.Fatalf("small answer while a big one is held: %+v", e)
	}
	release()
	if e := rpcError(t, h.HandleBody(ctx, getBig)); e != nil {
		t.Fatalf("big answer after the first was sent: %+v", e)
	}
	if n := h.inFlight.used.Load(); n != 0 {
		t.Errorf("%d bytes still counted in flight after every answer was released", n)
	}
}

func TestInFlightDefaults(t *testing.T) {
	for _, tc := range []struct{ perRequest, inFlight, want int64 }{
		{0, 0, DefaultMaxResponseBytesInFlight},
		{64 << 20, 0, 128 << 20},      // follows a raised budget
		{64 << 20, 1 << 20, 64 << 20}, // never below one answer
		{1 << 20, 8 << 20, 8 << 20},
	} {
		h := New(nil, Options{MaxResponseBytes: tc.perRequest, MaxResponseBytesInFlight: tc.inFlight})
		if h.inFlight.limit != tc.want {
			t.Errorf("%d/%d: in-flight bound %d, want %d", tc.perRequest, tc.inFlight, h.inFlight.limit, tc.want)
		}
	}
}

// unreadable fails the test when read.
type unreadable struct{ t *testing.T }

func (u unreadable) Read([]byte) (int, error) {
	u.t.Error("the body was read")
	return 0, io.EOF
}

// TestDeclaredLengthOverLimit: a body declared larger than the limit is
// refused before a byte of it is read or a buffer for it allocated.
func TestDeclaredLengthOverLimit(t *testing.T) {
	h, _, _ := limitsNode(t, Options{}, 0)
	r := httptest.NewRequest("POST", "/", unreadable{t})
	r.ContentLength = 1 << 30
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusRequestEntityTooLarge || !strings.Contains(w.Body.String(), "request body exceeds 4194304 bytes") {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
}

// TestBodyReadOnce checks that a body of its declared length is read
// into the one buffer allocated for it: bytes.Buffer.ReadFrom wants
// bytes.MinRead free before the read that finds the end, and a buffer of
// exactly the declared length was copied into one twice as large at the
// end of every request. Without a declared length the buffer grows with
// what arrives.
func TestBodyReadOnce(t *testing.T) {
	for _, n := range []int{1, 700, 10_000, bodyPrealloc} {
		body := bytes.Repeat([]byte{'x'}, n)
		r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		got, err := readBody(httptest.NewRecorder(), r, 1<<20)
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("%d bytes: read %d bytes, %v", n, len(got), err)
		}
		// What one allocation of n+MinRead bytes gets (its size class).
		want := cap(append([]byte(nil), make([]byte, n+bytes.MinRead)...))
		if c := cap(got); c != want {
			t.Errorf("%d bytes declared and sent: a buffer of %d bytes, want the %d of one allocation", n, c, want)
		}
	}
	r := httptest.NewRequest(http.MethodPost, "/", io.NopCloser(strings.NewReader("{}")))
	r.ContentLength = -1
	if got, err := readBody(httptest.NewRecorder(), r, 1<<20); err != nil || string(got) != "{}" {
		t.Fatalf("undeclared length: %q, %v", got, err)
	}
}
