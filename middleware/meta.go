package toolguard

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/toolguard/toolguard/internal/mcpwire"
)

// callerMeta returns a copy of a request's _meta as the caller's key reads
// it: without the members that describe the request (requestMetaKeys), in
// which a tools/list and a tools/call of one caller differ; nil when none
// is left, as for a request without _meta.
func callerMeta(meta []byte) []byte {
	if len(meta) == 0 || isEmptyObject(meta) {
		return nil
	}
	// meta is an object the strict reader accepted.
	out := append(make([]byte, 0, len(meta)), '{')
	s := scanner{b: meta}
	s.elements('{', func() bool {
		start := s.i
		key, _ := s.str()
		s.ws()
		s.i++ // the colon
		s.ws()
		s.value()
		if !slices.ContainsFunc(requestMetaKeys, func(k string) bool { return strEquals(meta, key, k) }) {
			if len(out) > 1 {
				out = append(out, ',')
			}
			out = append(out, meta[start:s.i]...)
		}
		return true
	})
	if len(out) == 1 {
		return nil
	}
	return append(out, '}')
}

// requestMetaKeys are the _meta members that describe a request, not its
// caller, as tracing headers do: its progress token, its W3C trace context
// (SEP-414), the task it belongs to and the log level asked of it.
var requestMetaKeys = []string{"progressToken", "traceparent", "tracestate", "baggage",
	"io.modelcontextprotocol/related-task", "io.modelcontextprotocol/logLevel"}

// isEmptyObject reports whether b is {} with optional whitespace.
func isEmptyObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) >= 2 && b[0] == '{' && b[len(b)-1] == '}' && len(bytes.TrimSpace(b[1:len(b)-1])) == 0
}

// acceptableClientMeta reports whether the _meta of a 2026-07-28 call is
// one that mcp-go and go-sdk both accept before dispatch: no protocol key
// twice, clientCapabilities an object of capability objects (booleans
// only as listChanged), clientInfo absent or an object of strings. Both
// SDKs refuse a call without valid clientCapabilities (-32602, 400), and
// go-sdk one with a clientInfo it cannot decode; anything more unusual
// than the shapes above is left to the server.
func acceptableClientMeta(meta []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(meta))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	var caps, info json.RawMessage
	var version bool
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		var raw json.RawMessage
		if dec.Decode(&raw) != nil {
			return false
		}
		switch t {
		case mcpwire.MetaProtocolVersion:
			if version {
				return false
			}
			version = true
		case mcpwire.MetaClientCapabilities:
			if caps != nil {
				return false
			}
			caps = raw
		case mcpwire.MetaClientInfo:
			if info != nil {
				return false
			}
			info = raw
		}
	}
	if caps == nil || !capabilities(json.NewDecoder(bytes.NewReader(caps)), "", 0) {
		return false
	}
	return info == nil || stringObject(json.NewDecoder(bytes.NewReader(info)))
}

// capabilities reports whether the next value of dec is an object whose
// members are capability objects, or booleans named listChanged, with no
// key twice. key is the member name the value belongs to.
func capabilities(dec *json.Decoder, key string, depth int) bool {
	t, err := dec.Token()
	if err != nil || depth > 8 {
		return false
	}
	if _, ok := t.(bool); ok {
		return key == "listChanged"
	}
	return t == json.Delim('{') && uniqueMembers(dec, func(k string) bool { return capabilities(dec, k, depth+1) })
}

// stringObject reports whether the next value of dec is an object of
// strings, with no key twice.
func stringObject(dec *json.Decoder) bool {
	t, err := dec.Token()
	return err == nil && t == json.Delim('{') && uniqueMembers(dec, func(string) bool {
		v, err := dec.Token()
		_, ok := v.(string)
		return err == nil && ok
	})
}

// uniqueMembers reads the rest of an object whose '{' dec has read: no key
// twice, and value, given the key, reads and accepts each value.
func uniqueMembers(dec *json.Decoder, value func(key string) bool) bool {
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		k, ok := t.(string)
		if err != nil || !ok || seen[k] || !value(k) {
			return false
		}
		seen[k] = true
	}
	_, err := dec.Token()
	return err == nil
}
