// Package toolguardecho adapts the toolguard middleware to echo v4.
//
// It is named after the kit and the framework, so it needs no alias next to
// echo and echo's own middleware package:
//
//	e := echo.New()
//	guard, err := toolguardecho.New(toolguard.Options{Tools: tools})
//	if err != nil {
//		log.Fatal(err)
//	}
//	e.Any("/mcp", echo.WrapHandler(mcpHandler), guard) // Streamable HTTP: POST, GET and DELETE
//
// The decision and every byte of an answer come from the core
// ([toolguard.Guard.Check], [toolguard.Guard.Watch] and
// [toolguard.Rejection.Write]), so a request gets the same answer through
// echo as through net/http. A rejection is written once and the handler
// returns nil: echo's HTTPErrorHandler is not invoked for it. A request
// that passes carries a body that reads the same bytes, so later handlers
// and c.Bind see it whole. For a tools/call the server decides, the
// response's Writer is, while the chain runs, the core's watching writer,
// which passes every answer through except the server's own not-found
// answer, which it replaces; c.Response().Size counts the bytes the
// handler wrote.
package toolguardecho

import (
	"github.com/labstack/echo/v4"

	toolguard "github.com/toolguard/toolguard/middleware"
)

// New validates opts, builds a Guard and returns it as echo middleware.
func New(opts toolguard.Options) (echo.MiddlewareFunc, error) {
	g, err := toolguard.New(opts)
	if err != nil {
		return nil, err
	}
	return Middleware(g), nil
}

// Middleware returns echo middleware for an already built Guard. It panics
// if g is nil (a Guard not made by toolguard.New panics on its first
// request).
func Middleware(g *toolguard.Guard) echo.MiddlewareFunc {
	if g == nil {
		panic("toolguardecho: Middleware needs a Guard made by toolguard.New (g is nil)")
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			pass, rej := g.Check(c.Request())
			if rej != nil {
				// A write error means the client is gone; echo's error
				// handler could not answer it either.
				_ = rej.Write(c.Response())
				return nil
			}
			c.SetRequest(pass)
			res := c.Response()
			w, finish := g.Watch(res.Writer, pass)
			if w == res.Writer {
				return next(c)
			}
			orig := res.Writer
			res.Writer = w
			defer func() {
				finish()
				res.Writer = orig
			}()
			return next(c)
		}
	}
}
