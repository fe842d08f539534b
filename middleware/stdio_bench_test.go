package toolguard

import (
	"fmt"
	"io"
	"testing"

	"github.com/toolguard/toolguard/internal/mcpwire"
)

// repeatReader yields line forever.
type repeatReader struct {
	line []byte
	off  int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.line[r.off:])
		n += c
		r.off = (r.off + c) % len(r.line)
	}
	return n, nil
}

// BenchmarkStdioKnownCall is the guard's own work on a known tools/call
// round trip: the call line read through Reader (recorded on the way) and
// the server's answer written through Writer, against a bare copy: the
// same reads and writes without the guard.
func BenchmarkStdioKnownCall(b *testing.B) {
	call := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Paris","units":"metric"}}}` + "\n")
	answer := []byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"Paris: 18°C, light rain, wind 12 km/h from the south-west"}]}}` + "\n")
	buf := make([]byte, 64<<10)
	b.Run("alone", func(b *testing.B) {
		in := &repeatReader{line: call}
		b.SetBytes(int64(len(call) + len(answer)))
		for range b.N {
			in.Read(buf[:len(call)])
			io.Discard.Write(answer)
		}
	})
	b.Run("guarded", func(b *testing.B) {
		var opts StdioOptions
		translated := countTranslations(&opts)
		g, err := NewStdio(&repeatReader{line: call}, io.Discard, opts)
		if err != nil {
			b.Fatal(err)
		}
		r, w := g.Reader(), g.Writer()
		defer r.Close()
		b.SetBytes(int64(len(call) + len(answer)))
		b.ReportAllocs()
		for range b.N {
			if n, err := r.Read(buf[:len(call)]); err != nil || n != len(call) {
				b.Fatalf("read %d, %v", n, err)
			}
			w.Write(answer)
		}
		if translated.Load() != 0 {
			b.Fatal("the guard answered a known call")
		}
	})
}

// callReader yields tools/call lines for name with ids 1, 2, 3, ..., at
// most one line per Read.
type callReader struct {
	name string
	id   int
	buf  []byte
}

func (r *callReader) Read(p []byte) (int, error) {
	if len(r.buf) == 0 {
		r.id++
		r.buf = fmt.Appendf(r.buf[:0], `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"city":"Paris"}}}`+"\n", r.id, r.name)
	}
	n := copy(p, r.buf)
	r.buf = r.buf[:copy(r.buf, r.buf[n:])]
	return n, nil
}

// BenchmarkStdioNotFoundWarmList is the guard's work on an unknown call
// after the client's tools/list: the server's not-found answer written
// through Writer becomes the guard's -32602 answer with the list kept,
// against writing the server's answer alone.
func BenchmarkStdioNotFoundWarmList(b *testing.B) {
	answer := func(id int) []byte {
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"MCP error -32602: Tool get_wether not found"}],"isError":true}}`+"\n", id)
	}
	buf := make([]byte, 64<<10)
	b.Run("alone", func(b *testing.B) {
		in := &callReader{name: "get_wether"}
		for i := range b.N {
			in.Read(buf)
			io.Discard.Write(answer(i + 1))
		}
	})
	b.Run("guarded", func(b *testing.B) {
		var opts StdioOptions
		translated := countTranslations(&opts)
		g, err := NewStdio(&callReader{name: "get_wether"}, io.Discard, opts)
		if err != nil {
			b.Fatal(err)
		}
		g.guard.seen.page("", "", "", listMark{}, mcpwire.Page{Names: []string{"get_weather", "search_docs"}})
		r, w := g.Reader(), g.Writer()
		defer r.Close()
		b.ReportAllocs()
		for i := range b.N {
			if _, err := r.Read(buf); err != nil {
				b.Fatal(err)
			}
			w.Write(answer(i + 1))
		}
		if translated.Load() != int64(b.N) {
			b.Fatalf("%d answers for %d calls", translated.Load(), b.N)
		}
	})
}

// BenchmarkStdioListRead is the guard's work on the client's tools/list
// of 1,000 tools: the request read through Reader and the server's answer
// written through Writer (read and kept on its way), against the same
// reads and writes without the guard.
func BenchmarkStdioListRead(b *testing.B) {
	list := []byte(`{"jsonrpc":"2.0","id":"l","method":"tools/list"}` + "\n")
	answer := []byte(`{"jsonrpc":"2.0","id":"l","result":{"tools":[`)
	for i := range 1000 {
		if i > 0 {
			answer = append(answer, ',')
		}
		answer = fmt.Appendf(answer, `{"name":"tool_%04d","description":"Tool number %d.","inputSchema":{"type":"object","properties":{"q":{"type":"string"}}}}`, i, i)
	}
	answer = append(answer, "]}}\n"...)
	buf := make([]byte, 64<<10)
	b.Run("alone", func(b *testing.B) {
		in := &repeatReader{line: list}
		b.SetBytes(int64(len(list) + len(answer)))
		for range b.N {
			in.Read(buf[:len(list)])
			io.Discard.Write(answer)
		}
	})
	b.Run("guarded", func(b *testing.B) {
		g, err := NewStdio(&repeatReader{line: list}, io.Discard, StdioOptions{})
		if err != nil {
			b.Fatal(err)
		}
		r, w := g.Reader(), g.Writer()
		defer r.Close()
		b.SetBytes(int64(len(list) + len(answer)))
		b.ReportAllocs()
		for range b.N {
			if n, err := r.Read(buf[:len(list)]); err != nil || n != len(list) {
				b.Fatalf("read %d, %v", n, err)
			}
			w.Write(answer)
		}
		if l := g.guard.seen.get(""); l == nil || len(l.sorted) != 1000 {
			b.Fatal("the list was not kept")
		}
	})
}
