package main

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
)

// A usage error prints the one line that is wrong and where help is,
// nothing else, and exits 64; -h prints the whole usage and exits 0.
func TestUsageErrorIsOneLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // the wrong line's text
	}{
		{nil, "want one URL"},
		{[]string{"a", "b"}, "want one URL"},
		{[]string{"http://x", "-json"}, "flags go before the URL: -json"},
		{[]string{"-nosuchflag", "http://x"}, "flag provided but not defined: -nosuchflag"},
		{[]string{"-timeout", "soon", "http://x"}, `invalid value "soon" for flag -timeout`},
		{[]string{"-stdio"}, "-stdio needs a command"},
		{[]string{"-header", "no-colon", "http://x"}, "want 'Name: value'"},
		{[]string{"-fleet", "/does/not/exist"}, "/does/not/exist"},
		{[]string{"-fleet", "-", "http://x"}, "-fleet takes no other targets"},
		{[]string{"-era", "1999-01-01", "http://127.0.0.1:1"}, "unknown era"},
		{[]string{"ftp://x"}, "is not an http or https URL"},
		{[]string{"-timeout", "0", "http://x"}, "-timeout must be more than 0"},
		{[]string{"-name", "", "http://x"}, "-name must not be empty"},
		{[]string{"-concurrency", "3", "-npx", "bunx", "http://x"}, "-concurrency, -npx: only a -fleet run reads it"},
		{[]string{"-resume", "old.jsonl", "-stdio", "--", "srv"}, "-resume: only a -fleet run reads it"},
		{[]string{"-env", "A=1", "-compare", "a.jsonl", "b.jsonl"}, "-env: only a -fleet run reads it"},
	} {
		code, out, errOut := runCLI(t, "", tc.args...)
		lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
		if code != exitUsage || out != "" || len(lines) != 2 || !strings.HasPrefix(lines[0], "toolguard-check: ") ||
			!strings.Contains(lines[0], tc.want) || lines[1] != "run with -h for help" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d and two lines: %q, then the hint", tc.args, code, out, errOut, exitUsage, tc.want)
		}
	}
	code, _, errOut := runCLI(t, "", "-h")
	if code != 0 || !strings.HasPrefix(errOut, "usage: toolguard-check") || !strings.Contains(errOut, "-version") || strings.Contains(errOut, "run with -h") {
		t.Errorf("-h: exit %d, %q", code, errOut)
	}
}

// -version prints one line from the build info, whatever else is asked,
// and checks nothing (the line's form is internal/cli's TestVersion).
func TestVersion(t *testing.T) {
	asked := false
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { asked = true }))
	defer srv.Close()
	code, out, errOut := runCLI(t, "", "-version", srv.URL)
	if code != 0 || errOut != "" || strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, "toolguard-check ") ||
		!strings.HasSuffix(out, " "+runtime.Version()+"\n") || asked {
		t.Errorf("exit %d, %q, %q, server asked %v", code, out, errOut, asked)
	}
}

// The checker shows the body of a 502 it cannot classify, through the
// command line: a proxy whose upstream is down says why.
func TestProxy502BodyIsShown(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusBadGateway)
		w.Write([]byte("the upstream cannot be reached: connection refused\n"))
	}))
	defer srv.Close()
	code, out, _ := runCLI(t, "", srv.URL+"/mcp")
	if code != exitUnverified || !strings.Contains(out, "tools_list_unreadable") || !strings.Contains(out, "HTTP 502") ||
		!strings.Contains(out, `the body reads "the upstream cannot be reached: connection refused"`) || strings.Contains(out, "the server speaks") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}
