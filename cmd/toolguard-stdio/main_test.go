package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolguard/toolguard/internal/fixture"
)

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

func runWith(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out bytes.Buffer
	var errOut fixture.SyncBuffer
	code := run(args, strings.NewReader(stdin), nopCloser{&out}, &errOut)
	return code, out.String(), errOut.String()
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"--"}, {"-nope", "--", "true"}} {
		if code, _, _ := runWith(t, "", args...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d", args, code, exitUsage)
		}
	}
	for _, args := range [][]string{{"-h"}, {"-help"}} {
		if code, _, errOut := runWith(t, "", args...); code != 0 || !strings.Contains(errOut, "usage:") || !strings.Contains(errOut, "Exit status") || !strings.Contains(errOut, "74  ") {
			t.Errorf("%q: exit %d, %q; want 0 and the usage with the exit statuses", args, code, errOut)
		}
	}
	if _, _, errOut := runWith(t, "", "-nope", "--", "true"); strings.Count(errOut, "-nope") != 1 {
		t.Errorf("-nope: %q, want the error once", errOut)
	}
	// A bad value is a usage error that names the flag, checked before
	// anything starts.
	for _, args := range [][]string{
		{"-tool-list-limit", "-1"}, {"-tool-list-limit", "0"},
		{"-max-line-bytes", "0"}, {"-max-line-bytes", "-5"},
		{"-grace", "0"}, {"-grace", "-1s"},
	} {
		code, _, errOut := runWith(t, "", append(args, "--", "true")...)
		if code != exitUsage || !strings.Contains(errOut, args[0]+" must") || strings.Contains(errOut, "Options") {
			t.Errorf("%q: exit %d, %q; want %d naming %s", args, code, errOut, exitUsage, args[0])
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
	// -- is optional: flags end at the command.
	if code, _, _ := runWith(t, "", "-log", "sh", "-c", "exit 3"); code != 3 {
		t.Errorf("without --: exit %d, want the server's 3", code)
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

// TestLogUntracked: with -log, a client line the guard cannot read is
// logged as untracked, and still reaches the server.
func TestLogUntracked(t *testing.T) {
	in := "not json, but it mentions tools/call\n"
	code, out, errOut := runWith(t, in, "-log", "--", "cat")
	if code != 0 || out != in || strings.Count(errOut, "untracked:") != 1 || !strings.Contains(errOut, "outside the strict subset") {
		t.Errorf("exit %d, out %q, log %q", code, out, errOut)
	}
}

// listThenCall is the client's own tools/list, then a call to a tool the
// fake server does not have. The list in data.availableTools is the
// answer to the client's tools/list, read as it passed.
const listThenCall = `{"jsonrpc":"2.0","id":5,"method":"tools/list"}` + "\n" +
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ech0"}}` + "\n"

// TestLogTranslations: with -log, each translated answer is logged.
func TestLogTranslations(t *testing.T) {
	var log fixture.SyncBuffer
	got := sessionLog(t, listThenCall, &log, "-log")
	if !strings.Contains(got, `"code":-32602`) || !strings.Contains(got, `"availableTools":["echo","slow"]`) ||
		!strings.Contains(log.String(), `translated the server's not-found answer for tool "ech0"`+"\n") {
		t.Errorf("answer %s, log %q", got, log.String())
	}
}

// TestMain makes the test binary a stdio MCP server with two tools when
// TOOLGUARD_FAKE_SERVER is set: echo, answered at once, and slow,
// answered a second after the end of its input; it exits
// with TOOLGUARD_FAKE_EXIT (0 without) once its input has ended and every
// call is answered. With TOOLGUARD_STDIO_MAIN set, the test binary is
// toolguard-stdio itself.
func TestMain(m *testing.M) {
	if os.Getenv("TOOLGUARD_FAKE_SERVER") != "" {
		fakeServer()
		code, _ := strconv.Atoi(os.Getenv("TOOLGUARD_FAKE_EXIT"))
		os.Exit(code)
	}
	if os.Getenv("TOOLGUARD_STDIO_MAIN") != "" {
		main() // the test binary is toolguard-stdio
	}
	os.Exit(m.Run())
}

func fakeServer() {
	var (
		mu    sync.Mutex // one answer at a time
		calls sync.WaitGroup
	)
	printf := func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Printf(format, a...)
	}
	defer calls.Wait()
	inputEnded := make(chan struct{})
	defer close(inputEnded) // runs before calls.Wait: the input has ended
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID == nil {
			continue
		}
		id := string(m.ID)
		switch m.Method {
		case "initialize":
			printf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}}`+"\n", id)
		case "tools/list":
			printf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"slow","inputSchema":{"type":"object"}}]}}`+"\n", id)
		case "tools/call":
			switch m.Params.Name {
			case "echo":
				printf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"echo"}]}}`+"\n", id)
				continue
			case "slow":
				// Answered once the input has ended (the event), and then
				// a second later: the tool's own running time, longer
				// than the -grace the lifecycle tests pass. Nothing
				// waits on this time; a loaded machine only makes it
				// longer.
				calls.Add(1)
				go func() {
					defer calls.Done()
					<-inputEnded
					time.Sleep(time.Second)
					printf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"slow"}]}}`+"\n", id)
				}()
				continue
			}
			// As the TypeScript SDK v1 answers an unknown tool.
			text, _ := json.Marshal("MCP error -32602: Tool " + m.Params.Name + " not found")
			printf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%s}],"isError":true}}`+"\n", id, text)
		}
	}
}

// session runs toolguard-stdio in front of the fake server, does the
// handshake, sends lines and returns the answer with id 1.
func session(t *testing.T, line string, flags ...string) string {
	t.Helper()
	return sessionLog(t, line, io.Discard, flags...)
}

// sessionLog is session with the command's standard error on stderr.
func sessionLog(t *testing.T, line string, stderr io.Writer, flags ...string) string {
	t.Helper()
	t.Setenv("TOOLGUARD_FAKE_SERVER", "1")
	// A -race binary sleeps 1s on exit by default, as long as -grace.
	t.Setenv("GORACE", os.Getenv("GORACE")+" atexit_sleep_ms=0")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(append(flags, "--", os.Args[0]), inR, outW, stderr)
	}()
	br := bufio.NewReader(outR)
	io.WriteString(inW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	if l, err := br.ReadString('\n'); err != nil || !strings.Contains(l, "serverInfo") {
		t.Fatalf("initialize answered %q, %v", l, err)
	}
	io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+line)
	var answer string
	for !strings.HasPrefix(answer, `{"jsonrpc":"2.0","id":1,`) {
		var err error
		if answer, err = br.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	inW.Close()
	go io.Copy(io.Discard, br)
	if code := <-done; code != 0 {
		t.Errorf("exit %d", code)
	}
	return answer
}

// TestFlagValues: -tool-list-limit caps the list; -hide-tool-list leaves
// it out.
func TestFlagValues(t *testing.T) {
	for _, tc := range []struct {
		flags    []string
		withList bool
	}{{nil, true}, {[]string{"-tool-list-limit", "1"}, true}, {[]string{"-hide-tool-list"}, false}} {
		got := session(t, listThenCall, tc.flags...)
		if !strings.Contains(got, `"code":-32602`) || strings.Contains(got, `"availableTools"`) != tc.withList {
			t.Errorf("%q: answered %s, want a list: %v", tc.flags, got, tc.withList)
		}
	}
}
