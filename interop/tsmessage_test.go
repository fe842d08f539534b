package interop

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolguard/toolguard/internal/fixture"
	toolguard "github.com/toolguard/toolguard/middleware"
)

var updateGolden = flag.Bool("update", false, "write the golden transcripts")

// shapeServer answers MCP over HTTP as the servers of the corpus do: it
// lists get_weather and get_forecast, and answers every tools/call with
// answer, the bytes a real server wrote for an unknown tool (%s is the
// called name, %d the id). It is a stand-in for servers whose runtime is
// not here; the client is the real TypeScript SDK.
func shapeServer(answer string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		json.NewDecoder(r.Body).Decode(&m)
		w.Header().Set("Content-Type", "application/json")
		switch m.Method {
		case "initialize":
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"shape","version":"1"}}}`)
		case "tools/list":
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"tools":[{"name":"get_weather","inputSchema":{"type":"object"}},{"name":"get_forecast","inputSchema":{"type":"object"}}]}}`)
		case "tools/call":
			q, _ := json.Marshal(m.Params.Name)
			name := string(q[1 : len(q)-1])
			io.WriteString(w, strings.ReplaceAll(strings.ReplaceAll(answer, "%d", string(m.ID)), "%s", name))
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	})
}

// Through the real TypeScript SDK v1 client, the message a host shows for
// an unknown tool names the nearest tool, whatever shape the server's own
// answer had: one golden transcript per shape (the server's answer, the
// guard's, the message the client throws).
func TestTypeScriptClientShowsTheSuggestion(t *testing.T) {
	for _, tc := range []struct{ shape, answer string }{
		{"mcpgo-error", `{"jsonrpc":"2.0","id":%d,"error":{"code":-32602,"message":"tool '%s' not found: tool not found"}}`},
		{"ts-v1-iserror", `{"result":{"content":[{"type":"text","text":"MCP error -32602: Tool %s not found"}],"isError":true},"jsonrpc":"2.0","id":%d}`},
		{"desktop-commander-iserror", `{"result":{"content":[{"type":"text","text":"Error: Unknown tool: %s"}],"isError":true},"jsonrpc":"2.0","id":%d}`},
		{"cclsp-result", `{"result":{"content":[{"type":"text","text":"Error: Unknown tool: %s"}]},"jsonrpc":"2.0","id":%d}`},
		{"slack-json-text", `{"result":{"content":[{"type":"text","text":"{\"error\":\"Unknown tool: %s\"}"}]},"jsonrpc":"2.0","id":%d}`},
		{"mcp-framework-32603", `{"jsonrpc":"2.0","id":%d,"error":{"code":-32603,"message":"Unknown tool: %s. Available tools: get_weather, get_forecast"}}`},
		{"fastmcp-32601", `{"jsonrpc":"2.0","id":%d,"error":{"code":-32601,"message":"MCP error -32601: Unknown tool: %s"}}`},
	} {
		t.Run(tc.shape, func(t *testing.T) {
			var guardAnswer bytes.Buffer
			g, err := toolguard.New(toolguard.Options{})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(g.Handler(shapeServer(tc.answer)))
			defer srv.Close()
			got := fixture.TSErrorClient(t, srv.URL, "get_wether")
			want := "MCP error -32602: Unknown tool: get_wether. Did you mean get_weather? Call tools/list for the available tools."
			if got.Code != -32602 || got.Message != want {
				t.Errorf("the client threw %d %q (result %s), want -32602 %q", got.Code, got.Message, got.Result, want)
			}
			// The guard's own bytes, for the transcript: a caller that
			// lists, then calls.
			tg, err := toolguard.New(toolguard.Options{})
			if err != nil {
				t.Fatal(err)
			}
			hdr := http.Header{"Mcp-Protocol-Version": {"2025-06-18"}}
			fixture.Send(tg.Handler(shapeServer(tc.answer)), `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, hdr)
			w := fixture.Send(tg.Handler(shapeServer(tc.answer)), `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_wether","arguments":{}}}`, hdr)
			guardAnswer.WriteString(w.Body.String())
			server := strings.ReplaceAll(strings.ReplaceAll(tc.answer, "%d", "2"), "%s", "get_wether")
			tr := "The real TypeScript SDK v1 client lists the tools, then calls get_wether; the server answers\nin this shape, the guard translates, and the client throws the message a host shows.\n" +
				"-- server --\n" + server + "\n-- guard --\n" + guardAnswer.String() + "\n-- client message --\n" + got.Message + "\n"
			path := filepath.Join("testdata", "golden", "ts-client-"+tc.shape+".txtar")
			if *updateGolden {
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, []byte(tr), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test -run TestTypeScriptClientShowsTheSuggestion -update . writes it)", err)
			}
			if string(b) != tr {
				t.Errorf("%s differs:\ngot\n%s\nwant\n%s", path, tr, b)
			}
		})
	}
}
