package toolguard

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/toolguard/toolguard/internal/fixture"
)

// fuzzTools are the line server's tools in FuzzStdioAgainstTheServerAlone.
var fuzzTools = []string{"echo", "get_weather"}

// FuzzStdioAgainstTheServerAlone sends fuzzed client bytes through the
// stdio guard to a line server (encoding/json: case-insensitive keys, the
// last duplicate wins), with a tap on each side of the guard, and checks
// it against what the server alone read and wrote:
//   - the server reads exactly the client's bytes;
//   - the client reads every server line as written, in order, except the
//     server's own not-found answers to a call (the line server's
//     isError "MCP error -32602: Tool X not found", never for a tool it
//     has), each replaced where it stood by the guard's -32602 answer
//     naming the same id and tool, one per rejection;
//   - such an answer's data.availableTools, when there is one, is the list
//     the server gave the client (all its tools) without the called name.
func FuzzStdioAgainstTheServerAlone(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"echo"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","NAME":"echo"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e\u0063ho"}}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		"not json\n" + `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`{"jsonrpc":"2.0","id":5,"method":"ping","params":{"a":[` + "\n" + `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}` + "\n]}}",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}` + "\n" + `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"needs_elicitation"}}`,
		`{"jsonrpc":"2.0","id":"l","method":"tools/list"}` + "\n" + `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo2"}}`,
		`{"jsonrpc":"2.0","id":"l","method":"tools/list"}` + "\n" + `{"jsonrpc":"2.0","id":"l","method":"tools/call","params":{"name":"l"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"1"}}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":1}}}` + "\n" +
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":2}}}` + "\n" +
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n" + `{"jsonrpc":"2.0","id":0,"method":"initialize"}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}` + "\n" + `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_weather "}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<14 {
			return
		}
		// All on this goroutine: the server reads the guard's Reader to the
		// end, answering as it reads, through taps on both sides.
		var clientOut fixture.SyncBuffer
		opts := StdioOptions{BareMessage: true}
		translated := countTranslations(&opts)
		g, err := NewStdio(bytes.NewReader(data), &clientOut, opts)
		if err != nil {
			t.Fatal(err)
		}
		var heard, serverOut bytes.Buffer
		srv := &lineServer{tools: fuzzTools, done: make(chan struct{})}
		srv.serve(io.TeeReader(g.Reader(), &heard), io.MultiWriter(g.Writer(), &serverOut))
		if err := g.Writer().Close(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(heard.Bytes(), data) {
			t.Fatalf("the server read\n%q\nthe client sent\n%q", heard.Bytes(), data)
		}
		wrote := strings.SplitAfter(serverOut.String(), "\n")
		read := strings.SplitAfter(clientOut.String(), "\n")
		if len(wrote) != len(read) {
			t.Fatalf("the server wrote %d lines, the client read %d:\n%q\n%q", len(wrote), len(read), wrote, read)
		}
		var replaced int64
		for i := range wrote {
			if wrote[i] == read[i] {
				continue
			}
			replaced++
			var alone struct {
				ID     json.RawMessage
				Result struct {
					Content []struct{ Text string }
				}
			}
			if err := json.Unmarshal([]byte(wrote[i]), &alone); err != nil || len(alone.Result.Content) != 1 {
				t.Fatalf("replaced %q with %q", wrote[i], read[i])
			}
			name, ok := strings.CutPrefix(alone.Result.Content[0].Text, "MCP error -32602: Tool ")
			name, ok2 := strings.CutSuffix(name, " not found")
			if !ok || !ok2 {
				t.Fatalf("replaced an answer that is not the server's not-found answer: %q", wrote[i])
			}
			if slices.Contains(fuzzTools, name) {
				t.Fatalf("replaced the answer to a tool the server has: %q", wrote[i])
			}
			var guarded guardAnswer
			if err := json.Unmarshal([]byte(read[i]), &guarded); err != nil || !strings.HasSuffix(read[i], "}\n") {
				t.Fatalf("the guard's answer is not one line of JSON: %q", read[i])
			}
			if !bytes.Equal(guarded.ID, alone.ID) || guarded.Error.Code != -32602 {
				t.Fatalf("the server answered %s, the guard %s", wrote[i], read[i])
			}
			if msg := "Unknown tool: " + name; guarded.Error.Message != msg && len(name) <= maxNameLen {
				t.Fatalf("the guard answered %q for %q", guarded.Error.Message, name)
			}
			if d := guarded.Error.Data; d != nil && d.AvailableTools != nil && !slices.Equal(d.AvailableTools, fuzzTools) {
				t.Fatalf("availableTools %q, the server listed %q, the call named %q", d.AvailableTools, fuzzTools, name)
			}
		}
		if n := translated.Load(); int64(replaced) != n {
			t.Fatalf("%d lines replaced, %d rejections", replaced, n)
		}
	})
}
