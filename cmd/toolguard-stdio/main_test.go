package main

import (
	"bytes"
	"io"
	"os/exec"
	"strings"
	"testing"
)

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

func runWith(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, strings.NewReader(stdin), nopCloser{&out}, &errOut)
	return code, out.String(), errOut.String()
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"--"}, {"-nope", "--", "true"}, {"-max-wait", "-1s", "--", "true"}} {
		if code, _, _ := runWith(t, "", args...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d", args, code, exitUsage)
		}
	}
	if code, _, _ := runWith(t, "", "--", "/nonexistent/server"); code != exitNotFound {
		t.Errorf("a command that cannot start: exit %d, want %d", code, exitNotFound)
	}
}

func TestExitStatus(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Fatal("sh is needed")
	}
	if code, _, _ := runWith(t, "", "--", "sh", "-c", "exit 3"); code != 3 {
		t.Errorf("exit %d, want the server's 3", code)
	}
	if code, _, _ := runWith(t, "", "--", "sh", "-c", "kill -TERM $$"); code != 128+15 {
		t.Errorf("exit %d, want 143 for a server ended by SIGTERM", code)
	}
}

// TestPipes: the client's lines reach the server and the server's lines
// reach the client, byte for byte, and standard error passes through.
func TestPipes(t *testing.T) {
	in := "line one\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\nnot json \xff\n"
	code, out, errOut := runWith(t, in, "--", "sh", "-c", "cat; echo to-stderr >&2")
	if code != 0 || out != in {
		t.Errorf("exit %d, the client read %q, want %q", code, out, in)
	}
	if !strings.Contains(errOut, "to-stderr") {
		t.Errorf("standard error: %q", errOut)
	}
}
