package conformance_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/toolguard/toolguard/conformance"
	"github.com/toolguard/toolguard/conformance/internal/zoo"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// atMCP serves h at /mcp only, as every example does: anything else is
// the mux's plain-text 404.
func atMCP(h http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	return mux
}

// TestHandler asks the path it is given: a server at /mcp fails at "/"
// with a message naming the path and the 404, and passes at "/mcp" and at
// a URL ending in /mcp.
func TestTestHandlerAtAPath(t *testing.T) {
	h := atMCP(&zoo.Fake{Tools: []string{"x"}})
	err := conformance.TestHandler(h, conformance.Options{})
	var re *conformance.ReportError
	if !errors.As(err, &re) || re.Report.HTTPStatus != 404 || re.Path != "/" ||
		!strings.HasPrefix(err.Error(), "conformance: POST /: HTTP 404 at initialize\n") {
		t.Errorf("at /: %v", err)
	}
	// The handshake failed: the report does not claim the server speaks
	// 2025-11-25.
	if err != nil && strings.Contains(err.Error(), "the server speaks") {
		t.Errorf("at /, a claim about the era: %v", err)
	}
	for _, at := range []string{"/mcp", "http://localhost:8080/mcp", "https://mcp.example/mcp"} {
		if err := conformance.TestHandler(h, conformance.Options{}, conformance.At(at)); err != nil {
			t.Errorf("At(%q): %v", at, err)
		}
	}
	rep, err := conformance.CheckHandler(h, conformance.Options{}, conformance.At("/mcp"))
	if err != nil || rep.Verdict != conformance.Verified || !strings.HasSuffix(rep.Target, "/mcp") {
		t.Errorf("CheckHandler at /mcp: %s, %v", rep, err)
	}
	for _, bad := range []string{"mcp", "ftp://x/mcp", "http://[::1"} {
		if err := conformance.TestHandler(h, conformance.Options{}, conformance.At(bad)); err == nil || errors.As(err, &re) {
			t.Errorf("At(%q): %v, want an error of the option", bad, err)
		}
	}
}

// In guard-required mode, a server answering -32602 without data fails,
// naming what is missing; one answering with data.availableTools passes,
// and the report carries the list.
func TestTestHandlerRequireGuard(t *testing.T) {
	plain := &zoo.Fake{Tools: []string{"echo", "add"}}
	if err := conformance.TestHandler(plain, conformance.Options{}); err != nil {
		t.Fatalf("the plain server is VERIFIED: %v", err)
	}
	err := conformance.TestHandler(atMCP(plain), conformance.Options{}, conformance.At("/mcp"), conformance.RequireGuard())
	var re *conformance.ReportError
	if !errors.As(err, &re) || re.Report.Verdict != conformance.Verified ||
		!strings.HasPrefix(err.Error(), "conformance: POST /mcp: HTTP 200 at tools/call, VERIFIED but not the guard's answer: the -32602 error has no data.availableTools") {
		t.Errorf("the plain server, guard required: %v", err)
	}

	other := &zoo.Fake{Tools: []string{"echo"}, On: map[string]func(http.ResponseWriter, string){
		"tools/call": zoo.Answer(200, "application/json", `{"jsonrpc":"2.0","id":{{id}},"error":{"code":-32601,"message":"no","data":{"availableTools":["echo"]}}}`)}}
	if err := conformance.TestHandler(other, conformance.Options{}, conformance.RequireGuard()); err == nil || !strings.Contains(err.Error(), "code -32601, want -32602") {
		t.Errorf("-32601 with the list, guard required: %v", err)
	}

	guarded := &zoo.Fake{Tools: []string{"echo", "add"}, On: map[string]func(http.ResponseWriter, string){
		"tools/call": zoo.Answer(200, "application/json", `{"jsonrpc":"2.0","id":{{id}},"error":{"code":-32602,"message":"Unknown tool","data":{"availableTools":["add","echo"]}}}`)}}
	if err := conformance.TestHandler(guarded, conformance.Options{}, conformance.RequireGuard()); err != nil {
		t.Errorf("an answer with data.availableTools, guard required: %v", err)
	}
	err = conformance.TestHandler(guarded, conformance.Options{}, conformance.RequireSuggestions())
	if !errors.As(err, &re) || !strings.Contains(re.Missing, "no data.suggestions") {
		t.Errorf("no suggestions, suggestions required: %v", err)
	}
	rep, err := conformance.CheckHandler(guarded, conformance.Options{})
	if err != nil || rep.ErrorData == nil || !slices.Equal(rep.ErrorData.AvailableTools, []string{"add", "echo"}) || rep.ErrorData.Suggestions != nil {
		t.Errorf("report %s, data %+v, %v", rep, rep.ErrorData, err)
	}
	rep, _ = conformance.CheckHandler(plain, conformance.Options{})
	if rep.ErrorData != nil {
		t.Errorf("the plain server's report has data %+v", rep.ErrorData)
	}
}

// toolguard's guard in front of the plain server passes guard-required
// mode, and with a near-miss name, the suggestions mode (the guard's
// existing API: StaticTools).
func TestTestHandlerWithTheGuard(t *testing.T) {
	g, err := toolguard.New(toolguard.Options{Tools: toolguard.StaticTools("echo", "add")})
	if err != nil {
		t.Fatal(err)
	}
	h := atMCP(g.Handler(&zoo.Fake{Tools: []string{"echo", "add"}}))
	if err := conformance.TestHandler(h, conformance.Options{}, conformance.At("/mcp"), conformance.RequireGuard()); err != nil {
		t.Errorf("guard required: %v", err)
	}
	if err := conformance.TestHandler(h, conformance.Options{ProbeName: "ecoh"}, conformance.At("/mcp"), conformance.RequireSuggestions()); err != nil {
		t.Errorf("suggestions required: %v", err)
	}
}

// A 4xx or 5xx the checker cannot classify shows its body in the detail,
// on one line and bounded: a proxy's 502 says why.
func TestUnclassifiedErrorShowsTheBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusBadGateway)
		w.Write([]byte("the upstream cannot be reached:\n  connection refused\n"))
	}))
	defer srv.Close()
	rep, err := conformance.CheckURL(context.Background(), srv.URL+"/mcp", conformance.Options{})
	if err != nil || rep.Category != conformance.ToolsListUnreadable || rep.HTTPStatus != 502 ||
		!strings.Contains(rep.Detail, `the body reads "the upstream cannot be reached: connection refused"`) {
		t.Errorf("%s, %v", rep, err)
	}
	if strings.Contains(rep.Lines(), "the server speaks") {
		t.Errorf("a claim about the era: %s", rep.Lines())
	}

	long := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte(strings.Repeat("é\r\n", 5000)))
	}))
	defer long.Close()
	rep, _ = conformance.CheckURL(context.Background(), long.URL, conformance.Options{})
	_, body, ok := strings.Cut(rep.Detail, "the body reads ")
	if !ok || strings.ContainsAny(rep.Detail, "\r\n") || len(body) > 260 || !strings.HasSuffix(body, `…"`) {
		t.Errorf("a long body: %q", rep.Detail)
	}
}
