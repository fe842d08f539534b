package conformance

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"
)

// request is one JSON-RPC message the checker sends.
type request struct {
	method string
	id     int64 // 0 for a notification
	body   []byte
	header http.Header // protocol headers for this message
}

// reply is what came back for one request.
type reply struct {
	status int    // HTTP status; 0 over stdio
	media  string // one of the Media* constants
	body   []byte
	header http.Header
}

// conn carries JSON-RPC messages to a target.
type conn interface {
	roundTrip(ctx context.Context, req request) (reply, error)
	close() error
}

// httpConn speaks Streamable HTTP.
type httpConn struct {
	url     string
	client  *http.Client
	opts    *Options
	session string // Mcp-Session-Id, once the server gives one
}

func (c *httpConn) close() error {
	if c.session == "" {
		return nil
	}
	// End the session politely; the answer does not matter.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.url, nil)
	if err != nil {
		return err
	}
	c.setHeaders(req.Header, nil)
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

func (c *httpConn) setHeaders(h, protocol http.Header) {
	for k, vs := range c.opts.Header {
		h[k] = append([]string(nil), vs...)
	}
	for k, vs := range protocol {
		h[k] = vs
	}
	if c.session != "" {
		h.Set("Mcp-Session-Id", c.session)
	}
}

func (c *httpConn) roundTrip(ctx context.Context, r request) (reply, error) {
	for attempt := 0; ; attempt++ {
		rep, err := c.once(ctx, r)
		if err != nil || rep.status != http.StatusTooManyRequests || attempt >= c.opts.MaxRetries {
			return rep, err
		}
		wait, ok := retryAfter(rep.header.Get("Retry-After"), attempt, time.Now())
		if !ok || wait > c.opts.MaxRetryWait {
			return rep, nil // the limit will not lift soon enough
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return rep, nil
		case <-t.C:
		}
	}
}

// retryAfter reads a Retry-After header (seconds or an HTTP date); without
// one it backs off exponentially from half a second.
func retryAfter(v string, attempt int, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 500 * time.Millisecond << attempt, true
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

func (c *httpConn) once(ctx context.Context, r request) (reply, error) {
	if c.opts.pace != nil {
		if err := c.opts.pace(ctx, c.url); err != nil {
			return reply{}, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(r.body))
	if err != nil {
		return reply{}, err
	}
	c.setHeaders(req.Header, r.header)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := c.client.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" && r.method == "initialize" {
		c.session = id
	}
	rep := reply{status: resp.StatusCode, media: mediaTypeOf(resp.Header.Get("Content-Type")), header: resp.Header}
	rep.body, err = readReply(resp.Body, rep.media, r.id, c.opts.MaxBodyBytes)
	return rep, err
}

// readReply reads a reply body, at most limit bytes. An event stream is
// read until it carries the answer to id, since a server may keep it open.
func readReply(body io.Reader, media string, id int64, limit int64) ([]byte, error) {
	lr := io.LimitReader(body, limit)
	if media != MediaEventStream || id == 0 {
		return io.ReadAll(lr)
	}
	var buf []byte
	chunk := make([]byte, 32<<10)
	for {
		n, err := lr.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if bytes.Contains(chunk[:n], []byte("\n")) {
			if _, ok := findInStream(completeEvents(buf), id); ok {
				return buf, nil
			}
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// completeEvents cuts an event stream after its last blank line.
func completeEvents(b []byte) []byte {
	for _, sep := range []string{"\n\n", "\r\n\r\n", "\r\r"} {
		if i := bytes.LastIndex(b, []byte(sep)); i >= 0 {
			return b[:i+len(sep)]
		}
	}
	return nil
}

// failure maps a transport error to an UNVERIFIED category.
func failure(err error) Category {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return Timeout
	}
	return Unreachable
}
