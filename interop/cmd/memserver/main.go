// Command memserver serves a stateless mcp-go server with one tool, alone or
// behind toolguard, for the memory test (interop/memory_test.go): the test
// starts it as a child process, so the resident memory it reads from /proc is
// the server's own.
//
//	memserver -mode alone|guard [-hold n]
//
// It listens on a free loopback port and prints the address on stdout. The
// tool, "ingest", answers with the length of its "data" argument, so the
// test can check that every body arrived whole. With -hold n, each call
// waits until n calls are inside the tool at once (or a minute passed), so
// that n bodies are surely held by the server at the same time.
package main

import (
	"context"
	"flag"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolguard/toolguard/interop/internal/childserver"
)

func main() {
	mode := flag.String("mode", "alone", "alone or guard")
	hold := flag.Int("hold", 0, "make each call wait until this many are in the tool at once")
	flag.Parse()
	var (
		mu      sync.Mutex
		inside  int
		allHere = make(chan struct{})
	)
	s := server.NewMCPServer("mem", "1.0.0", server.WithToolCapabilities(true))
	s.AddTool(mcp.NewTool("ingest", mcp.WithString("data")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n := len(req.GetString("data", ""))
		if *hold > 0 {
			mu.Lock()
			if inside++; inside == *hold {
				close(allHere)
			}
			mu.Unlock()
			select {
			case <-allHere:
			case <-time.After(time.Minute):
			}
		}
		return mcp.NewToolResultText(strconv.Itoa(n)), nil
	})
	var h http.Handler = server.NewStreamableHTTPServer(s, server.WithStateLess(true))
	childserver.Serve("memserver", s, h, *mode)
}
