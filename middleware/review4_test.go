package toolguard

// Reviewer's tests (review4) of the third review's core changes (69aa321):
// a call's relayed messages under a lock, late ones to Redeliver, and the
// rewritten relayWriter. Tests named TestReview4... that fail on the
// reviewed code demonstrate a broken promise, said in their comment; the
// others cover ground the earlier tests did not and pass.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolguard/toolguard/internal/sse"
)

// lateTools is a Redeliverer whose List relays one message for the call
// at once and, from a request that outlives the List (as the mcp-go tool
// set's request does past MaxWait), a second one right after the guard
// has decided the call. Redeliver records what it is given; its first
// call takes firstDelay (the mcp-go tool set's Redeliver takes the tool
// set's lock, which every other call contends for).
type lateTools struct {
	names      []string
	firstDelay time.Duration
	wg         sync.WaitGroup
	mu         sync.Mutex
	calls      int
	got        []string
}

func (l *lateTools) Lookup(*http.Request, string) Presence { return Absent }

func (l *lateTools) List(r *http.Request) ([]string, error) {
	relay(r.Context(), [][]byte{[]byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"seq":1}}`)})
	c, _ := CallFromContext(r.Context())
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		for {
			c.relay.mu.Lock()
			settled := c.relay.settled
			c.relay.mu.Unlock()
			if settled {
				break
			}
			time.Sleep(50 * time.Microsecond)
		}
		relay(r.Context(), [][]byte{[]byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"seq":2}}`)})
	}()
	return l.names, nil
}

func (l *lateTools) Redeliver(_ *http.Request, msgs [][]byte) {
	l.mu.Lock()
	l.calls++
	first := l.calls == 1
	l.mu.Unlock()
	if first {
		time.Sleep(l.firstDelay)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range msgs {
		l.got = append(l.got, string(m))
	}
}

func seqs(msgs []string) string {
	var b strings.Builder
	for _, m := range msgs {
		var n struct {
			Params struct{ Seq int } `json:"params"`
		}
		if json.Unmarshal([]byte(m), &n) == nil && n.Params.Seq != 0 {
			fmt.Fprint(&b, n.Params.Seq)
		}
	}
	return b.String()
}

// Promise: never an altered message (the server's order). When a call
// passes, redeliver takes the messages relayed so far (settle) and hands
// them to Redeliver after letting go of the call's lock; a message that
// comes late is handed to Redeliver by the request that brought it, at
// once. Nothing orders the two: the late message reaches the session's
// queue first, and the client gets the server's notifications 2, 1.
// FAILS on the reviewed code.
func TestReview4LateRedeliverOvertakes(t *testing.T) {
	tools := &lateTools{names: []string{"a"}, firstDelay: 100 * time.Millisecond}
	h := mustGuard(t, Options{Tools: tools}).Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	w := send4(h, call("1", `"a"`))
	tools.wg.Wait()
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"result"`) {
		t.Fatalf("the call did not pass: %d %s", w.Code, w.Body)
	}
	if got := seqs(tools.got); got != "12" {
		t.Errorf("Redeliver got the notifications in the order %q, the server sent 12", got)
	}
}

// Passing coverage: a rejected call's messages go out once: those relayed
// before the decision with the answer (as events before the error), the
// one that comes after it to Redeliver, not also in the answer.
func TestReview4RejectedLateOnce(t *testing.T) {
	for range 20 {
		tools := &lateTools{names: []string{"a"}}
		h := mustGuard(t, Options{Tools: tools}).Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			t.Error("the unknown call reached the server")
		}))
		w := send4(h, call("1", `"nope"`))
		tools.wg.Wait()
		msgs := sse.Messages(w.Body.Bytes())
		var answer []string
		for _, m := range msgs {
			answer = append(answer, string(m))
		}
		if len(answer) != 2 || seqs(answer) != "1" || !strings.Contains(answer[1], `-32602`) {
			t.Fatalf("answer %q: want notification 1 then the -32602", w.Body)
		}
		if got := seqs(tools.got); got != "2" {
			t.Fatalf("Redeliver got %q, want the late notification 2 alone", got)
		}
	}
}

func send4(h http.Handler, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// Passing coverage: relayWriter with answers written in ways the third
// review's rewrite has to handle: a CRLF split across two Writes (one
// line break, not two), WriteHeader called twice (the first counts, the
// answer is whole), a Write after Hijack (an error, no panic; the
// hijacker's own bytes reach the client).
func TestReview4RelayWriterEdges(t *testing.T) {
	t.Run("crlf-split", func(t *testing.T) {
		s := newCallAnswerServer(func(w http.ResponseWriter, id json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0",`+"\r")
			fmt.Fprintf(w, "\n\"id\":%s,\r\n\"result\":{}}\r", id)
		})
		res, body := postReal(t, review3Guard(t, s), call("1", `"a"`))
		msgs := sse.Messages(body)
		if res.StatusCode != 200 || len(msgs) != 2 {
			t.Fatalf("%d %q: want the notification and the answer", res.StatusCode, body)
		}
		if want := "{\"jsonrpc\":\"2.0\",\n\"id\":1,\n\"result\":{}}\n"; string(msgs[1]) != want {
			t.Errorf("answer %q, want %q (each CR, LF, CRLF one line break)", msgs[1], want)
		}
	})
	t.Run("writeheader-twice", func(t *testing.T) {
		s := newCallAnswerServer(func(w http.ResponseWriter, id json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(200)
			w.WriteHeader(500)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, id)
		})
		res, body := postReal(t, review3Guard(t, s), call("1", `"a"`))
		msgs := sse.Messages(body)
		if res.StatusCode != 200 || len(msgs) != 2 || !json.Valid(msgs[1]) {
			t.Fatalf("%d %q: want the notification and the answer", res.StatusCode, body)
		}
	})
	t.Run("write-after-hijack", func(t *testing.T) {
		writeErr := make(chan error, 1)
		s := newCallAnswerServer(func(w http.ResponseWriter, id json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
			conn, buf, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Errorf("Hijack through relayWriter: %v", err)
				return
			}
			defer conn.Close()
			answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, id)
			fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(answer), answer)
			buf.Flush()
			_, err = w.Write([]byte("late"))
			writeErr <- err
		})
		res, body := postReal(t, review3Guard(t, s), call("1", `"a"`))
		if res.StatusCode != 200 || !bytes.Contains(body, []byte(`"result"`)) || bytes.Contains(body, []byte("late")) {
			t.Fatalf("%d %q: want the hijacker's answer alone", res.StatusCode, body)
		}
		if err := <-writeErr; err == nil {
			t.Error("Write after Hijack reported no error")
		}
	})
}

// Passing coverage: next panics (http.ErrAbortHandler, as
// httputil.ReverseProxy does when the upstream's body breaks off) after a
// part of its JSON answer went out. Handler's deferred finish still runs;
// the client must see a broken answer (a read error), never a complete
// event stream whose last event is the truncated answer.
func TestReview4RelayPanicLeavesAnswerBroken(t *testing.T) {
	for _, p := range []any{http.ErrAbortHandler, "boom"} {
		t.Run(fmt.Sprint(p), func(t *testing.T) {
			s := newCallAnswerServer(func(w http.ResponseWriter, id json.RawMessage) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,`, id)
				http.NewResponseController(w).Flush()
				panic(p)
			})
			srv := httptest.NewUnstartedServer(review3Guard(t, s))
			srv.Config.ErrorLog = log.New(io.Discard, "", 0)
			srv.Start()
			defer srv.Close()
			req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(call("1", `"a"`)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			res, err := srv.Client().Do(req)
			if err != nil {
				return // broken before the headers: fine
			}
			defer res.Body.Close()
			body, err := io.ReadAll(res.Body)
			if err == nil {
				t.Errorf("the client read a complete answer %q from a handler that panicked mid-answer", body)
			}
		})
	}
}
