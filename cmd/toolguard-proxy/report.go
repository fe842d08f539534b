package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/toolguard/toolguard/internal/cmdlog"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// What the proxy says about each request: at most one log line, written
// when the answer starts (for a call whose answer the guard watches, when
// it ends: after the caller may have read it). It names the upstream and the cause when the
// upstream could not be reached or did not answer in time, and with
// -log-pass why the guard passed the request through, with the tool set's
// error, the status the caller got (the upstream's, for a request that
// reached it) and the Host the request came with.

// reporter writes those lines, and the answers of requests that did not
// reach the upstream.
type reporter struct {
	upstream        string
	logger          *cmdlog.Logger
	logPass         bool
	metrics         *metrics      // nil without -metrics-listen
	upstreamTimeout time.Duration // the transport's ResponseHeaderTimeout
}

// exchange is what is learnt of one caller's request on its way.
type exchange struct {
	mu       sync.Mutex
	pass     *toolguard.Pass // &passed once the guard passed the request
	passed   toolguard.Pass
	answered *toolguard.Rejection // the guard's answer, if it wrote one
	failed   *failure             // the caller's request did not reach the upstream
	done     bool                 // the line is written
}

// failure is an upstream that could not be reached or did not answer.
type failure struct {
	status int
	cause  string
	short  string // the cause in a word, for the metrics and the log's fields
	err    error
}

type exchangeKey struct{}

// wrap reports on every request h serves.
func (rp *reporter) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x := &exchange{}
		r = r.WithContext(context.WithValue(r.Context(), exchangeKey{}, x))
		// The line of a call whose answer the guard watches waits for the
		// answer's end: the server's not-found answer may still be
		// translated (an event stream starts before it), and then the
		// translation's line is the one.
		// Written even when the answer is aborted (a stream the upstream
		// broke panics with http.ErrAbortHandler).
		status, postponed := 0, false
		defer func() {
			if postponed {
				rp.report(r, x, status)
			}
		}()
		sw := &statusWriter{ResponseWriter: w, start: func(s int) {
			if x.watched() {
				status, postponed = s, true
				return
			}
			rp.report(r, x, s)
		}}
		h.ServeHTTP(sw, r)
		sw.started(http.StatusOK) // nothing written: net/http sends 200
	})
}

// onPass records the guard's pass-through for the line.
func (rp *reporter) onPass(r *http.Request, p toolguard.Pass) {
	if rp.metrics != nil {
		rp.metrics.passedFor(p.Reason)
	}
	if x, ok := r.Context().Value(exchangeKey{}).(*exchange); ok {
		x.mu.Lock()
		x.passed = p
		x.pass = &x.passed // no allocation of its own
		x.mu.Unlock()
	}
}

// watched reports whether the request is a call the guard passed on to
// the server watching for its not-found answer.
func (x *exchange) watched() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.answered == nil && x.pass != nil && x.pass.Reason.Watched()
}

// onReject notes that the guard answered r (its server's not-found answer
// translated, or -32020): it is not a pass-through.
func (rp *reporter) onReject(r *http.Request, rej *toolguard.Rejection) {
	if x, ok := r.Context().Value(exchangeKey{}).(*exchange); ok {
		x.mu.Lock()
		x.answered = rej
		x.mu.Unlock()
	}
	if rp.metrics != nil {
		rp.metrics.answers.Count(rej)
	}
}

// report writes the line for r, whose answer starts with status.
func (rp *reporter) report(r *http.Request, x *exchange, status int) {
	x.mu.Lock()
	x.done = true
	pass, answered, failed := x.pass, x.answered, x.failed
	x.mu.Unlock()
	if rp.metrics != nil {
		rp.metrics.request(pass, answered, failed)
	}
	if !rp.logPass || answered != nil {
		pass = nil // its line is the answer's
	}
	var parts []string
	var attrs []slog.Attr
	if failed != nil {
		parts = append(parts, fmt.Sprintf("upstream %s %s (%v): answered %d to %s %s from %s", rp.upstream, failed.cause, failed.err, failed.status, r.Method, r.URL.Path, r.RemoteAddr))
		attrs = append(attrs, slog.String("upstream", rp.upstream), slog.String("cause", failed.short), slog.String("err", failed.err.Error()), slog.Int("status", failed.status))
	}
	if pass != nil { // with -log-pass
		if failed == nil {
			attrs = append(attrs, slog.Int("status", status))
		}
		attrs = append(attrs, slog.String("reason", pass.Reason.String()))
		if pass.Tool != "" {
			attrs = append(attrs, slog.String("tool", pass.Tool))
		}
		if pass.Err != nil {
			attrs = append(attrs, slog.String("list_err", pass.Err.Error()))
		}
		attrs = append(attrs, slog.String("host", r.Host))
		s := "passed through"
		if failed == nil {
			s += fmt.Sprintf(" %s %s from %s", r.Method, r.URL.Path, r.RemoteAddr)
		}
		s += fmt.Sprintf(": reason=%s", pass.Reason)
		if pass.Tool != "" {
			s += fmt.Sprintf(" tool=%q", pass.Tool)
		}
		if pass.Err != nil {
			s += fmt.Sprintf(" err=%q", pass.Err.Error())
		}
		if failed == nil {
			s += fmt.Sprintf(" status=%d (the upstream's)", status)
		}
		parts = append(parts, s+fmt.Sprintf(" host=%q", r.Host))
	}
	if len(parts) == 0 {
		return
	}
	attrs = append(attrs, slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("remote", r.RemoteAddr))
	event, level := "passed", slog.LevelInfo
	if failed != nil {
		event, level = "upstream-failed", slog.LevelWarn
	}
	rp.logger.Event(level, event, strings.Join(parts, "; "), attrs...)
}

// logAnswer writes the line of an answer the guard wrote (without -quiet).
func (rp *reporter) logAnswer(r *http.Request, rej *toolguard.Rejection, c *config) {
	attrs := []slog.Attr{slog.String("tool", rej.Name), slog.String("remote", r.RemoteAddr), slog.Int("status", rej.Status), slog.Int("code", rej.Code)}
	switch {
	case rej.Code == toolguard.CodeHeaderMismatch:
		rp.logger.Event(slog.LevelInfo, "rejected", fmt.Sprintf("rejected a call of %q from %s (HTTP %d, -32020: its Mcp-Method or Mcp-Name header does not match the body; the upstream was not asked)", rej.Name, r.RemoteAddr, rej.Status), attrs...)
	case rej.ListErr != nil:
		text := listErrText(rej.ListErr, c)
		rp.logger.Event(slog.LevelInfo, "translated", fmt.Sprintf("translated the upstream's not-found answer for tool %q to %s (HTTP %d) without data.availableTools: %v", rej.Name, r.RemoteAddr, rej.Status, text), append(attrs, slog.Bool("list", false), slog.String("list_err", text))...)
	default:
		rp.logger.Event(slog.LevelInfo, "translated", fmt.Sprintf("translated the upstream's not-found answer for tool %q to %s (HTTP %d)", rej.Name, r.RemoteAddr, rej.Status), append(attrs, slog.Bool("list", true))...)
	}
}

// proxyError is the reverse proxy's ErrorHandler: the upstream could not
// be reached or did not answer. The caller gets 502 or 504 with a short
// body naming the cause (never the upstream's address); the log line
// names both.
func (rp *reporter) proxyError(w http.ResponseWriter, r *http.Request, err error) {
	f := rp.classify(r, err)
	if rp.metrics != nil {
		rp.metrics.failed(f)
	}
	if x, ok := r.Context().Value(exchangeKey{}).(*exchange); ok {
		x.mu.Lock()
		if !x.done {
			x.failed = f
		}
		x.mu.Unlock()
	}
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(f.status)
	io.WriteString(w, "toolguard-proxy: the upstream "+f.cause+"\n")
}

// classify names why err kept the request from the upstream, and the
// status it gets: 504 when the upstream did not answer in time, else 502.
func (rp *reporter) classify(r *http.Request, err error) *failure {
	f := &failure{status: http.StatusBadGateway, err: err}
	var (
		dnsErr  *net.DNSError
		opErr   *net.OpError
		netErr  net.Error
		certErr *tls.CertificateVerificationError
		recErr  tls.RecordHeaderError
	)
	switch {
	case errors.Is(err, context.Canceled) && r.Context().Err() != nil:
		f.cause, f.short = "had not answered when the caller went away", "caller-gone"
	case errors.Is(r.Context().Err(), context.DeadlineExceeded): // the caller's deadline
		f.status = http.StatusGatewayTimeout
		f.cause, f.short = "did not answer in time", "caller-deadline"
	case errors.As(err, &dnsErr):
		f.cause, f.short = fmt.Sprintf("cannot be reached: its host name %q does not resolve", dnsErr.Name), "unresolved"
	case errors.Is(err, syscall.ECONNREFUSED):
		f.cause, f.short = "cannot be reached: connection refused", "refused"
	case errors.As(err, &opErr) && opErr.Op == "dial":
		f.cause, f.short = "cannot be reached: "+opErr.Err.Error(), "unreachable"
	case errors.As(err, &netErr) && netErr.Timeout(), errors.Is(err, context.DeadlineExceeded):
		f.status = http.StatusGatewayTimeout
		f.cause, f.short = fmt.Sprintf("did not answer within %v (-upstream-timeout)", rp.upstreamTimeout), "timeout"
	case errors.As(err, &certErr), errors.As(err, &recErr):
		f.cause, f.short = "failed the TLS handshake", "tls"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		f.cause, f.short = "closed the connection without answering", "closed"
	default:
		f.cause, f.short = "could not be asked", "other"
	}
	return f
}

// statusWriter calls start once, with the status of the answer, when it
// starts. Flush and the rest of http.ResponseController reach the
// ResponseWriter it wraps, so event streams and upgrades work as without it.
type statusWriter struct {
	http.ResponseWriter
	start func(status int)
	once  sync.Once
}

func (w *statusWriter) started(status int) { w.once.Do(func() { w.start(status) }) }

func (w *statusWriter) WriteHeader(status int) {
	if status >= 200 || status == http.StatusSwitchingProtocols {
		w.started(status)
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	w.started(http.StatusOK)
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) Flush() {
	w.started(http.StatusOK)
	http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
