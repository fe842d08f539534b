package toolguardgin

// Reviewer's test (review4), passing coverage: after the third review a
// call without Accept passes (69aa321). Through gin's middleware (Check)
// the unknown call without Accept reaches the handler with its body byte
// for byte; with an empty Accept too; with Accept it is still answered.

import (
	"io"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
)

func TestReview4NoAcceptPassesThroughGin(t *testing.T) {
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
