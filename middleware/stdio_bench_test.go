package toolguard

import (
	"io"
	"testing"
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
// round trip: the call line read through Reader and the server's answer
// written through Writer, against the same reads and writes without it.
func BenchmarkStdioKnownCall(b *testing.B) {
	call := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Paris","units":"metric"}}}` + "\n")
	answer := []byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"Paris: 18°C, light rain, wind 12 km/h from the south-west"}]}}` + "\n")
	buf := make([]byte, 64<<10)
	b.Run("alone", func(b *testing.B) {
		in := &repeatReader{line: call}
		b.SetBytes(int64(len(call) + len(answer)))
		for range b.N {
			// The server's bufio.Reader reads whole buffers; one line a
			// read is the guard's rhythm, so the baseline reads that much.
			in.Read(buf[:len(call)])
			io.Discard.Write(answer)
		}
	})
	b.Run("guarded", func(b *testing.B) {
		g, err := NewStdio(&repeatReader{line: call}, io.Discard, StdioOptions{})
		if err != nil {
			b.Fatal(err)
		}
		g.hs = hsReady
		g.lists[""] = map[string]struct{}{"get_weather": {}, "search_docs": {}}
		r, w := g.Reader(), g.Writer()
		b.SetBytes(int64(len(call) + len(answer)))
		b.ReportAllocs()
		for range b.N {
			if n, err := r.Read(buf); err != nil || n != len(call) {
				b.Fatalf("read %d, %v", n, err)
			}
			w.Write(answer)
		}
		if g.Fetches() != 0 {
			b.Fatal("the guard asked for a list")
		}
	})
}
