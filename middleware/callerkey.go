// The caller of a request: the key under which the list the server gave
// it is kept.

package toolguard

import (
	"crypto/sha256"
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/toolguard/toolguard/internal/mcpwire"
)

// callerKey returns the key under which the list the server gives the
// caller of r is kept: a digest of everything a server could read to decide
// what to list. That is the URL, Host, the remote IP address, the local
// address the request arrived on, TLS or not and the client certificate,
// every request header but those that describe the request's own body or
// connection and tracing headers, and meta, the request's params._meta
// without its progressToken (for a 2026-07-28 request it carries the
// protocol version, client info and capabilities). A list read for one key
// is never shown to a request of another.
func callerKey(r *http.Request, meta []byte) string {
	// The headers to key, sorted by name; most requests have a few, held
	// on the stack.
	var arr [24]keyedValues
	keys := arr[:0]
	// The path as it is sent on (escaped): /t/a%2Fb/mcp and /t/a/b/mcp are
	// different callers to a router that matches the escaped path.
	path := r.URL.EscapedPath()
	remote := r.RemoteAddr
	if host, _, err := net.SplitHostPort(remote); err == nil {
		remote = host
	}
	local := ""
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && la != nil {
		local = la.String()
	}
	for k, vs := range r.Header {
		if keyedHeader(k) {
			keys = append(keys, keyedValues{k, vs})
		}
	}
	slices.SortFunc(keys, func(a, b keyedValues) int { return strings.Compare(a.name, b.name) })
	// Each part ends with a 0 byte, which no header value, URL or
	// accepted _meta holds; a header's name starts with a newline.
	var buf [1024]byte
	b := buf[:0]
	for _, p := range [...]string{path, r.URL.RawQuery, r.Host, remote, local} {
		b = append(append(b, p...), 0)
	}
	if r.TLS != nil {
		b = append(append(append(b, "tls\x00"...), r.TLS.ServerName...), 0) // a server may route by SNI
		if certs := r.TLS.PeerCertificates; len(certs) > 0 {
			// A client certificate is who the caller is, to a server
			// that authenticates with mutual TLS.
			sum := sha256.Sum256(certs[0].Raw)
			b = append(b, sum[:]...)
		}
	}
	for _, k := range keys {
		b = append(append(append(b, '\n'), k.name...), 0)
		for _, v := range k.values {
			b = append(append(b, v...), 0)
		}
	}
	b = append(append(append(b, "\n_meta\x00"...), meta...), 0)
	sum := sha256.Sum256(b)
	return string(sum[:])
}

type keyedValues struct {
	name   string
	values []string
}

// keyedHeader reports whether callerKey keys the header k: every header
// but those that describe the request's own body or connection (Mcp-Method,
// Mcp-Name and Mcp-Param-* mirror its body, and differ between a
// tools/list and a tools/call of one caller) and tracing headers, which
// change with every request and grant nothing.
func keyedHeader(k string) bool {
	switch k {
	case "Accept-Encoding", "Connection", "Content-Encoding", "Content-Length", "Expect",
		"Keep-Alive", mcpwire.HeaderMethod, mcpwire.HeaderName, "Te", "Trailer",
		"Transfer-Encoding", "Upgrade",
		"Traceparent", "Tracestate", "Baggage", "X-Request-Id", "X-Amzn-Trace-Id",
		"Sentry-Trace", "X-B3-Traceid", "X-B3-Spanid", "X-B3-Parentspanid", "X-B3-Sampled",
		"X-Cloud-Trace-Context":
		return false
	}
	return !strings.HasPrefix(k, mcpwire.HeaderParamPrefix)
}
