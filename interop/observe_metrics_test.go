package interop

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/mark3labs/mcp-go/server"
)

var metricsAt = regexp.MustCompile(`metrics on (http://\S+)/metrics`)

// metricsURL returns where p serves its metrics, from its log.
func metricsURL(t *testing.T, p *proxyProcess) string {
	t.Helper()
	for _, l := range p.logLines() {
		if m := metricsAt.FindStringSubmatch(l); m != nil {
			return m[1]
		}
	}
	t.Fatalf("no metrics line in %q", p.logLines())
	return ""
}

// scrapeFamilies reads url with the Prometheus text parser.
func scrapeFamilies(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); expfmt.ResponseFormat(resp.Header).FormatType() != expfmt.TypeTextPlain {
		t.Errorf("Content-Type %q is not the text format", ct)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("the Prometheus text parser: %v", err)
	}
	return fams
}

// sample returns the value of family's series with exactly labels
// (name, value pairs), and whether there is one.
func sample(fams map[string]*dto.MetricFamily, family string, labels ...string) (float64, bool) {
	f := fams[family]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		if len(m.GetLabel())*2 != len(labels) {
			continue
		}
		for i, l := range m.GetLabel() {
			if l.GetName() != labels[2*i] || l.GetValue() != labels[2*i+1] {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// seriesCount is the number of series in fams (a histogram's buckets,
// sum and count each count).
func seriesCount(fams map[string]*dto.MetricFamily) int {
	n := 0
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			n++
			if m.Histogram != nil {
				n += len(m.Histogram.GetBucket()) + 2
			}
		}
	}
	return n
}

// TestProxyMetricsCountKnownUnknownAndFailingCalls: toolguard-proxy with
// -metrics-listen in front of mcp-go v1.2.1: after the caller's
// tools/list, three known calls, one unknown call, and two calls the
// upstream reads and drops (502, closed), the metrics, read with the
// Prometheus text parser, count each; then in front of an upstream that
// never answers, a 504. Every log line, in -log-format json, is one
// JSON object.
func TestProxyMetricsCountKnownUnknownAndFailingCalls(t *testing.T) {
	// The upstream fails on demand: it reads the request and closes the
	// connection without a word.
	var failing atomic.Bool
	mcpgo := server.NewStreamableHTTPServer(newMCPGo("echo", "add"), server.WithStateLess(true))
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			io.Copy(io.Discard, r.Body)
			if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
				c.Close()
			}
			return
		}
		mcpgo.ServeHTTP(w, r)
	}))
	defer up.Close()
	p := startProxy(t, "-upstream", up.URL+"/mcp", "-metrics-listen", "127.0.0.1:0", "-log-format", "json")
	murl := metricsURL(t, p)
	hdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	if got := post(t, p.URL, `{"jsonrpc":"2.0","id":"l","method":"tools/list"}`, hdr); !strings.Contains(got, `"echo"`) {
		t.Fatalf("tools/list: %s", got)
	}
	for range 3 {
		if got := post(t, p.URL, reportKnown, hdr); !strings.Contains(got, "hi") {
			t.Fatalf("known call: %s", got)
		}
	}
	if got := post(t, p.URL, reportUnknown, hdr); !strings.Contains(got, "-32602") || !strings.Contains(got, "availableTools") {
		t.Fatalf("unknown call: %s", got)
	}
	failing.Store(true)
	for _, body := range []string{reportKnown, reportInitialize} {
		if got := post(t, p.URL, body, hdr); !strings.Contains(got, "502") || !strings.Contains(got, "closed the connection without answering") {
			t.Fatalf("the upstream failing: %s", got)
		}
	}
	fams := scrapeFamilies(t, murl)
	for _, c := range []struct {
		family string
		labels []string
		want   float64
	}{
		{"toolguard_requests_total", []string{"kind", "tools/call", "outcome", "known"}, 3},
		{"toolguard_requests_total", []string{"kind", "tools/call", "outcome", "translated"}, 1},
		{"toolguard_requests_total", []string{"kind", "tools/call", "outcome", "upstream-failed"}, 1},
		{"toolguard_requests_total", []string{"kind", "tools/list", "outcome", "passed"}, 1},
		{"toolguard_requests_total", []string{"kind", "other", "outcome", "upstream-failed"}, 1},
		{"toolguard_passed_total", []string{"reason", "to-server"}, 5},
		{"toolguard_passed_total", []string{"reason", "not-tools-call"}, 2},
		{"toolguard_translated_total", []string{"list", "yes"}, 1},
		{"toolguard_translated_total", []string{"list", "no"}, 0},
		{"toolguard_unknown_tool_calls", []string{"tool", "ech0"}, 1},
		{"toolguard_unknown_tool_calls_total", nil, 1},
		{"toolguard_upstream_failures_total", []string{"status", "502", "cause", "closed"}, 2},
		{"toolguard_upstream_failures_total", []string{"status", "502", "cause", "refused"}, 0},
		{"toolguard_upstream_failures_total", []string{"status", "504", "cause", "timeout"}, 0},
		{"toolguard_upstream_response_seconds", nil, 5},
	} {
		if got, ok := sample(fams, c.family, c.labels...); !ok || got != c.want {
			t.Errorf("%s%q = %v (%v), want %v", c.family, c.labels, got, ok, c.want)
		}
	}
	if f := fams["toolguard_upstream_response_seconds"]; f.GetType() != dto.MetricType_HISTOGRAM {
		t.Errorf("latency is a %v", f.GetType())
	}
	if at, _ := sample(fams, "toolguard_upstream_last_answer_timestamp_seconds"); time.Since(time.Unix(int64(at), 0)) > time.Hour {
		t.Errorf("last answer at %v", at)
	}

	// An upstream that accepts and never answers: 504.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held sync.WaitGroup
	defer func() { ln.Close(); held.Wait() }()
	held.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	})
	silent := startProxy(t, "-upstream", "http://"+ln.Addr().String()+"/mcp", "-upstream-timeout", "1s", "-metrics-listen", "127.0.0.1:0")
	if got := post(t, silent.URL, reportUnknown, hdr); !strings.Contains(got, "504") {
		t.Fatalf("silent upstream: %s", got)
	}
	fams = scrapeFamilies(t, metricsURL(t, silent))
	if got, _ := sample(fams, "toolguard_upstream_failures_total", "status", "504", "cause", "timeout"); got != 1 {
		t.Errorf("504 timeout counted %v, want 1", got)
	}

	p.stop(t)
	lines := p.logLines()
	events := map[string]int{}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Errorf("a log line is not one JSON object: %q: %v", l, err)
			continue
		}
		if m["time"] == nil || m["level"] == nil || m["msg"] == nil || m["cmd"] != "toolguard-proxy" {
			t.Errorf("a log line without the fields every line has: %s", l)
		}
		if e, _ := m["event"].(string); e != "" {
			events[e]++
		}
	}
	if events["listening"] != 1 || events["metrics"] != 1 || events["translated"] != 1 || events["upstream-failed"] != 2 {
		t.Errorf("events %v in\n%s", events, strings.Join(lines, "\n"))
	}
}

// TestProxyMetricsStayBoundedUnderDistinctUnknownNames: 100,000 calls of
// distinct unknown names (and one name called often among them) through
// toolguard-proxy in front of mcp-go: the series count is what it was
// after the first unknown call, the often-called name leads the ranking,
// and the process's resident memory does not grow with the names.
func TestProxyMetricsStayBoundedUnderDistinctUnknownNames(t *testing.T) {
	const calls = 100_000
	up := httptest.NewServer(server.NewStreamableHTTPServer(newMCPGo("echo", "add"), server.WithStateLess(true)))
	defer up.Close()
	p := startProxy(t, "-upstream", up.URL+"/mcp", "-metrics-listen", "127.0.0.1:0", "-quiet")
	murl := metricsURL(t, p)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	defer client.CloseIdleConnections()
	call := func(name string) {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, name)
		req, _ := http.NewRequest("POST", p.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := client.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		resp.Body.Close()
	}
	call("warm_up")
	fams := scrapeFamilies(t, murl)
	before := seriesCount(fams)
	heapBefore, _ := sample(fams, "go_gc_heap_live_bytes")
	rssBefore := residentKB(t, p.cmd.Process.Pid)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < calls; i += 8 {
				call(fmt.Sprintf("made_up_tool_%06d_%s", i, strings.Repeat("x", 100)))
				if i%10 == 0 {
					call("get_wether")
				}
			}
		})
	}
	wg.Wait()
	fams = scrapeFamilies(t, murl)
	after := seriesCount(fams)
	heapAfter, _ := sample(fams, "go_gc_heap_live_bytes")
	rssAfter := residentKB(t, p.cmd.Process.Pid)
	t.Logf("%d distinct unknown names of 120 bytes: %d series before, %d after (%d unknown-name series); live heap %.0f KiB before, %.0f KiB after (as of the last collection); resident memory %d KiB before, %d KiB after",
		calls, before, after, len(fams["toolguard_unknown_tool_calls"].GetMetric()), heapBefore/1024, heapAfter/1024, rssBefore, rssAfter)
	if after != before+19 { // the ranking fills to 20 names; nothing else grows
		t.Errorf("%d series after, %d before: want 19 more (the ranking's 20 names)", after, before)
	}
	if total, _ := sample(fams, "toolguard_unknown_tool_calls_total"); total != calls+calls/10+1 {
		t.Errorf("total %v, want %d", total, calls+calls/10+1)
	}
	if top := fams["toolguard_unknown_tool_calls"].GetMetric()[0]; top.GetLabel()[0].GetValue() != "get_wether" {
		t.Errorf("first in the ranking: %v", top)
	}
	// Before, there may have been no collection yet (0). The names alone
	// would be 12 MB.
	if heapAfter == 0 || heapAfter > 4<<20 {
		t.Errorf("live heap %.0f KiB after the names, want at most 4 MiB", heapAfter/1024)
	}
	if rssAfter > rssBefore+32<<10 {
		t.Errorf("resident memory grew from %d KiB to %d KiB", rssBefore, rssAfter)
	}
}

// residentKB is the resident memory of process pid (Linux).
func residentKB(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	var kb int
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &kb)
		}
	}
	return kb
}

// TestStdioStatsFileAfterARealSession: toolguard-stdio -stats in front of
// mcp-go v1.2.1's stdio server: once the client closes its input and the
// session ends, the file, read with the Prometheus text parser, counts
// the one translated answer (with the list) and its name.
func TestStdioStatsFileAfterARealSession(t *testing.T) {
	file := filepath.Join(t.TempDir(), "toolguard.prom")
	c, cmd := startLineClient(t, wrapped(t, helperServer(t, "mcpgo"), "-stats", file))
	c.handshake(t, map[string]any{})
	if names := c.tools(t); strings.Join(names, ",") != "add,echo" {
		t.Fatalf("tools %q", names)
	}
	if m := c.request(t, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}}); m.Error != nil {
		t.Fatalf("known call: %+v", m.Error)
	}
	if e, list := c.unknownTool(t, "ech0"); e.Code != -32602 || len(list) != 2 {
		t.Fatalf("unknown call: %+v %q", e, list)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("the file is there before the session ended: %v", err)
	}
	c.w.(interface{ Close() error }).Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("toolguard-stdio: %v", err)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(f)
	if err != nil {
		t.Fatalf("the Prometheus text parser: %v", err)
	}
	for _, c := range []struct {
		family string
		labels []string
		want   float64
	}{
		{"toolguard_translated_total", []string{"list", "yes"}, 1},
		{"toolguard_translated_total", []string{"list", "no"}, 0},
		{"toolguard_unknown_tool_calls", []string{"tool", "ech0"}, 1},
		{"toolguard_unknown_tool_calls_total", nil, 1},
		{"toolguard_untracked_total", []string{"reason", "not-strict"}, 0},
	} {
		if got, ok := sample(fams, c.family, c.labels...); !ok || got != c.want {
			t.Errorf("%s%q = %v (%v), want %v", c.family, c.labels, got, ok, c.want)
		}
	}
}
