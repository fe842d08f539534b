package cli

import "testing"

// A password in a URL is masked whether or not the URL parses; nothing
// else changes.
func TestRedactedMasksThePasswordOnly(t *testing.T) {
	for in, want := range map[string]string{
		"http://alice:hunter2@127.0.0.1:8080/mcp": "http://alice:xxxxx@127.0.0.1:8080/mcp",
		"http://alice:hunter2@127.0.0.1:abc/mcp":  "http://alice:xxxxx@127.0.0.1:abc/mcp",
		"http://alice:hunter2@[::1/mcp":           "http://alice:xxxxx@[::1/mcp",
		"https://a:b@c@host/x?q=@":                "https://a:xxxxx@host/x?q=@",
		"http://alice@127.0.0.1/mcp":              "http://alice@127.0.0.1/mcp",
		"http://127.0.0.1:abc/mcp?u=a:b@c":        "http://127.0.0.1:abc/mcp?u=a:b@c",
		"stdio:node server.js --token a:b@c":      "stdio:node server.js --token a:b@c",
		"https://mcp.example/mcp":                 "https://mcp.example/mcp",
	} {
		if got := Redacted(in); got != want {
			t.Errorf("Redacted(%q) = %q, want %q", in, got, want)
		}
	}
}
