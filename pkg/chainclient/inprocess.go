package chainclient

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
)

// WithHandler makes the client deliver its requests to h in-process: each
// request is served by h.ServeHTTP in the calling goroutine and the
// response is read back from memory, with no socket in between. Everything
// else (request encoding, ?token=, error mapping, caches) is the same code
// path as for a remote endpoint, so ferry serve can reach its embedded
// chain nodes exactly as it reaches a real cluster. The endpoint URL given
// to New still matters: it is what URL reports (e.g. as sendRpcEndpoint)
// and what h sees as the request URL.
func WithHandler(h http.Handler) Option {
	return func(c *Client) { c.hc = &http.Client{Transport: &HandlerTransport{Handler: h}} }
}

// HandlerTransport is an http.RoundTripper that serves requests with an
// http.Handler in-process. A panic in the handler becomes an error of the
// round trip (as net/http's server confines it to one connection) rather
// than a crash of the caller.
type HandlerTransport struct {
	Handler http.Handler
}

// RoundTrip implements http.RoundTripper.
func (t *HandlerTransport) RoundTrip(req *http.Request) (resp *http.Response, err error) {
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	// The server side sees a request as net/http's server would build it.
	sreq := req.Clone(ctx)
	sreq.RequestURI = req.URL.RequestURI()
	sreq.Host = req.URL.Host
	sreq.RemoteAddr = "in-process"
	sreq.Proto, sreq.ProtoMajor, sreq.ProtoMinor = "HTTP/1.1", 1, 1
	if sreq.Body == nil {
		sreq.Body = http.NoBody
	}
	defer sreq.Body.Close()

	rec := newRecorder()
	defer func() {
		if p := recover(); p != nil {
			rec.release()
			if p == http.ErrAbortHandler {
				resp, err = nil, fmt.Errorf("in-process handler aborted the response")
				return
			}
			resp, err = nil, fmt.Errorf("in-process handler panicked: %v", p)
		}
	}()
	t.Handler.ServeHTTP(rec, sreq)
	if err := ctx.Err(); err != nil {
		rec.release()
		return nil, err
	}
	status := rec.status
	if status == 0 {
		status = http.StatusOK
	}
	resp = &http.Response{
		Status:        strconv.Itoa(status) + " " + http.StatusText(status),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        rec.header,
		Body:          rec,
		ContentLength: int64(rec.buf.Len()),
		Request:       req,
	}
	return resp, nil
}

// recorder is the http.ResponseWriter handed to the handler; after
// ServeHTTP it becomes the response body. Its buffer goes back to a pool
// when the body is closed.
type recorder struct {
	header http.Header
	status int
	buf    *bytes.Buffer
	rd     bytes.Reader
	closed bool
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func newRecorder() *recorder {
	b := bufPool.Get().(*bytes.Buffer)
	b.Reset()
	return &recorder{header: http.Header{}, buf: b}
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if r.rd.Size() != 0 || r.closed {
		return 0, errors.New("in-process response: write after the handler returned")
	}
	return r.buf.Write(p)
}

// Flush is a no-op: the whole response is delivered when the handler
// returns.
func (r *recorder) Flush() {}

func (r *recorder) Read(p []byte) (int, error) {
	if r.closed {
		return 0, errors.New("in-process response: read after close")
	}
	if r.rd.Size() == 0 {
		r.rd.Reset(r.buf.Bytes())
	}
	return r.rd.Read(p)
}

// Close returns the buffer to the pool.
func (r *recorder) Close() error {
	r.release()
	return nil
}

func (r *recorder) release() {
	if r.closed {
		return
	}
	r.closed = true
	if r.buf.Cap() <= 1<<20 { // do not keep huge buffers alive
		bufPool.Put(r.buf)
	}
	r.buf = nil
}

var _ io.ReadCloser = (*recorder)(nil)
