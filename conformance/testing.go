package conformance

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
)

// A ReportError is returned by TestHandler when the check is not VERIFIED,
// or, with RequireGuard, when the answer is not the guard's.
type ReportError struct {
	Report Report // the whole report
	// Path is the endpoint's path (and query) the handler was asked at.
	Path string
	// Missing, when the check is VERIFIED, says what of the guard's
	// answer RequireGuard or RequireSuggestions found missing.
	Missing string
}

// Error names the path and the status of the deciding reply, then what
// was missing, then the report's lines.
func (e *ReportError) Error() string {
	var b strings.Builder
	b.WriteString("conformance: ")
	if e.Path != "" {
		b.WriteString("POST " + e.Path + ": ")
	}
	if e.Report.HTTPStatus != 0 {
		fmt.Fprintf(&b, "HTTP %d", e.Report.HTTPStatus)
	} else {
		b.WriteString("no HTTP reply")
	}
	if e.Report.Stage != "" {
		b.WriteString(" at " + e.Report.Stage)
	}
	if e.Missing != "" {
		b.WriteString(", VERIFIED but not the guard's answer: " + e.Missing)
	}
	return b.String() + "\n" + e.Report.Lines()
}

// A HandlerOption tells TestHandler and CheckHandler where the endpoint is
// and what TestHandler requires.
type HandlerOption func(*handlerConfig)

type handlerConfig struct {
	path        string
	guard       bool
	suggestions bool
}

// At serves the handler's endpoint at path, "/mcp" say, instead of "/". A
// URL is taken for its path and query, so the address a deployment's
// clients use can be given as is; its host is not asked (the handler is
// served on a loopback listener of its own).
func At(pathOrURL string) HandlerOption {
	return func(c *handlerConfig) { c.path = pathOrURL }
}

// RequireGuard makes TestHandler require toolguard's answer to the
// made-up tool, not only a JSON-RPC error: the error -32602 with
// data.availableTools, which the guard fills with the tools the server
// listed. It pins "the guard is in front" in a test: the server alone
// answers -32602 without the list (or another error), and fails. A guard
// with HideToolList fails it too.
func RequireGuard() HandlerOption {
	return func(c *handlerConfig) { c.guard = true }
}

// RequireSuggestions is RequireGuard that also requires data.suggestions,
// the listed tools nearest the name asked. The guard suggests only names
// near the one asked, so give Options.ProbeName a near miss of a tool the
// handler has ("serch" for "search"); it must not be a listed name.
func RequireSuggestions() HandlerOption {
	return func(c *handlerConfig) { c.guard, c.suggestions = true, true }
}

// TestHandler checks the MCP server h in-process: it serves h on a loopback
// listener, calls a made-up tool and returns nil when h answers with a
// JSON-RPC error object. Otherwise it returns a *ReportError naming the
// path and the status, and saying what came back. Like testing/fstest.TestFS
// it leaves the choice of t.Fatal or t.Error to the caller:
//
//	if err := conformance.TestHandler(handler, conformance.Options{}); err != nil {
//		t.Fatal(err)
//	}
//
// The endpoint is at "/" unless At says where; RequireGuard also requires
// toolguard's answer:
//
//	err := conformance.TestHandler(handler, conformance.Options{},
//		conformance.At("/mcp"), conformance.RequireGuard())
//
// TestHandler judges error_taxonomy alone. CheckHandler returns the whole
// report, mcp_name_header included, for a test that holds the handler to
// more (a strict Mcp-Name, say).
func TestHandler(h http.Handler, opts Options, hopts ...HandlerOption) error {
	cfg, err := handlerOptions(hopts)
	if err != nil {
		return err
	}
	rep, err := checkHandler(h, opts, cfg.path)
	if err != nil {
		return err
	}
	if rep.Verdict != Verified {
		return &ReportError{Report: rep, Path: cfg.path}
	}
	if cfg.guard {
		if missing := guardMissing(rep, cfg.suggestions); missing != "" {
			return &ReportError{Report: rep, Path: cfg.path, Missing: missing}
		}
	}
	return nil
}

// guardMissing says what of the guard's answer rep lacks; "" if nothing.
func guardMissing(rep Report, suggestions bool) string {
	switch {
	case rep.ErrorCode == nil || *rep.ErrorCode != -32602:
		code := "no integer code"
		if rep.ErrorCode != nil {
			code = fmt.Sprintf("code %d", *rep.ErrorCode)
		}
		return "the error has " + code + ", want -32602 (is the guard in front?)"
	case rep.ErrorData == nil || rep.ErrorData.AvailableTools == nil:
		return "the -32602 error has no data.availableTools (is the guard in front, and does it show the list?)"
	case suggestions && len(rep.ErrorData.Suggestions) == 0:
		return "the -32602 error has no data.suggestions (is Options.ProbeName near a tool the handler lists?)"
	}
	return ""
}

// CheckHandler checks the MCP server h in-process, as TestHandler does
// (at "/", or where At says; RequireGuard and RequireSuggestions change
// nothing here), and returns its report: both checks, error_taxonomy and
// mcp_name_header. A test for a strict 2026-07-28 server:
//
//	rep, err := conformance.CheckHandler(handler, conformance.Options{})
//	if err != nil || rep.NameHeader.State != conformance.Strict {
//		t.Fatalf("%v: %s", err, rep.Lines())
//	}
func CheckHandler(h http.Handler, opts Options, hopts ...HandlerOption) (Report, error) {
	cfg, err := handlerOptions(hopts)
	if err != nil {
		return Report{}, err
	}
	return checkHandler(h, opts, cfg.path)
}

func handlerOptions(hopts []HandlerOption) (handlerConfig, error) {
	var cfg handlerConfig
	for _, o := range hopts {
		o(&cfg)
	}
	path, err := endpointPath(cfg.path)
	cfg.path = path
	return cfg, err
}

// endpointPath returns the path and query of a path or URL, "/" for "".
func endpointPath(s string) (string, error) {
	if s == "" {
		return "/", nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("conformance: At(%q): %v", s, err)
	}
	if u.Scheme != "" && u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("conformance: At(%q): not a path nor an http(s) URL", s)
	}
	if u.Scheme == "" && u.Host == "" && !strings.HasPrefix(s, "/") {
		return "", fmt.Errorf("conformance: At(%q): a path starts with /", s)
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	return p, nil
}

func checkHandler(h http.Handler, opts Options, path string) (Report, error) {
	srv := httptest.NewServer(h)
	defer srv.Close()
	if opts.Client == nil {
		opts.Client = srv.Client()
	}
	return CheckURL(context.Background(), srv.URL+path, opts)
}
