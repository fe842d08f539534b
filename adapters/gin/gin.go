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
//	r.POST("/mcp", guard, gin.WrapH(mcpHandler))
//
// The decision and every byte of a rejection come from the core
// ([toolguard.Guard.Check] and [toolguard.Rejection.Write]), so a request
// gets the same answer through gin as through net/http. On a rejection the
// chain is aborted: no later handler runs. On a pass, c.Request is replaced
// by a request whose body reads the same bytes, so later handlers and
// c.ShouldBindJSON see it whole; values set on the context are untouched.
package toolguardgin

import (
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

// Middleware returns a gin handler for an already built Guard.
func Middleware(g *toolguard.Guard) gin.HandlerFunc {
	return func(c *gin.Context) {
		pass, rej := g.Check(c.Request)
		if rej != nil {
			c.Abort()
			_ = rej.Write(c.Writer) // a write error means the client is gone
			return
		}
		c.Request = pass
		c.Next()
	}
}
