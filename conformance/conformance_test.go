package conformance_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolguard/toolguard/conformance"
	"github.com/toolguard/toolguard/conformance/internal/zoo"
	"time"
)

func TestZoo(t *testing.T) {
	for _, tc := range zoo.Cases() {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(tc.Server)
			defer srv.Close()
			rep, err := conformance.CheckURL(context.Background(), srv.URL, tc.Opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.Check(rep); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestRateLimitHonoursRetryAfter(t *testing.T) {
	var hits atomic.Int32
	var first, second time.Time
	srv := httptest.NewServer(&zoo.Fake{Tools: []string{"x"}, On: map[string]func(http.ResponseWriter, string){
		"tools/call": func(w http.ResponseWriter, id string) {
			if hits.Add(1) == 1 {
				first = time.Now()
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(429)
				return
			}
			second = time.Now()
			zoo.WriteJSON(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32602,"message":"x"}}`)
		}}})
	defer srv.Close()
	rep, err := conformance.CheckURL(context.Background(), srv.URL, conformance.Options{})
	if err != nil || rep.Verdict != conformance.Verified {
		t.Fatalf("%v %v", rep, err)
	}
	if d := second.Sub(first); d < time.Second {
		t.Errorf("retried after %v, Retry-After said 1s", d)
	}
}

func TestUnreachableAndTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	rep, err := conformance.CheckURL(context.Background(), "http://"+addr+"/mcp", conformance.Options{})
	if err != nil || rep.Verdict != conformance.Unverified || rep.Category != conformance.Unreachable {
		t.Errorf("closed port: %v %v", rep, err)
	}

	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-block }))
	defer srv.Close()
	defer close(block)
	rep, err = conformance.CheckURL(context.Background(), srv.URL, conformance.Options{Timeout: 200 * time.Millisecond})
	if err != nil || rep.Verdict != conformance.Unverified || rep.Category != conformance.Timeout {
		t.Errorf("silent server: %v %v", rep, err)
	}
}

// The checker calls no tool but the made-up one, and sends credentials only
// when given them.
func TestRecordingServer(t *testing.T) {
	for _, modern := range []bool{false, true} {
		f := &zoo.Fake{Modern: modern, Tools: []string{"delete_everything", "send_email"}}
		srv := httptest.NewServer(f)
		rep, err := conformance.CheckURL(context.Background(), srv.URL, conformance.Options{})
		srv.Close()
		if err != nil || rep.Verdict != conformance.Verified {
			t.Fatalf("modern=%v: %v %v", modern, rep, err)
		}
		methods, names, auth := f.Seen()
		if !slices.Equal(names, []string{conformance.DefaultProbeName}) {
			t.Errorf("modern=%v: tools/call names %q", modern, names)
		}
		for _, m := range methods {
			if !slices.Contains([]string{"server/discover", "initialize", "notifications/initialized", "tools/list", "tools/call"}, m) {
				t.Errorf("modern=%v: unexpected method %s", modern, m)
			}
		}
		if len(auth) != 0 {
			t.Errorf("modern=%v: sent Authorization %q unasked", modern, auth)
		}
	}

	f := &zoo.Fake{Tools: []string{"x"}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	if _, err := conformance.CheckURL(context.Background(), srv.URL, conformance.Options{
		ProbeName: "my_probe", Header: http.Header{"Authorization": {"Bearer t0ken"}}}); err != nil {
		t.Fatal(err)
	}
	_, names, auth := f.Seen()
	if !slices.Equal(names, []string{"my_probe"}) || len(auth) == 0 || auth[0] != "Bearer t0ken" {
		t.Errorf("names %q, auth %q", names, auth)
	}
}

func TestTestHandler(t *testing.T) {
	if err := conformance.TestHandler(&zoo.Fake{Tools: []string{"x"}}, conformance.Options{}); err != nil {
		t.Errorf("well-behaved server: %v", err)
	}
	risky := &zoo.Fake{Tools: []string{"x"}, On: map[string]func(http.ResponseWriter, string){
		"tools/call": zoo.Answer(200, "application/json", `{"jsonrpc":"2.0","id":{{id}},"result":{"content":[],"isError":true}}`)}}
	err := conformance.TestHandler(risky, conformance.Options{})
	var re *conformance.ReportError
	if !errors.As(err, &re) || re.Report.Category != conformance.ResultIsError ||
		!strings.Contains(err.Error(), "OBSERVED_RISK result_is_error at tools/call (HTTP 200, application/json)") {
		t.Errorf("risky server: %v", err)
	}
}

func TestOptionsValidated(t *testing.T) {
	for _, o := range []conformance.Options{{Era: "2024"}, {Timeout: -1}, {MaxPages: -2}} {
		if _, err := conformance.CheckURL(context.Background(), "http://127.0.0.1:1/", o); err == nil || !strings.HasPrefix(err.Error(), "conformance: ") {
			t.Errorf("%+v: %v", o, err)
		}
	}
	if _, err := conformance.CheckURL(context.Background(), "ftp://x", conformance.Options{}); err == nil {
		t.Error("ftp URL accepted")
	}
}

// Fleet mode over 500 local servers, the zoo many times over, at
// concurrency 64: every count must come out right.
func TestFleet500(t *testing.T) {
	const n = 500
	var targets []string
	want := map[conformance.Verdict]int{}
	wantCat := map[conformance.Category]int{}
	for i := 0; len(targets) < n; i++ {
		for _, tc := range zoo.Cases() {
			if len(targets) == n {
				break
			}
			if tc.Opts.Era != "" || tc.Opts.MaxPages != 0 {
				continue // fleet mode runs every target with the same options
			}
			srv := httptest.NewServer(tc.Server)
			defer srv.Close()
			targets = append(targets, srv.URL)
			want[tc.Verdict]++
			if tc.Category != "" {
				wantCat[tc.Category]++
			}
		}
	}
	start := time.Now()
	var progress int
	reports := conformance.CheckFleet(context.Background(), targets, conformance.Options{}, conformance.FleetOptions{
		Concurrency: 64,
		HostSpacing: 5 * time.Millisecond,
		Progress:    func(done, total int, _ conformance.Report) { progress = done },
	})
	elapsed := time.Since(start)
	sum := conformance.Summarize(reports)
	for v, c := range want {
		if sum.ByVerdict[v] != c {
			t.Errorf("%s: %d, want %d", v, sum.ByVerdict[v], c)
		}
	}
	for c, k := range wantCat {
		var got int
		for _, m := range sum.ByCategory {
			got += m[c]
		}
		if got != k {
			t.Errorf("%s: %d, want %d", c, got, k)
		}
	}
	for i, r := range reports {
		if r.Target != targets[i] {
			t.Fatalf("report %d is for %s, want %s", i, r.Target, targets[i])
		}
	}
	if sum.Total != n || progress != n {
		t.Errorf("total %d, progress %d", sum.Total, progress)
	}
	var table strings.Builder
	sum.WriteTable(&table)
	t.Logf("%d targets in %v, peak RSS %s\n%s", n, elapsed.Round(time.Millisecond), peakRSS(), table.String())
}

// peakRSS reads the process's peak resident set size (Linux).
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// A stdio command that exits at once is unreachable, and the report says
// what it wrote to stderr.
func TestStdioServerThatExits(t *testing.T) {
	rep, err := conformance.CheckCommand(context.Background(), []string{"sh", "-c", "echo 'cannot open config' >&2; exit 3"}, conformance.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != conformance.Unverified || rep.Category != conformance.Unreachable || !strings.Contains(rep.Detail, "cannot open config") {
		t.Errorf("%s", rep)
	}
	if _, err := conformance.CheckCommand(context.Background(), []string{"/does/not/exist"}, conformance.Options{}); err == nil {
		t.Error("a missing command was not an error")
	}
}
