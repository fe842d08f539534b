package toolguardgosdk

// Reviewer's tests (review3). Tests named TestReview3... that fail on the
// reviewed code demonstrate a broken promise, said in their comment.

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	toolguard "github.com/toolguard/toolguard/middleware"
)

// Promise: never a tool list to a caller the server refuses before the
// lookup (RULES §4: "Accept without both JSON and event stream: go-sdk
// 400; toolguardgosdk: unsure"). go-sdk refuses a POST with no Accept
// header at all (its check finds neither media type), but the guard reads
// a missing Accept as admitting both (mcpwire.Accepts(nil)), so Lookup is
// not Unsure, and the Discovery's own tools/list, which sets
// "Accept: application/json, text/event-stream" when the caller sent none,
// is served: the guard answers -32602 with availableTools where go-sdk
// answers 400. Stateful and stateless.
// FAILS on the reviewed code.
func TestReview3MissingAcceptAnswered(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		t.Run(map[bool]string{false: "stateful", true: "stateless"}[stateless], func(t *testing.T) {
			h, g, hdr := echoGuard(t, stateless)
			post := func(h http.Handler) (int, string) {
				srv := httptest.NewServer(h)
				defer srv.Close()
				req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(callBody("nope")))
				req.Header.Set("Content-Type", "application/json")
				for k, v := range hdr {
					req.Header[k] = v
				}
				req.Header.Del("Accept")
				res, err := srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				b, _ := io.ReadAll(res.Body)
				return res.StatusCode, string(b)
			}
			code, body := post(h)
			if code != http.StatusBadRequest {
				t.Fatalf("go-sdk alone: %d %s", code, body)
			}
			gcode, gbody := post(g.Handler(h))
			if strings.Contains(gbody, "availableTools") || gcode != code {
				t.Errorf("guarded: %d %s\ngo-sdk alone: %d %s", gcode, gbody, code, body)
			}
		})
	}
}

// echoGuard serves a go-sdk server with the tool echo, stateful (a session
// opened; hdr carries it) or stateless, and a guard for it.
func echoGuard(t *testing.T, stateless bool) (h http.Handler, g *toolguard.Guard, hdr http.Header) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	addTools(s, "echo")
	h = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless})
	hdr = http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}
	if !stateless {
		hdr = openSession(t, h)
	}
	tools, err := Tools(h, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g, err = toolguard.New(toolguard.Options{Tools: tools}); err != nil {
		t.Fatal(err)
	}
	return h, g, hdr
}
