// The caller of a request: the key under which its list from the server is kept.

package toolguard

import (
	"crypto/sha256"
	"crypto/tls"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/toolguard/toolguard/internal/mcpwire"
)

// callerKey returns the key under which the list the server gives the
// caller of r is kept: a digest of everything a server could read to decide
// what to list (docs/RULES.md §5, "Who the caller is"), meta being the
// request's params._meta as callerMeta reads it.
func callerKey(r *http.Request, meta []byte) string {
	var c caller
	c.take(r)
	return c.key(meta)
}

// A caller is what callerKey reads of a request, taken when the request
// reaches the guard (a handler behind it may change the request: remove a
// header it has checked, or write into a header's values) and digested
// only when a list is looked up, which a known call never does.
type caller struct {
	path, rawPath, query, host, remote string
	local                              net.Addr
	tls                                *tls.ConnectionState
	n                                  int            // keyed headers in header
	header                             [8]keyedValues // the first eight
	more                               []keyedValues  // and the rest
	values                             []string       // their values, copied (into valueBuf while they fit)
	valueBuf                           [8]string
}

// take notes what key reads of r.
func (c *caller) take(r *http.Request) {
	c.path, c.rawPath, c.query = r.URL.Path, r.URL.RawPath, r.URL.RawQuery
	c.host, c.remote, c.tls = r.Host, r.RemoteAddr, r.TLS
	c.local, _ = r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	c.n, c.more, c.values = 0, nil, c.valueBuf[:0]
	for k, vs := range r.Header {
		if !keyedHeader(k) {
			continue
		}
		// A copy of vs: an earlier copy stays where it is when values grows.
		i := len(c.values)
		c.values = append(c.values, vs...)
		kv := keyedValues{k, c.values[i:len(c.values):len(c.values)]}
		if c.n < len(c.header) {
			c.header[c.n] = kv
			c.n++
		} else {
			c.more = append(c.more, kv)
		}
	}
}

// key returns the caller's key for a request whose _meta is meta.
func (c *caller) key(meta []byte) string {
	// The path as it is sent on (escaped): /t/a%2Fb/mcp and /t/a/b/mcp are
	// different callers to a router that matches the escaped path.
	path := (&url.URL{Path: c.path, RawPath: c.rawPath}).EscapedPath()
	remote := c.remote
	if host, _, err := net.SplitHostPort(remote); err == nil {
		remote = host
	}
	local := ""
	if c.local != nil {
		local = c.local.String()
	}
	keys := c.header[:c.n]
	if c.more != nil {
		keys = append(keys[:c.n:c.n], c.more...)
	}
	slices.SortFunc(keys, func(a, b keyedValues) int { return strings.Compare(a.name, b.name) })
	// Each part ends with a 0 byte, which no header value, URL or
	// accepted _meta holds; a header's name starts with a newline.
	var buf [1024]byte
	b := buf[:0]
	for _, p := range [...]string{path, c.query, c.host, remote, local} {
		b = append(append(b, p...), 0)
	}
	if c.tls != nil {
		b = append(append(append(b, "tls\x00"...), c.tls.ServerName...), 0) // a server may route by SNI
		if certs := c.tls.PeerCertificates; len(certs) > 0 {
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

// keyAs returns the key of c's request had its Mcp-Protocol-Version been
// v (none for "").
func (c caller) keyAs(meta []byte, v string) string {
	hs := slices.DeleteFunc(append(slices.Clone(c.header[:c.n]), c.more...), func(kv keyedValues) bool {
		return kv.name == mcpwire.HeaderProtocolVersion
	})
	if v != "" {
		hs = append(hs, keyedValues{mcpwire.HeaderProtocolVersion, []string{v}})
	}
	c.n, c.more = 0, hs
	return c.key(meta)
}

type keyedValues struct {
	name   string
	values []string
}

// keyedHeader reports whether callerKey keys the header k: not one of the
// request itself (its body's type, length and coding, the types it
// accepts; Mcp-Method, Mcp-Name and Mcp-Param-* mirror its body), its
// connection, its trace or its id from a proxy or CDN (docs/RULES.md §5).
func keyedHeader(k string) bool {
	switch k {
	case "Accept", "Accept-Encoding", "Connection", "Content-Encoding", "Content-Length", "Content-Type", "Expect",
		"Keep-Alive", mcpwire.HeaderMethod, mcpwire.HeaderName, "Te", "Trailer",
		"Transfer-Encoding", "Upgrade",
		"Traceparent", "Tracestate", "Baggage", "B3", "Uber-Trace-Id", "Newrelic", "Sw8",
		"Elastic-Apm-Traceparent", "Sentry-Trace", "X-Amzn-Trace-Id", "X-Cloud-Trace-Context",
		"X-B3-Traceid", "X-B3-Spanid", "X-B3-Parentspanid", "X-B3-Sampled", "X-B3-Flags",
		"X-Datadog-Trace-Id", "X-Datadog-Parent-Id", "X-Datadog-Sampling-Priority", "X-Datadog-Origin",
		"X-Datadog-Tags", "X-Request-Id", "Request-Id", "X-Correlation-Id", "X-Request-Start", "Cf-Ray",
		"X-Amz-Cf-Id", "Fly-Request-Id", "X-Vercel-Id":
		return false
	}
	return !strings.HasPrefix(k, mcpwire.HeaderParamPrefix)
}
