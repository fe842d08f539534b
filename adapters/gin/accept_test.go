package toolguardgin

// A call the guard could answer before the server, but without an
// Accept header (servers refuse it before their lookup), reaches the next
// handler through gin with its body byte for byte and its status; with
// an empty Accept too; with Accept it is answered.

import (
	"io"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
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
			r := gin.New()
			r.POST("/api/mcp", mustNew(t, opts()), func(c *gin.Context) {
				called = true
				got, _ = io.ReadAll(c.Request.Body)
				c.Status(299)
			})
			req := post(unknownCall)
			req.Header.Del("Accept")
			if tc.accept != nil {
				req.Header["Accept"] = tc.accept
			}
			w := httptest.NewRecorder()
			r.ServeHTTP(w, req)
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
