package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"testing"
)

func TestMediaTypeOf(t *testing.T) {
	for ct, want := range map[string]MediaType{
		"":                                MediaNone,
		"application/json":                MediaJSON,
		"Application/JSON; charset=utf-8": MediaJSON,
		"text/event-stream":               MediaEventStream,
		"text/event-stream; charset":      MediaEventStream,
		"text/event-stream;;":             MediaEventStream,
		"TEXT/EVENT-STREAM; a=\"b":        MediaEventStream,
		"text/html; charset=UTF-8":        MediaHTML,
		"text/plain":                      MediaText,
		"application/problem+json":        MediaOther,
		";;;":                             MediaOther,
		"json":                            MediaOther,
	} {
		if got := mediaTypeOf(ct); got != want {
			t.Errorf("mediaTypeOf(%q) = %s, want %s", ct, got, want)
		}
	}
}

func TestClassifyMessage(t *testing.T) {
	for _, tc := range []struct {
		body string
		v    Verdict
		c    Category
	}{
		{`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"x"}}`, Verified, ""},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x","data":[1]}}`, Verified, ""},
		{`{"jsonrpc":"2.0","id":3.0,"error":{"code":-32602,"message":"x"}}`, Verified, ""},
		// Class 6: an integer of any size is a code.
		{`{"jsonrpc":"2.0","id":3,"error":{"code":2147483648,"message":"x"}}`, Verified, ""},
		{`{"jsonrpc":"2.0","id":3,"error":{"code":9007199254740993,"message":"x"}}`, Verified, ""},
		{`{"jsonrpc":"2.0","id":3,"error":{"code":-1e400,"message":"x"}}`, Verified, ""},
		{`{"jsonrpc":"2.0","id":3,"error":{"code":1.5,"message":"x"}}`, ObservedRisk, JSONRPCMalformed},
		{`{"jsonrpc":"2.0","id":3,"error":{"code":1e-400,"message":"x"}}`, ObservedRisk, JSONRPCMalformed},
		// Class 1: null is neither a number nor a string.
		{`{"jsonrpc":"2.0","id":3,"error":{"code":null,"message":"x"}}`, ObservedRisk, JSONRPCMalformed},
		{`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":null}}`, ObservedRisk, JSONRPCMalformed},
		{`{"jsonrpc":"2.0","id":3,"error":{"code":-32602}}`, ObservedRisk, JSONRPCMalformed},
		// Class 7: the id must be the request's, as a number, or null.
		{`{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"x"}}`, ObservedRisk, JSONRPCMalformed},
		{`{"jsonrpc":"2.0","id":"3","error":{"code":-32602,"message":"x"}}`, ObservedRisk, JSONRPCMalformed},
		{`{"jsonrpc":"2.0","error":{"code":-32602,"message":"x"}}`, ObservedRisk, JSONRPCMalformed},
		{`{"jsonrpc":"1.0","id":3,"error":{"code":1,"message":"x"}}`, ObservedRisk, JSONRPCMalformed},
		{`{"jsonrpc":"2.0","id":3,"error":"nope"}`, ObservedRisk, JSONRPCMalformed},
		{`{"jsonrpc":"2.0","id":3,"error":null}`, ObservedRisk, JSONRPCMalformed},
		{`{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"x"},"result":{}}`, ObservedRisk, JSONRPCMalformed},
		{`{"jsonrpc":"2.0","id":3}`, ObservedRisk, JSONRPCMalformed},
		{`{"jsonrpc":"2.0","id":3,"result":{"isError":true}}`, ObservedRisk, ResultIsError},
		{`{"jsonrpc":"2.0","id":"3","result":{"isError":true}}`, ObservedRisk, ResultIsError},
		{`{"jsonrpc":"2.0","id":3,"result":{"isError":"true"}}`, ObservedRisk, ResultOK},
		{`{"jsonrpc":"2.0","id":3,"result":null}`, ObservedRisk, ResultOK},
		// Class 8: no jsonrpc member, no claim to be JSON-RPC.
		{`{"id":3,"error":{"code":-32602,"message":"x"}}`, ObservedRisk, NotJSONRPC},
		{`{"error":{"code":402,"message":"payment required"}}`, ObservedRisk, NotJSONRPC},
		{`{"result":{"isError":true}}`, ObservedRisk, NotJSONRPC},
		{`[{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"x"}}]`, ObservedRisk, NotJSONRPC},
		{`"just a string"`, ObservedRisk, NotJSONRPC},
		{`null`, ObservedRisk, NotJSONRPC},
		{`{"message":"not found"}`, ObservedRisk, NotJSONRPC},
		{`<html>`, ObservedRisk, NotJSON},
		{`{"jsonrpc":"2.0",`, ObservedRisk, NotJSON},
	} {
		o := classifyMessage([]byte(tc.body), 3)
		if o.verdict != tc.v || o.category != tc.c {
			t.Errorf("%s: %s %s (%s), want %s %s", tc.body, o.verdict, o.category, o.detail, tc.v, tc.c)
		}
	}
}

func TestClassifyStream(t *testing.T) {
	for _, tc := range []struct {
		body string
		v    Verdict
		c    Category
	}{
		{"data: {\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":1,\"message\":\"\"}}\n\n", Verified, ""},
		{"\xef\xbb\xbfdata:{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":1,\"message\":\"\"}}\r\r", Verified, ""},
		// Class 9: data that is not JSON is not JSON.
		{"data: Internal Server Error\n\n", ObservedRisk, NotJSON},
		{"data: {\"detail\":\"x\"}\n\n", ObservedRisk, NotJSONRPC},
		{"data: {\"jsonrpc\":\"2.0\",\"id\":\"3\",\"error\":{\"code\":1,\"message\":\"\"}}\n\n", ObservedRisk, JSONRPCMalformed},
		{"data: {\"jsonrpc\":\"2.0\",\"id\":3}\n\n", ObservedRisk, JSONRPCMalformed},
		{"data: {\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}\n\n", ObservedRisk, EventStreamNoData},
		{"data:\n\n: ping\n\n", ObservedRisk, EventStreamNoData},
		{"event: other\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n\n", ObservedRisk, EventStreamNoData},
		// An unfinished event is not dispatched, as EventSource readers do.
		{"data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}", ObservedRisk, EventStreamNoData},
	} {
		o := classifyCall(MediaEventStream, []byte(tc.body), 3)
		if o.verdict != tc.v || o.category != tc.c {
			t.Errorf("%q: %s %s (%s), want %s %s", tc.body, o.verdict, o.category, o.detail, tc.v, tc.c)
		}
	}
}

func TestJSONInteger(t *testing.T) {
	for _, tc := range []struct {
		in    string
		isInt bool
		v     int64
		small bool
	}{
		{"0", true, 0, true}, {"-0", true, 0, true}, {"0.000", true, 0, true}, {"0e-999999999999", true, 0, true},
		{"-32602", true, -32602, true}, {"1e3", true, 1000, true}, {"2.50e1", true, 25, true},
		{"9007199254740992", true, 1 << 53, true}, {"9007199254740993", true, 0, false},
		{"1e99999999999999999999", true, 0, false}, {"1e-99999999999999999999", false, 0, false},
		{"1.5", false, 0, false}, {"null", false, 0, false}, {`"1"`, false, 0, false}, {"", false, 0, false},
		{"01", false, 0, false}, {"true", false, 0, false},
	} {
		isInt, v, small := jsonInteger(json.RawMessage(tc.in))
		if isInt != tc.isInt || v != tc.v || small != tc.small {
			t.Errorf("%q: %v %d %v, want %v %d %v", tc.in, isInt, v, small, tc.isInt, tc.v, tc.small)
		}
	}
}

// bigInteger is jsonInteger's oracle: the same question asked of
// math/big, for numbers whose exponent it can afford.
func bigInteger(s string) (isInt bool, v int64, small bool, ok bool) {
	if i := strings.IndexAny(s, "eE"); i >= 0 && len(s)-i > 5 {
		return false, 0, false, false
	}
	f, _, err := big.ParseFloat(s, 10, 4096, big.ToNearestEven)
	if err != nil || len(s) > 300 {
		return false, 0, false, false
	}
	if !f.IsInt() {
		return false, 0, false, true
	}
	n, _ := f.Int(nil)
	if n.CmpAbs(big.NewInt(1<<53)) > 0 {
		return true, 0, false, true
	}
	return true, n.Int64(), true, true
}

var riskCategories = map[Category]bool{
	ResultIsError: true, ResultOK: true, JSONRPCMalformed: true, NotJSONRPC: true,
	NotJSON: true, EmptyBody: true, EventStreamNoData: true,
}

// fuzzTransport answers the handshake and the list as a well-behaved
// 2025-11-25 server, and the made-up call with the fuzzed reply. A 3xx
// points at /next, which answers with a well-formed JSON-RPC error: the
// checker must classify that only after a 307 or 308.
type fuzzTransport struct {
	status int
	ct     string
	body   []byte
	served int // the length of the first reply to the call (the deciding one), its ids filled in
}

func (f *fuzzTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if r.Body != nil {
		json.NewDecoder(r.Body).Decode(&m)
	}
	resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Request: r}
	body := ""
	switch {
	case r.URL.Path == "/next":
		body = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"x"}}`, m.ID)
	case m.Method == "initialize":
		body = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25"}}`, m.ID)
	case m.Method == "tools/list":
		body = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"a"}]}}`, m.ID)
	case m.Method == "tools/call":
		resp.StatusCode = f.status
		resp.Header = http.Header{}
		if f.ct != "" {
			resp.Header.Set("Content-Type", f.ct)
		}
		resp.Header.Set("Location", "/next")
		b := strings.ReplaceAll(string(f.body), "ID", string(m.ID))
		if f.served == 0 {
			f.served = len(b)
		}
		resp.Body = io.NopCloser(strings.NewReader(b))
		return resp, nil
	default: // server/discover, notifications: an empty 400 / 202
		resp.StatusCode = 202
		if m.Method == "server/discover" {
			resp.StatusCode = 400
		}
	}
	resp.Body = io.NopCloser(strings.NewReader(body))
	return resp, nil
}

// FuzzClassify feeds arbitrary replies to the made-up call: JSON and event
// streams with random status codes, content types, nulls, huge numbers,
// redirects and bodies cut at a random size bound, through the whole HTTP
// path. It must never panic, and must give a verdict the check allows,
// and a 3xx that would turn the POST into a GET must never be classified
// as the reply to the redirected request. The integer reader behind error
// codes is checked against math/big on the same input.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":ID,"error":{"code":-32602,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":ID,"result":{"isError":true}}`,
		`{"jsonrpc":"2.0","id":ID,"error":{"code":null,"message":null}}`,
		`{"jsonrpc":"2.0","id":ID,"error":{"code":9007199254740993,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":ID,"error":{"code":-1e400,"message":"x"}}`,
		`{"id":ID,"error":{"code":1,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":"ID","error":{"code":1,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":ID,"error":{"code":-32020,"message":"header mismatch"}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}`,
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":ID,\"result\":{}}\n\n",
		"data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":ID,\"error\":{\"code\":1,\"message\":\"\"}}\r\n\r\n",
		"data: not json\n\n",
		"", "<html>", "\x00\xff",
	} {
		for _, ct := range []string{"application/json", "text/event-stream; charset", "text/html", ""} {
			for _, st := range []uint16{200, 302, 307, 400, 429, 503} {
				f.Add([]byte(s), ct, st, uint16(0))
			}
		}
		f.Add([]byte(s), "text/event-stream", uint16(200), uint16(10))
	}
	f.Fuzz(func(t *testing.T, body []byte, ct string, status, limit uint16) {
		code := 200 + int(status)%400 // 200..599
		transport := &fuzzTransport{status: code, ct: ct, body: body}
		opts := Options{
			Client:       &http.Client{Transport: transport},
			MaxRetryWait: 1, // no waiting on 429 in a fuzz run
		}
		if limit > 0 {
			opts.MaxBodyBytes = 150 + int64(limit) // the handshake's replies fit
		}
		rep, err := CheckURL(context.Background(), "http://fuzz.invalid/mcp", opts)
		if err != nil {
			t.Fatal(err)
		}
		switch rep.Verdict {
		case Verified:
			if rep.Category != "" {
				t.Fatalf("VERIFIED with category %q", rep.Category)
			}
		case ObservedRisk:
			if !riskCategories[rep.Category] {
				t.Fatalf("OBSERVED_RISK with category %q", rep.Category)
			}
		case Unverified:
			switch rep.Category {
			case CredentialGated, RateLimited, ReplyTooLarge:
			case RefusedBeforeDispatch: // -32020, or a 404 about the session
				if (rep.ErrorCode == nil || *rep.ErrorCode != codeHeaderMismatch) && rep.HTTPStatus != 404 {
					t.Fatalf("refused before dispatch: %s", rep)
				}
			default:
				t.Fatalf("UNVERIFIED %s for a reply", rep.Category)
			}
		default:
			t.Fatalf("verdict %q", rep.Verdict)
		}
		if rep.Stage != "tools/call" || rep.Detail == "" {
			t.Fatalf("stage %q, detail %q", rep.Stage, rep.Detail)
		}
		switch code {
		case 301, 302, 303:
			if rep.HTTPStatus != code {
				t.Fatalf("a %d was followed: %s", code, rep)
			}
		case 307, 308:
			if rep.HTTPStatus != 200 || rep.Verdict != Verified {
				t.Fatalf("a %d was not followed: %s", code, rep)
			}
		}
		if mediaTypeOf(ct) != MediaEventStream && int64(transport.served) > opts.MaxBodyBytes && opts.MaxBodyBytes > 0 &&
			(code < 300 || code > 308) && code != 401 && code != 403 && code != 429 && rep.Category != ReplyTooLarge {
			t.Fatalf("%d bytes over a %d bound: %s", transport.served, opts.MaxBodyBytes, rep)
		}

		// The integer reader against math/big, on the error code if
		// there is one, else on the body itself.
		raw := body
		var m struct {
			Error struct {
				Code json.RawMessage `json:"code"`
			} `json:"error"`
		}
		if json.Unmarshal(body, &m) == nil && m.Error.Code != nil {
			raw = m.Error.Code
		}
		s := strings.TrimSpace(string(raw))
		if json.Valid([]byte(s)) && s != "" && (s[0] == '-' || s[0] >= '0' && s[0] <= '9') {
			isInt, v, small := jsonInteger(json.RawMessage(s))
			if bi, bv, bs, ok := bigInteger(s); ok && (bi != isInt || bv != v || bs != small) {
				t.Fatalf("%s: jsonInteger %v %d %v, math/big %v %d %v", s, isInt, v, small, bi, bv, bs)
			}
		}
	})
}

// A tools/list page is read for its names and cursor; a page without a
// tools array or with a nameless tool is an error, not an empty list.
func TestReadToolsPage(t *testing.T) {
	names, next, err := readToolsPage([]byte(`{"tools":[{"name":"a","inputSchema":{}},{"name":"b"}],"nextCursor":"2","ttlMs":50}`))
	if err != nil || strings.Join(names, ",") != "a,b" || next != "2" {
		t.Errorf("readToolsPage: %q %q %v", names, next, err)
	}
	for _, bad := range []string{`{}`, `{"tools":[{"title":"no name"}]}`, `{"tools":[{"name":5}]}`, `[]`} {
		if _, _, err := readToolsPage([]byte(bad)); err == nil {
			t.Errorf("readToolsPage(%s) accepted", bad)
		}
	}
}
