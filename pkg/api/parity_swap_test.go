package api

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

const (
	wsolMint = "So11111111111111111111111111111111111111112"
	usdcMint = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
)

// testQuote is a Jupiter-style quote of wSOL → USDC.
func testQuote() map[string]any {
	return map[string]any{
		"inputMint": wsolMint, "inAmount": "1000000", "outputMint": usdcMint, "outAmount": "999000",
		"otherAmountThreshold": "998000", "swapMode": "ExactIn", "slippageBps": 50, "priceImpactPct": "0.01",
		"routePlan": []any{map[string]any{"swapInfo": map[string]any{"ammKey": "AMM111111111111111111111111111111111111111",
			"inputMint": wsolMint, "outputMint": usdcMint, "inAmount": "1000000", "outAmount": "999000", "label": "Raydium"},
			"percent": 100, "bps": 10_000}},
	}
}

// jupiterTx is an unsigned v0 transaction of payer running ixs, compiled
// against tables, in base64 (what a Metis /swap answers).
func jupiterTx(t *testing.T, payer solana.PublicKey, ixs []txwire.Instruction, tables ...txwire.LookupTable) string {
	t.Helper()
	m, err := txwire.CompileV0(payer, ixs, solana.Hash{1}, tables)
	if err != nil {
		t.Fatal(err)
	}
	return txwire.NewUnsigned(m).Base64()
}

// metis is a mock Metis swap API: /swap answers the transactions of
// swaps in turn (the last one repeats), /quote the quote.
type metis struct {
	*mockUpstream
	mu      sync.Mutex
	swaps   []string // swapTransaction answers
	bodies  []map[string]any
	answer  func(n int) (int, string) // overrides the answer of the n-th /swap
	quoteQs []map[string][]string
}

func newMetis(t *testing.T, log *callLog) *metis {
	m := &metis{mockUpstream: newMockUpstream(t, "metis", log)}
	m.onHTTP("POST /private-token/metis/swap", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body map[string]any
		json.Unmarshal(b, &body)
		m.mu.Lock()
		m.bodies = append(m.bodies, body)
		n := len(m.bodies)
		tx := ""
		if len(m.swaps) > 0 {
			tx = m.swaps[min(n, len(m.swaps))-1]
		}
		answer := m.answer
		m.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if answer != nil {
			status, text := answer(n)
			w.WriteHeader(status)
			io.WriteString(w, text)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"swapTransaction": tx, "lastValidBlockHeight": 318_120_000, "prioritizationFeeLamports": 5000})
	})
	m.onHTTP("GET /private-token/metis/quote", func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		m.quoteQs = append(m.quoteQs, r.URL.Query())
		m.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(testQuote())
	})
	return m
}

func (m *metis) url() string { return m.URL + "/private-token/metis" }

// swapGateway is a gateway with a mock base RPC and a mock Metis.
type swapGateway struct {
	*gateway
	log   *callLog
	base  *mockUpstream
	metis *metis
}

func newSwapGateway(t *testing.T) *swapGateway {
	log := &callLog{}
	base, er := newMockUpstream(t, "base", log), newMockUpstream(t, "er", log)
	devBase, devER := newMockUpstream(t, "devnet-base", log), newMockUpstream(t, "devnet-er", log)
	m := newMetis(t, log)
	env := hostedEnv(base, er, devBase, devER)
	env["METIS_SWAP_API_URL"] = m.url()
	return &swapGateway{gateway: newGateway(t, env), log: log, base: base, metis: m}
}

// privateBody is a private swap request of user to destination.
func privateBody(user, destination, validator solana.PublicKey, extra map[string]any) map[string]any {
	b := map[string]any{"userPublicKey": user.String(), "quoteResponse": testQuote(), "visibility": "private",
		"destination": destination.String(), "minDelayMs": "100", "maxDelayMs": "300", "split": 1, "validator": validator.String()}
	for k, v := range extra {
		if v == nil {
			delete(b, k)
		} else {
			b[k] = v
		}
	}
	return b
}

type privateSwapAnswer struct {
	SwapTransaction      string              `json:"swapTransaction"`
	LastValidBlockHeight int64               `json:"lastValidBlockHeight"`
	PrivateTransfer      PrivateTransferInfo `json:"privateTransfer"`
}

// rebuilt decodes a private swap's transaction with tables.
func rebuilt(t *testing.T, b64 string, tables ...txwire.LookupTable) (*txwire.Transaction, []txwire.Instruction) {
	t.Helper()
	tx, err := txwire.DecodeBase64(b64)
	if err != nil {
		t.Fatal(err)
	}
	if tx.Message.Version != txwire.V0 {
		t.Fatalf("version %v", tx.Message.Version)
	}
	byKey := map[solana.PublicKey][]solana.PublicKey{}
	for _, tb := range tables {
		byKey[tb.Key] = tb.Addresses
	}
	_, ixs, err := txwire.Decompile(&tx.Message, byKey)
	if err != nil {
		t.Fatal(err)
	}
	return tx, ixs
}

// TestParityPrivateSwap: visibility private builds the swap as the hosted
// API does (hosted cases "visibility=private forces the stash ATA and
// appends schedule_private_transfer", "… honors a custom payer for
// appended instructions", "… caches upstream swap lookup tables across
// rebuilds", "… bumps an existing SetComputeUnitLimit in place rather
// than prepending").
func TestParityPrivateSwap(t *testing.T) {
	ownerKey, validatorKey := seedKey("owner"), seedKey("validator")
	owner, validator, recipient := pubOf(ownerKey), pubOf(validatorKey), pubOf(seedKey("recipient"))
	mint := solana.MustPublicKeyFromBase58(usdcMint)
	memo := spl.Memo("jupiter-mock")
	stash, _ := espl.FindStash(owner, mint)
	stashATA := spl.AssociatedTokenAddress(stash, mint, spl.TokenProgramID)

	t.Run("stash ATA and schedule_private_transfer", func(t *testing.T) {
		g := newSwapGateway(t)
		g.metis.swaps = []string{jupiterTx(t, owner, []txwire.Instruction{memo})}
		out := ok[privateSwapAnswer](t, g.do("POST", "/v1/swap/swap", privateBody(owner, recipient, validator, map[string]any{"clientRefId": "42"})))
		// Metis was asked for the swap into the stash ATA, as v0, without
		// the private fields; the rest of the body is forwarded.
		sent := g.metis.bodies[0]
		if sent["destinationTokenAccount"] != stashATA.String() || sent["asLegacyTransaction"] != false || sent["userPublicKey"] != owner.String() {
			t.Fatalf("metis got %v", sent)
		}
		for _, k := range []string{"visibility", "destination", "minDelayMs", "maxDelayMs", "split", "clientRefId", "validator"} {
			if _, ok := sent[k]; ok {
				t.Errorf("metis got the private field %s", k)
			}
		}
		if q, _ := json.Marshal(sent["quoteResponse"]); !bytes.Equal(q, mustJSON(testQuote())) {
			t.Fatalf("quote %s", q)
		}
		crank, _ := espl.FindHydraCrank(stash, out.PrivateTransfer.ShuttleID)
		if out.PrivateTransfer.StashATA != stashATA.String() || out.PrivateTransfer.HydraCrankPDA != crank.String() || out.LastValidBlockHeight != 318_120_000 {
			t.Fatalf("%+v", out)
		}
		// [create stash ATA, the swap's instructions, ix 29]; no compute
		// budget instruction was added.
		tx, ixs := rebuilt(t, out.SwapTransaction)
		if len(ixs) != 3 || ixs[0].ProgramID != spl.AssociatedTokenProgramID || !bytes.Equal(ixs[0].Data, []byte{1}) ||
			ixs[0].Accounts[0].PublicKey != owner || ixs[0].Accounts[1].PublicKey != stashATA || ixs[0].Accounts[2].PublicKey != stash ||
			ixs[1].ProgramID != memo.ProgramID || !bytes.Equal(ixs[1].Data, memo.Data) {
			t.Fatalf("instructions %+v", ixs)
		}
		if tx.Message.AccountKeys[0] != owner || tx.Message.RecentBlockhash != (solana.Hash{1}) || len(tx.Signatures) != 1 || tx.Signatures[0] != (solana.Signature{}) {
			t.Fatalf("message %+v", tx.Message)
		}
		checkSchedule(t, ixs[2], owner, stash, mint, validatorKey, recipient, out.PrivateTransfer.ShuttleID, 100, 300, 1, 42)
		// No lookup table, no mint read: the base RPC was not asked.
		wantCalls(t, g.log.pattern(nil), []string{"metis POST /private-token/metis/swap"})
	})

	t.Run("custom payer", func(t *testing.T) {
		g := newSwapGateway(t)
		sponsor := pubOf(seedKey("sponsor"))
		g.metis.swaps = []string{jupiterTx(t, sponsor, []txwire.Instruction{memo})}
		out := ok[privateSwapAnswer](t, g.do("POST", "/v1/swap/swap", privateBody(owner, recipient, validator, map[string]any{"payer": sponsor.String()})))
		if g.metis.bodies[0]["payer"] != sponsor.String() {
			t.Fatalf("metis got %v", g.metis.bodies[0])
		}
		tx, ixs := rebuilt(t, out.SwapTransaction)
		if tx.Message.AccountKeys[0] != sponsor || ixs[0].Accounts[0].PublicKey != sponsor || ixs[2].Accounts[0].PublicKey != sponsor {
			t.Fatalf("payer not honoured: %v", tx.Message.AccountKeys)
		}
		// The payer signs ix 29, so the stash is the payer's (ferry keeps
		// the swap's destination and the schedule's stash the same).
		payerStash, _ := espl.FindStash(sponsor, mint)
		if ixs[2].Accounts[1].PublicKey != payerStash || out.PrivateTransfer.StashATA != spl.AssociatedTokenAddress(payerStash, mint, spl.TokenProgramID).String() ||
			g.metis.bodies[0]["destinationTokenAccount"] != out.PrivateTransfer.StashATA {
			t.Fatalf("stash %+v", out.PrivateTransfer)
		}
	})

	t.Run("lookup tables cached across rebuilds", func(t *testing.T) {
		g := newSwapGateway(t)
		looked := pubOf(seedKey("looked up"))
		table := txwire.LookupTable{Key: pubOf(seedKey("table")), Addresses: []solana.PublicKey{looked}}
		withLookup := memo
		withLookup.Accounts = []txwire.AccountMeta{txwire.Readonly(looked)}
		g.metis.swaps = []string{jupiterTx(t, owner, []txwire.Instruction{withLookup}, table)}
		g.base.accounts(map[solana.PublicKey]*acct{table.Key: {Owner: txwire.AddressLookupTableProgramID, Lamports: 1, Data: tableData(table.Addresses...)}})
		body := privateBody(owner, recipient, validator, nil)
		for range 2 {
			out := ok[privateSwapAnswer](t, g.do("POST", "/v1/swap/swap", body))
			tx, ixs := rebuilt(t, out.SwapTransaction, table)
			if len(tx.Message.AddressTableLookups) != 1 || tx.Message.AddressTableLookups[0].AccountKey != table.Key ||
				len(ixs) != 3 || ixs[1].Accounts[0].PublicKey != looked {
				t.Fatalf("lookups %+v", tx.Message.AddressTableLookups)
			}
		}
		wantCalls(t, g.log.pattern(map[string]string{table.Key.String(): "table"}), []string{
			"metis POST /private-token/metis/swap", "base getAccountInfo table", "metis POST /private-token/metis/swap",
		})
	})

	t.Run("SetComputeUnitLimit bumped in place", func(t *testing.T) {
		for _, c := range []struct{ limit, want uint32 }{{100_000, 140_000}, {1_390_000, 1_400_000}} {
			g := newSwapGateway(t)
			data := binary.LittleEndian.AppendUint32([]byte{2}, c.limit)
			limit := txwire.Instruction{ProgramID: spl.ComputeBudgetProgramID, Data: data}
			g.metis.swaps = []string{jupiterTx(t, owner, []txwire.Instruction{limit, memo})}
			out := ok[privateSwapAnswer](t, g.do("POST", "/v1/swap/swap", privateBody(owner, recipient, validator, nil)))
			_, ixs := rebuilt(t, out.SwapTransaction)
			n := 0
			for _, ix := range ixs {
				if ix.ProgramID == spl.ComputeBudgetProgramID {
					n++
					if got := binary.LittleEndian.Uint32(ix.Data[1:]); got != c.want {
						t.Fatalf("limit %d, want %d", got, c.want)
					}
				}
			}
			if len(ixs) != 4 || n != 1 || ixs[1].ProgramID != spl.ComputeBudgetProgramID {
				t.Fatalf("%d instructions, %d compute budget", len(ixs), n)
			}
		}
	})

	t.Run("legacy upstream transaction", func(t *testing.T) {
		// A legacy answer is rebuilt as v0 too (as web3.js's
		// VersionedTransaction reads both).
		g := newSwapGateway(t)
		m, err := txwire.Compile(owner, []txwire.Instruction{memo}, solana.Hash{2})
		if err != nil {
			t.Fatal(err)
		}
		g.metis.swaps = []string{txwire.NewUnsigned(m).Base64()}
		out := ok[privateSwapAnswer](t, g.do("POST", "/v1/swap/swap", privateBody(owner, recipient, validator, nil)))
		if tx, ixs := rebuilt(t, out.SwapTransaction); len(ixs) != 3 || tx.Message.RecentBlockhash != (solana.Hash{2}) {
			t.Fatalf("%d instructions", len(ixs))
		}
	})
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// tableData is the account data of a lookup table holding addrs.
func tableData(addrs ...solana.PublicKey) []byte {
	b := make([]byte, txwire.LookupTableMetaSize, txwire.LookupTableMetaSize+32*len(addrs))
	binary.LittleEndian.PutUint32(b, 1)
	for _, a := range addrs {
		b = append(b, a[:]...)
	}
	return b
}

// checkSchedule asserts ix 29: its accounts, its bumps, and that the
// validator opens the sealed destination and suffix.
func checkSchedule(t *testing.T, ix txwire.Instruction, user, stash, mint solana.PublicKey, validatorKey []byte, dest solana.PublicKey,
	shuttleID uint32, minDelay, maxDelay uint64, split uint32, clientRef uint64) {
	t.Helper()
	validator := solana.PublicKeyFromBytes(validatorKey[32:])
	rent, _ := espl.FindRentPDA()
	crank, _ := espl.FindHydraCrank(stash, shuttleID)
	want := []txwire.AccountMeta{txwire.WritableSigner(user), txwire.Writable(stash), txwire.Writable(rent), txwire.Writable(crank),
		txwire.Readonly(espl.HydraProgramID), txwire.Readonly(spl.SystemProgramID), txwire.Readonly(spl.TokenProgramID)}
	if ix.ProgramID != espl.ProgramID || len(ix.Accounts) != 7 {
		t.Fatalf("ix 29 accounts %+v", ix.Accounts)
	}
	for i := range want {
		if ix.Accounts[i] != want[i] {
			t.Fatalf("ix 29 account %d: %+v, want %+v", i, ix.Accounts[i], want[i])
		}
	}
	d := ix.Data
	_, stashBump := espl.FindStash(user, mint)
	meta, metaBump := espl.FindShuttleMetadata(stash, mint, shuttleID)
	_, queueBump := espl.FindTransferQueue(mint, validator)
	if len(d) < 1+4+1+32+10+32+80+1 || d[0] != 29 || binary.LittleEndian.Uint32(d[1:]) != shuttleID || d[5] != stashBump ||
		!bytes.Equal(d[6:38], mint[:]) || d[38] != metaBump || d[47] != queueBump || !bytes.Equal(d[48:80], validator[:]) || int(d[160]) != len(d)-161 {
		t.Fatalf("ix 29 data %x (shuttle metadata %s)", d, meta)
	}
	plainDest, err := espl.Open(validatorKey, d[80:160])
	if err != nil || !bytes.Equal(plainDest, dest[:]) {
		t.Fatalf("sealed destination: %x %v", plainDest, err)
	}
	suffix, err := espl.Open(validatorKey, d[161:])
	if err != nil {
		t.Fatal(err)
	}
	s, err := espl.DecodePrivateTransferSuffix(suffix)
	if err != nil || s.MinDelayMs != minDelay || s.MaxDelayMs != maxDelay || s.Split != split || s.ClientRefID == nil || *s.ClientRefID != clientRef {
		t.Fatalf("suffix %+v %v", s, err)
	}
}

// TestParityPrivateSwapRequote: a rebuilt transaction over 1232 bytes is
// quoted again with maxAccounts 39, 38, … until one fits (hosted case
// "visibility=private requotes downward from maxAccounts=39 until the
// rebuilt transaction fits"); when none does, 502.
func TestParityPrivateSwapRequote(t *testing.T) {
	owner, validator, recipient := pubOf(seedKey("owner")), pubOf(seedKey("validator")), pubOf(seedKey("recipient"))
	// 30 distinct writable accounts: the rebuilt transaction is larger
	// than a packet.
	var wide []txwire.AccountMeta
	for i := range 30 {
		wide = append(wide, txwire.Writable(pubOf(seedKey(fmt.Sprint("route account ", i)))))
	}
	big := jupiterTx(t, owner, []txwire.Instruction{{ProgramID: spl.MemoProgramID, Accounts: wide, Data: []byte("big")}})
	small := jupiterTx(t, owner, []txwire.Instruction{spl.Memo("small")})

	g := newSwapGateway(t)
	g.metis.swaps = []string{big, big, small}
	out := ok[privateSwapAnswer](t, g.do("POST", "/v1/swap/swap", privateBody(owner, recipient, validator, nil)))
	if _, ixs := rebuilt(t, out.SwapTransaction); len(ixs) != 3 || string(ixs[1].Data) != "small" {
		t.Fatalf("%+v", ixs)
	}
	wantCalls(t, g.log.pattern(nil), []string{
		"metis POST /private-token/metis/swap",
		"metis GET /private-token/metis/quote", "metis POST /private-token/metis/swap",
		"metis GET /private-token/metis/quote", "metis POST /private-token/metis/swap",
	})
	for i, q := range g.metis.quoteQs {
		want := fmt.Sprintf("amount=1000000&inputMint=%s&maxAccounts=%d&outputMint=%s&slippageBps=50&swapMode=ExactIn", wsolMint, 39-i, usdcMint)
		if got := urlValues(q); got != want {
			t.Fatalf("re-quote %d: %s, want %s", i, got, want)
		}
	}

	// None fits: 1 + 39 swaps, 39 quotes, then 502.
	g = newSwapGateway(t)
	g.metis.swaps = []string{big}
	wantError(t, g.do("POST", "/v1/swap/swap", privateBody(owner, recipient, validator, nil)), 502, CodeSwapUpstreamError,
		"Failed to fit private swap transaction within 1232 bytes")
	if s, q := g.log.count("metis", "POST /private-token/metis/swap"), g.log.count("metis", "GET /private-token/metis/quote"); s != 40 || q != 39 {
		t.Fatalf("%d swaps, %d quotes", s, q)
	}
}

func urlValues(q map[string][]string) string {
	var parts []string
	for k, v := range q {
		parts = append(parts, k+"="+strings.Join(v, ","))
	}
	slices.Sort(parts)
	return strings.Join(parts, "&")
}

// TestParityPrivateSwapErrors: the rules of a private swap request
// (400 INVALID_REQUEST, nothing asked upstream) and the upstream's bad
// answers (502) (hosted cases "visibility=private rejects missing
// required fields", "… rejects maxDelayMs above 10 minutes", "… rejects
// split values above 14", "… rejects destinationTokenAccount", "… rejects
// asLegacyTransaction=true", "… rejects nativeDestinationAccount", "…
// returns 502 when the upstream swap response is missing
// swapTransaction", "… returns 502 when the upstream swap transaction is
// invalid").
func TestParityPrivateSwapErrors(t *testing.T) {
	owner, validator, recipient := pubOf(seedKey("owner")), pubOf(seedKey("validator")), pubOf(seedKey("recipient"))
	other := pubOf(seedKey("other")).String()
	rules := []struct {
		extra map[string]any
		msg   string
	}{
		{map[string]any{"destination": nil, "minDelayMs": nil, "maxDelayMs": nil, "split": nil},
			"destination, minDelayMs, maxDelayMs, and split are required when visibility=private"},
		{map[string]any{"split": nil}, "destination, minDelayMs, maxDelayMs, and split are required when visibility=private"},
		{map[string]any{"minDelayMs": "0", "maxDelayMs": "600001"}, "maxDelayMs must be less than or equal to 600000"},
		{map[string]any{"minDelayMs": "10", "maxDelayMs": "5"}, "maxDelayMs must be >= minDelayMs"},
		{map[string]any{"split": 15}, "split must be an integer between 1 and 14 when visibility=private"},
		{map[string]any{"destinationTokenAccount": other}, "destinationTokenAccount is not supported when visibility=private"},
		{map[string]any{"asLegacyTransaction": true}, "asLegacyTransaction is not supported when visibility=private"},
		{map[string]any{"nativeDestinationAccount": other}, "nativeDestinationAccount is not supported when visibility=private"},
		{map[string]any{"destination": "not-a-key"}, "Invalid public key"},
	}
	g := newSwapGateway(t)
	for _, r := range rules {
		wantError(t, g.do("POST", "/v1/swap/swap", privateBody(owner, recipient, validator, r.extra)), 400, CodeInvalidRequest, r.msg)
	}
	// The schema's own rules are 422s, as on the hosted API.
	apiError(t, g.do("POST", "/v1/swap/swap", privateBody(owner, recipient, validator, map[string]any{"split": 0})), 422, apierr.CodeValidation)
	e := apiError(t, g.do("POST", "/v1/swap/swap", privateBody(owner, recipient, validator, map[string]any{"quoteResponse": map[string]any{"inputMint": wsolMint}})), 422, apierr.CodeValidation)
	if !strings.HasPrefix(e["message"].(string), "Missing required fields: quoteResponse.inAmount") {
		t.Fatal(e)
	}
	if n := len(g.log.all()); n != 0 {
		t.Fatalf("asked upstream: %v", g.log.pattern(nil))
	}

	answers := []struct {
		status int
		body   string
		code   int
		msg    string
	}{
		{200, `{"lastValidBlockHeight":123}`, 502, "Upstream swap response missing swapTransaction"},
		{200, `{"swapTransaction":""}`, 502, "Upstream swap response missing swapTransaction"},
		{200, `[1,2]`, 502, "Upstream swap response missing swapTransaction"},
		{200, `{"swapTransaction":"%%%%"}`, 502, "Invalid upstream swap transaction encoding"},
		{200, `{"swapTransaction":"AQID"}`, 502, "Invalid upstream swap transaction"},
		{200, `{"swapTransaction":`, 502, "Invalid JSON in upstream swap response"},
	}
	for _, a := range answers {
		g := newSwapGateway(t)
		g.metis.answer = func(int) (int, string) { return a.status, a.body }
		wantError(t, g.do("POST", "/v1/swap/swap", privateBody(owner, recipient, validator, nil)), a.code, CodeSwapUpstreamError, a.msg)
	}
	// The upstream refusing the swap: its answer passes through.
	g = newSwapGateway(t)
	g.metis.answer = func(int) (int, string) { return 400, `{"error":"Route not found"}` }
	r := g.do("POST", "/v1/swap/swap", privateBody(owner, recipient, validator, nil))
	if r.Status != 400 || string(r.Body) != `{"error":"Route not found"}` {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	// A lookup table the base RPC cannot read.
	g = newSwapGateway(t)
	table := txwire.LookupTable{Key: pubOf(seedKey("table")), Addresses: []solana.PublicKey{pubOf(seedKey("x"))}}
	g.metis.swaps = []string{jupiterTx(t, owner, []txwire.Instruction{{ProgramID: spl.MemoProgramID, Accounts: []txwire.AccountMeta{txwire.Readonly(table.Addresses[0])}}}, table)}
	g.base.accounts(map[solana.PublicKey]*acct{table.Key: {Owner: spl.SystemProgramID, Lamports: 1, Data: tableData()}})
	wantError(t, g.do("POST", "/v1/swap/swap", privateBody(owner, recipient, validator, nil)), 502, CodeSwapUpstreamError, "Failed to fetch swap address lookup table")
	// Or that does not exist: the transaction does not decompile.
	g.base.accounts(map[solana.PublicKey]*acct{})
	wantError(t, g.do("POST", "/v1/swap/swap", privateBody(owner, recipient, validator, nil)), 502, CodeSwapUpstreamError, "Failed to decompile upstream swap transaction")
}

// TestParityPublicSwap: a public swap and a quote pass through the
// upstream unchanged (hosted cases "proxies Metis quote requests to the
// configured upstream endpoint", "proxies Metis swap requests to the
// configured upstream endpoint").
func TestParityPublicSwap(t *testing.T) {
	g := newSwapGateway(t)
	owner := pubOf(seedKey("owner"))
	q := "inputMint=" + wsolMint + "&outputMint=" + usdcMint + "&amount=1000000&slippageBps=50"
	r := g.do("GET", "/v1/swap/quote?"+q, nil)
	if r.Status != 200 || !bytes.Equal(bytes.TrimSpace(r.Body), mustJSON(testQuote())) {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if c := g.log.all()[0]; c.Method != "GET /private-token/metis/quote" || c.Query.Encode() != "amount=1000000&inputMint="+wsolMint+"&outputMint="+usdcMint+"&slippageBps=50" {
		t.Fatalf("%+v", c)
	}
	g.metis.answer = func(int) (int, string) { return 200, `{"swapTransaction":"base64-tx"}` }
	body := fmt.Sprintf(`{"userPublicKey":%q,"quoteResponse":%s,"wrapAndUnwrapSol":true}`, owner, mustJSON(testQuote()))
	r = g.do("POST", "/v1/swap/swap", body)
	if r.Status != 200 || string(r.Body) != `{"swapTransaction":"base64-tx"}` {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if c := g.log.all()[1]; c.Method != "POST /private-token/metis/swap" || string(c.Body) != body {
		t.Fatalf("%+v", c)
	}
}
