package toolguard

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// listServer is a minimal MCP server for the discovery tests: it answers
// tools/list (as JSON or SSE, in pages) and anything else with 299.
type listServer struct {
	mu       sync.Mutex
	tools    []string
	sse      bool
	pageSize int
	ttlMs    int
	delay    time.Duration
	session  string // when set, requests must carry it
	lists    atomic.Int32
	lastHdr  http.Header
}

func (s *listServer) set(tools ...string) {
	s.mu.Lock()
	s.tools = tools
	s.mu.Unlock()
}

func (s *listServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Cursor string `json:"cursor"`
		} `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil || m.Method != "tools/list" {
		w.WriteHeader(299)
		return
	}
	if s.session != "" && r.Header.Get("Mcp-Session-Id") != s.session {
		http.Error(w, "unknown session", http.StatusNotFound)
		return
	}
	s.lists.Add(1)
	time.Sleep(s.delay)
	s.mu.Lock()
	s.lastHdr = r.Header.Clone()
	tools := slices.Clone(s.tools)
	s.mu.Unlock()
	start, _ := strconv.Atoi(m.Params.Cursor)
	end := len(tools)
	if s.pageSize > 0 {
		end = min(start+s.pageSize, end)
	}
	res := map[string]any{}
	list := []map[string]any{}
	for _, n := range tools[start:end] {
		list = append(list, map[string]any{"name": n, "inputSchema": map[string]any{"type": "object"}})
	}
	res["tools"] = list
	if end < len(tools) {
		res["nextCursor"] = strconv.Itoa(end)
	}
	if s.ttlMs > 0 {
		res["ttlMs"] = s.ttlMs
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": res})
	if s.sse {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n")
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", b)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

func discoveryGuard(t *testing.T, s *listServer, opts DiscoverOptions) (*Guard, *Discovery, http.Handler) {
	t.Helper()
	d, err := Discover(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	g := mustGuard(t, Options{Tools: d})
	return g, d, g.Handler(s)
}

func serve(h http.Handler, body string, hdr http.Header) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, newRequest("POST", body, hdr))
	return w
}

func TestDiscoveryLists(t *testing.T) {
	for _, tc := range []struct {
		name string
		srv  *listServer
	}{
		{"json", &listServer{tools: []string{"b", "a"}}},
		{"sse", &listServer{tools: []string{"b", "a"}, sse: true}},
		{"pages", &listServer{tools: []string{"e", "d", "c", "b", "a"}, pageSize: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, h := discoveryGuard(t, tc.srv, DiscoverOptions{})
			w := serve(h, call("1", `"nope"`), nil)
			var msg struct {
				Error struct {
					Code int `json:"code"`
					Data struct {
						AvailableTools []string `json:"availableTools"`
					} `json:"data"`
				} `json:"error"`
			}
			json.Unmarshal(w.Body.Bytes(), &msg)
			want := slices.Sorted(slices.Values(tc.srv.tools))
			if msg.Error.Code != -32602 || !slices.Equal(msg.Error.Data.AvailableTools, want) {
				t.Errorf("answer %s", w.Body)
			}
			if w := serve(h, call("2", `"a"`), nil); w.Code != 299 {
				t.Errorf("known tool answered %d %s", w.Code, w.Body)
			}
		})
	}
}

func TestDiscoveryForwardsCallerHeaders(t *testing.T) {
	s := &listServer{tools: []string{"a"}, session: "s-1"}
	_, _, h := discoveryGuard(t, s, DiscoverOptions{})
	// An unknown session: the server answers 404, so the guard cannot tell.
	if w := serve(h, call("1", `"nope"`), http.Header{"Mcp-Session-Id": {"other"}}); w.Code != 299 {
		t.Errorf("unknown session: %d %s", w.Code, w.Body)
	}
	w := serve(h, call("1", `"nope"`), http.Header{"Mcp-Session-Id": {"s-1"}, "Authorization": {"Bearer x"}, "Mcp-Protocol-Version": {"2025-11-25"}})
	if w.Code != 200 || !strings.Contains(w.Body.String(), "-32602") {
		t.Errorf("known session: %d %s", w.Code, w.Body)
	}
	s.mu.Lock()
	hdr := s.lastHdr
	s.mu.Unlock()
	if hdr.Get("Authorization") != "Bearer x" || hdr.Get("Mcp-Protocol-Version") != "2025-11-25" {
		t.Errorf("forwarded %v", hdr)
	}
	// 2026-07-28: the list request says so in Mcp-Method and _meta.
	mh := modernHeaders("nope")
	mh["Mcp-Session-Id"] = []string{"s-1"}
	w = serve(h, modernCall("2", `"nope"`), mh)
	s.mu.Lock()
	hdr = s.lastHdr
	s.mu.Unlock()
	if hdr.Get("Mcp-Method") != "tools/list" || hdr.Get("Mcp-Name") != "" {
		t.Errorf("modern list headers %v (answer %d %s)", hdr, w.Code, w.Body)
	}
}

func TestDiscoveryNeverRejectsAFreshTool(t *testing.T) {
	s := &listServer{tools: []string{"a"}}
	// A short TTL, so a removed tool is not answered from the cache.
	_, _, h := discoveryGuard(t, s, DiscoverOptions{MinInterval: time.Millisecond, TTL: time.Millisecond})
	if w := serve(h, call("1", `"a"`), nil); w.Code != 299 {
		t.Fatal("known tool rejected")
	}
	for i := range 20 {
		name := fmt.Sprintf("new_%d", i)
		s.set("a", name)
		time.Sleep(2 * time.Millisecond)
		if w := serve(h, call("1", strconv.Quote(name)), nil); w.Code != 299 {
			t.Fatalf("tool %s added before the call was rejected: %s", name, w.Body)
		}
	}
	s.set("a")
	time.Sleep(2 * time.Millisecond)
	if w := serve(h, call("1", `"new_19"`), nil); w.Code != 200 {
		t.Errorf("removed tool passed through: %d", w.Code)
	}
	if s.lists.Load() < 20 {
		t.Errorf("%d fetches: lists were not fresh", s.lists.Load())
	}
}

func TestDiscoveryCollapsesAFlood(t *testing.T) {
	s := &listServer{tools: []string{"a"}, delay: 20 * time.Millisecond}
	_, _, h := discoveryGuard(t, s, DiscoverOptions{MinInterval: 50 * time.Millisecond})
	var wg sync.WaitGroup
	var rejected atomic.Int32
	for range 500 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if w := serve(h, call("1", `"nope"`), nil); w.Code == 200 {
				rejected.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := s.lists.Load(); n > 4 {
		t.Errorf("500 concurrent unknown calls made %d tools/list fetches", n)
	}
	if rejected.Load() != 500 {
		t.Errorf("%d of 500 rejected", rejected.Load())
	}
}

func TestDiscoveryTTL(t *testing.T) {
	s := &listServer{tools: []string{"a"}, ttlMs: 50}
	_, _, h := discoveryGuard(t, s, DiscoverOptions{TTL: time.Hour})
	serve(h, call("1", `"a"`), nil) // fills the cache
	before := s.lists.Load()
	serve(h, call("1", `"a"`), nil)
	if s.lists.Load() != before {
		t.Error("cached list not used")
	}
	time.Sleep(60 * time.Millisecond)
	serve(h, call("1", `"a"`), nil)
	if s.lists.Load() == before {
		t.Error("ttlMs not honoured")
	}
}

func TestDiscoverValidates(t *testing.T) {
	if _, err := Discover(nil, DiscoverOptions{}); err == nil {
		t.Error("nil handler accepted")
	}
	if _, err := Discover(&listServer{}, DiscoverOptions{TTL: -1}); err == nil {
		t.Error("negative TTL accepted")
	}
}
