package main

import (
	"encoding/json"
	"net/http"
	"slices"
)

// isErrorServer is a minimal stateless MCP server that answers a call to an
// unknown tool the way the TypeScript and Python SDKs do: an ordinary result
// with isError: true. It stands in for them so the demo needs nothing but Go.
func isErrorServer(tools []string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			reply(w, nil, nil, map[string]any{"code": -32700, "message": "Parse error"})
			return
		}
		if req.ID == nil {
			w.WriteHeader(http.StatusAccepted) // a notification
			return
		}
		switch req.Method {
		case "initialize":
			reply(w, req.ID, map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "iserror-demo", "version": "1.0.0"}}, nil)
		case "tools/list":
			list := []map[string]any{}
			for _, name := range tools {
				list = append(list, map[string]any{"name": name, "inputSchema": map[string]any{"type": "object"}})
			}
			reply(w, req.ID, map[string]any{"tools": list}, nil)
		case "tools/call":
			text, isError := req.Params.Name+" ran", false
			if !slices.Contains(tools, req.Params.Name) {
				text, isError = "Unknown tool: "+req.Params.Name, true
			}
			reply(w, req.ID, map[string]any{"content": []map[string]any{{"type": "text", "text": text}}, "isError": isError}, nil)
		default:
			reply(w, req.ID, nil, map[string]any{"code": -32601, "message": "Method not found"})
		}
	})
}

func reply(w http.ResponseWriter, id json.RawMessage, result, rpcErr any) {
	msg := map[string]any{"jsonrpc": "2.0", "id": id}
	if rpcErr != nil {
		msg["error"] = rpcErr
	} else {
		msg["result"] = result
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(msg)
}
