package loadgen

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mr-tron/base58"
)

// Options configure Run.
type Options struct {
	// URL is the JSON-RPC endpoint.
	URL string
	// Clients is the number of concurrent senders (default 16).
	Clients int
	// Batch is how many sendTransaction calls go in one JSON-RPC batch
	// request (default 1: one HTTP request per transaction).
	Batch int
	// SkipPreflight and PreflightCommitment are sendTransaction options
	// (default preflight at processed).
	SkipPreflight       bool
	PreflightCommitment string
	// Commitment to wait for (default confirmed).
	Commitment string
	// HTTPClient, if set, sends every request through net/http. By default
	// each sender keeps one plain HTTP/1.1 connection (see conn), which
	// leaves more CPU to a node running on the same machine.
	HTTPClient *http.Client
}

// Result of a run.
type Result struct {
	Sent      int
	Confirmed int
	// Failed counts send errors and transactions that landed with an
	// error.
	Failed int
	// FirstError describes one failure, if any.
	FirstError string
	// SendTime is until the last send returned; Elapsed until the last
	// confirmation.
	SendTime time.Duration
	Elapsed  time.Duration
	// Latencies are, for each transaction that reached the commitment,
	// the time from the start of the request that sent it to the status
	// poll that saw it there, ascending. Polls run back to back while
	// statuses change (and every 25 ms otherwise), so the figures are
	// upper bounds by about one poll.
	Latencies []time.Duration
}

// Percentile is the p-th percentile (0 < p <= 100) of Latencies, or 0
// when there are none.
func (r Result) Percentile(p float64) time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(r.Latencies)))) - 1
	return r.Latencies[min(max(i, 0), len(r.Latencies)-1)]
}

// TPS is confirmed transactions per second over the whole run.
func (r Result) TPS() float64 { return float64(r.Confirmed) / r.Elapsed.Seconds() }

func (o *Options) defaults() {
	if o.Clients <= 0 {
		o.Clients = 16
	}
	if o.Batch <= 0 {
		o.Batch = 1
	}
	if o.PreflightCommitment == "" {
		o.PreflightCommitment = "processed"
	}
	if o.Commitment == "" {
		o.Commitment = "confirmed"
	}
}

// poster sends one request body and returns the response body.
type poster func([]byte) ([]byte, error)

// newPoster returns a poster for one goroutine, and a function to close
// it.
func (o *Options) newPoster(ctx context.Context) (poster, func(), error) {
	if o.HTTPClient != nil {
		return func(b []byte) ([]byte, error) { return postRaw(ctx, o.HTTPClient, o.URL, b) }, func() {}, nil
	}
	c, err := newConn(o.URL)
	if err != nil {
		return nil, nil, err
	}
	return func(b []byte) ([]byte, error) {
		r, err := c.post(b)
		return bytes.Clone(r), err
	}, c.close, nil
}

type rpcResponse struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// Run sends txs (signed wire transactions) and waits until all are
// confirmed, failed, or ctx ends. Request bodies are built before the
// clock starts.
func Run(ctx context.Context, txs [][]byte, o Options) (Result, error) {
	o.defaults()
	var res Result
	cfg := fmt.Sprintf(`{"encoding":"base64","skipPreflight":%t,"preflightCommitment":%q}`, o.SkipPreflight, o.PreflightCommitment)
	type job struct {
		body []byte
		sigs []string
	}
	var jobs []job
	for lo := 0; lo < len(txs); lo += o.Batch {
		var b bytes.Buffer
		var sigs []string
		hi := min(lo+o.Batch, len(txs))
		if o.Batch > 1 {
			b.WriteByte('[')
		}
		for i := lo; i < hi; i++ {
			if i > lo {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"sendTransaction","params":["%s",%s]}`, i, base64.StdEncoding.EncodeToString(txs[i]), cfg)
			if len(txs[i]) < 65 {
				return res, fmt.Errorf("transaction %d is too short", i)
			}
			sigs = append(sigs, base58.Encode(txs[i][1:65]))
		}
		if o.Batch > 1 {
			b.WriteByte(']')
		}
		jobs = append(jobs, job{b.Bytes(), sigs})
	}

	if _, err := newConn(o.URL); err != nil && o.HTTPClient == nil {
		return res, err
	}
	var failed atomic.Int64
	var firstErr atomic.Value
	fail := func(msg string) {
		failed.Add(1)
		firstErr.CompareAndSwap(nil, msg)
	}
	type inFlight struct {
		sig string
		at  time.Time
	}
	sent := make(chan inFlight, len(txs))
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for c := 0; c < o.Clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			post, closeConn, _ := o.newPoster(ctx)
			defer closeConn()
			for i := int(next.Add(1) - 1); i < len(jobs) && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				j := jobs[i]
				at := time.Now()
				body, err := post(j.body)
				if err != nil {
					for range j.sigs {
						fail(err.Error())
					}
					continue
				}
				if !bytes.Contains(body, []byte(`"error"`)) {
					// Every call succeeded: the results are the signatures we
					// already know, so skip decoding them (the generator shares
					// the CPU with the node it measures).
					for _, s := range j.sigs {
						sent <- inFlight{s, at}
					}
					continue
				}
				resps, err := decode(body, o.Batch > 1)
				if err != nil || len(resps) != len(j.sigs) {
					for range j.sigs {
						fail(fmt.Sprintf("send: bad response %.200s", body))
					}
					continue
				}
				for k, r := range resps {
					if r.Error != nil {
						fail(fmt.Sprintf("send: %d %s", r.Error.Code, r.Error.Message))
						continue
					}
					sent <- inFlight{j.sigs[k], at}
				}
			}
		}()
	}
	var sendTime time.Duration
	go func() {
		wg.Wait()
		sendTime = time.Since(start)
		close(sent)
	}()

	// Confirm with batched getSignatureStatuses, 256 signatures a call,
	// oldest first. Transactions are confirmed roughly in the order they
	// were sent, so a round stops at the first chunk where nothing new is
	// confirmed: polling then costs about one call per 256 confirmations
	// instead of re-reading every signature still in flight.
	poll, closePoll, err := o.newPoster(ctx)
	if err != nil {
		return res, err
	}
	defer closePoll()
	var pending []inFlight // in send order
	open := true
	for open || len(pending) > 0 {
		if err := ctx.Err(); err != nil {
			return res, err
		}
	collect:
		for open {
			select {
			case s, ok := <-sent:
				if !ok {
					open = false
					break collect
				}
				pending = append(pending, s)
			default:
				break collect
			}
		}
		if len(pending) == 0 {
			if open {
				time.Sleep(2 * time.Millisecond)
			}
			continue
		}
		progress := false
		var keep []inFlight
		lo := 0
		for ; lo < len(pending); lo += 256 {
			chunk := pending[lo:min(lo+256, len(pending))]
			sigs := make([]string, len(chunk))
			for i, p := range chunk {
				sigs[i] = p.sig
			}
			body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "getSignatureStatuses", "params": []any{sigs}})
			raw, err := poll(body)
			if err != nil {
				return res, fmt.Errorf("getSignatureStatuses: %w", err)
			}
			resps, err := decode(raw, false)
			if err != nil {
				return res, fmt.Errorf("getSignatureStatuses: %w", err)
			}
			if resps[0].Error != nil {
				return res, fmt.Errorf("getSignatureStatuses: %s", resps[0].Error.Message)
			}
			var v struct {
				Value []*struct {
					Err                json.RawMessage `json:"err"`
					ConfirmationStatus string          `json:"confirmationStatus"`
				} `json:"value"`
			}
			if err := json.Unmarshal(resps[0].Result, &v); err != nil || len(v.Value) != len(chunk) {
				return res, fmt.Errorf("getSignatureStatuses: bad result %s", resps[0].Result)
			}
			done := 0
			now := time.Now()
			for i, st := range v.Value {
				if st == nil || !reached(st.ConfirmationStatus, o.Commitment) {
					keep = append(keep, chunk[i])
					continue
				}
				done++
				if len(st.Err) > 0 && string(st.Err) != "null" {
					fail("landed with error " + string(st.Err))
					continue
				}
				res.Confirmed++
				res.Latencies = append(res.Latencies, now.Sub(chunk[i].at))
			}
			if done == 0 {
				lo += len(chunk)
				break
			}
			progress = true
		}
		pending = append(keep, pending[min(lo, len(pending)):]...)
		if !progress {
			// Statuses change when a slot becomes durable; polling much
			// faster than that only burns CPU the node needs.
			time.Sleep(25 * time.Millisecond)
		}
	}
	res.Elapsed = time.Since(start)
	slices.Sort(res.Latencies)
	res.SendTime = sendTime
	res.Sent = len(txs)
	res.Failed = int(failed.Load())
	if e, ok := firstErr.Load().(string); ok {
		res.FirstError = e
	}
	return res, nil
}

func reached(status, want string) bool {
	rank := map[string]int{"processed": 0, "confirmed": 1, "finalized": 2}
	return rank[status] >= rank[want]
}

func decode(b []byte, batch bool) ([]rpcResponse, error) {
	if batch {
		var out []rpcResponse
		err := json.Unmarshal(b, &out)
		return out, err
	}
	var out rpcResponse
	err := json.Unmarshal(b, &out)
	return []rpcResponse{out}, err
}

func postRaw(ctx context.Context, c *http.Client, url string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, errors.New("HTTP " + strconv.Itoa(resp.StatusCode) + ": " + string(b))
	}
	return b, nil
}
