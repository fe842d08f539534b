package toolguard

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolguard/toolguard/internal/mcpwire"
)

// FuzzWatchedStream writes an event stream, cut into three writes, as the
// server's answer to a watched call (id 5, tool "nope"): the client must
// read every byte as the server wrote it, but for at most one message
// event that is the server's not-found answer (read whole, as a client
// reads it: after a leading BOM), replaced by the guard's, which the
// client reads as the one message changed.
func FuzzWatchedStream(f *testing.F) {
	note := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n"
	answer := "id: 7\r\nevent: message\r\ndata: " + isErrorReply("5", "MCP error -32602: Tool nope not found") + "\r\n\r\n"
	long := "data: " + strings.Repeat("x", maxNotFoundBytes("nope")+10) + "\r\r"
	f.Add([]byte(note+answer+note), uint16(3), uint16(90))
	f.Add([]byte(long+answer), uint16(8000), uint16(8300))
	f.Add([]byte(note+long+note+answer), uint16(100), uint16(8250))
	f.Add([]byte("data: {}\r\n\r"), uint16(11), uint16(12))
	f.Add([]byte("\xef\xbb\xbf"+answer+note), uint16(2), uint16(40))
	f.Add([]byte(note+"\xef\xbb\xbf\n"+answer), uint16(5), uint16(200))
	f.Add([]byte(":"+strings.Repeat("x", maxNotFoundBytes("nope"))+"\n"+answer), uint16(8200), uint16(8300))
	g := mustGuard(f, Options{Tools: unsure{names: []string{"a"}}})
	f.Fuzz(func(t *testing.T, stream []byte, c1, c2 uint16) {
		a, b := int(c1)%(len(stream)+1), int(c2)%(len(stream)+1)
		a, b = min(a, b), max(a, b)
		next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			for _, part := range [][]byte{stream[:a], stream[a:b], stream[b:]} {
				w.Write(part)
				w.(http.Flusher).Flush()
			}
		})
		w := httptest.NewRecorder()
		g.Handler(next).ServeHTTP(w, newRequest("POST", call("5", `"nope"`), nil))
		got := w.Body.Bytes()
		if bytes.Equal(got, stream) {
			return
		}
		// Otherwise one not-found event of the stream was replaced.
		i := 0
		if bytes.HasPrefix(stream, bom) {
			i = len(bom)
		}
		for i < len(stream) {
			n := mcpwire.EventEnd(stream[i:])
			if n < 0 {
				break
			}
			ev := stream[i : i+n]
			if data, ok := mcpwire.EventMessage(ev); ok && isNotFound(data, []byte("5"), "nope") {
				head, tail := stream[:i], stream[i+n:]
				if bytes.HasPrefix(got, head) && bytes.HasSuffix(got, tail) && len(got) >= len(head)+len(tail) &&
					oneMessageReplaced(mcpwire.EventMessages(stream), mcpwire.EventMessages(got)) {
					return
				}
			}
			i += n
		}
		t.Fatalf("the stream %q (cut at %d, %d) reached the client as %q", stream, a, b, got)
	})
}

// oneMessageReplaced reports whether a client reads got as it reads want
// but for one message, the guard's -32602 answer to the call.
func oneMessageReplaced(want, got [][]byte) bool {
	if len(want) != len(got) {
		return false
	}
	replaced := 0
	for i := range want {
		if !bytes.Equal(want[i], got[i]) {
			if !bytes.Contains(got[i], []byte(`"code":-32602,"message":"Unknown tool: nope`)) {
				return false
			}
			replaced++
		}
	}
	return replaced == 1
}
