package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolguard/toolguard/conformance/internal/zoo"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// The text report says what a VERIFIED error's data holds, which tells a
// server behind a guard from one alone where both answer -32602; and it
// shows no protocol where the handshake did not complete (the JSON report
// keeps the era the checker spoke).
func TestTextReportShowsErrorDataAndNoProtocolWithoutAHandshake(t *testing.T) {
	g, err := toolguard.New(toolguard.Options{})
	if err != nil {
		t.Fatal(err)
	}
	alone := &zoo.Fake{Tools: []string{"alpha", "beta", "gamma"}}
	guarded := httptest.NewServer(g.Handler(&zoo.Fake{Tools: []string{"alpha", "beta", "gamma"}}))
	defer guarded.Close()
	plain := httptest.NewServer(alone)
	defer plain.Close()
	gone := httptest.NewServer(http.NotFoundHandler())
	defer gone.Close()

	_, out, _ := runCLI(t, "", guarded.URL)
	if !strings.Contains(words(out), "error data 3 availableTools") || !strings.Contains(words(out), "protocol 20") {
		t.Errorf("guarded:\n%s", out)
	}
	if _, out, _ = runCLI(t, "", plain.URL); strings.Contains(out, "error data") {
		t.Errorf("alone:\n%s", out)
	}
	if _, out, _ = runCLI(t, "", gone.URL); strings.Contains(out, "protocol") || !strings.Contains(out, "404") {
		t.Errorf("a 404 at the handshake:\n%s", out)
	}
}
