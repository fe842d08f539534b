package main

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolguard/toolguard/internal/cmdlog"
	"github.com/toolguard/toolguard/internal/fixture"
)

// front serves the proxy for args in front of upstream and returns its
// URL and log.
func front(t *testing.T, upstream string, args ...string) (string, *fixture.SyncBuffer) {
	t.Helper()
	c, err := parse(append([]string{"-upstream", upstream}, args...))
	if err != nil {
		t.Fatal(err)
	}
	logged := &fixture.SyncBuffer{}
	h, err := handler(c, cmdlog.Text(log.New(logged, "", 0)))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp", logged
}

// send posts body with host and returns the status and body.
func send(t *testing.T, url, host, body string) (int, string) {
	t.Helper()
	return fixture.Post(t, url, body, http.Header{"Host": {host}})
}

const (
	initialize  = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	unknownCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ech0","arguments":{}}}`
)

// TestUnreachableUpstreamIsNamed: an upstream that refuses the connection
// gets the caller 502 with a body naming the cause, and one log line
// naming the upstream and the cause, for a tools/call (whose tool list
// fails too) as for any other request.
func TestUnreachableUpstreamIsNamed(t *testing.T) {
	upstream := "http://" + fixture.FreeAddr(t) + "/mcp"
	url, logged := front(t, upstream)
	for _, body := range []string{initialize, unknownCall} {
		status, got := send(t, url, "", body)
		if status != http.StatusBadGateway || !strings.Contains(got, "cannot be reached: connection refused") {
			t.Errorf("%.40s: %d %q, want 502 naming the refused connection", body, status, got)
		}
		lines := logged.Lines()
		if len(lines) != 1 || !strings.Contains(lines[0], upstream) || !strings.Contains(lines[0], "connection refused") || !strings.Contains(lines[0], "answered 502") {
			t.Errorf("%.40s: logged %q, want one line naming %s and the refused connection", body, lines, upstream)
		}
	}
	// A host name that does not resolve.
	url, logged = front(t, "http://toolguard-test.invalid/mcp")
	if status, got := send(t, url, "", initialize); status != http.StatusBadGateway || !strings.Contains(got, `"toolguard-test.invalid" does not resolve`) {
		t.Errorf("unresolvable host: %d %q", status, got)
	}
	if lines := logged.Lines(); len(lines) != 1 || !strings.Contains(lines[0], "does not resolve") {
		t.Errorf("unresolvable host: logged %q", lines)
	}
}

// TestSilentUpstreamIsNamed: an upstream that accepts the request and
// never answers gets the caller 504 after -upstream-timeout, with a body
// naming the cause, and one log line.
func TestSilentUpstreamIsNamed(t *testing.T) {
	stop := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-stop }))
	defer up.Close()
	defer close(stop)
	url, logged := front(t, up.URL+"/mcp", "-upstream-timeout", "300ms")
	status, got := send(t, url, "", initialize)
	if status != http.StatusGatewayTimeout || !strings.Contains(got, "did not answer within 300ms (-upstream-timeout)") {
		t.Errorf("%d %q, want 504 naming the timeout", status, got)
	}
	if lines := logged.Lines(); len(lines) != 1 || !strings.Contains(lines[0], up.URL) || !strings.Contains(lines[0], "did not answer within 300ms") || !strings.Contains(lines[0], "answered 504") {
		t.Errorf("logged %q, want one line naming the upstream and the timeout", lines)
	}
}

// hostAllowList answers 403 to a request whose Host is not 127.0.0.1, as a
// server's DNS-rebinding protection does, and isError to any call.
func hostAllowList() http.Handler {
	var hosts []string
	ok := fakeUpstream(&hosts)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.Host, "127.0.0.1:") {
			http.Error(w, "Forbidden: invalid Host header", http.StatusForbidden)
			return
		}
		ok.ServeHTTP(w, r)
	})
}

// TestLogPassNamesReasonStatusAndHost: with -log-pass, each request the
// guard passes through gets one line with the reason, the tool, the tool
// set's error, the upstream's status and the Host it came with; without
// it, none.
func TestLogPassNamesReasonStatusAndHost(t *testing.T) {
	up := httptest.NewServer(hostAllowList())
	defer up.Close()
	url, logged := front(t, up.URL+"/mcp", "-log-pass")
	if status, _ := send(t, url, "mcp.example", unknownCall); status != http.StatusForbidden {
		t.Fatalf("a foreign Host: %d, want the upstream's 403", status)
	}
	lines := logged.WaitLines(1, 5*time.Second) // a watched call's line follows its answer
	if len(lines) != 1 || !strings.Contains(lines[0], "reason=") || !strings.Contains(lines[0], `tool="ech0"`) ||
		!strings.Contains(lines[0], "status=403") || !strings.Contains(lines[0], `host="mcp.example"`) {
		t.Errorf("logged %q, want one line with the reason, the tool, status=403 and the Host", lines)
	}
	// A request that is no tools/call: its reason and status.
	if status, _ := send(t, url, strings.TrimPrefix(up.URL, "http://"), initialize); status != http.StatusOK {
		t.Fatalf("initialize: %d", status)
	}
	if lines := logged.Lines(); len(lines) != 1 || !strings.Contains(lines[0], "reason=not-tools-call") || !strings.Contains(lines[0], "status=200") {
		t.Errorf("initialize: logged %q", lines)
	}
	// A rejection is logged as before, and is no pass-through.
	send(t, url, strings.TrimPrefix(up.URL, "http://"), unknownCall)
	if lines := logged.Lines(); len(lines) != 1 || !strings.Contains(lines[0], `not-found answer for tool "ech0"`) {
		t.Errorf("a rejection: logged %q", lines)
	}

	url, logged = front(t, up.URL+"/mcp")
	send(t, url, "mcp.example", unknownCall)
	if lines := logged.Lines(); len(lines) != 0 {
		t.Errorf("without -log-pass: logged %q", lines)
	}
}

// TestStatusWriterKeepsStreaming: an event stream through the proxy reaches
// the caller event by event with -log-pass (the status recorder flushes).
func TestStatusWriterKeepsStreaming(t *testing.T) {
	next := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n")
		w.(http.Flusher).Flush()
		<-next
	}))
	defer up.Close()
	url, _ := front(t, up.URL+"/mcp", "-log-pass")
	resp, err := http.DefaultClient.Do(fixture.NewPost(url, initialize, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 200)
	n, err := resp.Body.Read(buf) // the first event, while the upstream holds the stream
	if !strings.Contains(string(buf[:n]), "notifications/progress") {
		t.Errorf("read %q, %v before the stream ended", buf[:n], err)
	}
	close(next)
}

// TestRejectionLogLinesNameTheirCause: a -32020 answer to a header that
// does not match the body is logged as that, not as an unknown tool the
// upstream did not find; an answer without the list (the caller had not listed)
// names the flag.
func TestRejectionLogLinesNameTheirCause(t *testing.T) {
	var hosts []string
	up := httptest.NewServer(fakeUpstream(&hosts))
	defer up.Close()

	url, logged := front(t, up.URL+"/mcp", "-answer-header-mismatch")
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	status, got := fixture.Post(t, url, body, http.Header{
		"Accept":               {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {"2026-07-28"},
		"Mcp-Method":           {"tools/call"},
		"Mcp-Name":             {"other"},
	})
	if status != http.StatusBadRequest || !strings.Contains(got, "-32020") {
		t.Fatalf("mismatched Mcp-Name: %d %s", status, got)
	}
	if l := logged.String(); !strings.Contains(l, "-32020") || !strings.Contains(l, "the upstream was not asked") || strings.Contains(l, "unknown tool") {
		t.Errorf("log: %q", l)
	}

	url, logged = front(t, up.URL+"/mcp")
	send(t, url, "", unknownCall)
	if l := logged.String(); !strings.Contains(l, "without data.availableTools: the caller has not listed its tools") || strings.Contains(l, "ErrNoList") {
		t.Errorf("log of a call before any list: %q", l)
	}
}

// TestLogPassLeavesTranslatedStreamsToTheirLine: an upstream that answers
// a call with an event stream starts its answer before the not-found
// event; with -log-pass the call still gets one line, the translation's,
// and a known call streamed the same way its pass-through line.
func TestLogPassLeavesTranslatedStreamsToTheirLine(t *testing.T) {
	var hosts []string
	plain := fakeUpstream(&hosts)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		plain.ServeHTTP(rec, r)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		io.WriteString(w, "event: message\ndata: "+strings.TrimSpace(rec.Body.String())+"\n\n")
	}))
	defer up.Close()
	url, logged := front(t, up.URL+"/mcp", "-log-pass")
	hdr := http.Header{"Accept": {"application/json, text/event-stream"}}
	if _, body := fixture.Post(t, url, unknownCall, hdr); !strings.Contains(body, "Unknown tool: ech0") {
		t.Fatalf("unknown call: %s", body)
	}
	if lines := logged.Lines(); len(lines) != 1 || !strings.Contains(lines[0], `not-found answer for tool "ech0"`) {
		t.Errorf("a translated event stream: logged %q, want the translation's line alone", lines)
	}
	if _, body := fixture.Post(t, url, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`, hdr); !strings.Contains(body, "ran") {
		t.Fatalf("known call: %s", body)
	}
	if lines := logged.WaitLines(1, 5*time.Second); len(lines) != 1 || !strings.Contains(lines[0], "passed through") || !strings.Contains(lines[0], "status=200") {
		t.Errorf("a known call's event stream: logged %q", lines)
	}
}
