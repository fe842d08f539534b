package main

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"slices"
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
			url := exampletest.Start(t, func(addr string, ready func(string)) error { return run(ts.URL, addr, config{}, ready) })
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
		if _, err := newProxy(u, config{}); err == nil {
			t.Errorf("upstream %q accepted", u)
		}
	}
}

// A TypeScript SDK v2 server whose tool list depends on the caller, as
// github-mcp-server's does: delete_repository is listed only to a client
// that declares elicitation, and run for every caller (one that does not
// declare it gets an actionable isError). Through the proxy, the real v2
// client lists and calls the tool exactly as without the proxy, declaring
// elicitation or not: the server decides. An unknown name gets -32602 with
// the list the caller may call. A foreign Host gets the server's own 403,
// never a tool list.
func TestProxyShowsEachCallerItsOwnList(t *testing.T) {
	ts := fixture.StartNode(t, "v2-caps-server.mjs", "--host-check")
	cfg := config{}
	url := exampletest.Start(t, func(addr string, ready func(string)) error { return run(ts.URL, addr, cfg, ready) })

	alone := fixture.V2Client(t, ts.URL, "delete_repository", "elicitation")
	through := fixture.V2Client(t, url, "delete_repository", "elicitation")
	if !reflect.DeepEqual(alone, through) || through.Call.Result == nil || through.Call.Result.Content[0].Text != "deleted" ||
		!slices.Equal(through.Tools, []string{"delete_repository", "get_repository"}) {
		t.Fatalf("declaring elicitation: alone %+v, through the proxy %+v", alone, through)
	}
	aloneNo := fixture.V2Client(t, ts.URL, "delete_repository", "")
	throughNo := fixture.V2Client(t, url, "delete_repository", "")
	if !reflect.DeepEqual(aloneNo, throughNo) || throughNo.Call.Result == nil || !throughNo.Call.Result.IsError ||
		!strings.Contains(throughNo.Call.Result.Content[0].Text, "requires client support for form elicitation") ||
		!slices.Equal(throughNo.Tools, []string{"get_repository"}) {
		t.Fatalf("not declaring it: alone %+v, through the proxy %+v", aloneNo, throughNo)
	}
	unknown := fixture.V2Client(t, url, "delete_repositry", "")
	if unknown.Call.Code != -32602 || unknown.Call.Message != "Unknown tool: delete_repositry. Call tools/list for the available tools." ||
		!strings.Contains(string(unknown.Call.Data), `"availableTools":["get_repository"]`) {
		t.Fatalf("unknown tool through the proxy: %+v (data %s)", unknown, unknown.Call.Data)
	}
	t.Logf("declaring elicitation: %v, call %q; not declaring it: %v, call %q; unknown: %d %q %s",
		through.Tools, through.Call.Result.Content[0].Text, throughNo.Tools, throughNo.Call.Result.Content[0].Text,
		unknown.Call.Code, unknown.Call.Message, unknown.Call.Data)

	// A foreign Host, after the lists above warmed every cache, gets the
	// server's own 403; a good one gets -32602 with the server's status.
	for _, target := range []string{ts.URL, url} {
		if status, body := postUnknown(t, target, "evil.example"); status != http.StatusForbidden || strings.Contains(body, "availableTools") {
			t.Errorf("foreign Host at %s: %d %s", target, status, body)
		}
		if status, body := postUnknown(t, target, ""); status != http.StatusOK || !strings.Contains(body, "-32602") {
			t.Errorf("unknown tool at %s: %d %s", target, status, body)
		}
	}
}

// postUnknown posts a 2026-07-28 call of an unknown tool to target, with
// host as the Host header when not empty.
func postUnknown(t *testing.T, target, host string) (int, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":{},"_meta":` +
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	hdr := http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"nope"}}
	if host != "" {
		hdr.Set("Host", host)
	}
	return fixture.Post(t, target, body, hdr)
}
