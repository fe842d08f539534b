package toolguard

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/toolguard/toolguard/internal/fixture"
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

// callerKeyPlain is CallerKey written the plain way, one line of the key
// after another, as it was before issue 14 made it cheaper: the reference
// CallerKey must equal byte for byte, so that it makes exactly the same
// distinctions.
func callerKeyPlain(r *http.Request) string {
	remote := r.RemoteAddr
	if host, _, err := net.SplitHostPort(remote); err == nil {
		remote = host
	}
	lines := []string{r.URL.EscapedPath() + "?" + r.URL.RawQuery, "host\x00" + r.Host, "remote\x00" + remote}
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && la != nil {
		lines = append(lines, "local\x00"+la.String())
	}
	if r.TLS != nil {
		line := "tls\x00" + r.TLS.ServerName
		if certs := r.TLS.PeerCertificates; len(certs) > 0 {
			sum := sha256.Sum256(certs[0].Raw)
			line += "\x00" + string(sum[:])
		}
		lines = append(lines, line)
	}
	var keys []string
	for k := range r.Header {
		if forwarded(k) && !volatile[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		lines = append(lines, strings.Join(append([]string{k}, r.Header[k]...), "\x00"))
	}
	if c, ok := CallFromContext(r.Context()); ok && c.Meta != nil {
		lines = append(lines, "_meta\x00"+string(c.Meta))
	}
	return strings.Join(lines, "\n")
}

// emptyAddr is a local address whose String is empty: present, and keyed
// as present.
type emptyAddr struct{}

func (emptyAddr) Network() string { return "" }
func (emptyAddr) String() string  { return "" }

// CallerKey gives exactly the key it gave before it was made cheaper, on
// requests varying in everything it reads: so it separates and merges
// exactly the callers it did.
func TestCallerKeySameAsBefore(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 2))
	pick := func(vs ...string) string { return vs[rng.IntN(len(vs))] }
	headerNames := []string{"Authorization", "Cookie", "Accept", "Mcp-Session-Id", "Mcp-Protocol-Version",
		"Traceparent", "X-Request-Id", "Mcp-Name", "Mcp-Method", "Mcp-Param-City", "Content-Length",
		"Origin", "X-Tenant", "Connection", "Baggage", "Upgrade", "A", "Zz", "X-B3-Sampled"}
	for i := range 20000 {
		r := httptest.NewRequest("POST", pick("http://h/mcp", "https://h/t/a%2Fb/mcp", "http://h/mcp?x=1&y=%20", "http://other:8080/"), nil)
		r.Host = pick(r.Host, "", "evil.example", "h:1")
		r.RemoteAddr = pick("192.0.2.1:1234", "[2001:db8::1]:80", "no-port", "", "192.0.2.1:5")
		n := rng.IntN(30) // beyond the keys held on the stack, sometimes
		for range n {
			k := pick(headerNames...)
			if rng.IntN(4) == 0 {
				k = fmt.Sprintf("X-H%d", rng.IntN(40))
			}
			r.Header[k] = append(r.Header[k], pick("", "a", "Bearer x", "a\x00b", "application/json, text/event-stream"))
		}
		if rng.IntN(3) == 0 {
			r.TLS = &tls.ConnectionState{ServerName: pick("", "a.example", "b.example")}
			if rng.IntN(2) == 0 {
				r.TLS.PeerCertificates = []*x509.Certificate{{Raw: []byte(pick("cert-a", "cert-b"))}}
			}
		}
		switch rng.IntN(4) {
		case 0:
			r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80 + rng.IntN(2)}))
		case 1:
			r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, net.Addr(emptyAddr{})))
		}
		switch rng.IntN(3) {
		case 0:
			r, _ = withCall(r, Call{Name: "x", Meta: json.RawMessage(pick(`{}`, `{"a":1}`))})
		case 1:
			r, _ = withCall(r, Call{Name: "x"})
		}
		if got, want := CallerKey(r), callerKeyPlain(r); got != want {
			t.Fatalf("request %d: key %q, the plain way %q", i, got, want)
		}
	}
}

// keyedHeader is forwarded and not volatile.
func TestKeyedHeader(t *testing.T) {
	names := []string{"Authorization", "Accept", "Mcp-Param-X", "Mcp-Param-", "Mcp-Params", "X-Tenant", ""}
	for k := range notForwarded {
		names = append(names, k)
	}
	for k := range volatile {
		names = append(names, k)
	}
	for _, k := range names {
		if got, want := keyedHeader(k), forwarded(k) && !volatile[k]; got != want {
			t.Errorf("keyedHeader(%q) = %v, want %v", k, got, want)
		}
	}
}

func BenchmarkCallerKey(b *testing.B) {
	r := httptest.NewRequest("POST", "http://h/mcp", nil)
	r.Header = http.Header{
		"Content-Type":         {"application/json"},
		"Accept":               {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {"2025-11-25"},
		"Authorization":        {"Bearer abcdefghijklmnopqrstuvwxyz"},
		"Traceparent":          {"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
	}
	b.ReportAllocs()
	fixture.Alternated(b, fixture.Side{Name: "now", Run: func() { CallerKey(r) }}, fixture.Side{Name: "plain", Run: func() { callerKeyPlain(r) }})
}

// withCall returns r with c in its context (a shallow copy of r), as the
// guard gives it to the tool set.
func withCall(r *http.Request, c Call) (*http.Request, *Call) { return withCallIn(r, r.Context(), c) }
