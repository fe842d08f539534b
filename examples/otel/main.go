// Command otel serves a mark3labs/mcp-go server over Streamable HTTP with
// toolguard in front, and counts what the guard does in OpenTelemetry
// metrics, from its OnReject and OnPass hooks: the unknown tool names
// callers ask for (the names to add as aliases), the answers that went
// out without a tool list, and the pass-throughs by reason.
//
// Copy: newInstruments, its hooks and the cardinality limit. Change: the
// exporter (here each collection is printed to standard output; use your
// OTLP or Prometheus exporter), the tools, the address.
//
//	go run ./otel -addr 127.0.0.1:8080
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	toolguardmcpgo "github.com/toolguard/toolguard/adapters/mcpgo"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// instruments are the guard's counters.
type instruments struct {
	unknown metric.Int64Counter // calls of a tool the caller does not have, by tool
	noList  metric.Int64Counter // answers without data.availableTools
	passed  metric.Int64Counter // pass-throughs, by reason
}

func newInstruments(m metric.Meter) (*instruments, error) {
	var in instruments
	var err error
	if in.unknown, err = m.Int64Counter("toolguard.unknown_tool.calls", metric.WithDescription("Calls of a tool the caller does not have, answered -32602, by tool name")); err != nil {
		return nil, err
	}
	if in.noList, err = m.Int64Counter("toolguard.answers.without_list", metric.WithDescription("Answers that went out without data.availableTools")); err != nil {
		return nil, err
	}
	if in.passed, err = m.Int64Counter("toolguard.passed", metric.WithDescription("Requests the guard passed through, by reason")); err != nil {
		return nil, err
	}
	return &in, nil
}

// onReject counts an answer of the guard. The tool name is the caller's
// choice: the MeterProvider's cardinality limit (see newMeterProvider)
// bounds the series it makes.
func (in *instruments) onReject(r *http.Request, rej *toolguard.Rejection) {
	ctx := r.Context()
	if rej.Code == toolguard.CodeInvalidParams {
		in.unknown.Add(ctx, 1, metric.WithAttributes(
			attribute.String("tool", rej.Name), attribute.Bool("translated", rej.Translated)))
	}
	if rej.ListErr != nil {
		in.noList.Add(ctx, 1)
	}
}

// onPass counts a pass-through by its reason, a fixed set.
func (in *instruments) onPass(r *http.Request, p toolguard.Pass) {
	in.passed.Add(r.Context(), 1, metric.WithAttributes(attribute.String("reason", p.Reason.String())))
}

// newHandler returns the guarded MCP endpoint, counting in meter.
func newHandler(meter metric.Meter) (http.Handler, error) {
	s := server.NewMCPServer("weather", "1.0.0", server.WithToolCapabilities(true))
	s.AddTool(mcp.NewTool("get_weather", mcp.WithDescription("Weather for a city"), mcp.WithString("city", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("Sunny in " + req.GetString("city", "?")), nil
		})
	mcpHandler := server.NewStreamableHTTPServer(s)
	tools, err := toolguardmcpgo.Tools(s, mcpHandler, toolguardmcpgo.Options{})
	if err != nil {
		return nil, err
	}
	in, err := newInstruments(meter)
	if err != nil {
		return nil, err
	}
	guard, err := toolguard.New(toolguard.Options{Tools: tools, OnReject: in.onReject, OnPass: in.onPass})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", guard.Handler(mcpHandler))
	return mux, nil
}

// newMeterProvider reads with reader, keeping at most 100 series per
// instrument: past that, new attribute sets are counted together in one
// series marked otel.metric.overflow=true, so callers inventing names
// cannot grow the memory or the series count.
func newMeterProvider(reader sdkmetric.Reader) *sdkmetric.MeterProvider {
	return sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithCardinalityLimit(100))
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	every := flag.Duration("export-every", 30*time.Second, "how often the counts are printed")
	flag.Parse()
	mp := newMeterProvider(sdkmetric.NewPeriodicReader(printExporter{}, sdkmetric.WithInterval(*every)))
	defer mp.Shutdown(context.Background())
	if err := run(mp.Meter("toolguard"), *addr, func(url string) { fmt.Println("listening on", url) }); err != nil {
		log.Fatal(err)
	}
}

// run serves on addr until the process ends, telling ready the URL.
func run(meter metric.Meter, addr string, ready func(url string)) error {
	h, err := newHandler(meter)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	ready("http://" + ln.Addr().String() + "/mcp")
	return http.Serve(ln, h)
}

// printExporter prints each collection to standard output as JSON: a
// stand-in for an OTLP or Prometheus exporter.
type printExporter struct{}

func (printExporter) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return sdkmetric.DefaultTemporalitySelector(k)
}

func (printExporter) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return sdkmetric.DefaultAggregationSelector(k)
}

func (printExporter) Export(_ context.Context, rm *metricdata.ResourceMetrics) error {
	return json.NewEncoder(os.Stdout).Encode(rm.ScopeMetrics)
}

func (printExporter) ForceFlush(context.Context) error { return nil }
func (printExporter) Shutdown(context.Context) error   { return nil }
