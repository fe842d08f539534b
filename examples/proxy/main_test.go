package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolguard/toolguard/conformance"
	"github.com/toolguard/toolguard/examples/internal/exampletest"
	"github.com/toolguard/toolguard/internal/fixture"
)

// The proxy in front of a real TypeScript SDK server turns its
// OBSERVED_RISK result_is_error into VERIFIED, while real clients still
// list and call its tools through the proxy.
func TestProxyInFrontOfTypeScript(t *testing.T) {
	for _, mode := range []string{"--mode=stateful", "--mode=stateless"} {
		t.Run(mode, func(t *testing.T) {
			ts := fixture.StartTS(t, mode)
			ctx := context.Background()
			before, err := conformance.CheckURL(ctx, ts.URL, conformance.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if before.Verdict != conformance.ObservedRisk || before.Category != conformance.ResultIsError {
				t.Fatalf("the TypeScript server alone: %s", before)
			}
			url := exampletest.Start(t, func(addr string, ready func(string)) error { return run(ts.URL, addr, ready) })
			after, err := conformance.CheckURL(ctx, url, conformance.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if after.Verdict != conformance.Verified || *after.ErrorCode != -32602 {
				t.Fatalf("through the proxy: %s", after)
			}
			t.Logf("alone: %s %s; through the proxy: %s (code %d)", before.Verdict, before.Category, after.Verdict, *after.ErrorCode)

			// Real clients: mcp-go, go-sdk, TypeScript, inspector-cli.
			exampletest.Exercise(t, url, "echo", map[string]any{"text": "hi"}, "echo:hi")
			exampletest.RealClients(t, url, "echo", map[string]any{"text": "hi"}, "echo:hi")

			// A real go-sdk client: list, call, and the -32602 with the list.
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "proxy-test", Version: "1"}, nil).
				Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			list, err := cs.ListTools(ctx, nil)
			if err != nil || len(list.Tools) != 2 {
				t.Fatalf("list: %v %+v", err, list)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"text": "x"}})
			if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "add:x" {
				t.Fatalf("call: %v %+v", err, res)
			}
			_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "ad", Arguments: map[string]any{}})
			var werr *jsonrpc.Error
			if !errors.As(err, &werr) || werr.Code != -32602 || !strings.Contains(string(werr.Data), `"availableTools":["add","echo"]`) {
				t.Fatalf("unknown tool: %v", err)
			}
		})
	}
}

func TestProxyRejectsBadUpstream(t *testing.T) {
	for _, u := range []string{"", "ftp://x", "not a url", "http://"} {
		if _, err := newProxy(u); err == nil {
			t.Errorf("upstream %q accepted", u)
		}
	}
}
