package main

import (
	"context"
	"strings"
	"testing"
)

func TestDemo(t *testing.T) {
	var out strings.Builder
	if err := run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		"isError server (like TypeScript, Python)   OBSERVED_RISK result_is_error   VERIFIED (-32602)",
		"mcp-go v1.2.1                              VERIFIED (-32602)",
		`"result":{"content":[{"text":"Unknown tool: get_wether","type":"text"}],"isError":true}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: get_wether. Did you mean get_weather? Call tools/list for the available tools.","data":{"availableTools":["get_weather","search_docs"],"suggestions":["get_weather"]}}}`,
		`"message":"tool 'get_wether' not found: tool not found"`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Count(s, `"availableTools":["get_weather","search_docs"]`) != 2 {
		t.Errorf("both guarded servers should list the tools:\n%s", s)
	}
	t.Log("\n" + s)
}
