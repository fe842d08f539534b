// Package mcpwire is the MCP protocol vocabulary the kit shares: header
// names, protocol versions, the 2026-07-28 _meta keys, the Mcp-Name value
// codec, Accept and Content-Type parsing, tools/list pages, and the
// messages of an event stream. The middleware, the checker and the test
// fixtures use it, so each detail is written once. Standard library only.
//
// It holds no policy: what the guard does with these facts is decided in
// the middleware (see docs/RULES.md).
package mcpwire

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"mime"
	"slices"
	"strings"
)

// Header names, in the canonical form net/http stores them under.
const (
	HeaderProtocolVersion = "Mcp-Protocol-Version"
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderMethod          = "Mcp-Method"
	HeaderName            = "Mcp-Name"
	HeaderParamPrefix     = "Mcp-Param-" // 2026-07-28 x-mcp-header mirrors of tool arguments
	HeaderLastEventID     = "Last-Event-Id"
)

// Protocol versions: the newest negotiated with initialize (a 2025-era
// session), and the first without initialize and sessions, where every
// request carries its version in a header and in _meta.
const (
	LatestWithInitialize = "2025-11-25"
	FirstSessionless     = "2026-07-28"
)

// Known reports whether v is exactly a released protocol version.
func Known(v string) bool { return slices.Contains(Versions, v) }

// Versions are the protocol versions known here, oldest first.
var Versions = []string{"2024-11-05", "2025-03-26", "2025-06-18", LatestWithInitialize, FirstSessionless}

// Sessionless reports whether the known version v is 2026-07-28 or later:
// a version without initialize and sessions. Versions are dates, so known
// versions compare as strings; an unknown value is never sessionless here
// (the SDKs disagree about such values, see docs/RULES.md).
func Sessionless(v string) bool { return Known(v) && v >= FirstSessionless }

// The _meta keys of a 2026-07-28 request.
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
)

// EncodeName encodes a value for the Mcp-Name (or an Mcp-Param-*) header:
// as is when it is non-empty visible ASCII without surrounding spaces,
// otherwise (and when it looks like the sentinel itself) as
// =?base64?<base64 of UTF-8>?=.
func EncodeName(s string) string {
	plain := s != "" && s[0] != ' ' && s[len(s)-1] != ' ' && !Encoded(s)
	for i := 0; plain && i < len(s); i++ {
		plain = s[i] >= 0x20 && s[i] <= 0x7e
	}
	if plain {
		return s
	}
	return sentinelPrefix + base64.StdEncoding.EncodeToString([]byte(s)) + sentinelSuffix
}

const sentinelPrefix, sentinelSuffix = "=?base64?", "?="

// Encoded reports whether the header value v is in the sentinel form.
func Encoded(v string) bool {
	return len(v) >= len(sentinelPrefix)+len(sentinelSuffix) &&
		strings.HasPrefix(v, sentinelPrefix) && strings.HasSuffix(v, sentinelSuffix)
}

// NameEquals reports whether the Mcp-Name header value v names name, the
// decoded params.name of the body, after decoding the sentinel. It does not
// allocate for plain values.
func NameEquals(v string, name []byte) bool {
	if !Encoded(v) {
		return v == string(name)
	}
	dec, err := base64.StdEncoding.DecodeString(v[len(sentinelPrefix) : len(v)-len(sentinelSuffix)])
	return err == nil && string(dec) == string(name)
}

// Accepts reads Accept header values as a Streamable HTTP server does:
// which of application/json and text/event-stream they admit. Wildcards
// count, parameters are ignored except a quality of zero, which refuses
// the range. No header at all admits both.
func Accepts(values []string) (json, stream bool) {
	if len(values) == 0 {
		return true, true
	}
	for _, v := range values {
		for v != "" {
			var rng string
			rng, v, _ = strings.Cut(v, ",")
			mt, params, _ := strings.Cut(rng, ";")
			if zeroQuality(params) {
				continue
			}
			switch strings.ToLower(strings.TrimSpace(mt)) {
			case "*/*":
				json, stream = true, true
			case "application/json", "application/*":
				json = true
			case "text/event-stream", "text/*":
				stream = true
			}
		}
	}
	return json, stream
}

// zeroQuality reports whether media-range parameters carry q=0.
func zeroQuality(params string) bool {
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		k, v, _ := strings.Cut(p, "=")
		if strings.EqualFold(strings.TrimSpace(k), "q") {
			v = strings.TrimSpace(v)
			return v != "" && strings.Trim(v, "0.") == ""
		}
	}
	return false
}

// MediaType returns the lower-case media type of a Content-Type value,
// parsed as the Go SDKs parse it (mime.ParseMediaType): "" when the value
// is malformed, parameters included.
func MediaType(ct string) string {
	switch {
	case ct == "application/json" || strings.EqualFold(ct, "application/json"):
		return "application/json" // the common case, without allocating
	case ct == "text/event-stream" || strings.EqualFold(ct, "text/event-stream"):
		return "text/event-stream"
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return ""
	}
	return mt
}

// A Page is one tools/list result.
type Page struct {
	Names      []string // the tools' names, in the order listed
	NextCursor string   // "" on the last page
	TTLMs      *int64   // 2026-07-28 ttlMs, when given
}

// SameID reports whether the id of a reply is the id of a request (both
// their JSON bytes): equal strings after decoding, or equal integer
// literals.
func SameID(got, want []byte) bool {
	got, want = bytes.TrimSpace(got), bytes.TrimSpace(want)
	if len(got) == 0 || len(want) == 0 {
		return false
	}
	if got[0] == '"' || want[0] == '"' {
		var a, b string
		return got[0] == want[0] && json.Unmarshal(got, &a) == nil && json.Unmarshal(want, &b) == nil && a == b
	}
	return bytes.Equal(got, want)
}
