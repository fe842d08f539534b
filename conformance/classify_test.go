package conformance

import (
	"testing"
)

func TestMediaTypeOf(t *testing.T) {
	for ct, want := range map[string]string{
		"":                                MediaNone,
		"application/json":                MediaJSON,
		"Application/JSON; charset=utf-8": MediaJSON,
		"text/event-stream":               MediaEventStream,
		"text/html; charset=UTF-8":        MediaHTML,
		"text/plain":                      MediaText,
		"application/problem+json":        MediaOther,
		";;;":                             MediaOther,
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
		{`{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"x"}}`, ObservedRisk, JSONRPCMalformed},
		{`{"jsonrpc":"2.0","id":3,"error":{"code":1.5,"message":"x"}}`, ObservedRisk, JSONRPCMalformed},
		{`{"jsonrpc":"1.0","id":3,"error":{"code":1,"message":"x"}}`, ObservedRisk, JSONRPCMalformed},
		{`{"jsonrpc":"2.0","id":3,"error":"nope"}`, ObservedRisk, JSONRPCMalformed},
		{`{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"x"},"result":{}}`, ObservedRisk, JSONRPCMalformed},
		{`{"jsonrpc":"2.0","id":3}`, ObservedRisk, JSONRPCMalformed},
		{`{"jsonrpc":"2.0","id":3,"result":{"isError":true}}`, ObservedRisk, ResultIsError},
		{`{"jsonrpc":"2.0","id":3,"result":{"isError":"true"}}`, ObservedRisk, ResultOK},
		{`{"jsonrpc":"2.0","id":3,"result":null}`, ObservedRisk, ResultOK},
		{`[{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"x"}}]`, ObservedRisk, NotJSONRPC},
		{`"just a string"`, ObservedRisk, NotJSONRPC},
		{`{"message":"not found"}`, ObservedRisk, NotJSONRPC},
		{`<html>`, ObservedRisk, NotJSON},
		{`{"jsonrpc":"2.0",`, ObservedRisk, NotJSON},
	} {
		o := classifyMessage([]byte(tc.body), 3)
		if o.verdict != tc.v || o.category != tc.c {
			t.Errorf("%s: %s %s, want %s %s", tc.body, o.verdict, o.category, tc.v, tc.c)
		}
	}
}

var riskCategories = map[Category]bool{
	ResultIsError: true, ResultOK: true, JSONRPCMalformed: true, NotJSONRPC: true,
	NotJSON: true, EmptyBody: true, EventStreamNoData: true,
}

// FuzzClassify feeds arbitrary replies, as JSON and as event streams, to
// the classifier: it must never panic, and must always give a verdict the
// check allows for a reply.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"isError":true}}`,
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n",
		"data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":1,\"error\":{\"code\":1,\"message\":\"\"}}\r\n\r\n",
		"", "<html>", "\x00\xff",
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, stream bool) {
		media := MediaJSON
		if stream {
			media = MediaEventStream
		}
		o := classifyCall(media, body, 1)
		switch o.verdict {
		case Verified:
			if o.category != "" || o.code == nil {
				t.Fatalf("VERIFIED with category %q, code %v", o.category, o.code)
			}
		case ObservedRisk:
			if !riskCategories[o.category] {
				t.Fatalf("OBSERVED_RISK with category %q", o.category)
			}
		default:
			t.Fatalf("verdict %q for a reply", o.verdict)
		}
		if o.detail == "" {
			t.Fatal("no detail")
		}
	})
}
