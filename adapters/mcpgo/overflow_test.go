package toolguardmcpgo

import (
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolguard/toolguard/internal/fixture"
)

// A burst of tools/list_changed fills the watcher's channel, so mcp-go
// drops the one AddTool sends; a tool added then must still run, never be
// rejected from the list cached before it. (Other notifications never
// reach the watcher: TestWatcherTakesOnlyListChanged.)
func TestWatcherOverflowNeverRejectsANewTool(t *testing.T) {
	h := newHarness(t, "stateless", false)
	call := func(name string) fixture.Outcome {
		return h.Do(h.Guarded, fixture.Corpus(name, h.meta())[0], h.headers(name, nil))
	}
	if o := call("nope"); len(o.Rejected) != 1 { // caches this caller's list
		t.Fatalf("setup: the unknown call was not rejected: %d %s", o.Status, o.Body)
	}
	for range 3 * 64 {
		h.mcp.SendNotificationToAllClients("notifications/tools/list_changed", nil)
	}
	h.mcp.AddTool(mcp.NewTool("fresh"), h.record("fresh"))
	if o := call("fresh"); len(o.Rejected) != 0 || len(o.Ran) != 1 {
		t.Fatalf("a tool added after the watcher's channel filled: rejected=%v ran=%v status=%d body=%.200s",
			o.Rejected, o.Ran, o.Status, o.Body)
	}
	// The cache still works after the overflow: an unknown name is rejected.
	if o := call("still_nope"); len(o.Rejected) != 1 {
		t.Fatalf("after the overflow an unknown call was not rejected: %d %s", o.Status, o.Body)
	}
}
