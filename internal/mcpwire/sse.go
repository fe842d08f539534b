package mcpwire

import "bytes"

// EventMessages returns the data of each message event in body, a
// text/event-stream body (an event with no event field or with "event:
// message"), in order, as an EventSource client reads them: a leading BOM
// is dropped; lines end in CRLF, LF or CR; comment lines and other fields
// are skipped; the data lines of one event are joined with LF; an event is
// dispatched at a blank line, so an unfinished last event does not count.
// Events whose data is empty or only white space are left out.
func EventMessages(body []byte) [][]byte {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	var out [][]byte
	for n := EventEnd(body, true); n >= 0; n = EventEnd(body, true) {
		if data, ok := EventMessage(body[:n]); ok {
			out = append(out, data)
		}
		body = body[n:]
	}
	return out
}

// EventMessage returns the data of ev, one event, when it is a message
// event whose data is not empty or only white space (see EventMessages).
func EventMessage(ev []byte) ([]byte, bool) {
	data, ok := EventData(ev)
	if !ok || len(bytes.TrimSpace(data)) == 0 || !isMessage(ev) {
		return nil, false
	}
	return data, true
}

// isMessage reports whether the event's type (its last event field) is
// "message", or it has none.
func isMessage(ev []byte) bool {
	event := ""
	EventLines(ev, func(line []byte) {
		if v, ok := bytes.CutPrefix(line, []byte("event")); ok && (len(v) == 0 || v[0] == ':') {
			event = string(bytes.TrimPrefix(bytes.TrimPrefix(v, []byte(":")), []byte(" ")))
		}
	})
	return event == "" || event == "message"
}

// EventEnd returns the length of the first complete event in b (up to and
// including the blank line that ends it), or -1. A CR at the very end may
// be the start of a CRLF, so it ends a line only when final.
func EventEnd(b []byte, final bool) int {
	i := 0
	lineStart := true
	for i < len(b) {
		c := b[i]
		if c != '\r' && c != '\n' {
			lineStart = false
			j := bytes.IndexAny(b[i:], "\r\n")
			if j < 0 {
				return -1
			}
			i += j
			continue
		}
		// a line ends at i
		n := 1
		if c == '\r' {
			if i+1 == len(b) && !final {
				return -1
			}
			if i+1 < len(b) && b[i+1] == '\n' {
				n = 2
			}
		}
		i += n
		if lineStart {
			return i // an empty line ends the event
		}
		lineStart = true
	}
	return -1
}

// EventData returns the data of an event: its data lines joined by LF;
// ok is false when it has none.
func EventData(ev []byte) (data []byte, ok bool) {
	EventLines(ev, func(line []byte) {
		if v, isData := DataField(line); isData {
			if ok {
				data = append(data, '\n')
			}
			data = append(data, v...)
			ok = true
		}
	})
	return data, ok
}

// EventLines calls f with each line of ev, without its end (LF, CR or
// CRLF).
func EventLines(ev []byte, f func(line []byte)) {
	for len(ev) > 0 {
		j := bytes.IndexAny(ev, "\r\n")
		if j < 0 {
			f(ev)
			return
		}
		f(ev[:j])
		if ev[j] == '\r' && j+1 < len(ev) && ev[j+1] == '\n' {
			j++
		}
		ev = ev[j+1:]
	}
}

// DataField returns the value of a data line ("data" or "data:" and an
// optional space), and whether line is one.
func DataField(line []byte) ([]byte, bool) {
	v, ok := bytes.CutPrefix(line, []byte("data"))
	if !ok || len(v) > 0 && v[0] != ':' {
		return nil, false
	}
	return bytes.TrimPrefix(bytes.TrimPrefix(v, []byte(":")), []byte(" ")), true
}
