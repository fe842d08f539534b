package conformance

import (
	"context"
	"net/http"
	"net/http/httptest"
)

// A ReportError is returned by TestHandler when the check is not VERIFIED.
type ReportError struct {
	Report Report // the whole report
}

// Error formats the report's lines.
func (e *ReportError) Error() string {
	return "conformance: " + e.Report.Lines()
}

// TestHandler checks the MCP server h in-process: it serves h on a loopback
// listener, calls a made-up tool and returns nil when h answers with a
// JSON-RPC error object. Otherwise it returns a *ReportError saying what
// came back. Like testing/fstest.TestFS it leaves the choice of t.Fatal or
// t.Error to the caller:
//
//	if err := conformance.TestHandler(handler, conformance.Options{}); err != nil {
//		t.Fatal(err)
//	}
//
// TestHandler judges error_taxonomy alone. CheckHandler returns the whole
// report, mcp_name_header included, for a test that holds the handler to
// more (a strict Mcp-Name, say).
func TestHandler(h http.Handler, opts Options) error {
	rep, err := CheckHandler(h, opts)
	if err != nil {
		return err
	}
	if rep.Verdict != Verified {
		return &ReportError{Report: rep}
	}
	return nil
}

// CheckHandler checks the MCP server h in-process, as TestHandler does,
// and returns its report: both checks, error_taxonomy and
// mcp_name_header. A test for a strict 2026-07-28 server:
//
//	rep, err := conformance.CheckHandler(handler, conformance.Options{})
//	if err != nil || rep.NameHeader.State != conformance.Strict {
//		t.Fatalf("%v: %s", err, rep.Lines())
//	}
func CheckHandler(h http.Handler, opts Options) (Report, error) {
	srv := httptest.NewServer(h)
	defer srv.Close()
	if opts.Client == nil {
		opts.Client = srv.Client()
	}
	return CheckURL(context.Background(), srv.URL, opts)
}
