package interop

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolguard/toolguard/conformance"
	"github.com/toolguard/toolguard/internal/fixture"
	"github.com/toolguard/toolguard/internal/proc"
)

// TestMain lets the test binary serve a real mcp-go server on stdio, for
// the stdio checks, when TOOLGUARD_MCPGO_STDIO is set.
func TestMain(m *testing.M) {
	if os.Getenv("TOOLGUARD_MCPGO_STDIO") != "" {
		if err := server.ServeStdio(newMCPGo("echo", "add")); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func check(t *testing.T, url string) conformance.Report {
	t.Helper()
	rep, err := conformance.CheckURL(context.Background(), url, conformance.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func want(t *testing.T, rep conformance.Report, v conformance.Verdict, c conformance.Category, era string) {
	t.Helper()
	if rep.Verdict != v || rep.Category != c || (era != "" && rep.Era != era) || rep.Tools != 2 {
		t.Errorf("got %s (era %s, %d tools), want %s %s era %s", rep, rep.Era, rep.Tools, v, c, era)
	}
}

func TestCheckerOnRealMCPGo(t *testing.T) {
	for name, opts := range map[string][]server.StreamableHTTPOption{
		"default":   nil,
		"stateful":  {server.WithStateful(true)},
		"stateless": {server.WithStateLess(true)},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(server.NewStreamableHTTPServer(newMCPGo("echo", "add"), opts...))
			defer srv.Close()
			rep := check(t, srv.URL+"/mcp")
			want(t, rep, conformance.Verified, "", conformance.Era2026)
			if rep.ErrorCode == nil || *rep.ErrorCode != -32602 || rep.HTTPStatus != 400 {
				t.Errorf("mcp-go answered %v with HTTP %d, want -32602 with 400 (2026-07-28)", rep.ErrorCode, rep.HTTPStatus)
			}
		})
	}
	t.Run("2025 era", func(t *testing.T) {
		srv := httptest.NewServer(server.NewStreamableHTTPServer(newMCPGo("echo", "add")))
		defer srv.Close()
		rep, err := conformance.CheckURL(context.Background(), srv.URL+"/mcp", conformance.Options{Era: conformance.Era2025})
		if err != nil {
			t.Fatal(err)
		}
		want(t, rep, conformance.Verified, "", conformance.Era2025)
		if rep.HTTPStatus != 200 {
			t.Errorf("HTTP %d", rep.HTTPStatus)
		}
	})
	t.Run("TestHandler", func(t *testing.T) {
		h := server.NewStreamableHTTPServer(newMCPGo("echo", "add"), server.WithEndpointPath("/"))
		if err := conformance.TestHandler(h, conformance.Options{}); err != nil {
			t.Error(err)
		}
	})
}

func TestCheckerOnRealGoSDK(t *testing.T) {
	for name, opts := range map[string]*gosdk.StreamableHTTPOptions{
		"stateful sse": nil,
		"json":         {JSONResponse: true},
		"stateless":    {Stateless: true},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(goSDKHandler(newGoSDK("echo", "add"), opts))
			defer srv.Close()
			rep := check(t, srv.URL)
			want(t, rep, conformance.Verified, "", "")
			if rep.ErrorCode == nil || *rep.ErrorCode != -32602 {
				t.Errorf("go-sdk answered code %v", rep.ErrorCode)
			}
		})
	}
}

func TestCheckerOnRealTypeScript(t *testing.T) {
	for _, mode := range []string{"--mode=stateful", "--mode=stateless", "--json=true"} {
		t.Run(mode, func(t *testing.T) {
			ts := fixture.StartTS(t, mode)
			want(t, check(t, ts.URL), conformance.ObservedRisk, conformance.ResultIsError, conformance.Era2025)
		})
	}
}

func TestCheckerOnStdio(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := conformance.CheckCommand(context.Background(), []string{"env", "TOOLGUARD_MCPGO_STDIO=1", exe}, conformance.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want(t, rep, conformance.Verified, "", "")

	rep, err = conformance.CheckCommand(context.Background(), fixture.StdioCommand(t), conformance.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want(t, rep, conformance.ObservedRisk, conformance.ResultIsError, conformance.Era2025)
}

// The published reference servers from npm, over stdio, as their users run
// them: each answers the made-up tool with isError.
func TestCheckerOnPublishedStdioServers(t *testing.T) {
	mods := filepath.Join(fixture.NodeDir(t), "node_modules", "@modelcontextprotocol")
	for name, args := range map[string][]string{
		"server-everything":          {"stdio"},
		"server-memory":              nil,
		"server-filesystem":          {t.TempDir()},
		"server-sequential-thinking": nil,
	} {
		t.Run(name, func(t *testing.T) {
			argv := append([]string{"node", filepath.Join(mods, name, "dist", "index.js")}, args...)
			if name == "server-memory" {
				argv = append([]string{"env", "MEMORY_FILE_PATH=" + filepath.Join(t.TempDir(), "memory.jsonl")}, argv...)
			}
			rep, err := conformance.CheckCommand(context.Background(), argv, conformance.Options{Timeout: 20 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != conformance.ObservedRisk || rep.Category != conformance.ResultIsError || rep.Tools == 0 ||
				rep.MediaType != "" || rep.HTTPStatus != 0 {
				t.Errorf("%s (%d tools, media %q)", rep, rep.Tools, rep.MediaType)
			}
		})
	}
}

// byHand sends one 2026-07-28 tools/call of the made-up probe name with
// Mcp-Name set to header, as curl would, and returns the HTTP status and
// the JSON-RPC error code (ok false when the reply carries none).
func byHand(t *testing.T, url, header string) (status, code int, ok bool, body string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+conformance.DefaultProbeName+`","arguments":{}`+fixture.ModernMeta+`}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", conformance.Era2026)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", header)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	code, _, ok = fixture.ErrorMessage(string(b))
	return resp.StatusCode, code, ok, strings.TrimSpace(string(b))
}

// judge reads the two hand-made replies as the issue defines strictness.
func judge(matchStatus, matchCode int, matchOK bool, status, code int, ok bool) conformance.Strictness {
	switch {
	case ok && code == -32020:
		return conformance.Strict
	case status == matchStatus && ok == matchOK && code == matchCode:
		return conformance.Lenient
	case ok && status == 400:
		return conformance.Strict
	}
	return conformance.Undetermined
}

// Real servers speaking 2026-07-28: the checker's mcp_name_header matches
// what each does when the mismatch is sent by hand, and what each does is
// pinned here.
func TestNameHeaderOnRealServers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		url   func(t *testing.T) string
		want  conformance.Strictness
		code  int
		state int
	}{
		{"mcp-go v1.2.1", func(t *testing.T) string {
			srv := httptest.NewServer(server.NewStreamableHTTPServer(newMCPGo("echo", "add")))
			t.Cleanup(srv.Close)
			return srv.URL + "/mcp"
		}, conformance.Strict, -32020, 400},
		{"go-sdk v1.8.0", func(t *testing.T) string {
			// go-sdk speaks 2026-07-28 in its stateless mode only.
			srv := httptest.NewServer(goSDKHandler(newGoSDK("echo", "add"), &gosdk.StreamableHTTPOptions{Stateless: true}))
			t.Cleanup(srv.Close)
			return srv.URL
		}, conformance.Strict, -32020, 400},
		{"TypeScript SDK v2 (@modelcontextprotocol/server 2.4.0)", func(t *testing.T) string {
			return fixture.StartNode(t, "v2-caps-server.mjs").URL
		}, conformance.Strict, -32020, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := tc.url(t)
			rep, err := conformance.CheckURL(context.Background(), url, conformance.Options{})
			if err != nil {
				t.Fatal(err)
			}
			nh := rep.NameHeader
			t.Logf("checker: %s", rep.Lines())
			if rep.Era != conformance.Era2026 {
				t.Fatalf("era %s, want 2026-07-28", rep.Era)
			}

			// The same two calls by hand: the right Mcp-Name, then another
			// made-up one.
			ms, mc, mok, mbody := byHand(t, url, conformance.DefaultProbeName)
			s, c, ok, body := byHand(t, url, nh.HeaderName)
			t.Logf("by hand, Mcp-Name %s: HTTP %d %s", conformance.DefaultProbeName, ms, mbody)
			t.Logf("by hand, Mcp-Name %s: HTTP %d %s", nh.HeaderName, s, body)
			hand := judge(ms, mc, mok, s, c, ok)
			if nh.State != hand || nh.HTTPStatus != s || (nh.ErrorCode != nil) != ok || ok && *nh.ErrorCode != c {
				t.Errorf("checker says %s, by hand %s (HTTP %d, code %d)", nh, hand, s, c)
			}
			if nh.State != tc.want || s != tc.state || c != tc.code {
				t.Errorf("%s is now %s (HTTP %d, code %d); pinned %s (HTTP %d, code %d)", tc.name, nh.State, s, c, tc.want, tc.state, tc.code)
			}
		})
	}
}

// A server of the 2025 era only (server-everything over Streamable HTTP)
// is not asked mcp_name_header.
func TestNameHeaderNotApplicableToServerEverything(t *testing.T) {
	url := startServerEverythingHTTP(t)
	rep, err := conformance.CheckURL(context.Background(), url, conformance.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", rep.Lines())
	if rep.Era != conformance.Era2025 || rep.NameHeader.State != conformance.NotApplicable || rep.Tools == 0 {
		t.Errorf("%s (era %s)", rep.Lines(), rep.Era)
	}
	// Its isError answer is confirmed by a second made-up name.
	if rep.Verdict != conformance.ObservedRisk || rep.Category != conformance.ResultIsError ||
		rep.Confirmation == nil || rep.Confirmation.Category != conformance.ResultIsError {
		t.Errorf("error_taxonomy: %s, confirmation %+v", rep, rep.Confirmation)
	}
}

// A real TypeScript SDK v2 server with its Host check on, reached under a
// name it does not allow: the 403 stays credential_gated, and the detail
// says it is the Host check and names the Host sent.
func TestCheckerNamesTheHostARealServerRefuses(t *testing.T) {
	ts := fixture.StartNode(t, "v2-caps-server.mjs", "--host-check")
	real := strings.TrimPrefix(strings.TrimSuffix(ts.URL, "/mcp"), "http://")
	_, port, _ := net.SplitHostPort(real)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, real) // rebinding.example resolves here
	}
	defer tr.CloseIdleConnections()
	host := "rebinding.example:" + port
	rep, err := conformance.CheckURL(context.Background(), "http://"+host+"/mcp", conformance.Options{Client: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", rep)
	if rep.Verdict != conformance.Unverified || rep.Category != conformance.CredentialGated || rep.HTTPStatus != 403 ||
		!strings.Contains(rep.Detail, "DNS-rebinding") || !strings.Contains(rep.Detail, `"`+host+`"`) {
		t.Errorf("%s", rep)
	}
}

// marked returns the processes (not zombies) whose environment holds mark.
func marked(mark string) []string {
	var found []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !strings.Contains(string(env), mark) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && len(stat) > i+2 && (stat[i+2] == 'Z' || stat[i+2] == 'X') {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		found = append(found, e.Name()+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return found
}

// The checker's stdio targets end as a careful wrapper ends them: after a
// check of server-everything started through npx (sh, npm exec, node),
// alone and in a fleet, no process of the chain is left.
func TestCheckerLeavesNoProcessOfAnNpxChain(t *testing.T) {
	dir := fixture.NodeDir(t)
	if _, err := exec.LookPath("npx"); err != nil {
		t.Skip("npx is not installed")
	}
	for _, mode := range []string{"alone", "fleet"} {
		t.Run(mode, func(t *testing.T) {
			mark := fmt.Sprintf("TOOLGUARD_CHECKER_MARK=%d-%s", os.Getpid(), mode)
			// A script, since a fleet splits its command line on spaces.
			script := filepath.Join(t.TempDir(), "npx.sh")
			if err := os.WriteFile(script, []byte("cd '"+dir+"' && npx -y --offline mcp-server-everything stdio\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			argv := []string{"env", mark, "sh", script}
			var rep conformance.Report
			opts := conformance.Options{Timeout: 20 * time.Second}
			if mode == "alone" {
				var err error
				if rep, err = conformance.CheckCommand(context.Background(), argv, opts); err != nil {
					t.Fatal(err)
				}
			} else {
				conformance.CheckFleet(context.Background(), func(yield func(conformance.Target) bool) {
					yield(conformance.Target{Target: "stdio:" + strings.Join(argv, " ")})
				}, opts, conformance.FleetOptions{Report: func(r conformance.Report) { rep = r }})
			}
			if rep.Verdict != conformance.ObservedRisk || rep.Category != conformance.ResultIsError || rep.Tools == 0 {
				t.Errorf("%s", rep)
			}
			if left := marked(mark); len(left) > 0 {
				t.Errorf("left behind:\n%s", strings.Join(left, "\n"))
				for _, l := range left {
					var pid int
					fmt.Sscanf(l, "%d:", &pid)
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		})
	}
}

// startServerEverythingHTTP starts npm server-everything over Streamable
// HTTP on a free loopback port and returns its URL.
func startServerEverythingHTTP(t *testing.T) string {
	t.Helper()
	dir := fixture.NodeDir(t)
	addr := fixture.FreeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command("node", filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"), "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+port)
	proc.OwnGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("server-everything did not listen")
		}
	}
	return "http://" + addr + "/mcp"
}

// What real servers answer a call turned away before their tool dispatch
// is no answer about an unknown tool: the checker reports it UNVERIFIED
// refused_before_dispatch, in each server's own words. Two ways it comes
// about, each made by a relay between the checker and the server: the
// relay drops the call's Mcp-Name (the server answers -32020), or the
// call reaches a server that does not know its session (a restart, a
// replica behind a load balancer: the relay renames the session).
func TestCheckerOnRealRefusalsBeforeDispatch(t *testing.T) {
	relay := func(t *testing.T, target string, edit func(h http.Header)) string {
		t.Helper()
		u, err := url.Parse(target)
		if err != nil {
			t.Fatal(err)
		}
		rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if strings.Contains(string(body), `"method":"tools/call"`) {
				edit(r.Header)
			}
			r.Body = io.NopCloser(strings.NewReader(string(body)))
			rp.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		return srv.URL + u.Path
	}
	dropName := func(h http.Header) { h.Del("Mcp-Name") }
	renameSession := func(h http.Header) { h.Set("Mcp-Session-Id", "gone-"+h.Get("Mcp-Session-Id")) }
	mcpGo := func(opts ...server.StreamableHTTPOption) func(t *testing.T) string {
		return func(t *testing.T) string {
			srv := httptest.NewServer(server.NewStreamableHTTPServer(newMCPGo("echo", "add"), opts...))
			t.Cleanup(srv.Close)
			return srv.URL + "/mcp"
		}
	}
	goSDK := func(opts *gosdk.StreamableHTTPOptions) func(t *testing.T) string {
		return func(t *testing.T) string {
			srv := httptest.NewServer(goSDKHandler(newGoSDK("echo", "add"), opts))
			t.Cleanup(srv.Close)
			return srv.URL
		}
	}
	for _, tc := range []struct {
		name   string
		server func(t *testing.T) string
		edit   func(http.Header)
		era    string
		status int
	}{
		{"mcp-go v1.6, Mcp-Name dropped", mcpGo(), dropName, "", 400},
		{"go-sdk v1.8, Mcp-Name dropped", goSDK(&gosdk.StreamableHTTPOptions{Stateless: true}), dropName, "", 400},
		{"TypeScript SDK v2, Mcp-Name dropped", func(t *testing.T) string { return fixture.StartNode(t, "v2-caps-server.mjs").URL }, dropName, "", 400},
		{"mcp-go v1.6, session unknown", mcpGo(server.WithStateful(true)), renameSession, conformance.Era2025, 404},
		{"go-sdk v1.8, session unknown", goSDK(nil), renameSession, conformance.Era2025, 404},
		{"TypeScript SDK v1, session unknown", func(t *testing.T) string { return fixture.StartTS(t, "--mode=stateful").URL }, renameSession, conformance.Era2025, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := conformance.CheckURL(context.Background(), relay(t, tc.server(t), tc.edit), conformance.Options{Era: tc.era})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s", rep.Lines())
			if rep.Verdict != conformance.Unverified || rep.Category != conformance.RefusedBeforeDispatch || rep.Stage != "tools/call" || rep.HTTPStatus != tc.status {
				t.Errorf("got %s, want UNVERIFIED refused_before_dispatch at tools/call with HTTP %d", rep, tc.status)
			}
			if rep.NameHeader.State != conformance.NotApplicable {
				t.Errorf("mcp_name_header %s, want not_applicable: the call never reached the dispatch", rep.NameHeader)
			}
		})
	}
}
