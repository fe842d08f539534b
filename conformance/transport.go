package conformance

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
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

// stdioConn speaks line-delimited JSON-RPC to a child process.
type stdioConn struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte
	done   chan struct{}
	stderr limitedWriter // the first 64 KiB the server writes to stderr
	once   sync.Once
	limit  int64
}

func startStdio(argv []string, opts *Options) (*stdioConn, error) {
	if len(argv) == 0 {
		return nil, errors.New("conformance: empty stdio command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	c := &stdioConn{cmd: cmd, lines: make(chan []byte, 16), done: make(chan struct{}), limit: opts.MaxBodyBytes}
	c.stderr.n = 64 << 10
	cmd.Stderr = &c.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c.stdin = stdin
	go func() {
		defer close(c.lines)
		br := bufio.NewReaderSize(stdout, 64<<10)
		for {
			line, err := readLine(br, c.limit)
			if len(bytes.TrimSpace(line)) > 0 {
				select {
				case c.lines <- line:
				case <-c.done:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return c, nil
}

// readLine reads one line of at most limit bytes; the rest of a longer line
// is dropped.
func readLine(br *bufio.Reader, limit int64) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if int64(len(line)+len(frag)) <= limit {
			line = append(line, frag...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), err
	}
}

func (c *stdioConn) roundTrip(ctx context.Context, r request) (reply, error) {
	if _, err := c.stdin.Write(append(bytes.TrimSpace(r.body), '\n')); err != nil {
		return reply{}, fmt.Errorf("conformance: writing to the server: %w", err)
	}
	if r.id == 0 {
		return reply{media: MediaJSON}, nil
	}
	for {
		select {
		case <-ctx.Done():
			return reply{}, ctx.Err()
		case line, ok := <-c.lines:
			if !ok {
				msg := strings.TrimSpace(c.stderr.String())
				if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
					msg = msg[i+1:] // the last line says most
				}
				return reply{}, fmt.Errorf("the server closed its output (stderr: %q)", msg)
			}
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method *string         `json:"method"`
			}
			if json.Unmarshal(line, &msg) != nil {
				continue // log output on stdout
			}
			if msg.Method != nil || msg.ID == nil || !idMatches(msg.ID, r.id, true) {
				continue // a notification, a request from the server, or another answer
			}
			return reply{media: MediaJSON, body: line}, nil
		}
	}
}

func (c *stdioConn) close() error {
	c.once.Do(func() { close(c.done) })
	c.stdin.Close()
	exited := make(chan error, 1)
	go func() { exited <- c.cmd.Wait() }()
	select {
	case err := <-exited:
		return err
	case <-time.After(2 * time.Second):
		c.cmd.Process.Kill()
		return <-exited
	}
}

// limitedWriter keeps the first n bytes written to it.
type limitedWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
	n   int64
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n > 0 {
		k := min(int64(len(p)), l.n)
		l.buf.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

func (l *limitedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// failure maps a transport error to an UNVERIFIED category.
func failure(err error) Category {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return Timeout
	}
	return Unreachable
}
