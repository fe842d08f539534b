package gosdk

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolguard/toolguard/internal/fixture"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// harness is a real go-sdk server, reachable alone and behind the guard.
type harness struct {
	fixture.Differential
	server  *mcp.Server
	session string
	modern  bool
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

// modes are go-sdk's: stateful with event-stream answers (its default),
// stateful with JSON answers (and cross-origin protection), stateless,
// and stateless serving 2026-07-28 requests.
var modes = []string{"stateful", "json", "stateless", "2026-07-28"}

// newHarness builds a real go-sdk server in one of its modes, behind a
// guard with no tool set: go-sdk decides every call.
func newHarness(t testing.TB, mode string) *harness { return harnessWith(t, mode, false) }

// harnessWith builds it; declared puts the guard in front with go-sdk's
// tools as a declared list (StaticTools), which answers before go-sdk.
func harnessWith(t testing.TB, mode string, declared bool) *harness {
	h := &harness{modern: mode == "2026-07-28"}
	h.UnknownTool = fixture.GoSDKUnknownTool
	h.Exact = true
	h.server = mcp.NewServer(&mcp.Implementation{Name: "diff", Version: "1.0.0"}, nil)
	for _, n := range []string{"echo", "get_weather", "admin_only", "Ünïcode"} {
		h.add(n)
	}
	var opts mcp.StreamableHTTPOptions
	switch mode {
	case "json":
		opts.JSONResponse = true
		// Origin checks too: a cross-site POST gets 403 before dispatch.
		//lint:ignore SA1019 go-sdk v1.8.0 still applies it before dispatch, which is what the differential covers
		opts.CrossOriginProtection = http.NewCrossOriginProtection()
	case "stateless", "2026-07-28":
		opts.Stateless = true
	}
	h.Alone = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return h.server }, &opts)
	var tools toolguard.ToolSet
	if declared {
		tools = toolguard.StaticTools("echo", "get_weather", "admin_only", "Ünïcode")
	}
	g, err := toolguard.New(toolguard.Options{Tools: tools, OnReject: func(r *http.Request, rej *toolguard.Rejection) {
		if !rej.Translated && !declared {
			t.Errorf("the guard answered %q before go-sdk", rej.Name)
		}
		h.Rejected(rej.Name)
	}})
	if err != nil {
		t.Fatal(err)
	}
	h.Guarded = g.Handler(h.Tee(h.Alone))
	if !opts.Stateless {
		w := fixture.Send(h.Alone, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"diff","version":"1"}}}`, http.Header{"Mcp-Protocol-Version": {"2025-11-25"}})
		h.session = w.Header().Get("Mcp-Session-Id")
		if w.Code != 200 || h.session == "" {
			t.Fatalf("initialize: %d %s", w.Code, w.Body)
		}
		fixture.Send(h.Alone, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, http.Header{"Mcp-Session-Id": {h.session}, "Mcp-Protocol-Version": {"2025-11-25"}})
	}
	// The client lists its tools, as real clients do before they call:
	// the guard keeps go-sdk's answer for data.availableTools.
	hdr := h.headers("")
	hdr.Del("Mcp-Name")
	if h.modern {
		hdr.Set("Mcp-Method", "tools/list")
	}
	list := `{"jsonrpc":"2.0","id":"list","method":"tools/list","params":{` + strings.TrimPrefix(h.meta(), ",") + `}}`
	if w := fixture.Send(h.Guarded, list, hdr); w.Code != 200 {
		t.Fatalf("tools/list: %d %s", w.Code, w.Body)
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

// TestDifferentialCorpus sends every corpus body, for every tool name,
// header and _meta variation, to go-sdk alone and behind the guard, in
// every mode: no wrong rejection, no name disagreement, and every answer
// the same as alone's, byte for byte, except go-sdk's own not-found answer.
func TestDifferentialCorpus(t *testing.T) {
	var total fixture.Tally
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			h := newHarness(t, mode)
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
			h.CompareVariants(t, []string{"echo", "nope", "admin_only"}, h.meta(), h.headers, &tl)
			if tl.Rejected == 0 || tl.RanAlone == 0 {
				t.Errorf("degenerate corpus: %+v", tl)
			}
			t.Logf("%s: %v", mode, tl)
			total.Add(tl)
		})
	}
	t.Logf("go-sdk, all modes: %v", total)
	if n := total.Disagreements(); n != 0 {
		t.Errorf("%d disagreements", n)
	}
}

// TestDeclaredListAnswersOnlyWhatGoSDKLooksUp puts go-sdk's own tools in
// front of it as a declared list, in its sessionless modes, where the
// guard answers before go-sdk: the corpus, every _meta and header variant
// (an Mcp-Name in the sentinel form among them, which go-sdk refuses),
// and no answer where go-sdk alone would refuse the call first.
func TestDeclaredListAnswersOnlyWhatGoSDKLooksUp(t *testing.T) {
	for _, mode := range []string{"stateless", "2026-07-28"} {
		t.Run(mode, func(t *testing.T) {
			h := harnessWith(t, mode, true)
			var tl fixture.Tally
			for _, name := range fixture.Names {
				for _, body := range fixture.Corpus(name, h.meta()) {
					h.Compare(t, body, h.headers(name), &tl)
				}
			}
			h.CompareVariants(t, []string{"echo", "nope", "Ünïcodé"}, h.meta(), h.headers, &tl)
			if tl.Rejected == 0 || tl.RanAlone == 0 || tl.Disagreements() != 0 {
				t.Errorf("%v", tl)
			}
			t.Logf("%s: %v", mode, tl)
		})
	}
}

var (
	fuzzOnce    sync.Once
	fuzzHarness *harness
)

// FuzzDifferential sends arbitrary bodies to go-sdk with and without the
// guard: the corpus's promises, for any body.
func FuzzDifferential(f *testing.F) {
	for _, name := range []string{"echo", "nope"} {
		for _, b := range fixture.Corpus(name, "")[:25] {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, body string) {
		fuzzOnce.Do(func() { fuzzHarness = newHarness(t, "stateful") })
		var tl fixture.Tally
		fuzzHarness.Compare(t, body, fuzzHarness.headers("echo"), &tl)
	})
}

// A tool added at runtime runs at once; a removed one gets -32602.
func TestRuntimeChanges(t *testing.T) {
	for _, mode := range []string{"stateful", "stateless"} {
		t.Run(mode, func(t *testing.T) {
			h := newHarness(t, mode)
			var tl fixture.Tally
			for i := range 20 {
				name := "added_" + strconv.Itoa(i)
				h.Compare(t, fixture.Corpus(name, h.meta())[0], h.headers(name), &tl)
				h.add(name)
				h.Compare(t, fixture.Corpus(name, h.meta())[0], h.headers(name), &tl)
			}
			h.server.RemoveTools("added_0")
			h.Compare(t, fixture.Corpus("added_0", h.meta())[0], h.headers("added_0"), &tl)
			if tl.Rejected != 21 || tl.RanAlone != 20 {
				t.Errorf("%v", tl)
			}
		})
	}
}
