package conformance_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/toolguard/toolguard/conformance"
)

// readRegistryFile reads a file of testdata/registry.
func readRegistryFile(t *testing.T, name string, opts conformance.RegistryOptions) []conformance.Target {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "registry", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	targets, _, err := conformance.ReadRegistry(f, name, opts)
	if err != nil {
		t.Fatal(err)
	}
	return targets
}

// byEntry indexes targets by "name@version entry".
func byEntry(t *testing.T, targets []conformance.Target) map[string]conformance.Target {
	t.Helper()
	m := map[string]conformance.Target{}
	for _, tg := range targets {
		if tg.Registry == nil || tg.Label != tg.Registry.Name+"@"+tg.Registry.Version {
			t.Fatalf("target %q: label %q, registry %+v", tg.Target, tg.Label, tg.Registry)
		}
		m[tg.Label+" "+tg.Registry.Entry] = tg
	}
	return m
}

// The registry's own examples become the targets a client would run, or
// the reason they are not run: the command npx would get with the
// declared arguments, the environment, the headers.
func TestRegistryExamplesBecomeTargetsOrReasons(t *testing.T) {
	type want struct {
		target string
		argv   []string
		env    []string
		header map[string]string
		skip   conformance.Category
		detail string // in the skip's detail
	}
	cases := map[string]want{
		"io.github.user/local-weather@1.0.0 packages[0]": {
			target: "stdio:npx -y @modelcontextprotocol/server-weather@1.0.0 --port 8080",
			argv:   []string{"npx", "-y", "@modelcontextprotocol/server-weather@1.0.0", "--port", "8080"},
			skip:   conformance.NeedsInput, detail: "environment variable API_KEY"},
		"io.github.user/remote-weather@2.1.0 remotes[0]": {
			target: "https://api.example.com/mcp", skip: conformance.NeedsInput, detail: "header Authorization"},
		"io.github.user/weather@1.0.2 ": {
			target: "registry:io.github.user/weather@1.0.2", skip: conformance.NoEndpoint, detail: "neither remotes nor packages"},
		"io.modelcontextprotocol.anonymous/brave-search@1.0.2 packages[0]": {
			target: "stdio:npx -y @modelcontextprotocol/server-brave-search@1.0.2",
			argv:   []string{"npx", "-y", "@modelcontextprotocol/server-brave-search@1.0.2"},
			skip:   conformance.NeedsInput, detail: "requires environment variable BRAVE_API_KEY, not supplied"},
		"io.github.joelverhagen/knapcode-samplemcpserver@0.4.0-beta packages[0]": {
			target: "nuget:Knapcode.SampleMcpServer@0.4.0-beta", skip: conformance.NotSupported, detail: "a nuget package"},
		"io.github.modelcontextprotocol/filesystem@1.0.2 packages[0]": {
			target: "stdio:npx -y @modelcontextprotocol/server-filesystem@1.0.2 /Users/username/Desktop",
			argv:   []string{"npx", "-y", "@modelcontextprotocol/server-filesystem@1.0.2", "/Users/username/Desktop"},
			env:    []string{"LOG_LEVEL=info"}},
		"io.github.modelcontextprotocol/filesystem@1.0.2 packages[1]": {
			target: "oci:docker.io/mcp/filesystem:1.0.2", skip: conformance.NotSupported, detail: "a oci package"},
		"io.github.example/weather-mcp@0.5.0 packages[0]": {
			target: "pypi:weather-mcp-server@0.5.0", skip: conformance.NotSupported, detail: "a pypi package"},
		"io.modelcontextprotocol.anonymous/hybrid-mcp@1.5.0 packages[0]": {
			target: "stdio:npx -y @example/hybrid-mcp-server@1.5.0 --mode local",
			argv:   []string{"npx", "-y", "@example/hybrid-mcp-server@1.5.0", "--mode", "local"}},
		"io.modelcontextprotocol.anonymous/hybrid-mcp@1.5.0 remotes[0]": {
			target: "https://mcp.anonymous.modelcontextprotocol.io/http", header: map[string]string{"X-Region": "us-east-1"},
			skip: conformance.NeedsInput, detail: "header X-API-Key"},
		"io.modelcontextprotocol.anonymous/hybrid-mcp@1.5.0 remotes[1]": {
			target: "https://mcp.anonymous.modelcontextprotocol.io/sse", skip: conformance.SSETransport, detail: "HTTP+SSE"},
		"io.modelcontextprotocol/text-editor@1.0.2 packages[0]": {
			target: "mcpb:https://github.com/modelcontextprotocol/text-editor-mcpb/releases/download/v1.0.2/text-editor.mcpb",
			skip:   conformance.NotSupported, detail: "a mcpb package"},
		"io.snyk/cli-mcp@1.1298.0 packages[0]": {
			target: "stdio:npx -y snyk@1.1298.0 mcp -t stdio",
			argv:   []string{"npx", "-y", "snyk@1.1298.0", "mcp", "-t", "stdio"}},
	}
	var all []conformance.Target
	for _, f := range []string{"with-package.json", "with-remote.json", "minimal.json", "generic-examples.json"} {
		all = append(all, readRegistryFile(t, f, conformance.RegistryOptions{})...)
	}
	got := byEntry(t, all)
	if len(got) != len(cases) || len(all) != len(cases) {
		t.Errorf("%d targets (%d distinct), want %d", len(all), len(got), len(cases))
	}
	for key, w := range cases {
		tg, ok := got[key]
		if !ok {
			t.Errorf("%s: no target", key)
			continue
		}
		if tg.Target != w.target || !reflect.DeepEqual(tg.Argv, w.argv) || !reflect.DeepEqual(tg.Env, w.env) {
			t.Errorf("%s: target %q argv %q env %q, want %q %q %q", key, tg.Target, tg.Argv, tg.Env, w.target, w.argv, w.env)
		}
		for k, v := range w.header {
			if tg.Header.Get(k) != v {
				t.Errorf("%s: header %s %q, want %q", key, k, tg.Header.Get(k), v)
			}
		}
		switch {
		case w.skip == "" && tg.Skip != nil:
			t.Errorf("%s: skipped %+v", key, *tg.Skip)
		case w.skip != "" && (tg.Skip == nil || tg.Skip.Category != w.skip || !strings.Contains(tg.Skip.Detail, w.detail)):
			t.Errorf("%s: skip %+v, want %s with %q", key, tg.Skip, w.skip, w.detail)
		}
	}
}

// Inputs the operator gives fill what the document requires: an
// environment variable reaches the server's environment, never the
// report's target; a header goes with that target only; a positional
// argument is named by its valueHint and shown as {valueHint}.
func TestRegistryInputsFromTheOperator(t *testing.T) {
	opts := conformance.RegistryOptions{Values: map[string]string{
		"API_KEY": "k-123", "Authorization": "Bearer t-456", "config_path": "/srv/secret.conf", "host": "mcp.internal.example",
	}}
	got := byEntry(t, append(readRegistryFile(t, "with-package.json", opts), readRegistryFile(t, "with-remote.json", opts)...))
	pkg := got["io.github.user/local-weather@1.0.0 packages[0]"]
	if pkg.Skip != nil || !reflect.DeepEqual(pkg.Env, []string{"API_KEY=k-123"}) ||
		!reflect.DeepEqual(pkg.Argv, []string{"npx", "-y", "@modelcontextprotocol/server-weather@1.0.0", "/srv/secret.conf", "--port", "8080"}) ||
		pkg.Target != "stdio:npx -y @modelcontextprotocol/server-weather@1.0.0 {config_path} --port 8080" {
		t.Errorf("package: %+v", pkg)
	}
	rem := got["io.github.user/remote-weather@2.1.0 remotes[0]"]
	if rem.Skip != nil || rem.Header.Get("Authorization") != "Bearer t-456" || rem.Target != "https://mcp.internal.example/mcp" {
		t.Errorf("remote: %+v", rem)
	}
}

// A /v0.1/servers response, pages of it, a {"server": ...} response and a
// JSON array of server.json documents are all read; an entry met twice
// (overlapping pages) is kept once.
func TestRegistryListResponsesAndPages(t *testing.T) {
	page := func(name, cursor string) string {
		return `{"servers": [{"server": {"name": "` + name + `", "description": "d", "version": "1.0.0",
			"remotes": [{"type": "streamable-http", "url": "http://127.0.0.1:9/mcp"}]},
			"_meta": {"io.modelcontextprotocol.registry/official": {"status": "active", "isLatest": true}}}],
			"metadata": {"nextCursor": "` + cursor + `", "count": 1}}`
	}
	in := page("io.example/a", "io.example/a:1.0.0") + "\n" + page("io.example/b", "") + "\n" + page("io.example/b", "") + "\n" +
		`{"server": {"name": "io.example/c", "version": "2.0.0", "remotes": [{"type": "sse", "url": "http://127.0.0.1:9/sse"}]}}` + "\n" +
		`[{"name": "io.example/d", "version": "0.1.0", "packages": [{"registryType": "npm", "identifier": "d", "version": "0.1.0", "transport": {"type": "streamable-http", "url": "http://localhost:8080/mcp"}}]}]`
	targets, repeats, err := conformance.ReadRegistry(strings.NewReader(in), "pages.json", conformance.RegistryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := byEntry(t, targets)
	if repeats != 1 || len(targets) != 4 {
		t.Fatalf("%d targets, %d repeats: %v", len(targets), repeats, got)
	}
	if a := got["io.example/a@1.0.0 remotes[0]"]; a.Target != "http://127.0.0.1:9/mcp" || a.Skip != nil {
		t.Errorf("a: %+v", a)
	}
	if c := got["io.example/c@2.0.0 remotes[0]"]; c.Skip == nil || c.Skip.Category != conformance.SSETransport {
		t.Errorf("c: %+v", c)
	}
	if d := got["io.example/d@0.1.0 packages[0]"]; d.Skip == nil || d.Skip.Category != conformance.NotSupported ||
		!strings.Contains(d.Skip.Detail, "transport streamable-http") {
		t.Errorf("d: %+v", d)
	}
}

// Bad input is an error that names the file, the line and what is wrong;
// target lines are not taken for registry documents.
func TestRegistryBadInputNamesTheLine(t *testing.T) {
	for in, want := range map[string]string{
		"{\"name\": \"io.example/a\", \"version\": \"1\"}\n\n{\"name\": \"io.example/b\",\n \"version\": 3}":    "f.json:3: not a server.json",
		"{\"name\": \"io.example/a\", \"version\": \"1\"}\n{\"servers\": [{\"server\": {\"version\": \"1\"}}]}": "f.json:2: servers[0]: a server.json without a \"name\"",
		"{\"name\": \"io.example/a\"}":                             "f.json:1: io.example/a has no \"version\"",
		"{\"name\": \"io.example/a\", \"version\": \"1\"}\n{\"nam": "f.json:2: document 2 is not JSON",
		"{\"servers\": {}}":                                        "f.json:1: \"servers\" is not a list",
		"{\"hello\": 1}":                                           "f.json:1: want a server.json",
		"[3]":                                                      "f.json:1: item 0: want a server.json",
		"{\"name\": \"old/x\", \"version_detail\": {\"version\": \"1\"}}": "before 2025-09-16",
		"{\"servers\": []}": "no servers",
	} {
		_, _, err := conformance.ReadRegistry(strings.NewReader(in), "f.json", conformance.RegistryOptions{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
	for in, registry := range map[string]bool{
		"http://a.example/mcp\n":                      false,
		"{\"target\": \"http://a.example/mcp\"}\n":    false,
		"# a list\nstdio:npx -y x\n":                  false,
		"{\"target\": \"http://a.example/mcp\"\n":     false, // a broken target line stays a target line
		"\n  {\"name\": \"io.example/a\"}":            true,
		"[{\"name\": \"io.example/a\"}]":              true,
		"{\"servers\": [], \"metadata\": {}}":         true,
		"{\"name\": \"io.example/a\",\n \"version\":": true, // a broken document is the registry's to report
	} {
		if got := conformance.LooksLikeRegistry([]byte(in)); got != registry {
			t.Errorf("LooksLikeRegistry(%q) = %v", in, got)
		}
	}
}

// A value built from {variables}: filled from the variables' defaults and
// the operator's values; a required variable no one gives makes the entry
// needs_input, naming it; an optional argument whose variable is not given
// is left out.
func TestRegistryValueVariables(t *testing.T) {
	doc := `{"name": "io.example/v", "version": "1.0.0", "packages": [{"registryType": "npm", "identifier": "v", "version": "1.0.0",
 "transport": {"type": "stdio"}, "packageArguments": [
  {"type": "named", "name": "--db", "value": "{host}:{port}", "isRequired": true, "variables": {"host": {"isRequired": true}, "port": {"default": "5432"}}},
  {"type": "named", "name": "--tag", "value": "t-{tag}", "variables": {"tag": {}}}]}]}`
	read := func(values map[string]string) conformance.Target {
		targets, _, err := conformance.ReadRegistry(strings.NewReader(doc), "v.json", conformance.RegistryOptions{Values: values})
		if err != nil || len(targets) != 1 {
			t.Fatal(err, targets)
		}
		return targets[0]
	}
	if tg := read(nil); tg.Skip == nil || tg.Skip.Category != conformance.NeedsInput || !strings.Contains(tg.Skip.Detail, "package argument --db {host}") {
		t.Errorf("without host: %+v", tg)
	}
	tg := read(map[string]string{"host": "db.internal"})
	if tg.Skip != nil || !reflect.DeepEqual(tg.Argv, []string{"npx", "-y", "v@1.0.0", "--db", "db.internal:5432"}) ||
		tg.Target != "stdio:npx -y v@1.0.0 --db {host}:5432" {
		t.Errorf("with host: %+v", tg)
	}
}
