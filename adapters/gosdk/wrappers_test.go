package toolguardgosdk

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolguard/toolguard/internal/fixture"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// rewriteLists is an HTTP wrapper in front of go-sdk (JSON replies) that
// rewrites every tools/list reply's tools with f, and calls with call.
func rewriteLists(sdk http.Handler, call func(name string) string, f func(r *http.Request, tools []map[string]any) []map[string]any) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req map[string]any
		json.Unmarshal(body, &req)
		if req["method"] == "tools/call" {
			p := req["params"].(map[string]any)
			p["name"] = call(p["name"].(string))
			body, _ = json.Marshal(req)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		rec := httptest.NewRecorder()
		sdk.ServeHTTP(rec, r)
		out := rec.Body.Bytes()
		var rep map[string]any
		if json.Unmarshal(out, &rep) == nil {
			if res, ok := rep["result"].(map[string]any); ok {
				if ts, ok := res["tools"].([]any); ok {
					var tools []map[string]any
					for _, t := range ts {
						tools = append(tools, t.(map[string]any))
					}
					tools = f(r, tools)
					if tools == nil {
						tools = []map[string]any{}
					}
					res["tools"] = tools
					out, _ = json.Marshal(rep)
				}
			}
		}
		for k, vs := range rec.Header() {
			if k != "Content-Length" {
				w.Header()[k] = vs
			}
		}
		w.WriteHeader(rec.Code)
		w.Write(out)
	})
}

// An HTTP wrapper between the guard and go-sdk that hides admin_* tools
// from non-admins in tools/list replies: in either list mode the guard
// lists what the caller's tools/list shows (names-only lists need go-sdk's
// own handler, so through a wrapper lists stay whole).
func TestWrapperThatFiltersLists(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "f", Version: "1"}, nil)
	addTools(s, "echo", "admin_reset")
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	h := rewriteLists(sdk, func(n string) string { return n }, func(r *http.Request, tools []map[string]any) []map[string]any {
		if r.Header.Get("Authorization") == "Bearer admin" {
			return tools
		}
		var keep []map[string]any
		for _, t := range tools {
			if !strings.HasPrefix(t["name"].(string), "admin_") {
				keep = append(keep, t)
			}
		}
		return keep
	})
	hdr := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}, "Authorization": {"Bearer user"}}
	if own := fixture.Send(h, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, hdr).Body.String(); strings.Contains(own, "admin_reset") {
		t.Fatalf("the wrapper does not hide: %s", own)
	}
	for _, opts := range []Options{{}, {Servers: []*mcp.Server{s}}} {
		g := guardOf(t, h, h, opts)
		w := fixture.Send(g, callBody("nope"), hdr)
		if strings.Contains(w.Body.String(), "admin_reset") {
			t.Errorf("servers=%d: guard shows a name the caller's tools/list hides: %s", len(opts.Servers), w.Body)
		}
	}
}

// A gateway wrapper that exposes go-sdk's tools as ns_<name>: the caller's
// tools/list has ns_echo, and ns_echo runs, in either list mode.
func TestWrapperThatRenamesTools(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "r", Version: "1"}, nil)
	addTools(s, "echo")
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	h := rewriteLists(sdk, func(n string) string { return strings.TrimPrefix(n, "ns_") }, func(r *http.Request, tools []map[string]any) []map[string]any {
		for _, t := range tools {
			t["name"] = "ns_" + t["name"].(string)
		}
		return tools
	})
	hdr := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}
	for _, opts := range []Options{{}, {Servers: []*mcp.Server{s}}} {
		g := guardOf(t, h, h, opts)
		w := fixture.Send(g, callBody("ns_echo"), hdr)
		if !strings.Contains(w.Body.String(), "ran echo") {
			t.Errorf("servers=%d: ns_echo, which the server runs, not run: %s", len(opts.Servers), w.Body)
		}
	}
}

// A response cache in front of go-sdk for tools/list (keyed by
// Authorization, the JSON-RPC id rewritten), as an MCP-aware cache honouring
// cacheScope might do. Through it lists stay whole; and should a marked list
// reach a fetch that did not make it (the cache taken for a plain recorder
// here, to force the case), it is fetched again in full, never read as an
// empty list.
func TestCacheOfListReplies(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	addTools(s, "echo")
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	var mu sync.Mutex
	cache := map[string]map[string]any{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req map[string]any
		json.Unmarshal(body, &req)
		key := r.Header.Get("Authorization")
		if req["method"] == "tools/list" {
			mu.Lock()
			c := cache[key]
			mu.Unlock()
			if c != nil {
				c["id"] = req["id"]
				out, _ := json.Marshal(c)
				w.Header().Set("Content-Type", "application/json")
				w.Write(out)
				return
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		sdk.ServeHTTP(rec, r)
		if req["method"] == "tools/list" && rec.Code == 200 {
			var rep map[string]any
			if json.Unmarshal(rec.Body.Bytes(), &rep) == nil {
				mu.Lock()
				cache[key] = rep
				mu.Unlock()
			}
		}
		for k, vs := range rec.Header() {
			w.Header()[k] = vs
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	})
	for _, c := range []struct {
		fetch http.Handler
		opts  Options
	}{{h, Options{}}, {h, Options{Servers: []*mcp.Server{s}}}, {recording{h}, Options{Servers: []*mcp.Server{s}}}} {
		opts := c.opts
		mu.Lock()
		clear(cache)
		mu.Unlock()
		opts.Discover = toolguard.DiscoverOptions{TTL: 1} // every call confirms anew
		g := guardOf(t, h, c.fetch, opts)
		hdr := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}
		fixture.Send(g, callBody("nope"), hdr) // first fetch fills the cache
		w := fixture.Send(g, callBody("echo"), hdr)
		if !strings.Contains(w.Body.String(), "ran echo") {
			t.Errorf("servers=%d: echo, which go-sdk runs, rejected: %s", len(opts.Servers), w.Body)
		}
	}
}
