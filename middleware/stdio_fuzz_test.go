package toolguard

import (
	"bufio"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"
)

// lineSession runs lines through a lineServer with tools echo and
// get_weather, alone or behind the guard, and returns the lines the client
// read, the client lines the server read (the guard's own requests left
// out), and the guard's answers.
func lineSession(t *testing.T, guarded bool, lines []string) (out, read []string, rejected []*Rejection) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := &lineServer{tools: []string{"echo", "get_weather"}, done: make(chan struct{})}
	var g *Stdio
	var r io.Reader = inR
	var w io.WriteCloser = outW
	if guarded {
		var err error
		g, err = NewStdio(inR, outW, StdioOptions{OnReject: func(rej *Rejection) { rejected = append(rejected, rej) }})
		if err != nil {
			t.Fatal(err)
		}
		r, w = g.Reader(), g.Writer()
	}
	go func() {
		srv.serve(r, w)
		w.Close()
	}()
	done := make(chan struct{})
	go func() {
		defer close(done)
		br := bufio.NewReader(outR)
		for {
			l, err := br.ReadString('\n')
			if l != "" {
				out = append(out, l)
			}
			if err != nil {
				return
			}
		}
	}()
	for _, l := range lines {
		io.WriteString(inW, l)
	}
	inW.Close()
	<-srv.done
	<-done
	for _, l := range srv.received() {
		if g == nil || !strings.Contains(l, `"id":"`+string(g.prefix)) {
			read = append(read, l)
		}
	}
	return out, read, rejected
}

// FuzzStdioAgainstTheServerAlone sends fuzzed lines to a line server
// (encoding/json: case-insensitive keys, the last duplicate wins) alone and
// behind the stdio guard. The server reads the same lines, byte for byte
// and in order; the client reads the same lines, except that the server's
// own not-found answers may be replaced, each by the guard's -32602 answer
// to the same id naming the same tool, and never for a tool the server
// has.
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
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<14 {
			return
		}
		var lines []string
		for _, l := range strings.SplitAfter(string(data), "\n") {
			if l != "" {
				if !strings.HasSuffix(l, "\n") {
					l += "\n"
				}
				lines = append(lines, l)
			}
		}
		aloneOut, aloneRead, _ := lineSession(t, false, lines)
		out, read, rejected := lineSession(t, true, lines)
		if !slices.Equal(read, aloneRead) || !slices.Equal(read, lines) {
			t.Fatalf("the server read\n%q\nalone\n%q\nsent\n%q", read, aloneRead, lines)
		}
		// Match the lines the client read; what is left alone must be the
		// server's not-found answers, and guarded the guard's answers.
		rest := slices.Clone(out)
		var replaced []string
		for _, l := range aloneOut {
			if i := slices.Index(rest, l); i >= 0 {
				rest = slices.Delete(rest, i, i+1)
				continue
			}
			replaced = append(replaced, l)
		}
		if len(replaced) != len(rest) || len(rest) != len(rejected) {
			t.Fatalf("alone the client read %q more, guarded %q more, %d answers", replaced, rest, len(rejected))
		}
		for i, l := range replaced {
			var alone struct {
				ID     json.RawMessage
				Result struct {
					Content []struct{ Text string }
				}
			}
			if err := json.Unmarshal([]byte(l), &alone); err != nil || len(alone.Result.Content) != 1 {
				t.Fatalf("replaced %q", l)
			}
			name, ok := strings.CutPrefix(alone.Result.Content[0].Text, "MCP error -32602: Tool ")
			name, ok2 := strings.CutSuffix(name, " not found")
			if !ok || !ok2 {
				t.Fatalf("replaced an answer that is not the server's not-found answer: %q", l)
			}
			if slices.Contains([]string{"echo", "get_weather"}, name) {
				t.Fatalf("replaced the answer to a tool the server has: %q", l)
			}
			var guarded struct {
				ID    json.RawMessage
				Error struct {
					Code    int
					Message string
				}
			}
			j := slices.IndexFunc(rest, func(g string) bool {
				return json.Unmarshal([]byte(g), &guarded) == nil && string(guarded.ID) == string(alone.ID)
			})
			if j < 0 || guarded.Error.Code != -32602 {
				t.Fatalf("no -32602 answer to %s in %q", alone.ID, rest)
			}
			if rejected[i].Name != name && !slices.ContainsFunc(rejected, func(r *Rejection) bool { return r.Name == name }) {
				t.Fatalf("the guard named %q, the server %q", rejected[i].Name, name)
			}
			rest = slices.Delete(rest, j, j+1)
		}
	})
}
