package interop

import (
	"bufio"
	"io"
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
