package interop

// Reviewer's tests (review2) of the strict subset against real servers.
// Tests named TestReview2... that fail on the reviewed code demonstrate a
// broken promise, said in their comment.

import (
	"net/http"
	"testing"
	"time"

	"github.com/toolguard/toolguard/internal/fixture"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// typedMetaBodies are calls of an unknown tool that the TypeScript SDKs
// refuse before the lookup (their message schema), and the guard answers:
// a params._meta.progressToken that is not a string or a safe integer
// (true, {}, 1.5, null, 1.2e29, a duplicate key whose last value is true),
// and a member at the top level that JSON-RPC does not define (the SDKs'
// request schema is strict there). The last ones are near misses the
// servers accept (or the guard leaves alone): they pass.
var typedMetaBodies = []string{
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{},"_meta":{"progressToken":true}}}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{},"_meta":{"progressToken":{}}}}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{},"_meta":{"progressToken":1.5}}}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{},"_meta":{"progressToken":null}}}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{},"_meta":{"progressToken":123456789012345678901234567890}}}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{},"_meta":{"progressToken":"p","progressToken":true}}}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{}},"foo":1}`,
	// Near misses: these agree today.
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{},"foo":1}}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{},"_meta":{"progressToken":-3}}}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{},"_meta":{"progressToken":1e3}}}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{},"_meta":{"progressToken":1.0}}}`,
	`{"jsonrpc":"2.0","id":-7,"method":"tools/call","params":{"name":"nope","arguments":{}}}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{"_meta":5}}}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{},"_meta":{"io.modelcontextprotocol/related-task":5}}}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{},"_meta":{"io.modelcontextprotocol/related-task":{"taskId":5}}}}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{},"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t"}}}}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{},"_meta":{"io.modelcontextprotocol/related-task":null}}}`,
}

// Promise: the guard answers only where the server would have looked the
// tool up (RULES §1, the strict subset). The TypeScript SDK v1 validates
// the whole message against its schema before any handler runs: a
// params._meta.progressToken that is not a string or an integer (true, {},
// 1.5, null, 1.2e29, a duplicate whose last value is true), or a message
// with a top-level member JSON-RPC does not define, is refused with HTTP
// 400 -32700 "Invalid JSON-RPC message". The reader lets any _meta member
// but the protocol version through (and any unknown top-level member), and
// the tools/list the guard sends drops progressToken from the forwarded
// _meta, so the list succeeds and the guard answers -32602 with the list.
// FAILS on the reviewed code (the first 7 bodies; the related-task ones
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
// the same first 7 bodies, -32602 with the list behind the guard. FAILS on
// the reviewed code.
func TestReview2TypedMetaTypeScriptV2(t *testing.T) {
	proxy := v2Server(t)
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
