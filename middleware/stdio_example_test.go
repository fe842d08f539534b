package toolguard_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"
	"strings"

	toolguard "github.com/toolguard/toolguard/middleware"
)

// lineServer is a stdio MCP server in miniature: it answers initialize,
// tools/list (get_weather, search_docs) and tools/call, and, as the
// TypeScript and Python SDKs do, answers an unknown tool with isError.
func lineServer(r io.Reader, w io.Writer) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage
			Method string
			Params struct{ Name string }
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID == nil {
			continue
		}
		var res string
		switch m.Method {
		case "initialize":
			res = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"weather","version":"1"}}`
		case "tools/list":
			res = `{"tools":[{"name":"get_weather","inputSchema":{"type":"object"}},{"name":"search_docs","inputSchema":{"type":"object"}}]}`
		case "tools/call":
			res = `{"content":[{"type":"text","text":"Tool ` + m.Params.Name + ` not found"}],"isError":true}`
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", m.ID, res)
	}
}

// A server on stdio behind the guard: it reads the guard's Reader and
// writes to its Writer instead of os.Stdin and os.Stdout. The client's call
// to get_wether never reaches it; the guard's own tools/list and its answer
// never reach the client.
func ExampleNewStdio() {
	client := strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_wether","arguments":{}}}
`)
	g, err := toolguard.NewStdio(client, os.Stdout, toolguard.StdioOptions{})
	if err != nil {
		log.Fatal(err)
	}
	lineServer(g.Reader(), g.Writer()) // mcp-go: server.NewStdioServer(s).Listen(ctx, g.Reader(), g.Writer())
	// Output:
	// {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"weather","version":"1"}}}
	// {"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: get_wether","data":{"availableTools":["get_weather","search_docs"],"suggestions":["get_weather"]}}}
}
