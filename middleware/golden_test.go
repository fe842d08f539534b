package toolguard

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The guard's wire answers, one golden transcript per answer shape and
// transport, in testdata/golden/*.txtar: what the client sent, what the
// server answered (for answers after the server), and what the client
// got. Regenerate with
//
//	go test -run Golden -update .
var update = flag.Bool("update", false, "rewrite the golden transcripts in testdata/golden")

// A transcript is a txtar archive: a comment, then files, each introduced
// by a line "-- name --".
type transcript struct {
	comment string
	files   []txtarFile
}

type txtarFile struct {
	name string
	data string
}

func (tr transcript) format() []byte {
	var b bytes.Buffer
	b.WriteString(tr.comment)
	for _, f := range tr.files {
		fmt.Fprintf(&b, "-- %s --\n%s", f.name, f.data)
		if !strings.HasSuffix(f.data, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

func parseTranscript(data []byte) transcript {
	var tr transcript
	lines := strings.SplitAfter(string(data), "\n")
	cur := -1
	for _, l := range lines {
		if name, ok := strings.CutPrefix(strings.TrimRight(l, "\n"), "-- "); ok && strings.HasSuffix(name, " --") {
			tr.files = append(tr.files, txtarFile{name: strings.TrimSuffix(name, " --")})
			cur = len(tr.files) - 1
			continue
		}
		if cur < 0 {
			tr.comment += l
		} else {
			tr.files[cur].data += l
		}
	}
	return tr
}

// httpExchange renders a request or an answer: the first line, the
// headers that matter, a blank line, the body.
func httpText(first string, h http.Header, body string) string {
	var b strings.Builder
	b.WriteString(first + "\n")
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range h[k] {
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		}
	}
	b.WriteString("\n" + body)
	return b.String()
}

// goldenServer answers a tools/call with a and tools/list with two tools,
// as mcp-go would.
func goldenServer(a serverAnswer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), `"tools/list"`) {
			w.Header().Set("Content-Type", "application/json")
			id := between(string(body), `"id":`, `,`)
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{"tools":[{"name":"get_forecast"},{"name":"get_weather"}]}}`+"\n")
			return
		}
		w.Header().Set("Content-Type", a.contentType)
		w.WriteHeader(a.status)
		io.WriteString(w, a.body)
	})
}

func between(s, from, to string) string {
	_, rest, _ := strings.Cut(s, from)
	v, _, _ := strings.Cut(rest, to)
	return v
}

const (
	goldenCall       = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_wether","arguments":{}}}`
	goldenModernCall = `{"jsonrpc":"2.0","id":"m-1","method":"tools/call","params":{"name":"get_wether","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
)

var (
	jsonAccept   = http.Header{"Accept": {"application/json, text/event-stream"}}
	streamAccept = http.Header{"Accept": {"text/event-stream"}}
	modernHdr    = http.Header{"Accept": {"application/json, text/event-stream"}, "Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"get_wether"}}
)

type goldenHTTP struct {
	name, comment string
	opts          Options
	body          string
	header        http.Header
	server        *serverAnswer // nil: answered before the server
}

// serverAnswer is the server's answer to the call.
type serverAnswer struct {
	status            int
	contentType, body string
}

func goldenHTTPCases() []goldenHTTP {
	mcpgoNotFound := `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"tool 'get_wether' not found: tool not found"}}` + "\n"
	modernNotFound := `{"jsonrpc":"2.0","id":"m-1","error":{"code":-32602,"message":"unknown tool \"get_wether\""}}` + "\n"
	tsV1 := `{"result":{"content":[{"type":"text","text":"MCP error -32602: Tool get_wether not found"}],"isError":true},"jsonrpc":"2.0","id":1}`
	stream := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n" +
		"id: ev-7\nevent: message\ndata: " + strings.TrimSpace(mcpgoNotFound) + "\n\n"
	unsureTools := unsure{names: []string{"get_weather", "get_forecast"}}
	unlisted := unsure{} // the caller has not listed its tools
	mismatch := modernHdr.Clone()
	mismatch["Mcp-Name"] = []string{"other"}
	return []goldenHTTP{
		{name: "before-json-2025", comment: "Answered before the server (StaticTools), 2025 era, JSON.\n",
			opts: Options{Tools: weatherTools}, body: goldenCall, header: jsonAccept},
		{name: "accept-one-2025", comment: "An Accept that takes only an event stream: go-sdk (400) and the TypeScript SDKs (406) refuse it\nbefore the lookup, so the call goes to the server, whose refusal passes.\n",
			opts: Options{Tools: weatherTools}, body: goldenCall, header: streamAccept,
			server: &serverAnswer{400, "text/plain; charset=utf-8", "Accept must contain both 'application/json' and 'text/event-stream'\n"}},
		{name: "before-json-2026", comment: "Answered before the server, 2026-07-28: HTTP 400, as mcp-go and go-sdk.\n",
			opts: Options{Tools: weatherTools}, body: goldenModernCall, header: modernHdr},
		{name: "before-header-mismatch-2026", comment: "AnswerHeaderMismatch: the spec's -32020 to an Mcp-Name that does not match the body.\n",
			opts: Options{Tools: weatherTools, AnswerHeaderMismatch: true}, body: goldenModernCall, header: mismatch},
		{name: "before-capped", comment: "ToolListLimit cuts the list and says so.\n",
			opts: Options{Tools: weatherTools, ToolListLimit: 2}, body: goldenCall, header: jsonAccept},
		{name: "after-json-2025", comment: "mcp-go's own not-found answer, translated (HTTP 200 kept).\n",
			opts: Options{Tools: unsureTools}, body: goldenCall, header: jsonAccept, server: &serverAnswer{200, "application/json", mcpgoNotFound}},
		{name: "after-json-2026", comment: "go-sdk's own not-found answer to a 2026-07-28 call, translated (HTTP 400 kept).\n",
			opts: Options{Tools: unsureTools}, body: goldenModernCall, header: modernHdr, server: &serverAnswer{400, "application/json", modernNotFound}},
		{name: "after-sse-2025", comment: "An event stream: the progress event passes, the not-found event is replaced, keeping its id.\n",
			opts: Options{Tools: unsureTools}, body: goldenCall, header: jsonAccept, server: &serverAnswer{200, "text/event-stream", stream}},
		{name: "after-sse-2026", comment: "A 2026-07-28 call answered not found in an event stream (HTTP 200), translated in the stream.\n",
			opts: Options{Tools: unsureTools}, body: goldenModernCall, header: modernHdr, server: &serverAnswer{200, "text/event-stream", "event: message\ndata: " + strings.TrimSpace(modernNotFound) + "\n\n"}},
		{name: "after-iserror-2025", comment: "The TypeScript SDK v1's isError not-found answer, translated.\n",
			opts: Options{Tools: unsureTools}, body: goldenCall, header: jsonAccept, server: &serverAnswer{200, "application/json", tsV1}},
		{name: "after-without-list", comment: "A call before the caller listed its tools: the answer goes out without data.\n",
			opts: Options{Tools: unlisted}, body: goldenCall, header: jsonAccept, server: &serverAnswer{200, "application/json", mcpgoNotFound}},
	}
}

func TestGoldenHTTP(t *testing.T) {
	for _, tc := range goldenHTTPCases() {
		t.Run(tc.name, func(t *testing.T) {
			g, err := New(tc.opts) // the default message, as users get it
			if err != nil {
				t.Fatal(err)
			}
			var files []txtarFile
			if u, ok := tc.opts.Tools.(unsure); ok && u.names != nil {
				// The caller lists its tools first, as clients do.
				lr := listRequest(tc.header)
				lb, _ := io.ReadAll(lr.Body)
				lr.Body = io.NopCloser(bytes.NewReader(lb))
				reply := listReply(`"l-1"`, u.names...)
				w := httptest.NewRecorder()
				g.Handler(answering(200, "application/json", reply)).ServeHTTP(w, lr)
				if w.Body.String() != reply {
					t.Fatalf("the list reached the caller as %q", w.Body)
				}
				files = append(files, txtarFile{"listed", string(lb) + "\n" + reply + "\n"})
			}
			next := http.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Error("the request reached the server") }))
			if tc.server != nil {
				next = goldenServer(*tc.server)
			}
			r := newRequest("POST", tc.body, tc.header)
			w := httptest.NewRecorder()
			g.Handler(next).ServeHTTP(w, r)
			reqHdr := http.Header{}
			for k, v := range r.Header {
				reqHdr[k] = v
			}
			files = append(files, txtarFile{"request", httpText("POST /mcp", reqHdr, tc.body+"\n")})
			if a := tc.server; a != nil {
				files = append(files, txtarFile{"server", httpText(fmt.Sprint(a.status), http.Header{"Content-Type": {a.contentType}}, a.body)})
			}
			ans := http.Header{}
			for _, k := range []string{"Content-Type", "Content-Length", "Cache-Control"} {
				if v := w.Header().Values(k); len(v) > 0 {
					ans[k] = v
				}
			}
			files = append(files, txtarFile{"answer", httpText(fmt.Sprint(w.Code), ans, w.Body.String()+"\n")})
			checkGolden(t, tc.name, transcript{comment: tc.comment, files: files})
		})
	}
}

// TestGoldenStdio: the stdio guard's answers, line by line: the client's
// lines after the handshake, the server's lines in answer to them, and the
// lines the client got.
func TestGoldenStdio(t *testing.T) {
	listed := `{"jsonrpc":"2.0","id":"l1","method":"tools/list"}` + "\n"
	modernMeta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	modernList := `{"jsonrpc":"2.0","id":"l1","method":"tools/list","params":{` + modernMeta + `}}` + "\n"
	for _, tc := range []struct {
		name, comment string
		lines         []string
	}{
		{"stdio-2025", "The client lists the tools, then calls an unknown one: the TypeScript SDK v1's isError\nnot-found line is translated, with the list the server gave the client.\n",
			[]string{listed, lineCall("1", "get_wether")}},
		{"stdio-2026", "A 2026-07-28 client lists the tools, then calls an unknown one with the same _meta:\nthe list read with that _meta is shown.\n",
			[]string{modernList, goldenModernCall + "\n"}},
		{"stdio-without-list", "A call before any tools/list: the answer goes out without data.\n",
			[]string{lineCall("1", "get_wether")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rig := newStdioRigAsIs(t, StdioOptions{}, &lineServer{}, "get_forecast", "get_weather") // the default message
			rig.handshake(t)
			from := len(rig.srv.written())
			rig.send(t, tc.lines...)
			var got []string
			for range tc.lines {
				got = append(got, rig.next(t))
			}
			checkGolden(t, tc.name, transcript{comment: tc.comment, files: []txtarFile{
				{"client", strings.Join(tc.lines, "")},
				{"server", strings.Join(rig.srv.written()[from:], "")},
				{"answer", strings.Join(got, "")},
			}})
		})
	}
}

func checkGolden(t *testing.T, name string, tr transcript) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".txtar")
	got := tr.format()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run Golden -update . writes it)", err)
	}
	if !bytes.Equal(got, want) {
		w := parseTranscript(want)
		for i, f := range tr.files {
			if i >= len(w.files) || w.files[i] != f {
				t.Errorf("%s: file %q differs\ngot:\n%s\nwant:\n%v", path, f.name, f.data, w.files)
			}
		}
		if len(w.files) != len(tr.files) || w.comment != tr.comment {
			t.Errorf("%s: transcript differs\ngot:\n%s\nwant:\n%s", path, got, want)
		}
	}
}
