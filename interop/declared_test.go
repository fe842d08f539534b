package interop

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolguard/toolguard/internal/fixture"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// TestDeclaredSetLeavesToGoSDKWhatItRefusesFirst: a declared tool set
// (StaticTools, ToolsFunc) in front of a real go-sdk server answers an
// unknown name only where go-sdk would have looked it up. Where go-sdk
// refuses the request first (an Accept without both media types, a Host
// its DNS-rebinding check turns away, a session it does not know, a
// cross-origin request the CrossOriginProtection behind the guard turns
// away), the caller
// gets go-sdk's own refusal, byte for byte, and no tool list.
func TestDeclaredSetLeavesToGoSDKWhatItRefusesFirst(t *testing.T) {
	const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":{}}}`
	sets := map[string]toolguard.ToolSet{
		"StaticTools": toolguard.StaticTools("echo"),
		"ToolsFunc":   toolguard.ToolsFunc(func(*http.Request) ([]string, error) { return []string{"echo"}, nil }),
	}
	hdr := func(kv ...string) http.Header {
		h := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	for _, tc := range []struct {
		what        string
		stateless   bool
		header      http.Header
		answered    bool // the guard answers -32602 before the server
		crossOrigin bool // go-sdk is behind an http.CrossOriginProtection
	}{
		{"Accept of both", true, hdr(), true, false},
		{"Accept of JSON alone", true, hdr("Accept", "application/json"), false, false},
		{"Accept of an event stream alone", true, hdr("Accept", "text/event-stream"), false, false},
		{"a foreign Host on loopback", true, hdr("Host", "evil.example"), false, false},
		{"a Host of LOCALHOST", true, hdr("Host", "LOCALHOST"), false, false},
		{"a session go-sdk does not know", false, hdr("Mcp-Session-Id", "no-such-session"), false, false},
		{"a cross-site browser request", true, hdr("Sec-Fetch-Site", "cross-site"), false, true},
		{"another Origin", true, hdr("Origin", "https://evil.example"), false, true},
	} {
		for setName, set := range sets {
			t.Run(tc.what+"/"+setName, func(t *testing.T) {
				opts := &gosdk.StreamableHTTPOptions{Stateless: tc.stateless}
				server := func() http.Handler {
					h := goSDKHandler(newGoSDK("echo"), opts)
					if tc.crossOrigin { // (go-sdk's option for it is deprecated for this)
						return http.NewCrossOriginProtection().Handler(h)
					}
					return h
				}
				alone := httptest.NewServer(server())
				defer alone.Close()
				g, err := toolguard.New(toolguard.Options{Tools: set})
				if err != nil {
					t.Fatal(err)
				}
				guarded := httptest.NewServer(g.Handler(server()))
				defer guarded.Close()
				st0, b0 := fixture.Post(t, alone.URL, call, tc.header)
				st1, b1 := fixture.Post(t, guarded.URL, call, tc.header)
				if tc.answered {
					if st1 != 200 || !strings.Contains(b1, `"code":-32602`) || !strings.Contains(b1, `"availableTools":["echo"]`) {
						t.Errorf("not answered before the server: %d %s", st1, b1)
					}
					return
				}
				if st0 == 200 {
					t.Fatalf("go-sdk alone did not refuse: %d %s", st0, b0)
				}
				if st1 != st0 || b1 != b0 {
					t.Errorf("go-sdk alone: %d %q\nguarded: %d %q", st0, b0, st1, b1)
				}
			})
		}
	}
}
