package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// rawExchange writes req on a new connection to addr and returns what
// came back until the server closed it (each request says Connection:
// close).
func rawExchange(t *testing.T, addr, req string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(c)
	return string(b)
}

// recorder is an upstream that notes each request it gets, whole, and
// answers a tools/call as a server that runs the tool.
type recorder struct {
	mu   sync.Mutex
	seen []*http.Request
}

func (u *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.ReadAll(r.Body)
	u.mu.Lock()
	u.seen = append(u.seen, r)
	u.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ran"}]}}`)
}

func (u *recorder) requests() []*http.Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]*http.Request(nil), u.seen...)
}

const callBody = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`

// A request the proxy cannot send on as the caller sent it does not reach
// the upstream, which would judge something the caller never sent (a
// server's DNS-rebinding protection refuses an empty Host, and some read
// the Host header where net/http reads a full URL's host): with -host
// keep it is answered 400; a path that is the served one only once
// decoded is not the served path (404). -host upstream sends its own Host
// by design, so only the path is held to what was sent.
func TestRequestThatCannotGoOnAsSentDoesNotReachTheUpstream(t *testing.T) {
	for _, tc := range []struct {
		name, host, request string
		status              string
	}{
		{"an empty Host", "keep", "POST /mcp HTTP/1.1\r\nHost:\r\n", "400"},
		{"HTTP/1.0 without Host", "keep", "POST /mcp HTTP/1.0\r\n", "400"},
		{"a full URL naming another host", "keep", "POST http://localhost/mcp HTTP/1.1\r\nHost: evil.example\r\n", "400"},
		{"a full URL naming its Host", "keep", "POST http://localhost/mcp HTTP/1.1\r\nHost: localhost\r\n", "400"},
		{"an escape of the path", "keep", "POST /%6Dcp HTTP/1.1\r\nHost: localhost\r\n", "404"},
		{"an escape of the path, -host upstream", "upstream", "POST /%6Dcp HTTP/1.1\r\nHost: localhost\r\n", "404"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := &recorder{}
			upstream := httptest.NewServer(up)
			defer upstream.Close()
			front := httptest.NewServer(proxyHandler(t, io.Discard, "-upstream", upstream.URL+"/mcp", "-host", tc.host))
			defer front.Close()
			got := rawExchange(t, front.Listener.Addr().String(), tc.request+"Content-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(callBody))+"\r\nConnection: close\r\n\r\n"+callBody)
			if !strings.Contains(got, " "+tc.status+" ") || strings.Contains(got, "ran") {
				t.Errorf("answered %q, want %s", got, tc.status)
			}
			if n := len(up.requests()); n != 0 {
				t.Errorf("the upstream got %d requests", n)
			}
		})
	}
	// What can go on as sent does, with either -host.
	for _, host := range []string{"keep", "upstream"} {
		up := &recorder{}
		upstream := httptest.NewServer(up)
		front := httptest.NewServer(proxyHandler(t, io.Discard, "-upstream", upstream.URL+"/mcp", "-host", host))
		got := rawExchange(t, front.Listener.Addr().String(), "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(callBody))+"\r\nConnection: close\r\n\r\n"+callBody)
		if !strings.Contains(got, "ran") || len(up.requests()) != 1 {
			t.Errorf("-host %s: %q", host, got)
		}
		front.Close()
		upstream.Close()
	}
}

// The proxy sends the upstream the caller's headers and adds none: no
// X-Forwarded-*, no Accept-Encoding (with which the upstream would
// compress an answer the caller never asked compressed); the caller's own
// Forwarded and X-Forwarded-* go on as sent.
func TestProxyAddsNoHeader(t *testing.T) {
	up := &recorder{}
	upstream := httptest.NewServer(up)
	defer upstream.Close()
	front := httptest.NewServer(proxyHandler(t, io.Discard, "-upstream", upstream.URL+"/mcp"))
	defer front.Close()
	plain := &http.Client{Transport: &http.Transport{DisableCompression: true}} // sends no Accept-Encoding
	for _, tc := range []struct{ sent, want http.Header }{
		{http.Header{}, http.Header{}},
		{http.Header{"Forwarded": {"for=192.0.2.1"}, "X-Forwarded-For": {"192.0.2.1"}, "X-Forwarded-Proto": {"https"}},
			http.Header{"Forwarded": {"for=192.0.2.1"}, "X-Forwarded-For": {"192.0.2.1"}, "X-Forwarded-Proto": {"https"}}},
		// One the caller names in Connection is for the next hop only.
		{http.Header{"X-Forwarded-For": {"192.0.2.1"}, "Connection": {"X-Forwarded-For"}}, http.Header{}},
	} {
		sent := tc.sent
		req, _ := http.NewRequest("POST", front.URL+"/mcp", strings.NewReader(callBody))
		req.Header = sent.Clone()
		req.Header.Set("Content-Type", "application/json")
		resp, err := plain.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		seen := up.requests()
		got := seen[len(seen)-1].Header
		for _, k := range []string{"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"} {
			if strings.Join(got[k], ",") != strings.Join(tc.want[k], ",") {
				t.Errorf("%s: sent %q, the upstream got %q, want %q", k, sent[k], got[k], tc.want[k])
			}
		}
		if ae, ok := got["Accept-Encoding"]; ok {
			t.Errorf("Accept-Encoding: sent none, the upstream got %q", ae)
		}
	}
}

// A caller that sends Expect: 100-continue gets one 100 Continue, as from
// the upstream alone: net/http sends it as the guard reads the body, and
// the upstream's own is not relayed too.
func TestOneContinue(t *testing.T) {
	upstream := httptest.NewServer(&recorder{})
	defer upstream.Close()
	front := httptest.NewServer(proxyHandler(t, io.Discard, "-upstream", upstream.URL+"/mcp"))
	defer front.Close()
	for _, expect := range []string{"100-continue", "100-Continue, x-other", "x-other, 100-continue"} {
		askOnce(t, front.Listener.Addr().String(), expect)
	}
}

func askOnce(t *testing.T, addr, expect string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nExpect: "+expect+"\r\nConnection: close\r\nContent-Length: "+strconv.Itoa(len(callBody))+"\r\n\r\n")
	br := bufio.NewReader(c)
	line, _ := br.ReadString('\n')
	if !strings.HasPrefix(line, "HTTP/1.1 100 ") {
		t.Fatalf("Expect: %s: first line %q, want 100 Continue", expect, line)
	}
	io.WriteString(c, callBody)
	rest, _ := io.ReadAll(br)
	if n := strings.Count(string(rest), " 100 Continue"); n != 0 || !strings.Contains(string(rest), "ran") {
		t.Errorf("Expect: %s: after the 100, %d more 100 Continue in %q", expect, n, rest)
	}
}
