package conformance

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// fake is a configurable MCP server for the fixture zoo. By default it is a
// well-behaved 2025-11-25 server with sessions whose tools/call of an
// unknown tool answers -32602.
type fake struct {
	modern   bool     // answer server/discover with 2026-07-28, enforce its headers
	tools    []string // registered tools
	pageSize int      // > 0: paginate tools/list

	// on overrides the answer to a method; it gets the raw id.
	on map[string]func(w http.ResponseWriter, id string)

	mu       sync.Mutex
	methods  []string // every method received, in order
	names    []string // every tools/call name received
	authSeen []string // Authorization headers received
}

type rpc struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		Name   string `json:"name"`
		Cursor string `json:"cursor"`
		Meta   struct {
			Version string `json:"io.modelcontextprotocol/protocolVersion"`
		} `json:"_meta"`
	} `json:"params"`
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func writeSSE(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	for _, e := range events {
		io.WriteString(w, e)
		w.(http.Flusher).Flush()
	}
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodDelete {
		w.WriteHeader(200)
		return
	}
	var m rpc
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		writeJSON(w, 400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`)
		return
	}
	f.mu.Lock()
	f.methods = append(f.methods, m.Method)
	if m.Method == "tools/call" {
		f.names = append(f.names, m.Params.Name)
	}
	if a := r.Header.Get("Authorization"); a != "" {
		f.authSeen = append(f.authSeen, a)
	}
	f.mu.Unlock()
	id := string(m.ID)

	modernReq := r.Header.Get("Mcp-Protocol-Version") == "2026-07-28"
	if modernReq && !f.modern {
		w.WriteHeader(400) // a 2025-era server: an empty 400
		return
	}
	if f.modern {
		if !modernReq || m.Params.Meta.Version != "2026-07-28" || r.Header.Get("Mcp-Method") != m.Method ||
			m.Method == "tools/call" && r.Header.Get("Mcp-Name") != m.Params.Name {
			writeJSON(w, 400, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32020,"message":"header mismatch"}}`)
			return
		}
	}
	if h, ok := f.on[m.Method]; ok {
		h(w, id)
		return
	}
	switch m.Method {
	case "server/discover":
		if !f.modern {
			writeJSON(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32601,"message":"method not found"}}`)
			return
		}
		writeJSON(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"result":{"supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{"tools":{}}}}`)
	case "initialize":
		w.Header().Set("Mcp-Session-Id", "s-1")
		writeJSON(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}}`)
	case "notifications/initialized":
		w.WriteHeader(http.StatusAccepted)
	case "tools/list":
		f.list(w, id, m.Params.Cursor)
	case "tools/call":
		writeJSON(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32602,"message":"Unknown tool: `+m.Params.Name+`"}}`)
	default:
		writeJSON(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32601,"message":"method not found"}}`)
	}
}

func (f *fake) list(w http.ResponseWriter, id, cursor string) {
	tools := f.tools
	start, _ := strconv.Atoi(cursor)
	end := len(tools)
	if f.pageSize > 0 {
		end = min(start+f.pageSize, len(tools))
	}
	type tool struct {
		Name        string         `json:"name"`
		InputSchema map[string]any `json:"inputSchema"`
	}
	res := struct {
		Tools      []tool `json:"tools"`
		NextCursor string `json:"nextCursor,omitempty"`
	}{Tools: []tool{}}
	for _, n := range tools[min(start, end):end] {
		res.Tools = append(res.Tools, tool{n, map[string]any{"type": "object"}})
	}
	if end < len(tools) {
		res.NextCursor = strconv.Itoa(end)
	}
	b, _ := json.Marshal(res)
	writeJSON(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"result":`+string(b)+`}`)
}

func (f *fake) seen() (methods, names, auth []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.methods...), append([]string(nil), f.names...), append([]string(nil), f.authSeen...)
}

// answer returns an override writing a fixed reply, with the id spliced in
// where the body holds {{id}}.
func answer(status int, contentType, body string) func(http.ResponseWriter, string) {
	return func(w http.ResponseWriter, id string) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		if body != "" {
			io.WriteString(w, strings.ReplaceAll(body, "{{id}}", id))
		}
	}
}
