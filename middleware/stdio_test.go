package toolguard

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolguard/toolguard/internal/fixture"
)

// lineServer is a line-delimited JSON-RPC server for the unit tests, as the
// TypeScript SDK v1 answers: initialize, tools/list (in pages), tools/call
// (an unknown name gets the SDK's isError "MCP error -32602: Tool X not
// found"; "needs_elicitation" gets an actionable isError). It records
// every line it reads and ignores everything else.
type lineServer struct {
	mu         sync.Mutex
	tools      []string
	pageSize   int
	silentList bool     // never answer tools/list
	decoder    bool     // read a stream of JSON values, as go-sdk does, not lines
	got        []string // every line read, whole
	lists      []string // the tools/list requests read
	listRead   chan struct{}
	w          io.Writer
	wmu        sync.Mutex
	done       chan struct{}
}

func (f *lineServer) setTools(names ...string) {
	f.mu.Lock()
	f.tools = names
	f.mu.Unlock()
}

func (f *lineServer) sendLine(line string) {
	f.wmu.Lock()
	io.WriteString(f.w, line+"\n")
	f.wmu.Unlock()
}

func (f *lineServer) send(v any) {
	b, _ := json.Marshal(v)
	f.sendLine(string(b))
}

func (f *lineServer) serve(r io.Reader, w io.Writer) {
	defer close(f.done)
	f.w = w
	if f.decoder {
		dec := json.NewDecoder(r)
		for {
			var v json.RawMessage
			if dec.Decode(&v) != nil {
				return // go-sdk ends the session at a syntax error
			}
			f.mu.Lock()
			f.got = append(f.got, string(v))
			f.mu.Unlock()
			f.handle(v)
		}
	}
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			f.mu.Lock()
			f.got = append(f.got, string(line))
			f.mu.Unlock()
			f.handle(line)
		}
		if err != nil {
			return
		}
	}
}

func (f *lineServer) handle(line []byte) {
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
	id := string(msg.ID)
	switch msg.Method {
	case "initialize":
		f.sendLine(`{"jsonrpc":"2.0","id":` + id + `,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"fake","version":"1"}}}`)
	case "tools/list":
		f.mu.Lock()
		f.lists = append(f.lists, string(line))
		if f.listRead != nil {
			f.listRead <- struct{}{}
		}
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
		switch {
		case msg.Params.Name == "needs_elicitation":
			f.sendLine(`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"Tool \"needs_elicitation\" requires client support for form elicitation."}],"isError":true}}`)
		case slices.Contains(tools, msg.Params.Name):
			f.sendLine(`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"ran ` + msg.Params.Name + `"}]}}`)
		default:
			name, _ := json.Marshal("MCP error -32602: Tool " + msg.Params.Name + " not found")
			f.sendLine(`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":` + string(name) + `}],"isError":true}}`)
		}
	}
}

// received returns every line the server read.
func (f *lineServer) received() []string { return cloneLocked(&f.mu, &f.got) }

// listRequests returns every tools/list request the server read.
func (f *lineServer) listRequests() []string { return cloneLocked(&f.mu, &f.lists) }

// cloneLocked returns a copy of *s, taken while holding mu.
func cloneLocked[T any](mu *sync.Mutex, s *[]T) []T {
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(*s)
}

// stdioRig is a client, the guard and a line server, connected by pipes.
type stdioRig struct {
	g      *Stdio
	srv    *lineServer
	in     *io.PipeWriter // the client writes here
	out    chan string    // the lines the client reads
	outEnd chan struct{}

	mu        sync.Mutex
	rejected  []*Rejection
	untracked []string
}

func newStdioRig(t *testing.T, opts StdioOptions, tools ...string) *stdioRig {
	return newStdioRigWith(t, opts, &lineServer{tools: tools}, tools...)
}

func newStdioRigWith(t *testing.T, opts StdioOptions, srv *lineServer, tools ...string) *stdioRig {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	rig := &stdioRig{srv: srv, in: inW, out: make(chan string, 1000), outEnd: make(chan struct{})}
	srv.tools, srv.done = tools, make(chan struct{})
	onReject, onUntracked := opts.OnReject, opts.OnUntracked
	opts.OnReject = func(r *Rejection) {
		rig.mu.Lock()
		rig.rejected = append(rig.rejected, r)
		rig.mu.Unlock()
		if onReject != nil {
			onReject(r)
		}
	}
	opts.OnUntracked = func(reason string) {
		rig.mu.Lock()
		rig.untracked = append(rig.untracked, reason)
		rig.mu.Unlock()
		if onUntracked != nil {
			onUntracked(reason)
		}
	}
	g, err := NewStdio(inR, outW, opts)
	if err != nil {
		t.Fatal(err)
	}
	rig.g = g
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
	case <-time.After(10 * time.Second):
		t.Fatal("no line from the guard within 10s")
		return ""
	}
}

// unknownWithoutList sends a call (id 1) of the unknown tool name, and
// checks that the answer is -32602 with neither list nor suggestions.
func (rig *stdioRig) unknownWithoutList(t *testing.T, name string) {
	t.Helper()
	rig.send(t, lineCall("1", name))
	if got, want := rig.next(t), `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: `+name+`"}}`+"\n"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func (rig *stdioRig) rejections() []*Rejection { return cloneLocked(&rig.mu, &rig.rejected) }

func (rig *stdioRig) untrackedReasons() []string { return cloneLocked(&rig.mu, &rig.untracked) }

const initializeLine = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n"

func (rig *stdioRig) handshake(t *testing.T) {
	t.Helper()
	rig.send(t, initializeLine)
	if l := rig.next(t); !strings.Contains(l, `"serverInfo"`) {
		t.Fatalf("initialize answered %q", l)
	}
	rig.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
}

func lineCall(id, name string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `","arguments":{}}}` + "\n"
}

// clientLines returns the lines the server read that the client sent: all
// but the guard's own requests.
func (rig *stdioRig) clientLines() []string {
	var out []string
	for _, l := range rig.srv.received() {
		if !strings.Contains(l, `"id":"`+string(rig.g.prefix)) {
			out = append(out, l)
		}
	}
	return out
}

func TestStdioTranslatesTheServersNotFoundAnswer(t *testing.T) {
	rig := newStdioRig(t, StdioOptions{}, "get_weather", "search_docs")
	rig.handshake(t)

	rig.send(t, lineCall(`"a"`, "get_wether"))
	want := `{"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"Unknown tool: get_wether","data":{"availableTools":["get_weather","search_docs"],"suggestions":["get_weather"]}}}` + "\n"
	if got := rig.next(t); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	// The call reached the server, byte for byte: the server decided.
	if got := rig.clientLines(); got[len(got)-1] != lineCall(`"a"`, "get_wether") {
		t.Errorf("the server read %q last", got[len(got)-1])
	}
	rig.send(t, lineCall("2", "get_weather"))
	if got := rig.next(t); got != `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"ran get_weather"}]}}`+"\n" {
		t.Fatalf("known call answered %s", got)
	}
	rej := rig.rejections()
	if len(rej) != 1 || rej[0].Name != "get_wether" || !rej[0].Translated || rej[0].ListErr != nil {
		t.Errorf("OnReject told %+v", rej)
	}
	if n := rig.g.Fetches(); n != 1 {
		t.Errorf("%d tools/list requests, want 1", n)
	}
	for _, l := range rig.srv.listRequests() {
		if !strings.Contains(l, `"id":"toolguard-`) || strings.Contains(l, "_meta") {
			t.Errorf("own request %s", l)
		}
	}
}

// TestStdioNeverAnswersBeforeTheServer: a call is handed on before the
// guard knows anything of it, and the server's answers decide: a name the
// guard has never seen listed runs, and a call before the handshake is the
// server's too.
func TestStdioNeverAnswersBeforeTheServer(t *testing.T) {
	rig := newStdioRig(t, StdioOptions{}, "echo")
	rig.send(t, lineCall("1", "echo"))
	if got := rig.next(t); !strings.Contains(got, "ran echo") {
		t.Fatalf("got %s", got)
	}
	rig.srv.setTools("echo", "fresh")
	rig.send(t, lineCall("2", "fresh"))
	if got := rig.next(t); !strings.Contains(got, "ran fresh") {
		t.Fatalf("got %s", got)
	}
	if rig.g.Fetches() != 0 || rig.g.Rejections() != 0 {
		t.Errorf("%d lists asked, %d answers, for calls the server ran", rig.g.Fetches(), rig.g.Rejections())
	}
}

// TestStdioPassesEveryOtherAnswerByteForByte: an actionable isError, an
// error about something else, a not-found answer naming another tool or
// another id, a result: each reaches the client as the server wrote it.
func TestStdioPassesEveryOtherAnswerByteForByte(t *testing.T) {
	rig := newStdioRig(t, StdioOptions{}, "echo")
	rig.handshake(t)
	rig.send(t, lineCall("1", "needs_elicitation"))
	if got := rig.next(t); got != `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Tool \"needs_elicitation\" requires client support for form elicitation."}],"isError":true}}`+"\n" {
		t.Errorf("actionable isError: %s", got)
	}
	// Server lines that look like not-found answers, but not to a call the
	// guard saw with that id and name.
	rig.send(t, lineCall("7", "echo"))
	if got := rig.next(t); !strings.Contains(got, "ran echo") {
		t.Fatal(got)
	}
	for _, l := range []string{
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Unknown tool: other"}}`,                                 // another name
		`{"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"Unknown tool: echo"}}`,                                  // an id never sent
		`{"jsonrpc":"2.0","id":"7","error":{"code":-32602,"message":"Unknown tool: echo"}}`,                                // the string "7"
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Invalid arguments for tool echo"}}`,                     // another error
		`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"Tool echo was not found"}],"isError":true}}`,  // not an SDK's isError shape
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"tool not found"}}`,                                      // names no tool (the Rust SDK's)
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","data":"Unknown tool: echo","id":7}}`, // a notification
	} {
		rig.send(t, lineCall("7", "echo"))
		rig.next(t)
		rig.srv.sendLine(l)
		if got := rig.next(t); got != l+"\n" {
			t.Errorf("got  %s\nwant %s", got, l)
		}
	}
	if n := rig.g.Rejections(); n != 0 {
		t.Errorf("%d answers replaced", n)
	}
}

// TestStdioKnownCallDoesNotWaitForAList: the server never answers the
// guard's tools/list. While the list of an unknown call is still
// unanswered, a known call sent after it gets its answer, and the
// server's other lines reach the client; the unknown call gets -32602
// without data.availableTools once ListTimeout has passed, and OnReject
// says why.
func TestStdioKnownCallDoesNotWaitForAList(t *testing.T) {
	srv := &lineServer{silentList: true, listRead: make(chan struct{}, 1)}
	rig := newStdioRigWith(t, StdioOptions{ListTimeout: time.Hour}, srv, "echo")
	rig.handshake(t)
	rig.send(t, lineCall("1", "nope"))
	<-srv.listRead // the server has read the guard's request, and will never answer it
	rig.send(t, lineCall("2", "echo"))
	if got := rig.next(t); !strings.Contains(got, `"id":2,`) || !strings.Contains(got, "ran echo") {
		t.Fatalf("the known call, while the list is unanswered: %s", got)
	}
	srv.sendLine(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`)
	if got := rig.next(t); !strings.Contains(got, "notifications/message") {
		t.Fatalf("a notification, while the list is unanswered: %s", got)
	}
	if len(rig.rejections()) != 0 {
		t.Fatal("the unknown call was answered before its list")
	}

	// The bound: a guard with a short ListTimeout answers without data.
	srv2 := &lineServer{silentList: true}
	rig2 := newStdioRigWith(t, StdioOptions{ListTimeout: 50 * time.Millisecond}, srv2, "echo")
	rig2.handshake(t)
	rig2.send(t, lineCall("1", "nope"))
	want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: nope"}}` + "\n"
	if got := rig2.next(t); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	rej := rig2.rejections()
	if len(rej) != 1 || rej[0].ListErr == nil || !strings.Contains(rej[0].ListErr.Error(), "ListTimeout") {
		t.Errorf("OnReject told %+v", rej)
	}
	// The late answer to the guard's request never reaches the client.
	srv2.sendLine(`{"jsonrpc":"2.0","id":"` + string(rig2.g.prefix) + `1","result":{"tools":[]}}`)
	srv2.sendLine(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"y"}}`)
	if got := rig2.next(t); !strings.Contains(got, "notifications/message") {
		t.Fatalf("the late list answer reached the client: %s", got)
	}
}

// TestStdioUnreadableLinesAreOnlyUntracked: a line that is not JSON, one
// outside the strict subset and one longer than MaxLineBytes reach the
// server byte for byte and are not tracked; the calls after them are.
func TestStdioUnreadableLinesAreOnlyUntracked(t *testing.T) {
	rig := newStdioRig(t, StdioOptions{MaxLineBytes: 1 << 10}, "echo")
	rig.handshake(t)
	huge := `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"nope","arguments":{"t":"` + strings.Repeat("x", 200<<10) + `"}}}` + "\n"
	lines := []string{
		"not json at all\n",
		"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"a\xffb\"}}\n",
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nope","NAME":"echo"}}` + "\n",
		`[{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope"}}]` + "\n",
		`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"nope"}}` + "\n",
		`{"jsonrpc":"2.0","id":"r1","result":{"action":"accept"}}` + "\n",
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}` + "\n",
		"\n",
		"   \r\n",
		huge,
		lineCall("8", "nope"),
	}
	rig.send(t, lines...)
	byID := map[string]string{}
	for byID["8"] == "" {
		got := rig.next(t)
		var m struct{ ID json.RawMessage }
		json.Unmarshal([]byte(got), &m)
		byID[string(m.ID)] = got
	}
	// The untracked calls get the server's own answers (to a decoder that
	// ignores case, the call with NAME calls echo); the call after them is
	// translated.
	for id, want := range map[string]string{"5": `"isError":true`, "6": "ran echo", "99": `"isError":true`} {
		if !strings.Contains(byID[id], want) {
			t.Errorf("untracked call %s: %s", id, byID[id])
		}
	}
	if !strings.Contains(byID["8"], `"error":{"code":-32602,"message":"Unknown tool: nope","data":{"availableTools":["echo"]`) {
		t.Errorf("the call after them: %s", byID["8"])
	}
	got := rig.clientLines()[2:] // after the handshake
	if !slices.Equal(got, lines) {
		t.Errorf("the server read %d lines, the client sent %d, or not byte for byte", len(got), len(lines))
	}
	reasons := strings.Join(rig.untrackedReasons(), "\n")
	for _, want := range []string{"longer than MaxLineBytes", "outside the strict subset"} {
		if !strings.Contains(reasons, want) {
			t.Errorf("OnUntracked was not told %q: %s", want, reasons)
		}
	}
}

// TestStdioListFollowsCursor: a list in pages is asked page by page; one
// longer than MaxPages is not used.
func TestStdioListFollowsCursor(t *testing.T) {
	tools := []string{"a1", "a2", "a3", "a4", "a5", "a6", "a7"}
	srv := &lineServer{pageSize: 3}
	rig := newStdioRigWith(t, StdioOptions{}, srv, tools...)
	rig.handshake(t)
	rig.send(t, lineCall("2", "zz"))
	if got := rig.next(t); !strings.Contains(got, `"availableTools":["a1","a2","a3","a4","a5","a6","a7"]`) {
		t.Fatalf("got %s", got)
	}
	if n := rig.g.Fetches(); n != 3 {
		t.Errorf("%d requests, want 3 pages", n)
	}

	srv2 := &lineServer{pageSize: 3}
	rig2 := newStdioRigWith(t, StdioOptions{MaxPages: 2}, srv2, tools...)
	rig2.handshake(t)
	rig2.unknownWithoutList(t, "zz")
	if rej := rig2.rejections(); len(rej) != 1 || rej[0].ListErr == nil || !strings.Contains(rej[0].ListErr.Error(), "MaxPages") {
		t.Errorf("OnReject told %+v", rej)
	}
}

// TestStdioListKeptUntilListChangedOrInitialize: the list is asked once
// and kept for data; notifications/tools/list_changed and a new initialize
// drop it.
func TestStdioListKeptUntilListChangedOrInitialize(t *testing.T) {
	rig := newStdioRig(t, StdioOptions{}, "echo")
	rig.handshake(t)
	rig.send(t, lineCall("1", "added"))
	if got := rig.next(t); !strings.Contains(got, `"availableTools":["echo"]`) {
		t.Fatalf("got %s", got)
	}
	rig.send(t, lineCall("2", "other"))
	if got := rig.next(t); !strings.Contains(got, `"availableTools":["echo"]`) || rig.g.Fetches() != 1 {
		t.Fatalf("got %s after %d lists", got, rig.g.Fetches())
	}
	rig.srv.setTools("echo", "added")
	rig.srv.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
	if got := rig.next(t); !strings.Contains(got, "list_changed") {
		t.Fatalf("the announcement must reach the client; got %s", got)
	}
	// The kept list never decides: the added tool runs at once.
	rig.send(t, lineCall("3", "added"))
	if got := rig.next(t); !strings.Contains(got, "ran added") {
		t.Fatalf("a tool added at runtime: %s", got)
	}
	rig.send(t, lineCall("4", "nope"))
	if got := rig.next(t); !strings.Contains(got, `"availableTools":["added","echo"]`) || rig.g.Fetches() != 2 {
		t.Fatalf("after list_changed: %s, %d lists", got, rig.g.Fetches())
	}
	rig.srv.setTools("echo")
	rig.send(t, initializeLine)
	rig.next(t)
	rig.send(t, lineCall("5", "nope"))
	if got := rig.next(t); !strings.Contains(got, `"availableTools":["echo"]`) || rig.g.Fetches() != 3 {
		t.Fatalf("after a new initialize: %s, %d lists", got, rig.g.Fetches())
	}
}

// TestStdioModernListCarriesTheCallsMeta: a 2026-07-28 call's list is
// asked with the call's own _meta, less its progressToken, and kept per
// _meta.
func TestStdioModernListCarriesTheCallsMeta(t *testing.T) {
	rig := newStdioRig(t, StdioOptions{}, "echo")
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"progressToken":"p1","x":1}`
	rig.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope",`+meta+`}}`+"\n")
	if got := rig.next(t); !strings.Contains(got, `"id":1,"error":{"code":-32602,"message":"Unknown tool: nope","data":{"availableTools":["echo"]`) {
		t.Fatalf("got %s", got)
	}
	lists := rig.srv.listRequests()
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
	// Another caller (another _meta) gets its own list; the same one, with
	// another progressToken, the kept one.
	other := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	rig.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope",`+other+`}}`+"\n")
	rig.next(t)
	rig.send(t, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope",`+strings.Replace(meta, `"p1"`, `"p2"`, 1)+`}}`+"\n")
	rig.next(t)
	if n := rig.g.Fetches(); n != 2 {
		t.Errorf("%d lists, want 2 (one per caller)", n)
	}
}

// TestStdioAsksNothingInsideAnUnfinishedValue: a server that decodes the
// stream (as go-sdk does) reads the lines after one that leaves a value
// unfinished as the rest of it. The guard's request never goes inside it:
// it reaches the server before that line or after the value ends.
func TestStdioAsksNothingInsideAnUnfinishedValue(t *testing.T) {
	srv := &lineServer{decoder: true}
	rig := newStdioRigWith(t, StdioOptions{ListTimeout: time.Hour}, srv, "echo")
	rig.handshake(t)
	open := `{"jsonrpc":"2.0","id":50,"method":"ping","params":{"a":["x",` + "\n"
	rig.send(t, lineCall("1", "nope")+open)
	waitFor(t, func() bool { return rig.g.Fetches() == 1 })
	rig.send(t, `"y"]}}`+"\n")
	got := rig.next(t)
	if !strings.Contains(got, `"id":1,"error":{"code":-32602,"message":"Unknown tool: nope","data":{"availableTools":["echo"]`) {
		t.Fatalf("got %s", got)
	}
	waitFor(t, func() bool { // the server decoded the client's value whole
		return slices.ContainsFunc(srv.received(), func(v string) bool { return strings.Contains(v, `"id":50`) })
	})
	for _, v := range srv.received() {
		if strings.Contains(v, "ping") && strings.Contains(v, "tools/list") {
			t.Errorf("the guard's request went inside the client's value: %s", v)
		}
	}
	if n := len(srv.listRequests()); n != 1 {
		t.Errorf("the server read %d lists", n)
	}
	if r := strings.Join(rig.untrackedReasons(), "\n"); !strings.Contains(r, "unfinished JSON value") {
		t.Errorf("OnUntracked told %q", r)
	}
}

// TestStdioOwnAnswersNeverReachTheClient: a list answer longer than
// MaxServerLineBytes is dropped (the answer goes out without data), and
// a server line that only mentions the guard's prefix passes.
func TestStdioOwnAnswersNeverReachTheClient(t *testing.T) {
	var tools []string
	for i := range 200 {
		tools = append(tools, fmt.Sprintf("tool_with_a_long_name_%03d", i))
	}
	rig := newStdioRig(t, StdioOptions{MaxServerLineBytes: 2 << 10}, tools...)
	rig.handshake(t)
	rig.unknownWithoutList(t, "nope")
	if rej := rig.rejections(); len(rej) != 1 || rej[0].ListErr == nil || !strings.Contains(rej[0].ListErr.Error(), "MaxServerLineBytes") {
		t.Errorf("OnReject told %+v", rej)
	}
	mention := `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"saw ` + string(rig.g.prefix) + `1"}}`
	rig.srv.sendLine(mention)
	if got := rig.next(t); got != mention+"\n" {
		t.Errorf("got %s", got)
	}
}

// TestStdioHideBothAsksNoList: with HideToolList and HideSuggestions the
// answer needs no list, and none is asked.
func TestStdioHideBothAsksNoList(t *testing.T) {
	rig := newStdioRig(t, StdioOptions{HideToolList: true, HideSuggestions: true}, "echo")
	rig.handshake(t)
	rig.unknownWithoutList(t, "ech")
	if rig.g.Fetches() != 0 {
		t.Errorf("%d lists asked", rig.g.Fetches())
	}
}

// TestStdioShowsAnEmptyList: a server without tools lists none; the
// answer says so (as over HTTP), and the list is kept as any other.
func TestStdioShowsAnEmptyList(t *testing.T) {
	rig := newStdioRig(t, StdioOptions{})
	rig.handshake(t)
	for _, id := range []string{"1", "2"} {
		rig.send(t, lineCall(id, "nope"))
		want := `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32602,"message":"Unknown tool: nope","data":{"availableTools":[]}}}` + "\n"
		if got := rig.next(t); got != want {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	}
	if n := rig.g.Fetches(); n != 1 {
		t.Errorf("%d tools/list requests for two calls, want 1", n)
	}
}

// inOnReject runs a guard over one client call for the unknown tool zzz,
// answered as the server's line is written (no list), and has the server
// answer not found from a goroutine. It returns once OnReject is running:
// OnReject waits for release, then runs then (if not nil); answered closes
// when the server's Write has returned.
func inOnReject(t *testing.T, out io.Writer, opts StdioOptions, then func(*Stdio)) (s *Stdio, release, answered chan struct{}) {
	t.Helper()
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"zzz"}}` + "\n"
	entered, release, answered := make(chan struct{}), make(chan struct{}), make(chan struct{})
	opts.HideToolList, opts.HideSuggestions = true, true
	opts.OnReject = func(*Rejection) {
		close(entered)
		<-release
		if then != nil {
			then(s)
		}
	}
	s, err := NewStdio(strings.NewReader(call), out, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(s.Reader()); err != nil { // the server reads the call
		t.Fatal(err)
	}
	go func() {
		s.Writer().Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown tool \"zzz\""}}` + "\n"))
		close(answered)
	}()
	<-entered
	return s, release, answered
}

// TestStdioOnRejectHoldsNoLock: OnReject is user code. While it runs, the
// guard's writer is free: it may write to the guard itself, and other
// writers' lines go on reaching the client.
func TestStdioOnRejectHoldsNoLock(t *testing.T) {
	notice := `{"jsonrpc":"2.0","method":"notifications/message","params":{}}` + "\n"
	var out fixture.SyncBuffer
	s, release, answered := inOnReject(t, &out, StdioOptions{}, func(s *Stdio) {
		s.Writer().Write([]byte(notice)) // writing to the guard from OnReject
	})
	other := make(chan struct{})
	go func() {
		s.Writer().Write([]byte(notice))
		close(other)
	}()
	select {
	case <-other:
	case <-time.After(5 * time.Second):
		t.Fatal("another writer's line waited for OnReject")
	}
	close(release)
	select {
	case <-answered:
	case <-time.After(5 * time.Second):
		t.Fatal("OnReject writing to the guard did not return")
	}
	want := notice + notice + `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: zzz"}}` + "\n"
	if got := out.String(); got != want {
		t.Errorf("the client read\n%s\nwant\n%s", got, want)
	}
}

// TestStdioLearnsTheServerReadsLines: after a client line that leaves the
// stream inside an unfinished JSON value the guard sends no request of its
// own, until the server answers not found to a call that came after that
// line: a server that reads every line as a message (as the TypeScript
// and Python SDKs do) gets the list asked at once, for the rest of the
// session.
func TestStdioLearnsTheServerReadsLines(t *testing.T) {
	rig := newStdioRig(t, StdioOptions{ListTimeout: time.Minute}, "echo")
	rig.handshake(t)
	for i, junk := range []string{"{\n", `{"jsonrpc":"2.0","id":5,"method":` + "\n", "[\n"} {
		id := strconv.Itoa(10 + i)
		rig.send(t, junk, lineCall(id, "ech"))
		want := `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32602,"message":"Unknown tool: ech","data":{"availableTools":["echo"],"suggestions":["echo"]}}}` + "\n"
		if got := rig.next(t); got != want {
			t.Fatalf("after %q: got %s, want %s", junk, got, want)
		}
	}
	if n := len(rig.untrackedReasons()); n != 1 {
		t.Errorf("OnUntracked told %d times: %q", n, rig.untrackedReasons())
	}
}

// decoderSession hands the client lines to a stream-decoding server (as
// go-sdk reads stdin) behind the guard: it returns the guard, the first
// value the server decoded, what the server has read so far, and the
// server's next value once decoded.
func decoderSession(t *testing.T, lines ...string) (s *Stdio, in *io.PipeWriter, seen *fixture.SyncBuffer, next <-chan json.RawMessage) {
	t.Helper()
	inR, inW := io.Pipe()
	t.Cleanup(func() { inW.Close() })
	s, err := NewStdio(inR, io.Discard, StdioOptions{ListTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for _, l := range lines {
			io.WriteString(inW, l)
		}
	}()
	seen = &fixture.SyncBuffer{}
	dec := json.NewDecoder(io.TeeReader(s.Reader(), seen))
	var first json.RawMessage
	if err := dec.Decode(&first); err != nil {
		t.Fatal(err)
	}
	ch := make(chan json.RawMessage, 1)
	go func() { // the server's reader goes on decoding, as go-sdk's does
		var v json.RawMessage
		dec.Decode(&v)
		ch <- v
	}()
	return s, inW, seen, ch
}

// TestStdioNoProofFromValuesTheGuardDidNotReadWhole: a stream-decoding
// server's late not-found answer to a value the guard did not read as one
// line (one that ended on a line of its own, having begun to read the next
// value; one that ended on the line that opens the next value; a call
// written over two lines, answered after an inside line of the same id
// and name) proves nothing, and the guard's request never goes inside the
// value the client has open.
func TestStdioNoProofFromValuesTheGuardDidNotReadWhole(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []string
		read  string // the server has read this far when it answers
		next  string // the server's next value holds this ("": a syntax error)
	}{
		{"a value ends, the next opens", []string{
			`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope"},"x":` + "\n",
			lineCall("7", "nope"), // recorded, inside the value
			"}\n",                 // the value ends: a tools/call, id 7, "nope"
			`{"jsonrpc":"2.0","id":8,"method":"ping","params":` + "\n",
		}, `"id":8`, `"id":8`},
		{"a value ends and the next opens on one line", []string{
			`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope"},"x":` + "\n",
			lineCall("7", "nope"),
			`} {"jsonrpc":"2.0","id":8,"method":"ping","params":` + "\n",
		}, `"id":8`, `"id":8`},
		{"a call over two lines, then an inside line of its id", []string{
			`{"jsonrpc":"2.0","id":7,` + "\n",
			`"method":"tools/call","params":{"name":"nope"}}` + "\n",
			`{"jsonrpc":"2.0","id":8,"method":"ping","params":` + "\n",
			lineCall("7", "nope"),
		}, `"arguments"`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, in, seen, next := decoderSession(t, tc.lines...)
			waitFor(t, func() bool { return strings.Contains(seen.String(), tc.read) })
			s.Writer().Write([]byte(`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"unknown tool \"nope\""}}` + "\n"))
			if s.readsLines.Load() {
				t.Error("an answer to a value the guard did not read whole was taken for an answer to a line")
			}
			io.WriteString(in, "{}}\n")
			select {
			case v := <-next:
				if strings.Contains(seen.String(), "tools/list") {
					t.Errorf("the guard's request went inside the client's value: %s", seen.String())
				}
				if !strings.Contains(string(v), tc.next) {
					t.Errorf("the server read %s", v)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the server read no second value")
			}
		})
	}
}

// TestStdioAnswerAfterOnRejectNeverLandsInsideALine: while OnReject runs,
// another writer begins a long line, and the guard's output is closed
// before that line ends: the answer is not written inside it.
func TestStdioAnswerAfterOnRejectNeverLandsInsideALine(t *testing.T) {
	var out fixture.SyncBuffer
	s, release, answered := inOnReject(t, &out, StdioOptions{MaxServerLineBytes: 100}, nil)
	long := `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + strings.Repeat("y", 200)
	s.Writer().Write([]byte(long)) // longer than MaxServerLineBytes: handed on as it comes
	close(release)
	time.Sleep(20 * time.Millisecond) // lets the answer wait for the line (either order must pass)
	s.Writer().Close()
	<-answered
	if got := out.String(); got != long {
		t.Errorf("the client read %q\nwant only the unfinished long line", got)
	}
}

// TestStdioUnfinishedLastLine: a last line without its newline is read by
// no server as a message; the guard hands it on.
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
}

// TestStdioWritesNeverInterleave writes long server lines in small pieces
// from several goroutines while the guard translates not-found answers:
// every line the client reads is whole.
func TestStdioWritesNeverInterleave(t *testing.T) {
	inR, inW := io.Pipe()
	var out fixture.SyncBuffer
	g, err := NewStdio(inR, &out, StdioOptions{MaxServerLineBytes: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	srv := &lineServer{tools: []string{"echo"}, done: make(chan struct{})}
	go srv.serve(g.Reader(), g.Writer())
	go func() {
		inW.Write([]byte(initializeLine))
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
				// a short line, and a long one (over MaxServerLineBytes) in pieces
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
	deadline := time.Now().Add(20 * time.Second)
	for g.Rejections() < 200 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	inW.Close()
	<-srv.done
	g.Writer().Close()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	var notes, answers int
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Fatalf("a line the client read is not whole JSON: %.100q", l)
		}
		if strings.Contains(l, `"error":{"code":-32602`) {
			answers++
		} else if strings.Contains(l, "notifications/message") {
			notes++
		}
	}
	if notes != 200 || answers != 200 {
		t.Errorf("%d notifications and %d answers, want 200 of each", notes, answers)
	}
}

// TestStdioCloseWritesWaitingAnswers: when the server's output ends while
// an answer waits for its list, the answer is written, without data,
// before out is closed, and the guard leaves no goroutine behind.
func TestStdioCloseWritesWaitingAnswers(t *testing.T) {
	before := runtime.NumGoroutine()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	g, err := NewStdio(inR, outW, StdioOptions{ListTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	go inW.Write([]byte(lineCall("1", "nope")))
	br := bufio.NewReader(g.Reader())
	if l, err := br.ReadString('\n'); err != nil || l != lineCall("1", "nope") {
		t.Fatalf("read %q, %v", l, err)
	}
	g.Writer().Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown tool \"nope\""}}` + "\n"))
	if l, err := br.ReadString('\n'); err != nil || !strings.Contains(l, `"method":"tools/list"`) {
		t.Fatalf("read %q, %v", l, err)
	}
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(outR)
		got <- b
	}()
	g.Writer().Close()
	if b := <-got; string(b) != `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: nope"}}`+"\n" {
		t.Errorf("the client read %q", b)
	}
	inW.Close()
	if _, err := br.ReadString('\n'); err != io.EOF {
		t.Errorf("after the client closed: %v", err)
	}
	waitGoroutines(t, before)
}

func waitGoroutines(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines left behind", n-before)
	}
}

// TestStdioOptionErrors: a negative option is an error naming its field.
func TestStdioOptionErrors(t *testing.T) {
	refusesNegative(t, func(o StdioOptions) error { _, err := NewStdio(strings.NewReader(""), io.Discard, o); return err }, StdioOptions{},
		"MaxLineBytes", "MaxServerLineBytes", "ListTimeout", "MaxPages", "ToolListLimit")
	if _, err := NewStdio(nil, io.Discard, StdioOptions{}); err == nil {
		t.Error("nil reader: no error")
	}
}

// TestStdioReaderErrorReachesTheServer: an input error other than EOF is
// the server's to see, after the lines before it.
func TestStdioReaderErrorReachesTheServer(t *testing.T) {
	boom := errors.New("boom")
	g, err := NewStdio(io.MultiReader(strings.NewReader("a\n"), errReader{boom}), io.Discard, StdioOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(g.Reader())
	if string(b) != "a\n" || err != boom {
		t.Errorf("read %q, %v", b, err)
	}
}

type errReader struct{ err error }

// waitFor polls cond for up to 10s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(time.Millisecond)
	}
}

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
