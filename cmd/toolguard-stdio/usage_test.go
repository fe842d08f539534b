//go:build unix

package main

import (
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// A usage error prints the one line that is wrong and where help is,
// nothing else, on standard error, exits 64 and starts nothing.
func TestUsageErrorIsOneLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // the wrong line's text
	}{
		{nil, "no server command"},
		{[]string{"--"}, "no server command"},
		{[]string{"-nope", "--", "true"}, "flag provided but not defined: -nope"},
		{[]string{"-grace", "soon", "--", "true"}, `invalid value "soon" for flag -grace`},
		{[]string{"-grace", "0", "--", "true"}, "-grace must be more than 0"},
		{[]string{"-tool-list-limit", "0", "--", "true"}, "-tool-list-limit must be more than 0"},
		{[]string{"-max-line-bytes", "-5", "--", "true"}, "-max-line-bytes must be more than 0"},
	} {
		code, out, errOut := runWith(t, "", tc.args...)
		lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
		if code != exitUsage || out != "" || len(lines) != 2 || !strings.HasPrefix(lines[0], "toolguard-stdio: ") ||
			!strings.Contains(lines[0], tc.want) || lines[1] != "run with -h for help" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d and two lines: %q, then the hint", tc.args, code, out, errOut, exitUsage, tc.want)
		}
	}
	code, out, errOut := runWith(t, "", "-h")
	if code != 0 || out != "" || !strings.HasPrefix(errOut, "usage: toolguard-stdio") || !strings.Contains(errOut, "-version") ||
		!strings.Contains(errOut, "-grace duration") || strings.Contains(errOut, "run with -h") {
		t.Errorf("-h: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// -version prints one line from the build info on standard output and
// starts no server: the command after it would leave a file behind.
func TestVersion(t *testing.T) {
	marker := t.TempDir() + "/started"
	code, out, errOut := runWith(t, "", "-version", "--", "sh", "-c", "touch "+marker)
	if code != 0 || errOut != "" || strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, "toolguard-stdio ") ||
		!strings.HasSuffix(out, " "+runtime.Version()+"\n") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("-version started the server")
	}
}

// A server that fails to start, or ends by itself before the client has
// sent anything, gets one line of toolguard-stdio's on standard error
// (after whatever the server wrote there itself), and the exit status is
// still the server's (127 when it cannot start). Each is a real
// toolguard-stdio process whose client keeps its input open and silent.
// A server that ends after the client spoke gets no such line.
func TestServerGoneAtOnceIsOneLine(t *testing.T) {
	for _, tc := range []struct {
		argv  []string
		code  int
		lines []string // standard error, line by line
	}{
		{[]string{"sh", "-c", "exit 3"}, 3, []string{"toolguard-stdio: the server (sh) exited with status 3 before the client sent anything"}},
		{[]string{"sh", "-c", "exit 0"}, 0, []string{"toolguard-stdio: the server (sh) exited with status 0 before the client sent anything"}},
		{[]string{"sh", "-c", "echo 'no API key' >&2; exit 1"}, 1, []string{"no API key", "toolguard-stdio: the server (sh) exited with status 1 before the client sent anything"}},
		{[]string{"sh", "-c", "kill -KILL $$"}, 137, []string{"toolguard-stdio: the server (sh) was ended by SIGKILL (exit status 137) before the client sent anything"}},
		{[]string{"/nonexistent/server", "--token", "secret"}, exitNotFound, []string{"toolguard-stdio: cannot start the server: fork/exec /nonexistent/server: no such file or directory"}},
		{[]string{"toolguard-no-such-command"}, exitNotFound, []string{`toolguard-stdio: cannot start the server: exec: "toolguard-no-such-command": executable file not found in $PATH`}},
	} {
		w, errOut := startWrapper(t, append([]string{"--"}, tc.argv...)...)
		code := w.wait(t)
		w.in.Close()
		got := strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n")
		if code != tc.code || !slices.Equal(got, tc.lines) {
			t.Errorf("%q: exit %d, stderr %q; want %d, %q", tc.argv, code, errOut.String(), tc.code, tc.lines)
		}
	}
	// A server that ends because the client closed its input at once is
	// said to end after that, not before the client spoke.
	w, errOut := startWrapper(t, "--", "sh", "-c", "cat >/dev/null; exit 4")
	w.in.Close()
	if code, want := w.wait(t), "toolguard-stdio: the server (sh) exited with status 4 after the client closed its input without sending anything\n"; code != 4 || errOut.String() != want {
		t.Errorf("a client that closes its input at once: exit %d, stderr %q; want 4 and %q", code, errOut.String(), want)
	}
	w, errOut = startWrapper(t, "--", "sh", "-c", "read line; exit 3")
	io.WriteString(w.in, "{}\n")
	if code := w.wait(t); code != 3 || errOut.String() != "" {
		t.Errorf("a server ending after the client's first line: exit %d, stderr %q; want 3 and nothing", code, errOut.String())
	}
	w.in.Close()
}
