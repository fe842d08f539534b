// Package toolguardgin adapts the toolguard middleware to gin.
//
// It is named after the kit and the framework, so it needs no alias next to
// gin itself:
//
//	r := gin.New()
//	guard, err := toolguardgin.New(toolguard.Options{Tools: tools})
//	if err != nil {
//		log.Fatal(err)
//	}
//	r.Any("/mcp", guard, gin.WrapH(mcpHandler)) // Streamable HTTP: POST, GET and DELETE
//
// gin runs a route's handlers in order, so the guard comes first: after a
// handler that wrote it guards nothing (it says so once, in gin's debug
// mode). An answer with a Content-Encoding passes as it is: a gzip
// middleware that sets it before the handler runs (gin-contrib/gzip does,
// wherever it is in the chain) leaves every answer of the route
// untranslated, so keep it off the MCP route.
//
// The decision and every byte of an answer come from the core
// ([toolguard.Guard.Check], [toolguard.Guard.Watch] and
// [toolguard.Rejection.Write]), so a request gets the same answer through
// gin as through net/http. On a rejection the chain is aborted: no later
// handler runs. On a pass, c.Request is replaced by a request whose body
// reads the same bytes, so later handlers and c.ShouldBindJSON see it
// whole; values set on the context are untouched. While the chain runs,
// c.Writer is a gin.ResponseWriter over the core's watching writer, which
// passes every answer through except, for a tools/call the server
// decides, the server's own not-found answer, which it replaces.
package toolguardgin

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"sync"

	"github.com/gin-gonic/gin"

	toolguard "github.com/toolguard/toolguard/middleware"
)

// New validates opts, builds a Guard and returns it as a gin handler.
func New(opts toolguard.Options) (gin.HandlerFunc, error) {
	g, err := toolguard.New(opts)
	if err != nil {
		return nil, err
	}
	return Middleware(g), nil
}

// Middleware returns a gin handler for an already built Guard. It panics
// if g is nil (a Guard not made by toolguard.New panics on its first
// request).
func Middleware(g *toolguard.Guard) gin.HandlerFunc {
	if g == nil {
		panic("toolguardgin: Middleware needs a Guard made by toolguard.New (g is nil)")
	}
	var late sync.Once
	return func(c *gin.Context) {
		if c.Writer.Written() {
			// After the handler (gin runs handlers in order): too late to
			// guard anything; the answer stays the handler's.
			late.Do(func() {
				const warning = "[WARNING] toolguardgin: the guard runs after a handler that wrote, and guards nothing; put it before: r.Any(path, guard, handler)\n"
				switch {
				case !gin.IsDebugging():
				case gin.DebugPrintFunc != nil:
					gin.DebugPrintFunc(warning)
				default:
					fmt.Fprint(gin.DefaultWriter, "[GIN-debug] "+warning)
				}
			})
			c.Next()
			return
		}
		pass, rej := g.Check(c.Request)
		if rej != nil {
			c.Abort()
			_ = rej.Write(c.Writer) // a write error means the client is gone
			return
		}
		c.Request = pass
		orig := c.Writer
		w, finish := g.Watch(orig, pass)
		if w == http.ResponseWriter(orig) {
			c.Next()
			return
		}
		c.Writer = &watchWriter{ResponseWriter: orig, w: w, status: http.StatusOK, size: -1}
		defer func() {
			finish()
			c.Writer = orig
		}()
		c.Next()
	}
}

// watchWriter is the gin.ResponseWriter of a request whose answer the core
// watches: the answer goes through w, the core's writer (over gin's own),
// with gin's semantics (WriteHeader records the status, the first Write or
// WriteHeaderNow sends it); Status, Size and Written report what the
// handlers wrote.
type watchWriter struct {
	gin.ResponseWriter
	w      http.ResponseWriter
	status int
	size   int
}

// Header is the core's: once the answer has begun, what is set goes out
// only as net/http sends it (declared trailers), not with a held answer.
func (ww *watchWriter) Header() http.Header { return ww.w.Header() }

func (ww *watchWriter) WriteHeader(code int) {
	if code > 0 && !ww.Written() {
		ww.status = code
		// gin's own writer records it too: it is the status gin sends at
		// the end if no handler writes.
		ww.ResponseWriter.WriteHeader(code)
	}
}

func (ww *watchWriter) WriteHeaderNow() {
	if !ww.Written() {
		ww.size = 0
		ww.w.WriteHeader(ww.status)
	}
}

func (ww *watchWriter) Write(p []byte) (int, error) {
	ww.WriteHeaderNow()
	n, err := ww.w.Write(p)
	ww.size += n
	return n, err
}

func (ww *watchWriter) WriteString(s string) (int, error) { return ww.Write([]byte(s)) }

func (ww *watchWriter) Status() int   { return ww.status }
func (ww *watchWriter) Size() int     { return ww.size }
func (ww *watchWriter) Written() bool { return ww.size != -1 }

func (ww *watchWriter) Flush() {
	ww.WriteHeaderNow()
	if f, ok := ww.w.(http.Flusher); ok {
		f.Flush()
	}
}

func (ww *watchWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if !ww.Written() {
		ww.size = 0 // as gin: a hijacked connection is written
	}
	return http.NewResponseController(ww.w).Hijack()
}

// Unwrap lets http.ResponseController reach the core's writer.
func (ww *watchWriter) Unwrap() http.ResponseWriter { return ww.w }
