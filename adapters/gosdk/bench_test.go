package toolguardgosdk

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	toolguard "github.com/toolguard/toolguard/middleware"
)

type benchArgs struct {
	City   string `json:"city,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// benchServer is a real go-sdk server with n tools, alone and guarded;
// with namesOnly the server is given to the tool set (Options.Servers).
func benchServer(b *testing.B, n int, opts *mcp.StreamableHTTPOptions, namesOnly bool) (alone, guarded http.Handler) {
	s := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1.0.0"}, nil)
	for i := range n {
		mcp.AddTool(s, &mcp.Tool{Name: fmt.Sprintf("tool_%04d", i)}, func(ctx context.Context, req *mcp.CallToolRequest, in benchArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
		})
	}
	alone = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, opts)
	// MinInterval is cut so that a rejection loop on one caller measures
	// the cost of a fresh list, not the flood bound.
	o := Options{Discover: toolguard.DiscoverOptions{MinInterval: time.Nanosecond}}
	if namesOnly {
		o.Servers = []*mcp.Server{s}
	}
	tools, err := Tools(alone, o)
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

func send(b *testing.B, h http.Handler, body string, hdr http.Header) (*httptest.ResponseRecorder, time.Duration) {
	r := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
	r.Header = hdr.Clone()
	w := httptest.NewRecorder()
	start := time.Now()
	h.ServeHTTP(w, r)
	d := time.Since(start)
	if w.Code != 200 && w.Code != 202 {
		b.Fatalf("%d %s", w.Code, w.Body)
	}
	return w, d
}

// BenchmarkGoSDKPaired alternates the same request through go-sdk alone and
// through guard + go-sdk in every iteration and reports the ratio of their
// times, so a noisy, shared machine slows both sides alike. It covers 10 and
// 1,000 tools, callers without a session (a stateless handler) and with one
// (go-sdk's default, stateful mode), and known and unknown tools; "full"
// is the tool set's default, "names" the names-only lists of
// Options.Servers.
//
//	go test -run '^$' -bench GoSDKPaired -benchtime 1s -count 6 .
func BenchmarkGoSDKPaired(b *testing.B) {
	hdr := http.Header{
		"Content-Type":         {"application/json"},
		"Accept":               {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {"2025-11-25"},
	}
	for _, n := range []int{10, 1000} {
		for _, m := range []struct {
			mode      string
			namesOnly bool
		}{{"sessionless", false}, {"session", false}, {"sessionless", true}, {"session", true}} {
			mode, lists := m.mode, "full"
			if m.namesOnly {
				lists = "names"
			}
			alone, guarded := benchServer(b, n, &mcp.StreamableHTTPOptions{Stateless: mode == "sessionless"}, m.namesOnly)
			h := hdr.Clone()
			if mode == "session" {
				w, _ := send(b, alone, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`, hdr)
				id := w.Header().Get("Mcp-Session-Id")
				if id == "" {
					b.Fatalf("initialize: no session: %s", w.Body)
				}
				h.Set("Mcp-Session-Id", id)
				send(b, alone, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h)
			}
			for _, c := range []struct {
				name, body, want string
			}{
				{"known", call300("tool_0003"), `"text":"ok"`},
				{"unknown", call300("tool_9999"), `-32602`},
			} {
				for _, side := range []http.Handler{alone, guarded} {
					if w, _ := send(b, side, c.body, h); !strings.Contains(w.Body.String(), c.want) {
						b.Fatalf("%s: answer lacks %s: %s", c.name, c.want, w.Body)
					}
				}
				b.Run(fmt.Sprintf("tools=%d/%s/%s/%s", n, lists, mode, c.name), func(b *testing.B) {
					var ta, tg time.Duration
					first := false
					for b.Loop() {
						// Each side goes first every other time, so
						// neither gains from warm caches.
						var da, dg time.Duration
						if first = !first; first {
							_, da = send(b, alone, c.body, h)
							_, dg = send(b, guarded, c.body, h)
						} else {
							_, dg = send(b, guarded, c.body, h)
							_, da = send(b, alone, c.body, h)
						}
						ta += da
						tg += dg
					}
					b.ReportMetric(float64(ta.Nanoseconds())/float64(b.N), "alone-ns/op")
					b.ReportMetric(float64(tg.Nanoseconds())/float64(b.N), "guard-ns/op")
					b.ReportMetric(float64(tg)/float64(ta), "guard/alone")
				})
			}
		}
	}
}
