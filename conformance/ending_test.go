package conformance_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolguard/toolguard/conformance"
	"github.com/toolguard/toolguard/conformance/internal/zoo"
	"github.com/toolguard/toolguard/internal/proc"
)

// alive reports whether pid is a process that has not exited (a zombie
// has exited).
func alive(pid int) bool {
	p, err := proc.Read(pid)
	return err == nil && !p.Exited()
}

func readPID(t *testing.T, file string) int {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(file)
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			return pid
		}
	}
	t.Fatalf("no pid in %s", file)
	return 0
}

// A stdio server that exits when its input closes but leaves children
// behind (one that ends at SIGTERM, one that ignores it) leaves nothing
// behind the check: the children get SIGTERM first, then SIGKILL. The
// server itself, which exited by itself, is sent no signal.
func TestStdioCheckEndsTheServersProcessGroup(t *testing.T) {
	if testing.Short() {
		t.Skip("seconds of real processes or pacing: not in -short")
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	dir := t.TempDir()
	polite := filepath.Join(dir, "polite")
	stubborn := filepath.Join(dir, "stubborn")
	script := `
trap 'echo leader >> ` + dir + `/leader-term' TERM
sh -c 'trap "echo term > ` + dir + `/polite-term; exit 0" TERM; while :; do sleep 0.05; done' </dev/null >/dev/null 2>&1 &
echo $! > ` + polite + `
sh -c 'trap "" TERM; while :; do sleep 0.05; done' </dev/null >/dev/null 2>&1 &
echo $! > ` + stubborn + `
cat >/dev/null`
	var rep conformance.Report
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Graces that are bounds, not claims: the server's exit when its
		// input closes ends the first at once, and the polite child's at
		// SIGTERM does not end the second (the stubborn one stays), which
		// must only outlast the polite child's trap however loaded the
		// machine.
		rep, _ = conformance.CheckCommand(context.Background(), []string{"sh", "-c", script},
			conformance.WithStdioGrace(conformance.Options{Timeout: time.Second}, 20*time.Second, 3*time.Second))
	}()
	p1, p2 := readPID(t, polite), readPID(t, stubborn)
	select {
	case <-done:
	case <-time.After(60 * time.Second): // a hang bound, not a timing claim
		t.Fatal("the check did not end")
	}
	if rep.Category != conformance.Timeout {
		t.Errorf("report: %s", rep)
	}
	for name, pid := range map[string]int{"the child ending at SIGTERM": p1, "the child ignoring SIGTERM": p2} {
		if alive(pid) {
			t.Errorf("%s (pid %d) outlived the check", name, pid)
			syscallKill(pid)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "polite-term")); err != nil || strings.TrimSpace(string(b)) != "term" {
		t.Errorf("the polite child was not sent SIGTERM before SIGKILL (%q, %v)", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "leader-term")); err == nil {
		t.Error("the server, which exited when its input closed, was sent SIGTERM")
	}
}

// A stdio server that ignores both the end of its input and SIGTERM is
// killed, and the check still ends.
func TestStdioCheckKillsAServerThatIgnoresTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("seconds of real processes or pacing: not in -short")
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	script := `trap '' TERM; echo $$ > ` + pidFile + `; exec 0</dev/null; while :; do sleep 0.05; done`
	done := make(chan conformance.Report, 1)
	go func() {
		rep, _ := conformance.CheckCommand(context.Background(), []string{"sh", "-c", script}, conformance.Options{Timeout: 500 * time.Millisecond})
		done <- rep
	}()
	pid := readPID(t, pidFile)
	select {
	case rep := <-done:
		if rep.Verdict != conformance.Unverified {
			t.Errorf("report: %s", rep)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the check did not end")
	}
	if alive(pid) {
		t.Errorf("the server (pid %d) outlived the check", pid)
		syscallKill(pid)
	}
}

// A 403 or 421 whose body names the Host or Origin keeps its verdict and
// gains a detail naming the Host the checker sent; a plain 403 does not.
func TestForbiddenHostNamesTheHostSent(t *testing.T) {
	for _, tc := range []struct {
		name, stage string
		status      int
		body        string
		category    conformance.Category
		hint        bool
	}{
		{"host not allowed at the call", "tools/call", 403, "forbidden: host not allowed", conformance.CredentialGated, true},
		{"Invalid Host header at the handshake", "initialize", 403, `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Invalid Host header: 127.0.0.1"}}`, conformance.CredentialGated, true},
		{"Invalid Origin at the list", "tools/list", 403, "Invalid Origin", conformance.CredentialGated, true},
		{"421 at the call", "tools/call", 421, "Misdirected Request: invalid Host", conformance.NotJSON, true},
		{"421 at the handshake", "initialize", 421, "invalid host", conformance.ToolsListUnreadable, true},
		{"plain 403", "tools/call", 403, "forbidden", conformance.CredentialGated, false},
		{"403 about a token", "tools/call", 403, "token not allowed for this hostess", conformance.CredentialGated, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(&zoo.Fake{Tools: []string{"x"}, On: map[string]func(http.ResponseWriter, string){
				tc.stage: zoo.Answer(tc.status, "text/plain", tc.body)}})
			defer srv.Close()
			rep, err := conformance.CheckURL(context.Background(), srv.URL, conformance.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Category != conformance.Category(tc.category) || rep.Stage != tc.stage || rep.HTTPStatus != tc.status {
				t.Errorf("report: %s", rep)
			}
			host := strings.TrimPrefix(srv.URL, "http://")
			hinted := strings.Contains(rep.Detail, "DNS-rebinding") && strings.Contains(rep.Detail, `"`+host+`"`)
			if hinted != tc.hint {
				t.Errorf("hint %v, want %v: %s", hinted, tc.hint, rep.Detail)
			}
		})
	}
}

// closingListener closes the connections it is told to before any byte of
// a reply, after reading the request.
type closingListener struct {
	net.Listener
	accepted atomic.Int64
	close    func(n int64) bool // close the n-th connection (1-based)?
}

func (l *closingListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if !l.close(l.accepted.Add(1)) {
			return c, nil
		}
		go func() {
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			c.Read(make([]byte, 4096)) // the request arrives, no reply leaves
			c.Close()
		}()
	}
}

// A connection that breaks before any byte of the reply is asked again
// once, on a new connection; one that breaks twice is unreachable, and the
// report says why.
func TestBrokenConnectionIsRetriedOnce(t *testing.T) {
	serve := func(close func(int64) bool) (*closingListener, string) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		cl := &closingListener{Listener: ln, close: close}
		srv := &http.Server{Handler: &zoo.Fake{Tools: []string{"x"}}}
		go srv.Serve(cl)
		t.Cleanup(func() { srv.Close() })
		return cl, "http://" + ln.Addr().String() + "/mcp"
	}
	_, url := serve(func(n int64) bool { return n == 1 })
	rep, err := conformance.CheckURL(context.Background(), url, conformance.Options{})
	if err != nil || rep.Verdict != conformance.Verified {
		t.Errorf("first connection broken: %s, %v", rep, err)
	}

	cl, url := serve(func(int64) bool { return true })
	rep, err = conformance.CheckURL(context.Background(), url, conformance.Options{})
	if err != nil || rep.Category != conformance.Unreachable || rep.Stage != "discover" ||
		!strings.Contains(rep.Detail, "closed the connection before a reply, on a second connection too") {
		t.Errorf("every connection broken: %s, %v", rep, err)
	}
	if n := cl.accepted.Load(); n != 2 {
		t.Errorf("%d connections for one request, want 2 (one retry)", n)
	}
}

// Fleet mode's pool holds an idle connection for every target in progress:
// at a concurrency above http.DefaultTransport's 100 idle connections, each
// target still makes all its requests on one connection (none is closed
// under it to make room for another target's).
func TestFleetPoolIsSizedForItsConcurrency(t *testing.T) {
	const n = 240
	var conns atomic.Int64
	var targets []conformance.Target
	for range n {
		srv := httptest.NewUnstartedServer(&zoo.Fake{Tools: []string{"x"}})
		srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
			if s == http.StateNew {
				conns.Add(1)
			}
		}
		srv.Start()
		defer srv.Close()
		targets = append(targets, conformance.Target{Target: srv.URL})
	}
	sum := conformance.CheckFleet(context.Background(), slices.Values(targets), conformance.Options{},
		conformance.FleetOptions{Concurrency: n, HostSpacing: 20 * time.Millisecond})
	if sum.ByVerdict[conformance.Verified] != n {
		t.Fatalf("%+v", sum)
	}
	// A pool too small for the fleet closes an idle connection of 140
	// targets at each of their five requests: hundreds more connections.
	// net/http itself may open another now and then: it does not reuse a
	// connection whose write loop has not reported within 50 ms (the
	// machine's load decides that), so the bound leaves room for a few.
	if c := conns.Load(); c < n || c > n+n/8 {
		t.Errorf("%d connections for %d targets: the pool closed connections targets were using", c, n)
	}
}
