package toolguard

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/toolguard/toolguard/internal/fixture"
	"github.com/toolguard/toolguard/internal/mcpwire"
)

// findSSEReply returns the data of the event stream message whose id is
// id, read by encoding/json.
func findSSEReply(stream []byte, id []byte) []byte {
	for _, data := range mcpwire.EventMessages(stream) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method json.RawMessage `json:"method"`
		}
		if json.Unmarshal(data, &m) == nil && m.Method == nil && mcpwire.SameID(m.ID, id) {
			return data
		}
	}
	return nil
}

// decodeListReplyJSON reads the reply with encoding/json alone (the reader
// before issue 14): the message of the stream whose id is id, then the
// page.
func decodeListReplyJSON(msg []byte, stream bool, id []byte) (mcpwire.Page, error) {
	if stream {
		if msg = findSSEReply(msg, id); msg == nil {
			return mcpwire.Page{}, errors.New("no reply in the event stream")
		}
	}
	var reply struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	switch err := json.Unmarshal(msg, &reply); {
	case err != nil:
		return mcpwire.Page{}, err
	case !mcpwire.SameID(reply.ID, id):
		return mcpwire.Page{}, errors.New("the reply answers another id")
	case reply.Error != nil && string(reply.Error) != "null":
		return mcpwire.Page{}, errors.New("an error reply")
	case reply.Result == nil:
		return mcpwire.Page{}, errors.New("the reply has no result")
	}
	var res struct {
		Tools []struct {
			Name *string `json:"name"`
		} `json:"tools"`
		NextCursor *string `json:"nextCursor"`
		TTLMs      *int64  `json:"ttlMs"`
	}
	if err := json.Unmarshal(reply.Result, &res); err != nil {
		return mcpwire.Page{}, err
	} else if res.Tools == nil {
		return mcpwire.Page{}, errors.New("the result has no tools array")
	}
	p := mcpwire.Page{Names: make([]string, 0, len(res.Tools)), TTLMs: res.TTLMs}
	for _, t := range res.Tools {
		if t.Name == nil {
			return mcpwire.Page{}, errors.New("a listed tool has no name")
		}
		p.Names = append(p.Names, *t.Name)
	}
	if res.NextCursor != nil {
		p.NextCursor = *res.NextCursor
	}
	return p, nil
}

// readList reads msg as the guard reads a tools/list answer: a JSON reply,
// or an event stream whose first reply to the id counts, when no message
// before it is outside the strict subset.
func readList(msg []byte, stream bool, id []byte) (mcpwire.Page, bool) {
	if !stream {
		p, _, ok := readListReply(msg, id)
		return p, ok
	}
	for _, data := range mcpwire.EventMessages(msg) {
		if p, done, ok := readListReply(data, id); done {
			return p, ok
		}
	}
	return mcpwire.Page{}, false
}

func samePage(a, b mcpwire.Page) bool {
	return slices.Equal(a.Names, b.Names) && a.NextCursor == b.NextCursor &&
		(a.TTLMs == nil) == (b.TTLMs == nil) && (a.TTLMs == nil || *a.TTLMs == *b.TTLMs)
}

// checkListReply holds the guard's names-only reading of a tools/list
// answer (readList) to encoding/json (decodeListReplyJSON, the reader
// before issue 14), for msg as a JSON message and as an event stream:
// wherever the guard reads a page, encoding/json reads the same one. It
// returns whether the guard read a page, for each of the two.
func checkListReply(t *testing.T, msg []byte) (readJSON, readStream bool) {
	t.Helper()
	for _, stream := range []bool{false, true} {
		want, wantErr := decodeListReplyJSON(msg, stream, []byte(`"x"`))
		got, ok := readList(msg, stream, []byte(`"x"`))
		if ok && (wantErr != nil || !samePage(got, want)) {
			t.Fatalf("stream=%v %q: the guard reads %+v, encoding/json %+v, %v", stream, msg, got, want, wantErr)
		}
		if ok && !strictEnvelope(msg, stream) {
			t.Fatalf("stream=%v %q: a page kept from a reply the TypeScript SDK refuses", stream, msg)
		}
		if stream {
			readStream = ok
		} else {
			readJSON = ok
		}
	}
	return readJSON, readStream
}

// strictEnvelope reports whether the reply in msg (a stream's first
// message with the id "x") has exactly the members the TypeScript SDK
// allows a result reply, jsonrpc "2.0", id and result, read by
// encoding/json.
func strictEnvelope(msg []byte, stream bool) bool {
	if stream {
		msg = findSSEReply(msg, []byte(`"x"`))
	}
	var top map[string]json.RawMessage
	var version string
	return json.Unmarshal(msg, &top) == nil && len(top) == 3 && top["id"] != nil && top["result"] != nil &&
		json.Unmarshal(top["jsonrpc"], &version) == nil && version == "2.0"
}

// asEvents wraps msg as the data of an event stream message, after a
// notification, as a server streaming its reply sends it.
func asEvents(msg string) string {
	return "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\"}}\n\n" +
		"id: 1\nevent: message\ndata: " + msg + "\n\n"
}

var listReplySeeds = []string{
	`{"jsonrpc":"2.0","id":"x","result":{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"b"}],"nextCursor":"2","ttlMs":5}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"tools":[]}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"tools":[],"nextCursor":null,"ttlMs":null},"error":null}`,
	`{"jsonrpc":"2.0","id":"x","result":{"tools":[{"name":"\u0061\"\\\n\ud83d\ude00é"}],"nextCursor":"c\u0022"}}`,
	`{"jsonrpc":"2.0","id":"x","result":{}}`,
	`{"jsonrpc":"2.0","id":"x","result":null}`,
	`{"jsonrpc":"2.0","id":"x","result":{"tools":null}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"tools":[{"title":"t"}]}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"tools":[{"name":5}]}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"tools":[{"name":null}]}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"tools":[null]}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"tools":[{"name":"a","name":"b"}]}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"tools":[{"name":"a","Name":"b"}]}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"tools":[{"NAME":"a"}]}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"tools":[{"name":"a"}],"tools":[{}]}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"tools":[{"name":"a"}]},"result":{"nextCursor":"n"}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"toolſ":[{"name":"a"}]}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"tools":[{"n\u0061me":"a"}],"nextCurſor":"c"}}`,
	`{"jsonrpc":"2.0","id":"x","ID":"y","result":{"tools":[]}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"tools":[],"ttlMs":1.5}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"tools":[],"ttlMs":1e3}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"tools":[],"ttlMs":-0}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"tools":[],"ttlMs":99999999999999999999}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"tools":[],"nextCursor":5}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"tools":[{"name":"a","x":1e999}]}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"tools":[{"name":"a\xff"}]}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"tools":[{"name":"\ud800"}]}}`,
	`{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"no"}}`,
	`{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"no"},"result":{"tools":[]}}`,
	`{"jsonrpc":"2.0","id":"y","result":{"tools":[]}}`,
	`{"jsonrpc":"2.0","id":"\u0078","result":{"tools":[]}}`,
	`{"jsonrpc":"2.0","id": "x" ,"result":{"tools":[{"name":"a"}]}} `,
	`{"jsonrpc":"2.0","id":"x","result":{"tools":[{"name":"a"}]}}x`,
	`[{"jsonrpc":"2.0","id":"x","result":{"tools":[]}}]`,
	`not json`,
	``,
}

func TestListReply(t *testing.T) {
	for _, msg := range listReplySeeds {
		checkListReply(t, []byte(msg))
		checkListReply(t, []byte(asEvents(msg)))
	}
	// The replies servers send are read by the fast path, as JSON and as
	// events (otherwise it would silently never run).
	for _, msg := range []string{listReplySeeds[0], listReplySeeds[1], listReplySeeds[3], string(realisticList(50, "x"))} {
		if fastJSON, _ := checkListReply(t, []byte(msg)); !fastJSON {
			t.Errorf("%.80s...: not read by names", msg)
		}
		if _, fastStream := checkListReply(t, []byte(asEvents(msg))); !fastStream {
			t.Errorf("%.80s... as events: not read by names", msg)
		}
	}
	// A reply outside the strict subset, or one some client refuses (the
	// TypeScript SDK: "error" beside the result, any other member, a
	// jsonrpc other than "2.0"), keeps nothing, though encoding/json reads
	// a page in it (the last of two keys, any case): clients read it apart.
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":"x","result":{"tools":[{"name":"a"}]},"error":null}`,
		`{"jsonrpc":"2.0","id":"x","result":{"tools":[{"name":"a"}]},"x":1}`,
		`{"jsonrpc":"1.0","id":"x","result":{"tools":[{"name":"a"}]}}`,
		`{"id":"x","result":{"tools":[{"name":"a"}]}}`,
		`{"jsonrpc":"2.0","id":"x","result":{"tools":[{"name":"a","Name":"b"}]}}`,
		`{"jsonrpc":"2.0","id":"x","result":{"tools":[{"name":"a","name":"b"}]}}`,
		`{"jsonrpc":"2.0","id":"x","result":{"tools":[{"name":"\ud800"}]}}`,
		`{"jsonrpc":"2.0","id":"x","result":{"tools":[{"name":"a","x":1e999}]}}`,
	} {
		if _, err := decodeListReplyJSON([]byte(msg), false, []byte(`"x"`)); err != nil {
			t.Fatalf("%s: encoding/json refuses it (%v): the case shows nothing", msg, err)
		}
		for _, stream := range []bool{false, true} {
			in := msg
			if stream {
				in = asEvents(msg)
			}
			if p, ok := readList([]byte(in), stream, []byte(`"x"`)); ok {
				t.Errorf("stream=%v %s: kept %+v", stream, msg, p)
			}
		}
	}
	// In an event stream, the first message that is not a request or a
	// notification ends the reading, kept only if it is the reply: one
	// outside the subset could be the reply, read apart, and clients match
	// ids more loosely than the guard (the TypeScript SDK takes "1" and
	// 1.0 for 1).
	page := func(id string) string {
		return "data: {\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":{\"tools\":[{\"name\":\"b\"}]}}\n\n"
	}
	for _, first := range []string{
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"\\udc00\"}}\n\n",
		page(`"1"`), page(`1.0`), page(`2`),
		"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"a\"}]},\"error\":null}\n\n",
	} {
		if p, ok := readList([]byte(first+page(`1`)), true, []byte(`1`)); ok {
			t.Errorf("a page kept after %q: %+v", first, p)
		}
	}
	notification := "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\n"
	request := "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"roots/list\"}\n\n"
	if p, ok := readList([]byte(notification+request+page(`1`)), true, []byte(`1`)); !ok || !slices.Equal(p.Names, []string{"b"}) {
		t.Errorf("the reply after a notification and a request: %+v, %v", p, ok)
	}
}

func FuzzListReply(f *testing.F) {
	for _, s := range listReplySeeds {
		f.Add([]byte(s))
		f.Add([]byte(asEvents(s)))
	}
	f.Add(realisticList(3, "x"))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkListReply(t, b)
		if !strings.ContainsAny(string(b), "\r\n") {
			checkListReply(t, []byte(asEvents(string(b))))
		}
	})
}

// realisticList is a tools/list reply of n tools as servers write them:
// title, a description with escapes, an input schema with nested
// properties, enums, arrays and bounds, an output schema on every other
// tool, annotations and _meta.
func realisticList(n int, id string) []byte {
	var b []byte
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendQuote(b, id)
	b = append(b, `,"result":{"tools":[`...)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"name":"tool_%04d_%s","title":"Tool %d","description":"Looks up the \"%s\" records of a project.\nReturns at most `+
			`100 items per page; use the cursor for more. Dates are ISO 8601 (UTC) \u2014 e.g. 2026-11-30.",`, i, []string{"get", "list", "search", "update"}[i%4], i, []string{"get", "list", "search", "update"}[i%4])
		b = append(b, `"inputSchema":{"type":"object","properties":{"project":{"type":"string","description":"Project key, e.g. \"ABC\"","pattern":"^[A-Z]{2,10}$"},`+
			`"query":{"type":"string","description":"Free text","maxLength":500},"limit":{"type":"integer","minimum":1,"maximum":100,"default":20},`+
			`"sort":{"type":"string","enum":["created","updated","priority","relevance"]},"filters":{"type":"object","properties":{"status":{"type":"array",`+
			`"items":{"type":"string","enum":["open","closed","pending"]}},"assignee":{"type":["string","null"]},"since":{"type":"string","format":"date-time"}},`+
			`"additionalProperties":false},"cursor":{"type":"string"}},"required":["project"],"additionalProperties":false,"$schema":"https://json-schema.org/draft/2020-12/schema"},`...)
		if i%2 == 0 {
			b = append(b, `"outputSchema":{"type":"object","properties":{"items":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},`+
				`"score":{"type":"number"},"tags":{"type":"array","items":{"type":"string"}}},"required":["id"]}},"nextCursor":{"type":"string"}}},`...)
		}
		b = append(b, `"annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false},"_meta":{"example.com/version":3}}`...)
	}
	b = append(b, `],"nextCursor":"eyJwYWdlIjoyfQ=="}}`...)
	return b
}

// BenchmarkListReplyPaired reads a 1,000-tool tools/list reply with
// realistic schemas (1.22 MB) by names only and with encoding/json
// (the reader before issue 14) in every iteration, each first every other
// time, as JSON and as an event stream, and reports new/old, the ratio of
// their times.
//
//	go test -run '^$' -bench ListReplyPaired -count 6 ./middleware
func BenchmarkListReplyPaired(b *testing.B) {
	msg := realisticList(1000, "x")
	for _, stream := range []bool{false, true} {
		in := msg
		name := "json"
		if stream {
			in = []byte(asEvents(string(msg)))
			name = "sse"
		}
		b.Run(name, func(b *testing.B) {
			if fast, _, ok := readListReply(msg, []byte(`"x"`)); !ok || len(fast.Names) != 1000 {
				b.Fatal("the reply is not read by names")
			}
			b.SetBytes(int64(len(in)))
			id := []byte(`"x"`)
			fixture.Alternated(b, fixture.Side{Name: "new", Run: func() {
				if p, ok := readList(in, stream, id); !ok || len(p.Names) != 1000 {
					b.Fatal("not read")
				}
			}}, fixture.Side{Name: "old", Run: func() {
				if p, err := decodeListReplyJSON(in, stream, id); err != nil || len(p.Names) != 1000 {
					b.Fatal(err)
				}
			}})
		})
	}
}
