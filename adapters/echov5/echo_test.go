package toolguardechov5

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v5"

	toolguard "github.com/toolguard/toolguard/middleware"
)

const (
	unknownCall = `{"jsonrpc":"2.0","id":"e-1","method":"tools/call","params":{"name":"get_wether","arguments":{}}}`
	knownCall   = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Oslo"}}}`
)

func opts() toolguard.Options {
	return toolguard.Options{Tools: toolguard.StaticTools("get_weather", "search_docs")}
}

func post(body string) *http.Request {
	r := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	return r
}

func TestEchoV5(t *testing.T) {
	mw, err := New(opts())
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	handled := 0
	e.HTTPErrorHandler = func(c *echo.Context, err error) { handled++ }
	var body []byte
	e.POST("/mcp", func(c *echo.Context) error {
		body, _ = io.ReadAll(c.Request().Body)
		return c.NoContent(299)
	}, mw)

	w := httptest.NewRecorder()
	e.ServeHTTP(w, post(unknownCall))
	g, _ := toolguard.New(opts())
	want := httptest.NewRecorder()
	g.Handler(http.NotFoundHandler()).ServeHTTP(want, post(unknownCall))
	if w.Code != want.Code || w.Body.String() != want.Body.String() || w.Header().Get("Content-Type") != want.Header().Get("Content-Type") || handled != 0 || body != nil {
		t.Errorf("rejection: %d %s (error handler %d, next read %q)\nnet/http: %d %s", w.Code, w.Body, handled, body, want.Code, want.Body)
	}

	w = httptest.NewRecorder()
	e.ServeHTTP(w, post(knownCall))
	if w.Code != 299 || string(body) != knownCall {
		t.Errorf("pass: %d %q", w.Code, body)
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

// A handler that writes the server's not-found answer and returns an
// error, handled inside the chain (as echo's RequestLogger with
// HandleError does): echo sees the answer written, as without the guard,
// and writes nothing after it; the client gets the guard's answer alone.
func TestErrorAfterTheAnswerAddsNothing(t *testing.T) {
	mw, err := New(toolguard.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	handleErrors := func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c *echo.Context) error {
			if err := next(c); err != nil {
				c.Echo().HTTPErrorHandler(c, err)
			}
			return nil
		}
	}
	e.POST("/mcp", func(c *echo.Context) error {
		io.Copy(io.Discard, c.Request().Body)
		c.Response().Header().Set("Content-Type", "application/json")
		c.Response().WriteHeader(200)
		io.WriteString(c.Response(), `{"jsonrpc":"2.0","id":"e-1","error":{"code":-32602,"message":"tool 'get_wether' not found: tool not found"}}`)
		return fmt.Errorf("the tool failed")
	}, mw, handleErrors)
	w := httptest.NewRecorder()
	e.ServeHTTP(w, post(unknownCall))
	if w.Code != 200 || !strings.HasPrefix(w.Body.String(), `{"jsonrpc":"2.0","id":"e-1","error":{"code":-32602,"message":"Unknown tool: get_wether`) ||
		strings.Count(w.Body.String(), `"jsonrpc"`) != 1 || strings.Contains(w.Body.String(), "Internal Server Error") {
		t.Errorf("got %d %s", w.Code, w.Body)
	}
}
