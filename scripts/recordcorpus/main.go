// Command recordcorpus records how real MCP servers published on npm answer
// a tools/call of a tool they do not have, and how some of their real tools
// answer when they fail. It writes testdata/notfound/corpus.jsonl.
//
// It is run by scripts/record-notfound-corpus.sh, which installs the pinned
// packages outside the repository and runs this program in a network
// namespace that has only loopback. It is never run by the tests.
//
//	go run ./scripts/recordcorpus -list            # the npm specs to install
//	go run ./scripts/recordcorpus -root DIR -out F # record
//	go run ./scripts/recordcorpus -table F         # the README's table of shapes
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// maxKnownAnswer is the longest known-failing answer kept in the corpus;
// unknown-tool answers are always kept whole.
const maxKnownAnswer = 4 << 10

const (
	protocolVersion = "2025-11-25"
	startTimeout    = 30 * time.Second
	callTimeout     = 5 * time.Second
)

// unknownNames are the made-up names every server is asked to call, besides
// a near-miss typo of one of its own listed tools.
var unknownNames = []string{"__toolguard_probe_nonexistent_tool__", "get_wether"}

// Entry is one line of the corpus.
type Entry struct {
	Package string `json:"package"`
	Version string `json:"version"`
	Kind    string `json:"kind"` // "unknown" or "known-failing"
	Tool    string `json:"tool"`
	Request string `json:"request"`
	Answer  string `json:"answer"`
}

// Status is what happened to one server; the script keeps it beside the
// corpus for the README.
type Status struct {
	Package string   `json:"package"`
	Version string   `json:"version"`
	Started bool     `json:"started"`
	Reason  string   `json:"reason,omitempty"`
	Listed  []string `json:"listed"` // every name its tools/list gave (all pages), once for all its entries
	Entries int      `json:"entries"`
	Notes   []string `json:"notes,omitempty"`
}

func main() {
	list := flag.Bool("list", false, "print the npm specs (package@version) to install, one a line, and exit")
	root := flag.String("root", "/tmp/npmcorpus", "scratch directory: pkgs/<spec>/node_modules, work/, home/, empty/")
	out := flag.String("out", "testdata/notfound/corpus.jsonl", "corpus to write")
	statusOut := flag.String("status", "testdata/notfound/servers.json", "per-server status to write")
	only := flag.String("only", "", "record (and -list) only the packages whose name contains one of these comma-separated substrings")
	table := flag.String("table", "", "print the markdown table of unknown-tool answer shapes of this corpus and exit")
	flag.Parse()

	if *list {
		for _, s := range servers {
			if *only == "" || matchOnly(s.Package, *only) {
				fmt.Println(s.spec())
			}
		}
		return
	}
	if *table != "" {
		if err := printTable(*table, *statusOut); err != nil {
			fmt.Fprintln(os.Stderr, "recordcorpus:", err)
			os.Exit(1)
		}
		return
	}

	var entries []Entry
	var statuses []Status
	for _, s := range servers {
		if *only != "" && !matchOnly(s.Package, *only) {
			continue
		}
		fmt.Fprintf(os.Stderr, "== %s\n", s.spec())
		es, st := record(*root, s)
		fmt.Fprintf(os.Stderr, "   started=%v tools=%d entries=%d %s\n", st.Started, len(st.Listed), len(es), st.Reason)
		for _, n := range st.Notes {
			fmt.Fprintf(os.Stderr, "   note: %s\n", n)
		}
		entries = append(entries, es...)
		statuses = append(statuses, st)
	}
	if err := writeJSONL(*out, entries); err != nil {
		fmt.Fprintln(os.Stderr, "recordcorpus:", err)
		os.Exit(1)
	}
	b, err := json.MarshalIndent(statuses, "", "  ")
	if err == nil {
		err = os.WriteFile(*statusOut, append(b, '\n'), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "recordcorpus:", err)
		os.Exit(1)
	}
}

func writeJSONL(path string, entries []Entry) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, e := range entries {
		if err := enc.Encode(e); err != nil {
			return err
		}
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// safeName is the directory name the script installs a spec into.
func safeName(spec string) string {
	return strings.NewReplacer("@", "_", "/", "_").Replace(spec)
}

// command resolves the server's command line inside its install directory.
func (s Server) command(root string) (string, []string, error) {
	dir := filepath.Join(root, "pkgs", safeName(s.spec()))
	if s.Script != "" {
		return "node", append([]string{filepath.Join(dir, s.Script)}, s.Args...), nil
	}
	bin := s.Bin
	if bin == "" {
		var err error
		bin, err = defaultBin(filepath.Join(dir, "node_modules", s.Package, "package.json"))
		if err != nil {
			return "", nil, err
		}
	}
	p := filepath.Join(dir, "node_modules", ".bin", bin)
	if _, err := os.Stat(p); err != nil {
		return "", nil, fmt.Errorf("not installed: %v", err)
	}
	return p, s.Args, nil
}

// defaultBin is the package's only bin, or the one named like the package.
func defaultBin(pkgJSON string) (string, error) {
	b, err := os.ReadFile(pkgJSON)
	if err != nil {
		return "", fmt.Errorf("not installed: %v", err)
	}
	var pj struct {
		Name string          `json:"name"`
		Bin  json.RawMessage `json:"bin"`
	}
	if err := json.Unmarshal(b, &pj); err != nil {
		return "", err
	}
	var one string
	if json.Unmarshal(pj.Bin, &one) == nil && one != "" {
		return filepath.Base(pj.Name), nil
	}
	var many map[string]string
	if err := json.Unmarshal(pj.Bin, &many); err != nil || len(many) == 0 {
		return "", fmt.Errorf("%s has no bin", pj.Name)
	}
	if len(many) == 1 {
		for k := range many {
			return k, nil
		}
	}
	base := filepath.Base(pj.Name)
	if _, ok := many[base]; ok {
		return base, nil
	}
	names := make([]string, 0, len(many))
	for k := range many {
		names = append(names, k)
	}
	sort.Strings(names)
	return "", fmt.Errorf("%s has several bins (%s): name one", pj.Name, strings.Join(names, ", "))
}

// conn is one running server.
type conn struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte
	stderr *tailBuffer
	nextID int
	notes  []string
}

// tailBuffer keeps the end of a server's stderr, which exec.Cmd copies
// in on a goroutine of its own while the recorder may read it.
type tailBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(p)
	if t.buf.Len() > 64<<10 {
		b := t.buf.Bytes()
		t.buf = *bytes.NewBuffer(append([]byte(nil), b[len(b)-32<<10:]...))
	}
	return len(p), nil
}

func (t *tailBuffer) tail() string {
	t.mu.Lock()
	s := strings.TrimSpace(t.buf.String())
	t.mu.Unlock()
	lines := strings.Split(s, "\n")
	var keep []string
	for i := len(lines) - 1; i >= 0 && len(keep) < 4; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			keep = append([]string{l}, keep...)
		}
	}
	s = strings.Join(keep, " | ")
	if len(s) > 600 {
		s = s[len(s)-600:]
	}
	return s
}

func start(root string, s Server) (*conn, error) {
	name, args, err := s.command(root)
	if err != nil {
		return nil, err
	}
	work := filepath.Join(root, "work", safeName(s.spec()))
	home := filepath.Join(root, "home")
	for _, d := range []string{work, home, filepath.Join(root, "empty")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = work
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"TMPDIR=" + work,
		"NO_COLOR=1",
	}
	for k, v := range s.Env {
		cmd.Env = append(cmd.Env, k+"="+strings.ReplaceAll(v, "$ROOT", root))
	}
	for i, a := range cmd.Args {
		cmd.Args[i] = strings.ReplaceAll(a, "$ROOT", root)
	}
	setGroup(cmd)
	c := &conn{cmd: cmd, lines: make(chan []byte, 64), stderr: &tailBuffer{}}
	cmd.Stderr = c.stderr
	c.stdin, err = cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		r := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				c.lines <- line
			}
			if err != nil {
				close(c.lines)
				return
			}
		}
	}()
	return c, nil
}

func (c *conn) stop() {
	c.stdin.Close()
	done := make(chan struct{})
	go func() { c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
	}
	killGroup(c.cmd)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
}

var errTimeout = errors.New("no answer in time")
var errExited = errors.New("the server closed its stdout")

// send writes one request line and waits for the line that answers its id.
// It returns the exact request line and the exact answer line, both without
// the newline that ends them.
func (c *conn) send(method string, params any, timeout time.Duration) (string, []byte, error) {
	c.nextID++
	req := map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": method}
	if params != nil {
		req["params"] = params
	}
	line, err := marshal(req)
	if err != nil {
		return "", nil, err
	}
	if _, err := c.stdin.Write(append([]byte(line), '\n')); err != nil {
		return line, nil, fmt.Errorf("write: %v", err)
	}
	want := fmt.Sprint(c.nextID)
	deadline := time.After(timeout)
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				return line, nil, errExited
			}
			l = bytes.TrimSuffix(l, []byte("\n"))
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(l, &msg) != nil {
				c.note("non-JSON line on stdout: %.120q", l)
				continue
			}
			if string(msg.ID) == want && msg.Method == "" {
				return line, l, nil
			}
			if msg.Method != "" && len(msg.ID) > 0 && string(msg.ID) != "null" {
				// A request from the server (roots/list, sampling,
				// elicitation): refuse it so the server goes on.
				reply, _ := marshal(map[string]any{"jsonrpc": "2.0", "id": msg.ID,
					"error": map[string]any{"code": -32601, "message": "Method not found"}})
				c.stdin.Write(append([]byte(reply), '\n'))
				c.note("server sent a request: %s", msg.Method)
			}
		case <-deadline:
			return line, nil, errTimeout
		}
	}
}

func (c *conn) notify(method string) error {
	line, err := marshal(map[string]any{"jsonrpc": "2.0", "method": method})
	if err != nil {
		return err
	}
	_, err = c.stdin.Write(append([]byte(line), '\n'))
	return err
}

func (c *conn) note(format string, args ...any) {
	n := fmt.Sprintf(format, args...)
	for _, have := range c.notes {
		if have == n {
			return
		}
	}
	c.notes = append(c.notes, n)
}

func marshal(v any) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

// record starts the server, initializes it, lists its tools and makes the
// calls of the corpus; the Status says how far it got and why it stopped.
func record(root string, s Server) (entries []Entry, st Status) {
	st = Status{Package: s.Package, Version: s.Version}
	c, err := start(root, s)
	if err != nil {
		st.Reason = "did not start: " + err.Error()
		return nil, st
	}
	defer c.stop()
	defer func() { st.Notes = append(st.Notes, c.notes...) }() // st is the result: the notes are kept

	if err := c.initialize(); err != nil {
		return nil, c.failed(st, err)
	}
	st.Started = true
	// The raw lists stay in the scratch directory, for writing probes.
	listed, err := c.listTools(filepath.Join(root, "work", safeName(s.spec()), "tools-list.jsonl"))
	if err != nil {
		return nil, c.failed(st, err)
	}
	st.Listed = listed
	entries = c.callAll(root, s, listed)
	st.Entries = len(entries)
	return entries, st
}

// failed is st with the reason it stopped: err, and the server's last lines
// on stderr.
func (c *conn) failed(st Status, err error) Status {
	st.Reason = err.Error()
	if t := c.stderr.tail(); t != "" {
		st.Reason += "; stderr: " + t
	}
	return st
}

// initialize opens the session; the error names the step that failed.
func (c *conn) initialize() error {
	_, ans, err := c.send("initialize", map[string]any{
		"protocolVersion": protocolVersion,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "toolguard-recordcorpus", "version": "0.1.0"},
	}, startTimeout)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	if e := errorOf(ans); e != "" {
		return fmt.Errorf("initialize: %w", errors.New(e))
	}
	if err := c.notify("notifications/initialized"); err != nil {
		return fmt.Errorf("notifications/initialized: %w", err)
	}
	return nil
}

// listTools pages through tools/list (at most 10 pages), writing each raw
// answer as a line of rawPath, and returns the listed names, never nil.
func (c *conn) listTools(rawPath string) ([]string, error) {
	raw, err := os.Create(rawPath)
	if err != nil {
		return nil, fmt.Errorf("tools/list: %w", err)
	}
	defer raw.Close()
	listed := []string{}
	var cursor string
	for page := 0; page < 10; page++ {
		var params any
		if cursor != "" {
			params = map[string]any{"cursor": cursor}
		}
		_, ans, err := c.send("tools/list", params, startTimeout)
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		raw.Write(append(ans, '\n'))
		var names []string
		if names, cursor, err = parseToolsPage(ans); err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		listed = append(listed, names...)
		if cursor == "" {
			break
		}
	}
	return listed, nil
}

// parseToolsPage reads the names and the next cursor of a tools/list answer.
func parseToolsPage(ans []byte) (names []string, next string, err error) {
	var lr struct {
		Result *struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		} `json:"result"`
	}
	if err := json.Unmarshal(ans, &lr); err != nil || lr.Result == nil {
		return nil, "", fmt.Errorf("not a list: %.300s", ans)
	}
	for _, t := range lr.Result.Tools {
		names = append(names, t.Name)
	}
	return names, lr.Result.NextCursor, nil
}

// callAll makes the corpus's calls: the made-up names and a near-miss of a
// listed one ("unknown"), then the package's probes of listed tools
// ("known-failing"). A call whose answer is not kept leaves a note instead.
func (c *conn) callAll(root string, s Server, listed []string) []Entry {
	var entries []Entry
	call := func(kind, tool string, args map[string]any) {
		if req, ans, ok := c.callTool(kind, tool, args); ok {
			entries = append(entries, Entry{Package: s.Package, Version: s.Version, Kind: kind,
				Tool: tool, Request: req, Answer: string(ans)})
		}
	}
	call("unknown", unknownNames[0], nil)
	if typo := nearMiss(listed); typo != "" {
		call("unknown", typo, nil)
	}
	call("unknown", unknownNames[1], nil)
	for _, p := range probes[s.Package] {
		if !contains(listed, p.Tool) {
			c.note("probe %s: not listed", p.Tool)
			continue
		}
		call("known-failing", p.Tool, expand(p.Args, root))
	}
	return entries
}

// callTool calls tool with args (nil: none) and returns the exact request
// and answer lines; ok is false, with a note, for an answer that is not
// kept: none, not UTF-8, or a known-failing one over maxKnownAnswer.
func (c *conn) callTool(kind, tool string, args map[string]any) (req string, ans []byte, ok bool) {
	if args == nil {
		args = map[string]any{}
	}
	req, ans, err := c.send("tools/call", map[string]any{"name": tool, "arguments": args}, callTimeout)
	switch {
	case err != nil:
		c.note("tools/call %s: %v", tool, err)
	case !utf8.Valid(ans):
		c.note("tools/call %s: answer is not UTF-8, left out", tool)
	case kind == "known-failing" && len(ans) > maxKnownAnswer:
		c.note("tools/call %s: answer of %d bytes, longer than 4 KiB, left out", tool, len(ans))
	default:
		return req, ans, true
	}
	return "", nil, false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// nearMiss drops one letter from the first listed tool whose name is long
// enough, giving a name the server does not list.
func nearMiss(listed []string) string {
	for _, n := range listed {
		if len(n) < 4 {
			continue
		}
		for i := len(n) - 2; i > 0; i-- {
			t := n[:i] + n[i+1:]
			if n[i] != '_' && n[i] != '-' && !contains(listed, t) {
				return t
			}
		}
	}
	return ""
}

func errorOf(ans []byte) string {
	var m struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(ans, &m) == nil && m.Error != nil {
		return fmt.Sprintf("JSON-RPC %d %s", m.Error.Code, m.Error.Message)
	}
	return ""
}

// expand replaces "$ROOT" in the probe's string arguments, at any depth.
func expand(args map[string]any, root string) map[string]any {
	out := make(map[string]any, len(args))
	for k, v := range args {
		out[k] = expandValue(v, root)
	}
	return out
}

func expandValue(v any, root string) any {
	switch x := v.(type) {
	case string:
		return strings.ReplaceAll(x, "$ROOT", root)
	case []string:
		out := make([]string, len(x))
		for i, s := range x {
			out[i] = strings.ReplaceAll(s, "$ROOT", root)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = expandValue(e, root)
		}
		return out
	case map[string]any:
		return expand(x, root)
	}
	return v
}

// matchOnly: pkg contains one of the comma-separated substrings of only.
func matchOnly(pkg, only string) bool {
	for _, o := range strings.Split(only, ",") {
		if o != "" && strings.Contains(pkg, o) {
			return true
		}
	}
	return false
}
