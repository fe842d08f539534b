package interop

// Reviewer's tests (review2) of the strict subset against real servers.
// Tests named TestReview2... that fail on the reviewed code demonstrate a
// broken promise, said in their comment.

import (
	"net/http"
	"net/http/httputil"
	"net/url"
	"testing"
	"time"

	"github.com/toolguard/toolguard/internal/fixture"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// typedMetaBodies are calls of an unknown tool whose params._meta members
// have a type the TypeScript SDKs' request schema does not allow
// (progressToken is a string or an integer; the related-task member an
// object with a string taskId).
var typedMetaBodies = []string{
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{},"_meta":{"progressToken":true}}}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{},"_meta":{"progressToken":{}}}}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{},"_meta":{"progressToken":1.5}}}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{},"_meta":{"progressToken":null}}}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{},"_meta":{"io.modelcontextprotocol/related-task":5}}}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{},"_meta":{"io.modelcontextprotocol/related-task":{"taskId":5}}}}`,
}

// Promise: the guard answers only where the server would have looked the
// tool up (RULES §1, the strict subset). The TypeScript SDK v1 validates
// the whole message against its schema before any handler runs: a
// params._meta.progressToken that is not a string or an integer (true, {},
// 1.5, null) is refused with HTTP 400 -32700 "Invalid JSON-RPC message".
// The reader lets any _meta member but the protocol version through, and
// the tools/list the guard sends drops progressToken from the forwarded
// _meta, so the list succeeds and the guard answers -32602 with the list.
// FAILS on the reviewed code (4 of the 6 bodies; the related-task ones
// pass through because the list request carrying them is refused too).
func TestReview2TypedMetaTypeScriptV1(t *testing.T) {
	tg := tsTarget(t)
	d, err := toolguard.Discover(tg.handler, toolguard.DiscoverOptions{MinInterval: time.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	var rejected []string
	g, err := toolguard.New(toolguard.Options{Tools: d, OnReject: func(_ *http.Request, rej *toolguard.Rejection) { rejected = append(rejected, rej.Name) }})
	if err != nil {
		t.Fatal(err)
	}
	guarded := g.Handler(tg.handler)
	for _, body := range typedMetaBodies {
		alone := fixture.Send(tg.handler, body, clientHeaders)
		_, unknown := tsUnknownName(alone.Body.String())
		rejected = nil
		w := fixture.Send(guarded, body, clientHeaders)
		t.Logf("body %s\n  alone: %d %s\n  guarded: %d %s", body, alone.Code, alone.Body, w.Code, w.Body)
		if len(rejected) > 0 && !unknown {
			t.Errorf("guard answered %q where the server alone refused before the lookup: %d %s\nbody %s", rejected[0], alone.Code, alone.Body, body)
		}
	}
}

// Promise as above, against the TypeScript SDK v2 (2025-era caller):
// HTTP 400 -32600 "the request body is not a valid JSON-RPC message" for
// the same four progressToken bodies, -32602 with the list behind the
// guard. FAILS on the reviewed code.
func TestReview2TypedMetaTypeScriptV2(t *testing.T) {
	ts := fixture.StartNode(t, "v2-caps-server.mjs", "--host-check")
	u, err := url.Parse(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(u)
		pr.Out.URL.Path = u.Path
		pr.Out.Host = pr.In.Host
	}}
	d, err := toolguard.Discover(proxy, toolguard.DiscoverOptions{MinInterval: time.Microsecond, ModernStatus: http.StatusOK})
	if err != nil {
		t.Fatal(err)
	}
	diff := &fixture.Differential{UnknownTool: v2UnknownName}
	g, err := toolguard.New(toolguard.Options{Tools: d, SafeIntegerIDs: true,
		OnReject: func(r *http.Request, rej *toolguard.Rejection) { diff.Rejected(rej.Name) }})
	if err != nil {
		t.Fatal(err)
	}
	diff.Alone = ranRecorder(diff, proxy)
	diff.Guarded = g.Handler(ranRecorder(diff, proxy))
	var tl fixture.Tally
	for _, body := range typedMetaBodies {
		diff.Compare(t, body, http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}, &tl)
	}
	t.Logf("%v", tl)
}
