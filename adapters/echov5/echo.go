// Package toolguardechov5 adapts the toolguard middleware to echo v5, the
// current major version on echo's main branch. toolguardecho is the same
// for echo v4.
//
//	e := echo.New()
//	guard, err := toolguardechov5.New(toolguard.Options{Tools: tools})
//	if err != nil {
//		log.Fatal(err)
//	}
//	e.Any("/mcp", echo.WrapHandler(mcpHandler), guard) // Streamable HTTP: POST, GET and DELETE
//
// The decision and every byte of an answer come from the core, so a
// request gets the same answer through echo v5 as through net/http. A
// rejection is written once and the handler returns nil: echo's error
// handler is not invoked for it. For a tools/call the server decides, the
// *echo.Response writes, while the chain runs, to the core's watching
// writer, which passes every answer through except the server's own
// not-found answer, which it replaces.
package toolguardechov5

import (
	"github.com/labstack/echo/v5"

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

// Middleware returns echo v5 middleware for an already built Guard. It panics
// if g is nil (a Guard not made by toolguard.New panics on its first
// request).
func Middleware(g *toolguard.Guard) echo.MiddlewareFunc {
	if g == nil {
		panic("toolguardechov5: Middleware needs a Guard made by toolguard.New (g is nil)")
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c *echo.Context) error {
			pass, rej := g.Check(c.Request())
			if rej != nil {
				_ = rej.Write(c.Response()) // a write error means the client is gone
				return nil
			}
			c.SetRequest(pass)
			// The core's writer goes beneath the *echo.Response, as in
			// echo v4: the Response still says what the handler wrote
			// (Committed, Status, Size), so echo's error handler does not
			// write after an answer the core holds.
			res, err := echo.UnwrapResponse(c.Response())
			if err != nil {
				return next(c) // no *echo.Response: nothing can be watched
			}
			orig := res.ResponseWriter
			w, finish := g.Watch(orig, pass)
			if w == orig {
				return next(c)
			}
			res.ResponseWriter = w
			defer func() {
				finish()
				res.ResponseWriter = orig
			}()
			return next(c)
		}
	}
}
