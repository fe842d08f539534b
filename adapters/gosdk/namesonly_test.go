package toolguardgosdk

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolguard/toolguard/internal/fixture"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// addTools adds tools named names to s; each answers "ran <name>".
func addTools(s *mcp.Server, names ...string) {
	for _, n := range names {
		s.AddTool(&mcp.Tool{Name: n, InputSchema: map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran " + n}}}, nil
			})
	}
}

// guardOf guards h with a tool set that fetches through fetch (h, or h
// wrapped by a fetchLog).
func guardOf(t testing.TB, h, fetch http.Handler, opts Options) http.Handler {
	t.Helper()
	tools := withLog(t, fetch, opts)
	g, err := toolguard.New(toolguard.Options{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	return g.Handler(h)
}

// openSession initializes a go-sdk session on h and returns its headers.
func openSession(t testing.TB, h http.Handler) http.Header {
	t.Helper()
	hdr := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}
	w := fixture.Send(h, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	id := w.Header().Get("Mcp-Session-Id")
	if w.Code != 200 || id == "" {
		t.Fatalf("initialize: %d %s", w.Code, w.Body)
	}
	hdr.Set("Mcp-Session-Id", id)
	fixture.Send(h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr)
	return hdr
}

func callBody(name string) string {
	return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":` + jsonQuote(name) + `,"arguments":{}}}`
}

// jsonQuote is s as a JSON string (invalid UTF-8 becomes U+FFFD).
func jsonQuote(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Names that need escaping, or that encoding/json changes (invalid UTF-8
// becomes U+FFFD), give the same rejection, byte for byte, as the full
// list: in stateful and stateless mode, with SSE and JSON replies, with
// one page and with several.
func TestNamesOnlySameRejection(t *testing.T) {
	names := []string{"echo", `quo"te`, `back\slash`, "<script>&amp;", "Ünïcode", "tab\there", "bad\xffutf8", "emoji_😀", "\u2028line"}
	for i := range 40 {
		names = append(names, fmt.Sprintf("filler_%02d", i))
	}
	for _, mode := range []string{"stateful", "json", "stateless", "paged"} {
		t.Run(mode, func(t *testing.T) {
			var sopts mcp.ServerOptions
			if mode == "paged" {
				sopts.PageSize = 7
			}
			s := mcp.NewServer(&mcp.Implementation{Name: "names", Version: "1"}, &sopts)
			addTools(s, names...)
			opts := &mcp.StreamableHTTPOptions{Stateless: mode == "stateless", JSONResponse: mode == "json"}
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, opts)
			var log fetchLog
			full := guardOf(t, h, h, Options{})
			slim := guardOf(t, h, log.wrap(h), Options{Servers: []*mcp.Server{s}})
			hdr := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}
			if !opts.Stateless {
				hdr = openSession(t, h)
			}
			for _, unknown := range []string{"nope", "ech", `quo"t`, "filler_4", "bad\xffutf"} {
				a := fixture.Send(full, callBody(unknown), hdr)
				b := fixture.Send(slim, callBody(unknown), hdr)
				if !strings.Contains(a.Body.String(), "availableTools") {
					t.Fatalf("%q: full list: no rejection: %d %s", unknown, a.Code, a.Body)
				}
				if a.Code != b.Code || a.Body.String() != b.Body.String() {
					t.Errorf("%q:\nfull:       %d %s\nnames-only: %d %s", unknown, a.Code, a.Body, b.Code, b.Body)
				}
			}
			for _, known := range names {
				b := fixture.Send(slim, callBody(known), hdr)
				if !utf8.ValidString(known) {
					// No call can name it (its name arrives as U+FFFD):
					// go-sdk's own answer, not the guard's.
					if _, sdk := gosdkUnknownTool(b.Body.String()); !sdk || strings.Contains(b.Body.String(), "availableTools") {
						t.Errorf("%q: names-only: %d %s", known, b.Code, b.Body)
					}
					continue
				}
				if !strings.Contains(b.Body.String(), "ran ") {
					t.Errorf("%q: names-only: not run: %d %s", known, b.Code, b.Body)
				}
			}
			log.mu.Lock()
			defer log.mu.Unlock()
			if log.lists == 0 || log.empty != log.lists || log.schema != 0 || log.marked != log.requests {
				t.Errorf("fetches: %s", &log)
			}
		})
	}
}

// A receiving middleware added after Attach wraps the tool set's: the
// tool set sees it is not go-sdk's outermost and leaves the list whole, so
// the middleware sees every tool (here it adds one, or replaces the
// result, and runs the added tool itself), and the guard never rejects it.
func TestNamesOnlyMiddlewareAfterAttach(t *testing.T) {
	for _, how := range []string{"appends", "replaces"} {
		t.Run(how, func(t *testing.T) {
			s := mcp.NewServer(&mcp.Implementation{Name: "late", Version: "1"}, nil)
			addTools(s, "echo")
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
			var log fetchLog
			g := guardOf(t, h, log.wrap(h), Options{Servers: []*mcp.Server{s}})
			s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					if method == "tools/call" && req.GetParams().(*mcp.CallToolParamsRaw).Name == "virtual" {
						return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran virtual"}}}, nil
					}
					res, err := next(ctx, method, req)
					l, ok := res.(*mcp.ListToolsResult)
					if !ok || err != nil {
						return res, err
					}
					if len(l.Tools) == 0 {
						t.Errorf("the late middleware got an empty list")
					}
					v := &mcp.Tool{Name: "virtual", InputSchema: map[string]any{"type": "object"}}
					if how == "replaces" {
						return &mcp.ListToolsResult{Tools: append(append([]*mcp.Tool{}, l.Tools...), v)}, nil
					}
					l.Tools = append(l.Tools, v)
					return res, err
				}
			})
			hdr := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}
			for range 3 {
				if w := fixture.Send(g, callBody("virtual"), hdr); !strings.Contains(w.Body.String(), "ran virtual") {
					t.Fatalf("virtual: %d %s", w.Code, w.Body)
				}
				w := fixture.Send(g, callBody("nope"), hdr)
				if !strings.Contains(w.Body.String(), `"availableTools":["echo","virtual"]`) {
					t.Fatalf("nope: %d %s", w.Code, w.Body)
				}
			}
			log.mu.Lock()
			defer log.mu.Unlock()
			// Each fetch marked, asked once, answered in full.
			if log.requests == 0 || log.marked != log.requests || log.schema != log.lists || log.empty != 0 {
				t.Errorf("fetches: %s", &log)
			}
		})
	}
}

// An HTTP wrapper between the guard and go-sdk that adds a tool to every
// list reply (and answers calls to it) changes the marked list on its way
// out: the tool set drops that reply and fetches the list again in full,
// so the tool is never rejected.
func TestNamesOnlyReplyChangedOnTheWay(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "wrapped", Version: "1"}, nil)
	addTools(s, "echo")
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), `"name":"virtual"`) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"ran virtual"}]}}`))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		sdk.ServeHTTP(rec, r)
		out := rec.Body.String()
		v := `{"name":"virtual","inputSchema":{"type":"object"}}`
		out = strings.Replace(out, `"tools":[]`, `"tools":[`+v+`]`, 1)
		if !strings.Contains(out, v) {
			out = strings.Replace(out, `"tools":[`, `"tools":[`+v+`,`, 1)
		}
		for k, vs := range rec.Header() {
			if k != "Content-Length" {
				w.Header()[k] = vs
			}
		}
		w.WriteHeader(rec.Code)
		w.Write([]byte(out))
	})
	var log fetchLog
	g := guardOf(t, h, log.wrap(h), Options{Servers: []*mcp.Server{s}})
	hdr := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}
	for range 3 {
		if w := fixture.Send(g, callBody("virtual"), hdr); !strings.Contains(w.Body.String(), "ran virtual") {
			t.Fatalf("virtual: %d %s", w.Code, w.Body)
		}
		w := fixture.Send(g, callBody("nope"), hdr)
		if !strings.Contains(w.Body.String(), `"availableTools":["echo","virtual"]`) {
			t.Fatalf("nope: %d %s", w.Code, w.Body)
		}
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	// Every fetch was asked twice: marked, then in full.
	if log.requests == 0 || log.marked*2 != log.requests || log.unmarked != log.marked || log.schema != log.unmarked {
		t.Errorf("fetches: %s", &log)
	}
}

// Per-request servers attached in getServer, a receiving middleware added
// before Attach that filters the list and refuses calls by the caller's
// Authorization header, and go-sdk's own checks: the guard's fetch is
// judged exactly as the caller.
func TestNamesOnlyAsksAsTheCaller(t *testing.T) {
	var ts *ToolSet
	var mu sync.Mutex
	made := 0
	getServer := func(r *http.Request) *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "per-request", Version: "1"}, nil)
		addTools(s, "echo", "admin_tool")
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				auth := req.GetExtra().Header.Get("Authorization")
				if auth == "Bearer banned" {
					return nil, fmt.Errorf("banned")
				}
				if method == "tools/call" && auth != "Bearer admin" && req.GetParams().(*mcp.CallToolParamsRaw).Name == "admin_tool" {
					return nil, fmt.Errorf("admins only")
				}
				res, err := next(ctx, method, req)
				if l, ok := res.(*mcp.ListToolsResult); ok && auth != "Bearer admin" {
					var keep []*mcp.Tool
					for _, tl := range l.Tools {
						if tl.Name != "admin_tool" {
							keep = append(keep, tl)
						}
					}
					l.Tools = keep
				}
				return res, err
			}
		})
		ts.Attach(s)
		mu.Lock()
		made++
		mu.Unlock()
		return s
	}
	h := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{Stateless: true})
	var log fetchLog
	tools := withLog(t, log.wrap(h), Options{})
	ts = tools
	g, err := toolguard.New(toolguard.Options{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Handler(h))
	defer srv.Close()
	call := func(auth, host, name string) (int, string) {
		hdr := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}, "Authorization": {auth}}
		if host != "" {
			hdr.Set("Host", host)
		}
		return fixture.Post(t, srv.URL, callBody(name), hdr)
	}
	for range 3 {
		if st, b := call("Bearer admin", "", "admin_tool"); st != 200 || !strings.Contains(b, "ran admin_tool") {
			t.Fatalf("admin: %d %s", st, b)
		}
		if st, b := call("Bearer user", "", "admin_tool"); st != 200 || !strings.Contains(b, `"message":"Unknown tool: admin_tool","data":{"availableTools":["echo"]`) {
			t.Fatalf("user: %d %s", st, b)
		}
		if st, b := call("Bearer admin", "", "nope"); st != 200 || !strings.Contains(b, `"availableTools":["admin_tool","echo"]`) {
			t.Fatalf("admin, unknown: %d %s", st, b)
		}
		// The list is refused: the call passes through, go-sdk answers.
		if st, b := call("Bearer banned", "", "nope"); strings.Contains(b, "availableTools") || !strings.Contains(b, "banned") {
			t.Fatalf("banned: %d %s", st, b)
		}
		if st, b := call("Bearer admin", "evil.example", "nope"); st != 403 || strings.Contains(b, "availableTools") {
			t.Fatalf("foreign Host: %d %s", st, b)
		}
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	// The first fetch comes before getServer made (and attached) any
	// server: it is the only one in full.
	if log.lists == 0 || log.empty != log.lists-1 || log.unmarked != 1 || log.schema != 1 || made == 0 {
		t.Errorf("fetches: %s, servers made: %d", &log, made)
	}
}

// The header is no credential: a caller's own tools/list with a random
// token, or with the token of a fetch that has ended, gets go-sdk's full
// list; a caller's tools/call with one is judged as any other.
func TestNamesOnlyTokenIsNoCredential(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "tok", Version: "1"}, nil)
	addTools(s, "echo")
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	var mu sync.Mutex
	var seen []string
	spy := recording{func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get(listHeader))
		mu.Unlock()
		h.ServeHTTP(w, r)
	}}
	g := guardOf(t, h, spy, Options{Servers: []*mcp.Server{s}})
	var b [16]byte
	rand.Read(b[:])
	hdr := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}, listHeader: {hex.EncodeToString(b[:])}}
	if w := fixture.Send(g, callBody("nope"), hdr); !strings.Contains(w.Body.String(), `"availableTools":["echo"]`) {
		t.Fatalf("call with a forged token: %d %s", w.Code, w.Body)
	}
	mu.Lock()
	old := append([]string(nil), seen...)
	mu.Unlock()
	if len(old) == 0 || old[0] == "" || old[0] == hdr.Get(listHeader) {
		t.Fatalf("fetch tokens: %q", old)
	}
	list := `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`
	want := fixture.Send(h, list, http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}).Body.String()
	if !strings.Contains(want, `"properties"`) {
		t.Fatalf("go-sdk's list: %s", want)
	}
	for _, tok := range append(old, hdr.Get(listHeader)) {
		for _, via := range []http.Handler{g, h} {
			got := fixture.Send(via, list, http.Header{"Mcp-Protocol-Version": {"2025-11-25"}, listHeader: {tok}}).Body.String()
			if got != want {
				t.Errorf("tools/list with token %q:\n got %s\nwant %s", tok, got, want)
			}
		}
	}
}

// Many callers at once, each with its own session, some calling known and
// some unknown tools, while tools are added: every known call runs, no
// added tool is rejected after it was added.
func TestNamesOnlyConcurrent(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "conc", Version: "1"}, nil)
	addTools(s, "echo")
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	g := guardOf(t, h, h, Options{Servers: []*mcp.Server{s}, Discover: toolguard.DiscoverOptions{MinInterval: time.Microsecond}})
	var wg sync.WaitGroup
	for c := range 6 { // 6 × 15 names and echo: within the 100 names a rejection shows
		wg.Add(1)
		go func() {
			defer wg.Done()
			hdr := openSession(t, h)
			for i := range 15 {
				name := fmt.Sprintf("added_%d_%d", c, i)
				addTools(s, name)
				if w := fixture.Send(g, callBody(name), hdr); !strings.Contains(w.Body.String(), "ran "+name) {
					t.Errorf("%s: %d %s", name, w.Code, w.Body)
					return
				}
				if w := fixture.Send(g, callBody("nope"), hdr); !strings.Contains(w.Body.String(), `"availableTools":[`) || !strings.Contains(w.Body.String(), jsonQuote(name)) {
					t.Errorf("nope after %s: %d %s", name, w.Code, w.Body)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// Attaching a server again adds nothing, and the tool set does not keep
// servers made per request alive.
func TestAttachOnceAndWeakly(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "once", Version: "1"}, nil)
	addTools(s, "echo")
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	tools, err := Tools(h, Options{Servers: []*mcp.Server{s, s}})
	if err != nil {
		t.Fatal(err)
	}
	tools.Attach(s)
	count := func() int {
		n := 0
		tools.servers.Range(func(any, any) bool { n++; return true })
		return n
	}
	if n := count(); n != 1 {
		t.Fatalf("one server attached three times: %d entries", n)
	}
	for range 100 {
		tools.Attach(mcp.NewServer(&mcp.Implementation{Name: "per-request", Version: "1"}, nil))
	}
	if n := count(); n != 101 {
		t.Fatalf("101 servers: %d entries", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for count() > 1 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := count(); n != 1 {
		t.Errorf("after the per-request servers were dropped: %d entries", n)
	}
	g, err := toolguard.New(toolguard.Options{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	hdr := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}
	if w := fixture.Send(g.Handler(h), callBody("nope"), hdr); !strings.Contains(w.Body.String(), `"availableTools":["echo"]`) {
		t.Errorf("nope: %d %s", w.Code, w.Body)
	}
	runtime.KeepAlive(s)
}
