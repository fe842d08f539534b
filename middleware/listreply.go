// Reading the server's tools/list replies, names only, with the strict
// reader's scanner.

package toolguard

import (
	"strconv"

	"github.com/toolguard/toolguard/internal/mcpwire"
)

// readListReply reads msg, a message that may be the reply to the
// tools/list with the given id (its JSON bytes, as the caller sent it),
// and reports whether it is that reply's page (ok). A request or
// notification is passed over; any other message ends the search for the
// reply in an event stream (done): clients match ids more loosely than the
// guard ("1" or 1.0 answers 1 for the TypeScript SDK), and cannot be told
// apart from a reply outside the strict subset, so no later message is
// ever taken for the reply.
//
// Names only: the scanner takes the id, result.tools[].name,
// result.nextCursor and result.ttlMs and steps over every other value
// (input and output schemas, titles, annotations) without materializing
// it. Only a reply every client reads alike is a page: inside the strict
// subset, with jsonrpc "2.0", the id and a result, and no other member
// (not even "error": null, which the TypeScript SDK refuses). Where the
// scanner reads a page, encoding/json reads the same (FuzzListReply).
func readListReply(msg, id []byte) (p mcpwire.Page, done, ok bool) {
	r, strict := readEnvelope(msg, func(s *scanner) bool { return s.listPage(&p) }, nil)
	if !endsReading(r, strict) {
		return p, false, false
	}
	return p, true, strict && r.pageFor(msg, id)
}

// endsReading reports whether a message readEnvelope read as r (ok: in the
// strict subset) ends the reading of a stream for a request's answer: any
// but a request or a notification is the answer, or read apart by some
// client.
func endsReading(r envelope, ok bool) bool { return !ok || r.method.kind == absent }

// Keys of a tools/list result and of a tool, for the scanner: a key equal
// to one of them under case folding, or twice, ends the read.
var (
	resultKeys = []string{"tools", "nextCursor", "ttlMs"}
	toolKeys   = []string{"name"}
)

// pageFor reports whether r, read from msg, is a reply to the request id
// that every client reads alike, its result a page.
func (r *envelope) pageFor(msg, id []byte) bool {
	return r.method.kind == absent && r.version && r.hasResult && !r.hasError && !r.other && mcpwire.SameID(r.id.raw(msg), id)
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
