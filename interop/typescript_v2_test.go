package interop

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/toolguard/toolguard/internal/fixture"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// v2UnknownName reads the TypeScript SDK v2's own answer to an unknown
// tool: -32602 "Tool X not found" (a protocol error, HTTP 200), or, on its
// 2025-era fallback, the v1 shape (a result with isError).
func v2UnknownName(body string) (string, bool) {
	if code, msg, ok := fixture.ErrorMessage(body); ok && code == -32602 {
		if name, ok := strings.CutPrefix(msg, "Tool "); ok {
			return strings.CutSuffix(name, " not found")
		}
		return "", false
	}
	return tsUnknownName(body)
}

// ranRecorder marks, on d, every reply of next that is a tool's own result.
func ranRecorder(d *fixture.Differential, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		if ranTS(rec.Body.String()) {
			d.Ran("tool")
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	})
}

// v2Server starts the TypeScript SDK v2 server of v2-caps-server.mjs (its
// list depends on the client's capabilities; it refuses a foreign Host)
// and returns a reverse proxy to it that keeps the caller's Host.
func v2Server(t *testing.T) *httputil.ReverseProxy {
	ts := fixture.StartNode(t, "v2-caps-server.mjs", "--host-check")
	u, err := url.Parse(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	return &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(u)
		pr.Out.URL.Path = u.Path
		pr.Out.Host = pr.In.Host
	}}
}

// The corpus, the _meta and the header variations against a real
// TypeScript SDK v2 server (whose list depends on the client's
// capabilities, and which refuses a foreign Host) behind a reverse proxy,
// in both eras: no disagreement of any kind.
func TestDifferentialTypeScriptV2(t *testing.T) {
	proxy := v2Server(t)
	d, err := toolguard.Discover(proxy, toolguard.DiscoverOptions{Budget: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	diff := &fixture.Differential{UnknownTool: v2UnknownName, Exact: true}
	g, err := toolguard.New(toolguard.Options{Tools: d,
		OnReject: func(r *http.Request, rej *toolguard.Rejection) { diff.Rejected(rej.Name) }})
	if err != nil {
		t.Fatal(err)
	}
	diff.Alone = ranRecorder(diff, proxy)
	diff.Guarded = g.Handler(ranRecorder(diff, proxy))
	var total fixture.Tally
	for _, era := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(era, func(t *testing.T) {
			headers := func(name string) http.Header {
				h := http.Header{"Mcp-Protocol-Version": {era}}
				if era == "2026-07-28" {
					h.Set("Mcp-Method", "tools/call")
					h.Set("Mcp-Name", fixture.HeaderName(name))
				}
				return h
			}
			meta := ""
			if era == "2026-07-28" {
				meta = fixture.ModernMeta
			}
			var tl fixture.Tally
			for _, name := range []string{"get_repository", "delete_repository", "nope", "Ünïcode", ""} {
				for _, body := range fixture.Corpus(name, meta) {
					diff.Compare(t, body, headers(name), &tl)
				}
			}
			diff.CompareVariants(t, []string{"get_repository", "delete_repository", "nope", "Ünïcode", ""}, meta, headers, &tl)
			if tl.Rejected == 0 || tl.RanAlone == 0 {
				t.Errorf("degenerate: %v", tl)
			}
			t.Logf("TypeScript SDK v2, %s: %v", era, tl)
			total.Add(tl)
		})
	}
	t.Logf("TypeScript SDK v2, both eras: %v", total)
}
