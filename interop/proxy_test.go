package interop

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

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
		if strings.Contains(l, "rejected unknown tool") {
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
	if r.Header.Get("X-Forwarded-For") != "" { // through the proxy
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
				direct := post(t, up.URL+"/mcp", body, hdr)
				through := post(t, p.URL, body, hdr)
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
