package toolguard

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// FuzzStdio sends fuzzed lines through the stdio guard to a line server
// that decodes them with encoding/json (as mcp-go does: case-insensitive
// keys, the last duplicate wins). Every line the guard did not answer
// reaches the server byte for byte and in order, and every line it answered
// is, to that decoder, a tools/call of exactly the name the guard rejected,
// for a tool the server does not have.
func FuzzStdio(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"echo"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","NAME":"echo"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e\u0063ho"}}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		"not json\n" + `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\r\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
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
		var rejected []string
		rig := newStdioRig(t, StdioOptions{OnReject: func(r *Rejection) { rejected = append(rejected, r.Name) }}, "echo", "get_weather")
		rig.handshake(t)
		const fence = `{"jsonrpc":"2.0","id":"fence","method":"ping"}` + "\n"
		rig.send(t, append(lines, fence)...)
		// The fake server answers nothing to ping: wait until it has read
		// the fence instead.
		waitFor(t, func() bool {
			got := rig.srv.received()
			return len(got) > 0 && got[len(got)-1] == fence
		})
		var read []string
		for _, l := range rig.srv.received()[2:] { // after the handshake
			if !strings.Contains(l, `"id":"`+string(rig.g.prefix)) && l != fence {
				read = append(read, l)
			}
		}
		// read must be lines less the answered ones, in order.
		var answered []string
		j := 0
		for _, l := range lines {
			if j < len(read) && read[j] == l {
				j++
				continue
			}
			answered = append(answered, l)
		}
		if j != len(read) {
			t.Fatalf("the server read lines the client did not send, or out of order:\nsent %q\nread %q", lines, read)
		}
		if len(answered) != len(rejected) {
			t.Fatalf("%d lines missing at the server, %d rejections:\nmissing %q", len(answered), len(rejected), answered)
		}
		for i, l := range answered {
			var m struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Method  string          `json:"method"`
				Params  struct {
					Name *string `json:"name"`
				} `json:"params"`
			}
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("rejected a line encoding/json cannot read: %q: %v", l, err)
			}
			if m.JSONRPC != "2.0" || m.Method != "tools/call" || len(m.ID) == 0 || string(m.ID) == "null" || m.Params.Name == nil {
				t.Fatalf("rejected a line that is not a tools/call to encoding/json: %q", l)
			}
			if *m.Params.Name != rejected[i] {
				t.Fatalf("the guard read %q, encoding/json %q: %q", rejected[i], *m.Params.Name, l)
			}
			if slices.Contains([]string{"echo", "get_weather"}, rejected[i]) {
				t.Fatalf("rejected a known tool: %q", l)
			}
		}
	})
}
