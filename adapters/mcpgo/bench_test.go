package toolguardmcpgo

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolguard/toolguard/internal/fixture"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// benchServer is a real mcp-go server with n tools, and the guard in
// front of it (with AnswerBeforeServer when before).
func benchServer(b *testing.B, n int, stateless, before bool) (alone, guarded http.Handler) {
	s := server.NewMCPServer("bench", "1.0.0", server.WithToolCapabilities(true))
	for i := range n {
		s.AddTool(mcp.NewTool(fmt.Sprintf("tool_%04d", i), mcp.WithString("city"), mcp.WithString("detail")),
			func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("ok"), nil
			})
	}
	h := server.NewStreamableHTTPServer(s, server.WithStateLess(stateless))
	tools, err := Tools(s, h, Options{AnswerBeforeServer: before, Stateless: stateless})
	if err != nil {
		b.Fatal(err)
	}
	g, err := toolguard.New(toolguard.Options{Tools: tools})
	if err != nil {
		b.Fatal(err)
	}
	return h, g.Handler(h)
}

// listBody is a caller's tools/list.
const listBody = `{"jsonrpc":"2.0","id":"l","method":"tools/list"}`

// call300 is a 300-byte tools/call.
func call300(name string) string {
	s := `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"` + name + `","arguments":{"city":"Oslo","detail":"%s"}}}`
	return fmt.Sprintf(s, strings.Repeat("x", 300-len(s)+2))
}

// BenchmarkPaired alternates the same request through mcp-go alone and
// through guard + mcp-go in every iteration and reports the ratio of their
// times (guard/alone), so a noisy, shared machine slows both sides alike.
// It covers 10 and 1,000 tools, callers without a session (a stateless
// server) and with one, a known call, an unknown call (answered by mcp-go
// and translated, with the list the caller was given), an unknown call
// answered before the server (AnswerBeforeServer), and the caller's
// tools/list, whose answer the guard reads on its way. The calls are
// served in process, into a fixture.Sink: the guard's cost against the
// SDK's handler alone. At 40,000 calls a side, mcp-go against itself stays within a
// point of 1; at 5,000, runs of the same code spread over ten points.
//
//	go test -run '^$' -bench '^BenchmarkPaired$' -benchtime 40000x -count 5 .
func BenchmarkPaired(b *testing.B) { pairedRows(b, false) }

// BenchmarkLoopbackPaired is BenchmarkPaired with each side served by
// net/http on a loopback listener, called over a kept-alive connection:
// the cost a deployed server's callers see.
//
//	go test -run '^$' -bench LoopbackPaired -benchtime 20000x -count 6 .
func BenchmarkLoopbackPaired(b *testing.B) { pairedRows(b, true) }

func pairedRows(b *testing.B, loopback bool) {
	hdr := http.Header{
		"Content-Type":         {"application/json"},
		"Accept":               {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {"2025-11-25"},
	}
	for _, n := range []int{10, 1000} {
		for _, mode := range []string{"sessionless", "session"} {
			for _, c := range []struct {
				name, tool string
				before     bool
			}{
				{"known", "tool_0003", false},
				{"unknown", "tool_9999", false},
				{"unknown-before", "tool_9999", true},
				{"list", "", false},
			} {
				alone, guarded := benchServer(b, n, mode == "sessionless", c.before)
				h := hdr.Clone()
				if mode == "session" {
					h.Set("Mcp-Session-Id", initSession(b, alone, hdr))
				}
				// The caller lists first, as clients do: the guard keeps
				// the answer for the data of its own.
				send(b, guarded, listBody, h)
				body := call300(c.tool)
				if c.tool == "" {
					body = listBody
				}
				b.Run(fmt.Sprintf("tools=%d/%s/%s", n, mode, c.name), func(b *testing.B) {
					fixture.PairedHandlers(b, loopback, alone, guarded, body, h, func(hd http.Handler) { send(b, hd, body, h) })
				})
			}
		}
	}
}

func send(b *testing.B, h http.Handler, body string, hdr http.Header) {
	r := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
	r.Header = hdr.Clone()
	w := fixture.NewSink()
	h.ServeHTTP(w, r)
	if w.Code != 200 {
		b.Fatalf("%d %s", w.Code, w.Head())
	}
}

// initSession opens a session on h and returns its id.
func initSession(b *testing.B, h http.Handler, hdr http.Header) string {
	r := httptest.NewRequest("POST", "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`))
	r.Header = hdr.Clone()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	id := w.Header().Get("Mcp-Session-Id")
	if w.Code != 200 || id == "" {
		b.Fatalf("initialize: %d %s", w.Code, w.Body)
	}
	return id
}

// BenchmarkKnown1MiBPaired: a known tools/call of 1 MiB through mcp-go
// alone and through guard + mcp-go, paired call by call: what a user feels
// of the guard's reader on big bodies. Two shapes of arguments: one long
// string (string=), and dense records of short keys, numbers and
// literals (records=), the most tokens a byte.
//
//	go test -run '^$' -bench Known1MiBPaired -benchtime 200x -count 6 .
func BenchmarkKnown1MiBPaired(b *testing.B) {
	hdr := http.Header{
		"Content-Type":         {"application/json"},
		"Accept":               {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {"2025-11-25"},
	}
	alone, guarded := benchServer(b, 10, true, false)
	head := `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"tool_0003","arguments":{"city":"Oslo","detail":`
	record := `{"a":1,"b":-2.5,"c":true,"d":null,"e":"x","f":[0,1]},`
	for _, shape := range []struct{ name, detail string }{
		{"string", `"` + strings.Repeat("x", 1<<20) + `"`},
		{"records", "[" + strings.Repeat(record, (1<<20)/len(record)) + `{}]`},
	} {
		body := head + shape.detail + `}}}`
		b.Run(shape.name, func(b *testing.B) {
			send(b, guarded, body, hdr)
			fixture.PairedEach(b, "guard/alone", "guard/alone-cpu", func() { send(b, alone, body, hdr) }, func() { send(b, guarded, body, hdr) })
		})
	}
}
