package interop

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolguard/toolguard/conformance"
	"github.com/toolguard/toolguard/internal/fixture"
)

// proxyProcess is a running toolguard-proxy.
type proxyProcess struct {
	URL  string
	cmd  *exec.Cmd
	mu   sync.Mutex
	log  []string
	done chan struct{}
}

func (p *proxyProcess) logLines() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.log...)
}

// stop sends SIGTERM and returns the exit status.
func (p *proxyProcess) stop(t *testing.T) int {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
		t.Error("toolguard-proxy did not stop on SIGTERM")
	}
	return p.cmd.ProcessState.ExitCode()
}

var listening = regexp.MustCompile(`listening on (http://\S+) -> `)

func startProxy(t *testing.T, args ...string) *proxyProcess {
	t.Helper()
	cmd := exec.Command(command(t, "toolguard-proxy"), append([]string{"-listen", "127.0.0.1:0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proxyProcess{cmd: cmd, done: make(chan struct{})}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.log = append(p.log, sc.Text())
			p.mu.Unlock()
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				ready <- m[1]
			}
		}
		io.Copy(io.Discard, stderr)
		cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			cmd.Process.Kill()
			<-p.done
		}
	})
	select {
	case p.URL = <-ready:
	case <-time.After(10 * time.Second):
		t.Fatalf("toolguard-proxy did not start: %q", p.logLines())
	}
	return p
}

func TestProxyCommandInFrontOfTypeScript(t *testing.T) {
	ts := fixture.StartTS(t, "--mode=stateful")
	p := startProxy(t, "-upstream", ts.URL)
	if alone := check(t, ts.URL); alone.Verdict != conformance.ObservedRisk || alone.Category != conformance.ResultIsError {
		t.Errorf("alone: %s", alone)
	}
	rep := check(t, p.URL)
	want(t, rep, conformance.Verified, "", conformance.Era2025)
	if rep.ErrorCode == nil || *rep.ErrorCode != -32602 {
		t.Errorf("through the proxy: %s", rep)
	}

	// The real TypeScript client: the same tools and known call as alone.
	alone := fixture.TSClient(t, ts.URL, "echo", map[string]any{"text": "hi"})
	through := fixture.TSClient(t, p.URL, "echo", map[string]any{"text": "hi"})
	if strings.Join(through.Tools, ",") != "add,echo" || strings.Join(through.Tools, ",") != strings.Join(alone.Tools, ",") {
		t.Errorf("tools %q, alone %q", through.Tools, alone.Tools)
	}
	if len(through.Call.Content) != 1 || len(alone.Call.Content) != 1 || through.Call.Content[0].Text != alone.Call.Content[0].Text || through.Call.IsError {
		t.Errorf("known call %+v, alone %+v", through.Call, alone.Call)
	}
	if through.Unknown.Code != -32602 || !strings.Contains(string(through.Unknown.Data), `"availableTools":["add","echo"]`) {
		t.Errorf("unknown tool: %+v", through.Unknown)
	}

	if code := p.stop(t); code != 0 {
		t.Errorf("exit status %d after SIGTERM, want 0", code)
	}
	var rejections int
	for _, l := range p.logLines() {
		if strings.Contains(l, "not-found answer for tool") {
			rejections++
		}
	}
	if rejections != 2 { // the checker's and the client's
		t.Errorf("%d rejection log lines, want 2:\n%s", rejections, strings.Join(p.logLines(), "\n"))
	}
}

// hostRecorder records the Host of every request it serves.
type hostRecorder struct {
	h     http.Handler
	mu    sync.Mutex
	hosts map[string]int
}

func (hr *hostRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("X-Test-Direct") == "" { // through the proxy
		hr.mu.Lock()
		hr.hosts[r.Host]++
		hr.mu.Unlock()
	}
	hr.h.ServeHTTP(w, r)
}

func TestProxyCommandInFrontOfMCPGo(t *testing.T) {
	for _, host := range []string{"keep", "upstream"} {
		t.Run(host, func(t *testing.T) {
			rec := &hostRecorder{h: server.NewStreamableHTTPServer(newMCPGo("echo", "add"), server.WithStateLess(true)), hosts: map[string]int{}}
			up := httptest.NewServer(rec)
			defer up.Close()
			p := startProxy(t, "-upstream", up.URL+"/mcp", "-host", host)
			rep := check(t, p.URL)
			want(t, rep, conformance.Verified, "", "")
			if rep.ErrorCode == nil || *rep.ErrorCode != -32602 {
				t.Errorf("through the proxy: %s", rep)
			}
			// Known calls: the same answer as from mcp-go itself.
			for _, era := range []string{"", "2026-07-28"} {
				body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`
				hdr := http.Header{}
				if era != "" {
					body = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
					hdr.Set("Mcp-Protocol-Version", era)
					hdr.Set("Mcp-Method", "tools/call")
					hdr.Set("Mcp-Name", "echo")
				}
				through := post(t, p.URL, body, hdr)
				hdr.Set("X-Test-Direct", "1")
				direct := post(t, up.URL+"/mcp", body, hdr)
				if direct != through || !strings.Contains(through, "echo:hi") {
					t.Errorf("era %q: through the proxy %s\ndirect %s", era, through, direct)
				}
			}
			p.stop(t)
			proxyHost := strings.TrimPrefix(p.URL, "http://")
			proxyHost = proxyHost[:strings.IndexByte(proxyHost, '/')]
			upHost := strings.TrimPrefix(up.URL, "http://")
			rec.mu.Lock()
			defer rec.mu.Unlock()
			wantHost, otherHost := proxyHost, upHost
			if host == "upstream" {
				wantHost, otherHost = upHost, proxyHost
			}
			if rec.hosts[wantHost] == 0 || rec.hosts[otherHost] != 0 {
				t.Errorf("-host %s: the upstream saw Host %v, want only %s", host, rec.hosts, wantHost)
			}
		})
	}
}

func post(t *testing.T, url, body string, hdr http.Header) string {
	t.Helper()
	r := fixture.PostWithin(t, 10*time.Second, url, body, hdr)
	return r.Line + " " + r.Body
}

func TestProxyCommandUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"-upstream", "ftp://x"}, {"-upstream", "http://127.0.0.1:1/mcp", "-host", "other"}, {"-nope"}} {
		cmd := exec.Command(command(t, "toolguard-proxy"), args...)
		out, err := cmd.CombinedOutput()
		if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 64 {
			t.Errorf("%q: %v, want exit status 64\n%s", args, err, out)
		}
	}
}

// postAs posts body to url with the Host header host ("" for the URL's)
// and returns the status and body.
func postAs(t *testing.T, url, host, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	if host != "" {
		req.Host = host
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// requestLines returns the proxy's log lines about requests: all but the
// lines of its start and its shutdown.
func requestLines(p *proxyProcess) []string {
	var out []string
	for _, l := range p.logLines() {
		if !strings.Contains(l, "listening on") && !strings.HasSuffix(l, "shutting down") {
			out = append(out, l)
		}
	}
	return out
}

const (
	reportInitialize = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"interop","version":"1"}}}`
	reportUnknown    = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ech0","arguments":{}}}`
	reportKnown      = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`
)

// TestProxyCommandUnreachableUpstream: toolguard-proxy in front of a port
// nothing listens on answers 502 with a body naming the cause, and logs
// one line naming the upstream and the cause.
func TestProxyCommandUnreachableUpstream(t *testing.T) {
	upstream := "http://" + fixture.FreeAddr(t) + "/mcp"
	p := startProxy(t, "-upstream", upstream)
	answersAndLogsOnce(t, p, upstream, reportUnknown, http.StatusBadGateway, "connection refused")
}

// answersAndLogsOnce posts body through p, in front of upstream: the answer
// is status with a body naming cause, and p logs one line naming upstream
// and cause.
func answersAndLogsOnce(t *testing.T, p *proxyProcess, upstream, body string, status int, cause string) {
	t.Helper()
	got, b := postAs(t, p.URL, "", body)
	if got != status || !strings.Contains(b, cause) {
		t.Errorf("answered %d %q, want %d naming %q", got, b, status, cause)
	}
	p.stop(t)
	lines := requestLines(p)
	if len(lines) != 1 || !strings.Contains(lines[0], upstream) || !strings.Contains(lines[0], cause) {
		t.Errorf("logged %q, want one line naming %s and %q", lines, upstream, cause)
	}
}

// TestProxyCommandSilentUpstream: in front of an upstream that accepts
// connections and never answers, toolguard-proxy answers 504 after
// -upstream-timeout, with a body naming the cause, and logs one line.
func TestProxyCommandSilentUpstream(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c) // read nothing, answer nothing
			mu.Unlock()
		}
	}()
	defer func() {
		ln.Close()
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	}()
	upstream := "http://" + ln.Addr().String() + "/mcp"
	p := startProxy(t, "-upstream", upstream, "-upstream-timeout", "1s")
	answersAndLogsOnce(t, p, upstream, reportInitialize, http.StatusGatewayTimeout, "did not answer within 1s")
}

// TestProxyCommandLogPassHostAllowList: mcp-go v1.2.1 on localhost, with
// its DNS-rebinding protection on (its default), answers 403 to a Host
// that is not a loopback name. Through toolguard-proxy -log-pass (which
// keeps the caller's Host), the pass-through lines name the reason, the
// 403 and the Host; with -host upstream the same caller gets through.
func TestProxyCommandLogPassHostAllowList(t *testing.T) {
	up := httptest.NewServer(server.NewStreamableHTTPServer(newMCPGo("echo", "add"), server.WithStateLess(true)))
	defer up.Close()
	if status, body := postAs(t, up.URL+"/mcp", "mcp.example", reportInitialize); status != http.StatusForbidden {
		t.Fatalf("mcp-go alone answered Host mcp.example %d %q, want its 403", status, body)
	}

	p := startProxy(t, "-upstream", up.URL+"/mcp", "-log-pass")
	for _, body := range []string{reportInitialize, reportUnknown, reportKnown} {
		if status, got := postAs(t, p.URL, "mcp.example", body); status != http.StatusForbidden {
			t.Errorf("%.50s: answered %d %q, want mcp-go's 403", body, status, got)
		}
	}
	p.stop(t)
	lines := requestLines(p)
	if len(lines) != 3 {
		t.Fatalf("logged %d lines, want one per request:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	for i, reason := range []string{"reason=not-tools-call", "reason=", "reason="} {
		l := lines[i]
		if !strings.Contains(l, reason) || !strings.Contains(l, "status=403") || !strings.Contains(l, `host="mcp.example"`) {
			t.Errorf("line %d: %q, want the reason, status=403 and the Host", i, l)
		}
	}
	if !strings.Contains(lines[1], `tool="ech0"`) || !strings.Contains(lines[2], `tool="echo"`) {
		t.Errorf("the calls' lines do not name their tools:\n%s", strings.Join(lines, "\n"))
	}

	p = startProxy(t, "-upstream", up.URL+"/mcp", "-host", "upstream")
	if status, got := postAs(t, p.URL, "mcp.example", reportKnown); status != http.StatusOK || !strings.Contains(got, "echo:hi") {
		t.Errorf("-host upstream: the known call answered %d %q", status, got)
	}
	if status, got := postAs(t, p.URL, "mcp.example", reportUnknown); !strings.Contains(got, `"code":-32602`) {
		t.Errorf("-host upstream: the unknown call answered %d %q", status, got)
	}
	p.stop(t)
}

// reply is one HTTP answer, whole.
type reply struct {
	status int
	ct     string
	body   string
}

func send(t *testing.T, url, body string, hdr http.Header) reply {
	t.Helper()
	r := fixture.PostWithin(t, 20*time.Second, url, body, hdr)
	return reply{r.Status, r.Header.Get("Content-Type"), r.Body}
}

// answerOf returns the JSON-RPC message of a reply, JSON or the data of
// the event stream's last message.
func answerOf(r reply) string {
	if !strings.HasPrefix(r.ct, "text/event-stream") {
		return r.body
	}
	var last string
	for _, line := range strings.Split(r.body, "\n") {
		if d, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "data: "); ok && strings.Contains(d, `"id"`) {
			last = d
		}
	}
	return last
}

// availableTools reads data.availableTools of a -32602 answer.
func availableToolsOf(t *testing.T, r reply) []string {
	t.Helper()
	var m struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    struct {
				AvailableTools []string `json:"availableTools"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(answerOf(r)), &m); err != nil || m.Error == nil || m.Error.Code != -32602 || !strings.HasPrefix(m.Error.Message, "Unknown tool: ") {
		t.Fatalf("not the guard's -32602: %d %s %s", r.status, r.ct, r.body)
	}
	return m.Error.Data.AvailableTools
}

const elicitCaps = `{"elicitation":{}}`

func v2Call(id, name, caps string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `","arguments":{},"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":` + caps + `}}}`
}

func v2Headers(name string) http.Header {
	return http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {name}}
}

// v2List is the tools/list of the caller of v2Call(…, caps), with its
// headers: the same _meta.
func v2List(id, caps string) (string, http.Header) {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list","params":{"_meta":{` +
			`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},` +
			`"io.modelcontextprotocol/clientCapabilities":` + caps + `}}}`,
		http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/list"}}
}

// A TypeScript SDK v2 server hides delete_repository from the list of a
// caller that does not declare elicitation, and runs it when that caller
// calls it, answering an actionable isError (github-mcp-server does the
// same). Through toolguard-proxy that answer reaches the caller byte for
// byte; a name the server does not have gets the guard's -32602 with the
// caller's own list.
func TestProxyPassesTheActionableIsErrorOfAHiddenTool(t *testing.T) {
	ts := fixture.StartNode(t, "v2-caps-server.mjs")
	p := startProxy(t, "-upstream", ts.URL)
	for _, caps := range []string{`{}`, elicitCaps} {
		alone := send(t, ts.URL, v2Call("1", "delete_repository", caps), v2Headers("delete_repository"))
		through := send(t, p.URL, v2Call("1", "delete_repository", caps), v2Headers("delete_repository"))
		if through != alone {
			t.Errorf("caps %s: through the proxy %+v\nalone %+v", caps, through, alone)
		}
		if caps == `{}` && !strings.Contains(alone.body, `requires client support for form elicitation`) {
			t.Errorf("the fixture did not answer the actionable isError: %+v", alone)
		}
	}
	alone := send(t, ts.URL, v2Call("2", "nope", `{}`), v2Headers("nope"))
	if alone.status != 200 || !strings.Contains(alone.body, `"code":-32602`) || strings.Contains(alone.body, "availableTools") {
		t.Fatalf("the server alone answered %+v", alone)
	}
	for caps, want := range map[string]string{`{}`: "get_repository", elicitCaps: "delete_repository,get_repository"} {
		// The caller lists first, as clients do.
		list, hdr := v2List("3", caps)
		if l := send(t, p.URL, list, hdr); !strings.Contains(l.body, `"get_repository"`) {
			t.Fatalf("caps %s: tools/list through the proxy %+v", caps, l)
		}
		through := send(t, p.URL, v2Call("2", "nope", caps), v2Headers("nope"))
		if through.status != alone.status || strings.Join(availableToolsOf(t, through), ",") != want {
			t.Errorf("caps %s: unknown tool through the proxy %+v, want status %d and the list %s", caps, through, alone.status, want)
		}
	}
}

// Every SDK's own not-found answer, through toolguard-proxy, becomes the
// guard's -32602 with the caller's list: the checker finds each server
// VERIFIED, and a made-up name gets data.availableTools.
func TestProxyTranslatesEverySDKsNotFoundAnswer(t *testing.T) {
	mcpgoSrv := httptest.NewServer(server.NewStreamableHTTPServer(newMCPGo("echo", "add"), server.WithStateLess(true)))
	defer mcpgoSrv.Close()
	gosdkSrv := httptest.NewServer(goSDKHandler(newGoSDK("echo", "add"), &gosdk.StreamableHTTPOptions{Stateless: true}))
	defer gosdkSrv.Close()
	for _, tc := range []struct {
		name      string
		url       func(t *testing.T) string
		aloneRisk bool   // OBSERVED_RISK alone
		known     string // a tool the server has
	}{
		{"mcp-go", func(*testing.T) string { return mcpgoSrv.URL + "/mcp" }, false, "echo"},
		{"go-sdk", func(*testing.T) string { return gosdkSrv.URL }, false, "echo"},
		{"TypeScript SDK v1", func(t *testing.T) string { return fixture.StartTS(t, "--mode=stateful").URL }, true, "echo"},
		{"TypeScript SDK v2", func(t *testing.T) string { return fixture.StartNode(t, "v2-caps-server.mjs").URL }, false, "get_repository"},
		{"npm fastmcp", func(t *testing.T) string { return fixture.StartNode(t, "fastmcp-server.mjs", "--http").URL }, false, "echo"},
		{"npm fastmcp, edge runtime", func(t *testing.T) string { return fixture.StartNode(t, "fastmcp-edge-server.mjs").URL }, false, "echo"},
		{"server-everything (npm 2026.8.31)", startServerEverythingHTTP, true, "echo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := tc.url(t)
			alone, err := conformance.CheckURL(context.Background(), up, conformance.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if (alone.Verdict == conformance.ObservedRisk) != tc.aloneRisk {
				t.Errorf("alone: %s", alone)
			}
			p := startProxy(t, "-upstream", up)
			through, err := conformance.CheckURL(context.Background(), p.URL, conformance.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if through.Verdict != conformance.Verified || through.ErrorCode == nil || *through.ErrorCode != -32602 {
				t.Errorf("through the proxy: %s", through)
			}
			// The real TypeScript client: the same tools as alone, and for a
			// mistyped name the guard's -32602 with the caller's list.
			res := fixture.TSClient(t, p.URL, tc.known, map[string]any{"text": "hi"})
			var listed []string
			if err := json.Unmarshal(res.Unknown.Data, &struct {
				AvailableTools *[]string `json:"availableTools"`
			}{&listed}); err != nil || res.Unknown.Code != -32602 || !slices.Equal(listed, slices.Sorted(slices.Values(res.Tools))) {
				t.Errorf("a mistyped name through the proxy: %+v (tools %v)", res.Unknown, res.Tools)
			}
			var rejected bool
			p.stop(t)
			for _, l := range p.logLines() {
				rejected = rejected || strings.Contains(l, `not-found answer for tool "__toolguard_probe_nonexistent_tool__"`)
			}
			if !rejected {
				t.Errorf("no log line for the translated answer:\n%s", strings.Join(p.logLines(), "\n"))
			}
		})
	}
}

// silentList is mcp-go whose tools/list never answers (until the test
// ends); listing is closed when the first tools/list has arrived.
type silentList struct {
	h       http.Handler
	done    chan struct{}
	listing chan struct{}
	once    sync.Once
}

func (s *silentList) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if strings.Contains(string(body), `"tools/list"`) {
		s.once.Do(func() { close(s.listing) })
		select {
		case <-s.done:
		case <-r.Context().Done():
		}
		return
	}
	r.Body = io.NopCloser(strings.NewReader(string(body)))
	s.h.ServeHTTP(w, r)
}

// TestProxyUnansweredListHoldsNothing: while the caller's own tools/list
// is still unanswered upstream, its known calls get the upstream's answer
// byte for byte, and an unknown call gets -32602 without the list, and a
// log line says so.
func TestProxyUnansweredListHoldsNothing(t *testing.T) {
	done := make(chan struct{})
	defer close(done)
	up := httptest.NewServer(&silentList{h: server.NewStreamableHTTPServer(newMCPGo("echo", "add"), server.WithStateLess(true)), done: done, listing: make(chan struct{})})
	defer up.Close()
	p := startProxy(t, "-upstream", up.URL+"/mcp")
	ctx, cancel := context.WithCancel(context.Background())
	listed := make(chan struct{})
	go func() {
		defer close(listed)
		req := fixture.NewPost(p.URL, `{"jsonrpc":"2.0","id":"l","method":"tools/list"}`, nil).WithContext(ctx)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	defer func() { cancel(); <-listed }()
	<-up.Config.Handler.(*silentList).listing

	known := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`
	for range 3 {
		alone := send(t, up.URL+"/mcp", known, nil)
		through := send(t, p.URL, known, nil)
		if through != alone || !strings.Contains(through.body, "echo:hi") {
			t.Fatalf("known call through the proxy %+v, alone %+v", through, alone)
		}
	}
	unknown := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope","arguments":{}}}`
	through := send(t, p.URL, unknown, nil)
	if tools := availableToolsOf(t, through); tools != nil || !strings.Contains(through.body, `"Unknown tool: nope. Call tools/list for the available tools."`) {
		t.Errorf("a list that never came: %+v", through)
	}
	cancel()
	<-listed
	p.stop(t)
	var logged bool
	for _, l := range p.logLines() {
		logged = logged || (strings.Contains(l, `not-found answer for tool "nope"`) && strings.Contains(l, "without data.availableTools"))
	}
	if !logged {
		t.Errorf("no log line says the answer went without the list:\n%s", strings.Join(p.logLines(), "\n"))
	}
}

// A request without a Host: real servers' DNS-rebinding protection turns
// it away (403), and through the proxy it never reaches them, so the
// proxy cannot send them a Host the caller did not (it answers 400). It
// had sent the upstream URL's host, and the server answered as to a
// caller it allows.
func TestProxyCommandSendsNoHostTheCallerDidNot(t *testing.T) {
	for _, tc := range []struct {
		name string
		url  func(t *testing.T) string
	}{
		{"mcp-go v1.6", func(t *testing.T) string {
			srv := httptest.NewServer(server.NewStreamableHTTPServer(newMCPGo("echo", "add"), server.WithStateLess(true)))
			t.Cleanup(srv.Close)
			return srv.URL + "/mcp"
		}},
		{"go-sdk v1.8", func(t *testing.T) string {
			srv := httptest.NewServer(goSDKHandler(newGoSDK("echo", "add"), &gosdk.StreamableHTTPOptions{Stateless: true}))
			t.Cleanup(srv.Close)
			return srv.URL + "/mcp"
		}},
		{"TypeScript SDK v2, --host-check", func(t *testing.T) string {
			return fixture.StartNode(t, "v2-caps-server.mjs", "--host-check").URL
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := tc.url(t)
			p := startProxy(t, "-upstream", up)
			defer p.stop(t)
			for _, target := range []string{up, p.URL} {
				u, err := url.Parse(target)
				if err != nil {
					t.Fatal(err)
				}
				got := rawRequest(t, u.Host, "POST "+u.Path+" HTTP/1.1\r\nHost:\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: "+fmt.Sprint(len(reportInitialize))+"\r\n\r\n"+reportInitialize)
				status, _, _ := strings.Cut(strings.TrimPrefix(got, "HTTP/1.1 "), " ")
				switch {
				case target == up && status != "403":
					t.Errorf("alone: %q, want the server's 403", got)
				case target == p.URL && (status != "400" || !strings.Contains(got, "toolguard-proxy: the request names no Host")):
					t.Errorf("through the proxy: %q, want its 400", got)
				}
			}
		})
	}
}

// rawRequest writes req to addr on a connection of its own and returns
// all that came back.
func rawRequest(t *testing.T, addr, req string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	io.WriteString(c, req)
	b, _ := io.ReadAll(c)
	return string(b)
}
