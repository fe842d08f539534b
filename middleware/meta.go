package toolguard

import (
	"bytes"
	"encoding/json"
)

// paramsMeta returns the raw params._meta object of a body the strict
// reader accepted (one valid JSON object, no ambiguous keys), or nil. It
// does not validate: it only walks members, skipping values.
func paramsMeta(b []byte) []byte {
	params := member(b, "params")
	if len(params) == 0 || params[0] != '{' {
		return nil
	}
	meta := member(params, "_meta")
	if len(meta) == 0 || meta[0] != '{' {
		return nil
	}
	return meta
}

// member returns the value of the member named key of the JSON object
// that obj starts with (after whitespace), or nil.
func member(obj []byte, key string) []byte {
	i := skipWS(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil
	}
	i++
	for {
		i = skipWS(obj, i)
		if i >= len(obj) || obj[i] != '"' {
			return nil
		}
		end := valueEnd(obj, i)
		k := obj[i:end]
		i = skipWS(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return nil
		}
		i = skipWS(obj, i+1)
		vend := valueEnd(obj, i)
		if keyEquals(k, key) {
			return obj[i:vend]
		}
		i = skipWS(obj, vend)
		if i >= len(obj) || obj[i] != ',' {
			return nil
		}
		i++
	}
}

// keyEquals reports whether the JSON string token k decodes to key.
func keyEquals(k []byte, key string) bool {
	if bytes.IndexByte(k, '\\') < 0 {
		return string(k[1:len(k)-1]) == key
	}
	var s string
	return json.Unmarshal(k, &s) == nil && s == key
}

// valueEnd returns the index just past the JSON value at i of a body the
// strict reader accepted (so the value is valid, and within maxDepth).
func valueEnd(b []byte, i int) int {
	end, _ := skipValue(b, i, 0)
	return end
}

// forwardedMeta returns a copy of a call's _meta to send on the tools/list
// that confirms a rejection: every member but progressToken, which names
// the call's own request (a server would tag progress notifications for the
// list with it, on the caller's stream) and changes with every call.
func forwardedMeta(meta []byte) json.RawMessage {
	if meta == nil {
		return nil
	}
	if !bytes.Contains(meta, []byte("progress")) && !bytes.Contains(meta, []byte(`\u`)) {
		return bytes.Clone(meta)
	}
	out := make([]byte, 0, len(meta))
	out = append(out, '{')
	i := skipWS(meta, 1)
	for i < len(meta) && meta[i] == '"' {
		kend := valueEnd(meta, i)
		k := meta[i:kend]
		j := skipWS(meta, kend)
		if j >= len(meta) || meta[j] != ':' {
			return bytes.Clone(meta)
		}
		v := skipWS(meta, j+1)
		vend := valueEnd(meta, v)
		if !keyEquals(k, "progressToken") {
			if len(out) > 1 {
				out = append(out, ',')
			}
			out = append(out, meta[i:vend]...)
		}
		i = skipWS(meta, vend)
		if i < len(meta) && meta[i] == ',' {
			i = skipWS(meta, i+1)
		}
	}
	return append(out, '}')
}
