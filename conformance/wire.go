package conformance

import (
	"encoding/json"
	"errors"
	"mime"
	"strings"

	"github.com/toolguard/toolguard/internal/mcpwire"
)

// The protocol's wire details come from the kit's shared vocabulary
// (internal/mcpwire, internal/sse), which the middleware and the tool sets
// use too; this file adapts them to what a report records. The reply's
// classification (classify.go) stays the checker's own.

// Header names.
const (
	hdrProtocolVersion = mcpwire.HeaderProtocolVersion
	hdrMethod          = mcpwire.HeaderMethod
	hdrName            = mcpwire.HeaderName
	hdrSession         = mcpwire.HeaderSessionID
	acceptBoth         = "application/json, text/event-stream"
)

// headerValue encodes a value for an Mcp-* header, with the =?base64?...?=
// sentinel where a plain value would not survive.
func headerValue(s string) string { return mcpwire.EncodeName(s) }

// mediaTypeOf reduces a Content-Type to the fixed list a report records. It
// reads the type as clients do: a malformed parameter does not hide it
// ("text/event-stream; charset" is an event stream), and case does not
// matter.
func mediaTypeOf(contentType string) MediaType {
	if strings.TrimSpace(contentType) == "" {
		return MediaNone
	}
	switch m := MediaType(clientMediaType(contentType)); m {
	case MediaJSON, MediaEventStream, MediaHTML, MediaText:
		return m
	}
	return MediaOther
}

// clientMediaType returns the lower-case media type of a Content-Type
// value as an HTTP client reads a reply's: a malformed parameter list does
// not hide the type before it, and a value mime.ParseMediaType refuses
// outright is read as whatever precedes its parameters.
func clientMediaType(ct string) string {
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil || errors.Is(err, mime.ErrInvalidMediaParameter) {
		return mt
	}
	mt, _, _ = strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// streamMessages returns the data of each message event of an event stream,
// in order, as an EventSource client reads them (see sse.Messages).
func streamMessages(body []byte) [][]byte { return mcpwire.EventMessages(body) }

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
	if err := json.Unmarshal(res, &page); err != nil {
		return nil, "", err
	} else if page.Tools == nil {
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
