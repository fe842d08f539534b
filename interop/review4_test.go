package interop

// Reviewer's tests (review4) against the TypeScript SDK servers, passing
// coverage: after the third review a call without Accept passes
// (69aa321); the guard must answer only where the server itself answers
// -32602, for every spelling of Accept (the TypeScript SDK v1 looks for
// each media type as a substring of the header; wildcards are not enough).

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolguard/toolguard/internal/fixture"
	toolguard "github.com/toolguard/toolguard/middleware"
)

func TestReview4AcceptSpellingsTypeScript(t *testing.T) {
	v2 := func(t *testing.T) http.Handler { return v2Server(t) }
	accepts := [][]string{
		nil,
		{""},
		{"*/*"},
		{"application/*, text/*"},
		{"application/json"},
		{"text/event-stream"},
		{"application/json;q=0, text/event-stream"},
		{"application/json", "text/event-stream"},
		{"APPLICATION/JSON, TEXT/EVENT-STREAM"},
		{"application/json;charset=utf-8, text/event-stream;q=0.5"},
	}
	for _, tc := range []struct {
		name    string
		handler func(t *testing.T) http.Handler
	}{
		{"v1", func(t *testing.T) http.Handler { return tsTarget(t).handler }},
		{"v2", v2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.handler(t)
			d, err := toolguard.Discover(h, toolguard.DiscoverOptions{MinInterval: time.Microsecond})
			if err != nil {
				t.Fatal(err)
			}
			g, err := toolguard.New(toolguard.Options{Tools: d, SafeIntegerIDs: true})
			if err != nil {
				t.Fatal(err)
			}
			guarded := g.Handler(h)
			body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{}}}`
			served := 0
			for _, accept := range accepts {
				hdr := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}, "Accept": accept}
				alone := fixture.Send(h, body, hdr)
				w := fixture.Send(guarded, body, hdr)
				if strings.Contains(alone.Body.String(), "-32602") {
					served++
					if w.Code != alone.Code || !strings.Contains(w.Body.String(), "-32602") {
						t.Errorf("Accept %q: server %d %s; guarded %d %s", accept, alone.Code, alone.Body, w.Code, w.Body)
					}
					continue
				}
				if strings.Contains(w.Body.String(), "availableTools") || w.Code != alone.Code {
					t.Errorf("Accept %q: the server refuses (%d %s); guarded %d %s", accept, alone.Code, alone.Body, w.Code, w.Body)
				}
			}
			if served == 0 {
				t.Fatal("the server answered no spelling with -32602: nothing compared")
			}
		})
	}
}
