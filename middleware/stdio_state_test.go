package toolguard

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// stepGuard is a guard whose client lines are fed one step at a time
// (client) and whose server lines are written at once (server).
type stepGuard struct {
	t   *testing.T
	in  *bytes.Buffer
	out *bytes.Buffer
	g   *Stdio
}

func newStepGuard(t *testing.T, opts StdioOptions) *stepGuard {
	opts.BareMessage = true
	opts.HideSuggestions = true
	s := &stepGuard{t: t, in: &bytes.Buffer{}, out: &bytes.Buffer{}}
	g, err := NewStdio(s.in, s.out, opts)
	if err != nil {
		t.Fatal(err)
	}
	s.g = g
	return s
}

func (s *stepGuard) client(lines ...string) {
	s.t.Helper()
	want := strings.Join(lines, "")
	s.in.WriteString(want)
	got, err := io.ReadAll(s.g.Reader())
	if err != nil || string(got) != want {
		s.t.Fatalf("server read %q, %v", got, err)
	}
}

// server writes one server line and returns what the client read for it.
func (s *stepGuard) server(line string) string {
	s.t.Helper()
	s.out.Reset()
	if _, err := s.g.Writer().Write([]byte(line)); err != nil {
		s.t.Fatal(err)
	}
	return s.out.String()
}

const rvInit = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n"

// A tools/list sent before a new initialize, answered after it, is the
// old session's list: the new session has listed nothing yet. So is a
// list kept before it. An initialize outside the strict subset (a lone
// surrogate JSON.parse takes; an escaped method) counts as one.
func TestStdioListAskedBeforeAnInitializeIsNotKept(t *testing.T) {
	for _, init := range []string{
		rvInit,
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c\ud83d","version":"1"}}}` + "\n",
		`{"jsonrpc":"2.0","id":0,"method":"initi\u0061lize","params":{"capabilities":{},"clientInfo":{"name":"c","version":"1","n":1e400}}}` + "\n",
	} {
		for _, before := range []bool{true, false} {
			s := newStepGuard(t, StdioOptions{})
			s.client(rvInit)
			s.client(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n")
			if !before {
				s.server(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}}` + "\n")
			}
			s.client(init) // a new session starts: no list
			if before {
				s.server(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}}` + "\n")
			}
			s.client(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b","arguments":{}}}` + "\n")
			own := `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Tool not found"}],"isError":true}}` + "\n"
			if got := s.server(own); !strings.HasSuffix(got, own) {
				t.Errorf("answered before %v, then %.70s…: the old session's list was used in the new one:\n got %s\nwant %s", before, init, got, own)
			}
		}
	}
}

// The cursor is read by encoding/json, case-insensitively and last-wins:
// {"cursor":"c1","Cursor":""} is page 2 to a server that reads "cursor"
// (the TypeScript SDKs), a first page to the guard.
func TestStdioCursorIsReadAsServersReadIt(t *testing.T) {
	s := newStepGuard(t, StdioOptions{})
	s.client(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n")
	s.server(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"c1"}}` + "\n")
	s.client(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"c1","Cursor":""}}` + "\n")
	// The server read cursor "c1": page 2, the last.
	s.server(`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"b","inputSchema":{"type":"object"}}]}}` + "\n")
	// a is listed (page 1); its own error is bare.
	s.client(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a","arguments":{}}}` + "\n")
	own := `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Tool not found"}],"isError":true}}` + "\n"
	if got := s.server(own); got != own {
		t.Errorf("a listed tool's own error was replaced:\n got %s\nwant %s", got, own)
	}
}

func TestStdioServerLinesAreReadTheSameHoweverTheirWritesAreCut(t *testing.T) {
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown tool \"nope\""}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"ok"}]}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + strings.Repeat("x", 40) + `"}}`,
		``, "\r", "\xff\xfe", `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"unknown tool \"n3\""}}` + "\r",
		strings.Repeat("y", 130),
		`{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"unknown tool \"n4\""}}`,
	}
	client := []string{lineCall("1", "nope"), lineCall("2", "echo"), lineCall("3", "n3"), lineCall("4", "n4")}
	rnd := uint64(1)
	next := func(n int) int {
		rnd = rnd*6364136223846793005 + 1442695040888963407
		return int((rnd >> 33) % uint64(n))
	}
	for iter := 0; iter < 3000; iter++ {
		max := 20 + next(150)
		var stream strings.Builder
		k := 1 + next(8)
		for range k {
			stream.WriteString(lines[next(len(lines))])
			if next(10) > 0 {
				stream.WriteByte('\n')
			}
		}
		S := stream.String()
		// oracle: whole lines
		var oout bytes.Buffer
		og := syncGuard(t, StdioOptions{MaxServerLineBytes: max}, &oout, client...)
		rest := S
		for {
			i := strings.IndexByte(rest, '\n')
			if i < 0 {
				oout.WriteString(rest)
				break
			}
			l := rest[:i]
			var r []byte
			if len(l) <= max {
				r = og.serverLine([]byte(l))
			}
			if r != nil {
				oout.Write(r)
			} else {
				oout.WriteString(l + "\n")
			}
			rest = rest[i+1:]
		}
		var out bytes.Buffer
		g := syncGuard(t, StdioOptions{MaxServerLineBytes: max}, &out, client...)
		for rest := S; rest != ""; {
			n := 1 + next(len(rest))
			g.Writer().Write([]byte(rest[:n]))
			rest = rest[n:]
		}
		g.Writer().Close()
		if out.String() != oout.String() {
			t.Fatalf("max %d stream %q:\n got %q\nwant %q", max, S, out.String(), oout.String())
		}
	}
}

// A line longer than MaxServerLineBytes that ends in a Write: the lines
// after it in that same Write must still be read.
func TestStdioLinesAfterALongLineInTheSameWriteAreRead(t *testing.T) {
	var out bytes.Buffer
	g := syncGuard(t, StdioOptions{MaxServerLineBytes: 100}, &out, lineCall("1", "nope"))
	long := `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + strings.Repeat("x", 200) + `"}}`
	g.Writer().Write([]byte(long[:150])) // the start of a long line
	g.Writer().Write([]byte(long[150:] + "\n" + `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown tool \"nope\""}}` + "\n"))
	want := long + "\n" + `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: nope"}}` + "\n"
	if got := out.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// The same, for a list_changed: missed, the guard keeps a stale list and
// replaces a new tool's own error.
func TestStdioListChangedAfterALongLineDropsTheList(t *testing.T) {
	s := newStepGuard(t, StdioOptions{MaxServerLineBytes: 200})
	s.client(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n")
	s.server(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}}` + "\n")
	long := `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + strings.Repeat("x", 300) + `"}}`
	s.server(long[:250])
	s.server(long[250:] + "\n" + `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` + "\n")
	s.client(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b","arguments":{}}}` + "\n")
	own := `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Tool not found"}],"isError":true}}` + "\n"
	if got := s.server(own); got != own {
		t.Errorf("the new tool's own error was replaced (list_changed missed):\n got %s\nwant %s", got, own)
	}
}

func TestStdioClientLinesAreReadTheSameHoweverTheirReadsAreCut(t *testing.T) {
	lines := []string{
		strings.TrimSuffix(lineCall("1", "a"), "\n"),
		strings.TrimSuffix(lineCall(`"2"`, "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"), "\n"),
		"", "\r", "garbage",
		strings.TrimSuffix(lineCall("3", "c"), "\n") + "\r",
		strings.Repeat("z", 90),
	}
	rnd := uint64(7)
	next := func(n int) int {
		rnd = rnd*6364136223846793005 + 1442695040888963407
		return int((rnd >> 33) % uint64(n))
	}
	for iter := 0; iter < 3000; iter++ {
		max := 10 + next(120)
		var b strings.Builder
		for range 1 + next(6) {
			b.WriteString(lines[next(len(lines))])
			if next(8) > 0 {
				b.WriteByte('\n')
			}
		}
		S := b.String()
		og, _ := NewStdio(strings.NewReader(""), io.Discard, StdioOptions{MaxLineBytes: max})
		rest := S
		for {
			i := strings.IndexByte(rest, '\n')
			if i < 0 {
				break
			}
			if i <= max {
				og.clientLine([]byte(rest[:i]))
			}
			rest = rest[i+1:]
		}
		src := &chunky{s: S, next: next}
		g, _ := NewStdio(src, io.Discard, StdioOptions{MaxLineBytes: max})
		got, _ := io.ReadAll(g.Reader())
		if string(got) != S {
			t.Fatalf("bytes changed")
		}
		if len(g.waiting) != len(og.waiting) {
			t.Fatalf("max %d %q: %v vs %v", max, S, g.waiting, og.waiting)
		}
		for k, v := range og.waiting {
			if w, ok := g.waiting[k]; !ok || w.name != v.name {
				t.Fatalf("max %d %q: %v vs %v", max, S, g.waiting, og.waiting)
			}
		}
	}
}

type chunky struct {
	s    string
	next func(int) int
}

func (c *chunky) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	n := min(len(p), 1+c.next(len(c.s)))
	copy(p, c.s[:n])
	c.s = c.s[n:]
	return n, nil
}

// A notifications/tools/list_changed is read as a client decodes it: with
// its method escaped (PHP's json_encode writes \/), with a long _meta, or
// with a null id, it drops the list, so a new tool's own error is not read
// against the old list.
func TestStdioListChangedDropsTheListHoweverItIsWritten(t *testing.T) {
	for _, changed := range []string{
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
		`{"jsonrpc":"2.0","method":"notifications\/tools\/list_changed"}`,
		`{"jsonrpc":"2.0","method":"notifications/tools/list\u005fchanged"}`,
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"trace":"` + strings.Repeat("t", 8192) + `"}}}`,
		`{"jsonrpc":"2.0","id":null,"method":"notifications/tools/list_changed"}`,
		`{"jsonrpc":"2.0","Method":"notifications/tools/list_changed","method":"notifications/tools/list_changed"}`,
		// Outside the strict subset, long, escaped: JSON.parse reads it.
		`{"jsonrpc":"2.0","method":"notifications/tools/list\u005fchanged","params":{"_meta":{"a":"\ud800","t":"` + strings.Repeat("t", 8192) + `"}}}`,
		// Nested deeper than encoding/json reads (10,000): JSON.parse reads it.
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"d":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}}}`,
	} {
		s := newStepGuard(t, StdioOptions{})
		s.client(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n")
		s.server(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}}` + "\n")
		if got := s.server(changed + "\n"); got != changed+"\n" {
			t.Fatalf("the notification was changed: %q", got)
		}
		// b is new; its own error says, bare, "Tool not found".
		s.client(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b","arguments":{}}}` + "\n")
		own := `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Tool not found"}],"isError":true}}` + "\n"
		if got := s.server(own); got != own {
			t.Errorf("after %.80s: the new tool's own error was replaced:\n got %s\nwant %s", changed, got, own)
		}
	}
}

// A list_changed longer than MaxServerLineBytes passes unread, in pieces,
// but its bytes could spell list_changed (here across two writes): it
// drops the list. A long line that could not spell it keeps the list.
func TestStdioListChangedTooLongToReadDropsTheList(t *testing.T) {
	for _, tc := range []struct {
		line string
		drop bool
	}{
		{`{"jsonrpc":"2.0","params":{"_meta":{"t":"` + strings.Repeat("t", 300) + `"}},"method":"notifications/tools/list_changed"}`, true},
		{`{"jsonrpc":"2.0","params":{"_meta":{"t":"` + strings.Repeat("t", 300) + `"}},"method":"notifications/tools/list\u005Fchanged"}`, true},
		{`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + strings.Repeat(`\u003c`, 60) + `"}}`, false},
	} {
		for _, cut := range []int{
			len(tc.line) - 13, // in the middle of list_changed, past the bound
			0,                 // the whole line, its newline too, in one write
			150,               // a start held, the end past the bound
		} {
			s := newStepGuard(t, StdioOptions{MaxServerLineBytes: 200})
			s.client(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n")
			s.server(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}}` + "\n")
			if got := s.server(tc.line[:cut]) + s.server(tc.line[cut:]+"\n"); got != tc.line+"\n" {
				t.Fatalf("the line was changed: %q", got)
			}
			s.client(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b","arguments":{}}}` + "\n")
			got := s.server(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Tool not found"}],"isError":true}}` + "\n")
			if kept := strings.Contains(got, `"availableTools":["a"]`); kept == tc.drop {
				t.Errorf("%.60s…, cut at %d: list kept %v, want %v: %s", tc.line[len(tc.line)-60:], cut, kept, !tc.drop, got)
			}
		}
	}
}

// A result that mentions list_changed in its text is not a list_changed.
func TestStdioResultMentioningListChangedKeepsTheList(t *testing.T) {
	s := newStepGuard(t, StdioOptions{})
	s.client(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n")
	s.server(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}}` + "\n")
	s.server(`{"jsonrpc":"2.0","id":7,"result":{"method":"notifications/tools/list_changed","content":[{"type":"text","text":"notifications\/tools\/list_changed"}]}}` + "\n")
	s.client(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b","arguments":{}}}` + "\n")
	if got := s.server(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Tool not found"}],"isError":true}}` + "\n"); !strings.Contains(got, `"availableTools":["a"]`) {
		t.Errorf("the list was dropped: %s", got)
	}
}

// A tools/list whose cursor is spelled two ways ("cursor" and "Cursor")
// is read one way by the TypeScript SDKs and another by encoding/json:
// its answer is not kept as any page.
func TestStdioAmbiguousCursorIsNotRead(t *testing.T) {
	s := newStepGuard(t, StdioOptions{})
	s.client(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"Cursor":"x"}}` + "\n")
	s.server(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}}` + "\n")
	s.client(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b","arguments":{}}}` + "\n")
	if got := s.server(`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"unknown tool \"b\""}}` + "\n"); strings.Contains(got, "availableTools") {
		t.Errorf("a list asked with an ambiguous cursor was kept: %s", got)
	}
}

// failingOut fails every write and closes without an error.
type failingOut struct{ closed bool }

func (f *failingOut) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }
func (f *failingOut) Close() error              { f.closed = true; return nil }

// Close reports the first error of the server's output, a failed write,
// even when closing the client's side succeeds.
func TestStdioWriterCloseReportsTheFirstWriteError(t *testing.T) {
	out := &failingOut{}
	g, err := NewStdio(strings.NewReader(""), out, StdioOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Writer().Write([]byte("{}\n")); err == nil {
		t.Fatal("the write did not fail")
	}
	if err := g.Writer().Close(); err != io.ErrClosedPipe || !out.closed {
		t.Errorf("Close = %v (closed %v), want the write's error and out closed", err, out.closed)
	}
}

// A JSON line outside the strict subset, with a tools/list waiting, may be
// its reply to some client (go-sdk reads {"id":1,"ID":7,...} as the reply
// to 1): no later line is taken for it. A line that is not JSON (a log)
// answers nothing, and the list after it is kept.
func TestStdioListAnsweredByAnUnreadLineIsNotKept(t *testing.T) {
	tool := func(name string) string { return `{"name":"` + name + `","inputSchema":{"type":"object"}}` }
	own := `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Tool c not found"}],"isError":true}}` + "\n"
	for _, tc := range []struct {
		before string
		kept   bool
	}{
		{`{"jsonrpc":"2.0","id":1,"ID":7,"result":{"tools":[` + tool("a") + `]}}`, false},
		{`{"jsonrpc":"2.0","id":1,"result":{"tools":[` + tool("a") + `],"nextCursor":"\udc00"}}`, false},
		{`Server listening on stdio`, true},
		{`{"level":"info","msg":"listing tools"}`, true},
	} {
		s := newStepGuard(t, StdioOptions{})
		s.client(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n")
		if got := s.server(tc.before + "\n"); got != tc.before+"\n" {
			t.Fatalf("%s: the client read %q", tc.before, got)
		}
		s.server(`{"jsonrpc":"2.0","id":1,"result":{"tools":[` + tool("b") + `]}}` + "\n")
		s.client(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"c","arguments":{}}}` + "\n")
		got := s.server(own)
		if kept := strings.Contains(got, `"availableTools":["b"]`); kept != tc.kept {
			t.Errorf("after %s: list kept %v, want %v (%s)", tc.before, kept, tc.kept, got)
		}
	}
}

// A client's response to a server request (sampling, elicitation, roots)
// is outside the strict subset (it has a result), and may mention
// initialize: it is no initialize, and the list stays. Over HTTP too.
func TestClientResponseMentioningInitializeKeepsTheList(t *testing.T) {
	response := `{"jsonrpc":"2.0","id":"s1","result":{"role":"assistant","content":{"type":"text","text":"First initialize the repository."}}}`
	s := newStepGuard(t, StdioOptions{})
	s.client(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n")
	s.server(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}}` + "\n")
	s.client(response + "\n")
	s.client(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b","arguments":{}}}` + "\n")
	if got := s.server(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Tool not found"}],"isError":true}}` + "\n"); !strings.Contains(got, `"availableTools":["a"]`) {
		t.Errorf("stdio: the list was dropped: %s", got)
	}

	session := http.Header{"Mcp-Session-Id": {"s-1"}}
	g := mustGuard(t, Options{Tools: unsure{}})
	srv := &listingServer{names: []string{"get_weather"}}
	serve(g, srv, newRequest("POST", listCall("1", ""), session))
	serve(g, answering(202, "", ""), newRequest("POST", response, session))
	if got := serve(g, srv, newRequest("POST", call("9", `"get_wether"`), session)).Body.String(); !strings.Contains(got, "availableTools") {
		t.Errorf("HTTP: the list was dropped: %s", got)
	}
}

// A page asked before a list_changed and answered after it may be the
// list before the change: it is not kept, so it never joins the pages the
// client asks after the change (with the same cursor, p2, as servers with
// fixed pages give).
func TestStdioPageAskedBeforeAListChangedIsNotJoined(t *testing.T) {
	page := func(id string, names []string, next string) string {
		var tools []string
		for _, n := range names {
			tools = append(tools, `{"name":"`+n+`","inputSchema":{"type":"object"}}`)
		}
		cursor := ""
		if next != "" {
			cursor = `,"nextCursor":"` + next + `"`
		}
		return `{"jsonrpc":"2.0","id":` + id + `,"result":{"tools":[` + strings.Join(tools, ",") + `]` + cursor + `}}` + "\n"
	}
	s := newStepGuard(t, StdioOptions{})
	s.client(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n")
	s.server(page("1", []string{"a1", "a2"}, "p2"))
	s.client(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"p2"}}` + "\n")
	s.server(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` + "\n")
	s.client(`{"jsonrpc":"2.0","id":4,"method":"tools/list"}` + "\n")
	s.server(page("4", []string{"a1", "a2"}, "p2"))
	s.server(page("2", []string{"b_old", "swap"}, "")) // late: the list before
	s.client(`{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"cursor":"p2"}}` + "\n")
	s.server(page("5", []string{"c_new", "swap"}, ""))
	s.client(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"zzz","arguments":{}}}` + "\n")
	got := s.server(`{"jsonrpc":"2.0","id":6,"result":{"content":[{"type":"text","text":"MCP error -32602: Tool zzz not found"}],"isError":true}}` + "\n")
	if !strings.Contains(got, `"availableTools":["a1","a2","c_new","swap"]`) {
		t.Errorf("the answer shows another list than the client read: %s", got)
	}
}

// A list gone (a list_changed, its TTL) is no longer shown, but a call of
// a name it showed is still never answered: the tool may fail in
// not-found words (here the Python SDK's), which the server wrote after
// running it. An unlisted name is still answered, without data.
func TestListGoneStillGuardsTheNamesItShowed(t *testing.T) {
	for _, gone := range []string{"list_changed", "TTL"} {
		clock := &fakeClock{t: time.Unix(1e9, 0)}
		s := newStepGuard(t, StdioOptions{})
		s.g.guard.seen.now = clock.now
		s.client(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n")
		s.server(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"fail","inputSchema":{"type":"object"}}]}}` + "\n")
		if gone == "TTL" {
			clock.advance(DefaultListTTL)
		} else {
			s.server(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` + "\n")
		}
		s.client(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fail","arguments":{}}}` + "\n")
		own := `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Unknown tool: fail"}],"isError":true}}` + "\n"
		if got := s.server(own); !strings.HasSuffix(got, own) {
			t.Errorf("after its %s, the tool's own answer was replaced: %s", gone, got)
		}
		s.client(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope","arguments":{}}}` + "\n")
		got := s.server(`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Unknown tool: nope"}],"isError":true}}` + "\n")
		if !strings.HasSuffix(got, `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Unknown tool: nope"}}`+"\n") {
			t.Errorf("after its %s, an unlisted name: %s", gone, got)
		}
	}
}

// A list the client asks for anew replaces, for the guard, the one kept
// before, read or not: a reply too long to read or outside the strict
// subset (a tool with "name" twice, whose last one JSON.parse takes)
// leaves no list shown, and b, in the client's newest list, gets its own
// result, even one that reads like a not-found message.
func TestAListAskedAnewIsNeverAnsweredFromTheOneBefore(t *testing.T) {
	for _, reply := range []string{
		`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"b","description":"` + strings.Repeat("d", 300) + `","inputSchema":{"type":"object"}}]}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"x","name":"b","inputSchema":{"type":"object"}}]}}`,
	} {
		s, w, out := listedStdio(t, StdioOptions{MaxServerLineBytes: 300})
		s.clientLine([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
		io.WriteString(w, reply+"\n")
		out.Reset()
		s.clientLine([]byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"b"}}`))
		own := `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Unknown tool: b"}]}}` + "\n"
		io.WriteString(w, own)
		if out.String() != own {
			t.Errorf("after %.60s…: b got %s, want its own result", reply, out.String())
		}
	}
}

// What a client sends is not kept whole: a 2026-07-28 caller's _meta is
// kept as a digest, and a request whose id is longer than any not-found
// answer the guard reads is not tracked.
func TestTheStdioGuardKeepsNoLongClientBytes(t *testing.T) {
	var out bytes.Buffer
	s, err := NewStdio(strings.NewReader(""), &out, StdioOptions{})
	if err != nil {
		t.Fatal(err)
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"x":"` + strings.Repeat("a", 64<<10) + `"}`
	s.clientLine([]byte(strings.TrimSuffix(listLine("1", "", meta), "\n")))
	io.WriteString(s.Writer(), `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}`+"\n")
	s.clientLine([]byte(`{"jsonrpc":"2.0","id":"` + strings.Repeat("i", 64<<10) + `","method":"tools/call","params":{"name":"x"}}`))
	s.guard.seen.mu.Lock()
	defer s.guard.seen.mu.Unlock()
	for k := range s.guard.seen.lists {
		if len(k) > 64 {
			t.Errorf("a list is kept under a key of %d bytes", len(k))
		}
	}
	if len(s.guard.seen.lists) != 1 || len(s.waiting) != 0 {
		t.Errorf("%d lists kept (want 1), %d requests waiting (want 0)", len(s.guard.seen.lists), len(s.waiting))
	}
}

// Two tools/list asked before either answer: the first reply is read and
// kept, the second is not (a tool with "name" twice). The client holds the
// second list: the first is not shown, nor read for a name.
func TestAnUnreadReplyToALaterListRetiresTheListKept(t *testing.T) {
	var out bytes.Buffer
	s, err := NewStdio(strings.NewReader(""), &out, StdioOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w := s.Writer()
	s.clientLine([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	s.clientLine([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
	io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}}`+"\n")
	io.WriteString(w, `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"x","name":"b","inputSchema":{"type":"object"}}]}}`+"\n")
	out.Reset()
	s.clientLine([]byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"b"}}`))
	own := `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Unknown tool: b"}]}}` + "\n"
	io.WriteString(w, own)
	if out.String() != own {
		t.Errorf("b got %s, want its own result", out.String())
	}
}

// Over stdio as over HTTP: a tools/list line the guard does not read may
// get the client a list, and the one kept before is then not shown.
func TestAListLineTheGuardCannotReadRetiresTheListKept(t *testing.T) {
	for _, line := range []string{
		`[{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}]`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{},"x":1}`,
		`{"jsonrpc":"2.0","id":2.0,"method":"tools/list","params":{}}`,
	} {
		s, w, out := listedStdio(t, StdioOptions{})
		s.clientLine([]byte(line))
		io.WriteString(w, `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"b","inputSchema":{"type":"object"}}]}}`+"\n")
		out.Reset()
		s.clientLine([]byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"b"}}`))
		own := `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Unknown tool: b"}]}}` + "\n"
		io.WriteString(w, own)
		if out.String() != own {
			t.Errorf("after %s: b got %s, want its own result", line, out.String())
		}
	}
}

// listedStdio returns a stdio guard whose client was given the list [a],
// the server's side of it, and what the client reads from now on.
func listedStdio(t *testing.T, opts StdioOptions) (*Stdio, io.Writer, *bytes.Buffer) {
	out := new(bytes.Buffer)
	s, err := NewStdio(strings.NewReader(""), out, opts)
	if err != nil {
		t.Fatal(err)
	}
	s.clientLine([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	io.WriteString(s.Writer(), `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}}`+"\n")
	out.Reset()
	return s, s.Writer(), out
}
