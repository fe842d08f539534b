package toolguard

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeStdioServer is a line-delimited JSON-RPC server for the unit tests:
// it answers initialize, tools/list (in pages) and tools/call, records
// every line it reads, and ignores everything else.
type fakeStdioServer struct {
	mu         sync.Mutex
	tools      []string
	pageSize   int
	silentList bool     // never answer tools/list
	lateInit   bool     // answer initialize only after reading the next line, as a server reading ahead does
	got        []string // every line read, whole
	lists      []string // the tools/list requests read
	w          io.Writer
	wmu        sync.Mutex
	done       chan struct{}
}

func (f *fakeStdioServer) setTools(names ...string) {
	f.mu.Lock()
	f.tools = names
	f.mu.Unlock()
}

func (f *fakeStdioServer) send(v any) {
	b, _ := json.Marshal(v)
	f.wmu.Lock()
	f.w.Write(append(b, '\n'))
	f.wmu.Unlock()
}

func (f *fakeStdioServer) serve(r io.Reader, w io.Writer) {
	defer close(f.done)
	f.w = w
	br := bufio.NewReaderSize(r, 1<<20)
	var deferred []byte // an initialize held back (lateInit)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			f.mu.Lock()
			f.got = append(f.got, string(line))
			late := f.lateInit && bytes.Contains(line, []byte(`"method":"initialize"`))
			f.mu.Unlock()
			if late {
				deferred = line
				continue
			}
			f.handle(line)
			if deferred != nil {
				f.handle(deferred)
				deferred = nil
			}
		}
		if err != nil {
			return
		}
	}
}

func (f *fakeStdioServer) handle(line []byte) {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name   string `json:"name"`
			Cursor string `json:"cursor"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &msg) != nil || msg.ID == nil {
		return
	}
	f.mu.Lock()
	tools, pageSize, silent := slices.Clone(f.tools), f.pageSize, f.silentList
	f.mu.Unlock()
	switch msg.Method {
	case "initialize":
		f.send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": map[string]any{
			"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{"listChanged": true}},
			"serverInfo": map[string]any{"name": "fake", "version": "1"}}})
	case "tools/list":
		f.mu.Lock()
		f.lists = append(f.lists, string(line))
		f.mu.Unlock()
		if silent {
			return
		}
		start := 0
		if msg.Params.Cursor != "" {
			fmt.Sscan(msg.Params.Cursor, &start)
		}
		end := len(tools)
		if pageSize > 0 {
			end = min(len(tools), start+pageSize)
		}
		list := []map[string]any{}
		for _, n := range tools[start:end] {
			list = append(list, map[string]any{"name": n, "inputSchema": map[string]any{"type": "object"}})
		}
		res := map[string]any{"tools": list}
		if end < len(tools) {
			res["nextCursor"] = fmt.Sprint(end)
		}
		f.send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": res})
	case "tools/call":
		if slices.Contains(tools, msg.Params.Name) {
			f.send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": map[string]any{
				"content": []any{map[string]any{"type": "text", "text": "ran " + msg.Params.Name}}}})
		} else {
			f.send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": map[string]any{"isError": true,
				"content": []any{map[string]any{"type": "text", "text": "Tool " + msg.Params.Name + " not found"}}}})
		}
	}
}

// received returns the lines the server read that the client did not
// send: the guard's own requests.
func (f *fakeStdioServer) received() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.got)
}

// stdioRig is a client, the guard and a fake server, connected by pipes.
type stdioRig struct {
	g      *Stdio
	srv    *fakeStdioServer
	in     *io.PipeWriter // the client writes here
	out    chan string    // the lines the client reads
	outEnd chan struct{}
}

func newStdioRig(t *testing.T, opts StdioOptions, tools ...string) *stdioRig {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	g, err := NewStdio(inR, outW, opts)
	if err != nil {
		t.Fatal(err)
	}
	rig := &stdioRig{g: g, srv: &fakeStdioServer{tools: tools, done: make(chan struct{})}, in: inW,
		out: make(chan string, 1000), outEnd: make(chan struct{})}
	go func() {
		rig.srv.serve(g.Reader(), g.Writer())
		g.Writer().Close()
	}()
	go func() {
		defer close(rig.outEnd)
		br := bufio.NewReaderSize(outR, 1<<20)
		for {
			line, err := br.ReadString('\n')
			if line != "" {
				rig.out <- line
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		<-rig.srv.done
		<-rig.outEnd
	})
	return rig
}

func (rig *stdioRig) send(t *testing.T, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(rig.in, l); err != nil {
			t.Fatal(err)
		}
	}
}

func (rig *stdioRig) next(t *testing.T) string {
	t.Helper()
	select {
	case l := <-rig.out:
		return l
	case <-time.After(5 * time.Second):
		t.Fatal("no line from the guard within 5s")
		return ""
	}
}

func (rig *stdioRig) handshake(t *testing.T) {
	t.Helper()
	rig.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	if l := rig.next(t); !strings.Contains(l, `"serverInfo"`) {
		t.Fatalf("initialize answered %q", l)
	}
	rig.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
}

func lineCall(id, name string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `","arguments":{}}}` + "\n"
}

func TestStdioRejectsUnknownTool(t *testing.T) {
	var rejected []string
	rig := newStdioRig(t, StdioOptions{OnReject: func(r *Rejection) { rejected = append(rejected, r.Name) }}, "get_weather", "search_docs")
	rig.handshake(t)

	rig.send(t, lineCall(`"a"`, "get_wether"))
	want := `{"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"Unknown tool: get_wether","data":{"availableTools":["get_weather","search_docs"],"suggestions":["get_weather"]}}}` + "\n"
	if got := rig.next(t); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	rig.send(t, lineCall("2", "get_weather"))
	if got := rig.next(t); got != `{"id":2,"jsonrpc":"2.0","result":{"content":[{"text":"ran get_weather","type":"text"}]}}`+"\n" {
		t.Fatalf("known call answered %s", got)
	}
	rig.send(t, lineCall("3", "nope"))
	if got := rig.next(t); !strings.Contains(got, `"id":3,"error":{"code":-32602`) {
		t.Fatalf("second unknown call answered %s", got)
	}
	for _, l := range rig.srv.received() {
		if strings.Contains(l, "get_wether") || strings.Contains(l, `"nope"`) {
			t.Errorf("the server read a rejected call: %s", l)
		}
	}
	if !slices.Equal(rejected, []string{"get_wether", "nope"}) {
		t.Errorf("OnReject told %q", rejected)
	}
	// One list for the first unknown call, which also served the known
	// one, and a fresh one for the second unknown call.
	if n := rig.g.Fetches(); n != 2 {
		t.Errorf("%d tools/list requests, want 2", n)
	}
	for _, l := range rig.srv.lists {
		if !strings.Contains(l, `"id":"toolguard-`) {
			t.Errorf("own request id %s", l)
		}
	}
}

func TestStdioPassesBeforeHandshake(t *testing.T) {
	rig := newStdioRig(t, StdioOptions{}, "echo")
	rig.send(t, lineCall("1", "nope"))
	if got := rig.next(t); !strings.Contains(got, `"isError":true`) {
		t.Fatalf("before initialize the server must answer; got %s", got)
	}
	// initialize answered, but no notifications/initialized yet.
	rig.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`+"\n")
	rig.next(t)
	rig.send(t, lineCall("2", "nope"))
	if got := rig.next(t); !strings.Contains(got, `"isError":true`) {
		t.Fatalf("before notifications/initialized the server must answer; got %s", got)
	}
	if n := rig.g.Fetches(); n != 0 {
		t.Errorf("%d tools/list requests before the handshake", n)
	}
}

// TestStdioHandshakeEitherOrder: a client that sends
// notifications/initialized before the server's initialize answer has
// passed (it pipes every line at once) still gets answers once both have
// happened; a new initialize starts a new handshake.
func TestStdioHandshakeEitherOrder(t *testing.T) {
	var mu sync.Mutex
	var inactive []string
	rig := newStdioRig(t, StdioOptions{OnInactive: func(r string) {
		mu.Lock()
		inactive = append(inactive, r)
		mu.Unlock()
	}}, "echo")
	rig.srv.mu.Lock()
	rig.srv.lateInit = true
	rig.srv.mu.Unlock()
	initialize := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n"
	initialized := `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
	rig.send(t, initialize+initialized)
	if l := rig.next(t); !strings.Contains(l, `"serverInfo"`) {
		t.Fatalf("initialize answered %q", l)
	}
	rig.send(t, lineCall("1", "nope"))
	if got := rig.next(t); !strings.Contains(got, `"id":1,"error":{"code":-32602`) {
		t.Fatalf("after a pipelined handshake: %s", got)
	}
	mu.Lock()
	if len(inactive) != 0 {
		t.Errorf("OnInactive told %q after a whole handshake", inactive)
	}
	mu.Unlock()

	// A new initialize: until its answer and a new notifications/initialized,
	// calls are the server's, and OnInactive is told once.
	rig.send(t, initialize, lineCall("2", "nope"), lineCall("3", "nope"))
	for _, id := range []string{"2", "3"} {
		got := rig.next(t)
		if strings.Contains(got, `"serverInfo"`) {
			got = rig.next(t)
		}
		if !strings.Contains(got, `"id":`+id+`,"jsonrpc":"2.0","result":{"content":[{"text":"Tool nope not found"`) {
			t.Fatalf("call %s before the new handshake: %s", id, got)
		}
	}
	rig.send(t, initialized, lineCall("4", "nope"))
	if got := rig.next(t); !strings.Contains(got, `"id":4,"error":{"code":-32602`) {
		t.Fatalf("after the new handshake: %s", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(inactive) != 1 || !strings.Contains(inactive[0], "before the initialize handshake") {
		t.Errorf("OnInactive told %q, want once, of the handshake", inactive)
	}
}

// TestStdioOnInactiveLost: once the guard stops answering for the rest of
// the stream, OnInactive is told once, and why.
func TestStdioOnInactiveLost(t *testing.T) {
	for _, tc := range []struct {
		line, why string
	}{
		{"not json\n", "not certainly one JSON-RPC message"},
		{`{"jsonrpc":"2.0","id":9,"method":"ping","pad":"` + strings.Repeat("x", 300) + `"}` + "\n", "longer than MaxLineBytes"},
		{`{"jsonrpc":"2.0","id":9,"method":"ping","pad":"` + strings.Repeat("x", 100<<10) + `"}` + "\n", "longer than MaxLineBytes"},
	} {
		var mu sync.Mutex
		var inactive []string
		rig := newStdioRig(t, StdioOptions{MaxLineBytes: 256, OnInactive: func(r string) {
			mu.Lock()
			inactive = append(inactive, r)
			mu.Unlock()
		}}, "echo")
		rig.handshake(t)
		rig.send(t, tc.line, tc.line, lineCall("1", "nope"))
		if got := rig.next(t); !strings.Contains(got, `"isError":true`) {
			t.Fatalf("%.20q: after it the server must answer; got %s", tc.line, got)
		}
		mu.Lock()
		if len(inactive) != 1 || !strings.Contains(inactive[0], tc.why) {
			t.Errorf("%.20q: OnInactive told %q, want once: %s", tc.line, inactive, tc.why)
		}
		mu.Unlock()
	}
}

func TestStdioListChanged(t *testing.T) {
	rig := newStdioRig(t, StdioOptions{}, "echo")
	rig.handshake(t)
	rig.send(t, lineCall("1", "echo"))
	rig.next(t)
	rig.send(t, lineCall("2", "added"))
	if got := rig.next(t); !strings.Contains(got, `"availableTools":["echo"]`) {
		t.Fatalf("got %s", got)
	}
	rig.srv.setTools("echo", "added")
	rig.srv.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
	if got := rig.next(t); !strings.Contains(got, "list_changed") {
		t.Fatalf("the announcement must reach the client; got %s", got)
	}
	rig.send(t, lineCall("3", "added"))
	if got := rig.next(t); !strings.Contains(got, "ran added") {
		t.Fatalf("a tool added at runtime: %s", got)
	}
	// Removed: the cached list lets it through, the server answers.
	rig.srv.setTools("echo")
	rig.send(t, lineCall("4", "added"))
	if got := rig.next(t); !strings.Contains(got, `"isError":true`) {
		t.Fatalf("got %s", got)
	}
	// After the announcement the cache is dropped, and a fresh list rejects.
	rig.srv.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
	rig.next(t)
	rig.send(t, lineCall("5", "added"))
	if got := rig.next(t); !strings.Contains(got, `"id":5,"error"`) {
		t.Fatalf("got %s", got)
	}
}

func TestStdioPages(t *testing.T) {
	tools := []string{"a1", "a2", "a3", "a4", "a5", "a6", "a7"}
	rig := newStdioRig(t, StdioOptions{}, tools...)
	rig.srv.pageSize = 3
	rig.handshake(t)
	rig.send(t, lineCall("1", "a7"))
	if got := rig.next(t); !strings.Contains(got, "ran a7") {
		t.Fatalf("a name on the last page: %s", got)
	}
	rig.send(t, lineCall("2", "zz"))
	if got := rig.next(t); !strings.Contains(got, `"availableTools":["a1","a2","a3","a4","a5","a6","a7"]`) {
		t.Fatalf("got %s", got)
	}
	if n := rig.g.Fetches(); n != 6 {
		t.Errorf("%d requests, want 3 pages twice", n)
	}

	rig2 := newStdioRig(t, StdioOptions{MaxPages: 2}, tools...)
	rig2.srv.pageSize = 3
	rig2.handshake(t)
	rig2.send(t, lineCall("1", "zz"))
	if got := rig2.next(t); !strings.Contains(got, `"isError":true`) {
		t.Fatalf("a list longer than MaxPages is cannot tell: %s", got)
	}
}

func TestStdioServerNeverAnswersList(t *testing.T) {
	rig := newStdioRig(t, StdioOptions{MaxWait: 100 * time.Millisecond}, "echo")
	rig.srv.silentList = true
	rig.handshake(t)
	start := time.Now()
	rig.send(t, lineCall("1", "nope"), lineCall("2", "echo"))
	if got := rig.next(t); !strings.Contains(got, `"id":1,`) || !strings.Contains(got, `"isError":true`) {
		t.Fatalf("the held call must pass through after MaxWait; got %s", got)
	}
	if got := rig.next(t); !strings.Contains(got, "ran echo") {
		t.Fatalf("the next call, in order: %s", got)
	}
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Errorf("released after %v, before MaxWait", d)
	}
	// The late answer to the guard's own request never reaches the client.
	rig.g.Writer().Write([]byte(`{"jsonrpc":"2.0","id":"` + string(rig.g.prefix) + `1","result":{"tools":[]}}` + "\n"))
	rig.srv.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/message", "params": map[string]any{"level": "info", "data": "x"}})
	if got := rig.next(t); !strings.Contains(got, "notifications/message") {
		t.Fatalf("the late list answer reached the client: %s", got)
	}
}

func TestStdioModernMeta(t *testing.T) {
	rig := newStdioRig(t, StdioOptions{}, "echo")
	// No initialize in 2026-07-28: each call carries its caller.
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"progressToken":"p1","x":1}`
	rig.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope",`+meta+`}}`+"\n")
	if got := rig.next(t); !strings.Contains(got, `"id":1,"error":{"code":-32602`) {
		t.Fatalf("got %s", got)
	}
	lists := rig.srv.lists
	if len(lists) != 1 {
		t.Fatalf("lists %q", lists)
	}
	var req struct {
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if err := json.Unmarshal([]byte(lists[0]), &req); err != nil {
		t.Fatal(err)
	}
	if _, ok := req.Params.Meta["progressToken"]; ok {
		t.Errorf("the progressToken was copied: %s", lists[0])
	}
	if string(req.Params.Meta["io.modelcontextprotocol/clientCapabilities"]) != `{"elicitation":{}}` || string(req.Params.Meta["x"]) != "1" {
		t.Errorf("the caller's _meta was not copied: %s", lists[0])
	}
	// A version the guard cannot place is the server's.
	for _, v := range []string{`"2026-07-28x"`, `"2025-11-25"`, `5`} {
		rig.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope","_meta":{"io.modelcontextprotocol/protocolVersion":`+v+`}}}`+"\n")
		if got := rig.next(t); !strings.Contains(got, `"isError":true`) {
			t.Fatalf("version %s: got %s", v, got)
		}
	}
}

// TestStdioForwardsUntouched sends lines the guard must never answer and
// checks the server reads each byte for byte and in order.
func TestStdioForwardsUntouched(t *testing.T) {
	rig := newStdioRig(t, StdioOptions{MaxLineBytes: 1 << 16}, "echo")
	rig.handshake(t)
	huge := `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"nope","arguments":{"t":"` + strings.Repeat("x", 10<<20) + `"}}}` + "\n"
	lines := []string{
		"not json at all\n",
		"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"a\xffb\"}}\n",
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nope","name":"echo"}}` + "\n",
		`[{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope"}}]` + "\n",
		`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"nope"}}` + "\n",
		`{"jsonrpc":"2.0","id":"r1","result":{"action":"accept"}}` + "\n",
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}` + "\n",
		"\n",
		"   \r\n",
		huge,
		lineCall("8", "echo"),
	}
	start := time.Now()
	rig.send(t, lines...)
	for {
		got := rig.next(t)
		if strings.Contains(got, `"id":8,`) {
			break
		}
	}
	t.Logf("%v", time.Since(start))
	// After a line that is not one JSON value the guard answers nothing
	// more: it does not even ask.
	if rig.g.Fetches() != 0 {
		t.Errorf("%d tools/list requests after a non-JSON line", rig.g.Fetches())
	}
	var got []string
	for _, l := range rig.srv.received()[2:] { // after initialize and notifications/initialized
		if !strings.Contains(l, `"id":"toolguard-`) {
			got = append(got, l)
		}
	}
	if len(got) != len(lines) {
		t.Fatalf("the server read %d lines, want %d", len(got), len(lines))
	}
	for i := range lines {
		if got[i] != lines[i] {
			t.Errorf("line %d: the server read %.80q, the client sent %.80q", i, got[i], lines[i])
		}
	}
}

// TestStdioUnfinishedLastLine: a last line without its newline is read by
// no server as a message, so the guard hands it on and never answers it.
func TestStdioUnfinishedLastLine(t *testing.T) {
	rig := newStdioRig(t, StdioOptions{}, "echo")
	rig.handshake(t)
	last := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}`
	rig.send(t, last)
	rig.in.Close()
	<-rig.srv.done
	got := rig.srv.received()
	if got[len(got)-1] != last {
		t.Errorf("the server read %q last", got[len(got)-1])
	}
	if rig.g.Rejections() != 0 || rig.g.Fetches() != 0 {
		t.Errorf("the guard acted on an unfinished line")
	}
}

// TestStdioNoInterleaving writes long server lines in small pieces while
// the guard answers unknown calls: every line the client reads is whole.
func TestStdioNoInterleaving(t *testing.T) {
	inR, inW := io.Pipe()
	var out safeBuffer
	g, err := NewStdio(inR, &out, StdioOptions{MaxListBytes: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	g.opts.Tools = StaticTools("echo")
	srv := &fakeStdioServer{tools: []string{"echo"}, done: make(chan struct{})}
	go srv.serve(g.Reader(), g.Writer())
	go func() {
		inW.Write([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}` + "\n"))
		time.Sleep(50 * time.Millisecond)
		inW.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
		for i := range 200 {
			inW.Write([]byte(lineCall(fmt.Sprint(1000+i), "nope")))
		}
	}()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				// a short line, and a long one (over MaxListBytes) in pieces
				line := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"%d-%d-%s"}}`+"\n", w, i, strings.Repeat("y", (i%3)*700))
				srv.wmu.Lock()
				for len(line) > 0 {
					n := min(len(line), 97)
					g.Writer().Write([]byte(line[:n]))
					line = line[n:]
				}
				srv.wmu.Unlock()
			}
		}()
	}
	wg.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for g.Rejections() < 200 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	inW.Close()
	<-srv.done
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	var notes, rejections int
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Fatalf("a line the client read is not whole JSON: %.100q", l)
		}
		if strings.Contains(l, `"error":{"code":-32602`) {
			rejections++
		} else if strings.Contains(l, "notifications/message") {
			notes++
		}
	}
	if notes != 200 || rejections != 200 {
		t.Errorf("%d notifications and %d rejections, want 200 of each", notes, rejections)
	}
}

type safeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestStdioCloseReleasesHold: when the server's output closes while a call
// waits for the list, the call is handed on and nothing is left waiting.
func TestStdioCloseReleasesHold(t *testing.T) {
	before := runtime.NumGoroutine()
	inR, inW := io.Pipe()
	g, err := NewStdio(inR, io.Discard, StdioOptions{MaxWait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	g.mu.Lock()
	g.hs = hsReady
	g.mu.Unlock()
	go inW.Write([]byte(lineCall("1", "nope")))
	br := bufio.NewReader(g.Reader())
	req, err := br.ReadString('\n')
	if err != nil || !strings.Contains(req, `"method":"tools/list"`) {
		t.Fatalf("read %q, %v", req, err)
	}
	done := make(chan string)
	go func() {
		l, _ := br.ReadString('\n')
		done <- l
	}()
	time.Sleep(20 * time.Millisecond)
	g.Writer().Close()
	select {
	case l := <-done:
		if l != lineCall("1", "nope") {
			t.Errorf("released %q", l)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the held call was not released when the server's output closed")
	}
	inW.Close()
	if _, err := br.ReadString('\n'); err != io.EOF {
		t.Errorf("after the client closed: %v", err)
	}
	waitGoroutines(t, before)
}

func waitGoroutines(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines left behind", n-before)
	}
}

func TestNewStdioOptions(t *testing.T) {
	for _, o := range []StdioOptions{{MaxLineBytes: -1}, {MaxWait: -1}, {ToolListLimit: -1}, {MaxPages: -1}, {MaxListBytes: -1}} {
		if _, err := NewStdio(strings.NewReader(""), io.Discard, o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
	if _, err := NewStdio(nil, io.Discard, StdioOptions{}); err == nil {
		t.Error("nil reader: no error")
	}
}

// TestStdioStopsAfterBrokenLine: go-sdk decodes the stream, not lines: after
// a line that is not one whole JSON value it has closed the session or
// reads the next line as part of a value. The guard then answers nothing.
func TestStdioStopsAfterBrokenLine(t *testing.T) {
	for _, broken := range []string{
		"not json\n",
		`{"jsonrpc":"2.0","id":1,"method":"ping"} ` + "\n", // a space after the value
		`{"jsonrpc":"2.0","id":1,"method":"ping"}x` + "\n",
		`{"jsonrpc":"2.0","id":1,` + "\n", // the value goes on in the next line
		`{"a":1}{"b":2}` + "\n",
		`[{"jsonrpc":"2.0","id":9,"method":"ping"}]` + "\n", // go-sdk refuses batches after 2025-06-18
		"42\n",
		`{"a":1}` + "\n",
		`{"jsonrpc":"1.0","id":1,"method":"ping"}` + "\n",
		`{"jsonrpc":"2.0","id":null,"method":"ping"}` + "\n",
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}` + "\n",
		`{"jsonrpc":"2.0","id":"r","result":{},"extra":1}` + "\n",
		`{"jsonrpc":"2.0","id":"r","id":"s","result":{}}` + "\n",
		`{"jsonrpc":"2.0","id":"r"}` + "\n",
	} {
		rig := newStdioRig(t, StdioOptions{}, "echo")
		rig.handshake(t)
		rig.send(t, lineCall("1", "nope"))
		if got := rig.next(t); !strings.Contains(got, `"id":1,"error":{"code":-32602`) {
			t.Fatalf("before: %s", got)
		}
		rig.send(t, broken, lineCall("2", "nope"), lineCall("3", "echo"))
		for {
			got := rig.next(t)
			if strings.Contains(got, `"id":2,`) {
				if !strings.Contains(got, `"isError":true`) {
					t.Errorf("after %q the guard answered %s", broken, got)
				}
				break
			}
		}
		if rig.g.Rejections() != 1 {
			t.Errorf("after %q: %d rejections", broken, rig.g.Rejections())
		}
	}
	// Blank lines, other requests and notifications, and the client's
	// answers to server requests keep the stream readable.
	rig := newStdioRig(t, StdioOptions{}, "echo")
	rig.handshake(t)
	rig.send(t, "\n", "  \r\n", `{"jsonrpc":"2.0","id":9,"method":"ping"}`+"\n",
		`{"jsonrpc":"2.0","id":"r","result":{"action":"accept","content":{"name":"A\u00e9"}}}`+"\r\n",
		`{"jsonrpc":"2.0","id":7,"error":{"code":-1,"message":"no"}}`+"\n",
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`+"\n", lineCall("4", "nope"))
	for {
		if got := rig.next(t); strings.Contains(got, `"id":4,`) {
			if !strings.Contains(got, `"error":{"code":-32602`) {
				t.Errorf("got %s", got)
			}
			break
		}
	}
	// A call with a space after it is the server's, and so is everything after.
	rig.send(t, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope"}} `+"\n", lineCall("6", "nope"))
	for _, id := range []string{`"id":5,`, `"id":6,`} {
		if got := rig.next(t); !strings.Contains(got, id) || !strings.Contains(got, `"isError":true`) {
			t.Errorf("got %s", got)
		}
	}
}

// waitFor polls cond for up to 5s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestStdioToolsHint: a ToolSet over stdio lets known names through
// without asking, and never rejects on its own: the stream confirms.
func TestStdioToolsHint(t *testing.T) {
	rig := newStdioRig(t, StdioOptions{Tools: StaticTools("echo", "gone")}, "echo", "fresh")
	rig.handshake(t)
	rig.send(t, lineCall("1", "echo"))
	if got := rig.next(t); !strings.Contains(got, "ran echo") || rig.g.Fetches() != 0 {
		t.Fatalf("a name the tool set has: %s, %d lists asked", got, rig.g.Fetches())
	}
	// The tool set does not have it, the server does: the stream decides.
	rig.send(t, lineCall("2", "fresh"))
	if got := rig.next(t); !strings.Contains(got, "ran fresh") || rig.g.Fetches() != 1 {
		t.Fatalf("a name only the server has: %s, %d lists asked", got, rig.g.Fetches())
	}
	// The tool set has it, the server does not: passed through at once.
	rig.send(t, lineCall("3", "gone"))
	if got := rig.next(t); !strings.Contains(got, `"isError":true`) {
		t.Fatalf("got %s", got)
	}
	rig.send(t, lineCall("4", "nope"))
	if got := rig.next(t); !strings.Contains(got, `"availableTools":["echo","fresh"]`) {
		t.Fatalf("got %s", got)
	}
}

// TestStdioOptionErrors: a negative option is an error naming its field.
func TestStdioOptionErrors(t *testing.T) {
	for _, tc := range []struct {
		opts  StdioOptions
		field string
	}{
		{StdioOptions{MaxLineBytes: -1}, "StdioOptions.MaxLineBytes"},
		{StdioOptions{MaxListBytes: -1}, "StdioOptions.MaxListBytes"},
		{StdioOptions{MaxWait: -1}, "StdioOptions.MaxWait"},
		{StdioOptions{MaxPages: -1}, "StdioOptions.MaxPages"},
		{StdioOptions{ToolListLimit: -1}, "StdioOptions.ToolListLimit"},
	} {
		if _, err := NewStdio(strings.NewReader(""), io.Discard, tc.opts); err == nil || !strings.Contains(err.Error(), tc.field+" must not be negative") {
			t.Errorf("%s: %v", tc.field, err)
		}
	}
}
