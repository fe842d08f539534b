package cli

import "testing"

// A password in a URL is masked whether or not the URL parses, and
// wherever its "/", "?" or "#" would end the host; a URL without one is
// unchanged.
func TestRedactedNeverShowsAPassword(t *testing.T) {
	for in, want := range map[string]string{
		"http://alice:hunter2@127.0.0.1:8080/mcp": "http://alice:xxxxx@127.0.0.1:8080/mcp",
		"http://alice:hunter2@127.0.0.1:abc/mcp":  "http://alice:xxxxx@127.0.0.1:abc/mcp",
		"http://alice:hunter2@[::1/mcp":           "http://alice:xxxxx@[::1/mcp",
		"https://a:b@c@host/x?q=@":                "https://a:xxxxx@host/x?q=@",
		"http://alice:pa/ss@host/mcp":             "http://alice:xxxxx@host/mcp",
		"http://alice:p?w@host/mcp":               "http://alice:xxxxx@host/mcp",
		"http://alice:12#w@host/mcp":              "http://alice:xxxxx@host/mcp",
		"http://127.0.0.1:8080/mcp?to=a@b":        "http://127.0.0.1:8080/mcp?to=a@b",
		"http://alice@127.0.0.1/mcp":              "http://alice@127.0.0.1/mcp",
		"http://127.0.0.1:abc/mcp?u=a:b@c":        "http://127.0.0.1:xxxxx@c",
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
		"/mcp":                    `"/mcp" is not an http or https URL`,
		"node server.js":          `"node server.js" is not an http or https URL`,
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

// What a user may have meant as a URL is masked as that URL would be.
func TestRedactedArgMasksASchemelessURL(t *testing.T) {
	for in, want := range map[string]string{
		"alice:pw@127.0.0.1:8080/mcp": "alice:xxxxx@127.0.0.1:8080/mcp",
		"http://alice:pw@host/":       "http://alice:xxxxx@host/",
		"127.0.0.1:8080/mcp":          "127.0.0.1:8080/mcp",
	} {
		if got := RedactedArg(in); got != want {
			t.Errorf("RedactedArg(%q) = %q, want %q", in, got, want)
		}
	}
}
