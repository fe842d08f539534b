package toolguardgin_test

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/gin-gonic/gin"

	toolguardgin "github.com/toolguard/toolguard/adapters/gin"
	toolguard "github.com/toolguard/toolguard/middleware"
)

func Example() {
	gin.SetMode(gin.ReleaseMode)
	guard, err := toolguardgin.New(toolguard.Options{Tools: toolguard.StaticTools("get_weather")})
	if err != nil {
		log.Fatal(err)
	}
	r := gin.New()
	mcp := func(c *gin.Context) { c.String(200, "the MCP server") }
	r.Any("/mcp", guard, mcp) // Streamable HTTP: POST, GET and DELETE

	srv := httptest.NewServer(r)
	defer srv.Close()
	// An MCP client sends Accept with both media types; a request without
	// it is left to the server (SDKs refuse it before looking the tool up).
	req, _ := http.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_wheather"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, string(body))
	// Output:
	// 200 {"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: get_wheather. Did you mean get_weather? Call tools/list for the available tools.","data":{"availableTools":["get_weather"],"suggestions":["get_weather"]}}}
}
