package chainclient

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newClock() *fakeClock { return &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

// blockhashServer answers getLatestBlockhash with a fresh hash each time
// (last valid block height = call number) so tests can tell calls apart.
func blockhashServer(t *testing.T) (*fakeRPC, *atomic.Int64) {
	f := newFake(t)
	var n atomic.Int64
	f.on("getLatestBlockhash", func(json.RawMessage) (any, *RPCError) {
		i := n.Add(1)
		var h solana.Hash
		h[0] = byte(i)
		return map[string]any{"context": map[string]any{"slot": i}, "value": Blockhash{Hash: h, LastValidBlockHeight: uint64(i)}}, nil
	})
	return f, &n
}

// waitFor polls cond until it holds; the test's own timeout bounds it.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		if t.Context().Err() != nil {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestCachedBlockhashTTL(t *testing.T) {
	f, _ := blockhashServer(t)
	clk := newClock()
	c := NewCached(f.client(t), CacheOptions{Now: clk.Now})

	a, err := c.GetLatestBlockhash(testCtx, Confirmed)
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(399 * time.Millisecond)
	b, err := c.GetLatestBlockhash(testCtx, Confirmed)
	if err != nil || b != a {
		t.Fatalf("within TTL got %+v, %v; want cached %+v", b, err, a)
	}
	if n := f.count("getLatestBlockhash"); n != 1 {
		t.Fatalf("%d requests within the TTL, want 1", n)
	}
	clk.Advance(time.Millisecond)
	b, err = c.GetLatestBlockhash(testCtx, Confirmed)
	if err != nil || b == a {
		t.Fatalf("after the TTL got %+v, %v; want a new blockhash", b, err)
	}
	if n := f.count("getLatestBlockhash"); n != 2 {
		t.Fatalf("%d requests after the TTL, want 2", n)
	}

	// Each commitment has its own entry.
	if _, err := c.GetLatestBlockhash(testCtx, Finalized); err != nil {
		t.Fatal(err)
	}
	if n := f.count("getLatestBlockhash"); n != 3 {
		t.Fatalf("%d requests, want 3 (finalized is cached separately)", n)
	}
	jsonEq(t, f.last("getLatestBlockhash").Params, `[{"commitment":"finalized"}]`)

	c.InvalidateBlockhash()
	if _, err := c.GetLatestBlockhash(testCtx, Confirmed); err != nil {
		t.Fatal(err)
	}
	if n := f.count("getLatestBlockhash"); n != 4 {
		t.Fatalf("%d requests after InvalidateBlockhash, want 4", n)
	}
}

func TestCachedBlockhashCustomTTLAndDisabled(t *testing.T) {
	f, _ := blockhashServer(t)
	clk := newClock()
	c := NewCached(f.client(t), CacheOptions{Now: clk.Now, BlockhashTTL: 2 * time.Second})
	c.GetLatestBlockhash(testCtx, "")
	clk.Advance(1500 * time.Millisecond)
	c.GetLatestBlockhash(testCtx, "")
	if n := f.count("getLatestBlockhash"); n != 1 {
		t.Errorf("%d requests with a 2s TTL, want 1", n)
	}

	off := NewCached(f.client(t), CacheOptions{Now: clk.Now, BlockhashTTL: -1})
	off.GetLatestBlockhash(testCtx, "")
	off.GetLatestBlockhash(testCtx, "")
	if n := f.count("getLatestBlockhash"); n != 3 {
		t.Errorf("%d requests with the cache disabled, want 3", n)
	}
}

func TestCachedBlockhashSingleFlight(t *testing.T) {
	f := newFake(t)
	release := make(chan struct{})
	f.on("getLatestBlockhash", func(json.RawMessage) (any, *RPCError) {
		<-release
		return json.RawMessage(`{"context":{"slot":1},"value":{"blockhash":"EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N","lastValidBlockHeight":150}}`), nil
	})
	c := NewCached(f.client(t), CacheOptions{Now: newClock().Now})

	const n = 10
	var wg sync.WaitGroup
	results := make([]Blockhash, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { results[i], errs[i] = c.GetLatestBlockhash(testCtx, Confirmed) })
	}
	waitFor(t, "all callers to join the flight", func() bool { return c.bhFlight.waiting(Confirmed) == n })
	close(release)
	wg.Wait()
	for i := range n {
		if errs[i] != nil || results[i].Hash != hash1 {
			t.Errorf("caller %d: %+v, %v", i, results[i], errs[i])
		}
	}
	if got := f.count("getLatestBlockhash"); got != 1 {
		t.Errorf("%d requests for %d concurrent callers, want 1", got, n)
	}
}

func TestCachedFlightSurvivesCallerCancel(t *testing.T) {
	f := newFake(t)
	release := make(chan struct{})
	f.on("getLatestBlockhash", func(json.RawMessage) (any, *RPCError) {
		<-release
		return json.RawMessage(`{"context":{"slot":1},"value":{"blockhash":"EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N","lastValidBlockHeight":150}}`), nil
	})
	c := NewCached(f.client(t), CacheOptions{Now: newClock().Now})

	ctx, cancel := context.WithCancel(testCtx)
	firstErr := make(chan error)
	go func() {
		_, err := c.GetLatestBlockhash(ctx, "")
		firstErr <- err
	}()
	waitFor(t, "the first caller", func() bool { return c.bhFlight.waiting("") == 1 })
	second := make(chan Blockhash)
	go func() {
		bh, _ := c.GetLatestBlockhash(testCtx, "")
		second <- bh
	}()
	waitFor(t, "the second caller", func() bool { return c.bhFlight.waiting("") == 2 })
	cancel()
	if err := <-firstErr; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled caller: err = %v", err)
	}
	close(release)
	if bh := <-second; bh.Hash != hash1 {
		t.Errorf("second caller got %+v", bh)
	}
	// The result was cached although its first caller left.
	if _, err := c.GetLatestBlockhash(testCtx, ""); err != nil || f.count("getLatestBlockhash") != 1 {
		t.Errorf("after the flight: %v, %d requests", err, f.count("getLatestBlockhash"))
	}
}

func TestCachedBlockhashFailureNotCached(t *testing.T) {
	f := newFake(t)
	var calls atomic.Int64
	f.on("getLatestBlockhash", func(json.RawMessage) (any, *RPCError) {
		if calls.Add(1) == 1 {
			return nil, &RPCError{Code: -32005, Message: "Node is unhealthy"}
		}
		return json.RawMessage(`{"context":{"slot":1},"value":{"blockhash":"EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N","lastValidBlockHeight":150}}`), nil
	})
	c := NewCached(f.client(t), CacheOptions{Now: newClock().Now})
	if _, err := c.GetLatestBlockhash(testCtx, ""); err == nil {
		t.Fatal("first call succeeded")
	}
	if bh, err := c.GetLatestBlockhash(testCtx, ""); err != nil || bh.Hash != hash1 {
		t.Fatalf("retry = %+v, %v", bh, err)
	}
	c.GetLatestBlockhash(testCtx, "")
	if n := calls.Load(); n != 2 {
		t.Errorf("%d requests, want 2 (the failure is not cached, the success is)", n)
	}
}

func TestCachedMintProgram(t *testing.T) {
	f := newFake(t)
	mintTok, mint22, mintSys, mintLate := keyA, keyB, solana.MustPublicKeyFromBase58("MUS3hc9TCw4cGC12vHNoYcCGzJG1txjgQLZWVoeNHNd"), solana.MustPublicKeyFromBase58("MTEWGuqxUpYZGFJQcp8tLN7x5v9BSeoFHYWQQ3n3xzo")
	var lateExists atomic.Bool
	f.on("getAccountInfo", func(p json.RawMessage) (any, *RPCError) {
		var args []json.RawMessage
		json.Unmarshal(p, &args)
		var k solana.PublicKey
		json.Unmarshal(args[0], &k)
		owner := ""
		switch {
		case k == mintTok:
			owner = solana.TokenProgramID.String()
		case k == mint22:
			owner = solana.Token2022ProgramID.String()
		case k == mintSys:
			owner = solana.SystemProgramID.String()
		case k == mintLate && lateExists.Load():
			owner = solana.TokenProgramID.String()
		default:
			return json.RawMessage(`{"context":{"slot":1},"value":null}`), nil
		}
		return json.RawMessage(`{"context":{"slot":1},"value":{"lamports":1461600,"owner":"` + owner + `","data":["","base64"],"executable":false,"rentEpoch":0}}`), nil
	})
	c := NewCached(f.client(t), CacheOptions{})
	for range 3 {
		if p, err := c.MintProgram(testCtx, mintTok); err != nil || p != solana.TokenProgramID {
			t.Fatalf("MintProgram = %s, %v", p, err)
		}
		if p, err := c.MintProgram(testCtx, mint22); err != nil || p != solana.Token2022ProgramID {
			t.Fatalf("MintProgram = %s, %v", p, err)
		}
	}
	if n := f.count("getAccountInfo"); n != 2 {
		t.Errorf("%d requests for two token mints asked 3 times, want 2", n)
	}
	jsonEq(t, f.last("getAccountInfo").Params, `["`+mint22.String()+`",{"encoding":"base64","commitment":"confirmed"}]`)

	for range 2 {
		if p, err := c.MintProgram(testCtx, mintSys); err != nil || p != solana.SystemProgramID {
			t.Fatalf("MintProgram(system-owned) = %s, %v", p, err)
		}
	}
	if n := f.count("getAccountInfo"); n != 4 {
		t.Errorf("%d requests, want 4 (non-token owners are not cached)", n)
	}

	for range 2 {
		if _, err := c.MintProgram(testCtx, mintLate); !errors.Is(err, ErrAccountNotFound) {
			t.Fatalf("missing mint: err = %v", err)
		}
	}
	if n := f.count("getAccountInfo"); n != 6 {
		t.Errorf("%d requests, want 6 (misses are not cached)", n)
	}
	lateExists.Store(true)
	if p, err := c.MintProgram(testCtx, mintLate); err != nil || p != solana.TokenProgramID {
		t.Errorf("mint created later = %s, %v", p, err)
	}
}

func TestCachedMintBound(t *testing.T) {
	f := newFake(t)
	f.raw("getAccountInfo", `{"context":{"slot":1},"value":{"lamports":1,"owner":"TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA","data":["","base64"],"executable":false,"rentEpoch":0}}`)
	c := NewCached(f.client(t), CacheOptions{MaxMints: 2})
	for i := range 5 {
		var k solana.PublicKey
		k[0] = byte(i + 1)
		if _, err := c.MintProgram(testCtx, k); err != nil {
			t.Fatal(err)
		}
		c.mu.Lock()
		n := len(c.mints)
		c.mu.Unlock()
		if n > 2 {
			t.Fatalf("mint cache holds %d entries, bound is 2", n)
		}
	}
}

func TestCachedIdentity(t *testing.T) {
	f := newFake(t)
	var calls atomic.Int64
	f.on("getIdentity", func(json.RawMessage) (any, *RPCError) {
		if calls.Add(1) == 1 {
			return nil, &RPCError{Code: -32603, Message: "Internal error"}
		}
		return json.RawMessage(`{"identity":"MAS1Dt9qreoRMQ14YQuhg8UTZMMzDdKhmkZMECCzk57"}`), nil
	})
	c := NewCached(f.client(t), CacheOptions{})
	if _, err := c.GetIdentity(testCtx); err == nil {
		t.Fatal("first call succeeded")
	}
	for range 3 {
		if id, err := c.GetIdentity(testCtx); err != nil || id.Identity != keyA {
			t.Fatalf("GetIdentity = %+v, %v", id, err)
		}
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("%d requests, want 2 (retried after the failure, cached after the success)", n)
	}
}

func TestPool(t *testing.T) {
	f := newFake(t)
	f.raw("getIdentity", `{"identity":"MAS1Dt9qreoRMQ14YQuhg8UTZMMzDdKhmkZMECCzk57"}`)
	p := NewPool(2, CacheOptions{})
	a1, err := p.Get(f.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := p.Get(" " + f.srv.URL + " ")
	if a1 != a2 {
		t.Error("same endpoint gave two clients")
	}
	a1.GetIdentity(testCtx)
	a2.GetIdentity(testCtx)
	if n := f.count("getIdentity"); n != 1 {
		t.Errorf("%d identity requests through one pooled endpoint, want 1", n)
	}
	b, _ := p.Get(f.srv.URL + "/b")
	p.Get(f.srv.URL) // a is now most recent
	p.Get(f.srv.URL + "/c")
	if again, _ := p.Get(f.srv.URL); again != a1 {
		t.Error("most recently used client was evicted")
	}
	if again, _ := p.Get(f.srv.URL + "/b"); again == b {
		t.Error("least recently used client was kept beyond the bound")
	}
	if _, err := p.Get("not a url"); err == nil {
		t.Error("Get accepted a bad URL")
	}
}
