package toolguard

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The caller is keyed by the request as it reached the guard, before the
// server's handler runs: an auth middleware behind the guard that strips
// the bearer token once it has checked it does not make two callers one.
func TestCallerIsKeyedAsItCameNotAsTheHandlerLeftIt(t *testing.T) {
	perUser := map[string][]string{"Bearer alice": {"alice_secret_tool"}, "Bearer bob": {"bob_tool"}}
	srv := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user := r.Header.Get("Authorization")
		r.Header.Del("Authorization") // validated; not forwarded further
		body, _ := io.ReadAll(r.Body)
		m := readMessage(body)
		id := string(m.id.raw(body))
		w.Header().Set("Content-Type", "application/json")
		if strEquals(body, m.method, "tools/list") {
			io.WriteString(w, listReply(id, perUser[user]...))
			return
		}
		name := string(decoded(nil, body, m.name))
		io.WriteString(w, errorReply(id, -32602, "tool '"+name+"' not found: tool not found"))
	})
	g := mustGuard(t, Options{Tools: unsure{}})
	alice := http.Header{"Authorization": {"Bearer alice"}}
	bob := http.Header{"Authorization": {"Bearer bob"}}
	serve(g, srv, newRequest("POST", listCall("1", ""), alice))
	w := serve(g, srv, newRequest("POST", call("9", `"nope"`), bob))
	if strings.Contains(w.Body.String(), "alice_secret_tool") {
		t.Errorf("bob, who never listed, was shown alice's list: %s", w.Body)
	}
}

// A list_changed in the answer to a watched call drops the list, whether
// the event stream is streamed or held whole (a stated Content-Length),
// before the not-found event that follows it is translated.
func TestListChangedInAHeldEventStreamDropsTheList(t *testing.T) {
	for _, withLength := range []bool{false, true} {
		g := listedGuard(t, Options{}, "old_tool", "other")
		stream := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n" +
			"event: message\ndata: " + errorReply("5", -32602, "tool 'nope' not found: tool not found") + "\n\n"
		next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			if withLength {
				w.Header().Set("Content-Length", itoa(len(stream)))
			}
			io.WriteString(w, stream)
		})
		w := serve(g, next, newRequest("POST", call("5", `"nope"`), nil))
		if strings.Contains(w.Body.String(), "old_tool") {
			t.Errorf("Content-Length %v: the list the server said had changed was shown: %q", withLength, w.Body)
		}
	}
}

// A tools/list whose params hold "cursor" and "Cursor" is read as a
// case-sensitive server reads it (go-sdk, JSON.parse, json.loads), or not
// at all: page 2 is never kept as the whole list, so a tool of page 1 is
// never taken for absent.
func TestListCursorIsReadAsServersReadIt(t *testing.T) {
	names := []string{"a_runner", "b", "c", "d"}
	srv := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			ID     json.RawMessage            `json:"id"`
			Method string                     `json:"method"`
			Params map[string]json.RawMessage `json:"params"` // map keys: exact, as JSON.parse reads them
		}
		json.Unmarshal(body, &msg)
		id := string(msg.ID)
		w.Header().Set("Content-Type", "application/json")
		if msg.Method == "tools/list" {
			if string(msg.Params["cursor"]) == `"2"` {
				io.WriteString(w, listReply(id, names[2:]...))
				return
			}
			r := listReply(id, names[:2]...)
			io.WriteString(w, strings.TrimSuffix(r, "}}")+`,"nextCursor":"2"}}`)
			return
		}
		// a_runner runs another tool by name; that one is missing.
		io.WriteString(w, isErrorReply(id, "Tool not found"))
	})
	g := mustGuard(t, Options{Tools: unsure{}})
	serve(g, srv, newRequest("POST", listCall("1", ""), nil))
	serve(g, srv, newRequest("POST", `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"2","Cursor":""}}`, nil))
	w := serve(g, srv, newRequest("POST", call("9", `"a_runner"`), nil))
	if want := isErrorReply("9", "Tool not found"); w.Body.String() != want {
		t.Errorf("the listed tool's own error became %s", w.Body)
	}
}

// In a watched call's event stream, a list_changed that comes after the
// replaced not-found event still drops the list.
func TestListChangedAfterTheAnswerInAStreamDropsTheList(t *testing.T) {
	stream := "event: message\ndata: " + errorReply("5", -32602, "tool 'nope' not found: tool not found") + "\n\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n"
	for _, size := range []int{7, len(stream)} {
		g := listedGuard(t, Options{}, "old_tool", "other")
		serve(g, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			for i := 0; i < len(stream); i += size {
				io.WriteString(w, stream[i:min(i+size, len(stream))])
			}
		}), newRequest("POST", call("5", `"nope"`), nil))
		notFound := answering(200, "application/json", errorReply("6", -32602, "tool 'nope' not found: tool not found"))
		if w := serve(g, notFound, newRequest("POST", call("6", `"nope"`), nil)); strings.Contains(w.Body.String(), "old_tool") {
			t.Errorf("writes of %d: the list was kept after list_changed: %s", size, w.Body)
		}
	}
}
