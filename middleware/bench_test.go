package toolguard

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// reusableBody lets a benchmark send the same body many times without
// allocating per request, so allocs/op counts only the middleware's own.
type reusableBody struct {
	strings.Reader
	s string
}

func (b *reusableBody) Close() error { return nil }
func (b *reusableBody) reset()       { b.Reader.Reset(b.s) }

// drain is the next handler: it reads the body as an SDK would, into a
// fixed buffer.
type drain struct{ buf [4096]byte }

func (d *drain) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for {
		if _, err := r.Body.Read(d.buf[:]); err != nil {
			return
		}
	}
}

// discardWriter is a ResponseWriter that allocates nothing.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) WriteHeader(int)             {}

func benchRequest(b *testing.B, body string) (*http.Request, *reusableBody) {
	rb := &reusableBody{s: body}
	r := httptest.NewRequest("POST", "/mcp", nil)
	r.Body = rb
	r.ContentLength = int64(len(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Mcp-Session-Id", "3f1e0c9a-5b7d-4e2a-9c41-8d6f2b0a7e55")
	r.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	return r, rb
}

// Padded to 300 bytes, the size of a typical call.
var (
	bench300Call = pad(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Oslo","units":"metric","days":3,"detail":"%s"}}}`, 300)
	bench300List = pad(`{"jsonrpc":"2.0","id":42,"method":"tools/list","params":{"cursor":"%s"}}`, 300)
)

func pad(format string, n int) string {
	s := fmt.Sprintf(format, "")
	return fmt.Sprintf(format, strings.Repeat("x", n-len(s)))
}

func BenchmarkHandler(b *testing.B) {
	g := mustGuard(b, Options{})
	for _, c := range []struct{ name, body string }{
		{"tools-list", bench300List},
		{"known-call", bench300Call},
	} {
		for _, guarded := range []bool{false, true} {
			name := c.name + "/bare"
			var h http.Handler = &drain{}
			if guarded {
				name = c.name + "/guard"
				h = g.Handler(h)
			}
			b.Run(name, func(b *testing.B) {
				r, rb := benchRequest(b, c.body)
				w := &discardWriter{h: http.Header{}}
				b.ReportAllocs()
				b.SetBytes(int64(len(c.body)))
				for b.Loop() {
					rb.reset()
					h.ServeHTTP(w, r)
				}
			})
		}
	}
	b.Run("unknown-call/guard", func(b *testing.B) {
		body := strings.Replace(bench300Call, "get_weather", "get_wether", 1)
		h := g.Handler(&drain{})
		r, rb := benchRequest(b, body)
		w := &discardWriter{h: http.Header{}}
		b.ReportAllocs()
		for b.Loop() {
			rb.reset()
			clear(w.h)
			h.ServeHTTP(w, r)
		}
	})
}

// bigCall is a 1 MiB tools/call whose arguments hold a mix of strings,
// numbers and nested objects.
var bigCall = func() []byte {
	var sb strings.Builder
	sb.WriteString(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ingest","arguments":{"records":[`)
	for i := 0; sb.Len() < 1<<20-200; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"id":%d,"score":%d.%03d,"ok":true,"tags":["alpha","beta"],"text":"Lorem ipsum dolor sit amet, consectetur adipiscing elit \"quoted\" caf\u00e9 %d"}`, i, i%1000, i%997, i)
	}
	sb.WriteString(`]}}}`)
	return []byte(sb.String())
}()

func BenchmarkReader1MiB(b *testing.B) {
	b.Run("toolguard", func(b *testing.B) {
		b.SetBytes(int64(len(bigCall)))
		b.ReportAllocs()
		for b.Loop() {
			if m := readMessage(bigCall); !m.strict || m.name.kind != kString {
				b.Fatal("not read")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(bigCall)))
		b.ReportAllocs()
		for b.Loop() {
			var m struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Method  string          `json:"method"`
				Params  struct {
					Name string `json:"name"`
				} `json:"params"`
			}
			if err := json.Unmarshal(bigCall, &m); err != nil || m.Params.Name != "ingest" {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkReader1MiBPaired reads the same 1 MiB body with the strict reader
// and with encoding/json in every iteration and reports the ratio of their
// times, so a noisy, shared machine slows both sides alike, and the ratio of
// the fastest run of each.
//
//	go test -run '^$' -bench Reader1MiBPaired -count 6 .
func BenchmarkReader1MiBPaired(b *testing.B) { pairedReader(b, bigCall) }

// BenchmarkReaderShapes is BenchmarkReader1MiBPaired on bodies of one shape
// each: one long ASCII string, and records dense in short tokens.
//
//	go test -run '^$' -bench ReaderShapes -count 6 .
func BenchmarkReaderShapes(b *testing.B) {
	b.Run("long-string", func(b *testing.B) {
		pairedReader(b, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ingest","arguments":{"s":"`+
			strings.Repeat("Lorem ipsum dolor sit amet. ", 1<<20/28)+`"}}}`))
	})
	b.Run("dense-records", func(b *testing.B) {
		var sb strings.Builder
		sb.WriteString(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ingest","arguments":{"records":[`)
		for i := 0; sb.Len() < 1<<20-200; i++ {
			if i > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, `{"id":%d,"score":%d.%03d,"ok":true,"tags":["alpha","beta"]}`, i, i%1000, i%997)
		}
		sb.WriteString(`]}}}`)
		pairedReader(b, []byte(sb.String()))
	})
}

func pairedReader(b *testing.B, body []byte) {
	type minimal struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	var tr, tj time.Duration
	minR, minJ := time.Duration(1<<62), time.Duration(1<<62)
	first := false
	for b.Loop() {
		// Each side goes first every other time.
		var m message
		var v minimal
		var err error
		readerSide := func() {
			start := time.Now()
			m = readMessage(body)
			d := time.Since(start)
			tr += d
			minR = min(minR, d)
		}
		jsonSide := func() {
			start := time.Now()
			err = json.Unmarshal(body, &v)
			d := time.Since(start)
			tj += d
			minJ = min(minJ, d)
		}
		if first = !first; first {
			readerSide()
			jsonSide()
		} else {
			jsonSide()
			readerSide()
		}
		if !m.strict || m.name.kind != kString || err != nil || v.Params.Name != "ingest" {
			b.Fatal("not read", err)
		}
	}
	b.ReportMetric(float64(tr.Nanoseconds())/float64(b.N), "reader-ns/op")
	b.ReportMetric(float64(tj.Nanoseconds())/float64(b.N), "json-ns/op")
	b.ReportMetric(float64(minR.Nanoseconds())/float64(len(body)), "reader-fastest-ns/byte")
	b.ReportMetric(float64(minJ.Nanoseconds())/float64(len(body)), "json-fastest-ns/byte")
	b.ReportMetric(float64(tj)/float64(tr), "json/reader")
	// The fastest run of each side is the one least disturbed by other
	// work on a shared machine.
	b.ReportMetric(float64(minJ)/float64(minR), "json/reader-fastest")
}
