package chainclient

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// chainScript drives a fake node through a confirmation: statuses[i] is the
// raw status entry answered to the i-th getSignatureStatuses call (the last
// one repeats), heights likewise for getBlockHeight.
type chainScript struct {
	mu               sync.Mutex
	statuses         []string
	heights          []uint64
	historyStatus    string // answered when searchTransactionHistory is set, if not empty
	statusN, heightN int
	historyAsked     bool
}

func (s *chainScript) install(f *fakeRPC) {
	f.on("getSignatureStatuses", func(p json.RawMessage) (any, *RPCError) {
		s.mu.Lock()
		defer s.mu.Unlock()
		entry := s.statuses[min(s.statusN, len(s.statuses)-1)]
		s.statusN++
		if strings.Contains(string(p), `"searchTransactionHistory":true`) {
			s.historyAsked = true
			if s.historyStatus != "" {
				entry = s.historyStatus
			}
		}
		if strings.HasPrefix(entry, "rpcerr:") {
			return nil, &RPCError{Code: -32005, Message: "Node is unhealthy"}
		}
		if strings.HasPrefix(entry, "fatal:") {
			return nil, &RPCError{Code: -32602, Message: "Invalid param: bad signature"}
		}
		return json.RawMessage(`{"context":{"slot":10},"value":[` + entry + `]}`), nil
	})
	f.on("getBlockHeight", func(json.RawMessage) (any, *RPCError) {
		s.mu.Lock()
		defer s.mu.Unlock()
		h := s.heights[min(s.heightN, len(s.heights)-1)]
		s.heightN++
		return h, nil
	})
}

const (
	stProcessed = `{"slot":12,"confirmations":0,"err":null,"status":{"Ok":null},"confirmationStatus":"processed"}`
	stConfirmed = `{"slot":12,"confirmations":1,"err":null,"status":{"Ok":null},"confirmationStatus":"confirmed"}`
	stFinalized = `{"slot":12,"confirmations":null,"err":null,"status":{"Ok":null},"confirmationStatus":"finalized"}`
	stFailed    = `{"slot":13,"confirmations":0,"err":{"InstructionError":[0,{"Custom":1}]},"status":{"Err":{"InstructionError":[0,{"Custom":1}]}},"confirmationStatus":"processed"}`
)

func fastConfirm(progress *[]ConfirmProgress) ConfirmOptions {
	return ConfirmOptions{PollInterval: time.Millisecond, OnProgress: func(p ConfirmProgress) {
		if progress != nil {
			*progress = append(*progress, p)
		}
	}}
}

func TestConfirmSuccess(t *testing.T) {
	f := newFake(t)
	s := &chainScript{statuses: []string{"null", stProcessed, stConfirmed}, heights: []uint64{100}}
	s.install(f)
	var progress []ConfirmProgress
	st, err := f.client(t).Confirm(testCtx, sigFoo, 200, Confirmed, fastConfirm(&progress))
	if err != nil {
		t.Fatal(err)
	}
	if st.ConfirmationStatus != Confirmed || st.Slot != 12 {
		t.Errorf("status = %+v", st)
	}
	if len(progress) != 2 || progress[0].Status != nil || progress[0].BlockHeight != 100 || progress[0].LastValidBlockHeight != 200 ||
		progress[1].Status == nil || progress[1].Status.ConfirmationStatus != Processed || progress[1].Polls != 2 {
		t.Errorf("progress = %+v", progress)
	}
	jsonEq(t, f.last("getSignatureStatuses").Params, `[["`+sigFoo.String()+`"]]`)
	jsonEq(t, f.last("getBlockHeight").Params, `[{"commitment":"confirmed"}]`)
}

func TestConfirmDefaultsToConfirmedAndWaitsForFinalized(t *testing.T) {
	f := newFake(t)
	s := &chainScript{statuses: []string{stConfirmed}, heights: []uint64{1}}
	s.install(f)
	c := f.client(t)
	if st, err := c.Confirm(testCtx, sigFoo, 200, "", fastConfirm(nil)); err != nil || st.ConfirmationStatus != Confirmed {
		t.Fatalf("default commitment: %+v, %v", st, err)
	}

	s2 := &chainScript{statuses: []string{stProcessed, stConfirmed, stConfirmed, stFinalized}, heights: []uint64{1}}
	s2.install(f)
	var progress []ConfirmProgress
	st, err := c.Confirm(testCtx, sigFoo, 200, Finalized, fastConfirm(&progress))
	if err != nil || st.ConfirmationStatus != Finalized || len(progress) != 3 {
		t.Errorf("finalized: %+v, %v after %d polls", st, err, len(progress)+1)
	}
	if _, err := c.Confirm(testCtx, sigFoo, 200, "rooted", fastConfirm(nil)); err == nil {
		t.Error("unknown commitment accepted")
	}
}

func TestConfirmFailed(t *testing.T) {
	f := newFake(t)
	s := &chainScript{statuses: []string{"null", stFailed}, heights: []uint64{100}}
	s.install(f)
	st, err := f.client(t).Confirm(testCtx, sigFoo, 200, Confirmed, fastConfirm(nil))
	var tf *TransactionFailedError
	if !errors.As(err, &tf) {
		t.Fatalf("err = %v, want a TransactionFailedError", err)
	}
	if string(tf.Err) != `{"InstructionError":[0,{"Custom":1}]}` || tf.Signature != sigFoo || tf.Slot != 13 || st == nil {
		t.Errorf("failure = %+v, status %+v", tf, st)
	}
	if !strings.Contains(err.Error(), sigFoo.String()) || !strings.Contains(err.Error(), `"Custom":1`) {
		t.Errorf("error text = %q", err)
	}
}

func TestConfirmExpired(t *testing.T) {
	f := newFake(t)
	s := &chainScript{statuses: []string{"null"}, heights: []uint64{150, 199, 200, 201}}
	s.install(f)
	var progress []ConfirmProgress
	_, err := f.client(t).Confirm(testCtx, sigFoo, 200, Confirmed, fastConfirm(&progress))
	if !errors.Is(err, ErrBlockhashExpired) {
		t.Fatalf("err = %v, want ErrBlockhashExpired", err)
	}
	if !strings.Contains(err.Error(), "block height 201") || !strings.Contains(err.Error(), "200") {
		t.Errorf("error text = %q", err)
	}
	if !s.historyAsked {
		t.Error("no final status check through the history before declaring expiry")
	}
	if len(progress) != 3 {
		t.Errorf("%d progress reports, want 3 (heights 150, 199, 200 are still valid)", len(progress))
	}
}

func TestConfirmLandedJustBeforeExpiry(t *testing.T) {
	f := newFake(t)
	s := &chainScript{statuses: []string{"null"}, heights: []uint64{250}, historyStatus: stConfirmed}
	s.install(f)
	st, err := f.client(t).Confirm(testCtx, sigFoo, 200, Confirmed, fastConfirm(nil))
	if err != nil || st.ConfirmationStatus != Confirmed {
		t.Errorf("got %+v, %v; want confirmed from the final history check", st, err)
	}
}

func TestConfirmTransientErrors(t *testing.T) {
	f := newFake(t)
	s := &chainScript{statuses: []string{"rpcerr:", "rpcerr:", stConfirmed}, heights: []uint64{1}}
	s.install(f)
	var progress []ConfirmProgress
	st, err := f.client(t).Confirm(testCtx, sigFoo, 200, Confirmed, fastConfirm(&progress))
	if err != nil || st.ConfirmationStatus != Confirmed {
		t.Fatalf("got %+v, %v", st, err)
	}
	if len(progress) != 2 || progress[0].Err == nil {
		t.Errorf("progress = %+v; want the transient errors reported", progress)
	}

	s2 := &chainScript{statuses: []string{"rpcerr:"}, heights: []uint64{1}}
	s2.install(f)
	opts := fastConfirm(nil)
	opts.MaxErrors = 2
	_, err = f.client(t).Confirm(testCtx, sigFoo, 200, Confirmed, opts)
	var re *RPCError
	if !errors.As(err, &re) || re.Code != -32005 || s2.statusN != 3 {
		t.Errorf("err = %v after %d polls; want the -32005 error after 3", err, s2.statusN)
	}

	s3 := &chainScript{statuses: []string{"fatal:"}, heights: []uint64{1}}
	s3.install(f)
	_, err = f.client(t).Confirm(testCtx, sigFoo, 200, Confirmed, fastConfirm(nil))
	if !errors.As(err, &re) || re.Code != -32602 || s3.statusN != 1 || !strings.HasPrefix(err.Error(), "confirm "+sigFoo.String()+": getSignatureStatuses at ") {
		t.Errorf("err = %v after %d polls; want the -32602 error at once", err, s3.statusN)
	}
}

func TestConfirmContextCancelled(t *testing.T) {
	f := newFake(t)
	s := &chainScript{statuses: []string{"null"}, heights: []uint64{1}}
	s.install(f)
	ctx, cancel := context.WithCancel(testCtx)
	defer cancel()
	opts := ConfirmOptions{PollInterval: time.Millisecond, OnProgress: func(p ConfirmProgress) {
		if p.Polls == 3 {
			cancel()
		}
	}}
	_, err := f.client(t).Confirm(ctx, sigFoo, 200, Confirmed, opts)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}
