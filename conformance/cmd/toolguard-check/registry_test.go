package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolguard/toolguard/conformance"
	"github.com/toolguard/toolguard/conformance/internal/zoo"
	"github.com/toolguard/toolguard/internal/fixture"
)

// localNpx returns the -npx command that runs npm packages from the test
// command's node_modules (testdata/node) instead of downloading them.
func localNpx(t *testing.T) string {
	t.Helper()
	nm := os.Getenv("TOOLGUARD_NODE_MODULES")
	if nm == "" {
		nm = filepath.Join(fixture.NodeDir(t), "node_modules")
	} else {
		fixture.NodeDir(t)
	}
	shim, err := filepath.Abs(filepath.Join("..", "..", "testdata", "registry", "npx-local.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(nm+shim, " \t") {
		t.Fatalf("-npx is split on spaces: %s, %s", nm, shim)
	}
	return "env TOOLGUARD_NODE_MODULES=" + nm + " node " + shim
}

// page is a GET /v0.1/servers response holding servers (server.json
// documents), as the registry serves it.
func page(cursor string, servers ...string) string {
	var entries []string
	for _, s := range servers {
		entries = append(entries, `{"server": `+s+`, "_meta": {"io.modelcontextprotocol.registry/official": {"status": "active", "publishedAt": "2026-11-01T10:00:00Z", "updatedAt": "2026-11-01T10:00:00Z", "isLatest": true}}}`)
	}
	return fmt.Sprintf(`{"servers": [%s], "metadata": {"nextCursor": %q, "count": %d}}`, strings.Join(entries, ",\n"), cursor, len(servers))
}

func remoteServer(name, version, kind, url, extra string) string {
	return fmt.Sprintf(`{"$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
 "name": %q, "description": "d", "version": %q,
 "remotes": [{"type": %q, "url": %q%s}]}`, name, version, kind, url, extra)
}

func npmServer(name, pkg, version, extra string) string {
	return fmt.Sprintf(`{"name": %q, "description": "d", "version": %q,
 "packages": [{"registryType": "npm", "registryBaseUrl": "https://registry.npmjs.org", "identifier": %q, "version": %q,
   "transport": {"type": "stdio"}%s}]}`, name, version, pkg, version, extra)
}

// seenHeader wraps h and records whether any request carried header.
type seenHeader struct {
	h      http.Handler
	header string
	seen   atomic.Bool
}

func (s *seenHeader) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get(s.header) != "" {
		s.seen.Store(true)
	}
	s.h.ServeHTTP(w, r)
}

// A registry file as the registry serves it, two pages of /v0.1/servers:
// each entry becomes the right target (remotes on loopback fixtures, npm
// packages from testdata/node through -npx) or the right UNVERIFIED
// reason, every report is labelled with the server's name and version,
// and each npm server's report agrees with its single check.
func TestRegistryFleetThroughCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("real npm servers: not in -short")
	}
	npx := localNpx(t)
	verified := &seenHeader{h: &zoo.Fake{Tools: []string{"echo"}}, header: "X-Api-Key"}
	ok := httptest.NewServer(verified)
	defer ok.Close()
	risky := httptest.NewServer(&zoo.Fake{Tools: []string{"echo"}, On: map[string]func(http.ResponseWriter, string){
		"tools/call": zoo.Answer(200, "application/json", `{"jsonrpc":"2.0","id":{{id}},"result":{"content":[],"isError":true}}`)}})
	defer risky.Close()
	keyed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-API-Key") != "k-789" {
			w.WriteHeader(401)
			return
		}
		(&zoo.Fake{Tools: []string{"echo"}}).ServeHTTP(w, r)
	}))
	defer keyed.Close()
	memory := filepath.Join(t.TempDir(), "memory.jsonl")
	root := t.TempDir()
	env := filepath.Join(t.TempDir(), "inputs.env")
	if err := os.WriteFile(env, []byte("# the operator's inputs\nX-API-Key=k-789\ntarget_dir="+root+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := page("io.example/risky:1.0.0",
		remoteServer("io.example/verified", "1.0.0", "streamable-http", ok.URL+"/mcp", ""),
		remoteServer("io.example/risky", "2.0.0", "streamable-http", "{base}/mcp", `, "variables": {"base": {"default": "`+risky.URL+`"}}`),
		remoteServer("io.example/keyed", "0.3.0", "streamable-http", keyed.URL, `, "headers": [{"name": "X-API-Key", "isRequired": true, "isSecret": true}]`),
		remoteServer("io.example/old", "0.1.0", "sse", ok.URL+"/sse", ""),
		`{"name": "io.example/py", "version": "0.5.0", "packages": [{"registryType": "pypi", "identifier": "weather-mcp-server", "version": "0.5.0", "transport": {"type": "stdio"}}]}`,
	) + "\n" + page("",
		npmServer("io.modelcontextprotocol/everything", "@modelcontextprotocol/server-everything", "2026.8.31",
			`, "packageArguments": [{"type": "positional", "value": "stdio"}]`),
		npmServer("io.modelcontextprotocol/memory", "@modelcontextprotocol/server-memory", "2026.8.31",
			`, "environmentVariables": [{"name": "MEMORY_FILE_PATH", "isRequired": true}]`),
		npmServer("io.modelcontextprotocol/filesystem", "@modelcontextprotocol/server-filesystem", "2026.8.31",
			`, "packageArguments": [{"type": "positional", "valueHint": "target_dir", "isRequired": true}]`),
		npmServer("io.modelcontextprotocol/sequential-thinking", "@modelcontextprotocol/server-sequential-thinking", "2026.8.31",
			`, "environmentVariables": [{"name": "THINKING_API_KEY", "isRequired": true, "isSecret": true}, {"name": "THINKING_REGION", "isRequired": true}]`),
		npmServer("io.modelcontextprotocol/old-memory", "@modelcontextprotocol/server-memory", "1.0.0", ""),
	)
	code, out, stderr := runCLI(t, file, "-fleet", "-", "-json", "-npx", npx, "-env-file", env, "-env", "MEMORY_FILE_PATH="+memory, "-spacing", "1ms")
	if code != exitRisk {
		t.Errorf("exit %d, want %d\n%s", code, exitRisk, stderr)
	}
	reports := map[string]conformance.Report{}
	for line := range strings.Lines(out) {
		var r conformance.Report
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%v: %q", err, line)
		}
		if r.Registry == nil || r.Label != r.Registry.Name+"@"+r.Registry.Version {
			t.Fatalf("report without its registry entry: %+v", r)
		}
		reports[r.Registry.Name] = r
	}
	for name, w := range map[string]struct {
		target   string
		verdict  conformance.Verdict
		category conformance.Category
		detail   string
	}{
		"io.example/verified":                         {ok.URL + "/mcp", conformance.Verified, "", ""},
		"io.example/risky":                            {risky.URL + "/mcp", conformance.ObservedRisk, conformance.ResultIsError, ""},
		"io.example/keyed":                            {keyed.URL, conformance.Verified, "", ""},
		"io.example/old":                              {ok.URL + "/sse", conformance.Unverified, conformance.SSETransport, "HTTP+SSE"},
		"io.example/py":                               {"pypi:weather-mcp-server@0.5.0", conformance.Unverified, conformance.NotSupported, "a pypi package"},
		"io.modelcontextprotocol/everything":          {"stdio:" + npx + " @modelcontextprotocol/server-everything@2026.8.31 stdio", conformance.ObservedRisk, conformance.ResultIsError, ""},
		"io.modelcontextprotocol/memory":              {"stdio:" + npx + " @modelcontextprotocol/server-memory@2026.8.31", conformance.ObservedRisk, conformance.ResultIsError, ""},
		"io.modelcontextprotocol/filesystem":          {"stdio:" + npx + " @modelcontextprotocol/server-filesystem@2026.8.31 {target_dir}", conformance.ObservedRisk, conformance.ResultIsError, ""},
		"io.modelcontextprotocol/sequential-thinking": {"stdio:" + npx + " @modelcontextprotocol/server-sequential-thinking@2026.8.31", conformance.Unverified, conformance.NeedsInput, "requires environment variable THINKING_API_KEY, environment variable THINKING_REGION, not supplied"},
		"io.modelcontextprotocol/old-memory":          {"stdio:" + npx + " @modelcontextprotocol/server-memory@1.0.0", conformance.Unverified, conformance.Unreachable, "installed at 2026.8.31, not 1.0.0"},
	} {
		r, found := reports[name]
		switch {
		case !found:
			t.Errorf("%s: no report", name)
		case r.Target != w.target || r.Verdict != w.verdict || r.Category != w.category || !strings.Contains(r.Detail, w.detail):
			t.Errorf("%s: %s\nwant %s: %s %s (%q)", name, r, w.target, w.verdict, w.category, w.detail)
		}
	}
	if len(reports) != 10 || !strings.Contains(words(stderr), "UNVERIFIED 4") {
		t.Errorf("%d reports; summary:\n%s", len(reports), stderr)
	}
	if verified.seen.Load() {
		t.Error("the header meant for io.example/keyed reached another server")
	}
	if strings.Contains(out, "k-789") || strings.Contains(out, root) {
		t.Error("an input the operator gave shows in the reports")
	}

	// Each npm server's report agrees with its single check.
	nm, _, _ := strings.Cut(strings.TrimPrefix(npx, "env TOOLGUARD_NODE_MODULES="), " ")
	for name, argv := range map[string][]string{
		"io.modelcontextprotocol/everything": {"node", filepath.Join(nm, "@modelcontextprotocol/server-everything/dist/index.js"), "stdio"},
		"io.modelcontextprotocol/memory":     {"env", "MEMORY_FILE_PATH=" + memory, "node", filepath.Join(nm, "@modelcontextprotocol/server-memory/dist/index.js")},
		"io.modelcontextprotocol/filesystem": {"node", filepath.Join(nm, "@modelcontextprotocol/server-filesystem/dist/index.js"), root},
	} {
		_, single, stderr := runCLI(t, "", append([]string{"-json", "-stdio", "--"}, argv...)...)
		var r conformance.Report
		if err := json.Unmarshal([]byte(single), &r); err != nil {
			t.Fatalf("%s: %v: %s %s", name, err, single, stderr)
		}
		if f := reports[name]; r.Verdict != f.Verdict || r.Category != f.Category || r.Tools != f.Tools {
			t.Errorf("%s: fleet %s (%d tools), single check %s (%d tools)", name, f, f.Tools, r, r.Tools)
		}
	}
}

// A registry document that is not one is a usage error naming the line;
// so is a bad line of -env-file.
func TestRegistryBadInputThroughCLI(t *testing.T) {
	code, _, stderr := runCLI(t, "{\"name\": \"io.example/a\", \"version\": \"1\"}\n{\"servers\": [\n  {\"server\": {\"name\": 3}}]}", "-fleet", "-")
	if code != exitUsage || !strings.Contains(stderr, "-:2: servers[0]: not a server.json") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	env := filepath.Join(t.TempDir(), "bad.env")
	os.WriteFile(env, []byte("A=1\nno equals sign\n"), 0o600)
	code, _, stderr = runCLI(t, "{\"name\": \"io.example/a\", \"version\": \"1\"}", "-fleet", "-", "-env-file", env)
	if code != exitUsage || !strings.Contains(stderr, "bad.env:2: want NAME=VALUE") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	for _, args := range [][]string{{"-compare", "/does/not/exist", "/nor/this"}, {"-compare", env}, {"-compare", env, env}, {"-env", "noequals", "-fleet", "-"}} {
		if code, _, _ := runCLI(t, "http://127.0.0.1:1/\n", args...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d", args, code, exitUsage)
		}
	}
}

// switchable is a fleet fixture server whose answer to the made-up call a
// test changes between two runs.
type switchable struct {
	mu     sync.Mutex
	answer string // a tools/call reply, {{id}} for the id
}

func (s *switchable) set(a string) { s.mu.Lock(); s.answer = a; s.mu.Unlock() }

func (s *switchable) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	a := s.answer
	s.mu.Unlock()
	(&zoo.Fake{Tools: []string{"echo"}, On: map[string]func(http.ResponseWriter, string){
		"tools/call": zoo.Answer(200, "application/json", a)}}).ServeHTTP(w, r)
}

const (
	answerVerified = `{"jsonrpc":"2.0","id":{{id}},"error":{"code":-32602,"message":"Unknown tool: __toolguard_probe_nonexistent_tool__"}}`
	answerOther    = `{"jsonrpc":"2.0","id":{{id}},"error":{"code":-32601,"message":"Unknown tool: __toolguard_probe_nonexistent_tool__"}}`
	answerIsError  = `{"jsonrpc":"2.0","id":{{id}},"result":{"content":[],"isError":true}}`
)

// -compare on two runs of a fleet in which some servers changed between
// the runs: the table and the JSON name what got worse, better or
// changed, what is new and what is gone, and the exit status is 3 when
// anything got worse, 0 otherwise.
func TestCompareTwoRunsThroughCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("seconds of pacing: not in -short")
	}
	servers := map[string]*switchable{}
	urls := map[string]string{}
	for _, name := range []string{"fixed", "broke", "moved-code", "same", "removed", "added"} {
		s := &switchable{answer: answerVerified}
		srv := httptest.NewServer(s)
		defer srv.Close()
		servers[name], urls[name] = s, srv.URL+"/mcp"
	}
	servers["fixed"].set(answerIsError)
	dir := t.TempDir()
	list := func(names ...string) string {
		var docs []string
		for _, n := range names {
			docs = append(docs, remoteServer("io.example/"+n, "1.0.0", "streamable-http", urls[n], ""))
		}
		return page("", docs...)
	}
	first := filepath.Join(dir, "first.jsonl")
	_, out, stderr := runCLI(t, list("fixed", "broke", "moved-code", "same", "removed"), "-fleet", "-", "-json", "-quiet", "-spacing", "1ms")
	if err := os.WriteFile(first, []byte(out), 0o600); err != nil || strings.Count(out, "\n") != 5 {
		t.Fatalf("first run: %v\n%s\n%s", err, out, stderr)
	}

	// Between the runs: one server fixed, one broken, one answering with
	// another code; one left the registry, one joined it.
	servers["fixed"].set(answerVerified)
	servers["broke"].set(answerIsError)
	servers["moved-code"].set(answerOther)
	second := filepath.Join(dir, "second.jsonl")
	secondList := list("fixed", "broke", "moved-code", "same", "added")
	code, out, stderr := runCLI(t, secondList, "-fleet", "-", "-spacing", "1ms", "-quiet", "-compare", first)
	if code != exitWorse {
		t.Errorf("-fleet -compare: exit %d, want %d\n%s", code, exitWorse, stderr)
	}
	for _, want := range []string{
		"change target before after",
		"worse io.example/broke remotes[0] (" + urls["broke"] + ") VERIFIED -32602 @1.0.0 OBSERVED_RISK result_is_error @1.0.0",
		"better io.example/fixed remotes[0] (" + urls["fixed"] + ") OBSERVED_RISK result_is_error @1.0.0 VERIFIED -32602 @1.0.0",
		"changed io.example/moved-code remotes[0] (" + urls["moved-code"] + ") VERIFIED -32602 @1.0.0 VERIFIED -32601 @1.0.0",
		"new io.example/added remotes[0] (" + urls["added"] + ") - VERIFIED -32602 @1.0.0",
		"gone io.example/removed remotes[0] (" + urls["removed"] + ") VERIFIED -32602 @1.0.0 -",
		"worse 1, better 1, changed 1, new 1, gone 1, unchanged 1",
	} {
		if !strings.Contains(words(out), want) {
			t.Errorf("-fleet -compare output lacks %q:\n%s", want, out)
		}
	}
	_, out, _ = runCLI(t, secondList, "-fleet", "-", "-json", "-quiet", "-spacing", "1ms")
	if err := os.WriteFile(second, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}

	code, out, stderr = runCLI(t, "", "-compare", first, "-json", second)
	var c conformance.Comparison
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("%v: %s %s", err, out, stderr)
	}
	kinds := map[string]conformance.ChangeKind{}
	for _, ch := range c.Changes {
		kinds[ch.Registry.Name] = ch.Kind
	}
	if code != exitWorse || c.Unchanged != 1 || len(c.Changes) != 5 || kinds["io.example/broke"] != conformance.Worse ||
		kinds["io.example/fixed"] != conformance.Better || kinds["io.example/moved-code"] != conformance.Changed ||
		kinds["io.example/added"] != conformance.New || kinds["io.example/removed"] != conformance.Gone {
		t.Errorf("-compare -json: exit %d, %+v", code, c)
	}

	// Nothing worse: exit 0, whatever else changed.
	servers["broke"].set(answerVerified)
	third := filepath.Join(dir, "third.jsonl")
	_, out, _ = runCLI(t, secondList, "-fleet", "-", "-json", "-quiet", "-spacing", "1ms")
	os.WriteFile(third, []byte(out), 0o600)
	code, out, _ = runCLI(t, "", "-compare", second, third)
	if code != 0 || !strings.Contains(words(out), "worse 0, better 1, changed 0, new 0, gone 0, unchanged 4") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	if code, out, _ := runCLI(t, "", "-compare", third, "-json", third); code != 0 || !strings.Contains(out, `"changes": []`) {
		t.Errorf("a run against itself: exit %d %s", code, out)
	}
}

// A line of a compared run that is not a report (cut by an interrupted
// run, then resumed after it) is skipped, and said on stderr with its
// place: the target it held, if any, shows as gone, not silently.
func TestCompareSaysWhichLinesAreNotReports(t *testing.T) {
	dir := t.TempDir()
	before, after := filepath.Join(dir, "before.jsonl"), filepath.Join(dir, "after.jsonl")
	os.WriteFile(before, []byte(`{"target":"http://a/","verdict":"VERIFIED"}`+"\n"+`{"target":"http://b/","verdict":"VERIFIED"}`+"\n"), 0o600)
	os.WriteFile(after, []byte(`{"target":"http://a/","verd`+"\n"+`{"target":"http://b/","verdict":"VERIFIED"}`+"\n\n"), 0o600)
	code, out, stderr := runCLI(t, "", "-compare", before, after)
	if code != 0 || !strings.Contains(words(out), "gone 1") || strings.Count(stderr, "not a report") != 1 ||
		!strings.Contains(stderr, after+":1: not a report") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, out, stderr)
	}
}
