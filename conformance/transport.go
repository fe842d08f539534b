package conformance

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

// newTransport returns the HTTP transport of one check (in a fleet, each
// target in progress has its own, so no pool is shared).
func newTransport() *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.IdleConnTimeout = 10 * time.Second
	// A check keeps its connection while it waits out the spacing; in a
	// fleet hundreds do. Small buffers keep them small: requests are
	// small, and a long reply is read in chunks larger than the buffer,
	// which bypass it.
	tr.ReadBufferSize, tr.WriteBufferSize = 1<<10, 1<<10
	return tr
}

// request is one JSON-RPC message the checker sends.
type request struct {
	method string
	id     int64 // 0 for a notification
	body   []byte
	header http.Header // protocol headers for this message
}

// reply is what came back for one request.
type reply struct {
	status   int       // HTTP status; 0 over stdio
	media    MediaType // empty over stdio
	body     []byte
	header   http.Header
	tooLarge bool   // longer than Options.MaxBodyBytes; body is not the whole
	host     string // the Host the request was sent with; "" over stdio
	session  bool   // the request carried Mcp-Session-Id
}

// conn carries JSON-RPC messages to a target.
type conn interface {
	roundTrip(ctx context.Context, req request) (reply, error)
	// legacyHint says, after a failed handshake, whether the target seems
	// to speak the old HTTP+SSE transport; "" if not.
	legacyHint(ctx context.Context) string
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
	ctx, cancel := context.WithTimeout(context.Background(), min(c.opts.Timeout, 2*time.Second))
	defer cancel()
	if c.opts.pace != nil {
		if err := c.opts.pace(ctx, c.url); err != nil {
			return err
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.url, nil)
	if err != nil {
		return err
	}
	c.setHeaders(req, nil)
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

func (c *httpConn) setHeaders(req *http.Request, protocol http.Header) {
	h := req.Header
	for k, vs := range c.opts.Header {
		h[k] = append([]string(nil), vs...)
	}
	if host := h.Get("Host"); host != "" {
		req.Host = host // net/http sends req.Host, never a Host header
	}
	for k, vs := range protocol {
		h[k] = vs
	}
	if c.session != "" {
		h.Set(hdrSession, c.session)
	}
}

// retryable reports a reply that asks to be retried later: 429, or 503
// with Retry-After (RFC 9110: the service is unavailable for that long).
// A 503 without Retry-After is an ordinary reply.
func retryable(rep reply) bool {
	return rep.status == http.StatusTooManyRequests ||
		rep.status == http.StatusServiceUnavailable && rep.header.Get("Retry-After") != ""
}

func (c *httpConn) roundTrip(ctx context.Context, r request) (reply, error) {
	for attempt := 0; ; attempt++ {
		rep, err := c.once(ctx, r)
		if err != nil || !retryable(rep) || attempt >= c.opts.MaxRetries {
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

// once sends one request and reads its reply. A connection that breaks
// before any byte of the reply came back (reset by a busy server, closed
// as an idle connection just as it was reused) is tried once more, on a
// new connection: the server never answered, so nothing is lost by asking
// again, and the made-up call has nothing to repeat.
func (c *httpConn) once(ctx context.Context, r request) (reply, error) {
	rep, err, broke := c.attempt(ctx, r)
	if err != nil && broke && ctx.Err() == nil {
		var err2 error
		rep, err2, _ = c.attempt(ctx, r)
		if err2 != nil {
			return rep, &transportError{err: err2, retried: true}
		}
		return rep, nil
	}
	if err != nil {
		return rep, &transportError{err: err}
	}
	return rep, nil
}

// attempt sends the request once. broke reports a connection that failed
// before any byte of the reply.
func (c *httpConn) attempt(ctx context.Context, r request) (rep reply, err error, broke bool) {
	if c.opts.pace != nil {
		if err := c.opts.pace(ctx, c.url); err != nil {
			return reply{}, err, false
		}
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	var gotConn, gotByte atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn:              func(httptrace.GotConnInfo) { gotConn.Store(true) },
		GotFirstResponseByte: func() { gotByte.Store(true) },
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(r.body))
	if err != nil {
		return reply{}, err, false
	}
	c.setHeaders(req, r.header)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", acceptBoth)
	resp, err := c.client.Do(req)
	if err != nil {
		broke = !gotByte.Load() && ctx.Err() == nil && failure(err) != Timeout &&
			(gotConn.Load() || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNABORTED) ||
				errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF))
		return reply{}, err, broke
	}
	defer resp.Body.Close()
	if id := resp.Header.Get(hdrSession); id != "" && r.method == "initialize" {
		c.session = id
	}
	rep = reply{status: resp.StatusCode, media: mediaTypeOf(resp.Header.Get("Content-Type")), header: resp.Header, host: req.Host,
		session: req.Header.Get(hdrSession) != ""}
	if rep.host == "" {
		rep.host = req.URL.Host
	}
	rep.body, rep.tooLarge, err = readReply(resp.Body, rep.media, r.id, c.opts.MaxBodyBytes)
	return rep, err, false
}

// transportError is a request that got no reply: it says why in words an
// operator can act on, and keeps the error underneath.
type transportError struct {
	err     error
	retried bool // the connection broke before a reply, twice
}

func (e *transportError) Unwrap() error { return e.err }

func (e *transportError) Error() string {
	var cause string
	var dns *net.DNSError
	inner := e.err
	if ue, ok := inner.(*url.Error); ok {
		inner = ue.Err // without "Post URL:": the report names the target
	}
	switch {
	case failure(e.err) == Timeout:
		cause = "no reply in time"
	case errors.As(e.err, &dns):
		cause = "the host name does not resolve"
	case errors.Is(e.err, syscall.ECONNREFUSED):
		cause = "connection refused: nothing listens there"
	case errors.Is(e.err, syscall.ECONNRESET):
		cause = "the connection was reset before a reply"
	case errors.Is(e.err, io.EOF) || errors.Is(e.err, io.ErrUnexpectedEOF):
		cause = "the server closed the connection before a reply"
	default:
		return inner.Error()
	}
	if e.retried {
		cause += ", on a second connection too"
	}
	return cause + " (" + inner.Error() + ")"
}

// readReply reads a reply body of at most limit bytes; tooLarge reports a
// longer one. An event stream is read until it carries the answer to id,
// since a server may keep it open; it is too large only if the answer is
// not within the limit.
func readReply(body io.Reader, media MediaType, id int64, limit int64) (b []byte, tooLarge bool, err error) {
	lr := io.LimitReader(body, limit+1)
	if media != MediaEventStream || id == 0 {
		b, err = io.ReadAll(lr)
		if int64(len(b)) > limit {
			return b[:limit], true, err
		}
		return b, false, err
	}
	var buf []byte
	chunk := make([]byte, 32<<10)
	scanned := 0 // buf[:scanned] holds whole events without the reply
	for {
		n, err := lr.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if bytes.ContainsAny(chunk[:n], "\r\n") {
			// A new blank line ends in what was just read: look there.
			from := max(scanned, len(buf)-n-3)
			if end := from + completeEvents(buf[from:]); end > from && end > scanned {
				if reply, _ := findInStream(buf[scanned:end], id); reply != nil {
					return buf, false, nil
				}
				scanned = end
			}
		}
		if int64(len(buf)) > limit {
			return buf[:limit], true, nil
		}
		if err == io.EOF {
			return buf, false, nil
		}
		if err != nil {
			return buf, false, err
		}
	}
}

// completeEvents returns the length of b up to its last blank line: the
// events that are whole.
func completeEvents(b []byte) int {
	end := 0
	for _, sep := range []string{"\n\n", "\r\n\r\n", "\r\r"} {
		if i := bytes.LastIndex(b, []byte(sep)); i >= 0 {
			end = max(end, i+len(sep))
		}
	}
	return end
}

// legacyHint asks with a GET whether the target speaks the 2024-11-05
// HTTP+SSE transport: an event stream whose first event is "endpoint".
func (c *httpConn) legacyHint(ctx context.Context) string {
	if c.opts.pace != nil {
		if c.opts.pace(ctx, c.url) != nil {
			return ""
		}
	}
	ctx, cancel := context.WithTimeout(ctx, min(c.opts.Timeout, 3*time.Second))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return ""
	}
	c.setHeaders(req, nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.client.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || mediaTypeOf(resp.Header.Get("Content-Type")) != MediaEventStream {
		return ""
	}
	buf := make([]byte, 0, 4<<10)
	for len(buf) < cap(buf) {
		n, err := resp.Body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if bytes.Contains(buf, []byte("event: endpoint")) || bytes.Contains(buf, []byte("event:endpoint")) {
			return "a GET opened an event stream with an endpoint event: the server seems to speak the old HTTP+SSE transport (2024-11-05), which this checker does not"
		}
		if err != nil {
			break
		}
	}
	return ""
}

// failure maps a transport error to an UNVERIFIED category.
func failure(err error) Category {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return Timeout
	}
	return Unreachable
}
