package interop

import (
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"github.com/toolguard/toolguard/internal/fixture"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// TestRealClientsServerHearsOnlyThem: with the real TypeScript SDK v1 and
// v2 clients and inspector-cli as the client, a tap in front of the guard
// and one between the guard and a real mcp-go server record the same
// requests, byte for byte, whatever the client sends (handshake, standing
// GET stream, lists, known and unknown calls, DELETE); and the client gets
// the guard's -32602 with the list it was given.
func TestRealClientsServerHearsOnlyThem(t *testing.T) {
	for _, client := range []string{"ts-v1", "ts-v2", "inspector-cli"} {
		t.Run(client, func(t *testing.T) {
			inner := &requestTap{next: server.NewStreamableHTTPServer(newMCPGo("echo", "add"))}
			g, err := toolguard.New(toolguard.Options{})
			if err != nil {
				t.Fatal(err)
			}
			outer := &requestTap{next: g.Handler(inner)}
			srv := httptest.NewServer(outer)
			defer srv.Close()
			url := srv.URL + "/mcp"
			switch client {
			case "ts-v1":
				res := fixture.TSClient(t, url, "echo", map[string]any{"text": "hi"})
				if res.Unknown.Code != -32602 || !strings.HasPrefix(res.Unknown.Message, "MCP error -32602: Unknown tool: echo_typo") || !strings.Contains(string(res.Unknown.Data), `"availableTools":["add","echo"]`) {
					t.Errorf("the client got %+v", res.Unknown)
				}
			case "ts-v2":
				res := fixture.V2Client(t, url, "ech", "")
				if !strings.Contains(res.Call.Message, "Did you mean echo?") {
					t.Errorf("the client got %+v", res.Call)
				}
			case "inspector-cli":
				if out, code := fixture.Inspector(t, url, "--method", "tools/list"); code != 0 || !strings.Contains(out, "echo") {
					t.Fatalf("tools/list: exit %d\n%s", code, out)
				}
				if out, _ := fixture.Inspector(t, url, "--method", "tools/call", "--tool-name", "ech"); !strings.Contains(out, "-32602") {
					t.Errorf("the unknown call: %s", out)
				}
			}
			srv.CloseClientConnections()
			// Sorted: the client's requests may be in flight together (its
			// GET stream and a POST), so the order the two taps saw them in
			// is not fixed; each is compared whole.
			got, heard := outer.requests(), inner.requests()
			slices.Sort(got)
			slices.Sort(heard)
			if len(got) < 3 {
				t.Fatalf("the client sent %d requests: %q", len(got), got)
			}
			if !slices.Equal(got, heard) {
				t.Errorf("the client sent\n%s\nthe server heard\n%s", strings.Join(got, "\n--\n"), strings.Join(heard, "\n--\n"))
			}
		})
	}
}
