package toolguard

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolguard/toolguard/internal/mcpwire"
)

// pingServer answers a ping the way it is told to and records what it got.
type pingServer struct {
	reply   func(w http.ResponseWriter, id json.RawMessage)
	body    []byte
	header  http.Header
	host    string
	answers int
}

func (s *pingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.body, _ = io.ReadAll(r.Body)
	s.header, s.host = r.Header.Clone(), r.Host
	s.answers++
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(s.body, &m) != nil || m.Method != "ping" {
		http.Error(w, "not a ping", http.StatusBadRequest)
		return
	}
	s.reply(w, m.ID)
}

func jsonReply(body string) func(http.ResponseWriter, json.RawMessage) {
	return func(w http.ResponseWriter, id json.RawMessage) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, body, id)
	}
}

func TestPing(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply func(http.ResponseWriter, json.RawMessage)
		err   string // "" for success
	}{
		{"result", jsonReply(`{"jsonrpc":"2.0","id":%s,"result":{}}`), ""},
		{"result in an event stream", func(w http.ResponseWriter, id json.RawMessage) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n")
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}\n\n", id)
		}, ""},
		{"JSON-RPC error", jsonReply(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32600,"message":"refused"}}`), "JSON-RPC error -32600: refused"},
		{"null result", jsonReply(`{"jsonrpc":"2.0","id":%s,"result":null}`), "no result"},
		{"another id", func(w http.ResponseWriter, _ json.RawMessage) {
			jsonReply(`{"jsonrpc":"2.0","id":%s,"result":{}}`)(w, json.RawMessage(`"other"`))
		}, "another id"},
		{"HTTP refusal", func(w http.ResponseWriter, _ json.RawMessage) {
			http.Error(w, "Invalid session ID", http.StatusNotFound)
		}, `HTTP 404: "Invalid session ID"`},
		{"empty stream", func(w http.ResponseWriter, _ json.RawMessage) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
		}, "no reply in the event stream"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &pingServer{reply: tc.reply}
			d, err := Discover(s, DiscoverOptions{})
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest(http.MethodPost, "http://mcp.example/mcp", strings.NewReader(call("1", `"x"`)))
			r.Header.Set("Mcp-Session-Id", "s-1")
			r.Header.Set("Authorization", "Bearer t")
			r.Header.Set("Content-Type", "application/json")
			err = d.Ping(r)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("Ping: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("Ping: %v, want an error with %q", err, tc.err)
			}
			if s.answers != 1 {
				t.Fatalf("the server got %d requests, want 1", s.answers)
			}
			// Asked as the caller: its session, credentials and Host.
			if got := s.header.Get("Mcp-Session-Id"); got != "s-1" {
				t.Errorf("Mcp-Session-Id %q, want s-1", got)
			}
			if got := s.header.Get("Authorization"); got != "Bearer t" {
				t.Errorf("Authorization %q, want the caller's", got)
			}
			if s.host != "mcp.example" {
				t.Errorf("Host %q, want the caller's", s.host)
			}
		})
	}
}

// A ping carries the call's _meta (what the server would have got with
// the call), and a 2026-07-28 caller is never pinged: the method was
// removed in that version.
func TestPingAsTheCall(t *testing.T) {
	s := &pingServer{reply: jsonReply(`{"jsonrpc":"2.0","id":%s,"result":{}}`)}
	d, err := Discover(s, DiscoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The guard hands its tool set the request with the call in its
	// context, as it does for a tool set's List.
	var pinged error
	tools := ToolsFunc(func(r *http.Request) ([]string, error) {
		pinged = d.Ping(r)
		return []string{"other"}, nil
	})
	h := mustGuard(t, Options{Tools: tools}).Handler(http.NotFoundHandler())

	serve(h, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"trace":"t1","progressToken":7}}}`, nil)
	if pinged != nil {
		t.Fatalf("Ping: %v", pinged)
	}
	var m struct {
		Params struct {
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	if err := json.Unmarshal(s.body, &m); err != nil {
		t.Fatal(err)
	}
	if m.Params.Meta["trace"] != "t1" {
		t.Errorf("ping _meta %v, want the call's", m.Params.Meta)
	}

	s.answers = 0
	modern := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":` +
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	serve(h, modern, http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"x"}})
	if pinged == nil || !strings.Contains(pinged.Error(), "2026-07-28") {
		t.Errorf("Ping of a 2026-07-28 caller: %v, want the no-ping error", pinged)
	}
	if s.answers != 0 {
		t.Errorf("a 2026-07-28 caller was pinged (%d requests)", s.answers)
	}
}

// The strict read of a ping reply answers only where encoding/json agrees:
// whenever it finds a result for the id, mcpwire.Result does too.
func FuzzPingReply(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":"toolguard-ping-1","result":{}}`,
		`{"jsonrpc":"2.0","id":"toolguard-ping-1","result":null}`,
		`{"jsonrpc":"2.0","id":"toolguard-ping-1","result":{},"error":null}`,
		`{"jsonrpc":"2.0","id":"toolguard-ping-1","error":{"code":-32600,"message":"no"}}`,
		`{"jsonrpc":"2.0","id":"toolguard-ping-1","result":{},"Result":null}`,
		`{"jsonrpc":"2.0","id":"toolguard-ping-1","result":{"_meta":{"a":[1,2,{"b":"\u00e9"}]}}}`,
		`{"jsonrpc":"2.0","ID":"toolguard-ping-1","result":{}}`,
		`{"id":"toolguard-ping-1","result":[],"id":"x"}`,
		` {"id":"toolguard-ping-1","result":0} `,
	} {
		f.Add(s)
	}
	anyResult := func(s *scanner, _ *reply) bool { return !s.null() && s.value() }
	f.Fuzz(func(t *testing.T, body string) {
		const id = "toolguard-ping-1"
		r, ok := readReplyWith([]byte(body), anyResult)
		if !ok || !r.hasResult || string(r.id) != `"`+id+`"` {
			return
		}
		if _, err := mcpwire.Result([]byte(body), id); err != nil {
			t.Fatalf("the strict read found a result, encoding/json says %v: %q", err, body)
		}
	})
}
