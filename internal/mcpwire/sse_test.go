package mcpwire

import (
	"reflect"
	"testing"
)

func TestEventMessages(t *testing.T) {
	for _, tc := range []struct {
		body string
		want []string
	}{
		{"event: message\ndata: {\"a\":1}\n\n", []string{`{"a":1}`}},
		{"data: one\r\n\r\ndata: two\r\rdata:three\n\n", []string{"one", "two", "three"}},
		{"data: {\"a\":\ndata: 1}\n\n", []string{"{\"a\":\n1}"}},
		{"data: a\ndata: b\rdata: c\r\ndata: d\n\n", []string{"a\nb\nc\nd"}},
		{"event: x\ndata: a\nevent: message\n\nevent: message\nevent\ndata: b\n\nevent: message\nevent: y\ndata: c\n\n", []string{"a", "b"}},
		{": comment\n\nevent: ping\ndata: x\n\nid: 4\ndata: y\n\n", []string{"y"}},
		{"\xef\xbb\xbfdata: bom\n\n", []string{"bom"}},
		// An unfinished last event is never dispatched by EventSource.
		{"data: done\n\ndata: cut", []string{"done"}},
		{"data: done\n\ndata: cut\n", []string{"done"}},
		// Empty data carries nothing.
		{"data:\n\ndata: \n\nevent: message\n\n", nil},
		{"", nil},
	} {
		var got []string
		body := []byte(tc.body)
		for _, m := range EventMessages(body) {
			got = append(got, string(m))
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.body, got, tc.want)
		}
		if string(body) != tc.body { // data joined from lines is a copy
			t.Errorf("%q was changed to %q", tc.body, body)
		}
	}
}
