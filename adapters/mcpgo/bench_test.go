package toolguardmcpgo

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	toolguard "github.com/toolguard/toolguard/middleware"
)

// benchServer is a real mcp-go server with n tools, alone and guarded.
func benchServer(b *testing.B, n int, opts ...server.StreamableHTTPOption) (alone, guarded http.Handler) {
	s := server.NewMCPServer("bench", "1.0.0", server.WithToolCapabilities(true))
	for i := range n {
		s.AddTool(mcp.NewTool(fmt.Sprintf("tool_%04d", i), mcp.WithString("city"), mcp.WithString("detail")),
			func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("ok"), nil
			})
	}
	alone = server.NewStreamableHTTPServer(s, opts...)
	// MinInterval is cut so that a rejection loop on one session measures
	// the cost of a fresh list, not the flood bound.
	tools, err := Tools(s, alone, Options{Discover: toolguard.DiscoverOptions{MinInterval: time.Nanosecond}})
	if err != nil {
		b.Fatal(err)
	}
	g, err := toolguard.New(toolguard.Options{Tools: tools})
	if err != nil {
		b.Fatal(err)
	}
	return alone, g.Handler(alone)
}

// call300 is a 300-byte tools/call.
func call300(name string) string {
	s := `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"` + name + `","arguments":{"city":"Oslo","detail":"%s"}}}`
	return fmt.Sprintf(s, strings.Repeat("x", 300-len(s)+2))
}

func benchDo(b *testing.B, h http.Handler, body string, hdr http.Header, wantStatus int) {
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
		r.Header = hdr.Clone()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != wantStatus {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}

func BenchmarkMCPGo(b *testing.B) {
	hdr := http.Header{
		"Content-Type":         {"application/json"},
		"Accept":               {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {"2025-11-25"},
	}
	for _, n := range []int{10, 1000} {
		for _, mode := range []string{"stateless", "session"} {
			var opts []server.StreamableHTTPOption
			if mode == "stateless" {
				opts = append(opts, server.WithStateLess(true))
			}
			alone, guarded := benchServer(b, n, opts...)
			h := hdr.Clone()
			if mode == "session" {
				h.Set("Mcp-Session-Id", initSession(b, alone, hdr))
			}
			known, unknown := call300("tool_0003"), call300("tool_9999")
			if len(known) != 300 {
				b.Fatalf("known call is %d bytes", len(known))
			}
			prefix := fmt.Sprintf("tools=%d/%s/", n, mode)
			b.Run(prefix+"known/alone", func(b *testing.B) { benchDo(b, alone, known, h, 200) })
			b.Run(prefix+"known/guard", func(b *testing.B) { benchDo(b, guarded, known, h, 200) })
			b.Run(prefix+"unknown/alone", func(b *testing.B) { benchDo(b, alone, unknown, h, 200) })
			b.Run(prefix+"unknown/guard", func(b *testing.B) { benchDo(b, guarded, unknown, h, 200) })
		}
	}
}

// BenchmarkMCPGoPaired alternates the same request through mcp-go alone and
// through guard + mcp-go in every iteration and reports the ratio of their
// times, so a noisy, shared machine slows both sides alike. It covers 10 and
// 1,000 tools, callers without a session (a stateless server) and with one
// (mcp-go's default mode), and known and unknown tools.
//
//	go test -run '^$' -bench MCPGoPaired -benchtime 2000x -count 6 .
func BenchmarkMCPGoPaired(b *testing.B) {
	hdr := http.Header{
		"Content-Type":         {"application/json"},
		"Accept":               {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {"2025-11-25"},
	}
	send := func(h http.Handler, body string, hdr http.Header) time.Duration {
		r := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
		r.Header = hdr.Clone()
		w := httptest.NewRecorder()
		start := time.Now()
		h.ServeHTTP(w, r)
		d := time.Since(start)
		if w.Code != 200 {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
		return d
	}
	for _, n := range []int{10, 1000} {
		for _, mode := range []string{"sessionless", "session"} {
			var opts []server.StreamableHTTPOption
			if mode == "sessionless" {
				opts = append(opts, server.WithStateLess(true))
			}
			alone, guarded := benchServer(b, n, opts...)
			h := hdr.Clone()
			if mode == "session" {
				h.Set("Mcp-Session-Id", initSession(b, alone, hdr))
			}
			// "unknown" asks for the same wrong name every time, as a
			// caller retrying it; "unknown-distinct" for a new one each
			// time (1,000 in turn), which no remembered answer covers.
			distinct := make([]string, 1000)
			for i := range distinct {
				distinct[i] = call300(fmt.Sprintf("tool_9%03d", i))
			}
			for _, c := range []struct {
				name   string
				bodies []string
			}{
				{"known", []string{call300("tool_0003")}},
				{"unknown", []string{call300("tool_9999")}},
				{"unknown-distinct", distinct},
			} {
				b.Run(fmt.Sprintf("tools=%d/%s/%s", n, mode, c.name), func(b *testing.B) {
					var ta, tg time.Duration
					first := false
					i := 0
					for b.Loop() {
						body := c.bodies[i%len(c.bodies)]
						i++
						// Each side goes first every other time, so
						// neither gains from warm caches.
						if first = !first; first {
							ta += send(alone, body, h)
							tg += send(guarded, body, h)
						} else {
							tg += send(guarded, body, h)
							ta += send(alone, body, h)
						}
					}
					b.ReportMetric(float64(ta.Nanoseconds())/float64(b.N), "alone-ns/op")
					b.ReportMetric(float64(tg.Nanoseconds())/float64(b.N), "guard-ns/op")
					b.ReportMetric(float64(tg)/float64(ta), "guard/alone")
				})
			}
		}
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
