package main

import (
	"bytes"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// gatedWriter holds every Write until open is closed, and says when the
// first one has begun.
type gatedWriter struct {
	open    chan struct{}
	started chan struct{}
	once    sync.Once
	mu      sync.Mutex
	got     bytes.Buffer
}

func (w *gatedWriter) Write(b []byte) (int, error) {
	w.once.Do(func() { close(w.started) })
	<-w.open
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.got.Write(b)
}

// copyServerOut copies out to w in small reads, as the wrapper copies the
// server's output to the client, and closes drained when done.
func copyServerOut(w io.Writer, out *serverOut) (drained chan struct{}) {
	drained = make(chan struct{})
	go func() {
		io.CopyBuffer(w, out, make([]byte, 16))
		close(drained)
	}()
	return drained
}

// The server has exited and its output is closed, but the client has not
// read yet: however many ticks pass while the copy waits on the client,
// everything the server wrote reaches it.
func TestServerOutputWaitsForASlowClient(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Repeat("0123456789", 100)
	w.WriteString(want)
	w.Close() // the server is gone
	client := &gatedWriter{open: make(chan struct{}), started: make(chan struct{})}
	out := &serverOut{f: r}
	drained := copyServerOut(client, out)
	<-client.started // the copy waits on the client, the pipe still full
	tick := make(chan time.Time)
	done := make(chan struct{})
	go func() { awaitDrained(drained, out, tick, nil, false); close(done) }()
	ticked := make(chan struct{})
	go func() {
		for range 5 {
			select {
			case tick <- time.Time{}:
			case <-done:
				return
			}
		}
		close(ticked)
	}()
	select {
	case <-ticked:
	case <-time.After(time.Minute): // only where it fails: it took one tick and closed the pipe
		close(client.open)
		t.Fatal("awaitDrained stopped at a tick while the copy waited on the client")
	}
	close(client.open) // the client reads at last
	<-done
	if got := client.got.String(); got != want {
		t.Errorf("the client got %d bytes of %d", len(got), len(want))
	}
}

// A process outside the group (one that called setsid) holds the server's
// output open and writes nothing: once the copy has waited on it from one
// tick to the next, it is closed and the wrapper can end.
func TestServerOutputHeldElsewhereIsClosed(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close() // held open until the end of the test
	w.WriteString("last words\n")
	client := &gatedWriter{open: make(chan struct{}), started: make(chan struct{})}
	close(client.open)
	out := &serverOut{f: r}
	drained := copyServerOut(client, out)
	<-client.started
	tick := make(chan time.Time)
	done := make(chan struct{})
	go func() { awaitDrained(drained, out, tick, nil, false); close(done) }()
	for waiting := true; waiting; {
		select {
		case tick <- time.Time{}:
		case <-done:
			waiting = false
		}
	}
	client.mu.Lock()
	defer client.mu.Unlock()
	if got := client.got.String(); got != "last words\n" {
		t.Errorf("the client got %q", got)
	}
}

// A read that began just before a tick, after the copy had waited a whole
// tick on the client, has not waited a whole tick: the server's output is
// not closed, and what it holds can still be read.
func TestServerOutputReadJustBegunIsNotClosed(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	w.WriteString("what the server wrote\n")
	w.Close()
	out := &serverOut{f: r}
	out.seq.Store(2) // a read has returned; the copy writes to the client
	drained, tick, done := make(chan struct{}), make(chan time.Time), make(chan struct{})
	go func() { awaitDrained(drained, out, tick, nil, false); close(done) }()
	tick <- time.Time{}
	out.seq.Add(1) // the client read; the next read begins
	tick <- time.Time{}
	close(drained)
	<-done
	if b, err := io.ReadAll(r); string(b) != "what the server wrote\n" {
		t.Errorf("read %q, %v: the output was closed unread", b, err)
	}
}

// Once the server has exited, a signal from the client ends the wait at
// once, whoever still holds the server's output.
func TestServerOutputWaitEndsAtTheClientsSignal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close() // held open elsewhere, writing nothing
	out := &serverOut{f: r}
	drained := copyServerOut(io.Discard, out)
	signals := make(chan os.Signal, 1)
	signals <- syscall.SIGTERM
	awaitDrained(drained, out, nil, signals, false) // no tick comes: the signal alone ends it
	<-drained                                       // the copy ends as the output is closed
}

// A client that signalled while the server ran, and reads no more, has the
// wait end at the next tick, though the copy still waits on it: alone, the
// server would just have died of that signal.
func TestServerOutputWaitAfterAnEarlierSignalIsOneTick(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	w.WriteString("unread\n")
	w.Close()
	client := &gatedWriter{open: make(chan struct{}), started: make(chan struct{})}
	defer close(client.open)
	out := &serverOut{f: r}
	drained := copyServerOut(client, out)
	<-client.started // the copy waits on the client, which reads no more
	tick := make(chan time.Time, 1)
	tick <- time.Time{}
	awaitDrained(drained, out, tick, nil, true) // returns: one tick, not the copy's end
}
