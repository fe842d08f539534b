package toolguard

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"strings"
	"testing"
	"testing/iotest"
)

// throughGuard sends body (read through src) to a guard with the given
// limit and returns what the next handler read, and whether it was called.
func throughGuard(t testing.TB, limit int64, src io.Reader, contentLength int64) (got []byte, err error, called bool) {
	g := mustGuard(t, Options{MaxBodyBytes: limit})
	r := httptest.NewRequest("POST", "/mcp", nil)
	r.Body = io.NopCloser(src)
	r.ContentLength = contentLength
	r.Header.Set("Content-Type", "application/json")
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		called = true
		got, err = io.ReadAll(r.Body)
	})
	g.Handler(next).ServeHTTP(httptest.NewRecorder(), r)
	return got, err, called
}

// randomBody returns a body of n bytes: JSON-RPC requests of many shapes,
// padded or cut, or plain noise.
func randomBody(rng *rand.Rand, n int) []byte {
	var b []byte
	switch rng.IntN(3) {
	case 0:
		b = []byte(call("1", `"get_weather"`))
	case 1:
		b = []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	}
	for len(b) < n {
		b = append(b, byte(rng.IntN(256)))
	}
	if rng.IntN(2) == 0 && n > 2 {
		// A valid tools/call padded with whitespace to size.
		b = []byte(call("3", `"get_weather"`))
		for len(b) < n {
			b = append(b, ' ')
		}
	}
	return b[:n]
}

func TestBodyIntegrity(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const limit = 4096
	sizes := []int{0, 1, 100, limit - 1, limit, limit + 1, 2 * limit, 3*limit + 17, 1 << 20}
	for i := 0; i < 300; i++ {
		sizes = append(sizes, rng.IntN(4*limit))
	}
	for _, n := range sizes {
		body := randomBody(rng, n)
		readers := map[string]io.Reader{
			"whole":    bytes.NewReader(body),
			"one byte": iotest.OneByteReader(bytes.NewReader(body)),
			"half":     iotest.HalfReader(bytes.NewReader(body)),
			"data err": iotest.DataErrReader(bytes.NewReader(body)),
		}
		for name, src := range readers {
			cl := int64(n)
			if rng.IntN(2) == 0 {
				cl = -1 // unknown length
			}
			got, err, called := throughGuard(t, limit, src, cl)
			if !called {
				t.Fatalf("%d bytes (%s): next not called", n, name)
			}
			if err != nil || !bytes.Equal(got, body) {
				t.Fatalf("%d bytes (%s): next read %d bytes, %v", n, name, len(got), err)
			}
		}
	}
}

func TestBodyReadErrorReachesNext(t *testing.T) {
	boom := errors.New("connection reset")
	prefix := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"`)
	for _, limit := range []int64{10, 1 << 20} {
		src := io.MultiReader(bytes.NewReader(prefix), iotest.ErrReader(boom))
		got, err, called := throughGuard(t, limit, src, -1)
		if !called {
			t.Fatalf("limit %d: next not called", limit)
		}
		if !errors.Is(err, boom) {
			t.Errorf("limit %d: next read %q with error %v, want %v", limit, got, err, boom)
		}
		if !bytes.Equal(got, prefix) {
			t.Errorf("limit %d: next read %q before the error", limit, got)
		}
	}
}

// countingReader counts the bytes read from it, to show a large body is
// streamed rather than held whole.
type countingReader struct {
	r    io.Reader
	read int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.read += int64(n)
	return n, err
}

func TestLargeBodyNotHeldWhole(t *testing.T) {
	const limit = 1 << 10
	big := bytes.Repeat([]byte("x"), 64<<20)
	src := &countingReader{r: bytes.NewReader(big)}
	g := mustGuard(t, Options{MaxBodyBytes: limit})
	r := httptest.NewRequest("POST", "/mcp", nil)
	r.Body = io.NopCloser(src)
	r.ContentLength = -1
	r.Header.Set("Content-Type", "application/json")
	var seenBefore int64 = -1
	var total int64
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seenBefore = src.read
		buf := make([]byte, 32<<10)
		for {
			n, err := r.Body.Read(buf)
			if !bytes.Equal(buf[:n], big[total:total+int64(n)]) {
				t.Fatal("body differs")
			}
			total += int64(n)
			if err != nil {
				break
			}
		}
	})
	g.Handler(next).ServeHTTP(httptest.NewRecorder(), r)
	if seenBefore < 0 || seenBefore > limit+1 {
		t.Errorf("middleware read %d bytes before handing on, limit %d", seenBefore, limit)
	}
	if total != int64(len(big)) {
		t.Errorf("next read %d of %d bytes", total, len(big))
	}
}

func FuzzBodyIntegrity(f *testing.F) {
	f.Add([]byte(knownCall), uint16(4096))
	f.Add([]byte(call("1", `"nope"`)), uint16(10))
	f.Fuzz(func(t *testing.T, body []byte, limit uint16) {
		got, err, called := throughGuard(t, int64(limit)+1, bytes.NewReader(body), -1)
		if !called {
			// Only a rejection stops a request: the body must be a strict
			// tools/call naming an unknown tool.
			m := readMessage(body)
			if !m.strict || m.name.kind != kString {
				t.Fatalf("request stopped that is no strict tools/call: %q", body)
			}
			return
		}
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("next read %q, %v; want %q", got, err, body)
		}
	})
}

func readAll(r io.ReadCloser) ([]byte, error) { return io.ReadAll(r) }

// TestBodyBufferReleasedEarly checks that the guard's copy of the body is
// given back as soon as the next handler has read it to the end or closed
// it, while the handler still runs, and that what the handler reads does not
// change.
func TestBodyBufferReleasedEarly(t *testing.T) {
	body := []byte(knownCall)
	large := append([]byte(knownCall), bytes.Repeat([]byte(" "), maxPooled+10)...)
	huge := append([]byte(knownCall), bytes.Repeat([]byte(" "), 4*maxPooled+10)...)
	tests := []struct {
		name string
		body []byte
		use  func(r io.ReadCloser) ([]byte, error)
	}{
		{"read all", body, readAll},
		{"read all, larger than the pool keeps", large, readAll},
		{"read all, far larger", huge, readAll},
		{"one byte at a time", body, func(r io.ReadCloser) ([]byte, error) { return io.ReadAll(iotest.OneByteReader(r)) }},
		{"exact length then stop", body, func(r io.ReadCloser) ([]byte, error) {
			p := make([]byte, len(body))
			_, err := io.ReadFull(r, p)
			return p, err
		}},
		{"close unread", body, func(r io.ReadCloser) ([]byte, error) { return body, r.Close() }},
		{"half then close", body, func(r io.ReadCloser) ([]byte, error) {
			p := make([]byte, len(body)/2)
			_, err := io.ReadFull(r, p)
			if err == nil {
				err = r.Close()
			}
			return body, err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := mustGuard(t, Options{MaxBodyBytes: 8 * maxPooled})
			r := httptest.NewRequest("POST", "/mcp", bytes.NewReader(tt.body))
			r.Header.Set("Content-Type", "application/json")
			called := false
			next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				called = true
				rb, ok := r.Body.(*replayBody)
				if !ok {
					t.Fatalf("body is %T", r.Body)
				}
				if rb.buf == nil {
					t.Fatal("buffer released before the body was read")
				}
				got, err := tt.use(r.Body)
				if err != nil || !bytes.Equal(got, tt.body) {
					t.Fatalf("read %d bytes, %v", len(got), err)
				}
				if rb.buf != nil || rb.data != nil {
					t.Error("buffer still held after the body was read to the end or closed")
				}
				// Reading on sees the end (or the original body's answer
				// after Close), never old buffered bytes.
				if n, _ := r.Body.Read(make([]byte, 8)); n != 0 {
					t.Errorf("read %d more bytes", n)
				}
			})
			g.Handler(next).ServeHTTP(httptest.NewRecorder(), r)
			if !called {
				t.Fatal("next not called")
			}
		})
	}
}

// TestBodyReadAfterCloseLikeOriginal checks that after Close the next
// handler gets what the original body answers, as without the guard.
func TestBodyReadAfterCloseLikeOriginal(t *testing.T) {
	srv := httptest.NewServer(mustGuard(t, Options{}).Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body.Close()
		_, err := r.Body.Read(make([]byte, 8))
		if err == nil || err == io.EOF {
			t.Errorf("read after close: %v, want the server's error", err)
		}
	})))
	defer srv.Close()
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(knownCall))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// A buffer grown for a large body is never pooled: a small body never
// takes it, and the pool never keeps it.
func TestALargeBufferIsNeverPooled(t *testing.T) {
	for range 100 {
		putBuffer(&buffer{b: make([]byte, 0, 2*maxPooled)})
		if b := getBuffer(); cap(b.b) > maxPooled {
			t.Fatalf("a body got a pooled buffer of %d bytes", cap(b.b))
		}
	}
}

// httputil.ReverseProxy can still be sending the body upstream after the
// handler returned (the upstream answered early, without reading it): the
// guard's buffer must not go back to the pool while that read copies from
// it (go test -race sees it), and such a late read fails rather than
// sending the rest of the body without its start.
func TestBodyReadByAProxyAfterTheHandlerReturned(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusRequestEntityTooLarge) // without reading the body
	}))
	defer up.Close()
	proxy := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.Out.URL.Scheme, pr.Out.URL.Host = "http", up.Listener.Addr().String()
	}}
	g := mustGuard(t, Options{Tools: unsure{names: []string{"a"}}})
	front := httptest.NewServer(g.Handler(proxy))
	defer front.Close()
	body := append([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping","x":"`), bytes.Repeat([]byte("y"), 3<<20)...)
	body = append(body, `"}`...)
	for range 20 {
		resp, err := http.Post(front.URL, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}

	// A read after end: the unread bytes of the buffer are gone.
	buf := getBuffer()
	buf.b = append(buf.b, "abcdef"...)
	rb := &replayBody{buf: buf, data: buf.b, eof: true, rest: http.NoBody}
	p := make([]byte, 2)
	if n, err := rb.Read(p); n != 2 || err != nil {
		t.Fatalf("read %d, %v", n, err)
	}
	rb.end()
	if n, err := rb.Read(p); n != 0 || err != http.ErrBodyReadAfterClose {
		t.Errorf("after end: read %d, %v", n, err)
	}
}

// A body's stated length is not allocated before its bytes come: a client
// that states 4 MiB and stalls after a few bytes holds at most 64 KiB.
func TestAStatedLengthIsNotAllocatedBeforeTheBytesCome(t *testing.T) {
	stalled := io.MultiReader(strings.NewReader(`{"jsonrpc"`), iotest.ErrReader(errors.New("read timeout")))
	buf, _, err := readBody(stalled, DefaultMaxBodyBytes, DefaultMaxBodyBytes)
	if err == nil || len(buf.b) != 10 || cap(buf.b) > 96<<10 { // (64 KiB and the size class above)
		t.Errorf("read %d bytes into %d (err %v), want 10 into about 64 KiB", len(buf.b), cap(buf.b), err)
	}
	// A body that comes whole still ends in one buffer of its length.
	whole := strings.Repeat("x", 1<<20)
	buf, eof, _ := readBody(strings.NewReader(whole), DefaultMaxBodyBytes, int64(len(whole)))
	if !eof || string(buf.b) != whole || cap(buf.b) > 2<<20 {
		t.Errorf("eof %v, %d bytes in %d", eof, len(buf.b), cap(buf.b))
	}
}
