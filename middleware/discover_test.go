package toolguard

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolguard/toolguard/internal/sse"
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
			answer := w.Body.Bytes()
			if tc.srv.sse {
				// The notification the server sent on the list is the
				// caller's: it comes first, in an event stream.
				msgs := sse.Messages(answer)
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
	for _, tc := range []struct {
		opts  DiscoverOptions
		field string
	}{
		{DiscoverOptions{TTL: -1}, "TTL"},
		{DiscoverOptions{MinInterval: -1}, "MinInterval"},
		{DiscoverOptions{MaxWait: -1}, "MaxWait"},
		{DiscoverOptions{Timeout: -1}, "Timeout"},
		{DiscoverOptions{MaxPages: -1}, "MaxPages"},
		{DiscoverOptions{MaxBodyBytes: -1}, "MaxBodyBytes"},
		{DiscoverOptions{MaxKeys: -1}, "MaxKeys"},
		{DiscoverOptions{ModernStatus: 1000}, "ModernStatus"},
	} {
		if _, err := Discover(&listServer{}, tc.opts); err == nil || !strings.HasPrefix(err.Error(), "toolguard: DiscoverOptions."+tc.field+" ") {
			t.Errorf("Discover(%+v) = %v, want an error naming %s", tc.opts, err, tc.field)
		}
	}
}

// stampServer is a listServer that records when each tools/list arrived.
type stampServer struct {
	listServer
	mu     sync.Mutex
	stamps []time.Time
}

func (s *stampServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.stamps = append(s.stamps, time.Now())
	s.mu.Unlock()
	s.listServer.ServeHTTP(w, r)
}

// Amplification: unknown calls from callers who differ in anything
// forwarded cost at most one upstream tools/list each, and one caller's
// fetches stay MinInterval apart however many calls it makes.
func TestDiscoveryAmplification(t *testing.T) {
	const calls = 10000
	for _, tc := range []struct {
		name   string
		header func(i int) http.Header
	}{
		{"distinct session ids", func(i int) http.Header { return http.Header{"Mcp-Session-Id": {"s-" + strconv.Itoa(i)}} }},
		{"distinct Authorization", func(i int) http.Header { return http.Header{"Authorization": {"Bearer t" + strconv.Itoa(i)}} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &listServer{tools: []string{"a"}}
			_, _, h := discoveryGuard(t, s, DiscoverOptions{})
			var rejected atomic.Int32
			var wg sync.WaitGroup
			work := make(chan int)
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range work {
						if w := serve(h, call("1", `"nope"`), tc.header(i)); w.Code == 200 {
							rejected.Add(1)
						}
					}
				}()
			}
			for i := range calls {
				work <- i
			}
			close(work)
			wg.Wait()
			lists := s.lists.Load()
			t.Logf("%s: %d unknown calls, %d rejected, %d upstream tools/list (%.3f per call)", tc.name, calls, rejected.Load(), lists, float64(lists)/calls)
			if lists > calls {
				t.Errorf("%d tools/list for %d unknown calls", lists, calls)
			}
			if rejected.Load() != calls {
				t.Errorf("%d of %d rejected", rejected.Load(), calls)
			}
		})
	}
	t.Run("one caller", func(t *testing.T) {
		const interval = 5 * time.Millisecond
		s := &stampServer{listServer: listServer{tools: []string{"a"}}}
		d, err := Discover(s, DiscoverOptions{MinInterval: interval})
		if err != nil {
			t.Fatal(err)
		}
		h := mustGuard(t, Options{Tools: d}).Handler(s)
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 250 {
					serve(h, call("1", `"nope"`), http.Header{"Mcp-Session-Id": {"same"}})
				}
			}()
		}
		wg.Wait()
		s.mu.Lock()
		defer s.mu.Unlock()
		minGap := time.Hour
		for i := 1; i < len(s.stamps); i++ {
			minGap = min(minGap, s.stamps[i].Sub(s.stamps[i-1]))
		}
		t.Logf("one caller: 2000 unknown calls, %d upstream tools/list, closest two %v apart (MinInterval %v)", len(s.stamps), minGap, interval)
		if len(s.stamps) > 1 && minGap < interval {
			t.Errorf("two fetches %v apart, under MinInterval %v", minGap, interval)
		}
	})
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
			Meta struct {
				Caps *struct {
					Elicitation *struct{} `json:"elicitation"`
				} `json:"io.modelcontextprotocol/clientCapabilities"`
			} `json:"_meta"`
		} `json:"params"`
	}
	if json.NewDecoder(r.Body).Decode(&m) != nil || m.Method != "tools/list" {
		w.WriteHeader(299)
		return
	}
	s.lists.Add(1)
	tools := `[{"name":"get_repository"}`
	if m.Params.Meta.Caps != nil && m.Params.Meta.Caps.Elicitation != nil {
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
	d, err := Discover(s, DiscoverOptions{MinInterval: time.Microsecond})
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
		w := send(capCall("delete_repository", `{}`), "localhost")
		if w.Code != 400 || !strings.Contains(w.Body.String(), `"availableTools":["get_repository"]`) {
			t.Fatalf("not declaring it: %d %s", w.Code, w.Body)
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
// answer, as an event stream: the server sent it so to a request with the
// caller's own Accept header, JSON alone included.
func TestDiscoveryRelaysTheServersMessages(t *testing.T) {
	for _, tc := range []struct {
		accept string
		events int // 0: a JSON answer
	}{
		{"application/json, text/event-stream", 2},
		{"text/event-stream", 2},
		{"application/json", 2},
	} {
		s := &listServer{tools: []string{"a"}, sse: true}
		_, _, h := discoveryGuard(t, s, DiscoverOptions{})
		w := serve(h, call("1", `"nope"`), http.Header{"Accept": {tc.accept}})
		ct := w.Header().Get("Content-Type")
		switch {
		case tc.events == 0 && (ct != "application/json" || !strings.Contains(w.Body.String(), `"code":-32602`)):
			t.Errorf("Accept %q: %s %s, want the JSON answer", tc.accept, ct, w.Body)
		case tc.events > 0:
			msgs := sse.Messages(w.Body.Bytes())
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

// A call that passes after the guard's list took messages for the caller
// gets them with the server's answer: before an event stream's events, or
// as an event stream made of a JSON answer; an HTTP error is left as it is.
func TestRelayWriter(t *testing.T) {
	msgs := [][]byte{[]byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`)}
	for _, tc := range []struct {
		name   string
		answer func(w http.ResponseWriter)
		want   []string // the messages of the answer; nil: the answer as the server wrote it
		status int
	}{
		{"json", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "28")
			io.WriteString(w, "{\"jsonrpc\":\"2.0\",\"id\":1,\n\"result\":{}}\n")
		}, []string{"notifications/message", `"result"`}, 200},
		{"stream", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
		}, []string{"notifications/message", `"result"`}, 200},
		{"error", func(w http.ResponseWriter) {
			http.Error(w, "no", http.StatusBadRequest)
		}, nil, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			rw := &relayWriter{ResponseWriter: rec, msgs: msgs}
			tc.answer(rw)
			rw.finish()
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d", rec.Code, tc.status)
			}
			if tc.want == nil {
				if rec.Body.String() != "no\n" {
					t.Fatalf("the error was altered: %q", rec.Body)
				}
				return
			}
			got := sse.Messages(rec.Body.Bytes())
			if rec.Header().Get("Content-Type") != "text/event-stream" || len(got) != len(tc.want) {
				t.Fatalf("%s %q", rec.Header().Get("Content-Type"), rec.Body)
			}
			for i, w := range tc.want {
				if !strings.Contains(string(got[i]), w) || !json.Valid(got[i]) {
					t.Errorf("message %d: %q, want one with %s", i, got[i], w)
				}
			}
			if cl := rec.Header().Get("Content-Length"); cl != "" && cl != strconv.Itoa(rec.Body.Len()) {
				t.Errorf("Content-Length %s for %d bytes", cl, rec.Body.Len())
			}
		})
	}
}
