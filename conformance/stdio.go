package conformance

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/toolguard/toolguard/internal/proc"
)

// A stdio server is ended as a careful wrapper ends it: its standard input
// is closed and it has stdioGrace to exit; then whatever is left of its
// process group (it, or what it started) gets SIGTERM, and stdioTermGrace
// later SIGKILL. See proc.End.
const (
	stdioGrace     = 500 * time.Millisecond
	stdioTermGrace = 500 * time.Millisecond
)

// stdioLine is one line the server wrote to its standard output.
type stdioLine struct {
	b       []byte
	tooLong bool // longer than MaxBodyBytes: dropped whole, b is nil
}

// stdioConn speaks line-delimited JSON-RPC to a child process.
type stdioConn struct {
	cmd        *exec.Cmd
	opts       *Options
	stdin      *os.File // our end of the server's standard input
	stdout     *os.File // our end of its standard output
	stderrR    *os.File // our end of its standard error
	lines      chan stdioLine
	stderr     tailWriter    // the last bytes written to standard error
	stderrDone chan struct{} // closed when standard error reaches its end
	done       chan struct{} // closed by close
	once       sync.Once
	heard      bool // a line has come from the server's standard output
}

func startStdio(argv []string, opts *Options) (*stdioConn, error) {
	if len(argv) == 0 {
		return nil, errors.New("empty stdio command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if len(opts.Env) > 0 {
		cmd.Env = append(os.Environ(), opts.Env...)
	}
	proc.OwnGroup(cmd)
	c := &stdioConn{cmd: cmd, opts: opts, lines: make(chan stdioLine, 16),
		stderrDone: make(chan struct{}), done: make(chan struct{})}
	c.stderr.n = 4 << 10
	// Pipes of our own, not exec's: their ends support deadlines, and
	// exec starts no copying goroutine that Wait would wait for.
	var child []*os.File
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		return
	}
	var err error
	var inR, outW, errW *os.File
	defer func() {
		for _, f := range child {
			f.Close()
		}
	}()
	if inR, c.stdin, err = pipe(); err != nil {
		return nil, err
	}
	child = append(child, inR)
	if c.stdout, outW, err = pipe(); err != nil {
		c.stdin.Close()
		return nil, err
	}
	child = append(child, outW)
	if c.stderrR, errW, err = pipe(); err != nil {
		c.stdin.Close()
		c.stdout.Close()
		return nil, err
	}
	child = append(child, errW)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		c.stdin.Close()
		c.stdout.Close()
		c.stderrR.Close()
		return nil, err
	}
	go c.readStdout()
	go c.readStderr()
	return c, nil
}

func (c *stdioConn) readStdout() {
	defer close(c.lines)
	br := bufio.NewReaderSize(c.stdout, 64<<10)
	for {
		line, err := readLine(br, c.opts.MaxBodyBytes)
		if line.tooLong || len(bytes.TrimSpace(line.b)) > 0 {
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
}

func (c *stdioConn) readStderr() {
	defer close(c.stderrDone)
	buf := make([]byte, 4<<10)
	for {
		n, err := c.stderrR.Read(buf)
		c.stderr.Write(buf[:n])
		if err != nil {
			return
		}
	}
}

// readLine reads one line. A line longer than limit is read to its end and
// dropped whole: only the fact that it was too long is kept.
func readLine(br *bufio.Reader, limit int64) (stdioLine, error) {
	var line []byte
	tooLong := false
	for {
		frag, err := br.ReadSlice('\n')
		if !tooLong {
			line = append(line, frag...)
			if int64(len(bytes.TrimRight(line, "\r\n"))) > limit {
				tooLong, line = true, nil
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if tooLong {
			return stdioLine{tooLong: true}, err
		}
		return stdioLine{b: bytes.TrimRight(line, "\r\n")}, err
	}
}

func (c *stdioConn) roundTrip(ctx context.Context, r request) (reply, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	if err := c.write(ctx, r.body); err != nil {
		return reply{}, err
	}
	if r.id == 0 {
		return reply{}, nil
	}
	// One channel carries the answers to every message sent: an answer
	// with a null id or none (to a notification, or to a line the server
	// could not read) may come before the one with the request's id, and
	// is taken only if that one does not come within nullGrace; one that
	// names a notification ("Method not found: notifications/initialized")
	// never.
	var stray stdioStray
	var null []byte
	var grace <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			if null != nil {
				return reply{body: null}, nil
			}
			return reply{}, stray.timedOut(ctx.Err(), c.opts.Timeout, c.heard)
		case <-grace:
			return reply{body: null}, nil
		case line, ok := <-c.lines:
			c.heard = c.heard || ok
			if !ok {
				if null != nil {
					return reply{body: null}, nil
				}
				return reply{}, c.wentAway(ctx)
			}
			if line.tooLong {
				// It may be the reply: it is not classified from a part.
				return reply{tooLarge: true}, nil
			}
			switch m, notRPC := answers(line.b, r.id); {
			case m == idMatch:
				return reply{body: line.b}, nil
			case m == nullMatch && null == nil && !bytes.Contains(line.b, []byte(`notifications/`)):
				// (one that names a notification answers that notification)
				null = line.b
				t := time.NewTimer(cmp.Or(c.opts.nullGrace, nullGrace))
				defer t.Stop()
				grace = t.C
			case notRPC && !isBatch(line.b):
				stray.see(line.b)
			case m == noMatch:
				c.answerRequest(ctx, line.b)
			}
		}
	}
}

// nullGrace is how long an answer with a null id or none waits for the
// answer with the request's id.
const nullGrace = time.Second

// write writes one message, as a line. A server that does not read its
// input does not hold the write beyond ctx's deadline.
func (c *stdioConn) write(ctx context.Context, msg []byte) error {
	stop := context.AfterFunc(ctx, func() { c.stdin.SetWriteDeadline(time.Now()) })
	_, err := c.stdin.Write(append(bytes.TrimSpace(msg), '\n'))
	stop()
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("writing to the server: %w", ctx.Err())
	}
	return c.wentAway(ctx)
}

// answerRequest answers a request a server sends a client, as a client
// must: a ping with an empty result; roots, sampling and elicitation
// with -32601 (the checker offers no capabilities). A server may wait for
// the answer before it answers the checker. Anything else needs none:
// notifications, and a method a client sends (a server that echoes the
// checker's own lines gets no answer to echo back). It is best effort: a
// server that is gone shows in c.lines.
func (c *stdioConn) answerRequest(ctx context.Context, line []byte) {
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  *string         `json:"method"`
	}
	if json.Unmarshal(line, &m) != nil || m.JSONRPC != "2.0" || m.Method == nil || len(m.ID) == 0 || string(m.ID) == "null" {
		return
	}
	answer := `,"error":{"code":-32601,"message":"Method not found"}}`
	switch prefix, _, _ := strings.Cut(*m.Method, "/"); {
	case *m.Method == "ping":
		answer = `,"result":{}}`
	case prefix != "roots" && prefix != "sampling" && prefix != "elicitation":
		return
	}
	var id bytes.Buffer
	json.Compact(&id, m.ID) // one line, whatever the server's spacing
	_ = c.write(ctx, []byte(`{"jsonrpc":"2.0","id":`+id.String()+answer))
}

// stdioStray counts the lines a server wrote on its standard output while
// a request waited that are not JSON-RPC messages (log output, a banner):
// over stdio, standard output carries only messages, and a server that
// logs there is the usual reason no reply is found in time.
type stdioStray struct {
	n     int
	first string
}

func (s *stdioStray) see(line []byte) {
	if s.n++; s.n == 1 {
		s.first = strings.ToValidUTF8(string(line[:min(len(line), 120)]), "")
	}
}

// isBatch reports whether line is a JSON-RPC batch: JSON-RPC, though no
// answer to one request (MCP has had no batches since 2025-06-18).
func isBatch(line []byte) bool {
	var batch []struct {
		JSONRPC *string `json:"jsonrpc"`
	}
	if json.Unmarshal(line, &batch) != nil || len(batch) == 0 {
		return false
	}
	for _, m := range batch {
		if m.JSONRPC == nil {
			return false
		}
	}
	return true
}

// timedOut is the error for a request that got no reply before ctx ended
// (err, ctx's): what the server wrote meanwhile, if anything, and, past
// timeout, whether it has written anything at all (heard).
func (s *stdioStray) timedOut(err error, timeout time.Duration, heard bool) error {
	switch {
	case s.n > 0:
	case !errors.Is(err, context.DeadlineExceeded):
		return err
	case !heard:
		return fmt.Errorf("%w: nothing on the server's stdout in %v (a server that npx or uvx starts may still be installing: a second run, or a longer timeout, tells)", err, timeout)
	default:
		return fmt.Errorf("%w: no reply in %v", err, timeout)
	}
	return fmt.Errorf("%w: no reply, and %d line(s) on the server's stdout that are not JSON-RPC (the first: %q); over stdio, stdout must carry only JSON-RPC messages (logs go to stderr)", err, s.n, s.first)
}

// wentAway is the error for a server whose pipes broke: one message, with
// the last line it wrote to standard error, whichever pipe broke first.
func (c *stdioConn) wentAway(ctx context.Context) error {
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select { // let standard error reach its end
	case <-c.stderrDone:
	case <-t.C:
	case <-ctx.Done():
	}
	if line, isErr := c.stderr.tellingLine(); isErr {
		return fmt.Errorf("the server went away (its last error on stderr: %q)", line)
	} else if line != "" {
		return fmt.Errorf("the server went away (its last line on stderr: %q)", line)
	}
	return errors.New("the server went away (nothing on stderr)")
}

func (c *stdioConn) close() error {
	var err error
	c.once.Do(func() {
		close(c.done)
		c.stdin.Close()
		exited := make(chan error, 1)
		go func() { exited <- c.cmd.Wait() }()
		grace, termGrace := stdioGrace, stdioTermGrace
		if c.opts.stdioGrace > 0 {
			grace = c.opts.stdioGrace
		}
		if c.opts.stdioTermGrace > 0 {
			termGrace = c.opts.stdioTermGrace
		}
		err = proc.End(c.cmd, exited, grace, termGrace)
		// Standard error reaches its end once nothing of the group holds
		// it; a process that left the group (setsid) is not ours to end.
		select {
		case <-c.stderrDone:
		case <-time.After(100 * time.Millisecond):
		}
		c.stdout.Close()
		c.stderrR.Close()
	})
	return err
}

// tailWriter keeps the last n bytes written to it.
type tailWriter struct {
	mu  sync.Mutex
	buf []byte
	n   int
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.n {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.n:]...)
	}
	return len(p), nil
}

// tellingLine returns the line of what was written that says most of why
// a server went away, at most 300 bytes: the last that names an error
// ("Error: Cannot find module", "ModuleNotFoundError: ...", "panic: ..."),
// isErr true, since a runtime may write more after it (a stack, Node's
// "Node.js v20.20.2"); else the last non-blank line.
func (t *tailWriter) tellingLine() (line string, isErr bool) {
	t.mu.Lock()
	lines := strings.FieldsFunc(string(t.buf), func(r rune) bool { return r == '\n' || r == '\r' })
	t.mu.Unlock()
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" {
			continue
		}
		if line == "" {
			line = l
		}
		if namesError.MatchString(l) {
			line, isErr = l, true
			break
		}
	}
	if len(line) > 300 {
		line = line[:300] + "…"
	}
	return line, isErr
}

// namesError matches a line that names an error, as runtimes and loggers
// begin one: a word ending in error or exception, perhaps with a code,
// and a colon; "panic:"; "fatal:".
var namesError = regexp.MustCompile(`(?i)\b(\w*(error|exception)( \[\w+\])?|panic|fatal):\s`)

// legacyHint: the HTTP+SSE transport does not exist over stdio.
func (c *stdioConn) legacyHint(context.Context) string { return "" }
