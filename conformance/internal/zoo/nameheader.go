package zoo

import (
	"net/http/httptest"
	"testing"
)

// NameHeaderServers starts one server of each mcp_name_header state, each
// with the one tool "x", and returns their URLs: a 2026-07-28 server strict
// about Mcp-Name, one lenient about it, and a 2025-11-25 server, to which
// the check does not apply. They are closed when t's test ends.
func NameHeaderServers(t testing.TB) (strict, lenient, old string) {
	var urls [3]string
	for i, f := range []*Fake{{Sessionless: true}, {Sessionless: true, LenientName: true}, {}} {
		f.Tools = []string{"x"}
		srv := httptest.NewServer(f)
		t.Cleanup(srv.Close)
		urls[i] = srv.URL
	}
	return urls[0], urls[1], urls[2]
}
