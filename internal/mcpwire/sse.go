package mcpwire

import "bytes"

// EventMessages returns the data of each message event in body, a
// text/event-stream body (an event with no event field or with "event:
// message"), in order, as an EventSource client reads them: a leading BOM
// is dropped; lines end in CRLF, LF or CR; comment lines and other fields
// are skipped; the data lines of one event are joined with LF; an event is
// dispatched at a blank line, so an unfinished last event does not count.
// Events whose data is empty or only white space are left out. The data
// of a one-line event lies in body.
func EventMessages(body []byte) [][]byte {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	var out [][]byte
	for n := EventEnd(body); n >= 0; n = EventEnd(body) {
		if data, ok := EventMessage(body[:n]); ok {
			out = append(out, data)
		}
		body = body[n:]
	}
	return out
}

// EventMessage returns the data of ev, one event, when it is a message
// event whose data is not empty or only white space (see EventMessages):
// its data lines joined by LF, in one pass. The data of one line lies in
// ev; that of more is a copy.
func EventMessage(ev []byte) ([]byte, bool) {
	var data, event []byte
	lines := 0
	EventLines(ev, func(line []byte) {
		if v, ok := field(line, "event"); ok {
			event = v // the last event field is the type
			return
		}
		v, ok := field(line, "data")
		switch {
		case !ok:
			return
		case lines == 0:
			data = v
		case lines == 1:
			data = append(append(append(make([]byte, 0, 2*(len(data)+len(v))), data...), '\n'), v...)
		default:
			data = append(append(data, '\n'), v...)
		}
		lines++
	})
	if lines == 0 || len(bytes.TrimSpace(data)) == 0 || len(event) > 0 && string(event) != "message" {
		return nil, false
	}
	return data, true
}

// EventEnd returns the length of the first complete event in b (up to and
// including the blank line that ends it), or -1. A CR at the end of b
// that is the blank line ends the event, as a client dispatches it then
// (an LF after it is an empty line of its own).
func EventEnd(b []byte) int {
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
		if c == '\r' && i+1 < len(b) && b[i+1] == '\n' {
			n = 2
		}
		i += n
		if lineStart {
			return i // an empty line ends the event
		}
		lineStart = true
	}
	return -1
}

// EventLines calls f with each line of ev, without its end (LF, CR, CRLF).
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
func DataField(line []byte) ([]byte, bool) { return field(line, "data") }

// field returns the value of a line of the named field (the name alone,
// or the name, a colon and an optional space), and whether line is one.
func field(line []byte, name string) ([]byte, bool) {
	v, ok := bytes.CutPrefix(line, []byte(name))
	if !ok || len(v) > 0 && v[0] != ':' {
		return nil, false
	}
	return bytes.TrimPrefix(bytes.TrimPrefix(v, []byte(":")), []byte(" ")), true
}
