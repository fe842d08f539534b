package toolguard_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"strings"

	toolguard "github.com/toolguard/toolguard/middleware"
)

// tsLikeServer is a stdio MCP server in miniature: it answers initialize,
// tools/list (get_weather, search_docs) and tools/call, and, as the
// TypeScript SDK v1 does, answers an unknown tool with isError.
func tsLikeServer(r io.Reader, w io.Writer) {
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
			res = `{"content":[{"type":"text","text":"MCP error -32602: Tool ` + m.Params.Name + ` not found"}],"isError":true}`
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", m.ID, res)
	}
}

// A server on stdio behind the guard: it reads the guard's Reader and
// writes to its Writer instead of os.Stdin and os.Stdout. The guard never
// speaks to the server; it reads what passes. The client lists the tools,
// as real clients do, and the guard keeps the list from the server's
// answer. The call to get_wether reaches the server, which answers that it
// has no such tool; the guard replaces that answer with -32602 and the
// tools the client was given.
func ExampleNewStdio() {
	clientIn, toGuard := io.Pipe()    // what the client writes
	fromGuard, clientOut := io.Pipe() // what the client reads
	g, err := toolguard.NewStdio(clientIn, clientOut, toolguard.StdioOptions{})
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		tsLikeServer(g.Reader(), g.Writer()) // mcp-go: server.NewStdioServer(s).Listen(ctx, g.Reader(), g.Writer())
		g.Writer().Close()
	}()
	io.WriteString(toGuard, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":1,"method":"tools/list"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_wether","arguments":{}}}
`)
	client := bufio.NewReader(fromGuard)
	for range 3 {
		line, _ := client.ReadString('\n')
		fmt.Print(strings.TrimSpace(line), "\n")
	}
	toGuard.Close()
	// Output:
	// {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"weather","version":"1"}}}
	// {"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"get_weather","inputSchema":{"type":"object"}},{"name":"search_docs","inputSchema":{"type":"object"}}]}}
	// {"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Unknown tool: get_wether. Did you mean get_weather? Call tools/list for the available tools.","data":{"availableTools":["get_weather","search_docs"],"suggestions":["get_weather"]}}}
}
