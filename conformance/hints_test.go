package conformance_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolguard/toolguard/conformance"
	"github.com/toolguard/toolguard/conformance/internal/zoo"
)

// Hints are notes on the deciding reply: they keep the verdict and the
// category the reply has without them.
func TestHintsKeepTheVerdict(t *testing.T) {
	call := func(status int, ctype, body string) http.Handler {
		return &zoo.Fake{Tools: []string{"echo"}, On: map[string]func(http.ResponseWriter, string){"tools/call": zoo.Answer(status, ctype, body)}}
	}
	cases := []struct {
		name     string
		server   http.Handler
		verdict  conformance.Verdict
		category conformance.Category
		hints    []conformance.HintKind
		text     string // in the first hint
	}{
		{"puppeteer without a browser: -32603 naming no tool", call(200, "application/json",
			`{"jsonrpc":"2.0","id":{{id}},"error":{"code":-32603,"message":"Could not find Chrome (ver. 131.0.6778.204). This can occur if either\n 1. you did not perform an installation"}}`),
			conformance.Verified, "", []conformance.HintKind{conformance.HintToolNotNamed}, `error -32603 does not name the tool asked, __toolguard_probe_nonexistent_tool__ (its message reads "Could not find Chrome`},
		{"an error naming the tool", &zoo.Fake{Tools: []string{"echo"}}, conformance.Verified, "", nil, ""},
		{"an error naming the tool, with HTTP 500", call(500, "application/json",
			`{"jsonrpc":"2.0","id":{{id}},"error":{"code":-32602,"message":"Unknown tool: __toolguard_probe_nonexistent_tool__"}}`),
			conformance.Verified, "", nil, ""},
		{"a gateway's -32000 naming an upstream", call(502, "application/json",
			`{"jsonrpc":"2.0","id":{{id}},"error":{"code":-32000,"message":"upstream connect error or disconnect/reset before headers"}}`),
			conformance.Verified, "", []conformance.HintKind{conformance.HintProxy, conformance.HintToolNotNamed}, `HTTP 502 whose body names "upstream"`},
		{"a proxy's 502 page", call(502, "text/html", "<html><head><title>502 Bad Gateway</title></head><body><center>nginx</center></body></html>"),
			conformance.ObservedRisk, conformance.NotJSON, []conformance.HintKind{conformance.HintProxy}, `names "Bad Gateway"`},
		{"a bare 504 at the handshake", &zoo.Fake{On: map[string]func(http.ResponseWriter, string){"initialize": zoo.Answer(504, "text/plain", "")}},
			conformance.Unverified, conformance.ToolsListUnreadable, []conformance.HintKind{conformance.HintProxy}, "HTTP 504 (Gateway Timeout): a 5xx often comes from a proxy"},
		{"a result whose text names an upstream", call(200, "application/json",
			`{"jsonrpc":"2.0","id":{{id}},"result":{"content":[{"type":"text","text":"no healthy upstream"}],"isError":true}}`),
			conformance.ObservedRisk, conformance.ResultIsError, []conformance.HintKind{conformance.HintProxy}, `the reply names "upstream"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(tc.server)
			defer srv.Close()
			rep, err := conformance.CheckURL(context.Background(), srv.URL, conformance.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var kinds []conformance.HintKind
			for _, h := range rep.Hints {
				kinds = append(kinds, h.Kind)
			}
			if rep.Verdict != tc.verdict || rep.Category != tc.category || !equalKinds(kinds, tc.hints) {
				t.Fatalf("%s, hints %v; want %s %s, hints %v", rep, rep.Hints, tc.verdict, tc.category, tc.hints)
			}
			if tc.text != "" && !strings.Contains(rep.Hints[0].Text, tc.text) {
				t.Errorf("hint %q lacks %q", rep.Hints[0].Text, tc.text)
			}
		})
	}
}

func equalKinds(a, b []conformance.HintKind) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Over stdio, the puppeteer-like answer keeps VERIFIED and carries the
// note too.
func TestStdioHintOnAnErrorNamingNoTool(t *testing.T) {
	rep, err := conformance.CheckCommand(context.Background(), zoo.StdioServer(
		`{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"Could not find Chrome (ver. 131.0.6778.204)."}}`), conformance.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != conformance.Verified || len(rep.Hints) != 1 || rep.Hints[0].Kind != conformance.HintToolNotNamed {
		t.Fatalf("%s, hints %+v", rep, rep.Hints)
	}
}
