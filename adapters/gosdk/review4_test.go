package toolguardgosdk

// Reviewer's tests (review4), passing coverage: after the third review a
// call without Accept passes (69aa321); every other Accept is read by
// mcpwire.Accepts, which is not go-sdk's own reading (it drops a range
// with q=0, go-sdk does not).

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The guard answers an unknown call only where go-sdk itself answers it
// with -32602, and then with the same HTTP status; where go-sdk refuses
// the request (400 for its Accept check), the answer is go-sdk's own,
// for every spelling of Accept: none, empty, wildcards, one media type,
// both with one at q=0, both across two header lines, upper case.
func TestReview4AcceptSpellings(t *testing.T) {
	accepts := [][]string{
		nil,
		{""},
		{"*/*"},
		{"application/*, text/*"},
		{"application/json"},
		{"text/event-stream"},
		{"application/json;q=0, text/event-stream"},
		{"application/json, text/event-stream;q=0"},
		{"application/json", "text/event-stream"},
		{"APPLICATION/JSON, TEXT/EVENT-STREAM"},
		{"application/json;charset=utf-8, text/event-stream;q=0.5"},
		{"text/html, application/xml"},
	}
	for _, stateless := range []bool{false, true} {
		t.Run(map[bool]string{false: "stateful", true: "stateless"}[stateless], func(t *testing.T) {
			h, g, hdr := echoGuard(t, stateless)
			alone := httptest.NewServer(h)
			defer alone.Close()
			guarded := httptest.NewServer(g.Handler(h))
			defer guarded.Close()
			post := func(srv *httptest.Server, accept []string) (int, string) {
				req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(callBody("nope")))
				req.Header.Set("Content-Type", "application/json")
				for k, v := range hdr {
					req.Header[k] = v
				}
				req.Header.Del("Accept")
				if accept != nil {
					req.Header["Accept"] = accept
				}
				res, err := srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				b, _ := io.ReadAll(res.Body)
				return res.StatusCode, string(b)
			}
			for _, accept := range accepts {
				code, body := post(alone, accept)
				gcode, gbody := post(guarded, accept)
				served := strings.Contains(body, `-32602`) || strings.Contains(body, `"isError":true`)
				if !served && (strings.Contains(gbody, "availableTools") || gcode != code) {
					t.Errorf("Accept %q: go-sdk refuses (%d %s); guarded: %d %s", accept, code, body, gcode, gbody)
				}
				if served && gcode != code {
					t.Errorf("Accept %q: go-sdk %d %s; guarded %d %s", accept, code, body, gcode, gbody)
				}
			}
		})
	}
}
