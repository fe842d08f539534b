package toolguardecho

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

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

// echoHost is an echo app with the guard on POST /mcp in front of next.
func echoHost(t *testing.T, o toolguard.Options, next echo.HandlerFunc, before ...echo.MiddlewareFunc) (*echo.Echo, *int) {
	t.Helper()
	mw, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	errorsHandled := new(int)
	def := e.HTTPErrorHandler
	e.HTTPErrorHandler = func(err error, c echo.Context) {
		*errorsHandled++
		def(err, c)
	}
	e.Use(before...)
	e.POST("/mcp", next, mw)
	return e, errorsHandled
}

func TestRejectionMatchesNetHTTP(t *testing.T) {
	nextCalled := false
	e, handled := echoHost(t, opts(), func(c echo.Context) error { nextCalled = true; return nil })
	w := httptest.NewRecorder()
	e.ServeHTTP(w, post(unknownCall))

	g, _ := toolguard.New(opts())
	want := httptest.NewRecorder()
	g.Handler(http.NotFoundHandler()).ServeHTTP(want, post(unknownCall))

	if nextCalled || *handled != 0 {
		t.Errorf("next called %v, error handler called %d times", nextCalled, *handled)
	}
	if w.Code != want.Code || w.Body.String() != want.Body.String() ||
		w.Header().Get("Content-Type") != want.Header().Get("Content-Type") ||
		w.Header().Get("Content-Length") != want.Header().Get("Content-Length") {
		t.Errorf("echo: %d %v %s\nnet/http: %d %v %s", w.Code, w.Header(), w.Body, want.Code, want.Header(), want.Body)
	}
	if !strings.Contains(w.Body.String(), `"code":-32602`) {
		t.Errorf("not a rejection: %s", w.Body)
	}
}

func TestPassThroughBindsBody(t *testing.T) {
	var got struct {
		ID     int    `json:"id"`
		Method string `json:"method"`
	}
	var raw []byte
	e, handled := echoHost(t, opts(), func(c echo.Context) error {
		b, err := io.ReadAll(c.Request().Body)
		if err != nil {
			return err
		}
		raw = b
		c.Request().Body = io.NopCloser(bytes.NewReader(b))
		if err := c.Bind(&got); err != nil {
			return err
		}
		return c.NoContent(299)
	})
	w := httptest.NewRecorder()
	e.ServeHTTP(w, post(knownCall))
	if w.Code != 299 || string(raw) != knownCall || got.ID != 2 || got.Method != "tools/call" || *handled != 0 {
		t.Errorf("%d %q %+v", w.Code, raw, got)
	}
}

func TestSkip(t *testing.T) {
	o := opts()
	o.Skip = func(r *http.Request) bool { return r.Header.Get("X-Internal") == "1" }
	e, _ := echoHost(t, o, func(c echo.Context) error { return c.NoContent(299) })
	r := post(unknownCall)
	r.Header.Set("X-Internal", "1")
	w := httptest.NewRecorder()
	e.ServeHTTP(w, r)
	if w.Code != 299 {
		t.Errorf("skipped request answered %d %s", w.Code, w.Body)
	}
}

// echo's BodyLimit placed before the guard still limits, with and without a
// Content-Length.
func TestBodyLimitBefore(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":{"pad":"` + strings.Repeat("x", 4096) + `"}}}`
	for _, chunked := range []bool{false, true} {
		var readErr error
		e, _ := echoHost(t, opts(), func(c echo.Context) error {
			_, readErr = io.ReadAll(c.Request().Body)
			return readErr
		}, middleware.BodyLimit("1K"))
		r := post(big)
		if chunked {
			r.ContentLength = -1
		}
		w := httptest.NewRecorder()
		e.ServeHTTP(w, r)
		if w.Code != http.StatusRequestEntityTooLarge {
			t.Errorf("chunked=%v: %d %s", chunked, w.Code, w.Body)
		}
		var he *echo.HTTPError
		if chunked && !errors.As(readErr, &he) {
			t.Errorf("chunked: the handler read %v, want echo's limit error", readErr)
		}
	}
}

func TestNewValidates(t *testing.T) {
	var nilSet toolguard.ToolsFunc
	if _, err := New(toolguard.Options{Tools: nilSet}); err == nil {
		t.Error("a nil tool set accepted")
	}
	if _, err := New(toolguard.Options{ToolListLimit: -1}); err == nil {
		t.Error("a negative ToolListLimit accepted")
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
