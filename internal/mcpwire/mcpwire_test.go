package mcpwire

import (
	"slices"
	"testing"
)

var released = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

func TestVersions(t *testing.T) {
	for _, v := range released {
		if !Known(v) {
			t.Errorf("%s not known", v)
		}
	}
	for _, v := range []string{"", "2026-07-28x", "2026-07-2", "9999-01-01", "2025-11-25 ", "2026-07-28\x00"} {
		if Known(v) || Sessionless(v) {
			t.Errorf("%q known or modern", v)
		}
	}
	if !Sessionless(FirstSessionless) || Sessionless(LatestWithInitialize) || !slices.IsSorted(released) {
		t.Error("era of the released versions")
	}
}

func TestNameCodec(t *testing.T) {
	for _, tc := range []struct{ name, header string }{
		{"get_weather", "get_weather"},
		{"Ünïcode", "=?base64?w5xuw69jb2Rl?="},
		{" padded ", "=?base64?IHBhZGRlZCA=?="},
		{"line1\nline2", "=?base64?bGluZTEKbGluZTI=?="},
		{"=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="},
		{"", "=?base64??="},
	} {
		if got := EncodeName(tc.name); got != tc.header {
			t.Errorf("EncodeName(%q) = %q, want %q", tc.name, got, tc.header)
		}
		if !NameEquals(tc.header, []byte(tc.name)) || NameEquals(tc.header, []byte(tc.name+"x")) {
			t.Errorf("NameEquals(%q, %q)", tc.header, tc.name)
		}
	}
	if NameEquals("=?base64?!!!?=", []byte("!!!")) {
		t.Error("invalid base64 decoded")
	}
}

func TestAccepts(t *testing.T) {
	for _, tc := range []struct {
		values       []string
		json, stream bool
	}{
		{nil, true, true},
		{[]string{"application/json, text/event-stream"}, true, true},
		{[]string{"application/json", "text/event-stream"}, true, true},
		{[]string{"application/json"}, true, false},
		{[]string{"TEXT/Event-Stream;charset=utf-8"}, false, true},
		{[]string{"*/*"}, true, true},
		{[]string{"application/*, text/*"}, true, true},
		{[]string{"application/json;q=0, text/event-stream"}, false, true},
		{[]string{"application/json;q=0.0"}, false, false},
		{[]string{"application/json;q=0.5"}, true, false},
		{[]string{"text/html"}, false, false},
		{[]string{""}, false, false},
	} {
		if j, s := Accepts(tc.values); j != tc.json || s != tc.stream {
			t.Errorf("Accepts(%q) = %v, %v", tc.values, j, s)
		}
	}
}

func TestMediaType(t *testing.T) {
	for ct, want := range map[string]string{
		"application/json":                "application/json",
		"Application/JSON; charset=utf-8": "application/json",
		"application/json; charset":       "",
		"application/jsonx":               "application/jsonx",
		"text/event-stream":               "text/event-stream",
		"":                                "",
	} {
		if got := MediaType(ct); got != want {
			t.Errorf("MediaType(%q) = %q, want %q", ct, got, want)
		}
	}
	if MediaType("application/json;charset=utf-8") != "application/json" || MediaType("text/plain") == "application/json" || MediaType("text/event-stream; x=1") != "text/event-stream" {
		t.Error("MediaType with parameters")
	}
}

// SameID matches a reply's id to a request's as JSON values: strings
// after decoding, integers by their literal; never a string to a number.
func TestSameID(t *testing.T) {
	for _, tc := range []struct {
		got, want string
		same      bool
	}{
		{`"x"`, `"x"`, true}, {`"\u0078"`, `"x"`, true}, {` 1 `, `1`, true}, {`1`, `"1"`, false},
		{`"1"`, `1`, false}, {`2`, `1`, false}, {``, `1`, false}, {`"x`, `"x"`, false},
	} {
		if got := SameID([]byte(tc.got), []byte(tc.want)); got != tc.same {
			t.Errorf("SameID(%s, %s) = %v", tc.got, tc.want, got)
		}
	}
}
