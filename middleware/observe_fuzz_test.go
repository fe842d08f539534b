package toolguard

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/toolguard/toolguard/internal/mcpwire"
)

// FuzzObservedList: whatever the server answers to the caller's tools/list
// (any bytes, JSON or an event stream, cut into writes anywhere), the
// caller gets exactly those bytes, and a list the guard keeps is the one
// encoding/json reads in the answer (sorted, unique), shown without the
// called name.
func FuzzObservedList(f *testing.F) {
	f.Add([]byte(listReply(`"l"`, "a", "b")), false, uint16(3))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"l","result":{"tools":[{"name":"x"},{"name":"x"}],"nextCursor":null}}`), false, uint16(0))
	f.Add([]byte("event: message\ndata: "+listReply(`"l"`, "a")+"\n\n"), true, uint16(9))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"l","result":{"tools":[{"name":"a","Name":"b"}]}}`), false, uint16(1))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"l","result":{"tools":[{"name":"a"}],"nextCursor":"2"}}`), false, uint16(1))
	f.Fuzz(func(t *testing.T, reply []byte, stream bool, cut uint16) {
		ct := "application/json"
		if stream {
			ct = "text/event-stream"
		}
		g := mustGuard(t, Options{Tools: unsure{}, ToolListLimit: 1 << 20})
		w := httptest.NewRecorder()
		g.Handler(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Type", ct)
			i := int(cut) % (len(reply) + 1)
			rw.Write(reply[:i])
			rw.(http.Flusher).Flush()
			rw.Write(reply[i:])
		})).ServeHTTP(w, newRequest("POST", listCall(`"l"`, ""), nil))
		if w.Body.String() != string(reply) {
			t.Fatalf("the caller got %q, the server wrote %q", w.Body, reply)
		}
		l := g.seen.get(callerKey(newRequest("POST", "", nil), nil))
		if l == nil {
			return
		}
		msg := reply
		if stream {
			if msg = findSSEReply(reply, []byte(`"l"`)); msg == nil {
				t.Fatalf("a list kept from a stream with no reply: %q", reply)
			}
		}
		var v struct {
			Result struct {
				Tools []struct {
					Name string `json:"name"`
				} `json:"tools"`
				NextCursor string `json:"nextCursor"`
			} `json:"result"`
		}
		if err := json.Unmarshal(msg, &v); err != nil {
			t.Fatalf("a list kept from a reply encoding/json refuses (%v): %q", err, msg)
		}
		var want []string
		for _, tool := range v.Result.Tools {
			want = append(want, tool.Name)
		}
		if v.Result.NextCursor != "" {
			t.Fatalf("a first page kept as a whole list: %q", msg)
		}
		if want = sortedList(want); !slices.Equal(l.sorted, want) {
			t.Fatalf("kept %q, encoding/json reads %q in %q", l.sorted, want, msg)
		}
	})
}

// FuzzListChangedIsNeverMissed: a message encoding/json reads as a
// notifications/tools/list_changed is one to the guard too, inside the
// strict subset or not; inside it, the guard reads the method encoding/json
// reads.
func FuzzListChangedIsNeverMissed(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`))
	f.Add([]byte(`{"method":"notifications\/tools\/list\u005Fchanged","params":{"a":"\ud800"}}`))
	f.Add([]byte(`{"Method":"notifications/tools/list_changed","id":1e999}`))
	f.Add([]byte(`{"method":"notifications/tools/list_changed","method":"x"}`))
	f.Fuzz(func(t *testing.T, msg []byte) {
		var v struct{ Method string }
		err := json.Unmarshal(msg, &v)
		changed := err == nil && v.Method == listChangedMethod
		if changed && !isListChanged(msg) {
			t.Fatalf("encoding/json reads a list_changed, the guard does not: %q", msg)
		}
		if r, ok := readEnvelope(msg, nil, nil); ok && err == nil && r.method.kind == kString && strEquals(msg, r.method, listChangedMethod) != changed {
			t.Fatalf("inside the strict subset the guard reads another method than encoding/json: %q", msg)
		}
	})
}

// FuzzSessionStream: whatever the session's own stream (GET) carries, cut
// into writes anywhere, the client gets exactly those bytes, and the
// session's lists are dropped exactly when the stream holds a list_changed
// the client can read (every event being within the bound read).
func FuzzSessionStream(f *testing.F) {
	changed := `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`
	f.Add([]byte("event: message\ndata: "+changed+"\n\n"), uint16(5))
	f.Add([]byte("\xef\xbb\xbfdata: "+changed+"\r\r"), uint16(3))
	f.Add([]byte(": ping\r\n\r\nevent: note\ndata: "+changed+"\n\n"), uint16(9))
	f.Add([]byte("data: "+changed+"\n"), uint16(1))
	f.Fuzz(func(t *testing.T, stream []byte, cut uint16) {
		if len(stream) > maxNotificationBytes {
			return
		}
		session := http.Header{"Mcp-Session-Id": {"s"}}
		g := mustGuard(t, Options{Tools: unsure{}})
		serve(g, &listingServer{names: []string{"a"}}, newRequest("POST", listCall("1", ""), session))
		w := httptest.NewRecorder()
		g.Handler(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Type", "text/event-stream")
			i := int(cut) % (len(stream) + 1)
			rw.Write(stream[:i])
			rw.(http.Flusher).Flush()
			rw.Write(stream[i:])
		})).ServeHTTP(w, newRequest("GET", "", session))
		if w.Body.String() != string(stream) {
			t.Fatalf("the client got %q, the server wrote %q", w.Body, stream)
		}
		announced := slices.ContainsFunc(mcpwire.EventMessages(stream), isListChanged)
		g.seen.mu.Lock()
		kept := g.seen.shownLists()
		g.seen.mu.Unlock()
		if announced != (kept == 0) {
			t.Fatalf("list_changed readable: %v, lists kept: %d, in %q", announced, kept, stream)
		}
	})
}
