package toolguardecho

// Reviewer's test (review2), passing coverage: a rejection that carries
// messages the server sent on the guard's list is written by echo byte for
// byte as by net/http (status, Content-Type, Content-Length, Cache-Control,
// body).

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	toolguard "github.com/toolguard/toolguard/middleware"
)

// relayingServer lists get_weather in an event stream that first carries
// a notification for the caller.
var relayingServer = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	json.NewDecoder(r.Body).Decode(&m)
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"hi\"}}\n\n")
	fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"tools\":[{\"name\":\"get_weather\",\"inputSchema\":{\"type\":\"object\"}}]}}\n\n", m.ID)
})

func TestReview2RelayedRejectionMatchesNetHTTP(t *testing.T) {
	d, err := toolguard.Discover(relayingServer, toolguard.DiscoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o := toolguard.Options{Tools: d}
	e, _ := echoHost(t, o, func(c echo.Context) error { return c.NoContent(299) })
	w := httptest.NewRecorder()
	e.ServeHTTP(w, post(unknownCall))

	g, _ := toolguard.New(o)
	want := httptest.NewRecorder()
	g.Handler(http.NotFoundHandler()).ServeHTTP(want, post(unknownCall))
	if !strings.Contains(want.Body.String(), "notifications/message") {
		t.Fatalf("net/http answer without the relayed notification: %s", want.Body)
	}
	for _, k := range []string{"Content-Type", "Content-Length", "Cache-Control"} {
		if w.Header().Get(k) != want.Header().Get(k) {
			t.Errorf("%s: echo %q, net/http %q", k, w.Header().Get(k), want.Header().Get(k))
		}
	}
	if w.Code != want.Code || w.Body.String() != want.Body.String() {
		t.Errorf("echo: %d %s\nnet/http: %d %s", w.Code, w.Body, want.Code, want.Body)
	}
}
