package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolguard/toolguard/internal/cmdlog"
	"github.com/toolguard/toolguard/internal/fixture"
)

// clock is a clock the test moves.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// observed serves the proxy for args in front of upstream with metrics on
// a clock the test moves, and returns its URL, the metrics' URL, the
// clock and the log, written in format.
func observed(t *testing.T, upstream, format string, args ...string) (url, metricsURL string, clk *clock, logged *fixture.SyncBuffer) {
	t.Helper()
	c, err := parse(append([]string{"-upstream", upstream, "-metrics-listen", "127.0.0.1:0", "-log-format", format}, args...))
	if err != nil {
		t.Fatal(err)
	}
	clk = &clock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	c.metrics.now = clk.now
	logged = &fixture.SyncBuffer{}
	lg, err := cmdlog.New(logged, c.logFormat, "toolguard-proxy")
	if err != nil {
		t.Fatal(err)
	}
	h, err := handler(c, lg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	msrv := httptest.NewServer(c.metrics.handler())
	t.Cleanup(msrv.Close)
	return srv.URL + "/mcp", msrv.URL, clk, logged
}

// scrape returns the metrics' samples, line by line, without comments.
func scrape(t *testing.T, metricsURL string) map[string]string {
	t.Helper()
	resp, err := http.Get(metricsURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type %q", ct)
	}
	samples := map[string]string{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line := sc.Text(); !strings.HasPrefix(line, "#") {
			i := strings.LastIndexByte(line, ' ')
			samples[line[:i]] = line[i+1:]
		}
	}
	return samples
}

// TestMetricsCountWhatTheGuardDecided: a tools/list, a known call, an
// unknown call after the list and one before it (from another caller)
// are counted by kind and outcome, by the guard's reason, as translated
// answers with and without the list, and by the unknown name; the
// upstream's answers are timed.
func TestMetricsCountWhatTheGuardDecided(t *testing.T) {
	var hosts []string
	up := httptest.NewServer(fakeUpstream(&hosts))
	defer up.Close()
	url, metricsURL, _, _ := observed(t, up.URL+"/mcp", "text")
	post(t, url, "", `{"jsonrpc":"2.0","id":0,"method":"tools/list"}`)
	post(t, url, "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`)
	post(t, url, "", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ech0"}}`)
	post(t, url, "", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ech0","_meta":{"x":1}}}`)
	post(t, url, "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	got := scrape(t, metricsURL)
	for series, want := range map[string]string{
		`toolguard_requests_total{kind="tools/call",outcome="known"}`:      "1",
		`toolguard_requests_total{kind="tools/call",outcome="translated"}`: "2",
		`toolguard_requests_total{kind="tools/list",outcome="passed"}`:     "1",
		`toolguard_requests_total{kind="other",outcome="passed"}`:          "1",
		`toolguard_passed_total{reason="to-server"}`:                       "3",
		`toolguard_passed_total{reason="not-tools-call"}`:                  "1",
		`toolguard_passed_total{reason="not-request"}`:                     "1",
		`toolguard_translated_total{list="yes"}`:                           "1",
		`toolguard_translated_total{list="no"}`:                            "1",
		`toolguard_unknown_tool_calls_total`:                               "2",
		`toolguard_unknown_tool_calls{tool="ech0"}`:                        "2",
		`toolguard_unknown_tool_calls_other`:                               "0",
		`toolguard_upstream_response_seconds_count`:                        "5",
		`toolguard_upstream_failures_total{status="502",cause="refused"}`:  "0",
	} {
		if got[series] != want {
			t.Errorf("%s = %q, want %s", series, got[series], want)
		}
	}
}

// TestMetricsCountUpstreamFailuresByCause: a refused connection is a
// 502 "refused", and the request's outcome upstream-failed.
func TestMetricsCountUpstreamFailuresByCause(t *testing.T) {
	url, metricsURL, _, _ := observed(t, "http://"+fixture.FreeAddr(t)+"/mcp", "text")
	for _, body := range []string{initialize, unknownCall} {
		if status, _ := send(t, url, "", body); status != http.StatusBadGateway {
			t.Fatalf("%d, want 502", status)
		}
	}
	got := scrape(t, metricsURL)
	for series, want := range map[string]string{
		`toolguard_upstream_failures_total{status="502",cause="refused"}`:       "2",
		`toolguard_upstream_failures_total{status="504",cause="timeout"}`:       "0",
		`toolguard_requests_total{kind="tools/call",outcome="upstream-failed"}`: "1",
		`toolguard_requests_total{kind="other",outcome="upstream-failed"}`:      "1",
		`toolguard_upstream_response_seconds_count`:                             "0",
		`toolguard_upstream_last_answer_timestamp_seconds`:                      "0",
	} {
		if got[series] != want {
			t.Errorf("%s = %q, want %s", series, got[series], want)
		}
	}
}

// healthOf returns /health's or /health/upstream's status and answer.
func healthOf(t *testing.T, url string) (int, health) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h health
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, h
}

// TestHealthSaysWhetherTheUpstreamAnsweredRecently: /health is 200 while
// the proxy runs; it and /health/upstream (503 otherwise) say whether
// the upstream's last answer, to a caller's request, is within
// -health-window of now. Nothing asks the upstream.
func TestHealthSaysWhetherTheUpstreamAnsweredRecently(t *testing.T) {
	var hosts []string
	up := httptest.NewServer(fakeUpstream(&hosts))
	defer up.Close()
	url, metricsURL, clk, _ := observed(t, up.URL+"/mcp", "text", "-health-window", "1m")
	check := func(when string, wantRecent bool) {
		t.Helper()
		status, h := healthOf(t, metricsURL+"/health")
		if status != http.StatusOK || !h.Alive || h.UpstreamRecently != wantRecent || h.WindowSeconds != 60 {
			t.Errorf("%s: /health %d %+v", when, status, h)
		}
		want := http.StatusServiceUnavailable
		if wantRecent {
			want = http.StatusOK
		}
		if status, _ := healthOf(t, metricsURL+"/health/upstream"); status != want {
			t.Errorf("%s: /health/upstream %d, want %d", when, status, want)
		}
	}
	check("before any request", false)
	if len(hosts) != 0 {
		t.Fatalf("the upstream was asked %d times", len(hosts))
	}
	post(t, url, "", initialize)
	check("just after an answer", true)
	clk.advance(59 * time.Second)
	check("59s after", true)
	clk.advance(2 * time.Second)
	check("61s after", false)
	if _, h := healthOf(t, metricsURL+"/health"); h.SecondsSince == nil || *h.SecondsSince != 61 || h.LastAnswer == nil {
		t.Errorf("%+v", h)
	}
	if len(hosts) != 1 {
		t.Errorf("the upstream was asked %d times, want the caller's once", len(hosts))
	}
}

// TestJSONLogLinesHaveTheirFields: with -log-format json every line is
// one JSON object, and the lines of a translated answer, a pass-through
// and an upstream failure carry their documented fields.
func TestJSONLogLinesHaveTheirFields(t *testing.T) {
	var hosts []string
	up := httptest.NewServer(fakeUpstream(&hosts))
	defer up.Close()
	url, _, _, logged := observed(t, up.URL+"/mcp", "json", "-log-pass")
	post(t, url, "", `{"jsonrpc":"2.0","id":0,"method":"tools/list"}`)
	post(t, url, "", unknownCall)
	lines := logged.WaitLines(2, 5*time.Second)
	down, _, _, downLog := observed(t, "http://"+fixture.FreeAddr(t)+"/mcp", "json")
	send(t, down, "", initialize)
	lines = append(lines, downLog.WaitLines(1, 5*time.Second)...)
	want := []struct {
		event  string
		fields []string
	}{
		{"passed", []string{"status", "reason", "host", "method", "path", "remote"}},
		{"translated", []string{"tool", "remote", "status", "code", "list"}},
		{"upstream-failed", []string{"upstream", "cause", "err", "status", "method", "path", "remote"}},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines: %q", len(lines), lines)
	}
	for i, line := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if m["event"] != want[i].event || m["cmd"] != "toolguard-proxy" || m["msg"] == nil || m["time"] == nil || m["level"] == nil {
			t.Errorf("line %d: %v, want event %s", i, m, want[i].event)
		}
		for _, f := range want[i].fields {
			if _, ok := m[f]; !ok {
				t.Errorf("line %d (%s) has no %q: %s", i, want[i].event, f, line)
			}
		}
	}
}

// TestDistinctUnknownNamesKeepSeriesAndHeapBounded: 5,000 calls of
// distinct unknown names, 1 KiB each, through the proxy: the series
// count grows by the ranking's 20 names and no more, and the live heap
// after them is what it was before, within 1 MiB (the names alone would
// be 5 MiB). interop's TestProxyMetricsStayBoundedUnderDistinctUnknownNames
// calls 100,000 through the command.
func TestDistinctUnknownNamesKeepSeriesAndHeapBounded(t *testing.T) {
	const calls = 5_000
	// Every call is one the upstream does not have: the TypeScript SDK
	// v1's answer.
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		json.NewDecoder(r.Body).Decode(&m)
		text, _ := json.Marshal("MCP error -32602: Tool " + m.Params.Name + " not found")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":`+string(text)+`}],"isError":true}}`)
	}))
	defer up.Close()
	c, err := parse([]string{"-upstream", up.URL + "/mcp", "-metrics-listen", "127.0.0.1:0", "-quiet"})
	if err != nil {
		t.Fatal(err)
	}
	h, err := handler(c, cmdlog.Text(log.New(io.Discard, "", 0)))
	if err != nil {
		t.Fatal(err)
	}
	msrv := httptest.NewServer(c.metrics.handler())
	defer msrv.Close()
	padding := strings.Repeat("x", 1000)
	call := func(name string) {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `"}}`
		req := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if !strings.Contains(w.Body.String(), `"code":-32602`) {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
	}
	call("warm_up")
	before := len(scrape(t, msrv.URL))
	heapBefore := liveHeap()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < calls; i += 4 {
				call(fmt.Sprintf("made_up_%06d_%s", i, padding))
			}
		}()
	}
	wg.Wait()
	got := scrape(t, msrv.URL)
	heapAfter := liveHeap()
	t.Logf("%d distinct unknown names of %d bytes: %d series before, %d after; live heap %d KiB before, %d KiB after",
		calls, len(padding)+15, before, len(got), heapBefore>>10, heapAfter>>10)
	if len(got) != before+19 {
		t.Errorf("%d series after, %d before: want the ranking's 19 more names and nothing else", len(got), before)
	}
	if got["toolguard_unknown_tool_calls_total"] != fmt.Sprint(calls+1) {
		t.Errorf("total %s", got["toolguard_unknown_tool_calls_total"])
	}
	if heapAfter > heapBefore+1<<20 {
		t.Errorf("live heap grew from %d KiB to %d KiB", heapBefore>>10, heapAfter>>10)
	}
}

// liveHeap is the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
