package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/toolguard/toolguard/examples/internal/exampletest"
)

// counts returns each instrument's series: the attributes, as text, and
// the value.
func counts(t *testing.T, reader *sdkmetric.ManualReader) map[string]map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok {
				t.Fatalf("%s is a %T", m.Name, m.Data)
			}
			out[m.Name] = map[string]int64{}
			for _, dp := range sum.DataPoints {
				out[m.Name][dp.Attributes.Encoded(attribute.DefaultEncoder())] = dp.Value
			}
		}
	}
	return out
}

// TestExampleCountsUnknownNamesAndPasses: after real clients' known calls
// and the checker's unknown call, the hooks have counted the unknown name
// and the pass-throughs by reason.
func TestExampleCountsUnknownNamesAndPasses(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := newMeterProvider(reader)
	url := exampletest.Start(t, func(addr string, ready func(string)) error { return run(mp.Meter("toolguard"), addr, ready) })
	exampletest.Exercise(t, url, "get_weather", map[string]any{"city": "Oslo"}, "Sunny in Oslo")
	got := counts(t, reader)
	unknown := got["toolguard.unknown_tool.calls"]
	if len(unknown) == 0 {
		t.Fatalf("no unknown tool counted: %v", got)
	}
	for attrs, n := range unknown {
		if !strings.Contains(attrs, "tool=") || n < 1 {
			t.Errorf("unknown %s = %d", attrs, n)
		}
	}
	if got["toolguard.passed"]["reason=known"] < 1 {
		t.Errorf("passed %v, want the known call counted", got["toolguard.passed"])
	}
}

// TestExampleBoundsTheSeriesOfInventedNames: 500 invented names make at
// most the limit's series, the rest counted in the overflow series.
func TestExampleBoundsTheSeriesOfInventedNames(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := newMeterProvider(reader)
	url := exampletest.Start(t, func(addr string, ready func(string)) error { return run(mp.Meter("toolguard"), addr, ready) })
	session := ""
	post := func(body string) {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if session == "" {
			session = resp.Header.Get("Mcp-Session-Id")
		}
	}
	post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i := range 500 {
		post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"made_up_%d","arguments":{}}}`, i+1, i))
	}
	unknown := counts(t, reader)["toolguard.unknown_tool.calls"]
	var total int64
	for _, n := range unknown {
		total += n
	}
	if len(unknown) > 100 || total != 500 || unknown["otel.metric.overflow=true"] == 0 {
		t.Errorf("%d series, %d calls, overflow %d", len(unknown), total, unknown["otel.metric.overflow=true"])
	}
}
