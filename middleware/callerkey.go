// The caller of a request, as Discover sees it: what its tools/list
// request forwards, and the key under which a caller's list is reused.

package toolguard

import (
	"crypto/sha256"
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/toolguard/toolguard/mcpwire"
)

// Headers the fetch does not copy from the call: they describe the call's
// own body or connection (Mcp-Name and Mcp-Param-* mirror its params), and
// the fetch sets its own. Everything else is forwarded as is, Accept and
// Last-Event-ID included, so the server judges the list request as it
// judges the call.
var notForwarded = map[string]bool{
	"Accept-Encoding": true, "Connection": true, "Content-Encoding": true,
	"Content-Length": true, "Expect": true, "Keep-Alive": true,
	mcpwire.HeaderMethod: true, mcpwire.HeaderName: true, "Te": true,
	"Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
}

func forwarded(k string) bool {
	return !notForwarded[k] && !strings.HasPrefix(k, mcpwire.HeaderParamPrefix)
}

// Tracing headers change with every request and grant nothing: they are
// forwarded, so the list shows up in the caller's trace, but are not part
// of the default cache key. They are the only forwarded thing left out.
var volatile = map[string]bool{
	"Traceparent": true, "Tracestate": true, "Baggage": true, "X-Request-Id": true,
	"X-Amzn-Trace-Id": true, "Sentry-Trace": true, "X-B3-Traceid": true, "X-B3-Spanid": true,
	"X-B3-Parentspanid": true, "X-B3-Sampled": true, "X-Cloud-Trace-Context": true,
}

// CallerKey identifies the caller of r for caching: everything a
// tools/list fetch forwards that a server could read to decide what to
// list. That is the URL, Host, the remote IP address, the local address
// the request arrived on, TLS or not and the client certificate, every
// forwarded request header but tracing headers, and the call's
// params._meta (when r carries the call, see CallFromContext). Values that
// middleware put in the request's context are forwarded but cannot be
// keyed: derive them from what is (a header, a cookie, the certificate). Two requests
// with the same key get the same list from any server that decides by
// what it is sent.
func CallerKey(r *http.Request) string {
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
	local, hasLocal := "", false
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && la != nil {
		local, hasLocal = la.String(), true
	}
	var meta []byte
	if c, ok := CallFromContext(r.Context()); ok && c.Meta != nil {
		meta = c.Meta
	}
	size := len(path) + 1 + len(r.URL.RawQuery) + len("\nhost\x00") + len(r.Host) + len("\nremote\x00") + len(remote)
	if hasLocal {
		size += len("\nlocal\x00") + len(local)
	}
	if r.TLS != nil {
		size += len("\ntls\x00") + len(r.TLS.ServerName) + 1 + sha256.Size
	}
	if meta != nil {
		size += len("\n_meta\x00") + len(meta)
	}
	for k, vs := range r.Header {
		if keyedHeader(k) {
			keys = append(keys, keyedValues{k, vs})
			size += 1 + len(k)
			for _, v := range vs {
				size += 1 + len(v)
			}
		}
	}
	// Sorted by name through an index, so the sort moves bytes, not
	// strings and slices (no write barriers).
	var orderArr [len(arr)]uint8
	order := orderArr[:0]
	if len(keys) <= len(orderArr) {
		for i := range keys {
			order = append(order, uint8(i))
			for j := len(order) - 1; j > 0 && keys[order[j]].name < keys[order[j-1]].name; j-- {
				order[j], order[j-1] = order[j-1], order[j]
			}
		}
	} else {
		slices.SortFunc(keys, func(a, b keyedValues) int { return strings.Compare(a.name, b.name) })
	}
	var b strings.Builder
	b.Grow(size)
	b.WriteString(path)
	b.WriteByte('?')
	b.WriteString(r.URL.RawQuery)
	b.WriteString("\nhost\x00")
	b.WriteString(r.Host)
	b.WriteString("\nremote\x00")
	b.WriteString(remote)
	if hasLocal {
		b.WriteString("\nlocal\x00")
		b.WriteString(local)
	}
	if r.TLS != nil {
		b.WriteString("\ntls\x00")
		b.WriteString(r.TLS.ServerName) // a server may route by SNI
		if certs := r.TLS.PeerCertificates; len(certs) > 0 {
			// A client certificate is who the caller is, to a server
			// that authenticates with mutual TLS.
			sum := sha256.Sum256(certs[0].Raw)
			b.WriteByte(0)
			b.Write(sum[:])
		}
	}
	for i := range keys {
		k := &keys[i]
		if len(order) > 0 {
			k = &keys[order[i]]
		}
		b.WriteByte('\n')
		b.WriteString(k.name)
		for _, v := range k.values {
			b.WriteByte(0)
			b.WriteString(v)
		}
	}
	if meta != nil {
		b.WriteString("\n_meta\x00")
		b.Write(meta)
	}
	return b.String()
}

type keyedValues struct {
	name   string
	values []string
}

// keyedHeader reports whether CallerKey keys the header k: forwarded(k)
// and not volatile[k], decided by one switch instead of two map lookups
// (TestKeyedHeader holds it to the maps).
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
