package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
)

// A RegistryRef names the MCP Registry entry a target came from.
type RegistryRef struct {
	Name    string `json:"name"`    // the server's name, "io.github.user/weather"
	Version string `json:"version"` // the server's version, "1.0.2"
	// Entry is the server.json member the target was made from:
	// "remotes[0]", "packages[1]"; empty for a server.json with neither.
	Entry string `json:"entry,omitempty"`
}

// RegistryOptions configures ReadRegistry.
type RegistryOptions struct {
	// Values are the operator's inputs, by name: an environment variable
	// of a package, a header of a remote, a URL or value variable
	// ({name}), a positional argument's valueHint, a named argument's
	// name ("--port"). The checker never invents one.
	Values map[string]string
	// Npx is the command an npm package runs with, the package spec and
	// its arguments after it. Default "npx", "-y". A test points it at a
	// local resolver so that nothing is downloaded.
	Npx []string
}

// LooksLikeRegistry reports whether data holds MCP Registry documents (a
// server.json, a /v0.1/servers response, a list of them) rather than
// fleet target lines: its first non-space byte opens a JSON array, or a
// JSON object without a "target" member.
func LooksLikeRegistry(data []byte) bool {
	data = bytes.TrimLeft(data, " \t\r\n\ufeff")
	if len(data) == 0 {
		return false
	}
	if data[0] == '[' {
		return true
	}
	if data[0] != '{' {
		return false
	}
	var first map[string]json.RawMessage
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&first); err != nil {
		// Not one JSON object: a registry document cut or broken is
		// reported by ReadRegistry with its line, a target line by the
		// target reader: a first line naming "target" is one.
		line, _, _ := bytes.Cut(data, []byte("\n"))
		return !bytes.Contains(line, []byte(`"target"`))
	}
	_, target := first["target"]
	return !target
}

// ReadRegistry reads MCP Registry documents and returns one fleet target
// per remote and per package of each server, labelled name@version, with
// Target.Registry naming the entry. It reads, one after another or in JSON
// arrays: server.json documents, GET /v0.1/servers responses ({"servers":
// [{"server": ..., "_meta": ...}], "metadata": ...}, as many pages as
// saved), and single {"server": ...} responses. A streamable-http remote
// becomes an HTTP target; an npm package with stdio transport becomes
// Npx, identifier@version and its declared arguments; anything else is a
// target with Skip set, so it is reported UNVERIFIED with the reason
// (SSETransport, NotSupported, NeedsInput, NoEndpoint). An entry repeated
// (same name, version and member) is kept once; skipped counts the
// repeats. name is used in errors, which give the document's line.
func ReadRegistry(r io.Reader, name string, opts RegistryOptions) (targets []Target, skipped int, err error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, 0, err
	}
	if len(opts.Npx) == 0 {
		opts.Npx = []string{"npx", "-y"}
	}
	rd := &registryReader{opts: opts, seen: map[string]bool{}}
	data = bytes.TrimPrefix(data, []byte("\ufeff")) // a byte order mark
	dec := json.NewDecoder(bytes.NewReader(data))
	for n := 1; ; n++ {
		start := int(dec.InputOffset())
		for start < len(data) && strings.IndexByte(" \t\r\n", data[start]) >= 0 {
			start++
		}
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == io.EOF {
			break
		}
		where := fmt.Sprintf("%s:%d", name, lineAt(data, start))
		if err != nil {
			var syn *json.SyntaxError
			if errors.As(err, &syn) {
				where = fmt.Sprintf("%s:%d", name, lineAt(data, int(syn.Offset)))
			}
			return nil, 0, fmt.Errorf("%s: document %d is not JSON: %v", where, n, err)
		}
		if err := rd.document(raw, where); err != nil {
			return nil, 0, err
		}
	}
	if len(rd.targets) == 0 {
		return nil, 0, fmt.Errorf("%s: no servers in the registry documents", name)
	}
	return rd.targets, rd.repeats, nil
}

// lineAt returns the line of data that offset falls on, from 1.
func lineAt(data []byte, offset int) int {
	offset = min(max(offset, 0), len(data))
	return 1 + bytes.Count(data[:offset], []byte("\n"))
}

type registryReader struct {
	opts    RegistryOptions
	targets []Target
	seen    map[string]bool
	repeats int
}

// document reads one JSON document: an array of documents, a list
// response, a single response or a server.json.
func (rd *registryReader) document(raw json.RawMessage, where string) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return fmt.Errorf("%s: %v", where, err)
		}
		for i, it := range items {
			if err := rd.document(it, fmt.Sprintf("%s: item %d", where, i)); err != nil {
				return err
			}
		}
		return nil
	}
	var doc map[string]json.RawMessage
	if json.Unmarshal(raw, &doc) != nil || doc == nil {
		return fmt.Errorf("%s: want a server.json, a /v0.1/servers response or a list of them, not %s", where, clip(raw))
	}
	switch {
	case doc["servers"] != nil:
		var servers []json.RawMessage
		if err := json.Unmarshal(doc["servers"], &servers); err != nil {
			return fmt.Errorf("%s: \"servers\" is not a list: %v", where, err)
		}
		for i, s := range servers {
			if err := rd.entry(s, fmt.Sprintf("%s: servers[%d]", where, i)); err != nil {
				return err
			}
		}
		return nil
	case doc["server"] != nil:
		return rd.entry(raw, where)
	case doc["name"] != nil:
		return rd.server(raw, where)
	}
	return fmt.Errorf("%s: want a server.json (with \"name\"), a /v0.1/servers response (with \"servers\") or a {\"server\": ...} response", where)
}

// entry reads one member of a list response: {"server": ..., "_meta":
// ...}, or a server.json itself (as older responses held them).
func (rd *registryReader) entry(raw json.RawMessage, where string) error {
	var e struct {
		Server json.RawMessage `json:"server"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return fmt.Errorf("%s: not an object: %v", where, err)
	}
	if e.Server != nil {
		return rd.server(e.Server, where)
	}
	return rd.server(raw, where)
}

// The server.json members the checker reads (schema 2025-09-29 to
// 2025-12-11, and the draft).
type (
	regServer struct {
		Name          string          `json:"name"`
		Version       string          `json:"version"`
		VersionDetail json.RawMessage `json:"version_detail"`
		Packages      []regPackage    `json:"packages"`
		Remotes       []regTransport  `json:"remotes"`
	}
	regInput struct {
		IsRequired bool                `json:"isRequired"`
		IsSecret   bool                `json:"isSecret"`
		Value      *string             `json:"value"`
		Default    *string             `json:"default"`
		Variables  map[string]regInput `json:"variables"`
	}
	regArgument struct {
		regInput
		Type      string `json:"type"`
		Name      string `json:"name"`
		ValueHint string `json:"valueHint"`
	}
	regKeyValue struct {
		regInput
		Name string `json:"name"`
	}
	regTransport struct {
		Type      string              `json:"type"`
		URL       string              `json:"url"`
		Headers   []regKeyValue       `json:"headers"`
		Variables map[string]regInput `json:"variables"`
	}
	regPackage struct {
		RegistryType         string        `json:"registryType"`
		RegistryBaseURL      string        `json:"registryBaseUrl"`
		Identifier           string        `json:"identifier"`
		Version              string        `json:"version"`
		RuntimeHint          string        `json:"runtimeHint"`
		Transport            regTransport  `json:"transport"`
		RuntimeArguments     []regArgument `json:"runtimeArguments"`
		PackageArguments     []regArgument `json:"packageArguments"`
		EnvironmentVariables []regKeyValue `json:"environmentVariables"`
	}
)

func (rd *registryReader) server(raw json.RawMessage, where string) error {
	var s regServer
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("%s: not a server.json: %v", where, err)
	}
	switch {
	case s.Name == "":
		return fmt.Errorf("%s: a server.json without a \"name\"", where)
	case s.Version == "" && s.VersionDetail != nil:
		return fmt.Errorf("%s: %s is in the server.json format of before 2025-09-16 (version_detail); it is not read", where, s.Name)
	case s.Version == "":
		return fmt.Errorf("%s: %s has no \"version\"", where, s.Name)
	}
	label := s.Name + "@" + s.Version
	add := func(entry string, t Target) {
		key := label + "\x00" + entry
		if rd.seen[key] {
			rd.repeats++
			return
		}
		rd.seen[key] = true
		t.Label = label
		t.Registry = &RegistryRef{Name: s.Name, Version: s.Version, Entry: entry}
		rd.targets = append(rd.targets, t)
	}
	if len(s.Remotes) == 0 && len(s.Packages) == 0 {
		add("", Target{Target: "registry:" + label, Skip: &Skipped{NoEndpoint,
			"the server.json lists neither remotes nor packages: nothing to check"}})
	}
	for i, rem := range s.Remotes {
		add(fmt.Sprintf("remotes[%d]", i), rd.remote(rem))
	}
	for i, pkg := range s.Packages {
		add(fmt.Sprintf("packages[%d]", i), rd.pkg(pkg))
	}
	return nil
}

// resolver resolves inputs against the document and the operator's
// values, and collects what is required and missing.
type resolver struct {
	values  map[string]string
	missing []string
}

func (r *resolver) need(what string) {
	if !slices.Contains(r.missing, what) {
		r.missing = append(r.missing, what)
	}
}

// braces matches a {variable} in a value or URL template.
var braces = regexp.MustCompile(`\{([^{}]+)\}`)

// substitute replaces the {variables} of s: each from the operator's
// values, else the variable's own value, else its default. A variable
// that has none is recorded missing if required; ok is false when any is
// left.
// Braces naming no declared variable stay as they are, as the schema
// says, unless the operator gave a value of that name.
func (r *resolver) substitute(s string, vars map[string]regInput, what string) (string, bool) {
	ok := true
	out := braces.ReplaceAllStringFunc(s, func(m string) string {
		name := m[1 : len(m)-1]
		if v, given := r.values[name]; given {
			return v
		}
		in, declared := vars[name]
		switch {
		case !declared:
			return m
		case in.Value != nil:
			return *in.Value
		case in.Default != nil:
			return *in.Default
		}
		ok = false
		if in.IsRequired {
			r.need(fmt.Sprintf("%s {%s}", what, name))
		}
		return m
	})
	return out, ok
}

// value resolves one input: its own value (variables substituted), else
// the operator's value named key, else its default. set is false when it
// has none; a required input without one is recorded as missing.
func (r *resolver) value(in regInput, key, what string) (v string, set bool) {
	if in.Value != nil {
		v, ok := r.substitute(*in.Value, in.Variables, what)
		if !ok && in.IsRequired && len(r.missing) == 0 {
			r.need(what)
		}
		return v, ok
	}
	if v, given := r.values[key]; given && key != "" {
		return v, true
	}
	if in.Default != nil {
		return *in.Default, true
	}
	if in.IsRequired {
		r.need(what)
	}
	return "", false
}

func (r *resolver) needsInput(t Target) Target {
	t.Skip = &Skipped{NeedsInput, "requires " + strings.Join(r.missing, ", ") +
		", not supplied (toolguard-check -env NAME=VALUE or -env-file): the checker never invents an input, and this entry is not checked"}
	return t
}

func (rd *registryReader) remote(rem regTransport) Target {
	r := &resolver{values: rd.opts.Values}
	url, _ := r.substitute(rem.URL, rem.Variables, "URL variable")
	t := Target{Target: url}
	switch rem.Type {
	case "streamable-http":
	case "sse":
		t.Skip = &Skipped{SSETransport, "an sse remote: the old HTTP+SSE transport (2024-11-05), which the checker does not speak; not checked"}
		return t
	default:
		t.Skip = &Skipped{NotSupported, fmt.Sprintf("a remote of type %q, which the checker does not know (it checks streamable-http); not checked", rem.Type)}
		return t
	}
	for _, h := range rem.Headers {
		if v, set := r.value(h.regInput, h.Name, "header "+h.Name); set {
			if t.Header == nil {
				t.Header = http.Header{}
			}
			t.Header.Set(strings.TrimSpace(h.Name), v)
		}
	}
	if len(r.missing) > 0 {
		return r.needsInput(t)
	}
	if rest := braces.FindString(url); rest != "" {
		t.Skip = &Skipped{NeedsInput, fmt.Sprintf("the URL still holds %s, a variable the document does not declare and no -env gives; not checked", rest)}
	}
	return t
}

func (rd *registryReader) pkg(p regPackage) Target {
	spec := p.Identifier
	if p.Version != "" {
		spec += "@" + p.Version
	}
	t := Target{Target: p.RegistryType + ":" + spec}
	notRun := func(why string) Target {
		t.Skip = &Skipped{NotSupported, why + "; not checked"}
		return t
	}
	switch {
	case p.RegistryType != "npm":
		return notRun(fmt.Sprintf("a %s package: the checker runs npm packages only, and does not guess how to run another kind", orNone(p.RegistryType)))
	case p.Transport.Type != "stdio":
		return notRun(fmt.Sprintf("an npm package with transport %s: the checker runs npm packages over stdio only", orNone(p.Transport.Type)))
	case p.Identifier == "":
		return notRun("an npm package without an identifier")
	case p.Version == "":
		return notRun("an npm package without a version: the checker runs the exact version a document names, never the latest")
	case p.RegistryBaseURL != "" && strings.TrimRight(p.RegistryBaseURL, "/") != "https://registry.npmjs.org":
		return notRun(fmt.Sprintf("an npm package from %s: the checker runs packages from the npm registry only", p.RegistryBaseURL))
	case p.RuntimeHint != "" && p.RuntimeHint != "npx":
		return notRun(fmt.Sprintf("an npm package for the runtime %q: the checker runs npm packages with npx only", p.RuntimeHint))
	}
	r := &resolver{values: rd.opts.Values}
	argv := slices.Clone(rd.opts.Npx)
	shown := slices.Clone(rd.opts.Npx)
	rd.arguments(r, p.RuntimeArguments, "runtime", &argv, &shown)
	argv, shown = append(argv, spec), append(shown, spec)
	rd.arguments(r, p.PackageArguments, "package", &argv, &shown)
	var env []string
	for _, e := range p.EnvironmentVariables {
		if v, set := r.value(e.regInput, e.Name, "environment variable "+e.Name); set {
			env = append(env, e.Name+"="+v)
		}
	}
	t = Target{Target: "stdio:" + strings.Join(shown, " "), Argv: argv, Env: env}
	if len(r.missing) > 0 {
		return r.needsInput(t)
	}
	return t
}

// arguments appends the declared arguments to argv, and to shown with the
// operator's values as {name} (they may be secrets): a positional one as
// its value, a named one as its name and its value, two words. An
// argument without a value is left out unless it is required, which makes
// it missing.
func (rd *registryReader) arguments(r *resolver, args []regArgument, kind string, argv, shown *[]string) {
	for _, a := range args {
		switch a.Type {
		case "positional":
			what := fmt.Sprintf("%s argument %s", kind, orNone(a.ValueHint))
			v, set := r.value(a.regInput, a.ValueHint, what)
			if set {
				*argv = append(*argv, v)
				*shown = append(*shown, rd.show(a.regInput, a.ValueHint, v))
			}
		case "named":
			v, set := r.value(a.regInput, a.Name, fmt.Sprintf("%s argument %s", kind, orNone(a.Name)))
			if set {
				*argv = append(*argv, a.Name, v)
				*shown = append(*shown, a.Name, rd.show(a.regInput, a.Name, v))
			}
		default:
			r.need(fmt.Sprintf("a %s argument of type %q, which the checker does not know", kind, a.Type))
		}
	}
}

// show is how an argument's value appears in the report's target: as
// {key} when it came from the operator or is marked secret, or when it
// holds an operator's value.
func (rd *registryReader) show(in regInput, key, v string) string {
	if in.IsSecret {
		return "{" + orNone(key) + "}"
	}
	if in.Value == nil {
		if _, given := rd.opts.Values[key]; given {
			return "{" + key + "}"
		}
		return v
	}
	shown := braces.ReplaceAllStringFunc(*in.Value, func(m string) string {
		name := m[1 : len(m)-1]
		if _, given := rd.opts.Values[name]; given {
			return m
		}
		if iv, ok := in.Variables[name]; ok {
			if iv.Value != nil {
				return *iv.Value
			}
			if iv.Default != nil {
				return *iv.Default
			}
		}
		return m
	})
	return shown
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
