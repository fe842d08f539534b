package toolguard_test

import (
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	toolguard "github.com/toolguard/toolguard/middleware"
)

// post sends one JSON-RPC request and prints the status, Content-Type and body.
func post(url, body string) {
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, resp.Header.Get("Content-Type"))
	fmt.Println(string(b))
}

// A tools/call for a tool the server does not have is answered by the guard
// with -32602, the tools the caller can call, and the nearest names.
func ExampleGuard_Handler_rejection() {
	guard, err := toolguard.New(toolguard.Options{
		Tools: toolguard.StaticTools("get_weather", "search_docs"),
	})
	if err != nil {
		log.Fatal(err)
	}
	mcp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Println("the server was reached") // not printed
	})
	srv := httptest.NewServer(guard.Handler(mcp))
	defer srv.Close()

	post(srv.URL, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"getWeather","arguments":{}}}`)
	// Output:
	// 200 application/json
	// {"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Unknown tool: getWeather. Did you mean get_weather? Call tools/list for the available tools.","data":{"availableTools":["get_weather","search_docs"],"suggestions":["get_weather"]}}}
}

// Any other request reaches the server with its body byte for byte.
func ExampleGuard_Handler_passThrough() {
	guard, err := toolguard.New(toolguard.Options{
		Tools: toolguard.StaticTools("get_weather", "search_docs"),
	})
	if err != nil {
		log.Fatal(err)
	}
	mcp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Printf("server read %s\n", body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"sunny"}]}}`)
	})
	srv := httptest.NewServer(guard.Handler(mcp))
	defer srv.Close()

	post(srv.URL, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Oslo"}}}`)
	// Output:
	// server read {"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Oslo"}}}
	// 200 application/json
	// {"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"sunny"}]}}
}

// Check and Rejection.Write are the framework-neutral pair adapters use.
func ExampleGuard_Check() {
	guard, _ := toolguard.New(toolguard.Options{Tools: toolguard.StaticTools("get_weather")})
	r := httptest.NewRequest("POST", "/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"name":"nope"}}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")

	pass, rej := guard.Check(r)
	if rej == nil {
		_ = pass // hand pass on to the next handler
		return
	}
	w := httptest.NewRecorder()
	rej.Write(w)
	fmt.Println(w.Code, w.Header().Get("Content-Type"))
	fmt.Print(w.Body)
	// Output:
	// 200 application/json
	// {"jsonrpc":"2.0","id":"a-1","error":{"code":-32602,"message":"Unknown tool: nope. Call tools/list for the available tools.","data":{"availableTools":["get_weather"]}}}
}

// Options.Logger says why a tools/call passed through: here a guard
// without a tool set, in front of an upstream that answers 404 to
// everything: the server decides every call.
func ExampleOptions_logger() {
	upstream := http.NotFoundHandler()
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // stable output
			}
			return a
		},
	}))
	guard, err := toolguard.New(toolguard.Options{Logger: logger})
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(guard.Handler(upstream))
	defer srv.Close()

	post(srv.URL, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"getWeather","arguments":{}}}`)
	// Output:
	// level=INFO msg="toolguard: passed through" reason=to-server tool=getWeather
	// 404 text/plain; charset=utf-8
	// 404 page not found
}
