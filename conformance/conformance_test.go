package conformance_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolguard/toolguard/conformance"
	"github.com/toolguard/toolguard/conformance/internal/zoo"
	"github.com/toolguard/toolguard/internal/fixture"
)

func TestZoo(t *testing.T) {
	for _, tc := range zoo.Cases() {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			var rep conformance.Report
			var err error
			start := time.Now()
			if tc.Command != nil {
				rep, err = conformance.CheckCommand(context.Background(), tc.Command, tc.Opts)
			} else {
				srv := httptest.NewServer(tc.Server)
				defer srv.Close()
				rep, err = conformance.CheckURL(context.Background(), srv.URL, tc.Opts)
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.Check(rep); err != nil {
				t.Error(err)
			}
			if tc.Category == conformance.Timeout {
				if d := time.Since(start); d >= zoo.TimeoutBound {
					t.Errorf("a %v timeout returned after %v", tc.Opts.Timeout, d)
				}
			}
		})
	}
}

func TestRateLimitHonoursRetryAfter(t *testing.T) {
	if testing.Short() {
		t.Skip("seconds of real processes or pacing: not in -short")
	}
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

// A closed port is unreachable, and the report says the connection was
// refused (not retried: no second connection); a silent server times out.
func TestUnreachableAndTimeout(t *testing.T) {
	rep, err := conformance.CheckURL(context.Background(), "http://"+fixture.FreeAddr(t)+"/mcp", conformance.Options{})
	if err != nil || rep.Verdict != conformance.Unverified || rep.Category != conformance.Unreachable ||
		!strings.Contains(rep.Detail, "connection refused: nothing listens there") || strings.Contains(rep.Detail, "second connection") {
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
		f := &zoo.Fake{Sessionless: modern, Tools: []string{"delete_everything", "send_email"}}
		srv := httptest.NewServer(f)
		rep, err := conformance.CheckURL(context.Background(), srv.URL, conformance.Options{})
		srv.Close()
		if err != nil || rep.Verdict != conformance.Verified {
			t.Fatalf("modern=%v: %v %v", modern, rep, err)
		}
		methods, names, auth := f.Seen()
		// A 2026-07-28 server is also asked mcp_name_header: the same
		// made-up name in the body, another in Mcp-Name.
		want := []string{conformance.DefaultProbeName}
		if modern {
			want = append(want, conformance.DefaultProbeName)
		}
		if !slices.Equal(names, want) {
			t.Errorf("modern=%v: tools/call names %q, want %q", modern, names, want)
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

// Fleet mode over 500 local servers, the zoo's HTTP servers many times
// over: every count must come out right, and every target is reported
// once, as it finishes.
func TestFleet500(t *testing.T) {
	if testing.Short() {
		t.Skip("seconds of real processes or pacing: not in -short")
	}
	const n = 500
	var targets []conformance.Target
	want := map[conformance.Verdict]int{}
	wantCat := map[conformance.Category]int{}
	for len(targets) < n {
		for _, tc := range zoo.Cases() {
			if len(targets) == n {
				break
			}
			if tc.Command != nil || !reflect.DeepEqual(tc.Opts, conformance.Options{}) || strings.Contains(tc.Name, "MB") || strings.Contains(tc.Name, "padded") {
				continue // fleet mode runs every target with the same options; no 5 MB replies 500 times
			}
			srv := httptest.NewServer(tc.Server)
			defer srv.Close()
			targets = append(targets, conformance.Target{Target: srv.URL})
			want[tc.Verdict]++
			if tc.Category != "" {
				wantCat[tc.Category]++
			}
		}
	}
	start := time.Now()
	seen := map[string]int{}
	sum := conformance.CheckFleet(context.Background(), slices.Values(targets), conformance.Options{}, conformance.FleetOptions{
		Concurrency: 64,
		HostSpacing: 5 * time.Millisecond,
		Report:      func(r conformance.Report) { seen[r.Target]++ },
	})
	elapsed := time.Since(start)
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
	for _, tg := range targets {
		if seen[tg.Target] != 1 {
			t.Errorf("%s reported %d times", tg.Target, seen[tg.Target])
		}
	}
	if sum.Total != n {
		t.Errorf("total %d", sum.Total)
	}
	t.Logf("%d targets in %v, peak RSS %s", n, elapsed.Round(time.Millisecond), peakRSS())
}

// A fleet with a silent stdio server, a silent HTTP server, a stdio server
// that crashes, one that does not start and a closed port finishes, and
// reports each, within the timeout.
func TestFleetOfBadTargets(t *testing.T) {
	block := make(chan struct{})
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-block }))
	defer silent.Close()
	defer close(block)
	closed := "http://" + fixture.FreeAddr(t) + "/mcp"
	good := httptest.NewServer(&zoo.Fake{Tools: []string{"x"}})
	defer good.Close()
	want := map[string]conformance.Category{
		"stdio:sh -c cat>/dev/null":   conformance.Timeout,
		"stdio:sleep 120":             conformance.Timeout,
		silent.URL:                    conformance.Timeout,
		"stdio:sh -c exit":            conformance.Unreachable,
		"stdio:/does/not/exist":       conformance.Unreachable,
		closed:                        conformance.Unreachable,
		"ftp://not-a-target.invalid/": conformance.Unreachable,
		good.URL:                      "",
	}
	var targets []conformance.Target
	for tg := range want {
		targets = append(targets, conformance.Target{Target: tg})
	}
	got := map[string]conformance.Report{}
	start := time.Now()
	sum := conformance.CheckFleet(context.Background(), slices.Values(targets), conformance.Options{Timeout: time.Second},
		conformance.FleetOptions{Concurrency: 3, Processes: 2, Report: func(r conformance.Report) { got[r.Target] = r }})
	// Less than one request's default timeout: the 1 s applied to each
	// (a bound, not a claim; the fleet takes about 3 s).
	if d := time.Since(start); d >= zoo.TimeoutBound {
		t.Errorf("the fleet took %v", d)
	}
	if sum.Total != len(want) || len(got) != len(want) {
		t.Errorf("%d reports, %d distinct, want %d", sum.Total, len(got), len(want))
	}
	for tg, c := range want {
		r, ok := got[tg]
		if !ok || r.Category != c || (c == "") != (r.Verdict == conformance.Verified) {
			t.Errorf("%s: %s, want %s", tg, r, c)
		}
	}
}

// Per-target headers go to their target only, on top of the common ones.
func TestFleetHeaders(t *testing.T) {
	a, b := &zoo.Fake{Tools: []string{"x"}}, &zoo.Fake{Tools: []string{"x"}}
	sa, sb := httptest.NewServer(a), httptest.NewServer(b)
	defer sa.Close()
	defer sb.Close()
	conformance.CheckFleet(context.Background(), slices.Values([]conformance.Target{
		{Target: sa.URL, Header: http.Header{"Authorization": {"Bearer a"}}},
		{Target: sb.URL},
	}), conformance.Options{Header: http.Header{"Authorization": {"Bearer common"}}}, conformance.FleetOptions{})
	_, _, authA := a.Seen()
	_, _, authB := b.Seen()
	if len(authA) == 0 || authA[0] != "Bearer a" || len(authB) == 0 || authB[0] != "Bearer common" {
		t.Errorf("a saw %q, b saw %q", authA, authB)
	}
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
	// Started again as a legacy server, it ended at initialize too: the
	// report is that of discover, with no era guessed.
	if rep.Stage != "discover" || rep.Era != "" || !strings.Contains(rep.Detail, "went away too") {
		t.Errorf("stage %q, era %q: %s", rep.Stage, rep.Era, rep.Detail)
	}
	// What it said the second time is told too, when it said something
	// else (its process id, here).
	rep, err = conformance.CheckCommand(context.Background(), []string{"sh", "-c", "echo \"cannot start: pid $$\" >&2; exit 3"}, conformance.Options{})
	if err != nil || rep.Stage != "discover" || strings.Count(rep.Detail, "cannot start: pid") != 2 {
		t.Errorf("a server saying another thing each time: %s, %v", rep.Detail, err)
	}
	rep, err = conformance.CheckCommand(context.Background(), []string{"/does/not/exist"}, conformance.Options{})
	if err != nil || rep.Verdict != conformance.Unverified || rep.Category != conformance.Unreachable {
		t.Errorf("a missing command: %s, %v", rep, err)
	}
	if _, err := conformance.CheckCommand(context.Background(), nil, conformance.Options{}); err == nil {
		t.Error("an empty command was not an error")
	}
}

// A stdio server that logs to its standard output instead of answering
// times out, and the report says what it wrote there: the usual cause. A
// JSON-RPC batch is not counted among those lines; an array of anything
// else is.
func TestStdioServerThatLogsToStdoutIsNamedInTheTimeout(t *testing.T) {
	rep, err := conformance.CheckCommand(context.Background(),
		[]string{"sh", "-c", "echo '[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}]'; echo 'Server listening on stdio'; echo '{\"level\":\"info\"}'; echo '[1]'; cat >/dev/null"}, conformance.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Category != conformance.Timeout || !strings.Contains(rep.Detail, "3 line(s)") ||
		!strings.Contains(rep.Detail, "Server listening on stdio") || !strings.Contains(rep.Detail, "not JSON-RPC") {
		t.Errorf("%s", rep)
	}
	// One that writes nothing at all may still be installing (npx, uvx).
	rep, err = conformance.CheckCommand(context.Background(), []string{"sh", "-c", "cat >/dev/null"}, conformance.Options{Timeout: time.Second})
	if err != nil || rep.Category != conformance.Timeout || strings.Contains(rep.Detail, "not JSON-RPC") ||
		!strings.Contains(rep.Detail, "nothing on the server's stdout in 1s") || !strings.Contains(rep.Detail, "may still be installing") {
		t.Errorf("a silent server: %s, %v", rep, err)
	}
}

// Requests to one host keep the spacing, however many of its targets are
// in progress at once. Times are taken as each request leaves the checker,
// which is what the spacing governs (arrival times add the network's
// jitter).
func TestFleetKeepsHostSpacing(t *testing.T) {
	if testing.Short() {
		t.Skip("seconds of real processes or pacing: not in -short")
	}
	const spacing = 40 * time.Millisecond
	srv := httptest.NewServer(&zoo.Fake{Tools: []string{"x"}})
	defer srv.Close()
	rec := &recordingTransport{next: srv.Client().Transport}
	var targets []conformance.Target
	for _, p := range []string{"/a", "/b", "/c", "/d"} {
		targets = append(targets, conformance.Target{Target: srv.URL + p})
	}
	start := time.Now()
	sum := conformance.CheckFleet(context.Background(), slices.Values(targets), conformance.Options{Client: &http.Client{Transport: rec}},
		conformance.FleetOptions{Concurrency: 4, HostSpacing: spacing})
	if sum.ByVerdict[conformance.Verified] != 4 {
		t.Fatalf("%+v", sum)
	}
	// Every request waits for its turn with the host: the last one cannot
	// leave before (n-1) spacings have passed since the fleet began,
	// however the scheduler delays any of them (TestPacer checks the
	// grants themselves, exactly).
	times := rec.times
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	if len(times) < 4*5 {
		t.Fatalf("%d requests", len(times))
	}
	if least := time.Duration(len(times)-1) * spacing; times[len(times)-1].Sub(start) < least {
		t.Errorf("%d requests to one host within %v, less than %v at one per %v", len(times), times[len(times)-1].Sub(start), least, spacing)
	}
}

type recordingTransport struct {
	next  http.RoundTripper
	mu    sync.Mutex
	times []time.Time
}

func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.times = append(r.times, time.Now())
	r.mu.Unlock()
	return r.next.RoundTrip(req)
}

// slowCall serves a fake whose tools/call waits until the test ends; called
// closes once a call is in progress.
func slowCall(t *testing.T) (url string, called chan struct{}) {
	called, release := make(chan struct{}), make(chan struct{})
	slow := httptest.NewServer(&zoo.Fake{Tools: []string{"echo"}, On: map[string]func(http.ResponseWriter, string){
		"tools/call": func(w http.ResponseWriter, id string) {
			close(called)
			<-release
		},
	}})
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(release) }) // first: Close waits for the handler
	return slow.URL, called
}

// A fleet cut short (Ctrl-C) reports the targets that finished, and not
// the one whose check the interruption cut: that check said nothing of its
// target, and a -resume must run it again.
func TestFleetCutShortDoesNotReportTheTargetsInProgress(t *testing.T) {
	fast := httptest.NewServer(&zoo.Fake{Tools: []string{"echo"}})
	defer fast.Close()
	slow, called := slowCall(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []string
	sum := conformance.CheckFleet(ctx, slices.Values([]conformance.Target{{Target: slow}, {Target: fast.URL}}), conformance.Options{},
		conformance.FleetOptions{Concurrency: 2, Report: func(r conformance.Report) {
			got = append(got, r.Target)
			if r.Target == fast.URL {
				<-called // the slow target's call is in progress
				cancel()
			}
		}})
	if !slices.Equal(got, []string{fast.URL}) || sum.Total != 1 {
		t.Errorf("reported %v (total %d), want only the finished %s", got, sum.Total, fast.URL)
	}
}

// A Host in Options.Header is the Host sent, on every request (net/http
// sends the request's Host, never a Host header): how an operator checks
// a server under a name its allow-list takes.
func TestHeaderHostIsTheHostSent(t *testing.T) {
	var mu sync.Mutex
	var hosts []string
	fake := &zoo.Fake{Tools: []string{"echo"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hosts = append(hosts, r.Host)
		mu.Unlock()
		fake.ServeHTTP(w, r)
	}))
	defer srv.Close()
	rep, err := conformance.CheckURL(context.Background(), srv.URL, conformance.Options{Header: http.Header{"Host": {"mcp.example.test"}}})
	if err != nil || rep.Verdict != conformance.Verified {
		t.Fatalf("%v %+v", err, rep)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(hosts) < 3 || slices.ContainsFunc(hosts, func(h string) bool { return h != "mcp.example.test" }) {
		t.Errorf("hosts sent: %q", hosts)
	}
}

// A single check whose ctx ends before it does returns no report but the
// error: a cut check is not a server that timed out or could not be
// reached. (Over stdio: ending_unix_test.go.)
func TestCheckCutShortIsAnErrorNotAReport(t *testing.T) {
	slow, called := slowCall(t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-called
		cancel()
	}()
	rep, err := conformance.CheckURL(ctx, slow, conformance.Options{Timeout: time.Hour})
	if !errors.Is(err, context.Canceled) || rep.Verdict != "" {
		t.Errorf("%v, %+v; want context.Canceled and no report", err, rep)
	}
}

// A stdio server that ends the session at a first message other than
// initialize (the Rust SDK's rmcp) is a legacy server: the checker starts
// it again and asks it as one, as CHECKER.md says of anything but a
// discover result. One that never answers discover times out there.
func TestStdioServerThatRefusesDiscoverIsAskedAsALegacyOne(t *testing.T) {
	const legacy = `id() { printf '%s\n' "$1" | sed -n 's/.*"id":\([0-9]*\).*/\1/p'; }
answer() {
  case "$1" in
  *'"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"sh","version":"1"}}}\n' "$(id "$1")" ;;
  *'"tools/list"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}\n' "$(id "$1")" ;;
  *'"tools/call"'*) printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"tool not found"}}\n' "$(id "$1")" ;;
  esac
}
IFS= read -r first
case "$first" in
*'"initialize"'*) answer "$first" ;;
*) [ "$MODE" = quit ] && { echo 'expected initialize request' >&2; exit 1; } ;;
esac
while IFS= read -r line; do answer "$line"; done`
	rep, err := conformance.CheckCommand(context.Background(), []string{"env", "MODE=quit", "sh", "-c", legacy}, conformance.Options{}) // (no timer decides it)
	if err != nil || rep.Verdict != conformance.Verified || rep.Era != conformance.Era2025 || rep.ErrorCode == nil || *rep.ErrorCode != -32602 {
		t.Errorf("a server that ends at discover: %s (era %q), %v", rep, rep.Era, err)
	}
	rep, err = conformance.CheckCommand(context.Background(), []string{"env", "MODE=silent", "sh", "-c", legacy}, conformance.Options{Timeout: time.Second})
	if err != nil || rep.Category != conformance.Timeout || rep.Stage != "discover" {
		t.Errorf("a server silent at discover: %s, %v", rep, err)
	}
}

// shServer begins a stdio server in sh: it answers initialize, and the
// list with one tool; a script adds its own cases for the other lines,
// then shEnd.
const shServer = `id() { printf '%s\n' "$1" | sed -n 's/.*"id":\([0-9]*\).*/\1/p'; }
while IFS= read -r line; do
  case "$line" in
  *'"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"sh","version":"1"}}}\n' "$(id "$line")" ;;
  *'"tools/list"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}\n' "$(id "$line")" ;;
`

const shEnd = `  esac
done`

// A stdio server that answered the handshake and the list but not the
// call times out with no word of installing: it is running.
func TestStdioServerSilentAtTheCallIsNotSaidToBeInstalling(t *testing.T) {
	rep, err := conformance.CheckCommand(context.Background(), []string{"sh", "-c", shServer + shEnd}, conformance.Options{Era: conformance.Era2025, Timeout: time.Second})
	if err != nil || rep.Category != conformance.Timeout || rep.Stage != "tools/call" ||
		!strings.Contains(rep.Detail, "no reply in 1s") || strings.Contains(rep.Detail, "installing") {
		t.Errorf("%s, %v", rep, err)
	}
}

// stdioScript is a stdio server in the style of a hand-written one: it
// answers initialize, the list (one tool) and each tools/call with
// $CALL (its id put in), and every other line, notifications included,
// with $OTHER (an answer with a null id, or none), as a dispatcher that
// answers what it does not know, with `id: msg.id ?? null`, does.
const stdioScript = shServer + `  *'"tools/call"'*) printf '%s\n' "$BEFORE" | sed "s/ID/$(id "$line")/"; printf '%s\n' "$CALL" | sed "s/ID/$(id "$line")/" ;;
  *) printf '%s\n' "$OTHER" ;;
` + shEnd

// Over stdio, one channel carries the answers to every message: an
// answer with a null id or none (to a notification, sent by mistake) is
// not taken for the reply while the one with the request's id comes, at
// the list or at the call.
func TestStdioAnswerWithTheRequestsIDWinsOverANullOne(t *testing.T) {
	opts := conformance.WithNullGrace(conformance.Options{Era: conformance.Era2025}, time.Hour) // (no timer decides it)
	for _, other := range []string{
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"Method not found"}}`,
		`{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"}}`,
	} {
		rep, err := conformance.CheckCommand(context.Background(), []string{"env", "OTHER=" + other, "BEFORE=" + other,
			`CALL={"jsonrpc":"2.0","id":ID,"result":{"isError":true,"content":[{"type":"text","text":"Unknown tool"}]}}`,
			"sh", "-c", stdioScript}, opts)
		if err != nil || rep.Verdict != conformance.ObservedRisk || rep.Category != conformance.ResultIsError || rep.Tools != 1 {
			t.Errorf("stray answers %s: %s %s: %s, %v", other, rep.Verdict, rep.Category, rep.Detail, err)
		}
	}
}

// An answer with a null id that names a notification answers that
// notification, however long the call's own answer takes, so is never the
// reply to the call.
func TestStdioAnswerNamingANotificationIsNoReply(t *testing.T) {
	stray := `{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"Method not found: notifications/initialized"}}`
	rep, err := conformance.CheckCommand(context.Background(), []string{"env", "OTHER=", "BEFORE=" + stray, "CALL=",
		"sh", "-c", stdioScript}, conformance.WithNullGrace(conformance.Options{Era: conformance.Era2025, Timeout: time.Second}, time.Millisecond))
	if err != nil || rep.Verdict != conformance.Unverified || rep.Category != conformance.Timeout || rep.Stage != "tools/call" {
		t.Errorf("%s %s at %s: %s, %v", rep.Verdict, rep.Category, rep.Stage, rep.Detail, err)
	}
}

// An answer with a null id is still the reply when none with the
// request's id comes: a server that could not read the call's id.
func TestStdioAnswerWithANullIDIsTheReplyWhenNoneHasTheID(t *testing.T) {
	rep, err := conformance.CheckCommand(context.Background(), []string{"env", "OTHER=", "BEFORE=",
		`CALL={"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
		"sh", "-c", stdioScript}, conformance.WithNullGrace(conformance.Options{Era: conformance.Era2025}, time.Millisecond))
	if err != nil || rep.Verdict != conformance.Verified || rep.ErrorCode == nil || *rep.ErrorCode != -32700 {
		t.Errorf("%s %s: %s, %v", rep.Verdict, rep.Category, rep.Detail, err)
	}
}

// A stdio server may ask the client something before it answers: the
// checker answers a ping with an empty result and any other request with
// -32601, as a client offering no capabilities does, and the server then
// answers the call.
func TestStdioCheckerAnswersTheServersRequests(t *testing.T) {
	const asks = shServer + `  *'"tools/call"'*)
    printf '%s\n' '{"jsonrpc":"2.0","id":"p1","method":"ping"}'
    IFS= read -r pong
    printf '%s\n' '{"jsonrpc":"2.0","id":7,"method":"roots/list"}'
    IFS= read -r roots
    [ "$pong" = '{"jsonrpc":"2.0","id":"p1","result":{}}' ] || { echo "ping answered $pong" >&2; exit 1; }
    [ "$roots" = '{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found"}}' ] || { echo "roots/list answered $roots" >&2; exit 1; }
    printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"Unknown tool"}}\n' "$(id "$line")" ;;
` + shEnd
	rep, err := conformance.CheckCommand(context.Background(), []string{"sh", "-c", asks}, conformance.Options{Era: conformance.Era2025})
	if err != nil || rep.Verdict != conformance.Verified || rep.ErrorCode == nil || *rep.ErrorCode != -32602 {
		t.Errorf("%s %s: %s, %v", rep.Verdict, rep.Category, rep.Detail, err)
	}
}

// A stdio server that goes away is reported with the line of its standard
// error that says why: the last that names an error, though its runtime
// wrote more after it (Node's stack and version; Go's goroutines), else
// the last line.
func TestStdioServerThatGoesAwayIsToldByItsError(t *testing.T) {
	for _, tc := range []struct{ script, want string }{
		{`printf '%s\n' 'node:internal/modules/cjs/loader:1228' '  throw err;' '  ^' '' "Error: Cannot find module '/nonexistent.js'" '    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)' '    at node:internal/main/run_main_module:28:49 {' "  code: 'MODULE_NOT_FOUND'," '}' '' 'Node.js v20.20.2' >&2; exit 1`,
			`its last error on stderr: "Error: Cannot find module '/nonexistent.js'"`},
		{`printf '%s\n' 'Traceback (most recent call last):' '  File "server.py", line 1, in <module>' "ModuleNotFoundError: No module named 'mcp'" >&2; exit 1`,
			`its last error on stderr: "ModuleNotFoundError: No module named 'mcp'"`},
		{`printf '%s\n' 'panic: no config' '' 'goroutine 1 [running]:' 'main.main()' '	/src/errors/main.go:9 +0x25' >&2; exit 2`,
			`its last error on stderr: "panic: no config"`},
		{`printf '%s\n' 'starting' 'cannot open config' '   ' >&2; exit 3`,
			`its last line on stderr: "cannot open config"`},
	} {
		rep, err := conformance.CheckCommand(context.Background(), []string{"sh", "-c", tc.script}, conformance.Options{Era: conformance.Era2025})
		if err != nil || rep.Category != conformance.Unreachable || !strings.Contains(rep.Detail, tc.want) {
			t.Errorf("%s, %v; want %s", rep.Detail, err, tc.want)
		}
	}
}

// A server that writes back every line it does not know, the checker's
// own calls included, gets no answer of the checker's to write back: the
// checker answers only what a server asks a client (ping, roots,
// sampling, elicitation), so its call draws no reply.
func TestStdioEchoOfTheCheckersOwnCallIsNoReply(t *testing.T) {
	const echo = shServer + `  *) printf '%s\n' "$line" ;;
` + shEnd
	rep, err := conformance.CheckCommand(context.Background(), []string{"sh", "-c", echo}, conformance.Options{Era: conformance.Era2025, Timeout: time.Second})
	if err != nil || rep.Verdict != conformance.Unverified || rep.Category != conformance.Timeout || rep.Stage != "tools/call" {
		t.Errorf("%s %s at %s: %s, %v", rep.Verdict, rep.Category, rep.Stage, rep.Detail, err)
	}
}

// The checker's answer to a server's request is its part, not the
// check's: a server that asks, answers the call and exits at once (so the
// answer to its ping may find no reader) is classified by its answer.
func TestStdioServerThatAsksAndExitsIsClassifiedByItsAnswer(t *testing.T) {
	const asksAndGoes = shServer + `  *'"tools/call"'*) printf '{"jsonrpc":"2.0","id":"p","method":"ping"}\n{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"Unknown tool"}}\n' "$(id "$line")"; exec 0<&- 1>&-; exit 0 ;;
` + shEnd
	for range 5 {
		rep, err := conformance.CheckCommand(context.Background(), []string{"sh", "-c", asksAndGoes}, conformance.Options{Era: conformance.Era2025})
		if err != nil || rep.Verdict != conformance.Verified || rep.ErrorCode == nil || *rep.ErrorCode != -32602 {
			t.Errorf("%s %s: %s, %v", rep.Verdict, rep.Category, rep.Detail, err)
		}
	}
}
