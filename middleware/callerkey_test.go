package toolguard

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// Requests a server can tell apart never share a caller key: the escaped
// path (a router may match %2F differently from /) and the TLS server name
// (a server may route by SNI).
func TestCallerKeyEscapedPathAndSNI(t *testing.T) {
	a := httptest.NewRequest("POST", "http://h/t/a%2Fb/mcp", nil)
	b := httptest.NewRequest("POST", "http://h/t/a/b/mcp", nil)
	if a.URL.Path != b.URL.Path {
		t.Fatalf("setup: decoded paths differ: %q %q", a.URL.Path, b.URL.Path)
	}
	if callerKey(a, nil) == callerKey(b, nil) {
		t.Errorf("%%2F and / in the path share a caller key")
	}
	c := httptest.NewRequest("POST", "https://h/mcp", nil)
	d := httptest.NewRequest("POST", "https://h/mcp", nil)
	c.TLS = &tls.ConnectionState{ServerName: "tenant-a.example"}
	d.TLS = &tls.ConnectionState{ServerName: "tenant-b.example"}
	if callerKey(c, nil) == callerKey(d, nil) {
		t.Errorf("different TLS server names share a caller key")
	}
	e := httptest.NewRequest("POST", "http://h/t/a%2Fb/mcp", nil)
	if callerKey(a, nil) != callerKey(e, nil) {
		t.Errorf("the same request gives two keys")
	}
}

// keyRequest is a tools/list or tools/call request of one caller.
func keyRequest(method string) *http.Request {
	r := httptest.NewRequest("POST", "http://h/mcp", nil)
	r.RemoteAddr = "192.0.2.1:1234"
	r.Header = http.Header{
		"Content-Type":         {"application/json"},
		"Accept":               {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {"2025-11-25"},
		"Mcp-Session-Id":       {"s-1"},
		"Authorization":        {"Bearer a"},
		"Content-Length":       {"60"},
		"Traceparent":          {"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
	}
	if method == "tools/call" {
		r.Header["Content-Length"] = []string{"99"}
		r.Header["Content-Type"] = []string{"application/json; charset=utf-8"}
		r.Header["Accept"] = []string{"text/event-stream, application/json"}
		r.Header["Mcp-Method"] = []string{"tools/call"}
		r.Header["Mcp-Name"] = []string{"x"}
		r.Header["Mcp-Param-City"] = []string{"Paris"}
		r.Header["Traceparent"] = []string{"00-1af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
		// The ids a tracer, a proxy or a CDN gives each request.
		for _, k := range []string{"B3", "Uber-Trace-Id", "Newrelic", "Sw8", "Elastic-Apm-Traceparent",
			"X-B3-Traceid", "X-Datadog-Trace-Id", "X-Datadog-Parent-Id", "X-Request-Id", "Request-Id",
			"X-Correlation-Id", "X-Request-Start", "Cf-Ray", "X-Amz-Cf-Id", "Fly-Request-Id", "X-Vercel-Id"} {
			r.Header[k] = []string{"call-9"}
		}
		r.RemoteAddr = "192.0.2.1:5678" // a new connection
	}
	return r
}

// A tools/list and a tools/call of one caller share a key: they differ
// only in what describes each request (its length and type, the types it
// accepts, the Mcp-Method,
// Mcp-Name and Mcp-Param-* mirrors of its body, the trace, the ids a
// proxy or CDN gives it, the port of the connection).
func TestCallerKeyOfListAndCallOfOneCaller(t *testing.T) {
	if callerKey(keyRequest("tools/list"), nil) != callerKey(keyRequest("tools/call"), nil) {
		t.Fatal("a tools/list and a tools/call of one caller have two keys")
	}
	if callerKey(keyRequest("tools/list"), []byte(`{"a":1}`)) != callerKey(keyRequest("tools/call"), []byte(`{"a":1}`)) {
		t.Fatal("the same _meta gives two keys")
	}
}

// Anything a server may read to decide what to list separates callers:
// credentials, the session, any other header, the remote address, the
// client certificate, the _meta (capabilities, protocol version).
func TestCallerKeySeparatesWhatAServerMayRead(t *testing.T) {
	base := callerKey(keyRequest("tools/call"), nil)
	for name, change := range map[string]func(r *http.Request) []byte{
		"credentials":      func(r *http.Request) []byte { r.Header.Set("Authorization", "Bearer b"); return nil },
		"no credentials":   func(r *http.Request) []byte { r.Header.Del("Authorization"); return nil },
		"session":          func(r *http.Request) []byte { r.Header.Set("Mcp-Session-Id", "s-2"); return nil },
		"protocol version": func(r *http.Request) []byte { r.Header.Set("Mcp-Protocol-Version", "2025-06-18"); return nil },
		"cookie":           func(r *http.Request) []byte { r.Header.Set("Cookie", "a=b"); return nil },
		"a tenant header":  func(r *http.Request) []byte { r.Header.Set("X-Tenant", "t"); return nil },
		"a Datadog key":    func(r *http.Request) []byte { r.Header.Set("X-Datadog-Api-Key", "k"); return nil },
		"a B3 header":      func(r *http.Request) []byte { r.Header.Set("X-B3-Tenant", "t"); return nil },
		"remote address":   func(r *http.Request) []byte { r.RemoteAddr = "192.0.2.2:5678"; return nil },
		"host":             func(r *http.Request) []byte { r.Host = "other"; return nil },
		"query":            func(r *http.Request) []byte { r.URL.RawQuery = "tenant=b"; return nil },
		"_meta":            func(*http.Request) []byte { return []byte(`{"io.modelcontextprotocol/clientCapabilities":{}}`) },
		"client certificate": func(r *http.Request) []byte {
			r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{{Raw: []byte("cert-a")}}}
			return nil
		},
	} {
		r := keyRequest("tools/call")
		meta := change(r)
		if callerKey(r, meta) == base {
			t.Errorf("a different %s shares the caller key", name)
		}
	}
}

// BenchmarkCallerKey: what a watched call pays when it reaches the guard
// (take) and what a not-found answer adds when it looks the list up (key).
func BenchmarkCallerKey(b *testing.B) {
	r := keyRequest("tools/call")
	b.Run("take", func(b *testing.B) {
		b.ReportAllocs()
		var c caller
		for b.Loop() {
			c.take(r)
		}
	})
	b.Run("key", func(b *testing.B) {
		b.ReportAllocs()
		var c caller
		c.take(r)
		for b.Loop() {
			c.key(nil)
		}
	})
}

// A request with more headers than the caller holds inline keys every one
// of them, in whatever order the header map gives them.
func TestCallerKeyOfManyHeaders(t *testing.T) {
	many := func() *http.Request {
		r := keyRequest("tools/call")
		for i := range 12 {
			r.Header.Set("X-Tenant-"+strconv.Itoa(i), "t")
		}
		return r
	}
	base := callerKey(many(), nil)
	for range 20 { // the map's order differs from one range to the next
		if callerKey(many(), nil) != base {
			t.Fatal("the same many headers give two keys")
		}
	}
	for i := range 12 {
		r := many()
		r.Header.Set("X-Tenant-"+strconv.Itoa(i), "u")
		if callerKey(r, nil) == base {
			t.Errorf("X-Tenant-%d changed, same key", i)
		}
	}
}

// The caller is the request as it reached the guard: a handler behind it
// that writes into a header's values (an auth middleware redacting in
// place) does not make a call look up another caller's list.
func TestAHandlerWritingIntoAHeaderDoesNotChangeTheCaller(t *testing.T) {
	g := mustGuard(t, Options{Tools: unsure{}})
	h := g.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		user := r.Header.Get("X-User")
		r.Header["X-User"][0] = "anonymous"
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(string(body), "tools/list") {
			io.WriteString(w, listReply(`"l-1"`, "tool_of_"+user))
			return
		}
		io.WriteString(w, errorReply("7", -32602, "Unknown tool: nope"))
	}))
	for _, user := range []string{"anonymous", "alice"} {
		h.ServeHTTP(httptest.NewRecorder(), listRequest(http.Header{"X-User": {user}}))
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, newRequest("POST", call("7", `"nope"`), http.Header{"X-User": {"alice"}}))
	if !strings.Contains(w.Body.String(), `"availableTools":["tool_of_alice"]`) {
		t.Errorf("alice's answer: %s, want her own list", w.Body)
	}
}
