package conformance

import (
	"context"
	"net/http"
	"net/http/httptest"
)

// A ReportError is returned by TestHandler when the check is not VERIFIED.
type ReportError struct {
	Report Report
}

func (e *ReportError) Error() string {
	return "conformance: " + e.Report.String()
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
func TestHandler(h http.Handler, opts Options) error {
	srv := httptest.NewServer(h)
	defer srv.Close()
	if opts.Client == nil {
		opts.Client = srv.Client()
	}
	rep, err := CheckURL(context.Background(), srv.URL, opts)
	if err != nil {
		return err
	}
	if rep.Verdict != Verified {
		return &ReportError{Report: rep}
	}
	return nil
}
