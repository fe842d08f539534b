package sse

import (
	"reflect"
	"testing"
)

func TestMessages(t *testing.T) {
	for _, tc := range []struct {
		body string
		want []string
	}{
		{"event: message\ndata: {\"a\":1}\n\n", []string{`{"a":1}`}},
		{"data: one\r\n\r\ndata: two\r\rdata:three", []string{"one", "two", "three"}},
		{"data: {\"a\":\ndata: 1}\n\n", []string{"{\"a\":\n1}"}},
		{": comment\n\nevent: ping\ndata: x\n\nid: 4\ndata: y\n\n", []string{"y"}},
		{"", nil},
	} {
		var got []string
		for _, m := range Messages([]byte(tc.body)) {
			got = append(got, string(m))
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.body, got, tc.want)
		}
	}
}
