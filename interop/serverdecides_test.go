package interop

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolguard/toolguard/conformance"
	"github.com/toolguard/toolguard/internal/fixture"
)

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
				rejected = rejected || strings.Contains(l, `rejected unknown tool "__toolguard_probe_nonexistent_tool__"`)
			}
			if !rejected {
				t.Errorf("no log line for the translated answer:\n%s", strings.Join(p.logLines(), "\n"))
			}
		})
	}
}

// silentList is mcp-go whose tools/list never answers (until the test
// ends): a known call must not wait for it, and an unknown call gets its
// answer within -list-timeout, without the list, and a log line says so.
type silentList struct {
	h    http.Handler
	done chan struct{}
}

func (s silentList) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if strings.Contains(string(body), `"tools/list"`) {
		select {
		case <-s.done:
		case <-r.Context().Done():
		}
		return
	}
	r.Body = io.NopCloser(strings.NewReader(string(body)))
	s.h.ServeHTTP(w, r)
}

func TestProxyKnownCallNeverWaitsForASilentList(t *testing.T) {
	done := make(chan struct{})
	defer close(done)
	up := httptest.NewServer(silentList{h: server.NewStreamableHTTPServer(newMCPGo("echo", "add"), server.WithStateLess(true)), done: done})
	defer up.Close()
	// A list timeout far longer than the test's bound on each answer: a
	// known call that waited for the list could not answer in time.
	p := startProxy(t, "-upstream", up.URL+"/mcp", "-list-timeout", "1m")
	known := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`
	for range 3 {
		alone := send(t, up.URL+"/mcp", known, nil)
		through := send(t, p.URL, known, nil)
		if through != alone || !strings.Contains(through.body, "echo:hi") {
			t.Fatalf("known call through the proxy %+v, alone %+v", through, alone)
		}
	}

	p2 := startProxy(t, "-upstream", up.URL+"/mcp", "-list-timeout", "500ms")
	unknown := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope","arguments":{}}}`
	through := send(t, p2.URL, unknown, nil)
	if tools := availableToolsOf(t, through); tools != nil {
		t.Errorf("a list that never came: %v", tools)
	}
	p2.stop(t)
	var logged bool
	for _, l := range p2.logLines() {
		logged = logged || (strings.Contains(l, `rejected unknown tool "nope"`) && strings.Contains(l, "without the tool list"))
	}
	if !logged {
		t.Errorf("no log line says the answer went without the list:\n%s", strings.Join(p2.logLines(), "\n"))
	}
}
