// Package childserver is the end every child-process server of the interop
// benchmarks shares: an mcp-go server served on a loopback port, alone or
// with the guard in front as a user would set it up, its address printed
// first for the parent to read.
package childserver

import (
	"fmt"
	"log"
	"net"
	"net/http"

	"github.com/mark3labs/mcp-go/server"

	toolguardmcpgo "github.com/toolguard/toolguard/adapters/mcpgo"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// Serve serves h, the HTTP handler of s, alone (mode "alone") or behind
// the guard (mode "guard"). It returns only by ending the process.
func Serve(name string, s *server.MCPServer, h http.Handler, mode string) {
	switch mode {
	case "alone":
	case "guard":
		tools, err := toolguardmcpgo.Tools(s, h, toolguardmcpgo.Options{})
		if err != nil {
			log.Fatal(err)
		}
		g, err := toolguard.New(toolguard.Options{Tools: tools})
		if err != nil {
			log.Fatal(err)
		}
		h = g.Handler(h)
	default:
		log.Fatalf("%s: unknown -mode %q", name, mode)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ln.Addr())
	log.Fatal(http.Serve(ln, h))
}
