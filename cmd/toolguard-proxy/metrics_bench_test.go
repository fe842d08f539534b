package main

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/toolguard/toolguard/internal/cmdlog"
	"github.com/toolguard/toolguard/internal/fixture"
)

// BenchmarkMetricsPaired: the proxy's handler with -metrics-listen and
// without, in one process in front of one upstream on loopback, called
// over loopback and paired ten calls by ten (fixture.PairedMedian: the
// median of the pairs' ratios): a known call (the upstream answers it)
// and a tools/list. metrics/none is the cost of the counting (the
// guard's OnPass, the timed transport, the request's count); the row
// known-none-vs-none pairs two proxies without metrics: the noise floor.
//
//	go test -run '^$' -bench MetricsPaired -benchtime 5000x -count 6 ./cmd/toolguard-proxy
func BenchmarkMetricsPaired(b *testing.B) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"ran"}]}}`)
	}))
	defer up.Close()
	proxy := func(args ...string) http.Handler {
		c, err := parse(append([]string{"-upstream", up.URL + "/mcp", "-quiet"}, args...))
		if err != nil {
			b.Fatal(err)
		}
		h, err := handler(c, cmdlog.Text(log.New(io.Discard, "", 0)))
		if err != nil {
			b.Fatal(err)
		}
		return h
	}
	none, counted, none2 := proxy(), proxy("-metrics-listen", "127.0.0.1:0"), proxy()
	hdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	known := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`
	for _, c := range []struct {
		name, body string
		other      http.Handler
	}{
		{"known", known, counted},
		{"list", `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`, counted},
		{"known-none-vs-none", known, none2}, // the noise floor: both without metrics
	} {
		b.Run(c.name, func(b *testing.B) {
			callNone, callCounted := fixture.OverLoopback(b, none, c.other, c.body, hdr)
			callNone()
			callCounted()
			fixture.PairedMedian(b, 10, "metrics/none", callNone, callCounted)
		})
	}
}
