package toolguard

// capture keeps the reply of a handler run in process (the tools/list
// Discover sends through the server's handler as the caller), up to a
// size limit.

import (
	"bytes"
	"errors"
	"net/http"
	"sync"
)

// A captureWriter is an http.ResponseWriter that keeps the status, the header and
// up to a limit of the body. A handler its caller stopped waiting for may
// still be writing, so every method is safe for concurrent use.
type captureWriter struct {
	mu     sync.Mutex
	header http.Header
	status int
	// contentType is the Content-Type when the header was written.
	contentType string
	body        bytes.Buffer
	limit       int64
	over        bool
}

// newCaptureWriter returns a captureWriter that keeps at most limit bytes of body.
func newCaptureWriter(limit int64) *captureWriter {
	return &captureWriter{header: http.Header{}, limit: limit}
}

var errTooLarge = errors.New("capture: reply larger than the limit")

// Header returns the reply's header map.
func (w *captureWriter) Header() http.Header { return w.header }

// WriteHeader records the first status written.
func (w *captureWriter) WriteHeader(status int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.setStatus(status)
}

// setStatus records the status of the first header write, and the
// Content-Type the handler had set by then. w.mu is held.
func (w *captureWriter) setStatus(status int) {
	if w.status == 0 {
		w.status = status
		w.contentType = w.header.Get("Content-Type")
	}
}

// Sent returns, while the handler may still be writing, the Content-Type
// of the header it wrote and a copy of the body so far ("" and nil before
// the header was written).
func (w *captureWriter) Sent() (contentType string, body []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.status == 0 {
		return "", nil
	}
	return w.contentType, bytes.Clone(w.body.Bytes())
}

// Write keeps p, or, once the body would pass the limit, nothing more.
func (w *captureWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.setStatus(http.StatusOK)
	if w.over || int64(w.body.Len()+len(p)) > w.limit {
		w.over = true
		return 0, errTooLarge
	}
	return w.body.Write(p)
}

// Flush does nothing: the reply is read whole, once the handler returned.
func (w *captureWriter) Flush() {}

// A capturedReply is what a handler wrote.
type capturedReply struct {
	Status int // 0 if the handler wrote nothing
	Header http.Header
	Body   []byte
	Over   bool // the body passed the limit; Body holds what came before
}

// reply returns what the handler wrote. Read it once the handler returned.
func (w *captureWriter) reply() capturedReply {
	w.mu.Lock()
	defer w.mu.Unlock()
	return capturedReply{Status: w.status, Header: w.header, Body: w.body.Bytes(), Over: w.over}
}
