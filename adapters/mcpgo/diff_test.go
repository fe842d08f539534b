package toolguardmcpgo

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	toolguard "github.com/toolguard/toolguard/middleware"
)

// harness is a real mcp-go server, reachable alone and behind the guard,
// that records which tools ran.
type harness struct {
	mode     string
	mcp      *server.MCPServer
	alone    http.Handler
	guarded  http.Handler
	session  string
	modern   bool
	mu       sync.Mutex
	ran      []string
	rejected []string
}

type roleKey struct{}

// newHarness builds the server: global tools, a session tool, a task tool,
// and a tool that a filter shows only to callers with "X-Role: admin".
func newHarness(t testing.TB, mode string) *harness {
	h := &harness{mode: mode, modern: mode == "2026-07-28"}
	h.mcp = server.NewMCPServer("diff", "1.0.0",
		server.WithToolCapabilities(true),
		server.WithTaskCapabilities(true, true, true),
		server.WithToolFilter(func(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
			if ctx.Value(roleKey{}) == "admin" {
				return tools
			}
			return slices.DeleteFunc(tools, func(t mcp.Tool) bool { return t.Name == "admin_only" })
		}))
	for _, n := range []string{"echo", "get_weather", "admin_only", "Ünïcode"} {
		h.mcp.AddTool(mcp.NewTool(n, mcp.WithString("text")), h.record(n))
	}
	h.mcp.AddTaskTool(mcp.NewTool("long_job", mcp.WithTaskSupport(mcp.TaskSupportRequired)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
			h.note("long_job")
			return &mcp.CreateTaskResult{}, nil
		})
	opts := []server.StreamableHTTPOption{server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
		return context.WithValue(ctx, roleKey{}, r.Header.Get("X-Role"))
	})}
	switch mode {
	case "stateful":
		opts = append(opts, server.WithStateful(true))
	case "stateless":
		opts = append(opts, server.WithStateLess(true))
	}
	h.alone = server.NewStreamableHTTPServer(h.mcp, opts...)
	// MinInterval is cut so the corpus runs fast; the flood bound has its
	// own test in the core.
	tools, err := Tools(h.mcp, h.alone, Options{Discover: toolguard.DiscoverOptions{MinInterval: time.Microsecond}})
	if err != nil {
		t.Fatal(err)
	}
	g, err := toolguard.New(toolguard.Options{Tools: tools, OnReject: func(r *http.Request, rej *toolguard.Rejection) {
		h.mu.Lock()
		h.rejected = append(h.rejected, rej.Name)
		h.mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	h.guarded = g.Handler(h.alone)

	if mode == "default" || mode == "stateful" {
		w := h.send(h.alone, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"diff","version":"1"}}}`, nil)
		h.session = w.Header().Get("Mcp-Session-Id")
		if w.Code != 200 || h.session == "" {
			t.Fatalf("initialize: %d %s", w.Code, w.Body)
		}
		h.send(h.alone, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil)
		if err := h.mcp.AddSessionTool(h.session, mcp.NewTool("session_note", mcp.WithString("text")), h.record("session_note")); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func (h *harness) record(name string) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		h.note(name)
		return mcp.NewToolResultText("ran " + name), nil
	}
}

func (h *harness) note(name string) {
	h.mu.Lock()
	h.ran = append(h.ran, name)
	h.mu.Unlock()
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
		hdr.Set("Mcp-Name", headerName(name))
	} else {
		hdr.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	for k, v := range extra {
		hdr[k] = v
	}
	return hdr
}

func headerName(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
		}
	}
	return s
}

func (h *harness) send(handler http.Handler, body string, hdr http.Header) *httptest.ResponseRecorder {
	r := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		r.Header[k] = v
	}
	w := httptest.NewRecorder()
	handler.ServeHTTP(w, r)
	return w
}

// outcome of one request.
type outcome struct {
	status   int
	body     string
	ran      []string
	rejected []string
}

func (h *harness) do(handler http.Handler, body string, hdr http.Header) outcome {
	h.mu.Lock()
	ran, rej := len(h.ran), len(h.rejected)
	h.mu.Unlock()
	w := h.send(handler, body, hdr)
	h.mu.Lock()
	defer h.mu.Unlock()
	return outcome{w.Code, w.Body.String(), slices.Clone(h.ran[ran:]), slices.Clone(h.rejected[rej:])}
}

// sdkUnknownTool reads mcp-go's own answer to an unknown tool: the name it
// looked up, if the answer is its -32602 "not found".
func sdkUnknownTool(body string) (string, bool) {
	if strings.HasPrefix(body, "event:") || strings.HasPrefix(body, "data:") {
		for _, line := range strings.Split(body, "\n") {
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				if name, ok := sdkUnknownTool(data); ok {
					return name, true
				}
			}
		}
		return "", false
	}
	var msg struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(body), &msg) != nil || msg.Error == nil || msg.Error.Code != -32602 {
		return "", false
	}
	name, ok := strings.CutPrefix(msg.Error.Message, "tool '")
	if !ok {
		return "", false
	}
	name, ok = strings.CutSuffix(name, "' not found: tool not found")
	return name, ok
}

type tally struct {
	cases, rejected, passed, ranAlone int
}

// compare sends body with and without the guard and checks the three
// properties: the guard never rejects a call the server would run, never
// acts on a different name, and rejects only what the server answers -32602.
func (h *harness) compare(t testing.TB, body string, hdr http.Header, tl *tally) {
	t.Helper()
	alone := h.do(h.alone, body, hdr)
	guarded := h.do(h.guarded, body, hdr)
	tl.cases++
	if len(alone.ran) > 0 {
		tl.ranAlone++
	}
	if len(guarded.rejected) == 0 {
		tl.passed++
		if !slices.Equal(alone.ran, guarded.ran) {
			t.Errorf("%s: passed through, but alone ran %q and guarded ran %q\nbody %q", h.mode, alone.ran, guarded.ran, body)
		}
		return
	}
	tl.rejected++
	name := guarded.rejected[0]
	if len(alone.ran) > 0 {
		t.Errorf("%s: guard rejected %q, the server alone ran %q\nbody %q", h.mode, name, alone.ran, body)
	}
	sdkName, ok := sdkUnknownTool(alone.body)
	if !ok {
		t.Errorf("%s: guard rejected %q, the server alone answered %d %s\nbody %q", h.mode, name, alone.status, alone.body, body)
	} else if sdkName != name {
		t.Errorf("%s: guard read name %q, the server read %q\nbody %q", h.mode, name, sdkName, body)
	}
	if guarded.status != alone.status {
		t.Errorf("%s: guard answered HTTP %d, the server %d\nbody %q", h.mode, guarded.status, alone.status, body)
	}
	if len(guarded.ran) > 0 {
		t.Errorf("%s: rejected, yet %q ran", h.mode, guarded.ran)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func escapeAll(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		if r > 0xffff {
			r1, r2 := utf16Pair(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
			continue
		}
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	b.WriteByte('"')
	return b.String()
}

func utf16Pair(r rune) (rune, rune) {
	r -= 0x10000
	return 0xD800 + (r>>10)&0x3ff, 0xDC00 + r&0x3ff
}

// corpus returns the constructed bodies for one tool name: plain calls and
// every ambiguous shape of DESIGN §4. meta is spliced into params (the
// 2026-07-28 _meta) when not empty.
func corpus(name, meta string) []string {
	q := jsonString(name)
	args := `,"arguments":{"text":"hi"}`
	p := `"name":` + q + args + meta
	call := func(params string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{` + params + `}}`
	}
	deep := strings.Repeat(`[`, 600) + strings.Repeat(`]`, 600)
	shallow := strings.Repeat(`[`, 100) + strings.Repeat(`]`, 100)
	return []string{
		call(p),
		`{"jsonrpc":"2.0","id":"req-1","method":"tools/call","params":{` + p + `}}`,
		`{"jsonrpc":"2.0","id":9223372036854775807,"method":"tools/call","params":{` + p + `}}`,
		`{"jsonrpc":"2.0","id":18446744073709551617,"method":"tools/call","params":{` + p + `}}`,
		`{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{` + p + `}}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{` + p + `}}`,
		`{"jsonrpc":"2.0","method":"tools/call","params":{` + p + `}}`,
		`{"jsonrpc":"1.0","id":7,"method":"tools/call","params":{` + p + `}}`,
		`{"params":{` + p + `},"method":"tools/call","id":8,"jsonrpc":"2.0"}`,
		" \n" + call(p) + "\n ",
		call(`"name":` + escapeAll(name) + args + meta),
		`{"jsonrpc":"2.0","id":7,"method":"tools\/call","params":{` + p + `}}`,
		call(`"name":"echo","name":` + q + args + meta),
		call(`"name":` + q + `,"name":"echo"` + args + meta),
		call(`"NAME":` + q + args + meta),
		call(`"Name":` + q + args + meta),
		call(`"name":"echo","NAME":` + q + args + meta),
		call(`"name":` + q + `,"Name":"echo"` + args + meta),
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","paramſ":{` + p + `}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"},"params":{` + p + `}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/list","method":"tools/call","params":{` + p + `}}`,
		call(`"\u006eame":` + q + args + meta),
		call(`"name\u0000":` + q + args + meta),
		call(`"name":"echo","name\u0000":` + q + args + meta),
		"\ufeff" + call(p),
		call(p) + "x",
		call(p) + call(p),
		`[` + call(p) + `]`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":null}`,
		call(`"name":123` + args + meta),
		call(`"name":` + q + `,"name":null` + args + meta),
		call(`"name":` + q + `,"arguments":{"n":1e400}` + meta),
		call(`"name":` + q + `,"arguments":{"n":12345678901234567890123}` + meta),
		call(`"name":` + q + `,"arguments":{"d":` + deep + `}` + meta),
		call(`"name":` + q + `,"arguments":{"d":` + shallow + `}` + meta),
		`{"jsonrpc":"2.0","id":7,"method":"Tools/Call","params":{` + p + `}}`,
		`{"jsonrpc":"2.0","id":7,"METHOD":"tools/call","params":{` + p + `}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{` + p + `},"result":{}}`,
		call(`"name":` + q + `,"arguments":{"text":"a` + "\xff" + `"}` + meta),
		call(`"name":` + q + `,"arguments":{"text":"\ud800"}` + meta),
	}
}

// names are the tool names each corpus is built for.
var names = []string{
	"echo", "get_weather", "Ünïcode", "session_note", "long_job", "admin_only",
	"nope", "ECHO", "echo ", "get-weather", "getWeather", "", "x\"y\\z", "tab\there",
	strings.Repeat("long", 80), "😀",
}

const modernMeta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func TestDifferentialCorpus(t *testing.T) {
	var total tally
	for _, mode := range []string{"default", "stateful", "stateless", "2026-07-28"} {
		t.Run(mode, func(t *testing.T) {
			h := newHarness(t, mode)
			meta := ""
			if h.modern {
				meta = modernMeta
			}
			var tl tally
			for _, name := range names {
				for _, extra := range []http.Header{nil, {"X-Role": {"admin"}}} {
					for _, body := range corpus(name, meta) {
						h.compare(t, body, h.headers(name, extra), &tl)
					}
				}
			}
			if h.modern {
				// Headers that do not match the body: the server's to answer.
				for _, body := range corpus("nope", meta)[:3] {
					h.compare(t, body, h.headers("other", nil), &tl)
				}
			}
			if tl.rejected == 0 || tl.ranAlone == 0 {
				t.Errorf("degenerate corpus: %+v", tl)
			}
			t.Logf("%s: %d cases, %d rejected by the guard, %d passed through, %d ran a tool on the server alone",
				mode, tl.cases, tl.rejected, tl.passed, tl.ranAlone)
			total.cases += tl.cases
			total.rejected += tl.rejected
			total.passed += tl.passed
			total.ranAlone += tl.ranAlone
		})
	}
	t.Logf("all modes: %d cases, %d rejected, %d passed through, %d ran a tool alone; 0 disagreements", total.cases, total.rejected, total.passed, total.ranAlone)
}

var (
	fuzzOnce    sync.Once
	fuzzHarness *harness
)

// FuzzDifferential sends arbitrary bodies to the real mcp-go server with
// and without the guard, with the same three properties as the corpus.
func FuzzDifferential(f *testing.F) {
	for _, name := range []string{"echo", "nope", "session_note"} {
		for _, b := range corpus(name, "")[:25] {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, body string) {
		fuzzOnce.Do(func() { fuzzHarness = newHarness(f, "default") })
		var tl tally
		fuzzHarness.compare(t, body, fuzzHarness.headers("echo", nil), &tl)
	})
}

// A tool added at runtime is never rejected, whatever kind it is, and a
// removed one gets a -32602 from the guard or the server.
func TestRuntimeChanges(t *testing.T) {
	for _, mode := range []string{"default", "stateless", "2026-07-28"} {
		t.Run(mode, func(t *testing.T) {
			h := newHarness(t, mode)
			meta := ""
			if h.modern {
				meta = modernMeta
			}
			callFor := func(name string) outcome {
				return h.do(h.guarded, corpus(name, meta)[0], h.headers(name, nil))
			}
			for i := range 30 {
				name := fmt.Sprintf("added_%d", i)
				if o := callFor(name); len(o.rejected) != 1 {
					t.Fatalf("%s before it exists: %d %s", name, o.status, o.body)
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
				if o := callFor(name); len(o.rejected) != 0 {
					t.Fatalf("%s rejected right after it was added", name)
				}
			}
			// A deleted tool may still be in a cached list: then the call
			// passes through and the server answers it. Either way it is a
			// -32602 and nothing runs.
			h.mcp.DeleteTools("added_0")
			o := callFor("added_0")
			if _, sdk := sdkUnknownTool(o.body); len(o.ran) != 0 || len(o.rejected) == 0 && !sdk {
				t.Errorf("deleted tool: %d %s", o.status, o.body)
			}
		})
	}
}
