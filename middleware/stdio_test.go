package toolguard

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolguard/toolguard/internal/fixture"
)

// lineServer is a line-delimited JSON-RPC server for the unit tests, as the
// TypeScript SDK v1 answers (a mock: the real SDK servers run in interop/):
// initialize, tools/list (in pages), tools/call (an unknown name gets the
// SDK's isError "MCP error -32602: Tool X not found"; "needs_elicitation",
// when the caller may not use it, gets an actionable isError). It records
// every line it reads and every line it writes, and ignores everything
// else.
type lineServer struct {
	mu       sync.Mutex
	tools    []string
	capTools []string // listed and run only for a 2026-07-28 caller whose clientCapabilities declare elicitation
	pageSize int
	ttlMs    *int64 // stated on every page of tools/list when set
	chunk    int    // when set, every line is written in pieces of this many bytes
	decoder  bool   // read a stream of JSON values, as go-sdk does, not lines
	got      []string
	lists    []string // the tools/list requests read
	wrote    []string // every line written, whole
	w        io.Writer
	wmu      sync.Mutex
	done     chan struct{}
}

func (f *lineServer) setTools(names ...string) {
	f.mu.Lock()
	f.tools = names
	f.mu.Unlock()
}

// sendLine writes one line (a newline is added) to the client, whole or in
// pieces of f.chunk bytes.
func (f *lineServer) sendLine(line string) {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	line += "\n"
	f.wrote = append(f.wrote, line)
	for f.chunk > 0 && len(line) > f.chunk {
		io.WriteString(f.w, line[:f.chunk])
		line = line[f.chunk:]
	}
	io.WriteString(f.w, line)
}

func (f *lineServer) send(v any) {
	b, _ := json.Marshal(v)
	f.sendLine(string(b))
}

func (f *lineServer) serve(r io.Reader, w io.Writer) {
	defer close(f.done)
	f.wmu.Lock()
	f.w = w
	f.wmu.Unlock()
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
			Meta   struct {
				Caps map[string]json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
			} `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &msg) != nil || msg.ID == nil {
		return
	}
	f.mu.Lock()
	tools, pageSize, ttl := slices.Clone(f.tools), f.pageSize, f.ttlMs
	if _, ok := msg.Params.Meta.Caps["elicitation"]; ok {
		tools = append(tools, f.capTools...)
	}
	f.mu.Unlock()
	id := string(msg.ID)
	switch msg.Method {
	case "initialize":
		f.sendLine(`{"jsonrpc":"2.0","id":` + id + `,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"fake","version":"1"}}}`)
	case "tools/list":
		f.mu.Lock()
		f.lists = append(f.lists, string(line))
		f.mu.Unlock()
		start := 0
		if msg.Params.Cursor != "" {
			fmt.Sscan(msg.Params.Cursor, &start)
		}
		start = min(max(start, 0), len(tools))
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
		if ttl != nil {
			res["ttlMs"] = *ttl
		}
		f.send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": res})
	case "tools/call":
		switch {
		case slices.Contains(tools, msg.Params.Name):
			f.sendLine(`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"ran ` + msg.Params.Name + `"}]}}`)
		case msg.Params.Name == "needs_elicitation":
			f.sendLine(`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"Tool \"needs_elicitation\" requires client support for form elicitation."}],"isError":true}}`)
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

// written returns every line the server wrote.
func (f *lineServer) written() []string { return cloneLocked(&f.wmu, &f.wrote) }

// cloneLocked returns a copy of *s, taken while holding mu.
func cloneLocked[T any](mu *sync.Mutex, s *[]T) []T {
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(*s)
}

// fakeClock is the guard's clock in the tests: it moves only when told.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// stdioRig is a client, the guard and a line server, connected by pipes,
// with a tap on what the server reads. When the test ends it checks the
// guard's two rules on everything that passed: the server read exactly
// the client's bytes, and the client read every server line as written,
// except the not-found answers the guard replaced.
type stdioRig struct {
	g      *Stdio
	srv    *lineServer
	clock  *fakeClock
	in     *io.PipeWriter // the client writes here
	out    chan string    // the lines the client reads
	outEnd chan struct{}
	heard  fixture.SyncBuffer // every byte the server read
	lists  int                // tools/list requests the client sent, for their ids

	mu        sync.Mutex
	sent      strings.Builder // every byte the client sent
	read      []string        // every line the client read
	rejected  []*Rejection
	untracked []string
}

func newStdioRig(t *testing.T, opts StdioOptions, tools ...string) *stdioRig {
	return newStdioRigWith(t, opts, &lineServer{}, tools...)
}

func newStdioRigWith(t *testing.T, opts StdioOptions, srv *lineServer, tools ...string) *stdioRig {
	t.Helper()
	opts.BareMessage = true // the default message is pinned by TestMessage* and the goldens
	return newStdioRigAsIs(t, opts, srv, tools...)
}

// newStdioRigAsIs is newStdioRigWith with opts as given.
func newStdioRigAsIs(t *testing.T, opts StdioOptions, srv *lineServer, tools ...string) *stdioRig {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	rig := &stdioRig{srv: srv, in: inW, out: make(chan string, 1000), outEnd: make(chan struct{}),
		clock: &fakeClock{t: time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)}}
	srv.tools, srv.done = tools, make(chan struct{})
	onReject, onUntracked := opts.OnTranslate, opts.OnUntracked
	opts.OnTranslate = func(r *Rejection) {
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
	g.guard.seen.now = rig.clock.now
	rig.g = g
	go func() {
		rig.srv.serve(io.TeeReader(g.Reader(), &rig.heard), g.Writer())
		g.Writer().Close()
	}()
	go func() {
		defer close(rig.outEnd)
		br := bufio.NewReaderSize(outR, 1<<20)
		for {
			line, err := br.ReadString('\n')
			if line != "" {
				rig.mu.Lock()
				rig.read = append(rig.read, line)
				rig.mu.Unlock()
				rig.out <- line
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		rig.close()
		rig.checkStreams(t)
	})
	return rig
}

// close ends the client's input and waits for the server and the guard to
// finish.
func (rig *stdioRig) close() {
	rig.in.Close()
	<-rig.srv.done
	<-rig.outEnd
}

// checkStreams checks, once the session is over, that the server read
// exactly the client's bytes, and that the client read each server line
// as the server wrote it, in order, except the answers the guard wrote in
// place of the server's not-found answers (one per rejection).
func (rig *stdioRig) checkStreams(t *testing.T) {
	t.Helper()
	rig.mu.Lock()
	sent, read := rig.sent.String(), slices.Clone(rig.read)
	rig.mu.Unlock()
	if heard := rig.heard.String(); heard != sent {
		t.Errorf("the server read %d bytes, not exactly the client's %d:\n%.500q\nwant\n%.500q", len(heard), len(sent), heard, sent)
	}
	wrote := rig.srv.written()
	if len(read) != len(wrote) {
		t.Errorf("the server wrote %d lines, the client read %d", len(wrote), len(read))
		return
	}
	var replaced int64
	for i := range wrote {
		if read[i] == wrote[i] {
			continue
		}
		if !strings.Contains(read[i], `,"error":{"code":-32602,"message":"Unknown tool: `) {
			t.Errorf("the server wrote\n%.300q\nthe client read\n%.300q", wrote[i], read[i])
		}
		replaced++
	}
	if n := int64(len(rig.rejections())); replaced != n {
		t.Errorf("%d server lines replaced, %d rejections", replaced, n)
	}
}

func (rig *stdioRig) send(t *testing.T, lines ...string) {
	t.Helper()
	for _, l := range lines {
		rig.mu.Lock()
		rig.sent.WriteString(l)
		rig.mu.Unlock()
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
	case <-time.After(10 * time.Second): // a bound against hangs only
		t.Fatal("no line from the guard within 10s")
		return ""
	}
}

func (rig *stdioRig) rejections() []*Rejection { return cloneLocked(&rig.mu, &rig.rejected) }

func (rig *stdioRig) untrackedReasons() []string { return cloneLocked(&rig.mu, &rig.untracked) }

const initializeLine = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n"

const listChangedLine = `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`

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

// listLine is a client's tools/list: with a cursor unless it is "", with
// params._meta (meta is `"_meta":{…}`) unless it is "".
func listLine(id, cursor, meta string) string {
	var params []string
	if cursor != "" {
		c, _ := json.Marshal(cursor)
		params = append(params, `"cursor":`+string(c))
	}
	if meta != "" {
		params = append(params, meta)
	}
	p := ""
	if len(params) > 0 {
		p = `,"params":{` + strings.Join(params, ",") + `}`
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list"` + p + `}` + "\n"
}

// modernMeta is a 2026-07-28 request's params._meta, as `"_meta":{…}`,
// with the client capabilities caps and a progressToken unless token is "".
func modernMeta(caps, token string) string {
	m := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps
	if token != "" {
		m += `,"progressToken":"` + token + `"`
	}
	return m + "}"
}

func modernLineCall(id, name, meta string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `","arguments":{},` + meta + `}}` + "\n"
}

// listAll lists the tools as a client does, with params._meta meta ("" for
// none): tools/list, then one request per nextCursor. It returns the names
// the server gave, in its order.
func (rig *stdioRig) listAll(t *testing.T, meta string) []string {
	t.Helper()
	names, cursor := []string{}, ""
	for {
		rig.lists++
		id := `"list-` + strconv.Itoa(rig.lists) + `"`
		rig.send(t, listLine(id, cursor, meta))
		page := rig.next(t)
		var res struct {
			ID     json.RawMessage
			Result struct {
				Tools      []struct{ Name string }
				NextCursor string
			}
		}
		if err := json.Unmarshal([]byte(page), &res); err != nil || string(res.ID) != id {
			t.Fatalf("tools/list %s answered %.300s", id, page)
		}
		for _, tl := range res.Result.Tools {
			names = append(names, tl.Name)
		}
		if res.Result.NextCursor == "" {
			return names
		}
		cursor = res.Result.NextCursor
	}
}

// guardAnswer is the guard's -32602 answer, read.
type guardAnswer struct {
	ID    json.RawMessage
	Error struct {
		Code    int
		Message string
		Data    *struct {
			AvailableTools []string
			Suggestions    []string
		}
	}
}

// readAnswer reads line as the guard's answer to the call id of name.
func readAnswer(t *testing.T, line, id, name string) guardAnswer {
	t.Helper()
	var a guardAnswer
	if err := json.Unmarshal([]byte(line), &a); err != nil || string(a.ID) != id || a.Error.Code != -32602 || a.Error.Message != "Unknown tool: "+name {
		t.Fatalf("not the guard's answer to %s (%s): %s", id, name, line)
	}
	return a
}

// unknown sends a call of name with the id and returns the guard's answer.
func (rig *stdioRig) unknown(t *testing.T, id, name string) guardAnswer {
	t.Helper()
	rig.send(t, lineCall(id, name))
	return readAnswer(t, rig.next(t), id, name)
}

// unknownWithoutList sends a call (id 1) of the unknown tool name, and
// checks that the answer is -32602 with no data, and that OnTranslate was
// told ErrNoList.
func (rig *stdioRig) unknownWithoutList(t *testing.T, name string) {
	t.Helper()
	rig.send(t, lineCall("1", name))
	rig.wantNoData(t, rig.next(t), "1", name)
}

// wantNoData checks line is the guard's answer without data, and that the
// last rejection says ErrNoList.
func (rig *stdioRig) wantNoData(t *testing.T, line, id, name string) {
	t.Helper()
	if want := `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32602,"message":"Unknown tool: ` + name + `"}}` + "\n"; line != want {
		t.Fatalf("got  %s\nwant %s", line, want)
	}
	rej := rig.rejections()
	if len(rej) == 0 || !errors.Is(rej[len(rej)-1].ListErr, ErrNoList) || !rej[len(rej)-1].Translated {
		t.Errorf("OnTranslate told %+v, want ListErr ErrNoList", rej)
	}
}

// wantList checks that the answer lists exactly want (sorted here).
func wantList(t *testing.T, a guardAnswer, want ...string) {
	t.Helper()
	want = slices.Sorted(slices.Values(want))
	if a.Error.Data == nil || !slices.Equal(a.Error.Data.AvailableTools, want) || a.Error.Data.AvailableTools == nil {
		t.Fatalf("availableTools %+v, want %q", a.Error.Data, want)
	}
}

// TestStdioServerHearsOnlyTheClient: through a session with calls before
// and after lists, lists in pages, a changed list, a new initialize and a
// 2026-07-28 caller, the server reads exactly the client's bytes, and its
// tools/list requests are the client's own, no others.
func TestStdioServerHearsOnlyTheClient(t *testing.T) {
	srv := &lineServer{pageSize: 2}
	rig := newStdioRigWith(t, StdioOptions{}, srv, "a", "b", "c")
	rig.handshake(t)
	rig.unknown(t, "1", "nope") // before any list
	rig.listAll(t, "")
	rig.unknown(t, "2", "nope")
	rig.send(t, lineCall("3", "a"))
	rig.next(t)
	srv.sendLine(listChangedLine)
	rig.next(t)
	rig.unknown(t, "4", "nope")
	rig.send(t, initializeLine)
	rig.next(t)
	meta := modernMeta(`{}`, "p")
	rig.listAll(t, meta)
	rig.send(t, modernLineCall("5", "nope", meta))
	rig.next(t)
	rig.send(t, "not json\n", "{\n", lineCall("6", "nope"), `{"jsonrpc":"2.0","id":7,"method":"tools/call"`) // the last line unfinished
	rig.next(t)
	rig.close()

	rig.mu.Lock()
	sent := rig.sent.String()
	rig.mu.Unlock()
	if heard := rig.heard.String(); heard != sent {
		t.Fatalf("the server read\n%q\nthe client sent\n%q", heard, sent)
	}
	var clientLists []string
	for _, l := range strings.SplitAfter(sent, "\n") {
		if strings.Contains(l, `"tools/list"`) {
			clientLists = append(clientLists, l)
		}
	}
	if got := srv.listRequests(); len(clientLists) != 4 || !slices.Equal(got, clientLists) {
		t.Errorf("the server read the tools/list requests\n%q\nthe client sent\n%q", got, clientLists)
	}
	if n := int64(len(rig.rejections())); n != 5 {
		t.Errorf("%d answers replaced, want 5", n)
	}
}

// TestStdioTranslatesTheServersNotFoundAnswer: after the client's own
// tools/list, the server's not-found answer becomes -32602 with the tools
// the client was given; a known call runs; OnTranslate is told.
func TestStdioTranslatesTheServersNotFoundAnswer(t *testing.T) {
	rig := newStdioRig(t, StdioOptions{}, "get_weather", "search_docs")
	rig.handshake(t)
	if got := rig.listAll(t, ""); !slices.Equal(got, []string{"get_weather", "search_docs"}) {
		t.Fatalf("listed %q", got)
	}
	rig.send(t, lineCall(`"a"`, "get_wether"))
	want := `{"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"Unknown tool: get_wether","data":{"availableTools":["get_weather","search_docs"],"suggestions":["get_weather"]}}}` + "\n"
	if got := rig.next(t); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	// The call reached the server, byte for byte: the server decided.
	if got := rig.srv.received(); got[len(got)-1] != lineCall(`"a"`, "get_wether") {
		t.Errorf("the server read %q last", got[len(got)-1])
	}
	rig.send(t, lineCall("2", "get_weather"))
	if got := rig.next(t); got != `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"ran get_weather"}]}}`+"\n" {
		t.Fatalf("known call answered %s", got)
	}
	rej := rig.rejections()
	if len(rej) != 1 || rej[0].Name != "get_wether" || !rej[0].Translated || rej[0].ListErr != nil || rej[0].Code != CodeInvalidParams {
		t.Errorf("OnTranslate told %+v", rej)
	}
}

// TestStdioCallBeforeAnyListHasNoData: with no tools/list seen, the answer
// is -32602 without data, OnTranslate is told ErrNoList, and the guard asks
// the server nothing.
func TestStdioCallBeforeAnyListHasNoData(t *testing.T) {
	rig := newStdioRig(t, StdioOptions{}, "echo")
	rig.handshake(t)
	rig.unknownWithoutList(t, "ech")
	if got := rig.srv.listRequests(); len(got) != 0 {
		t.Errorf("the server read tools/list requests the client never sent: %q", got)
	}
}

// TestStdioAvailableToolsAreTheListTheClientWasGiven: the data is the list
// the server gave the client, not the server's tools now: tools the server
// took or added since, unannounced, do not show until the client lists
// again.
func TestStdioAvailableToolsAreTheListTheClientWasGiven(t *testing.T) {
	rig := newStdioRig(t, StdioOptions{}, "zeta", "alpha", "mid")
	rig.handshake(t)
	listed := rig.listAll(t, "")
	rig.srv.setTools("other")
	wantList(t, rig.unknown(t, "1", "nope"), listed...)
}

// TestStdioAddedToolAppearsOnceListed: a tool the server added shows in
// the data once the client has listed it.
func TestStdioAddedToolAppearsOnceListed(t *testing.T) {
	rig := newStdioRig(t, StdioOptions{}, "echo")
	rig.handshake(t)
	rig.listAll(t, "")
	rig.srv.setTools("echo", "added")
	wantList(t, rig.unknown(t, "1", "nope"), "echo") // not listed yet
	listed := rig.listAll(t, "")
	if !slices.Contains(listed, "added") {
		t.Fatalf("listed %q", listed)
	}
	wantList(t, rig.unknown(t, "2", "nope"), listed...)
}

// TestStdioDeletedToolStillListedKeepsTheServersAnswer: the client lists
// [a, victim, victims]; the server deletes victim without a list_changed
// and answers a call of it not found. The name is in the client's list, so
// the answer passes as the server wrote it (a tool's own answer may say
// the same); the list kept is unchanged.
func TestStdioDeletedToolStillListedKeepsTheServersAnswer(t *testing.T) {
	rig := newStdioRig(t, StdioOptions{}, "a", "victim", "victims")
	rig.handshake(t)
	listed := rig.listAll(t, "")
	rig.srv.setTools("a", "victims")
	rig.send(t, lineCall("1", "victim"))
	want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"MCP error -32602: Tool victim not found"}],"isError":true}}` + "\n"
	if got := rig.next(t); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	wantList(t, rig.unknown(t, "2", "nope"), listed...)
}

// TestStdioAssemblesAListOverSeveralPages: the client follows nextCursor
// over three pages; the data is every page's tools.
func TestStdioAssemblesAListOverSeveralPages(t *testing.T) {
	tools := []string{"a1", "a2", "a3", "a4", "a5", "a6", "a7"}
	rig := newStdioRigWith(t, StdioOptions{}, &lineServer{pageSize: 3}, tools...)
	rig.handshake(t)
	if listed := rig.listAll(t, ""); !slices.Equal(listed, tools) || rig.lists != 3 {
		t.Fatalf("listed %q in %d pages", listed, rig.lists)
	}
	wantList(t, rig.unknown(t, "1", "zz"), tools...)
}

// TestStdioListReadInPartIsNotShown: a client that reads only the first
// page has no whole list: the answer has no data.
func TestStdioListReadInPartIsNotShown(t *testing.T) {
	rig := newStdioRigWith(t, StdioOptions{}, &lineServer{pageSize: 3}, "a1", "a2", "a3", "a4")
	rig.handshake(t)
	rig.send(t, listLine(`"l"`, "", ""))
	if got := rig.next(t); !strings.Contains(got, `"nextCursor":"3"`) {
		t.Fatalf("first page %s", got)
	}
	rig.unknownWithoutList(t, "zz")
}

// TestStdioPageOutOfSequenceDropsTheRun: a page asked with another cursor
// than the one the last page gave ends the list being read: no data, even
// once the right page comes, until the client lists from the start.
func TestStdioPageOutOfSequenceDropsTheRun(t *testing.T) {
	tools := []string{"a", "b", "c", "d", "e", "f"}
	rig := newStdioRigWith(t, StdioOptions{}, &lineServer{pageSize: 2}, tools...)
	rig.handshake(t)
	rig.send(t, listLine(`"l1"`, "", ""))
	if got := rig.next(t); !strings.Contains(got, `"nextCursor":"2"`) {
		t.Fatalf("first page %s", got)
	}
	rig.send(t, listLine(`"l2"`, "4", "")) // skips c and d
	if got := rig.next(t); strings.Contains(got, "nextCursor") {
		t.Fatalf("last page %s", got)
	}
	rig.unknownWithoutList(t, "zz")
	rig.send(t, listLine(`"l3"`, "2", ""))
	rig.next(t)
	rig.send(t, listLine(`"l4"`, "4", ""))
	rig.next(t)
	rig.send(t, lineCall("2", "zz"))
	rig.wantNoData(t, rig.next(t), "2", "zz")
	rig.listAll(t, "")
	wantList(t, rig.unknown(t, "3", "zz"), tools...)
}

// TestStdioListChangedDropsTheList: notifications/tools/list_changed from
// the server reaches the client unchanged and drops the list, until the
// client lists again.
func TestStdioListChangedDropsTheList(t *testing.T) {
	rig := newStdioRig(t, StdioOptions{}, "echo")
	rig.handshake(t)
	rig.listAll(t, "")
	wantList(t, rig.unknown(t, "1", "nope"), "echo")
	rig.srv.setTools("echo", "added")
	rig.srv.sendLine(listChangedLine)
	if got := rig.next(t); got != listChangedLine+"\n" {
		t.Fatalf("the announcement reached the client as %s", got)
	}
	rig.send(t, lineCall("2", "nope"))
	rig.wantNoData(t, rig.next(t), "2", "nope")
	rig.listAll(t, "")
	wantList(t, rig.unknown(t, "3", "nope"), "added", "echo")
}

// TestStdioInitializeDropsTheList: a new initialize from the client starts
// a session with no list.
func TestStdioInitializeDropsTheList(t *testing.T) {
	rig := newStdioRig(t, StdioOptions{}, "echo")
	rig.handshake(t)
	rig.listAll(t, "")
	wantList(t, rig.unknown(t, "1", "nope"), "echo")
	rig.handshake(t)
	rig.send(t, lineCall("2", "nope"))
	rig.wantNoData(t, rig.next(t), "2", "nope")
}

// TestStdioListTTLDropsTheList: a list is shown for ListTTL after it was
// read, and not after.
func TestStdioListTTLDropsTheList(t *testing.T) {
	rig := newStdioRig(t, StdioOptions{ListTTL: time.Minute}, "echo")
	rig.handshake(t)
	rig.listAll(t, "")
	rig.clock.advance(time.Minute - time.Nanosecond)
	wantList(t, rig.unknown(t, "1", "nope"), "echo")
	rig.clock.advance(time.Nanosecond)
	rig.send(t, lineCall("2", "nope"))
	rig.wantNoData(t, rig.next(t), "2", "nope")
}

// TestStdioTTLMsShortensTheList: a page's ttlMs shorter than ListTTL is
// honoured; a longer one does not keep the list past ListTTL.
func TestStdioTTLMsShortensTheList(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ttlMs int64
		ttl   time.Duration
		shown time.Duration // the list is shown until then, not after
	}{
		{"shorter", 1500, time.Hour, 1500 * time.Millisecond},
		{"longer", 5000, time.Second, time.Second},
		{"zero: shown all the same", 0, time.Hour, time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rig := newStdioRigWith(t, StdioOptions{ListTTL: tc.ttl}, &lineServer{ttlMs: &tc.ttlMs}, "echo")
			rig.handshake(t)
			rig.listAll(t, "")
			if tc.shown > 0 {
				rig.clock.advance(tc.shown - time.Nanosecond)
				wantList(t, rig.unknown(t, "1", "nope"), "echo")
				rig.clock.advance(time.Nanosecond)
			}
			rig.send(t, lineCall("2", "nope"))
			rig.wantNoData(t, rig.next(t), "2", "nope")
		})
	}
}

// TestStdioModernListIsShownOnlyToItsOwnMeta: in 2026-07-28 each request
// states its client in params._meta. A list read with one _meta (here
// clientCapabilities with elicitation, which adds a tool) is never shown
// to a call with another _meta or none; a call with the same _meta but
// another progressToken gets it.
func TestStdioModernListIsShownOnlyToItsOwnMeta(t *testing.T) {
	rig := newStdioRigWith(t, StdioOptions{}, &lineServer{capTools: []string{"needs_elicitation"}}, "echo")
	elicit := modernMeta(`{"elicitation":{}}`, "p1")
	plain := modernMeta(`{}`, "")
	sampling := modernMeta(`{"sampling":{}}`, "")
	withElicitation := rig.listAll(t, elicit)
	if !slices.Equal(withElicitation, []string{"echo", "needs_elicitation"}) {
		t.Fatalf("listed %q", withElicitation)
	}
	call := func(id, meta string) string {
		rig.send(t, modernLineCall(id, "nope", meta))
		return rig.next(t)
	}
	rig.wantNoData(t, call("1", plain), "1", "nope")
	rig.send(t, lineCall("2", "nope")) // 2025 era: the session's list, none
	rig.wantNoData(t, rig.next(t), "2", "nope")
	wantList(t, readAnswer(t, call("3", modernMeta(`{"elicitation":{}}`, "p2")), "3", "nope"), withElicitation...)

	plainList := rig.listAll(t, plain)
	wantList(t, readAnswer(t, call("4", plain), "4", "nope"), plainList...)
	wantList(t, readAnswer(t, call("5", elicit), "5", "nope"), withElicitation...)
	rig.listAll(t, "")
	rig.wantNoData(t, call("6", sampling), "6", "nope")
}

// TestStdioTooLongListAnswerPassesUntouched: a tools/list answer longer
// than MaxServerLineBytes, written in pieces, reaches the client byte for
// byte, and is not kept: the next answer has no data.
func TestStdioTooLongListAnswerPassesUntouched(t *testing.T) {
	var tools []string
	for i := range 200 {
		tools = append(tools, fmt.Sprintf("tool_with_a_long_name_%03d", i))
	}
	rig := newStdioRigWith(t, StdioOptions{MaxServerLineBytes: 2 << 10}, &lineServer{chunk: 512}, tools...)
	rig.handshake(t)
	if listed := rig.listAll(t, ""); !slices.Equal(listed, tools) {
		t.Fatalf("listed %d tools", len(listed))
	}
	if n := len(rig.srv.written()[1]); n <= 2<<10 {
		t.Fatalf("the list answer is %d bytes, not longer than MaxServerLineBytes", n)
	}
	rig.unknownWithoutList(t, "nope")
}

// TestStdioPassesEveryOtherAnswerByteForByte: an actionable isError, an
// error about something else, a not-found answer naming another tool or
// another id, a result: each reaches the client as the server wrote it.
func TestStdioPassesEveryOtherAnswerByteForByte(t *testing.T) {
	rig := newStdioRig(t, StdioOptions{}, "echo")
	rig.handshake(t)
	rig.listAll(t, "")
	rig.send(t, lineCall("1", "needs_elicitation"))
	if got := rig.next(t); got != `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Tool \"needs_elicitation\" requires client support for form elicitation."}],"isError":true}}`+"\n" {
		t.Errorf("actionable isError: %s", got)
	}
	// Server lines that look like not-found answers, but not to a call the
	// guard saw with that id and name.
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
	// The answer to a call is read once: a second not-found line with its
	// id is not the answer to a call the guard saw.
	rig.send(t, lineCall("9", "nope"))
	readAnswer(t, rig.next(t), "9", "nope")
	again := `{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"unknown tool \"nope\""}}`
	rig.srv.sendLine(again)
	if got := rig.next(t); got != again+"\n" {
		t.Errorf("got  %s\nwant %s", got, again)
	}
	if n := int64(len(rig.rejections())); n != 1 {
		t.Errorf("%d answers replaced, want 1", n)
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
	rig.handshake(t)
	rig.listAll(t, "")
	rig.srv.setTools("echo", "fresh")
	rig.send(t, lineCall("2", "fresh"))
	if got := rig.next(t); !strings.Contains(got, "ran fresh") {
		t.Fatalf("got %s", got)
	}
	if n := int64(len(rig.rejections())); n != 0 {
		t.Errorf("%d answers replaced, for calls the server ran", n)
	}
}

// syncGuard is a guard whose client has sent lines, all read already (as
// the server reads them), and whose client side is out. Nothing runs on
// another goroutine: whatever the guard writes, it writes within the
// server's Write.
func syncGuard(t *testing.T, opts StdioOptions, out io.Writer, lines ...string) *Stdio {
	t.Helper()
	opts.BareMessage = true
	g, err := NewStdio(strings.NewReader(strings.Join(lines, "")), out, opts)
	if err != nil {
		t.Fatal(err)
	}
	heard, err := io.ReadAll(g.Reader())
	if err != nil || string(heard) != strings.Join(lines, "") {
		t.Fatalf("the server read %q, %v", heard, err)
	}
	return g
}

// countTranslations makes opts count the answers the guard translates.
func countTranslations(opts *StdioOptions) *atomic.Int64 {
	n, next := new(atomic.Int64), opts.OnTranslate
	opts.OnTranslate = func(r *Rejection) {
		n.Add(1)
		if next != nil {
			next(r)
		}
	}
	return n
}

// TestStdioTranslatesEveryKnownNotFoundShape: each not-found answer of
// notFoundShapes, as the SDK writes it, to a call the guard read after
// the client's list, is replaced within the server's Write, with the list.
func TestStdioTranslatesEveryKnownNotFoundShape(t *testing.T) {
	list := `{"jsonrpc":"2.0","id":"l","result":{"tools":[{"name":"get_weather","inputSchema":{"type":"object"}}]}}` + "\n"
	for _, name := range []string{"get_wether", `we"ird 'name'`, "ünï/cødé"} {
		for _, s := range notFoundShapes {
			reply := s.reply("7", name)
			var out bytes.Buffer
			n, _ := json.Marshal(name)
			g := syncGuard(t, StdioOptions{HideSuggestions: true}, &out, listLine(`"l"`, "", ""),
				`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":`+string(n)+`}}`+"\n")
			g.Writer().Write([]byte(list))
			g.Writer().Write([]byte(reply + "\n"))
			msg, _ := json.Marshal("Unknown tool: " + name)
			want := list + `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":` + string(msg) + `,"data":{"availableTools":["get_weather"]}}}` + "\n"
			if got := out.String(); got != want {
				t.Errorf("%s, %q: the client read\n%s\nwant\n%s", s.Server, name, got, want)
			}
		}
	}
}

// TestStdioReplacesInPlaceAndInOrder: server lines in one Write, or in
// pieces of any size, reach the client in their order, each not-found
// answer replaced where it stood.
func TestStdioReplacesInPlaceAndInOrder(t *testing.T) {
	note := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}` + "\n"
	server := note +
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown tool \"nope\""}}` + "\n" +
		`{"jsonrpc":"2.0","id":3,"result":{"content":[]}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"MCP error -32602: Tool zzz not found"}],"isError":true}}` + "\n" +
		note + `{"jsonrpc":"2.0","method":"notif` // unfinished, handed on at Close
	want := note +
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: nope"}}` + "\n" +
		`{"jsonrpc":"2.0","id":3,"result":{"content":[]}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Unknown tool: zzz"}}` + "\n" +
		note + `{"jsonrpc":"2.0","method":"notif`
	for _, piece := range []int{len(server), 1, 2, 7, 64, 100} {
		var out bytes.Buffer
		var opts StdioOptions
		translated := countTranslations(&opts)
		g := syncGuard(t, opts, &out, lineCall("1", "nope"), lineCall("2", "zzz"), lineCall("3", "echo"))
		for rest := server; rest != ""; {
			n := min(piece, len(rest))
			if k, err := g.Writer().Write([]byte(rest[:n])); k != n || err != nil {
				t.Fatalf("Write: %d, %v", k, err)
			}
			rest = rest[n:]
		}
		if err := g.Writer().Close(); err != nil {
			t.Fatal(err)
		}
		if got := out.String(); got != want {
			t.Errorf("in pieces of %d: the client read\n%s\nwant\n%s", piece, got, want)
		}
		if n := translated.Load(); n != 2 {
			t.Errorf("in pieces of %d: %d rejections", piece, n)
		}
	}
}

// TestStdioReadsClientLinesAcrossReads: a call whose line reaches the guard
// one byte at a time is read whole and its answer translated.
func TestStdioReadsClientLinesAcrossReads(t *testing.T) {
	rig := newStdioRig(t, StdioOptions{}, "echo")
	rig.handshake(t)
	rig.listAll(t, "")
	call := lineCall(`"split"`, "ecko")
	for i := range call {
		rig.send(t, call[i:i+1])
	}
	wantList(t, readAnswer(t, rig.next(t), `"split"`, "ecko"), "echo")
}

// TestStdioUnreadableLinesAreOnlyUntracked: a line that is not JSON, one
// outside the strict subset and one longer than MaxLineBytes reach the
// server byte for byte and are not tracked; the calls after them are.
func TestStdioUnreadableLinesAreOnlyUntracked(t *testing.T) {
	rig := newStdioRig(t, StdioOptions{MaxLineBytes: 1 << 10}, "echo")
	rig.handshake(t)
	rig.listAll(t, "")
	huge := `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"nope","arguments":{"t":"` + strings.Repeat("x", 200<<10) + `"}}}` + "\n"
	inPieces := `{"jsonrpc":"2.0","id":98,"method":"tools/call","params":{"name":"nope","arguments":{"t":"` + strings.Repeat("y", 2<<10) + `"}}}` + "\n"
	lines := []string{
		"not json at all\n",
		"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"a\xffb\"}}\n",
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nope","NAME":"echo"}}` + "\n",
		`[{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope"}}]` + "\n",
		`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"nope"}}` + "\n",
		`{"jsonrpc":"2.0","id":12.0,"method":"tools/call","params":{"name":"nope"}}` + "\n",
		`{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":7}}` + "\n",
		`{"jsonrpc":"2.0","id":14,"method":"tools/call","params":["nope"]}` + "\n",
		`{"jsonrpc":"2.0","id":"r1","result":{"action":"accept"}}` + "\n",
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}` + "\n",
		"\n",
		"   \r\n",
		huge,
	}
	rig.send(t, lines...)
	for i := 0; i < len(inPieces); i += 100 {
		rig.send(t, inPieces[i:min(i+100, len(inPieces))])
	}
	rig.send(t, lineCall("8", "nope"))
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
	for id, want := range map[string]string{"5": `"isError":true`, "6": "ran echo", "99": `"isError":true`, "98": `"isError":true`} {
		if !strings.Contains(byID[id], want) {
			t.Errorf("untracked call %s: %s", id, byID[id])
		}
	}
	wantList(t, readAnswer(t, byID["8"], "8", "nope"), "echo")
	if n := int64(len(rig.rejections())); n != 1 {
		t.Errorf("%d answers replaced, want 1", n)
	}
	reasons := rig.untrackedReasons()
	var long, outside int
	for _, r := range reasons {
		switch {
		case strings.Contains(r, "longer than MaxLineBytes"):
			long++
		case strings.Contains(r, "outside the strict subset"):
			outside++
		}
	}
	// 5, 6, 7, 12.0, 13, 14: each call outside the strict subset is said
	// once; the notification without an id, which gets no answer, is not.
	if long != 2 || outside != 6 {
		t.Errorf("OnUntracked was told %q", reasons)
	}
}

// TestStdioLeavesAValueOverSeveralLinesToTheServer: a server that decodes
// the stream (as go-sdk does) reads a call written over two lines; the
// guard read no call, and the server's not-found answer passes as written.
func TestStdioLeavesAValueOverSeveralLinesToTheServer(t *testing.T) {
	rig := newStdioRigWith(t, StdioOptions{}, &lineServer{decoder: true}, "echo")
	rig.handshake(t)
	rig.listAll(t, "")
	rig.send(t, `{"jsonrpc":"2.0","id":7,`+"\n", `"method":"tools/call","params":{"name":"nope"}}`+"\n")
	want := `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"MCP error -32602: Tool nope not found"}],"isError":true}}` + "\n"
	if got := rig.next(t); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if n := int64(len(rig.rejections())); n != 0 {
		t.Errorf("%d answers replaced", n)
	}
}

// TestStdioShowsAnEmptyList: a server without tools lists none; the answer
// says so, as over HTTP.
func TestStdioShowsAnEmptyList(t *testing.T) {
	rig := newStdioRig(t, StdioOptions{})
	rig.handshake(t)
	rig.listAll(t, "")
	for _, id := range []string{"1", "2"} {
		rig.send(t, lineCall(id, "nope"))
		want := `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32602,"message":"Unknown tool: nope","data":{"availableTools":[]}}}` + "\n"
		if got := rig.next(t); got != want {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	}
}

// TestStdioHideOptionsShapeTheData: HideToolList leaves the list out,
// HideSuggestions the suggestions, both the data; with both, no list is
// wanted, so none is missing.
func TestStdioHideOptionsShapeTheData(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts StdioOptions
		want string
	}{
		{"list", StdioOptions{HideToolList: true}, `"data":{"suggestions":["echo"]}}}`},
		{"suggestions", StdioOptions{HideSuggestions: true}, `"data":{"availableTools":["echo"]}}}`},
		{"both", StdioOptions{HideToolList: true, HideSuggestions: true}, `"message":"Unknown tool: ech"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rig := newStdioRig(t, tc.opts, "echo")
			rig.handshake(t)
			rig.listAll(t, "")
			rig.send(t, lineCall("1", "ech"))
			if got := rig.next(t); !strings.HasSuffix(got, tc.want+"\n") {
				t.Errorf("got %s, want it to end %s", got, tc.want)
			}
			if rej := rig.rejections(); len(rej) != 1 || rej[0].ListErr != nil {
				t.Errorf("OnTranslate told %+v", rej)
			}
		})
	}
}

// TestStdioOnRejectRunsBeforeItsAnswerIsWritten: OnTranslate is told of the
// answer while the server's Write waits: neither the answer nor the lines
// after it have reached the client, and they do once it returns.
func TestStdioOnRejectRunsBeforeItsAnswerIsWritten(t *testing.T) {
	var out bytes.Buffer
	var atReject string
	var told *Rejection
	opts := StdioOptions{OnTranslate: func(r *Rejection) { atReject, told = out.String(), r }}
	g := syncGuard(t, opts, &out, lineCall("1", "zzz"))
	after := `{"jsonrpc":"2.0","method":"notifications/message","params":{}}` + "\n"
	g.Writer().Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown tool \"zzz\""}}` + "\n" + after))
	answer := `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: zzz"}}` + "\n"
	if told == nil || told.Name != "zzz" || !errors.Is(told.ListErr, ErrNoList) {
		t.Fatalf("OnTranslate told %+v", told)
	}
	if atReject != "" {
		t.Errorf("while OnTranslate ran, the client had read %q", atReject)
	}
	if got := out.String(); got != answer+after {
		t.Errorf("the client read\n%s\nwant\n%s", got, answer+after)
	}
}

// TestStdioUnfinishedLastLine: a last client line without its newline is
// read by no server as a message; the guard hands it on.
func TestStdioUnfinishedLastLine(t *testing.T) {
	rig := newStdioRig(t, StdioOptions{}, "echo")
	rig.handshake(t)
	last := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}`
	rig.send(t, last)
	rig.close()
	got := rig.srv.received()
	if got[len(got)-1] != last {
		t.Errorf("the server read %q last", got[len(got)-1])
	}
}

// closeRecorder records whether it was closed.
type closeRecorder struct {
	bytes.Buffer
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }

// TestStdioCloseHandsOnTheUnfinishedLineAndClosesBothEnds: Writer's Close
// hands on the server's unfinished last line as it is and closes out;
// later writes fail, a second Close does nothing; Reader's Close closes
// in.
func TestStdioCloseHandsOnTheUnfinishedLineAndClosesBothEnds(t *testing.T) {
	in := &struct {
		io.Reader
		closeRecorder
	}{Reader: strings.NewReader("")}
	var out closeRecorder
	g, err := NewStdio(in, &out, StdioOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w := g.Writer()
	w.Write([]byte("{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n{\"jsonrpc\""))
	if got := out.String(); got != "{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n" {
		t.Errorf("before Close the client read %q", got)
	}
	if err := w.Close(); err != nil || !out.closed {
		t.Fatalf("Close: %v, out closed %v", err, out.closed)
	}
	if got := out.String(); got != "{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n{\"jsonrpc\"" {
		t.Errorf("after Close the client read %q", got)
	}
	if n, err := w.Write([]byte("x\n")); n != 0 || err == nil {
		t.Errorf("Write after Close: %d, %v", n, err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := g.Reader().Close(); err != nil || !in.closed {
		t.Errorf("Reader Close: %v, in closed %v", err, in.closed)
	}
}

// failWriter fails every write.
type failWriter struct{ err error }

func (f failWriter) Write([]byte) (int, error) { return 0, f.err }

// TestStdioKeepsTheFirstWriteError: once writing to the client failed,
// every later Write fails with the same error.
func TestStdioKeepsTheFirstWriteError(t *testing.T) {
	boom := errors.New("boom")
	g, err := NewStdio(strings.NewReader(""), failWriter{boom}, StdioOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := g.Writer().Write([]byte("{}\n")); err != boom {
			t.Errorf("Write: %v, want %v", err, boom)
		}
	}
}

// TestStdioWritesNeverInterleave writes long server lines in small pieces
// from several goroutines while the guard translates not-found answers:
// every line the client reads is whole.
func TestStdioWritesNeverInterleave(t *testing.T) {
	inR, inW := io.Pipe()
	var out fixture.SyncBuffer
	opts := StdioOptions{MaxServerLineBytes: 1 << 10, BareMessage: true}
	translated := countTranslations(&opts)
	g, err := NewStdio(inR, &out, opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := &lineServer{tools: []string{"echo"}, done: make(chan struct{})}
	go srv.serve(g.Reader(), g.Writer())
	go func() {
		inW.Write([]byte(initializeLine))
		inW.Write([]byte(listLine("0", "", "")))
		for i := range 200 {
			inW.Write([]byte(lineCall(fmt.Sprint(1000+i), "nope")))
		}
		inW.Close()
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
	<-srv.done // every call answered, through the guard
	g.Writer().Close()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	var notes, answers int
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Fatalf("a line the client read is not whole JSON: %.100q", l)
		}
		if strings.Contains(l, `"error":{"code":-32602,"message":"Unknown tool: nope","data":{"availableTools":["echo"]`) {
			answers++
		} else if strings.Contains(l, "notifications/message") {
			notes++
		}
	}
	if notes != 200 || answers != 200 || translated.Load() != 200 {
		t.Errorf("%d notifications and %d answers (%d rejections), want 200 of each", notes, answers, translated.Load())
	}
}

// TestStdioOptionErrors: a negative option is an error naming its field.
func TestStdioOptionErrors(t *testing.T) {
	refusesNegative(t, func(o StdioOptions) error { _, err := NewStdio(strings.NewReader(""), io.Discard, o); return err }, StdioOptions{},
		"MaxLineBytes", "MaxServerLineBytes", "ListTTL", "ToolListLimit")
	if _, err := NewStdio(nil, io.Discard, StdioOptions{}); err == nil {
		t.Error("nil reader: no error")
	}
	if _, err := NewStdio(strings.NewReader(""), nil, StdioOptions{}); err == nil {
		t.Error("nil writer: no error")
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

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// A tools/list answer longer than MaxServerLineBytes is not read, however
// the server writes it: in one write, the next call's answer has no data.
func TestStdioTooLongListAnswerInOneWriteIsNotRead(t *testing.T) {
	var out bytes.Buffer
	s, err := NewStdio(strings.NewReader(""), &out, StdioOptions{MaxServerLineBytes: 100, BareMessage: true})
	if err != nil {
		t.Fatal(err)
	}
	s.clientLine([]byte(`{"jsonrpc":"2.0","id":"l","method":"tools/list"}`))
	s.clientLine([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}`))
	long := `{"jsonrpc":"2.0","id":"l","result":{"tools":[{"name":"` + strings.Repeat("a", 200) + `"}]}}` + "\n"
	if _, err := s.Writer().Write([]byte(long)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Writer().Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: nope"}}` + "\n")); err != nil {
		t.Fatal(err)
	}
	want := long + `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: nope"}}` + "\n"
	if out.String() != want {
		t.Errorf("client got\n%s\nwant\n%s", out.String(), want)
	}
}

// A client that sends an id again has had its answer to it, read or not:
// a call whose reply the guard could not read (a key in another letter
// case) is forgotten then, and the answer to the request that takes its id
// next is never read as the call's.
func TestStdioIDSentAgainForgetsWhatWaitedOnIt(t *testing.T) {
	var out bytes.Buffer
	var opts StdioOptions
	translated := countTranslations(&opts)
	g := syncGuard(t, opts, &out, lineCall("1", "zzz"),
		`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"zzz"}}`+"\n")
	server := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]},"Error":null}` + "\n" +
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: zzz"}}` + "\n"
	if _, err := io.WriteString(g.Writer(), server); err != nil {
		t.Fatal(err)
	}
	if out.String() != server || translated.Load() != 0 {
		t.Errorf("got %q, %d answers replaced; want the server's lines untouched", out.String(), translated.Load())
	}
}
