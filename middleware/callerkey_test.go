package toolguard

import (
	"crypto/tls"
	"net/http/httptest"
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
	if CallerKey(a) == CallerKey(b) {
		t.Errorf("%%2F and / in the path share a caller key")
	}
	c := httptest.NewRequest("POST", "https://h/mcp", nil)
	d := httptest.NewRequest("POST", "https://h/mcp", nil)
	c.TLS = &tls.ConnectionState{ServerName: "tenant-a.example"}
	d.TLS = &tls.ConnectionState{ServerName: "tenant-b.example"}
	if CallerKey(c) == CallerKey(d) {
		t.Errorf("different TLS server names share a caller key")
	}
	e := httptest.NewRequest("POST", "http://h/t/a%2Fb/mcp", nil)
	if CallerKey(a) != CallerKey(e) {
		t.Errorf("the same request gives two keys")
	}
}
