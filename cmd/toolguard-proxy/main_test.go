package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolguard/toolguard/internal/cli"
	"github.com/toolguard/toolguard/internal/cmdlog"
	"github.com/toolguard/toolguard/internal/fixture"
	toolguard "github.com/toolguard/toolguard/middleware"
)

const exitUsage = cli.ExitUsage

func TestParse(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"-upstream", "ftp://example.com/mcp"},
		{"-upstream", "http://"},
		{"-upstream", "http://127.0.0.1:3000/mcp", "-host", "sometimes"},
		{"-upstream", "http://127.0.0.1:3000/mcp", "extra"},
		{"-nope"},
		{"-upstream", "http://127.0.0.1:3000/mcp", "-list-ttl", "-1s"},
	} {
		if _, err := parse(args); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
	c, err := parse([]string{"-upstream", "http://127.0.0.1:3000/mcp"})
	if err != nil || c.path != "/mcp" || c.host != "keep" || c.listen != "127.0.0.1:8080" || c.guard.ListTTL != 10*time.Minute {
		t.Errorf("defaults: %+v, %v", c, err)
	}
	c, _ = parse([]string{"-upstream", "http://127.0.0.1:3000"})
	if c.path != "/" {
		t.Errorf("path %q for an upstream without one", c.path)
	}
}

// fakeUpstream answers tools/list with echo and any tools/call with an
// isError result, as the TypeScript SDK does, and records each Host.
func fakeUpstream(hosts *[]string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*hosts = append(*hosts, r.Host)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		json.NewDecoder(r.Body).Decode(&m)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case m.Method == "tools/list":
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}`)
		case m.Params.Name == "echo":
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"content":[{"type":"text","text":"ran"}]}}`)
		default:
			// The TypeScript SDK v1's answer to an unknown tool.
			text, _ := json.Marshal("MCP error -32602: Tool " + m.Params.Name + " not found")
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"content":[{"type":"text","text":`+string(text)+`}],"isError":true}}`)
		}
	})
}

func post(t *testing.T, url, host, body string) string {
	t.Helper()
	_, b := fixture.Post(t, url, body, http.Header{"Host": {host}})
	return b
}

// proxyHandler is the proxy's handler for the command line args, logging
// to logs.
func proxyHandler(t *testing.T, logs io.Writer, args ...string) http.Handler {
	t.Helper()
	c, err := parse(args)
	if err != nil {
		t.Fatal(err)
	}
	h, err := handler(c, cmdlog.Text(log.New(logs, "", 0)))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestHandler(t *testing.T) {
	for _, host := range []string{"keep", "upstream"} {
		var hosts []string
		up := httptest.NewServer(fakeUpstream(&hosts))
		var logged bytes.Buffer
		front := httptest.NewServer(proxyHandler(t, &logged, "-upstream", up.URL+"/mcp", "-host", host))
		post(t, front.URL+"/mcp", "mcp.example", `{"jsonrpc":"2.0","id":0,"method":"tools/list"}`) // as clients do first
		got := post(t, front.URL+"/mcp", "mcp.example", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ech0"}}`)
		if !strings.Contains(got, `"error":{"code":-32602,"message":"Unknown tool: ech0. Did you mean echo? Call tools/list for the available tools.","data":{"availableTools":["echo"],"suggestions":["echo"]}}`) {
			t.Errorf("-host %s: unknown tool answered %s", host, got)
		}
		if got := post(t, front.URL+"/mcp", "mcp.example", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`); !strings.Contains(got, `"text":"ran"`) {
			t.Errorf("-host %s: known tool answered %s", host, got)
		}
		if !strings.Contains(logged.String(), `not-found answer for tool "ech0"`) || strings.Count(logged.String(), "not-found answer for tool") != 1 {
			t.Errorf("log %q", logged.String())
		}
		want := "mcp.example"
		if host == "upstream" {
			want = strings.TrimPrefix(up.URL, "http://")
		}
		for _, h := range hosts {
			if h != want {
				t.Errorf("-host %s: the upstream saw Host %q, want %q", host, h, want)
			}
		}
		front.Close()
		up.Close()
	}
}

func TestGracefulShutdown(t *testing.T) {
	var hosts []string
	up := httptest.NewServer(fakeUpstream(&hosts))
	defer up.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"-upstream", up.URL + "/mcp", "-listen", "127.0.0.1:0"}, io.Discard, io.Discard)
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d after shutdown, want 0", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no shutdown")
	}
}

// A client's standing GET event stream does not hold up a shutdown: it
// ends at once, and the command exits 0 well before -shutdown-timeout.
func TestShutdownEndsStandingStreams(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer up.Close()
	var logged fixture.SyncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"-upstream", up.URL + "/mcp", "-listen", "127.0.0.1:0", "-shutdown-timeout", "30s"}, io.Discard, &logged)
	}()
	var addr string
	for deadline := time.Now().Add(10 * time.Second); addr == ""; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not listening: %s", logged.String())
		}
		if _, rest, ok := strings.Cut(logged.String(), "listening on "); ok {
			addr, _, _ = strings.Cut(rest, " ")
		}
	}
	req, _ := http.NewRequest("GET", addr, nil)
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("GET stream: %d", res.StatusCode)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d after a shutdown with a stream open, want 0; log:\n%s", code, logged.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the shutdown waited for the standing stream")
	}
}

// TestPaths: -path and the upstream URL's path are served literally and
// exactly, never read as http.ServeMux patterns (no panic, no wildcard),
// and a -path that is not a URL path is a usage error.
func TestPaths(t *testing.T) {
	for _, p := range []string{"mcp", "GET /mcp", "/a?b", "/a#b", "/a b", "/a%zz", "/a\x00"} {
		var stderr bytes.Buffer
		if code := run(context.Background(), []string{"-upstream", "http://127.0.0.1:1/mcp", "-path", p}, io.Discard, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "-path") {
			t.Errorf("-path %q: exit %d, want %d naming -path: %s", p, code, exitUsage, stderr.String())
		}
	}
	for _, tc := range []struct {
		upstreamPath, path string // the upstream URL's path, and -path ("" for none)
		served, notServed  string
	}{
		{"/v1/{tenant}/mcp", "", "/v1/%7Btenant%7D/mcp", "/v1/acme/mcp"},
		{"/mcp%7Bx", "", "/mcp%7Bx", "/mcp"},
		{"/mcp", "/a/{x", "/a/%7Bx", "/a/"},
		{"/mcp", "/a/%7By%7D", "/a/%7By%7D", "/a/b"},
		{"/mcp", "/x/", "/x/", "/x/y"},
		{"", "", "/", "/mcp"},
	} {
		var hosts []string
		var paths []string
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			paths = append(paths, r.URL.Path)
			fakeUpstream(&hosts).ServeHTTP(w, r)
		}))
		args := []string{"-upstream", up.URL + tc.upstreamPath}
		if tc.path != "" {
			args = append(args, "-path", tc.path)
		}
		c, err := parse(args)
		if err != nil {
			t.Errorf("%q: %v", args, err)
			up.Close()
			continue
		}
		h, err := handler(c, cmdlog.Text(log.New(io.Discard, "", 0)))
		if err != nil {
			t.Fatal(err)
		}
		front := httptest.NewServer(h)
		got := post(t, front.URL+tc.served, "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ech0"}}`)
		if !strings.Contains(got, "Unknown tool: ech0") {
			t.Errorf("%q: %s answered %s", args, tc.served, got)
		}
		want, _ := url.PathUnescape(tc.upstreamPath)
		if want == "" {
			want = "/"
		}
		for _, p := range paths {
			if p != want {
				t.Errorf("%q: the upstream was asked %s, want %s", args, p, want)
			}
		}
		req, _ := http.NewRequest("POST", front.URL+tc.notServed, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "not the path toolguard-proxy serves (-path") || c.path != "/" && strings.Contains(string(body), c.path) {
			t.Errorf("%q: %s answered %d %q, want 404 saying it is not the path served (-path), and not naming it", args, tc.notServed, resp.StatusCode, body)
		}
		front.Close()
		up.Close()
	}
}

// TestServersStatusIsKept: the answer that replaces the server's own
// not-found answer has the server's status, in both eras.
func TestServersStatusIsKept(t *testing.T) {
	for _, status := range []int{200, 400} {
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			json.NewDecoder(r.Body).Decode(&m)
			w.Header().Set("Content-Type", "application/json")
			if m.Method == "tools/list" {
				io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"tools":[{"name":"echo"}]}}`)
				return
			}
			w.WriteHeader(status)
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"error":{"code":-32602,"message":"Tool ech0 not found"}}`)
		}))
		front := httptest.NewServer(proxyHandler(t, io.Discard, "-upstream", up.URL+"/mcp"))
		fixture.Post(t, front.URL+"/mcp", `{"jsonrpc":"2.0","id":0,"method":"tools/list"}`, nil)
		resp, err := http.DefaultClient.Do(fixture.NewPost(front.URL+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ech0"}}`, nil))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != status || !strings.Contains(string(b), `"message":"Unknown tool: ech0. Did you mean echo? Call tools/list for the available tools.","data":{"availableTools":["echo"]`) {
			t.Errorf("server status %d: %d %s", status, resp.StatusCode, b)
		}
		front.Close()
		up.Close()
	}
}

// A usage error exits 64 and prints two lines: what is wrong, naming the
// flag the user typed (never a Go struct field), and where help is; -h
// prints the whole usage and exits 0.
func TestUsageErrorIsOneLine(t *testing.T) {
	up := "http://127.0.0.1:1/mcp"
	for _, args := range [][]string{{"-h"}, {"-help"}} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), args, &stdout, &stderr); code != 0 || stdout.Len() != 0 ||
			!strings.HasPrefix(stderr.String(), "usage: toolguard-proxy") || !strings.Contains(stderr.String(), "-upstream-timeout duration") ||
			!strings.Contains(stderr.String(), "-version") || strings.Contains(stderr.String(), "run with -h") {
			t.Errorf("%q: exit %d, %q; want 0 and the usage", args, code, stderr.String())
		}
	}
	for _, tc := range []struct {
		args []string
		want string // in the message, exactly once
	}{
		{nil, "-upstream is required"},
		{[]string{"-upstream", up, "extra"}, `unexpected argument "extra"`},
		{[]string{"alice:pw@127.0.0.1:1/mcp"}, `unexpected argument "alice:xxxxx@127.0.0.1:1/mcp" (flags come before it; the server to guard is -upstream URL)`},
		{[]string{"-upstream-timeout", "soon"}, `invalid value "soon" for flag -upstream-timeout`},
		{[]string{"-upstream", up, "-host", "sometimes"}, `-host must be keep or upstream, not "sometimes"`},
		{[]string{"-upstream", up, "-path", "mcp"}, `-path "mcp" is not a URL path`},
		{[]string{"-nope"}, "flag provided but not defined: -nope"},
		{[]string{"-upstream", up, "-max-wait", "x"}, "flag provided but not defined: -max-wait"},
		{[]string{"-upstream", up, "-list-ttl", "-1s"}, "-list-ttl must not be negative"},
		{[]string{"-upstream", up, "-tool-list-limit", "-1"}, "-tool-list-limit must be more than 0"},
		{[]string{"-upstream", up, "-tool-list-limit", "0"}, "-tool-list-limit must be more than 0"},
		{[]string{"-upstream", up, "-shutdown-timeout", "-1s"}, "-shutdown-timeout must not be negative"},
		{[]string{"-upstream", up, "-list-max-wait", "1s"}, "flag provided but not defined: -list-max-wait"},
		{[]string{"-upstream", up, "-list-budget", "1s"}, "flag provided but not defined: -list-budget"},
		{[]string{"-upstream", up, "-max-body-bytes", "0"}, "-max-body-bytes must be more than 0"},
		{[]string{"-upstream", up, "-max-body-bytes", "-1"}, "-max-body-bytes must be more than 0"},
		{[]string{"-upstream", "ftp://x"}, `-upstream "ftp://x" is not an http(s) URL`},
		{[]string{"-upstream", "http://user:pw@127.0.0.1:1/mcp"}, "-upstream must not carry credentials"},
		{[]string{"-upstream", "http://user:pw@127.0.0.1:abc/mcp"}, `-upstream "http://user:xxxxx@127.0.0.1:abc/mcp" is not an http(s) URL`},
		{[]string{"-upstream", "http://127.0.0.1:1/mcp#top"}, "has a fragment"},
		{[]string{"-upstream", up, "-log-format", "yaml"}, `-log-format must be text or json, not "yaml"`},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tc.args, &stdout, &stderr)
		lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
		if code != exitUsage || stdout.Len() != 0 || len(lines) != 2 || !strings.HasPrefix(lines[0], "toolguard-proxy: ") ||
			!strings.Contains(lines[0], tc.want) || lines[1] != "run with -h for help" || strings.Contains(stderr.String(), "Options") {
			t.Errorf("%q: exit %d, stderr %q; want %d and two lines: %q, then the hint", tc.args, code, stderr.String(), exitUsage, tc.want)
		}
	}
}

// -version prints one line from the build info on standard output, and
// neither listens nor checks the other flags' values.
func TestVersion(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close() // the address is taken: listening on it would fail
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-version", "-upstream", "ftp://not-checked", "-listen", ln.Addr().String()}, &stdout, &stderr)
	out := stdout.String()
	if code != 0 || stderr.Len() != 0 || strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, "toolguard-proxy ") ||
		!strings.HasSuffix(out, " "+runtime.Version()+"\n") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, stderr.String())
	}
}

// TestZeroMeansZero: an explicit 0 means none, not the library's default.
func TestZeroMeansZero(t *testing.T) {
	c, err := parse([]string{"-upstream", "http://127.0.0.1:1/mcp", "-list-ttl", "0", "-shutdown-timeout", "0"})
	if err != nil {
		t.Fatal(err)
	}
	if c.guard.ListTTL != time.Nanosecond || c.shutdown != 0 {
		t.Errorf("TTL %v, shutdown %v: want no caching, no wait", c.guard.ListTTL, c.shutdown)
	}
	if got := listErrText(toolguard.ErrNoList, c); got != "no list is kept (-list-ttl 0)" {
		t.Errorf("the log says %q of an answer without the list", got)
	}
	// A TTL of one nanosecond keeps lists, if briefly: not said to be 0.
	short, err := parse([]string{"-upstream", "http://127.0.0.1:1/mcp", "-list-ttl", "1ns"})
	if got := listErrText(toolguard.ErrNoList, short); err != nil || strings.Contains(got, "-list-ttl 0") || !strings.Contains(got, "-list-ttl 1ns") {
		t.Errorf("-list-ttl 1ns: the log says %q", got)
	}
	var hosts []string
	up := httptest.NewServer(fakeUpstream(&hosts))
	defer up.Close()
	for _, tc := range []struct {
		flags    []string
		withList bool
	}{{[]string{"-tool-list-limit", "100"}, true}, {[]string{"-tool-list-limit", "1"}, true}, {[]string{"-hide-tool-list"}, false}} {
		c, err := parse(append([]string{"-upstream", up.URL + "/mcp"}, tc.flags...))
		if err != nil {
			t.Fatal(err)
		}
		h, err := handler(c, cmdlog.Text(log.New(io.Discard, "", 0)))
		if err != nil {
			t.Fatal(err)
		}
		front := httptest.NewServer(h)
		post(t, front.URL+"/mcp", "", `{"jsonrpc":"2.0","id":0,"method":"tools/list"}`)
		got := post(t, front.URL+"/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ech0"}}`)
		if !strings.Contains(got, `"code":-32602`) || strings.Contains(got, "availableTools") != tc.withList {
			t.Errorf("%q: %s; want a list: %v", tc.flags, got, tc.withList)
		}
		front.Close()
	}
}

// TestUpstreamQueryIsKept: the query of -upstream (an API key, say)
// reaches the upstream on every request, followed by the caller's parameters but those it sets (a
// caller cannot replace the key); the log never shows it.
func TestUpstreamQueryIsKept(t *testing.T) {
	var mu sync.Mutex
	var queries []string
	var hosts []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		queries = append(queries, r.URL.RawQuery)
		mu.Unlock()
		fakeUpstream(&hosts).ServeHTTP(w, r)
	}))
	defer up.Close()
	url, _ := front(t, up.URL+"/mcp?key=a%2Fb")
	if got := post(t, url, "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`); !strings.Contains(got, "ran") {
		t.Errorf("known call: %s", got)
	}
	post(t, url+"?key=mine&tenant=x", "", `{"jsonrpc":"2.0","id":0,"method":"tools/list"}`)
	if got := post(t, url+"?key=mine&tenant=x", "", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ech0"}}`); !strings.Contains(got, `"availableTools":["echo"]`) {
		t.Errorf("unknown call: %s", got)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"key=a%2Fb", "key=a%2Fb&tenant=x", "key=a%2Fb&tenant=x"} // the call, the caller's tools/list, the unknown call
	if !slices.Equal(queries, want) {
		t.Errorf("the upstream saw the queries %q, want %q", queries, want)
	}

	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	url, logged := front(t, down.URL+"/mcp?key=secret")
	post(t, url, "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if l := logged.String(); !strings.Contains(l, "connection refused") || strings.Contains(l, "secret") || !strings.Contains(l, "/mcp?…") {
		t.Errorf("log %q: want the refused upstream named without its query", l)
	}
}

// An upstream that breaks off after a whole JSON message (fewer bytes than
// its Content-Length, or a chunked body without its last chunk): the
// client gets the status, the header and that message, then a broken
// body, as from the upstream alone (the mcp-go client decodes a message
// as it comes), not an empty reply.
func TestUpstreamBreakingOffAfterAMessageKeepsIt(t *testing.T) {
	msg := `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]}}`
	for name, head := range map[string]string{
		"short":   "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 300\r\n\r\n" + msg,
		"chunked": "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" + fmt.Sprintf("%x\r\n%s\r\n", len(msg), msg),
	} {
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			conn, buf, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			buf.WriteString(head)
			buf.Flush()
			conn.Close()
		}))
		front := httptest.NewServer(proxyHandler(t, io.Discard, "-upstream", up.URL+"/mcp"))
		front.Config.ErrorLog = log.New(io.Discard, "", 0)
		resp, err := http.DefaultClient.Do(fixture.NewPost(front.URL+"/mcp", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{}}}`, nil))
		if err != nil {
			t.Fatalf("%s: %v (an empty reply)", name, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != msg {
			t.Errorf("%s: %d %q, want 200 and the message", name, resp.StatusCode, body)
		}
		front.Close()
		up.Close()
	}
}

// A caller cannot replace a parameter of the -upstream URL under a name a
// server reads as it (PHP's "api.key", "api key", "api[key", "api_key[]" and
// a name cut at a NUL; qs's "api_key[0]" and "api_key.x"; another letter
// case; a ";" that Rack 2 splits on); its other parameters go on, and the
// operator's own ";" parameters are kept from callers too.
func TestTheCallerCannotReplaceAnUpstreamParameterUnderAnotherSpelling(t *testing.T) {
	q := newUpstreamQuery("api_key=SECRET&readonly=1")
	for _, caller := range []string{"api.key=EVIL", "api+key=EVIL", "api%20key=EVIL", "API_KEY=EVIL", "api_key[]=EVIL", "x=1;readonly=0", "readOnly=0",
		"api[key=EVIL", "api_key%00x=EVIL", "api_key%00%=EVIL", "api_key[0]=EVIL", "api_key.x=EVIL", "api_key]=EVIL"} {
		if got := q.join(caller); got != "api_key=SECRET&readonly=1" {
			t.Errorf("caller %q: sent upstream %q", caller, got)
		}
	}
	if got := q.join("tenant=x&page=2"); got != "api_key=SECRET&readonly=1&tenant=x&page=2" {
		t.Errorf("the caller's own parameters: %q", got)
	}
	if got := newUpstreamQuery("a=1;readonly=1").join("readonly=0"); got != "a=1;readonly=1" {
		t.Errorf("an operator's parameter after a ';': sent upstream %q", got)
	}
}
