package gosdk

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/toolguard/toolguard/internal/fixture"
)

// In every mode and era: a known call passes untouched; an unknown one
// gets the guard's -32602 with the caller's tools and suggestions, with
// go-sdk's status and Content-Type.
func TestKnownAndUnknownInEveryMode(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			h := newHarness(t, mode)
			known := fixture.Corpus("echo", h.meta())[0]
			alone, guarded := h.Do(h.Alone, known, h.headers("echo")), h.Do(h.Guarded, known, h.headers("echo"))
			if len(alone.Ran) != 1 || alone.Status != guarded.Status || alone.Type != guarded.Type || alone.Body != guarded.Body {
				t.Errorf("known: alone %d %s %q, guarded %d %s %q", alone.Status, alone.Type, alone.Body, guarded.Status, guarded.Type, guarded.Body)
			}
			unknown := fixture.Corpus("get_weathr", h.meta())[0]
			alone, guarded = h.Do(h.Alone, unknown, h.headers("get_weathr")), h.Do(h.Guarded, unknown, h.headers("get_weathr"))
			if _, ok := fixture.GoSDKUnknownTool(alone.Body); !ok {
				t.Fatalf("alone: %d %s", alone.Status, alone.Body)
			}
			a := fixture.ReadAnswer(t, guarded.Body)
			if guarded.Status != alone.Status || guarded.Type != alone.Type || a.Code != -32602 || a.Message != fixture.GuardMessage("get_weathr", "get_weather") ||
				fmt.Sprint(a.Data.AvailableTools) != "[admin_only echo get_weather Ünïcode]" || fmt.Sprint(a.Data.Suggestions) != "[get_weather]" {
				t.Errorf("unknown: alone %d %s %q, guarded %d %s %q", alone.Status, alone.Type, alone.Body, guarded.Status, guarded.Type, guarded.Body)
			}
			if want := map[bool]int{false: 200, true: 400}[h.modern]; guarded.Status != want {
				t.Errorf("status %d, want go-sdk's %d", guarded.Status, want)
			}
		})
	}
}

// go-sdk's own refusals before dispatch reach the client byte for byte,
// for a known name and an unknown one: an Accept header without
// text/event-stream, a base64 Mcp-Name (go-sdk compares it undecoded), an
// unknown session.
func TestGoSDKRefusalsPassUntouched(t *testing.T) {
	for _, c := range []struct {
		mode, name string
		edit       func(http.Header)
	}{
		{"stateful", "accept", func(h http.Header) { h.Set("Accept", "application/json") }},
		{"2026-07-28", "accept", func(h http.Header) { h.Set("Accept", "text/event-stream") }},
		{"2026-07-28", "base64 Mcp-Name", func(h http.Header) {
			h.Set("Mcp-Name", "=?base64?"+b64(h.Get("Mcp-Name"))+"?=")
		}},
		{"stateful", "unknown session", func(h http.Header) { h.Set("Mcp-Session-Id", "no-such-session") }},
	} {
		t.Run(c.mode+"/"+c.name, func(t *testing.T) {
			h := newHarness(t, c.mode)
			h.Exact = true
			for _, name := range []string{"echo", "nope"} {
				hdr := h.headers(name)
				c.edit(hdr)
				body := fixture.Corpus(name, h.meta())[0]
				alone := h.Do(h.Alone, body, hdr)
				if alone.Status < 400 || len(alone.Ran) != 0 {
					t.Fatalf("go-sdk alone did not refuse it: %d %s", alone.Status, alone.Body)
				}
				var tl fixture.Tally
				h.Compare(t, body, hdr, &tl)
				if tl.Rejected != 0 || strings.Contains(alone.Body, "availableTools") {
					t.Errorf("%s: %v", name, tl)
				}
			}
		})
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
