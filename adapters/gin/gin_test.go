package toolguardgin

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	toolguard "github.com/toolguard/toolguard/middleware"
)

func init() { gin.SetMode(gin.TestMode) }

const (
	unknownCall = `{"jsonrpc":"2.0","id":"g-1","method":"tools/call","params":{"name":"get_wether","arguments":{}}}`
	knownCall   = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Oslo"}}}`
)

func opts() toolguard.Options {
	return toolguard.Options{Tools: toolguard.StaticTools("get_weather", "search_docs")}
}

func post(body string) *http.Request {
	r := httptest.NewRequest("POST", "/api/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	return r
}

func mustNew(t *testing.T, o toolguard.Options) gin.HandlerFunc {
	t.Helper()
	h, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestRejectionAbortsAndMatchesNetHTTP(t *testing.T) {
	r := gin.New()
	var later bool
	api := r.Group("/api")
	api.POST("/mcp", mustNew(t, opts()), func(c *gin.Context) { later = true; c.Status(299) })
	w := httptest.NewRecorder()
	r.ServeHTTP(w, post(unknownCall))

	g, _ := toolguard.New(opts())
	want := httptest.NewRecorder()
	g.Handler(http.NotFoundHandler()).ServeHTTP(want, post(unknownCall))
	if later {
		t.Error("a later handler ran after the rejection")
	}
	if w.Code != want.Code || w.Body.String() != want.Body.String() ||
		w.Header().Get("Content-Type") != want.Header().Get("Content-Type") ||
		w.Header().Get("Content-Length") != want.Header().Get("Content-Length") {
		t.Errorf("gin: %d %v %s\nnet/http: %d %v %s", w.Code, w.Header(), w.Body, want.Code, want.Header(), want.Body)
	}
}

func TestPassThroughBindsAndKeepsContext(t *testing.T) {
	r := gin.New()
	var got struct {
		ID     int    `json:"id"`
		Method string `json:"method"`
	}
	var seen any
	var bindErr error
	replaced := func(c *gin.Context) {
		// Earlier middleware that replaces the request, as some do.
		c.Request = c.Request.WithContext(c.Request.Context())
		c.Set("user", "ada")
		c.Next()
	}
	r.POST("/api/mcp", replaced, mustNew(t, opts()), func(c *gin.Context) {
		bindErr = c.ShouldBindJSON(&got)
		seen, _ = c.Get("user")
		c.Status(299)
	})
	w := httptest.NewRecorder()
	r.ServeHTTP(w, post(knownCall))
	if w.Code != 299 || bindErr != nil || got.ID != 2 || got.Method != "tools/call" || seen != "ada" {
		t.Errorf("%d %v %+v %v", w.Code, bindErr, got, seen)
	}
}

func TestPassThroughBodyIdentical(t *testing.T) {
	r := gin.New()
	var body []byte
	r.POST("/api/mcp", mustNew(t, opts()), func(c *gin.Context) {
		body, _ = io.ReadAll(c.Request.Body)
		c.Status(299)
	})
	for _, b := range []string{knownCall, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, "not json at all", strings.Repeat("x", 1<<20)} {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, post(b))
		if w.Code != 299 || !bytes.Equal(body, []byte(b)) {
			t.Errorf("%d, read %d of %d bytes", w.Code, len(body), len(b))
		}
	}
}

func TestNewValidates(t *testing.T) {
	if _, err := New(toolguard.Options{MaxBodyBytes: -1, Tools: toolguard.StaticTools()}); err == nil {
		t.Error("bad options accepted")
	}
}

// Middleware refuses a nil Guard when it is built, not on every request.
func TestMiddlewarePanicsOnANilGuard(t *testing.T) {
	defer func() {
		if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), "g is nil") {
			t.Errorf("Middleware(nil): panic %v, want one naming the nil Guard", p)
		}
	}()
	Middleware(nil)
}

// A guard placed after the handler that answers (gin runs handlers in
// order) comes too late: it adds nothing to the answer, which the
// client gets as the handler wrote it, and says so once in debug mode.
func TestGuardAfterTheHandlerAddsNothing(t *testing.T) {
	gin.SetMode(gin.DebugMode)
	defer gin.SetMode(gin.TestMode)
	var logged bytes.Buffer
	defer func(w io.Writer) { gin.DefaultWriter = w }(gin.DefaultWriter)
	gin.DefaultWriter = &logged
	r := gin.New()
	answer := `{"jsonrpc":"2.0","id":"g-1","result":{"content":[{"type":"text","text":"Unknown tool: get_wether"}],"isError":true}}`
	r.POST("/api/mcp", func(c *gin.Context) { c.Data(200, "application/json", []byte(answer)) }, mustNew(t, opts())) // (the body left unread)
	for range 2 {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, post(unknownCall))
		if w.Code != 200 || w.Body.String() != answer {
			t.Errorf("got %d %s\nwant the handler's answer alone", w.Code, w.Body)
		}
	}
	if n := strings.Count(logged.String(), "toolguardgin"); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, logged.String())
	}
}
