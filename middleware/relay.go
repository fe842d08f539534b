package toolguard

import (
	"bufio"
	"net"
	"net/http"

	"github.com/toolguard/toolguard/internal/mcpwire"
)

// relayWriter delivers, with the server's answer to a call that passed,
// the messages the server sent the caller on the tool set's own requests
// for that call (what the server would have sent with the call itself):
//
//   - an event stream answer gets them as events before its own;
//   - a JSON answer (200) becomes an event stream: them first, then the
//     answer as one event, its lines data lines as it is written (what a
//     streamable HTTP server sends when it has messages for the caller
//     besides the answer);
//   - any other answer (an HTTP error, 202, an encoded body such as gzip)
//     is left as it is, and they are lost: it has no place for them.
//
// Informational (1xx) headers go through as they come.
type relayWriter struct {
	http.ResponseWriter
	msgs    [][]byte
	started bool
	json    bool // the answer is a JSON message being written as one event
	cr      bool // the last byte written of it was a CR
}

func (w *relayWriter) WriteHeader(code int) {
	if w.started {
		return
	}
	if code >= 100 && code < 200 {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.started = true
	h := w.Header()
	ct := h.Get("Content-Type")
	enc := h.Get("Content-Encoding")
	if code != http.StatusOK || enc != "" && enc != "identity" || !mcpwire.IsEventStream(ct) && !mcpwire.IsJSON(ct) {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	b := appendEvents(nil, w.msgs)
	h.Del("Content-Length")
	if mcpwire.IsJSON(ct) {
		w.json = true
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		b = append(b, "event: message\ndata: "...)
	}
	w.ResponseWriter.WriteHeader(code)
	w.ResponseWriter.Write(b)
}

func (w *relayWriter) Write(p []byte) (int, error) {
	if !w.started {
		w.WriteHeader(http.StatusOK)
	}
	if !w.json {
		return w.ResponseWriter.Write(p)
	}
	// Each line of the JSON answer is a data line of its event.
	out := make([]byte, 0, len(p)+16)
	for _, c := range p {
		switch {
		case c == '\n' && w.cr:
			// the LF of a CRLF already ended the line
		case c == '\r' || c == '\n':
			out = append(out, "\ndata: "...)
		default:
			out = append(out, c)
		}
		w.cr = c == '\r'
	}
	if _, err := w.ResponseWriter.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush sends what was written; a flush before anything was written sends
// the status line as the handler set it (200 and its headers).
func (w *relayWriter) Flush() {
	if !w.started {
		w.WriteHeader(http.StatusOK)
	}
	http.NewResponseController(w.ResponseWriter).Flush()
}

// Hijack hands over the connection, when the writer beneath can.
func (w *relayWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

func (w *relayWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish ends the event of a JSON answer.
func (w *relayWriter) finish() {
	if w.json {
		w.ResponseWriter.Write([]byte("\n\n"))
	}
}
