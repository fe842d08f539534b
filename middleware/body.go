package toolguard

import (
	"io"
	"net/http"
	"slices"
	"sync"
)

// Buffers of up to maxPooled bytes are reused across requests; a larger one
// (a body over 64 KiB) is left to the garbage collector, so that a small
// body never takes or keeps a large buffer.
const maxPooled = 64 << 10

type buffer struct{ b []byte }

var buffers = sync.Pool{New: func() any { return &buffer{b: make([]byte, 0, 2048)} }}

func getBuffer() *buffer { return buffers.Get().(*buffer) }

func putBuffer(b *buffer) {
	if cap(b.b) <= maxPooled {
		b.b = b.b[:0]
		buffers.Put(b)
	}
}

// readBody reads at most limit+1 bytes of body (of about hint bytes; 0:
// unknown) into a pooled buffer, made for hint (+1, to see EOF) up to 64
// KiB and grown fourfold past that as bytes come: a client that states a
// length and stalls holds little. eof reports that the whole body was read; err
// is a read error other than io.EOF, to be handed on to the next handler.
func readBody(body io.Reader, limit, hint int64) (buf *buffer, eof bool, err error) {
	buf = getBuffer()
	b := buf.b[:0]
	if hint > 0 && hint <= limit {
		b = slices.Grow(b, int(min(hint, maxPooled))+1)
	}
	for int64(len(b)) <= limit {
		if len(b) == cap(b) {
			grow := int64(max(cap(b), 512))
			if hint > int64(len(b)) {
				grow = min(3*grow, hint+1-int64(len(b))) // four times the size, up to hint+1
			}
			b = slices.Grow(b, int(min(grow, limit+1-int64(len(b)))))
		}
		n, rerr := body.Read(b[len(b):min(int64(cap(b)), limit+1)])
		b = b[:len(b)+n]
		if rerr == io.EOF {
			eof = true
			break
		}
		if rerr != nil {
			err = rerr
			break
		}
	}
	buf.b = b
	return buf, eof, err
}

// replayBody gives the next handler the bytes the middleware read, then the
// read error it met (if any), then the rest of the original body.
//
// The buffer goes back as soon as it is no longer needed: when the next
// handler has read the last byte of it, or closes the body. A server that
// reads the whole body first (as the SDKs do) thus holds the body once, in
// its own copy, for the rest of the request, not twice.
//
// It may be read after the handler returned, and concurrently with that
// return: httputil.ReverseProxy's transport can still be sending the body
// upstream when the upstream has answered early. A mutex keeps the buffer
// from going back to the pool while a Read copies from it, and once
// Handler has ended the body, what was not read of the buffer is gone and
// a late Read fails instead of sending the rest of the body without it.
type replayBody struct {
	mu   sync.Mutex
	buf  *buffer
	data []byte
	err  error // a read error met by the middleware, returned after data
	eof  bool  // the original body is exhausted
	rest io.ReadCloser

	closed bool
	ended  bool // ended by Handler with bytes of the buffer unread
}

func (b *replayBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return b.rest.Read(p) // whatever the original body says after Close
	}
	if b.ended {
		return 0, http.ErrBodyReadAfterClose
	}
	if len(b.data) > 0 {
		n := copy(p, b.data)
		b.data = b.data[n:]
		if len(b.data) == 0 {
			b.release()
		}
		return n, nil
	}
	switch {
	case b.err != nil:
		return 0, b.err
	case b.eof:
		return 0, io.EOF
	}
	return b.rest.Read(p)
}

func (b *replayBody) Close() error {
	b.mu.Lock()
	b.closed = true
	b.release()
	b.mu.Unlock()
	return b.rest.Close()
}

// end is called by Handler when the next handler has returned: the buffer
// goes back, and a Read of bytes that were in it fails from now on.
func (b *replayBody) end() {
	b.mu.Lock()
	b.ended = len(b.data) > 0
	b.release()
	b.mu.Unlock()
}

// release gives the buffer back (to the pool, or to the garbage collector
// when it is too large to keep) and drops every reference to it. Reads
// after it see no more buffered bytes. It is idempotent; b.mu is held.
func (b *replayBody) release() {
	if b.buf != nil {
		b.data = nil
		putBuffer(b.buf)
		b.buf = nil
	}
}
