// Package sse reads the events of a text/event-stream body, for the parts of
// the kit that read MCP replies (the checker, the discovery tool set).
package sse

import "bytes"

// Messages returns the data of each message event in body (an event with no
// event field or with "event: message"), in order. Lines may end in LF,
// CRLF or CR; data lines of one event are joined with LF; a last event
// without a closing blank line still counts.
func Messages(body []byte) [][]byte {
	body = bytes.ReplaceAll(body, []byte("\r\n"), []byte("\n"))
	body = bytes.ReplaceAll(body, []byte("\r"), []byte("\n"))
	var out [][]byte
	var data []byte
	var hasData bool
	event := ""
	flush := func() {
		if hasData && (event == "" || event == "message") {
			out = append(out, data)
		}
		data, hasData, event = nil, false, ""
	}
	for _, line := range bytes.Split(body, []byte("\n")) {
		if len(line) == 0 {
			flush()
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
	flush()
	return out
}
