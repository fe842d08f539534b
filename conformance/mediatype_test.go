package conformance

import (
	"testing"

	"github.com/toolguard/toolguard/internal/mcpwire"
)

// A reply's media type is read as clients read it: a malformed parameter
// does not hide the type, and case does not matter.
func TestReplyMediaTypeIsReadAsClientsReadIt(t *testing.T) {
	for ct, want := range map[string]string{
		"application/json":                      "application/json",
		"Application/JSON; charset=utf-8":       "application/json",
		"text/event-stream; charset":            "text/event-stream", // malformed parameter: the type still counts
		"text/event-stream;;":                   "text/event-stream",
		"text/html; charset=\"unterminated":     "text/html",
		" TEXT/PLAIN ":                          "text/plain",
		"":                                      "",
		"json":                                  "json", // not a type/subtype: the caller maps it to "other"
		"application/json, text/event-stream":   "application/json, text/event-stream",
		"text/event-stream; charset=utf-8; a=b": "text/event-stream",
	} {
		if got := clientMediaType(ct); got != want {
			t.Errorf("clientMediaType(%q) = %q, want %q", ct, got, want)
		}
	}
	// The server side (MediaType) is strict where the client side is not.
	if got := mcpwire.MediaType("text/event-stream; charset"); got != "" {
		t.Errorf("MediaType of a malformed parameter = %q, want \"\"", got)
	}
}
