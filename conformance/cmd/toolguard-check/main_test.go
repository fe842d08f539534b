package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/toolguard/toolguard/conformance"
	"github.com/toolguard/toolguard/conformance/internal/zoo"
)

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
			srv := httptest.NewServer(tc.Server)
			defer srv.Close()
			args := []string{"-json"}
			if tc.Opts.Era != "" {
				args = append(args, "-era", tc.Opts.Era)
			}
			if tc.Opts.MaxPages != 0 {
				args = append(args, "-max-pages", fmt.Sprint(tc.Opts.MaxPages))
			}
			code, out, stderr := runCLI(t, "", append(args, srv.URL)...)
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
	ok := httptest.NewServer(server(`{"jsonrpc":"2.0","id":ID,"error":{"code":-32602,"message":"x"}}`, 200))
	defer ok.Close()
	risky := httptest.NewServer(server(`{"jsonrpc":"2.0","id":ID,"result":{"content":[],"isError":true}}`, 200))
	defer risky.Close()
	list := "# targets\n" + ok.URL + "\n\n" + risky.URL + "\n" + ok.URL + "/again\n"
	code, out, stderr := runCLI(t, list, "-fleet", "-", "-concurrency", "2", "-spacing", "1ms")
	if code != exitRisk {
		t.Errorf("exit %d, want %d", code, exitRisk)
	}
	for _, want := range []string{"VERIFIED", "2", "OBSERVED_RISK", "result_is_error", "total", "3"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr, "[3/3]") {
		t.Errorf("no progress on stderr: %q", stderr)
	}
	code, out, _ = runCLI(t, list, "-fleet", "-", "-json", "-quiet")
	var res struct {
		Reports  []conformance.Report        `json:"reports"`
		Verdicts map[conformance.Verdict]int `json:"verdicts"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != exitRisk ||
		len(res.Reports) != 3 || res.Verdicts[conformance.Verified] != 2 || res.Verdicts[conformance.ObservedRisk] != 1 {
		t.Errorf("exit %d, %v, %s", code, err, out)
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
