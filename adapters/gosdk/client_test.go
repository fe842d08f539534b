package toolguardgosdk

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// go-sdk's own client, through the guard with names-only lists, over a
// real HTTP connection, in stateful and stateless mode: its own tools/list
// has every schema, known calls run, an unknown tool gets the guard's
// -32602, and a tool added at runtime runs at once.
func TestNamesOnlyWithGoSDKClient(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		t.Run(map[bool]string{false: "stateful", true: "stateless"}[stateless], func(t *testing.T) {
			s := mcp.NewServer(&mcp.Implementation{Name: "client", Version: "1"}, nil)
			addTools(s, "echo", "get_weather")
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless})
			var log fetchLog
			srv := httptest.NewServer(guardOf(t, h, log.wrap(h), Options{Servers: []*mcp.Server{s}}))
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			list, err := cs.ListTools(ctx, nil)
			if err != nil || len(list.Tools) != 2 {
				t.Fatalf("list: %v %+v", err, list)
			}
			for _, tl := range list.Tools {
				if !strings.Contains(string(mustJSON(t, tl.InputSchema)), `"properties"`) {
					t.Errorf("%s: schema lost: %s", tl.Name, mustJSON(t, tl.InputSchema))
				}
			}
			call := func(name string) (string, error) {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
				if err != nil {
					return "", err
				}
				return res.Content[0].(*mcp.TextContent).Text, nil
			}
			if out, err := call("echo"); err != nil || out != "ran echo" {
				t.Fatalf("echo: %q %v", out, err)
			}
			if _, err := call("nope"); err == nil || !strings.Contains(err.Error(), "Unknown tool: nope") {
				t.Fatalf("nope: %v", err)
			}
			for _, name := range []string{"late_1", "late_2", "late_3"} {
				addTools(s, name)
				if out, err := call(name); err != nil || out != "ran "+name {
					t.Fatalf("%s right after it was added: %q %v", name, out, err)
				}
			}
			log.mu.Lock()
			defer log.mu.Unlock()
			if log.lists == 0 || log.empty != log.lists || log.schema != 0 {
				t.Errorf("fetches: %s", &log)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
