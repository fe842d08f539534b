package toolguardecho

// A call the guard could answer before the server, but without an
// Accept header (servers refuse it before their lookup), reaches the
// handler through echo with its body byte for byte; with an empty Accept
// too; with Accept it is answered.

import (
	"io"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
)

func TestNoAcceptReachesTheHandler(t *testing.T) {
	for _, tc := range []struct {
		name   string
		accept []string
		passes bool
	}{{"none", nil, true}, {"empty", []string{""}, true}, {"both", []string{"application/json, text/event-stream"}, false}} {
		t.Run(tc.name, func(t *testing.T) {
			var got []byte
			called := false
			e, handled := echoHost(t, opts(), func(c echo.Context) error {
				called = true
				got, _ = io.ReadAll(c.Request().Body)
				return c.NoContent(299)
			})
			r := post(unknownCall)
			r.Header.Del("Accept")
			if tc.accept != nil {
				r.Header["Accept"] = tc.accept
			}
			w := httptest.NewRecorder()
			e.ServeHTTP(w, r)
			if *handled != 0 {
				t.Errorf("echo's error handler ran %d times", *handled)
			}
			if !tc.passes {
				if called || w.Code != 200 {
					t.Errorf("with Accept: next ran %v, %d %s; want the guard's answer", called, w.Code, w.Body)
				}
				return
			}
			if !called || w.Code != 299 || string(got) != unknownCall {
				t.Errorf("without Accept: next ran %v, %d, body %q; want the call passed whole", called, w.Code, got)
			}
		})
	}
}
