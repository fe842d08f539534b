package toolguard

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolguard/toolguard/mcpwire"
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
	calls    atomic.Int32
	lastHdr  http.Header
	lastURL  url.URL // the URL tools/list was asked at
}

// notFound answers a tools/call for name as mcp-go does: -32602 with its
// own message, 400 for a 2026-07-28 request and 200 otherwise.
func notFound(w http.ResponseWriter, r *http.Request, id json.RawMessage, name string) {
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("Mcp-Protocol-Version") == "2026-07-28" {
		w.WriteHeader(http.StatusBadRequest)
	}
	msg, _ := json.Marshal("tool '" + name + "' not found: tool not found")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":%s}}`, id, msg)
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
			Name   string `json:"name"`
		} `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		w.WriteHeader(299)
		return
	}
	if s.session != "" && r.Header.Get("Mcp-Session-Id") != s.session {
		http.Error(w, "unknown session", http.StatusNotFound)
		return
	}
	if m.Method == "tools/call" {
		s.calls.Add(1)
		s.mu.Lock()
		known := slices.Contains(s.tools, m.Params.Name)
		s.mu.Unlock()
		if known {
			w.WriteHeader(299)
			return
		}
		notFound(w, r, m.ID, m.Params.Name)
		return
	}
	if m.Method != "tools/list" {
		w.WriteHeader(299)
		return
	}
	s.lists.Add(1)
	time.Sleep(s.delay)
	s.mu.Lock()
	s.lastHdr = r.Header.Clone()
	s.lastURL = *r.URL
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
			answer := w.Body.Bytes()
			if tc.srv.sse {
				// The notification the server sent on the list is the
				// caller's: it comes first, in an event stream.
				msgs := mcpwire.EventMessages(answer)
				if len(msgs) != 2 || !strings.Contains(string(msgs[0]), "notifications/message") {
					t.Fatalf("answer %s, want the list's notification, then the error", answer)
				}
				answer = msgs[1]
			}
			json.Unmarshal(answer, &msg)
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
	// An unknown session: the server's own 404 reaches the caller.
	if w := serve(h, call("1", `"nope"`), http.Header{"Mcp-Session-Id": {"other"}}); w.Code != 404 || w.Body.String() != "unknown session\n" {
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

// Whatever a cached list says, a tool the server runs is run: the guard
// answers only the server's own not-found answer.
func TestDiscoveryNeverAnswersBeforeTheServer(t *testing.T) {
	s := &listServer{tools: []string{"a"}}
	_, _, h := discoveryGuard(t, s, DiscoverOptions{TTL: time.Hour})
	if w := serve(h, call("1", `"nope"`), nil); w.Code != 200 || !strings.Contains(w.Body.String(), `"availableTools":["a"]`) {
		t.Fatalf("unknown tool: %d %s", w.Code, w.Body)
	}
	for i := range 20 {
		name := fmt.Sprintf("new_%d", i)
		s.set("a", name) // the cached list still says only "a"
		if w := serve(h, call("1", strconv.Quote(name)), nil); w.Code != 299 {
			t.Fatalf("tool %s the server has was answered: %d %s", name, w.Code, w.Body)
		}
	}
	if n := s.calls.Load(); n != 21 {
		t.Errorf("the server saw %d of 21 calls", n)
	}
}

func TestDiscoveryCollapsesAFlood(t *testing.T) {
	s := &listServer{tools: []string{"a"}, delay: 20 * time.Millisecond}
	_, _, h := discoveryGuard(t, s, DiscoverOptions{})
	var wg sync.WaitGroup
	var listed atomic.Int32
	for range 500 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if w := serve(h, call("1", `"nope"`), nil); w.Code == 200 && strings.Contains(w.Body.String(), `"availableTools":["a"]`) {
				listed.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := s.lists.Load(); n != 1 {
		t.Errorf("500 concurrent unknown calls of one caller made %d tools/list fetches, want 1", n)
	}
	if listed.Load() != 500 {
		t.Errorf("%d of 500 answered with the list", listed.Load())
	}
}

func TestDiscoveryTTL(t *testing.T) {
	s := &listServer{tools: []string{"a"}, ttlMs: 50}
	_, _, h := discoveryGuard(t, s, DiscoverOptions{TTL: time.Hour})
	serve(h, call("1", `"nope"`), nil) // fills the cache
	before := s.lists.Load()
	serve(h, call("1", `"nope"`), nil)
	if s.lists.Load() != before {
		t.Error("cached list not used")
	}
	time.Sleep(60 * time.Millisecond)
	serve(h, call("1", `"nope"`), nil)
	if s.lists.Load() == before {
		t.Error("ttlMs not honoured")
	}
}

func TestDiscoverValidates(t *testing.T) {
	if _, err := Discover(nil, DiscoverOptions{}); err == nil {
		t.Error("nil handler accepted")
	}
	refusesNegative(t, func(o DiscoverOptions) error { _, err := Discover(&listServer{}, o); return err }, DiscoverOptions{},
		"TTL", "Budget", "Timeout", "MaxPages", "MaxBodyBytes", "MaxKeys")
}

// Amplification: unknown calls from callers who differ in anything
// forwarded cost the server at most Budget of list fetching a second (and
// a second's worth at once); past it the answers go out without the list.
func TestDiscoveryBudget(t *testing.T) {
	const calls, workers = 2000, 8
	const budget, cost = 20 * time.Millisecond, 5 * time.Millisecond
	for _, tc := range []struct {
		name   string
		header func(i int) http.Header
	}{
		{"distinct session ids", func(i int) http.Header { return http.Header{"Mcp-Session-Id": {"s-" + strconv.Itoa(i)}} }},
		{"distinct Authorization", func(i int) http.Header { return http.Header{"Authorization": {"Bearer t" + strconv.Itoa(i)}} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &listServer{tools: []string{"a"}, delay: cost}
			_, _, h := discoveryGuard(t, s, DiscoverOptions{Budget: budget})
			var answered, listed atomic.Int32
			var wg sync.WaitGroup
			work := make(chan int)
			start := time.Now()
			for range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range work {
						w := serve(h, call("1", `"nope"`), tc.header(i))
						if w.Code == 200 && strings.Contains(w.Body.String(), `"code":-32602,"message":"Unknown tool: nope"`) {
							answered.Add(1)
						}
						if strings.Contains(w.Body.String(), "availableTools") {
							listed.Add(1)
						}
					}
				}()
			}
			for i := range calls {
				work <- i
			}
			close(work)
			wg.Wait()
			elapsed := time.Since(start)
			lists := s.lists.Load()
			// Each fetch takes at least cost; the budget allows a
			// second's worth at once, Budget a second after that, and a
			// fetch under way when it ran out (at most one a worker).
			bound := time.Duration(float64(budget)*(1+elapsed.Seconds())) + workers*cost
			t.Logf("%s: %d unknown calls in %v, %d answered, %d with the list, %d upstream tools/list (at least %v of fetching, bound %v)",
				tc.name, calls, elapsed, answered.Load(), listed.Load(), lists, time.Duration(lists)*cost, bound)
			if time.Duration(lists)*cost > bound {
				t.Errorf("%d tools/list of %v each for %d unknown calls, over the budget's %v", lists, cost, calls, bound)
			}
			if answered.Load() != calls || listed.Load() != lists || lists == 0 {
				t.Errorf("%d of %d answered, %d with the list from %d fetches", answered.Load(), calls, listed.Load(), lists)
			}
		})
	}
}

// capServer lists delete_repository only to a 2026-07-28 caller that
// declares elicitation in the _meta of its request, and refuses any
// request whose Host is not localhost, as servers do.
type capServer struct {
	lists atomic.Int32
}

func (s *capServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Host != "localhost" {
		http.Error(w, "Forbidden: invalid Host header", http.StatusForbidden)
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
			Meta struct {
				Caps *struct {
					Elicitation *struct{} `json:"elicitation"`
				} `json:"io.modelcontextprotocol/clientCapabilities"`
			} `json:"_meta"`
		} `json:"params"`
	}
	if json.NewDecoder(r.Body).Decode(&m) != nil {
		w.WriteHeader(299)
		return
	}
	elicits := m.Params.Meta.Caps != nil && m.Params.Meta.Caps.Elicitation != nil
	if m.Method == "tools/call" {
		switch m.Params.Name {
		case "get_repository":
			w.WriteHeader(299)
		case "delete_repository":
			// Runs for every caller; one that cannot elicit gets an
			// actionable error, as github-mcp-server answers.
			w.Header().Set("Content-Type", "application/json")
			if elicits {
				w.WriteHeader(299)
				return
			}
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"Tool \"delete_repository\" requires client support for form elicitation."}],"isError":true}}`, m.ID)
		default:
			notFound(w, r, m.ID, m.Params.Name)
		}
		return
	}
	if m.Method != "tools/list" {
		w.WriteHeader(299)
		return
	}
	s.lists.Add(1)
	tools := `[{"name":"get_repository"}`
	if elicits {
		tools += `,{"name":"delete_repository"}`
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":%s]}}`, m.ID, tools)
}

func capCall(name, caps string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":{},"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":` + caps + `}}}`
}

func TestDiscoveryAsksAsTheCaller(t *testing.T) {
	s := &capServer{}
	d, err := Discover(s, DiscoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h := mustGuard(t, Options{Tools: d}).Handler(s)
	send := func(body, host string) *httptest.ResponseRecorder {
		r := newRequest("POST", body, modernHeaders(strings.Split(strings.Split(body, `"name":"`)[1], `"`)[0]))
		r.Host = host
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	// In every order, so no cached list leaks from one caller to the other.
	for range 3 {
		if w := send(capCall("delete_repository", `{"elicitation":{}}`), "localhost"); w.Code != 299 {
			t.Fatalf("declaring elicitation: %d %s", w.Code, w.Body)
		}
		// Hidden from this caller's list, but run: the server's own
		// actionable answer reaches the caller untouched.
		w := send(capCall("delete_repository", `{}`), "localhost")
		if w.Code != 200 || !strings.Contains(w.Body.String(), `requires client support for form elicitation`) {
			t.Fatalf("not declaring it: %d %s", w.Code, w.Body)
		}
		w = send(capCall("nope", `{}`), "localhost")
		if w.Code != 400 || !strings.Contains(w.Body.String(), `"availableTools":["get_repository"]`) {
			t.Fatalf("unknown tool, not declaring elicitation: %d %s", w.Code, w.Body)
		}
		w = send(capCall("nope", `{"elicitation":{}}`), "localhost")
		if w.Code != 400 || !strings.Contains(w.Body.String(), `"availableTools":["delete_repository","get_repository"]`) {
			t.Fatalf("unknown tool, declaring elicitation: %d %s", w.Code, w.Body)
		}
		// A foreign Host never gets a list, warm cache or not.
		if w := send(capCall("nope", `{"elicitation":{}}`), "evil.example"); w.Code != 403 {
			t.Fatalf("foreign Host: %d %s", w.Code, w.Body)
		}
	}
	if k1, k2 := CallerKey(newRequest("POST", "", nil)), CallerKey(func() *http.Request {
		r := newRequest("POST", "", nil)
		r.Host = "evil.example"
		return r
	}()); k1 == k2 {
		t.Error("the caller key leaves out Host")
	}
}

// Everything the server could read to decide what to list is in the key.
func TestCallerKeyCoversWhatIsForwarded(t *testing.T) {
	base := func() *http.Request {
		r := newRequest("POST", "", http.Header{"Authorization": {"Bearer a"}, "Traceparent": {"00-1"}})
		return r
	}
	k := CallerKey(base())
	for name, change := range map[string]func(r *http.Request) *http.Request{
		"Host":          func(r *http.Request) *http.Request { r.Host = "evil.example"; return r },
		"remote IP":     func(r *http.Request) *http.Request { r.RemoteAddr = "198.51.100.7:1"; return r },
		"Authorization": func(r *http.Request) *http.Request { r.Header.Set("Authorization", "Bearer b"); return r },
		"Cookie":        func(r *http.Request) *http.Request { r.Header.Set("Cookie", "s=1"); return r },
		"Origin":        func(r *http.Request) *http.Request { r.Header.Set("Origin", "https://x.example"); return r },
		"Accept":        func(r *http.Request) *http.Request { r.Header.Set("Accept", "application/json"); return r },
		"path":          func(r *http.Request) *http.Request { r.URL.Path = "/other"; return r },
		"query":         func(r *http.Request) *http.Request { r.URL.RawQuery = "tenant=2"; return r },
		"_meta": func(r *http.Request) *http.Request {
			r, _ = withCall(r, Call{Name: "x", Meta: json.RawMessage(`{"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`)})
			return r
		},
	} {
		if CallerKey(change(base())) == k {
			t.Errorf("the key leaves out %s", name)
		}
	}
	for name, change := range map[string]func(r *http.Request) *http.Request{
		"remote port": func(r *http.Request) *http.Request { r.RemoteAddr = "192.0.2.1:9999"; return r },
		"traceparent": func(r *http.Request) *http.Request { r.Header.Set("Traceparent", "00-2"); return r },
		"Mcp-Name":    func(r *http.Request) *http.Request { r.Header.Set("Mcp-Name", "other"); return r },
	} {
		if CallerKey(change(base())) != k {
			t.Errorf("the key changes with %s", name)
		}
	}
}

// What the server sent the caller on the guard's list goes out with the
// answer, as an event stream, to a caller that accepts one; a caller that
// accepts only JSON gets the JSON answer (and the log says what was lost).
func TestDiscoveryRelaysTheServersMessages(t *testing.T) {
	for _, tc := range []struct {
		accept string
		events int // 0: a JSON answer
	}{
		{"application/json, text/event-stream", 2},
		{"text/event-stream", 2},
		{"application/json", 0},
	} {
		s := &listServer{tools: []string{"a"}, sse: true}
		_, _, h := discoveryGuard(t, s, DiscoverOptions{})
		w := serve(h, call("1", `"nope"`), http.Header{"Accept": {tc.accept}})
		ct := w.Header().Get("Content-Type")
		switch {
		case tc.events == 0 && (ct != "application/json" || !strings.Contains(w.Body.String(), `"code":-32602`)):
			t.Errorf("Accept %q: %s %s, want the JSON answer", tc.accept, ct, w.Body)
		case tc.events > 0:
			msgs := mcpwire.EventMessages(w.Body.Bytes())
			if ct != "text/event-stream" || len(msgs) != tc.events ||
				!strings.Contains(string(msgs[0]), `"notifications/message"`) || !strings.Contains(string(msgs[1]), `"code":-32602`) {
				t.Errorf("Accept %q: %s %s, want the notification, then the answer", tc.accept, ct, w.Body)
			}
			if w.Header().Get("Content-Length") != strconv.Itoa(w.Body.Len()) {
				t.Errorf("Content-Length %s for %d bytes", w.Header().Get("Content-Length"), w.Body.Len())
			}
		}
	}
}

// A fetch several calls of one caller share fails when the call that
// started it ends (its client left): the others, with time left, ask again
// and get the list.
func TestDiscoveryWaitersOutliveTheFetchOwner(t *testing.T) {
	var lists atomic.Int32
	server := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if lists.Add(1) == 1 {
			<-r.Context().Done() // the first list is never answered
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":`+listID(r)+`,"result":{"tools":[{"name":"a"}]}}`)
	})
	d, err := Discover(server, DiscoverOptions{Budget: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ownerCtx, leave := context.WithCancel(context.Background())
	owner := newRequest("POST", call("1", `"nope"`), nil).WithContext(ownerCtx)
	ownerDone := make(chan error, 1)
	go func() { _, err := d.List(owner); ownerDone <- err }()
	for lists.Load() == 0 {
		time.Sleep(time.Millisecond) // the owner's fetch is under way
	}
	waiterDone := make(chan []string, 1)
	go func() {
		names, err := d.List(newRequest("POST", call("2", `"nope"`), nil))
		if err != nil {
			t.Errorf("the waiter: %v", err)
		}
		waiterDone <- names
	}()
	time.Sleep(20 * time.Millisecond) // the waiter waits on the owner's fetch
	leave()
	if err := <-ownerDone; !errors.Is(err, context.Canceled) {
		t.Errorf("the owner: %v", err)
	}
	if names := <-waiterDone; !slices.Equal(names, []string{"a"}) {
		t.Errorf("the waiter got %q", names)
	}
}

// listID is the id of the tools/list r carries.
func listID(r *http.Request) string {
	var m struct{ ID json.RawMessage }
	json.NewDecoder(r.Body).Decode(&m)
	return string(m.ID)
}

// The list is asked at the call's URL as the handler got it: a path that
// begins with // is a path, not a host (a round trip through a string
// would make it one, and a router could then list another endpoint).
func TestDiscoveryAsksAtTheCallsURL(t *testing.T) {
	s := &listServer{tools: []string{"a"}}
	_, _, h := discoveryGuard(t, s, DiscoverOptions{})
	for _, u := range []string{"//evil.example/mcp", "/tenant/7/mcp?x=1", "/a%2Fb/mcp"} {
		r := newRequest("POST", call("1", `"nope"`), nil)
		parsed, err := url.ParseRequestURI(u)
		if err != nil {
			t.Fatal(err)
		}
		r.URL, r.RequestURI = parsed, u
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		s.mu.Lock()
		got := s.lastURL
		s.mu.Unlock()
		if got.Host != "" || got.Path != parsed.Path || got.RawPath != parsed.RawPath || got.RawQuery != parsed.RawQuery {
			t.Errorf("call at %q: list asked at path %q (raw %q) query %q host %q", u, got.Path, got.RawPath, got.RawQuery, got.Host)
		}
		if !strings.Contains(w.Body.String(), `"availableTools":["a"]`) {
			t.Errorf("call at %q: %s", u, w.Body)
		}
	}
}

// The list request gets copies of the caller's header values: a handler
// that appends to one of its own does not write into the caller's.
func TestDiscoveryListRequestOwnsItsHeaderValues(t *testing.T) {
	inner := &listServer{tools: []string{"a"}}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header["X-Tenant"] = append(r.Header["X-Tenant"], "added by the server")
		inner.ServeHTTP(w, r)
	})
	d, err := Discover(h, DiscoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vs := make([]string, 1, 4)
	vs[0] = "t1"
	r := newRequest("POST", call("1", `"nope"`), http.Header{"X-Tenant": vs})
	if _, err := d.List(r); err != nil {
		t.Fatal(err)
	}
	if got := vs[:2][1]; got != "" {
		t.Errorf("the caller's header array was written: %q", got)
	}
}

// Keys are held as digests: a caller whose key is a megabyte (every
// forwarded header) costs the cache 32 bytes of key.
func TestDiscoveryKeepsKeysAsDigests(t *testing.T) {
	s := &listServer{tools: []string{"a"}}
	_, d, h := discoveryGuard(t, s, DiscoverOptions{})
	long := strings.Repeat("x", 1<<20)
	serve(h, call("1", `"nope"`), http.Header{"Authorization": {long}})
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.entries) != 1 {
		t.Fatalf("%d entries", len(d.entries))
	}
	for k := range d.entries {
		if len(k) != sha256.Size {
			t.Errorf("a key of %d bytes kept", len(k))
		}
	}
}

// A fetch is charged at most Budget: one slow list (past its Timeout, or
// a server far away) keeps lists from the other callers for about a
// second, not for what it took times 1/Budget.
func TestDiscoveryChargesAFetchAtMostBudget(t *testing.T) {
	const budget = 20 * time.Millisecond
	d, err := Discover(&listServer{}, DiscoverOptions{Budget: budget})
	if err != nil {
		t.Fatal(err)
	}
	reserved, ok := d.spend()
	if !ok {
		t.Fatal("the first fetch was refused")
	}
	d.spent(reserved, 2*time.Second)
	d.mu.Lock()
	allowance, last := d.allowance, d.lastCost
	d.mu.Unlock()
	if allowance < -budget || last > budget {
		t.Errorf("after one fetch of 2s: allowance %v, next charge %v; want at least %v and at most %v", allowance, last, -budget, budget)
	}
}

// A server without tools lists none: the answer shows the empty list, and
// the list is cached as any other.
func TestDiscoveryCachesAnEmptyList(t *testing.T) {
	s := &listServer{}
	_, _, h := discoveryGuard(t, s, DiscoverOptions{})
	for i := range 3 {
		w := serve(h, call("1", `"nope"`), nil)
		if !strings.Contains(w.Body.String(), `"availableTools":[]`) {
			t.Errorf("call %d: %s", i, w.Body)
		}
	}
	if n := s.lists.Load(); n != 1 {
		t.Errorf("%d tools/list for three calls of one caller within TTL", n)
	}
}
