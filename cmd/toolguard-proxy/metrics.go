package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	runtimemetrics "runtime/metrics"
	"sync/atomic"
	"time"

	"github.com/toolguard/toolguard/internal/cmdlog"
	"github.com/toolguard/toolguard/internal/stats"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// What an operator reads of the proxy: -metrics-listen serves the counts
// in the Prometheus text format (/metrics) and the health (/health), on a
// listener of its own, never on the proxied path. Every count is learnt
// from the guard's hooks (OnPass, OnReject) and the proxy's own transport
// and error handler: nothing reads the traffic a second time, and nothing
// asks the upstream anything. docs/OBSERVE.md lists the families.

// observeFlags adds the flags of the metrics and the log to fs.
func observeFlags(fs *flag.FlagSet, c *config) {
	fs.StringVar(&c.metricsListen, "metrics-listen", "", "serve /metrics (the Prometheus text format) and /health on this `address`, apart from the proxied path (default: none)")
	fs.DurationVar(&c.healthWindow, "health-window", 5*time.Minute, "/health says the upstream answered recently when its last answer is no older than this")
	fs.StringVar(&c.logFormat, "log-format", "text", "the log's format: text (one sentence a line) or json (one object a line, with the fields of docs/OBSERVE.md)")
}

// Request kinds and outcomes, as the metrics name them.
const (
	kindCall = iota
	kindList
	kindOther
	kinds
)

const (
	outcomeKnown = iota // a tools/call the upstream answered itself
	outcomeTranslated
	outcomeAnswered // by the guard before the upstream (-32020)
	outcomePassed
	outcomeFailed // the upstream could not be reached or did not answer
	outcomes
)

var (
	kindNames    = [kinds]string{"tools/call", "tools/list", "other"}
	outcomeNames = [outcomes]string{"known", "translated", "answered", "passed", "upstream-failed"}
)

// requestSeries are the outcomes each kind can have: the series written.
var requestSeries = [kinds][]int{
	kindCall:  {outcomeKnown, outcomeTranslated, outcomeAnswered, outcomeFailed},
	kindList:  {outcomePassed, outcomeFailed},
	kindOther: {outcomePassed, outcomeFailed},
}

// failureCauses are failure.short's values, by status.
var failureCauses = []struct {
	status int
	cause  string
}{
	{502, "refused"}, {502, "unresolved"}, {502, "unreachable"}, {502, "tls"}, {502, "closed"}, {502, "caller-gone"}, {502, "other"},
	{504, "timeout"}, {504, "caller-deadline"},
}

// maxReasons bounds toolguard.Reason's values (there are 18).
const maxReasons = 64

// metrics are the proxy's counts. Every label value is from a fixed set,
// but the unknown tool names, of which stats.Answers keeps a fixed number.
type metrics struct {
	now    func() time.Time
	window time.Duration

	answers    *stats.Answers
	requests   [kinds][outcomes]atomic.Uint64
	passed     [maxReasons]atomic.Uint64
	failures   []atomic.Uint64 // as failureCauses
	latency    *stats.Histogram
	lastAnswer atomic.Int64 // Unix nanoseconds of the upstream's last answer; 0: none yet
}

func newMetrics(now func() time.Time, window time.Duration) *metrics {
	return &metrics{now: now, window: window, answers: stats.NewAnswers(),
		failures: make([]atomic.Uint64, len(failureCauses)), latency: stats.NewHistogram(stats.LatencyBuckets)}
}

// passedFor counts a pass-through for reason.
func (m *metrics) passedFor(reason toolguard.Reason) {
	if reason > 0 && reason < maxReasons {
		m.passed[reason].Add(1)
	}
}

// failed counts an upstream failure.
func (m *metrics) failed(f *failure) {
	for i, fc := range failureCauses {
		if fc.status == f.status && fc.cause == f.short {
			m.failures[i].Add(1)
			return
		}
	}
}

// request counts a request once its answer starts: its kind is what the
// guard read of it (pass.Method), its outcome what came of it.
func (m *metrics) request(pass *toolguard.Pass, answered *toolguard.Rejection, failed *failure) {
	kind := kindOther
	switch {
	case answered != nil:
		kind = kindCall
	case pass == nil:
	case pass.Method == "tools/call":
		kind = kindCall
	case pass.Method == "tools/list":
		kind = kindList
	}
	outcome := outcomePassed
	switch {
	case answered != nil && answered.Translated:
		outcome = outcomeTranslated
	case answered != nil:
		outcome = outcomeAnswered
	case failed != nil:
		outcome = outcomeFailed
	case kind == kindCall:
		outcome = outcomeKnown
	}
	m.requests[kind][outcome].Add(1)
}

// metricsTransport times the upstream's answers (to their status line) and notes
// the last one, for /health.
type metricsTransport struct {
	base http.RoundTripper
	m    *metrics
}

func (t metricsTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	start := t.m.now()
	resp, err := t.base.RoundTrip(r)
	if err == nil {
		now := t.m.now()
		t.m.latency.Observe(now.Sub(start))
		t.m.lastAnswer.Store(now.UnixNano())
	}
	return resp, err
}

// the families of /metrics and -stats, in order.
func (m *metrics) write(w *stats.Writer) {
	w.Head("toolguard_requests_total", "counter", "Requests by kind (what the guard read: tools/call, tools/list, other) and outcome: known (a tools/call the upstream answered itself), translated, answered (by the guard, -32020), passed, upstream-failed.")
	for k, os := range requestSeries {
		for _, o := range os {
			w.Uint("toolguard_requests_total", m.requests[k][o].Load(), "kind", kindNames[k], "outcome", outcomeNames[o])
		}
	}
	w.Head("toolguard_passed_total", "counter", "Requests the guard passed through, by its reason (docs/RULES.md).")
	for r := toolguard.Reason(1); r < maxReasons && r.String() != "unknown"; r++ {
		w.Uint("toolguard_passed_total", m.passed[r].Load(), "reason", r.String())
	}
	m.answers.Write(w)
	w.Head("toolguard_upstream_failures_total", "counter", "Requests the upstream could not be asked or did not answer in time, by the status the caller got (502, 504) and the cause.")
	for i, fc := range failureCauses {
		w.Uint("toolguard_upstream_failures_total", m.failures[i].Load(), "status", fmt.Sprint(fc.status), "cause", fc.cause)
	}
	m.latency.Write(w, "toolguard_upstream_response_seconds", "How long the upstream took to begin its answer (its status line; an event stream begins at once).")
	w.Head("toolguard_upstream_last_answer_timestamp_seconds", "gauge", "When the upstream last answered (Unix time); 0 before its first answer.")
	w.Float("toolguard_upstream_last_answer_timestamp_seconds", float64(m.lastAnswer.Load())/1e9)
	writeRuntime(w)
}

// runtimeSamples are the Go runtime's figures /metrics shows, named as
// the Prometheus Go client names them.
var runtimeSamples = []struct{ name, key, typ, help string }{
	{"go_goroutines", "/sched/goroutines:goroutines", "gauge", "Goroutines that currently exist."},
	{"go_gc_heap_live_bytes", "/gc/heap/live:bytes", "gauge", "Heap memory occupied by live objects, as of the last garbage collection."},
	{"go_memory_classes_total_bytes", "/memory/classes/total:bytes", "gauge", "All memory mapped by the Go runtime."},
}

func writeRuntime(w *stats.Writer) {
	s := make([]runtimemetrics.Sample, len(runtimeSamples))
	for i, r := range runtimeSamples {
		s[i].Name = r.key
	}
	runtimemetrics.Read(s)
	for i, r := range runtimeSamples {
		if s[i].Value.Kind() == runtimemetrics.KindUint64 {
			w.Head(r.name, r.typ, r.help)
			w.Uint(r.name, s[i].Value.Uint64())
		}
	}
}

// health is what /health answers.
type health struct {
	Alive            bool       `json:"alive"`
	UpstreamRecently bool       `json:"upstream_answered_recently"`
	LastAnswer       *time.Time `json:"last_upstream_answer"` // null before the first
	SecondsSince     *float64   `json:"seconds_since_last_answer"`
	WindowSeconds    float64    `json:"window_seconds"`
}

func (m *metrics) health() health {
	h := health{Alive: true, WindowSeconds: m.window.Seconds()}
	if ns := m.lastAnswer.Load(); ns != 0 {
		at := time.Unix(0, ns).UTC()
		since := m.now().Sub(at)
		secs := since.Seconds()
		h.LastAnswer, h.SecondsSince = &at, &secs
		h.UpstreamRecently = since <= m.window
	}
	return h
}

// handler serves /metrics, /health and /health/upstream (503 unless the
// upstream answered within the window: for a readiness probe).
func (m *metrics) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", stats.ContentType)
		m.write(stats.NewWriter(w))
	})
	serveHealth := func(w http.ResponseWriter, h health, status int) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(h)
	}
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		serveHealth(w, m.health(), http.StatusOK)
	})
	mux.HandleFunc("GET /health/upstream", func(w http.ResponseWriter, r *http.Request) {
		h, status := m.health(), http.StatusOK
		if !h.UpstreamRecently {
			status = http.StatusServiceUnavailable
		}
		serveHealth(w, h, status)
	})
	return mux
}

// serveMetrics serves c.metrics on -metrics-listen, and returns the
// function that stops it.
func serveMetrics(c *config, logger *cmdlog.Logger) (stop func(), err error) {
	if c.metrics == nil {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", c.metricsListen)
	if err != nil {
		return nil, fmt.Errorf("-metrics-listen: %w", err)
	}
	srv := &http.Server{Handler: c.metrics.handler(), ErrorLog: logger.Log(slog.LevelError), ReadHeaderTimeout: 10 * time.Second}
	logger.Event(slog.LevelInfo, "metrics", fmt.Sprintf("metrics on http://%s/metrics, health on http://%s/health", ln.Addr(), ln.Addr()), slog.String("addr", ln.Addr().String()))
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Printf("metrics: %v", err)
		}
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			srv.Close()
		}
	}, nil
}
