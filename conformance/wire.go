package conformance

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"mime"
	"strings"
)

// This file holds the protocol's wire details the checker relies on: header
// names and their encoding, Content-Type and event-stream parsing, and the
// shape of a tools/list page. They are kept together so that they can move
// to a shared package as one piece.

// Header names.
const (
	hdrProtocolVersion = "Mcp-Protocol-Version"
	hdrMethod          = "Mcp-Method"
	hdrName            = "Mcp-Name"
	hdrSession         = "Mcp-Session-Id"
	acceptBoth         = "application/json, text/event-stream"
)

// headerValue encodes a value for an Mcp-* header, using the
// =?base64?...?= sentinel where a plain value would not survive: a value
// that is empty, has leading or trailing spaces, bytes outside printable
// ASCII, or itself looks like the sentinel.
func headerValue(s string) string {
	plain := s != "" && s[0] != ' ' && s[len(s)-1] != ' ' &&
		!(strings.HasPrefix(s, "=?base64?") && strings.HasSuffix(s, "?="))
	for i := 0; plain && i < len(s); i++ {
		plain = s[i] >= 0x20 && s[i] <= 0x7e
	}
	if plain {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}

// mediaTypeOf reduces a Content-Type to the fixed list a report records. It
// reads the type as clients do: a malformed parameter does not hide it
// ("text/event-stream; charset" is an event stream), and case does not
// matter.
func mediaTypeOf(contentType string) MediaType {
	if strings.TrimSpace(contentType) == "" {
		return MediaNone
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil && !errors.Is(err, mime.ErrInvalidMediaParameter) {
		// Take what precedes the parameters, if it is a type/subtype.
		mt, _, _ = strings.Cut(contentType, ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
	}
	switch m := MediaType(mt); m {
	case MediaJSON, MediaEventStream, MediaHTML, MediaText:
		return m
	}
	return MediaOther
}

// streamMessages returns the data of each message event of an event stream
// (no event field, or "event: message"), in order, as a WHATWG EventSource
// reads them: lines end in CRLF, LF or CR; "data:" lines of one event are
// joined with LF; an event is dispatched at a blank line, so an unfinished
// last event is not. Events whose data is empty are left out: they carry
// nothing.
func streamMessages(body []byte) [][]byte {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	var out [][]byte
	var data []byte
	hasData := false
	event := ""
	for len(body) > 0 {
		i := bytes.IndexAny(body, "\r\n")
		if i < 0 {
			break // an unfinished line: no blank line will dispatch it
		}
		line := body[:i]
		if body[i] == '\r' && i+1 < len(body) && body[i+1] == '\n' {
			i++
		}
		body = body[i+1:]
		if len(line) == 0 {
			if hasData && (event == "" || event == "message") && len(bytes.TrimSpace(data)) > 0 {
				out = append(out, data)
			}
			data, hasData, event = nil, false, ""
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
		case "event":
			event = string(value)
		}
	}
	return out
}

// toolsListParams are the params of a tools/list request for a page.
func toolsListParams(cursor string) any {
	if cursor == "" {
		return nil
	}
	return map[string]any{"cursor": cursor}
}

// readToolsPage reads one tools/list result: the names it lists and the
// cursor of the next page ("" for the last page). Every tool must have a
// string name.
func readToolsPage(res json.RawMessage) (names []string, next string, err error) {
	var page struct {
		Tools []struct {
			Name *string `json:"name"`
		} `json:"tools"`
		NextCursor *string `json:"nextCursor"`
	}
	if json.Unmarshal(res, &page) != nil || page.Tools == nil {
		return nil, "", errors.New("the result has no tools array")
	}
	for _, t := range page.Tools {
		if t.Name == nil {
			return nil, "", errors.New("a listed tool has no name")
		}
		names = append(names, *t.Name)
	}
	if page.NextCursor != nil {
		next = *page.NextCursor
	}
	return names, next, nil
}
