// Reading the server's tools/list replies, names only: the strict scanner
// where it can, encoding/json where it cannot.

package toolguard

import (
	"encoding/json"
	"strconv"

	"github.com/toolguard/toolguard/internal/mcpwire"
)

// decodeListReply reads msg, the reply to the tools/list with the given id
// (its JSON bytes, as the caller sent it).
//
// Names only: the reply is read by the strict reader's scanner, which
// takes the id, result.tools[].name, result.nextCursor and result.ttlMs
// and steps over every other value (input and output schemas, titles,
// annotations) without materializing it. Whenever that read fails (a
// reply outside the strict subset: a key twice or spelled in another case,
// invalid UTF-8, a number beyond float64, an error reply, a missing or
// non-string name, a reply to another id, ...), the reply is read again by
// encoding/json, so the outcome is always the one encoding/json gives: the
// fast read only answers where the two agree (FuzzListReply).
func decodeListReply(msg []byte, id []byte) (mcpwire.Page, error) {
	if p, ok := readJSONListReply(msg, id); ok {
		return p, nil
	}
	return mcpwire.DecodeListReply(msg, id)
}

// readListMessage reads msg, one message of an event stream: reply
// reports whether it is the reply to the tools/list with the id (a message
// with that id and no method), and then p is its page, or err says why it
// has none. Read as decodeListReply reads: strictly, else encoding/json.
func readListMessage(msg, id []byte) (p mcpwire.Page, reply bool, err error) {
	if r, ok := readReply(msg); ok {
		if r.method || r.id == nil || !mcpwire.SameID(r.id, id) {
			return p, false, nil
		}
		if r.hasResult {
			return r.page, true, nil
		}
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method json.RawMessage `json:"method"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method != nil || !mcpwire.SameID(m.ID, id) {
		return p, false, nil
	}
	p, err = mcpwire.DecodeListReply(msg, id)
	return p, true, err
}

// readJSONListReply reads msg, the reply to the tools/list with the id,
// with the strict scanner; ok is false when it cannot tell.
func readJSONListReply(msg []byte, id []byte) (mcpwire.Page, bool) {
	r, ok := readReply(msg)
	if !ok || r.method || !r.hasResult || !mcpwire.SameID(r.id, id) {
		return mcpwire.Page{}, false
	}
	return r.page, true
}

// Keys of a tools/list reply, per level, for the scanner: a key equal to
// one of them under case folding, or twice, ends the fast read.
var (
	replyKeys  = []string{"id", "result", "error", "method"}
	resultKeys = []string{"tools", "nextCursor", "ttlMs"}
	toolKeys   = []string{"name"}
)

// reply is what readReply takes from a JSON-RPC message.
type reply struct {
	method    bool   // the message has a method: a request or notification
	id        []byte // the raw id, nil when absent
	hasResult bool
	page      mcpwire.Page
}

// readReply reads a JSON-RPC message in the strict subset whose error is
// absent or null and whose result, if any, is a tools/list page. ok is
// false for anything else.
func readReply(b []byte) (r reply, ok bool) {
	s := scanner{b: b}
	s.ws()
	ok = s.members(replyKeys, func(k int) bool {
		switch k {
		case 0:
			start := s.i
			if !s.value() {
				return false
			}
			r.id = b[start:s.i]
			return true
		case 1:
			r.hasResult = true
			return s.listPage(&r.page)
		case 2:
			return s.lit("null")
		case 3:
			r.method = true // a request or notification, not a reply
		}
		return s.value()
	})
	if !ok {
		return r, false
	}
	s.ws()
	return r, s.i == len(b)
}

// lit steps over the literal l (true, false or null) at s.i, if it is there.
func (s *scanner) lit(l string) bool {
	end, ok := literal(s.b, s.i, l) // (end is s.i when not)
	s.i = end
	return ok
}

// listPage reads a tools/list result object: tools an array of objects
// each with a string name, nextCursor a string or null, ttlMs an integer
// in int64 or null; every other value is skipped.
func (s *scanner) listPage(p *mcpwire.Page) bool {
	tools := false
	ok := s.members(resultKeys, func(k int) bool {
		switch k {
		case 0:
			tools = true
			return s.toolNames(p)
		case 1:
			if s.lit("null") {
				return true
			}
			var sp span
			if !s.capture(&sp) || sp.kind != kString {
				return false
			}
			var scratch [64]byte
			p.NextCursor = string(decoded(scratch[:0], s.b, sp))
			return true
		case 2:
			if s.lit("null") {
				return true
			}
			var sp span
			if !s.capture(&sp) || sp.kind != kInt {
				return false
			}
			n, _ := strconv.ParseInt(string(sp.raw(s.b)), 10, 64) // kInt: it fits
			p.TTLMs = &n
			return true
		}
		return s.value()
	})
	return ok && tools
}

// toolNames reads the tools array into p.Names.
func (s *scanner) toolNames(p *mcpwire.Page) bool {
	p.Names = make([]string, 0, 16)
	return s.elements('[', func() bool {
		var name span
		if !s.members(toolKeys, func(k int) bool {
			if k == 0 {
				return s.capture(&name) && name.kind == kString
			}
			return s.value()
		}) || name.kind != kString {
			return false
		}
		var scratch [128]byte
		p.Names = append(p.Names, string(decoded(scratch[:0], s.b, name)))
		return true
	})
}
