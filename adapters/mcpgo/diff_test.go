package toolguardmcpgo

import (
	"context"
	"net/http"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

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
	before  atomic.Int64 // answers the guard wrote before the server
}

type roleKey struct{}

// newHarness builds the server: global tools and, in session modes, a
// session tool. Unless before (Options.AnswerBeforeServer) is set, it
// also has a tool that a filter shows only to callers with "X-Role:
// admin", and, in the modes without sessions, a task tool: what
// AnswerBeforeServer's author asserts away. (In a session, mcp-go queues
// a task's status notifications for the session's next request, whichever
// it is, so alone and guarded answers would differ by who came next.)
func newHarness(t testing.TB, mode string, before bool) *harness {
	h := &harness{mode: mode, modern: mode == "2026-07-28"}
	h.UnknownTool = fixture.MCPGoUnknownTool
	h.Exact = true
	h.Normalize = normalizeTask
	opts := []server.ServerOption{server.WithToolCapabilities(true), server.WithTaskCapabilities(true, true, true)}
	if !before {
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
	if !before && (mode == "stateless" || h.modern) {
		h.mcp.AddTaskTool(mcp.NewTool("long_job", mcp.WithTaskSupport(mcp.TaskSupportRequired)),
			func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
				// Not recorded: mcp-go runs a task tool after it has
				// answered the call.
				return &mcp.CreateTaskResult{}, nil
			})
	}
	hopts := []server.StreamableHTTPOption{server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
		return context.WithValue(ctx, roleKey{}, r.Header.Get("X-Role"))
	})}
	switch mode {
	case "stateful":
		hopts = append(hopts, server.WithStateful(true))
	case "stateless":
		hopts = append(hopts, server.WithStateLess(true))
	}
	alone := server.NewStreamableHTTPServer(h.mcp, hopts...)
	h.Alone = alone
	h.Guarded = guardOf(t, h.mcp, alone, mode, before, func(r *http.Request, rej *toolguard.Rejection) {
		h.Rejected(rej.Name)
		if !rej.Translated {
			h.before.Add(1)
		}
	}).Handler(h.Tee(alone))

	if mode == "default" || mode == "stateful" {
		h.session = initialize(t, alone)
		if err := h.mcp.AddSessionTool(h.session, mcp.NewTool("session_note", mcp.WithString("text")), h.record("session_note")); err != nil {
			t.Fatal(err)
		}
		// The session's tools/list_changed goes out on its next request.
		fixture.Send(alone, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, h.headers("", nil))
	}
	return h
}

// behindGuard is h behind the guard, with s's tools as Tools reads them
// in mode (with AnswerBeforeServer when before); onReject may be nil.
func behindGuard(t testing.TB, s *server.MCPServer, h http.Handler, mode string, before bool, onReject func(*http.Request, *toolguard.Rejection)) http.Handler {
	t.Helper()
	return guardOf(t, s, h, mode, before, onReject).Handler(h)
}

// guardOf is the guard behindGuard puts in front of h.
func guardOf(t testing.TB, s *server.MCPServer, h http.Handler, mode string, before bool, onReject func(*http.Request, *toolguard.Rejection)) *toolguard.Guard {
	t.Helper()
	tools, err := Tools(s, h, Options{AnswerBeforeServer: before, Stateless: mode == "stateless"})
	if err != nil {
		t.Fatal(err)
	}
	g, err := toolguard.New(toolguard.Options{Tools: tools, OnReject: onReject})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// initialize opens a 2025-era session on h and returns its id.
func initialize(t testing.TB, h http.Handler) string {
	t.Helper()
	w := fixture.Send(h, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"diff","version":"1"}}}`, http.Header{"Mcp-Protocol-Version": {"2025-11-25"}})
	id := w.Header().Get("Mcp-Session-Id")
	if w.Code != 200 || id == "" {
		t.Fatalf("initialize: %d %s", w.Code, w.Body)
	}
	fixture.Send(h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, http.Header{"Mcp-Session-Id": {id}, "Mcp-Protocol-Version": {"2025-11-25"}})
	return id
}

// taskFields are the values mcp-go makes up for every task it creates.
var taskFields = regexp.MustCompile(`"(taskId|createdAt|lastUpdatedAt)":"[^"]*"`)

func normalizeTask(body string) string { return taskFields.ReplaceAllString(body, `"$1":"…"`) }

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

func (h *harness) meta() string {
	if h.modern {
		return fixture.ModernMeta
	}
	return ""
}

var modes = []string{"default", "stateful", "stateless", "2026-07-28"}

// TestDifferentialCorpus sends every corpus body, for every tool name,
// header and _meta variation, to mcp-go alone and behind the guard, in
// every mode, with and without AnswerBeforeServer: no wrong rejection, no
// name disagreement, and every answer the same as alone's, byte for byte,
// except mcp-go's own not-found answer.
func TestDifferentialCorpus(t *testing.T) {
	var total fixture.Tally
	for _, before := range []bool{false, true} {
		for _, mode := range modes {
			name := mode
			if before {
				name += "/before"
			}
			t.Run(name, func(t *testing.T) {
				h := newHarness(t, mode, before)
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
				// A 2025-era call without its session: refused by a server
				// with sessions, served by a stateless one.
				for _, body := range fixture.Corpus("nope", "")[:3] {
					hdr := h.headers("nope", nil)
					hdr.Del("Mcp-Session-Id")
					h.Compare(t, body, hdr, &tl)
				}
				h.CompareVariants(t, []string{"echo", "nope", "admin_only", "session_note"}, h.meta(), func(name string) http.Header { return h.headers(name, nil) }, &tl)
				if tl.Rejected == 0 || tl.RanAlone == 0 {
					t.Errorf("degenerate corpus: %+v", tl)
				}
				// Without AnswerBeforeServer, or in a session, every answer
				// is a translation.
				if n, want := h.before.Load(), before && (mode == "stateless" || mode == "2026-07-28"); want != (n > 0) {
					t.Errorf("AnswerBeforeServer %v in mode %s, yet %d answers before the server", before, mode, n)
				}
				t.Logf("%s: %v", name, tl)
				total.Add(tl)
			})
		}
	}
	t.Logf("mcp-go, all modes: %v", total)
	if n := total.Disagreements(); n != 0 {
		t.Errorf("%d disagreements", n)
	}
}

var (
	fuzzOnce    [2]sync.Once
	fuzzHarness [2]*harness
)

func fuzzDifferential(f *testing.F, before int) {
	for _, name := range []string{"echo", "nope", "session_note", "long_job"} {
		for _, b := range fixture.Corpus(name, "")[:25] {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, body string) {
		fuzzOnce[before].Do(func() { fuzzHarness[before] = newHarness(t, "default", before == 1) })
		h := fuzzHarness[before]
		var tl fixture.Tally
		h.Compare(t, body, h.headers("echo", nil), &tl)
	})
}

// FuzzDifferential sends arbitrary bodies to mcp-go with and without the
// guard: the corpus's promises, for any body.
func FuzzDifferential(f *testing.F) { fuzzDifferential(f, 0) }

// FuzzDifferentialBefore is FuzzDifferential with AnswerBeforeServer.
func FuzzDifferentialBefore(f *testing.F) { fuzzDifferential(f, 1) }
