package interop

// Reviewer's tests (review3) against the TypeScript SDK servers. Tests
// named TestReview3... that fail on the reviewed code demonstrate a broken
// promise, said in their comment.

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolguard/toolguard/internal/fixture"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// Promise: never a tool list to a caller the server refuses before the
// lookup. The TypeScript SDKs refuse a POST whose Accept header lacks
// application/json or text/event-stream, a missing Accept included (v1:
// 406 "Not Acceptable"). The guard reads a missing Accept as admitting
// both, and the Discovery's tools/list, which sets Accept to both media
// types when the caller sent none, is served: the guard answers -32602
// with availableTools where the server answers 406. (With an Accept
// header that lacks one type the list is refused like the call: the
// header is forwarded.)
// FAILS on the reviewed code (v1 and v2).
func TestReview3MissingAcceptTypeScript(t *testing.T) {
	v2 := func(t *testing.T) http.Handler { return v2Server(t) }
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
			body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{}}}`
			noAccept := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}, "Accept": nil}
			alone := fixture.Send(h, body, noAccept)
			if alone.Code == http.StatusOK {
				t.Fatalf("the server alone served the call without Accept: %d %s", alone.Code, alone.Body)
			}
			w := fixture.Send(g.Handler(h), body, noAccept)
			if strings.Contains(w.Body.String(), "availableTools") || w.Code != alone.Code {
				t.Errorf("guarded: %d %s\nserver alone: %d %s", w.Code, w.Body, alone.Code, alone.Body)
			}
		})
	}
}
