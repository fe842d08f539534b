package toolguardgosdk

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolguard/toolguard/internal/fixture"
	toolguard "github.com/toolguard/toolguard/middleware"
)

type harness struct {
	fixture.Differential
	server  *mcp.Server
	session string
	modern  bool
	fetches fetchLog
}

// fetchLog records the tool set's tools/list fetches: the handler the
// tool set is given is wrapped, so every request it sees is a fetch.
type fetchLog struct {
	mu       sync.Mutex
	requests int // fetches
	marked   int // fetches that carry the tool set's token header
	lists    int // replies that carry a tools array
	schema   int // of those, replies with a tool's own schema in them
	empty    int // of those, the marked empty list of the names-only mode
	unmarked int // lists fetched without a token
}

// recording is a handler wrapped by a fetchLog: it only records, so a tool
// set given it may take names inside go-sdk as through go-sdk's own
// handler (see withLog).
type recording struct{ http.HandlerFunc }

// withLog returns the tool set of a handler wrapped by a fetchLog.
func withLog(t testing.TB, fetch http.Handler, opts Options) *ToolSet {
	tools, err := Tools(fetch, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := fetch.(recording); ok {
		tools.bare = true
	}
	return tools
}

func (l *fetchLog) wrap(h http.Handler) http.Handler {
	return recording{func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		b := rec.Body.String()
		l.mu.Lock()
		l.requests++
		if len(r.Header.Values(listHeader)) == 1 {
			l.marked++
		}
		if strings.Contains(b, `"tools":[`) {
			l.lists++
			if len(r.Header.Values(listHeader)) == 0 {
				l.unmarked++
			}
			// textArgs' schema names its property; a names-only list
			// has {"type":"object"} alone.
			if strings.Contains(b, `"properties"`) {
				l.schema++
			}
			if strings.Contains(b, `"tools":[]`) && strings.Contains(b, `"`+metaKey+`":"`) {
				l.empty++
			}
		}
		l.mu.Unlock()
		for k, vs := range rec.Header() {
			w.Header()[k] = vs
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}}
}

func (l *fetchLog) String() string {
	return fmt.Sprintf("%d fetches, %d marked, %d lists (%d unmarked), %d with schemas, %d marked empty", l.requests, l.marked, l.lists, l.unmarked, l.schema, l.empty)
}

// checkFetches fails unless the fetches took the mode's path: full lists
// with schemas, or names-only lists without.
func (h *harness) checkFetches(t testing.TB, namesOnly bool) {
	t.Helper()
	h.fetches.mu.Lock()
	defer h.fetches.mu.Unlock()
	switch {
	case h.fetches.lists == 0:
		t.Errorf("no tools/list fetched")
	case namesOnly && h.fetches.schema != 0:
		t.Errorf("names-only: %d of %d lists carried schemas", h.fetches.schema, h.fetches.lists)
	case !namesOnly && h.fetches.schema != h.fetches.lists:
		t.Errorf("full lists: only %d of %d carried schemas", h.fetches.schema, h.fetches.lists)
	case namesOnly && h.fetches.empty != h.fetches.lists:
		t.Errorf("names-only: %d of %d lists were the marked empty list", h.fetches.empty, h.fetches.lists)
	case !namesOnly && h.fetches.empty != 0:
		t.Errorf("full lists: %d marked empty lists", h.fetches.empty)
	case namesOnly && h.fetches.marked != h.fetches.requests:
		t.Errorf("names-only: %d of %d fetches carried a token", h.fetches.marked, h.fetches.requests)
	case !namesOnly && h.fetches.marked != 0:
		t.Errorf("full lists: %d fetches carried a token", h.fetches.marked)
	}
	t.Logf("names-only %v: %d lists fetched, %d with schemas, %d marked empty", namesOnly, h.fetches.lists, h.fetches.schema, h.fetches.empty)
}

type textArgs struct {
	Text string `json:"text,omitempty"`
}

func (h *harness) add(name string) {
	mcp.AddTool(h.server, &mcp.Tool{Name: name}, func(ctx context.Context, req *mcp.CallToolRequest, in textArgs) (*mcp.CallToolResult, any, error) {
		h.Ran(name)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran " + name}}}, nil, nil
	})
}

// newHarness builds a real go-sdk server in one of its modes, with the
// tool set's default full lists.
func newHarness(t testing.TB, mode string) *harness { return newHarnessWith(t, mode, false) }

// newHarnessWith builds a real go-sdk server in one of its modes; with
// namesOnly, the server is given to the tool set (Options.Servers), whose
// fetches then get names only.
func newHarnessWith(t testing.TB, mode string, namesOnly bool) *harness {
	h := &harness{modern: mode == "2026-07-28"}
	h.UnknownTool = gosdkUnknownTool
	h.server = mcp.NewServer(&mcp.Implementation{Name: "diff", Version: "1.0.0"}, nil)
	for _, n := range []string{"echo", "get_weather", "admin_only", "Ünïcode"} {
		h.add(n)
	}
	var opts mcp.StreamableHTTPOptions
	switch mode {
	case "json":
		opts.JSONResponse = true
		// Origin checks too: a cross-site POST gets 403 before dispatch.
		opts.CrossOriginProtection = http.NewCrossOriginProtection()
	case "stateless", "2026-07-28":
		opts.Stateless = true
	}
	h.Alone = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return h.server }, &opts)
	o := Options{Discover: toolguard.DiscoverOptions{MinInterval: time.Microsecond, TTL: time.Millisecond}}
	if namesOnly {
		o.Servers = []*mcp.Server{h.server}
	}
	tools := withLog(t, h.fetches.wrap(h.Alone), o)
	g, err := toolguard.New(toolguard.Options{Tools: tools, OnReject: func(r *http.Request, rej *toolguard.Rejection) { h.Rejected(rej.Name) }})
	if err != nil {
		t.Fatal(err)
	}
	h.Guarded = g.Handler(h.Alone)
	if !opts.Stateless {
		w := fixture.Send(h.Alone, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"diff","version":"1"}}}`, nil)
		h.session = w.Header().Get("Mcp-Session-Id")
		if w.Code != 200 || h.session == "" {
			t.Fatalf("initialize: %d %s", w.Code, w.Body)
		}
		fixture.Send(h.Alone, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, http.Header{"Mcp-Session-Id": {h.session}, "Mcp-Protocol-Version": {"2025-11-25"}})
	}
	return h
}

func (h *harness) headers(name string) http.Header {
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
	return hdr
}

func (h *harness) meta() string {
	if h.modern {
		return fixture.ModernMeta
	}
	return ""
}

// gosdkUnknownTool reads go-sdk's own answer to an unknown tool.
var gosdkUnknownTool = fixture.GoSDKUnknownTool

// listModes are the tool set's two ways of confirming: full lists (the
// default) and names-only lists (Options.Servers).
var listModes = []struct {
	name      string
	namesOnly bool
}{{"full", false}, {"names-only", true}}

func TestDifferentialCorpus(t *testing.T) {
	for _, lm := range listModes {
		t.Run(lm.name, func(t *testing.T) { differentialCorpus(t, lm.namesOnly) })
	}
}

func differentialCorpus(t *testing.T, namesOnly bool) {
	var total fixture.Tally
	for _, mode := range []string{"stateful-sse", "json", "stateless", "2026-07-28"} {
		t.Run(mode, func(t *testing.T) {
			h := newHarnessWith(t, mode, namesOnly)
			var tl fixture.Tally
			for _, name := range fixture.Names {
				for _, body := range fixture.Corpus(name, h.meta()) {
					h.Compare(t, body, h.headers(name), &tl)
				}
			}
			// Accept without text/event-stream: go-sdk answers 400.
			for _, body := range fixture.Corpus("nope", h.meta())[:3] {
				hdr := h.headers("nope")
				hdr.Set("Accept", "application/json")
				h.Compare(t, body, hdr, &tl)
			}
			// _meta and header variations: the server's refusals before
			// dispatch stay the server's.
			h.CompareVariants(t, []string{"echo", "nope", "admin_only", "session_note"}, h.meta(), h.headers, &tl)
			if tl.Rejected == 0 || tl.RanAlone == 0 {
				t.Errorf("degenerate corpus: %+v", tl)
			}
			t.Logf("%s: %v", mode, tl)
			h.checkFetches(t, namesOnly)
			total.Add(tl)
		})
	}
	t.Logf("go-sdk, all modes, names-only %v: %v", namesOnly, total)
	if n := total.Disagreements(); n != 0 {
		t.Errorf("%d disagreements", n)
	}
}

var (
	fuzzOnce    sync.Once
	fuzzHarness *harness
)

// TOOLGUARD_FUZZ_NAMES_ONLY=1 fuzzes the names-only mode.
var fuzzNamesOnly = os.Getenv("TOOLGUARD_FUZZ_NAMES_ONLY") == "1"

func FuzzDifferential(f *testing.F) {
	for _, name := range []string{"echo", "nope"} {
		for _, b := range fixture.Corpus(name, "")[:25] {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, body string) {
		fuzzOnce.Do(func() { fuzzHarness = newHarnessWith(f, "stateful-sse", fuzzNamesOnly) })
		var tl fixture.Tally
		fuzzHarness.Compare(t, body, fuzzHarness.headers("echo"), &tl)
	})
}

// A tool added at runtime is never rejected; a removed one gets -32602.
// go-sdk sends tools/list_changed 10ms after a change (debounced), so a
// cache that waited for it would reject a new tool: the tool set never
// does, in either list mode.
func TestRuntimeChanges(t *testing.T) {
	for _, lm := range listModes {
		for _, mode := range []string{"stateful-sse", "stateless"} {
			t.Run(lm.name+"/"+mode, func(t *testing.T) { runtimeChanges(t, mode, lm.namesOnly) })
		}
	}
}

func runtimeChanges(t *testing.T, mode string, namesOnly bool) {
	h := newHarnessWith(t, mode, namesOnly)
	callFor := func(name string) fixture.Outcome {
		return h.Do(h.Guarded, fixture.Corpus(name, h.meta())[0], h.headers(name))
	}
	for i := range 20 {
		name := "added_" + strconv.Itoa(i)
		if o := callFor(name); len(o.Rejected) != 1 {
			t.Fatalf("%s before it exists: %d %s", name, o.Status, o.Body)
		}
		h.add(name)
		if o := callFor(name); len(o.Rejected) != 0 || len(o.Ran) != 1 {
			t.Fatalf("%s right after it was added: rejected %v, ran %v", name, o.Rejected, o.Ran)
		}
	}
	h.server.RemoveTools("added_0")
	o := callFor("added_0")
	if _, sdk := gosdkUnknownTool(o.Body); len(o.Ran) != 0 || len(o.Rejected) == 0 && !sdk {
		t.Errorf("removed tool: %d %s", o.Status, o.Body)
	}
	h.checkFetches(t, namesOnly)
}
