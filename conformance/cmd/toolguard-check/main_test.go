package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolguard/toolguard/conformance"
	"github.com/toolguard/toolguard/conformance/internal/zoo"
)

// words collapses runs of white space, so tests need not count columns.
func words(s string) string { return strings.Join(strings.Fields(s), " ") }

func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// A small subset of the package's zoo, rebuilt here: one server per exit
// status, through the real command line.
func TestExitStatusAndJSON(t *testing.T) {
	servers := map[string]struct {
		h        http.HandlerFunc
		code     int
		verdict  conformance.Verdict
		category conformance.Category
	}{
		"verified": {server(`{"jsonrpc":"2.0","id":ID,"error":{"code":-32602,"message":"Unknown tool"}}`, 200), 0, conformance.Verified, ""},
		"is error": {server(`{"jsonrpc":"2.0","id":ID,"result":{"content":[],"isError":true}}`, 200), 1, conformance.ObservedRisk, conformance.ResultIsError},
		"html":     {server(`<html>nope</html>`, 404), 1, conformance.ObservedRisk, conformance.NotJSON},
		"gated":    {server(``, 401), 2, conformance.Unverified, conformance.CredentialGated},
	}
	for name, s := range servers {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(s.h)
			defer srv.Close()
			code, out, stderr := runCLI(t, "", "-json", srv.URL)
			if code != s.code {
				t.Errorf("exit %d, want %d (%s)", code, s.code, stderr)
			}
			var rep conformance.Report
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if rep.Verdict != s.verdict || rep.Category != s.category || rep.Target != srv.URL {
				t.Errorf("report %+v", rep)
			}
			code, out, _ = runCLI(t, "", srv.URL)
			if code != s.code || !strings.Contains(out, "verdict") || !strings.Contains(out, string(s.verdict)) {
				t.Errorf("human output (exit %d):\n%s", code, out)
			}
		})
	}
}

// server is a minimal MCP server: it answers initialize and tools/list, and
// tools/call with call (ID replaced by the request id) and status.
func server(call string, status int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.NewDecoder(r.Body).Decode(&m)
		id := string(m.ID)
		w.Header().Set("Content-Type", "application/json")
		switch m.Method {
		case "initialize":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"t","version":"1"}}}`, id)
		case "notifications/initialized":
			w.WriteHeader(202)
		case "tools/list":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}`, id)
		case "tools/call":
			if strings.HasPrefix(call, "<") {
				w.Header().Set("Content-Type", "text/html")
			}
			w.WriteHeader(status)
			fmt.Fprint(w, strings.ReplaceAll(call, "ID", id))
		default:
			w.WriteHeader(400)
		}
	}
}

// The whole fixture zoo, through the command line: exit status and JSON.
func TestZooThroughCLI(t *testing.T) {
	for _, tc := range zoo.Cases() {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			args := []string{"-json"}
			if tc.Opts.Era != "" {
				args = append(args, "-era", tc.Opts.Era)
			}
			if tc.Opts.MaxPages != 0 {
				args = append(args, "-max-pages", fmt.Sprint(tc.Opts.MaxPages))
			}
			if tc.Opts.MaxBodyBytes != 0 {
				args = append(args, "-max-bytes", fmt.Sprint(tc.Opts.MaxBodyBytes))
			}
			if tc.Opts.Timeout != 0 {
				args = append(args, "-timeout", tc.Opts.Timeout.String())
			}
			if tc.Command != nil {
				args = append(append(args, "-stdio", "--"), tc.Command...)
			} else {
				srv := httptest.NewServer(tc.Server)
				defer srv.Close()
				args = append(args, srv.URL)
			}
			start := time.Now()
			code, out, stderr := runCLI(t, "", args...)
			if tc.Category == conformance.Timeout && time.Since(start) >= zoo.TimeoutBound {
				t.Errorf("-timeout %v: returned after %v", tc.Opts.Timeout, time.Since(start))
			}
			if want := exitCode(tc.Verdict); code != want {
				t.Errorf("exit %d, want %d (%s)", code, want, stderr)
			}
			var rep conformance.Report
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if err := tc.Check(rep); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"a", "b"},
		{"-nosuchflag", "http://x"},
		{"-stdio"},
		{"-header", "no-colon", "http://x"},
		{"-fleet", "/does/not/exist"},
		{"-era", "1999-01-01", "http://127.0.0.1:1"},
		{"ftp://x"},
	} {
		if code, _, _ := runCLI(t, "", args...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d", args, code, exitUsage)
		}
	}
}

func TestFleetFromStdin(t *testing.T) {
	if testing.Short() {
		t.Skip("seconds of real processes or pacing: not in -short")
	}
	ok := httptest.NewServer(server(`{"jsonrpc":"2.0","id":ID,"error":{"code":-32602,"message":"x"}}`, 200))
	defer ok.Close()
	risky := httptest.NewServer(server(`{"jsonrpc":"2.0","id":ID,"result":{"content":[],"isError":true}}`, 200))
	defer risky.Close()
	list := "# targets\n" + ok.URL + "\n\n" + risky.URL + "\n" + ok.URL + "/again\n"
	code, out, stderr := runCLI(t, list, "-fleet", "-", "-concurrency", "2", "-spacing", "1ms")
	if code != exitRisk {
		t.Errorf("exit %d, want %d", code, exitRisk)
	}
	for _, want := range []string{"VERIFIED - " + ok.URL, "OBSERVED_RISK result_is_error " + risky.URL,
		"error_taxonomy servers VERIFIED 2 OBSERVED_RISK 1 result_is_error 1 UNVERIFIED 0 total 3"} {
		if !strings.Contains(words(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Standard error is no terminal here: progress comes in whole lines.
	if !regexp.MustCompile(`\[3/3\] \d+s\n$`).MatchString(stderr) || strings.Contains(stderr, "\r") {
		t.Errorf("progress on stderr: %q", stderr)
	}
	code, out, stderr = runCLI(t, list, "-fleet", "-", "-json")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	verdicts := map[conformance.Verdict]int{}
	for _, l := range lines {
		var r conformance.Report
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%v: %q", err, l)
		}
		verdicts[r.Verdict]++
	}
	if code != exitRisk || len(lines) != 3 || verdicts[conformance.Verified] != 2 || verdicts[conformance.ObservedRisk] != 1 ||
		!strings.Contains(words(stderr), "total 3") {
		t.Errorf("exit %d, %s\n%s", code, out, stderr)
	}
}

// Fleet files may give a target headers of its own; a bad line is a usage
// error naming the line.
func TestFleetFileHeaders(t *testing.T) {
	if testing.Short() {
		t.Skip("seconds of real processes or pacing: not in -short")
	}
	a, b := &zoo.Fake{Tools: []string{"x"}}, &zoo.Fake{Tools: []string{"x"}}
	sa, sb := httptest.NewServer(a), httptest.NewServer(b)
	defer sa.Close()
	defer sb.Close()
	list := `{"target": "` + sa.URL + `", "header": {"Authorization": "Bearer for-a"}}` + "\n" + sb.URL + "\n"
	if code, out, stderr := runCLI(t, list, "-fleet", "-", "-quiet"); code != exitVerified {
		t.Fatalf("exit %d: %s %s", code, out, stderr)
	}
	_, _, authA := a.Seen()
	_, _, authB := b.Seen()
	if len(authA) == 0 || authA[0] != "Bearer for-a" || len(authB) != 0 {
		t.Errorf("a saw %q, b saw %q", authA, authB)
	}
	if code, _, stderr := runCLI(t, "{\"target\": 3}\n", "-fleet", "-"); code != exitUsage || !strings.Contains(stderr, "-:1:") {
		t.Errorf("bad line: exit %d, %s", code, stderr)
	}
}

// -resume skips what an earlier run reported, even one cut mid-line, and
// the table still counts the whole fleet.
func TestFleetResume(t *testing.T) {
	if testing.Short() {
		t.Skip("seconds of real processes or pacing: not in -short")
	}
	ok := &zoo.Fake{Tools: []string{"x"}}
	srv := httptest.NewServer(ok)
	defer srv.Close()
	dir := t.TempDir()
	done := dir + "/done.jsonl"
	earlier := `{"target":"` + srv.URL + `/a","check":"error_taxonomy","verdict":"OBSERVED_RISK","category":"result_ok"}` + "\n" + `{"target":"` + srv.URL + `/b","ch`
	if err := os.WriteFile(done, []byte(earlier), 0o600); err != nil {
		t.Fatal(err)
	}
	list := srv.URL + "/a\n" + srv.URL + "/b\n"
	code, out, stderr := runCLI(t, list, "-fleet", "-", "-json", "-resume", done)
	if code != exitRisk || strings.Count(out, "\n") != 1 || !strings.Contains(out, srv.URL+"/b") ||
		!strings.Contains(stderr, "1 targets already reported, 1 to go") || !strings.Contains(words(stderr), "OBSERVED_RISK 1 result_ok 1 UNVERIFIED 0 total 2") {
		t.Errorf("exit %d\n%s\n%s", code, out, stderr)
	}
	if _, names, _ := ok.Seen(); len(names) != 1 {
		t.Errorf("%d calls, want 1 (the /a target was done)", len(names))
	}
}

// -resume counts only the reports of targets still in the fleet: one
// dropped from it since is neither skipped nor counted, nor its verdict
// the exit status.
func TestFleetResumeLeavesOutTargetsNoLongerInTheFleet(t *testing.T) {
	done := t.TempDir() + "/done.jsonl"
	earlier := `{"target":"http://127.0.0.1:1/kept","check":"error_taxonomy","verdict":"VERIFIED","category":"verified"}` + "\n" +
		`{"target":"http://127.0.0.1:1/dropped","check":"error_taxonomy","verdict":"OBSERVED_RISK","category":"result_ok"}` + "\n"
	if err := os.WriteFile(done, []byte(earlier), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI(t, "http://127.0.0.1:1/kept\n", "-fleet", "-", "-resume", done)
	if code != exitVerified || !strings.Contains(stderr, "1 targets already reported, 0 to go") || strings.Contains(out+stderr, "OBSERVED_RISK 1") {
		t.Errorf("exit %d\n%s\n%s", code, out, stderr)
	}
}

// One URL checked with two sets of headers: each line has a label, each
// report carries it, and -resume tells the two apart. The same target
// twice without labels is a usage error naming both lines.
func TestFleetTargetsSharingAURL(t *testing.T) {
	if testing.Short() {
		t.Skip("seconds of real processes or pacing: not in -short")
	}
	ok := &zoo.Fake{Tools: []string{"x"}}
	srv := httptest.NewServer(ok)
	defer srv.Close()
	list := `{"target": "` + srv.URL + `", "header": {"X-Tenant": "a"}, "label": "tenant-a"}` + "\n" +
		`{"target": "` + srv.URL + `", "header": {"X-Tenant": "b"}, "label": "tenant-b"}` + "\n"
	code, out, stderr := runCLI(t, list, "-fleet", "-", "-json", "-quiet")
	if code != exitVerified || strings.Count(out, `"label":"tenant-a"`) != 1 || strings.Count(out, `"label":"tenant-b"`) != 1 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	// A cut run that reported tenant-b only: tenant-a is checked again.
	done := t.TempDir() + "/done.jsonl"
	var b string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.Contains(line, `"label":"tenant-b"`) {
			b = line + "\n"
		}
	}
	if err := os.WriteFile(done, []byte(b), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr = runCLI(t, list, "-fleet", "-", "-json", "-resume", done)
	if code != exitVerified || strings.Count(out, "\n") != 1 || !strings.Contains(out, `"label":"tenant-a"`) ||
		!strings.Contains(stderr, "1 targets already reported, 1 to go") || !strings.Contains(words(stderr), "total 2") {
		t.Errorf("resumed: exit %d\n%s\n%s", code, out, stderr)
	}
	_, text, _ := runCLI(t, list, "-fleet", "-", "-quiet")
	if !strings.Contains(text, srv.URL+" (tenant-a)") || !strings.Contains(text, srv.URL+" (tenant-b)") {
		t.Errorf("text output without the names:\n%s", text)
	}
	twice := srv.URL + "\n# again\n" + `{"target": "` + srv.URL + `", "header": {"X-Tenant": "b"}}` + "\n"
	if code, _, stderr := runCLI(t, twice, "-fleet", "-"); code != exitUsage || !strings.Contains(stderr, "-:3: the same target as line 1") {
		t.Errorf("the same target twice: exit %d, %s", code, stderr)
	}
}

// A fleet with a silent stdio server, one that does not read, a silent HTTP
// server and a crashing one finishes within the timeout and reports each.
func TestFleetOfBadTargets(t *testing.T) {
	if testing.Short() {
		t.Skip("seconds of real processes or pacing: not in -short")
	}
	block := make(chan struct{})
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-block }))
	defer silent.Close()
	defer close(block)
	list := "stdio:sh -c cat>/dev/null\nstdio:sleep 120\n" + silent.URL + "\nstdio:sh -c exit\nstdio:/does/not/exist\n"
	start := time.Now()
	code, out, stderr := runCLI(t, list, "-fleet", "-", "-json", "-timeout", "1s")
	if d := time.Since(start); d >= zoo.TimeoutBound { // the 1 s applied: a bound, not a claim
		t.Errorf("took %v", d)
	}
	if code != exitUnverified || strings.Count(out, `"category":"timeout"`) != 3 || strings.Count(out, `"category":"unreachable"`) != 2 {
		t.Errorf("exit %d\n%s\n%s", code, out, stderr)
	}
}

// The command line, built and run as a program, over stdio: the test binary
// itself plays a stdio MCP server when asked to.
func TestStdioTarget(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"verified", "is-error"} {
		t.Run(mode, func(t *testing.T) {
			code, out, stderr := runCLI(t, "", "-json", "-stdio", "--", "env", "TOOLGUARD_STDIO_SERVER="+mode, exe)
			var rep conformance.Report
			json.Unmarshal([]byte(out), &rep)
			want := map[string]int{"verified": 0, "is-error": 1}[mode]
			if code != want || rep.MediaType != "" || rep.HTTPStatus != 0 {
				t.Errorf("exit %d, want %d: %s %s", code, want, out, stderr)
			}
		})
	}
}

// TestMain makes the test binary the stdio server TestStdioTarget starts,
// when TOOLGUARD_STDIO_SERVER says how it should answer.
func TestMain(m *testing.M) {
	if mode := os.Getenv("TOOLGUARD_STDIO_SERVER"); mode != "" {
		stdioServer(mode)
	}
	if args := os.Getenv("TOOLGUARD_CHECK_MAIN"); args != "" {
		// The command itself, for signal tests: its arguments, split at
		// unit separators.
		os.Args = append(os.Args[:1], strings.Split(args, "\x1f")...)
		main()
	}
	os.Exit(m.Run())
}

func stdioServer(mode string) {
	dec := json.NewDecoder(os.Stdin)
	for {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if dec.Decode(&m) != nil {
			os.Exit(0)
		}
		id := string(m.ID)
		switch m.Method {
		case "initialize":
			fmt.Println("log line that is not JSON")
			fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"t","version":"1"}}}`+"\n", id)
		case "tools/list":
			fmt.Printf(`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`+"\n"+
				`{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}`+"\n", id)
		case "tools/call":
			if mode == "verified" {
				fmt.Printf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"unknown"}}`+"\n", id)
			} else {
				fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[],"isError":true}}`+"\n", id)
			}
		case "server/discover":
			fmt.Printf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no"}}`+"\n", id)
		}
	}
}

// TestHelpAndFlagErrors: -h exits 0, as in toolguard-stdio and
// toolguard-proxy; a bad value names the flag the user typed, once; the
// library's own error names the option.
func TestHelpAndFlagErrors(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"-help"}} {
		if code, _, errOut := runCLI(t, "", args...); code != 0 || !strings.Contains(errOut, "usage:") {
			t.Errorf("%q: exit %d, %q; want 0 and the usage", args, code, errOut)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-timeout", "-1s"}, "-timeout must be more than 0"},
		{[]string{"-timeout", "0"}, "-timeout must be more than 0"},
		{[]string{"-max-pages", "-1"}, "-max-pages must be more than 0"},
		{[]string{"-max-pages", "0"}, "-max-pages must be more than 0"},
		{[]string{"-max-bytes", "0"}, "-max-bytes must be more than 0"},
		{[]string{"-concurrency", "0"}, "-concurrency must be more than 0"},
		{[]string{"-processes", "-1"}, "-processes must be more than 0"},
		{[]string{"-spacing", "-1s"}, "-spacing must not be negative"},
		{[]string{"-name", ""}, "-name must not be empty"},
	} {
		code, _, errOut := runCLI(t, "", append(tc.args, "http://127.0.0.1:1")...)
		if code != exitUsage || strings.Count(errOut, tc.want) != 1 {
			t.Errorf("%q: exit %d, %q; want %d and %q once", tc.args, code, errOut, exitUsage, tc.want)
		}
	}
	code, _, errOut := runCLI(t, "", "-nosuchflag", "http://x")
	if code != exitUsage || strings.Count(errOut, "-nosuchflag") != 1 {
		t.Errorf("-nosuchflag: exit %d, %q; want the error once", code, errOut)
	}
	for _, tc := range []struct {
		opts conformance.Options
		name string
	}{
		{conformance.Options{Timeout: -1}, "Options.Timeout"},
		{conformance.Options{MaxPages: -1}, "Options.MaxPages"},
		{conformance.Options{MaxBodyBytes: -1}, "Options.MaxBodyBytes"},
		{conformance.Options{MaxRetries: -1}, "Options.MaxRetries"},
		{conformance.Options{MaxRetryWait: -1}, "Options.MaxRetryWait"},
	} {
		if _, err := conformance.CheckURL(context.Background(), "http://127.0.0.1:1/mcp", tc.opts); err == nil || !strings.Contains(err.Error(), tc.name+" must not be negative") {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// A fleet interrupted before it checked anything has verified nothing: it
// exits 2, as an interrupted single check does, not 0.
func TestInterruptedFleetIsNotVerified(t *testing.T) {
	ok := httptest.NewServer(server(`{"jsonrpc":"2.0","id":ID,"error":{"code":-32602,"message":"x"}}`, 200))
	defer ok.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errOut bytes.Buffer
	if code := run(ctx, []string{"-fleet", "-"}, strings.NewReader(ok.URL+"\n"), &out, &errOut); code != exitUnverified {
		t.Errorf("exit %d, want %d; stderr: %s", code, exitUnverified, errOut.String())
	}
	if !strings.Contains(errOut.String(), "interrupted: 0 of 1 targets reported") {
		t.Errorf("stderr: %s", errOut.String())
	}
}

// A fleet line that names nothing the checker can check is a usage error
// naming its line, as a bad single target is, never a report: a word, a
// host without a scheme, another scheme, a URL without a host, "stdio:"
// without a command, and a JSON line with a member the checker does not
// read (a misspelt "headers" would send no credentials). A byte order
// mark before the first line is not part of it.
func TestFleetLinesThatAreNoTargetAreUsageErrors(t *testing.T) {
	for _, line := range []string{
		"garbage line here",
		"127.0.0.1:8080/mcp",
		"ftp://example.test/mcp",
		"http://",
		"stdio:",
		`{"target": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer t"}}`,
		`{"target": "notaurl"}`,
		`{"label": "no target"}`,
		`{"target": "http://127.0.0.1:1/a"} {"target": "http://127.0.0.1:1/b"}`,
	} {
		code, out, stderr := runCLI(t, "# a fleet\nhttp://127.0.0.1:1/ok\n"+line+"\n", "-fleet", "-")
		if code != exitUsage || !strings.Contains(stderr, "-:3: want a URL") || out != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", line, code, out, stderr)
		}
	}
	if code, _, stderr := runCLI(t, "http://", "http://"); code != exitUsage || !strings.Contains(stderr, "names no host") {
		t.Errorf("a single URL without a host: exit %d, %s", code, stderr)
	}
	srv := httptest.NewServer(&zoo.Fake{Tools: []string{"echo"}})
	defer srv.Close()
	if code, out, stderr := runCLI(t, "\uFEFF"+srv.URL+"\n", "-fleet", "-", "-quiet"); code != exitVerified || !strings.Contains(out, srv.URL) {
		t.Errorf("a file with a byte order mark: exit %d\n%s\n%s", code, out, stderr)
	}
}

// A password in a target URL is sent (as Basic authentication) and never
// printed: not in a report's target, text or JSON, single or fleet; a
// resumed run still knows the target it reported.
func TestPasswordInATargetIsNotPrinted(t *testing.T) {
	var auth atomic.Value
	fake := &zoo.Fake{Tools: []string{"echo"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization"))
		fake.ServeHTTP(w, r)
	}))
	defer srv.Close()
	target := strings.Replace(srv.URL, "http://", "http://alice:hunter2@", 1)
	for _, args := range [][]string{{target}, {"-json", target}, {"-fleet", "-"}, {"-fleet", "-", "-json"}} {
		code, out, stderr := runCLI(t, target+"\n", args...)
		if code != exitVerified || strings.Contains(out+stderr, "hunter2") || !strings.Contains(out, "alice:") {
			t.Errorf("%v: exit %d\n%s\n%s", args, code, out, stderr)
		}
	}
	// Nor where the URL does not parse: the usage error masks it too.
	bad := "http://alice:hunter2@127.0.0.1:abc/mcp"
	for _, args := range [][]string{{bad}, {"-fleet", "-"}} {
		code, out, stderr := runCLI(t, bad+"\n", args...)
		if code != exitUsage || strings.Contains(out+stderr, "hunter2") || !strings.Contains(stderr, "alice:xxxxx@") {
			t.Errorf("%v: exit %d\n%s\n%s", args, code, out, stderr)
		}
	}
	if a, _ := auth.Load().(string); a != "Basic YWxpY2U6aHVudGVyMg==" {
		t.Errorf("Authorization %q, want alice's Basic credentials", a)
	}
	done := t.TempDir() + "/done.jsonl"
	_, out, _ := runCLI(t, target+"\n", "-fleet", "-", "-json", "-quiet")
	if err := os.WriteFile(done, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, stderr := runCLI(t, target+"\n", "-fleet", "-", "-json", "-resume", done); code != exitVerified || out != "" || !strings.Contains(stderr, "1 targets already reported, 0 to go") {
		t.Errorf("resumed: exit %d\n%s\n%s", code, out, stderr)
	}
}
