package loadgen

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// conn is a minimal HTTP/1.1 keep-alive client for one connection. The
// load generator runs on the machine it measures, so every microsecond it
// spends in net/http's client (goroutines per connection, header maps) is
// taken from the node; this one writes a request with one syscall and
// reads the response into a reused buffer.
type conn struct {
	addr, host, path string
	nc               net.Conn
	r                *bufio.Reader
	req, resp        []byte
}

func newConn(rawURL string) (*conn, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("load generator: %q is not an http:// URL", rawURL)
	}
	path := u.RequestURI()
	addr := u.Host
	if u.Port() == "" {
		addr += ":80"
	}
	return &conn{addr: addr, host: u.Host, path: path}, nil
}

func (c *conn) close() {
	if c.nc != nil {
		c.nc.Close()
		c.nc = nil
	}
}

// post sends body and returns the response body, valid until the next
// call. It redials once if a kept-alive connection was closed.
func (c *conn) post(body []byte) ([]byte, error) {
	for attempt := 0; ; attempt++ {
		b, err := c.roundTrip(body)
		if err == nil || attempt == 1 {
			return b, err
		}
		c.close()
	}
}

func (c *conn) roundTrip(body []byte) ([]byte, error) {
	if c.nc == nil {
		nc, err := net.DialTimeout("tcp", c.addr, 10*time.Second)
		if err != nil {
			return nil, err
		}
		c.nc, c.r = nc, bufio.NewReaderSize(nc, 64<<10)
	}
	c.req = append(c.req[:0], "POST "...)
	c.req = append(c.req, c.path...)
	c.req = append(c.req, " HTTP/1.1\r\nHost: "...)
	c.req = append(c.req, c.host...)
	c.req = append(c.req, "\r\nContent-Type: application/json\r\nContent-Length: "...)
	c.req = strconv.AppendInt(c.req, int64(len(body)), 10)
	c.req = append(c.req, "\r\n\r\n"...)
	c.req = append(c.req, body...)
	c.nc.SetDeadline(time.Now().Add(time.Minute))
	if _, err := c.nc.Write(c.req); err != nil {
		return nil, err
	}
	status, err := c.r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(status, []byte("HTTP/1.1 ")) {
		return nil, fmt.Errorf("bad status line %q", status)
	}
	code, _ := strconv.Atoi(string(bytes.TrimSpace(status[9:min(12, len(status))])))
	length, chunked, closeAfter := -1, false, false
	for {
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			return nil, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		k, v, _ := strings.Cut(string(line), ":")
		v = strings.TrimSpace(v)
		switch strings.ToLower(k) {
		case "content-length":
			if length, err = strconv.Atoi(v); err != nil {
				return nil, fmt.Errorf("bad Content-Length %q", v)
			}
		case "transfer-encoding":
			chunked = strings.EqualFold(v, "chunked")
		case "connection":
			closeAfter = strings.EqualFold(v, "close")
		}
	}
	c.resp = c.resp[:0]
	switch {
	case chunked:
		for {
			line, err := c.r.ReadSlice('\n')
			if err != nil {
				return nil, err
			}
			size, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
			if err != nil {
				return nil, fmt.Errorf("bad chunk size %q", line)
			}
			if size == 0 {
				if _, err := c.r.ReadSlice('\n'); err != nil {
					return nil, err
				}
				break
			}
			start := len(c.resp)
			c.resp = append(c.resp, make([]byte, size)...)
			if _, err := io.ReadFull(c.r, c.resp[start:]); err != nil {
				return nil, err
			}
			if _, err := c.r.Discard(2); err != nil {
				return nil, err
			}
		}
	case length >= 0:
		c.resp = append(c.resp, make([]byte, length)...)
		if _, err := io.ReadFull(c.r, c.resp); err != nil {
			return nil, err
		}
	default:
		return nil, errors.New("response without length")
	}
	if closeAfter {
		c.close()
	}
	if code != 200 {
		return nil, fmt.Errorf("HTTP %d: %s", code, c.resp)
	}
	return c.resp, nil
}
