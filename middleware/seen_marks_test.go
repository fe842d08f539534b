package toolguard

import (
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/toolguard/toolguard/internal/mcpwire"
)

// clearEnds makes the guard clear its per-session counts (epoch++), as
// 10000 DELETEs of other sessions do.
func clearEnds(g *Guard) {
	for i := 0; i <= maxSeenCallers; i++ {
		serve(g, answering(200, "", ""), newRequest("DELETE", "", http.Header{"Mcp-Session-Id": {"other-" + itoa(i+1)}}))
	}
}

// A page 1 asked before a list_changed (answered after it, in the same
// stream) starts a run; its page 2, asked after the change, is not of that
// list, even once another 10,000 sessions' DELETEs have cleared the counts
// (and page 2 is asked at a count of 0 again).
func TestPagesAcrossAListChangedStayApartWhenTheCountsAreCleared(t *testing.T) {
	changed := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n"
	page1 := "event: message\ndata: " + strings.TrimSuffix(listReply("1", "old_a", "old_b"), "}}") + `,"nextCursor":"2"}}` + "\n\n"
	page2 := listReply("2", "new_c")
	for _, clear := range []bool{false, true} {
		session := http.Header{"Mcp-Session-Id": {"s-1"}}
		g := mustGuard(t, Options{Tools: unsure{}})
		serve(g, answering(200, "text/event-stream", changed+page1), newRequest("POST", listCall("1", ""), session))
		if clear {
			clearEnds(g)
		}
		serve(g, answering(200, "application/json", page2), newRequest("POST", listCall("2", "2"), session))
		got := callUnknown(g, "nope", session)
		if strings.Contains(got, "availableTools") {
			t.Errorf("clear=%v: a list joined across a list_changed is kept and shown: %s", clear, got)
		}
	}
}

// The same, on seenLists alone.
func TestPagesAcrossAListChangedStayApartWhenTheCountsAreClearedUnit(t *testing.T) {
	s := newSeenLists(DefaultListTTL)
	m1 := s.mark("S")
	s.dropSession("S", false) // list_changed while page 1 is in flight
	s.page("K", "S", "", m1, mcpwire.Page{Names: []string{"old_a"}, NextCursor: "2"})
	m2 := s.mark("S")
	if m2.changes == 0 {
		t.Fatal("setup")
	}
	for i := range maxSeenCallers {
		s.dropSession("x"+itoa(i+1), true)
	}
	m3 := s.mark("S")
	s.page("K", "S", "2", m3, mcpwire.Page{Names: []string{"new_c"}})
	if l := s.get("K"); l.shown() {
		t.Errorf("page 2 asked after the list_changed joined page 1 asked before it: %v (marks %+v then %+v)", l.sorted, m2, m3)
	}
}

// A run whose counts were cleared between its pages (another 10,000
// sessions ended) cannot tell a list_changed from none: its next page
// drops it (the list is not kept; the client lists again), and no run is
// left behind.
func TestARunAcrossAClearOfTheCountsIsDropped(t *testing.T) {
	session := http.Header{"Mcp-Session-Id": {"s-1"}}
	g := mustGuard(t, Options{Tools: unsure{}})
	srv := &listingServer{names: []string{"a", "b", "c"}, pageSize: 2}
	serve(g, srv, newRequest("POST", listCall("1", ""), session))
	clearEnds(g)
	serve(g, srv, newRequest("POST", listCall("2", "2"), session))
	if got := callUnknown(g, "nope", session); strings.Contains(got, "availableTools") {
		t.Errorf("a list read across a clear was kept: %s", got)
	}
	g.seen.mu.Lock()
	defer g.seen.mu.Unlock()
	if len(g.seen.runs) != 0 {
		t.Errorf("runs held: %d", len(g.seen.runs))
	}
}

// Over maxSeenCallers by one, bound drops one gone list, not all of them:
// the others' names still guard their calls.
func TestBoundDropsOnlyWhatItMustOfTheGoneLists(t *testing.T) {
	s := newSeenLists(DefaultListTTL)
	for i := range 5000 {
		s.page("g"+itoa(i+1), "G", "", s.mark("G"), mcpwire.Page{Names: []string{"fail"}})
	}
	s.dropSession("G", false)
	for i := range 5001 {
		s.page("h"+itoa(i+1), "H", "", s.mark("H"), mcpwire.Page{Names: []string{"x"}})
	}
	s.mu.Lock()
	n := len(s.lists)
	s.mu.Unlock()
	if n != maxSeenCallers {
		t.Errorf("over by one, %d lists left of %d (bound %d)", n, 10001, maxSeenCallers)
	}
	if st := s.get("g1").state("fail"); st != listHas {
		t.Errorf("a gone list's name: state %d", st)
	}
}

// Stdio: tools/list 1, list_changed, tools/list 2; the server answers 2
// (the new list), then 1 (the list before). The late answer to 1, asked
// before the change, does not replace the newer list: a tool only the new
// list has, failing in not-found words, keeps its own answer.
func TestStdioLateFirstPageAskedBeforeAListChangedKeepsTheNewerList(t *testing.T) {
	s := newStepGuard(t, StdioOptions{})
	s.client(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n")
	s.server(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` + "\n")
	s.client(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n")
	s.server(`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"new_tool","inputSchema":{"type":"object"}}]}}` + "\n")
	s.server(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"old_tool","inputSchema":{"type":"object"}}]}}` + "\n")
	s.client(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"new_tool","arguments":{}}}` + "\n")
	own := `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Unknown tool: new_tool"}],"isError":true}}` + "\n"
	if got := s.server(own); got != own {
		t.Errorf("the tool's own answer was replaced: %s", got)
	}
}

// The session ids callers send (a DELETE, an initialize in a session,
// before the server has checked them) are not kept: a caller sending large
// made-up ids does not make the guard hold them.
func TestSessionIDsCallersSendAreNotKept(t *testing.T) {
	g := mustGuard(t, Options{Tools: unsure{}})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range 200 {
		id := itoa(i) + strings.Repeat("s", 256<<10)
		serve(g, answering(404, "", ""), newRequest("DELETE", "", http.Header{"Mcp-Session-Id": {id}}))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 8<<20 {
		t.Errorf("the heap grew by %d MiB after 200 DELETEs of 256 KiB session ids", grew>>20)
	}
	runtime.KeepAlive(g)
}
