package toolguard

import (
	"bytes"
	"net/http"
	"strconv"

	"github.com/toolguard/toolguard/internal/mcpwire"
)

// relayWriter delivers, with the server's answer to a call that passed,
// the messages the server sent the caller on the tool set's own requests
// for that call (what the server would have sent with the call itself):
//
//   - an event stream answer gets them as events before its own;
//   - a JSON answer (200) becomes an event stream, them first, then the
//     answer as one event, which is what a streamable HTTP server sends
//     when it has messages for the caller besides the answer;
//   - any other answer (an HTTP error, 202) is left as it is, and they are
//     lost: it has no place for them.
type relayWriter struct {
	http.ResponseWriter
	msgs    [][]byte
	started bool
	json    bool         // holding a JSON answer until the handler returns
	held    bytes.Buffer // the JSON answer
}

func (w *relayWriter) WriteHeader(code int) {
	if w.started {
		return
	}
	w.started = true
	h := w.Header()
	if code != http.StatusOK {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	switch ct := h.Get("Content-Type"); {
	case mcpwire.IsEventStream(ct):
		h.Del("Content-Length")
		w.ResponseWriter.WriteHeader(code)
		var b []byte
		for _, m := range w.msgs {
			b = appendEvent(b, m)
		}
		w.ResponseWriter.Write(b)
	case mcpwire.IsJSON(ct):
		w.json = true
	default:
		w.ResponseWriter.WriteHeader(code)
	}
}

func (w *relayWriter) Write(p []byte) (int, error) {
	if !w.started {
		w.WriteHeader(http.StatusOK)
	}
	if w.json {
		return w.held.Write(p)
	}
	return w.ResponseWriter.Write(p)
}

// Flush flushes what is not held.
func (w *relayWriter) Flush() {
	if w.json {
		return
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *relayWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish writes a held JSON answer as an event stream: the messages, then
// the answer.
func (w *relayWriter) finish() {
	if !w.json {
		return
	}
	var b []byte
	for _, m := range w.msgs {
		b = appendEvent(b, m)
	}
	b = appendEvent(b, bytes.TrimSpace(w.held.Bytes()))
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.ResponseWriter.WriteHeader(http.StatusOK)
	w.ResponseWriter.Write(b)
}
