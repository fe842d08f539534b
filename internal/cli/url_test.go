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

// A target that is not an http(s) URL with a host is named in the error;
// one written without a scheme gets the http:// URL it likely meant.
func TestHTTPURLSaysWhatWasLikelyMeant(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:8080/mcp":      `"127.0.0.1:8080/mcp" is not a URL (did you mean "http://127.0.0.1:8080/mcp"?)`,
		"localhost:8080":          `"localhost:8080" is not an http or https URL (did you mean "http://localhost:8080"?)`,
		"ftp://host/mcp":          `"ftp://host/mcp" is not an http or https URL`,
		"http:///mcp":             `"http:///mcp" names no host`,
		"alice:pw@127.0.0.1:8080": `"alice:xxxxx@127.0.0.1:8080" is not an http or https URL (did you mean "http://alice:xxxxx@127.0.0.1:8080"?)`,
	} {
		err := HTTPURL(in)
		if err == nil || err.Error() != want {
			t.Errorf("HTTPURL(%q) = %v, want %s", in, err, want)
		}
	}
	if err := HTTPURL("https://mcp.example/mcp"); err != nil {
		t.Errorf("a URL: %v", err)
	}
}
