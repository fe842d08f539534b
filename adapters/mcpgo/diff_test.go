package toolguardmcpgo

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolguard/toolguard/internal/fixture"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// harness is a real mcp-go server, reachable alone and behind the guard.
type harness struct {
	fixture.Differential
	mode    string
	mcp     *server.MCPServer
	session string
	modern  bool
	pings   atomic.Int64 // pings mcp-go dispatched (the tool set's, in lean)
}

type roleKey struct{}

// newHarness builds the server: global tools, a session tool, a task tool,
// and a tool that a filter shows only to callers with "X-Role: admin".
// With lean, the server has no filter (admin_only is then a tool like the
// others), so the tool set puts lists together in process after a ping.
func newHarness(t testing.TB, mode string, lean bool) *harness {
	h := &harness{mode: mode, modern: mode == "2026-07-28"}
	h.UnknownTool = mcpgoUnknownTool
	hooks := &server.Hooks{}
	hooks.AddBeforePing(func(context.Context, any, *mcp.PingRequest) { h.pings.Add(1) })
	opts := []server.ServerOption{server.WithToolCapabilities(true), server.WithTaskCapabilities(true, true, true), server.WithHooks(hooks)}
	if !lean {
		opts = append(opts, server.WithToolFilter(func(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
			if ctx.Value(roleKey{}) == "admin" {
				return tools
			}
			return slices.DeleteFunc(tools, func(t mcp.Tool) bool { return t.Name == "admin_only" })
		}))
	}
	h.mcp = server.NewMCPServer("diff", "1.0.0", opts...)
	for _, n := range []string{"echo", "get_weather", "admin_only", "Ünïcode"} {
		h.mcp.AddTool(mcp.NewTool(n, mcp.WithString("text")), h.record(n))
	}
	h.mcp.AddTaskTool(mcp.NewTool("long_job", mcp.WithTaskSupport(mcp.TaskSupportRequired)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
			// Not recorded: mcp-go runs a task tool after it has answered
			// the call, so a run would be counted against a later case.
			return &mcp.CreateTaskResult{}, nil
		})
	hopts := []server.StreamableHTTPOption{server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
		return context.WithValue(ctx, roleKey{}, r.Header.Get("X-Role"))
	})}
	switch mode {
	case "stateful":
		hopts = append(hopts, server.WithStateful(true))
	case "stateless":
		hopts = append(hopts, server.WithStateLess(true))
	}
	h.Alone = server.NewStreamableHTTPServer(h.mcp, hopts...)
	// MinInterval is cut so the corpus runs fast; the flood bound has its
	// own test in the core.
	tools, err := Tools(h.mcp, h.Alone, Options{Discover: toolguard.DiscoverOptions{MinInterval: time.Microsecond}})
	if err != nil {
		t.Fatal(err)
	}
	if tools.lean != lean {
		t.Fatalf("the tool set's lean is %v, want %v", tools.lean, lean)
	}
	g, err := toolguard.New(toolguard.Options{Tools: tools, OnReject: func(r *http.Request, rej *toolguard.Rejection) {
		h.Rejected(rej.Name)
	}})
	if err != nil {
		t.Fatal(err)
	}
	h.Guarded = g.Handler(h.Alone)

	if mode == "default" || mode == "stateful" {
		w := fixture.Send(h.Alone, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"diff","version":"1"}}}`, nil)
		h.session = w.Header().Get("Mcp-Session-Id")
		if w.Code != 200 || h.session == "" {
			t.Fatalf("initialize: %d %s", w.Code, w.Body)
		}
		fixture.Send(h.Alone, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, http.Header{"Mcp-Session-Id": {h.session}})
		if err := h.mcp.AddSessionTool(h.session, mcp.NewTool("session_note", mcp.WithString("text")), h.record("session_note")); err != nil {
			t.Fatal(err)
		}
		if lean {
			// The tool set learns the server's list from a caller without
			// session tools; the harness's session, which has one, pings.
			w := fixture.Send(h.Alone, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"diff","version":"1"}}}`, nil)
			other := w.Header().Get("Mcp-Session-Id")
			fixture.Send(h.Guarded, fixture.Corpus("nope", "")[0], h.headers("nope", http.Header{"Mcp-Session-Id": {other}}))
		}
	}
	return h
}

func (h *harness) record(name string) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		h.Ran(name)
		return mcp.NewToolResultText("ran " + name), nil
	}
}

// headers returns the headers a client sends with a call for name.
func (h *harness) headers(name string, extra http.Header) http.Header {
	hdr := http.Header{}
	if h.session != "" {
		hdr.Set("Mcp-Session-Id", h.session)
	}
	if h.modern {
		hdr.Set("Mcp-Protocol-Version", "2026-07-28")
		hdr.Set("Mcp-Method", "tools/call")
		hdr.Set("Mcp-Name", fixture.HeaderName(name))
	} else {
		hdr.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	for k, v := range extra {
		hdr[k] = v
	}
	return hdr
}

// mcpgoUnknownTool reads mcp-go's own answer to an unknown tool.
var mcpgoUnknownTool = fixture.MCPGoUnknownTool

func (h *harness) meta() string {
	if h.modern {
		return fixture.ModernMeta
	}
	return ""
}

func TestDifferentialCorpus(t *testing.T) {
	var total fixture.Tally
	for _, mode := range []string{"default", "stateful", "stateless", "2026-07-28", "default/lean", "stateful/lean", "stateless/lean"} {
		t.Run(mode, func(t *testing.T) {
			mode, lean := strings.CutSuffix(mode, "/lean")
			h := newHarness(t, mode, lean)
			var tl fixture.Tally
			for _, name := range fixture.Names {
				for _, extra := range []http.Header{nil, {"X-Role": {"admin"}}} {
					for _, body := range fixture.Corpus(name, h.meta()) {
						h.Compare(t, body, h.headers(name, extra), &tl)
					}
				}
			}
			if h.modern {
				// Headers that do not match the body: the server's to answer.
				for _, body := range fixture.Corpus("nope", h.meta())[:3] {
					h.Compare(t, body, h.headers("other", nil), &tl)
				}
			}
			// _meta and header variations: the server's refusals before
			// dispatch stay the server's.
			h.CompareVariants(t, []string{"echo", "nope", "admin_only", "session_note"}, h.meta(), func(name string) http.Header { return h.headers(name, nil) }, &tl)
			if tl.Rejected == 0 || tl.RanAlone == 0 {
				t.Errorf("degenerate corpus: %+v", tl)
			}
			// Lean lists are proven with pings; the others never ping.
			if p := h.pings.Load(); lean != (p > 0) {
				t.Errorf("lean %v, yet %d pings", lean, p)
			}
			t.Logf("%s: %v", mode, tl)
			total.Add(tl)
		})
	}
	t.Logf("mcp-go, all modes: %v", total)
	if n := total.Disagreements(); n != 0 {
		t.Errorf("%d disagreements", n)
	}
}

var (
	fuzzOnce, fuzzLeanOnce       sync.Once
	fuzzHarness, fuzzLeanHarness *harness
)

// FuzzDifferential sends arbitrary bodies to the real mcp-go server with
// and without the guard, with the same three properties as the corpus.
func FuzzDifferential(f *testing.F) {
	for _, name := range []string{"echo", "nope", "session_note"} {
		for _, b := range fixture.Corpus(name, "")[:25] {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, body string) {
		fuzzOnce.Do(func() { fuzzHarness = newHarness(f, "default", false) })
		var tl fixture.Tally
		fuzzHarness.Compare(t, body, fuzzHarness.headers("echo", nil), &tl)
	})
}

// FuzzDifferentialLean is FuzzDifferential on a server without tool
// filters, where the tool set pings and puts lists together.
func FuzzDifferentialLean(f *testing.F) {
	for _, name := range []string{"echo", "nope", "session_note", "long_job"} {
		for _, b := range fixture.Corpus(name, "")[:25] {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, body string) {
		fuzzLeanOnce.Do(func() { fuzzLeanHarness = newHarness(f, "default", true) })
		var tl fixture.Tally
		fuzzLeanHarness.Compare(t, body, fuzzLeanHarness.headers("echo", nil), &tl)
	})
}

// A tool added at runtime is never rejected, whatever kind it is, and a
// removed one gets a -32602 from the guard or the server.
func TestRuntimeChanges(t *testing.T) {
	for _, mode := range []string{"default", "stateless", "2026-07-28", "default/lean", "stateless/lean"} {
		t.Run(mode, func(t *testing.T) {
			mode, lean := strings.CutSuffix(mode, "/lean")
			h := newHarness(t, mode, lean)
			callFor := func(name string) fixture.Outcome {
				return h.Do(h.Guarded, fixture.Corpus(name, h.meta())[0], h.headers(name, nil))
			}
			for i := range 30 {
				name := fmt.Sprintf("added_%d", i)
				if o := callFor(name); len(o.Rejected) != 1 {
					t.Fatalf("%s before it exists: %d %s", name, o.Status, o.Body)
				}
				switch i % 3 {
				case 0:
					h.mcp.AddTool(mcp.NewTool(name), h.record(name))
				case 1:
					h.mcp.AddTaskTool(mcp.NewTool(name, mcp.WithTaskSupport(mcp.TaskSupportRequired)),
						func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
							return &mcp.CreateTaskResult{}, nil
						})
				case 2:
					if h.session == "" {
						h.mcp.AddTool(mcp.NewTool(name), h.record(name))
					} else if err := h.mcp.AddSessionTool(h.session, mcp.NewTool(name), h.record(name)); err != nil {
						t.Fatal(err)
					}
				}
				if o := callFor(name); len(o.Rejected) != 0 {
					t.Fatalf("%s rejected right after it was added", name)
				}
			}
			// A deleted tool may still be in a cached list: then the call
			// passes through and the server answers it. Either way it is a
			// -32602 and nothing runs.
			h.mcp.DeleteTools("added_0")
			o := callFor("added_0")
			if _, sdk := mcpgoUnknownTool(o.Body); len(o.Ran) != 0 || len(o.Rejected) == 0 && !sdk {
				t.Errorf("deleted tool: %d %s", o.Status, o.Body)
			}
		})
	}
}
