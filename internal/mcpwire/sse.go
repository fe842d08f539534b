package mcpwire

import "bytes"

// EventMessages returns the data of each message event in body, a
// text/event-stream body, (an event with
// no event field or with "event: message"), in order, as an EventSource
// client reads them: a leading BOM is dropped; lines end in CRLF, LF or CR;
// comment lines (":") and other fields are skipped; the data lines of one
// event are joined with LF; an event is dispatched at a blank line, so an
// unfinished last event does not count. Events whose data is empty or only
// white space carry nothing and are left out.
func EventMessages(body []byte) [][]byte {
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
