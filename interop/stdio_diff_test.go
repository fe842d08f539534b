package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolguard/toolguard/internal/fixture"
	toolguard "github.com/toolguard/toolguard/middleware"
)

var graces atomic.Int64 // sessions that waited for an answer after the fence

// diffTools are the tools of the differential servers.
var diffTools = []string{"echo", "get_weather", "admin_only", "Ünïcode"}

// stdioRun is what one stdio session did.
type stdioRun struct {
	out      []string // the lines the client read after the handshake
	wrote    []string // guarded: the lines the server wrote after the handshake, less the answers to the guard's own requests and to the fence
	ran      []string // the tools that ran
	read     []string // the lines the server read (guarded: less the guard's own)
	rejected []string // the names of the not-found answers the guard translated
	own      int      // the guard's own requests the server read
	late     bool     // the session was ended by a timer (its grace, or quiet), not by its answer
}

// recorder collects names from tool handlers.
type stdioRanSet struct {
	mu  sync.Mutex
	ran []string
}

func (r *stdioRanSet) add(n string) {
	r.mu.Lock()
	r.ran = append(r.ran, n)
	r.mu.Unlock()
}

// lineTap records the lines read through it.
type lineTap struct {
	r   io.ReadCloser
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lineTap) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	l.mu.Lock()
	l.buf.Write(p[:n])
	l.mu.Unlock()
	return n, err
}

func (l *lineTap) Close() error { return l.r.Close() }

func (l *lineTap) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// writeTap records what the server writes to the guard.
type writeTap struct {
	w   io.WriteCloser
	mu  sync.Mutex
	buf bytes.Buffer
}

func (t *writeTap) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.buf.Write(p)
	t.mu.Unlock()
	return t.w.Write(p)
}

func (t *writeTap) Close() error { return t.w.Close() }

func (t *writeTap) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.String()
}

// runStdio serves one fresh sdk server ("mcpgo" or "gosdk") on pipes, with
// or without the guard, sends the 2025 handshake (unless modern) and then
// lines, closes the input and returns what happened once the server is done.
func runStdio(t testing.TB, sdk string, guarded, modern bool, lines []string) stdioRun {
	var rec stdioRanSet
	var run stdioRun
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var r io.ReadCloser = inR
	var w io.WriteCloser = outW
	var tapped *lineTap
	var wrote *writeTap
	if guarded {
		var mu sync.Mutex
		g, err := toolguard.NewStdio(inR, outW, toolguard.StdioOptions{OnTranslate: func(rej *toolguard.Rejection) {
			mu.Lock()
			run.rejected = append(run.rejected, rej.Name)
			mu.Unlock()
		}})
		if err != nil {
			panic(err)
		}
		tapped = &lineTap{r: g.Reader()}
		wrote = &writeTap{w: g.Writer()}
		r, w = tapped, wrote
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		defer w.Close()
		ctx := context.Background()
		switch sdk {
		case "mcpgo":
			s := server.NewMCPServer("diff", "1.0.0", server.WithToolCapabilities(true))
			for _, n := range diffTools {
				s.AddTool(mcp.NewTool(n, mcp.WithString("text")), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					rec.add(n)
					return mcp.NewToolResultText("ran " + n), nil
				})
			}
			s.AddTool(mcp.NewTool("fence"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("fence"), nil
			})
			ss := server.NewStdioServer(s)
			server.WithWorkerPoolSize(1)(ss)
			ss.Listen(ctx, r, w)
		case "gosdk":
			s := gosdk.NewServer(&gosdk.Implementation{Name: "diff", Version: "1.0.0"}, nil)
			for _, n := range diffTools {
				gosdk.AddTool(s, &gosdk.Tool{Name: n}, func(context.Context, *gosdk.CallToolRequest, textArgs) (*gosdk.CallToolResult, any, error) {
					rec.add(n)
					return &gosdk.CallToolResult{Content: []gosdk.Content{&gosdk.TextContent{Text: "ran " + n}}}, nil, nil
				})
			}
			gosdk.AddTool(s, &gosdk.Tool{Name: "fence"}, func(context.Context, *gosdk.CallToolRequest, textArgs) (*gosdk.CallToolResult, any, error) {
				return &gosdk.CallToolResult{}, nil, nil
			})
			s.Run(ctx, &gosdk.IOTransport{Reader: r, Writer: w})
		}
	}()
	br := bufio.NewReaderSize(outR, 1<<20)
	if !modern {
		io.WriteString(inW, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"diff","version":"1"}}}`+"\n")
		if l, err := br.ReadString('\n'); err != nil || !strings.Contains(l, `"init"`) {
			t.Errorf("%s: initialize answered %q, %v", sdk, l, err)
		}
		io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	}
	go func() {
		for _, l := range lines {
			io.WriteString(inW, l+"\n")
		}
		io.WriteString(inW, fence(modern)+"\n")
	}()
	lineCh := make(chan string, 16)
	go func() {
		defer close(lineCh)
		for {
			l, err := br.ReadString('\n')
			if l != "" {
				lineCh <- l
			}
			if err != nil {
				return
			}
		}
	}()
	var lineID []byte
	batch := false
	if len(lines) == 1 && sdk == "gosdk" {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		var ms []json.RawMessage
		if json.Unmarshal([]byte(lines[0]), &ms) == nil && len(ms) > 0 {
			batch = json.Unmarshal(ms[0], &m) == nil && len(m.ID) > 0
		} else if json.Unmarshal([]byte(lines[0]), &m) == nil && len(m.ID) > 0 && string(m.ID) != "null" {
			lineID = m.ID
		}
	}
	answered := lineID == nil && !batch
	// Many lines to go-sdk: whatever runs concurrently gets a while to answer.
	settle := len(lines) > 1 && sdk == "gosdk"
	if settle {
		answered = false
	}
	var grace <-chan time.Time
	for open := true; open; {
		select {
		case l, ok := <-lineCh:
			if !ok {
				open = false
				break
			}
			var m rpcMessage
			// The session holds one line: any answer other than the fence's
			// is its answer (go-sdk rewrites ids beyond int64).
			if !settle && !strings.Contains(l, `"id":"fence"`) && ((json.Unmarshal([]byte(l), &m) == nil && m.Method == "" && len(m.ID) > 0) || (batch && strings.HasPrefix(l, "["))) {
				answered = true
			}
			if strings.Contains(l, `"id":"fence"`) {
				if answered {
					inW.Close()
				} else {
					grace = time.After(100 * time.Millisecond)
					graces.Add(1)
				}
				continue
			}
			run.out = append(run.out, l)
			if answered && grace != nil {
				inW.Close()
			}
		case <-grace:
			inW.Close()
			run.late = true
		case <-time.After(3 * time.Second):
			// Nothing for a while: a server that decodes values (go-sdk)
			// may be waiting for the rest of one that never comes.
			inW.Close()
			run.late = true
		}
	}
	<-served
	run.ran = rec.ran
	if tapped != nil {
		for _, l := range strings.SplitAfter(tapped.String(), "\n") {
			if strings.Contains(l, `"id":"toolguard-`) {
				run.own++
			} else if l != "" {
				run.read = append(run.read, l)
			}
		}
		if !modern {
			run.read = run.read[2:] // the handshake
		}
		for i, l := range strings.SplitAfter(wrote.String(), "\n") {
			if l == "" || i == 0 && !modern || strings.Contains(l, `"id":"toolguard-`) || strings.Contains(l, `"id":"fence"`) {
				continue // the end, the handshake, the guard's own, the fence
			}
			run.wrote = append(run.wrote, l)
		}
	}
	return run
}

// faithful checks a guarded session against what the server itself wrote
// in it, whatever the server alone would have done: the client read every
// line the server wrote, byte for byte, except the server's own not-found
// answers the guard replaced, each by one answer of the guard's (OnTranslate
// was told of each), and nothing else.
func faithful(t testing.TB, sdk string, lines []string, run stdioRun) bool {
	t.Helper()
	got := map[string]int{}
	for _, l := range run.out {
		got[l]++
	}
	var replaced []string
	for _, l := range run.wrote {
		if got[l] > 0 {
			got[l]--
			continue
		}
		replaced = append(replaced, l)
	}
	var added []string
	for l, n := range got {
		for range n {
			added = append(added, l)
		}
	}
	ok := len(replaced) == len(run.rejected) && len(added) == len(run.rejected)
	for _, l := range added {
		_, _, isGuards := guardAnswer(l)
		ok = ok && isGuards
	}
	if !ok {
		t.Errorf("%s: the server wrote %q; the client did not read %q, and read %q instead (%d answers replaced)\nlines %q",
			sdk, run.wrote, replaced, added, len(run.rejected), lines)
	}
	return ok
}

// fence is a call to the fence tool, sent after the lines: mcp-go runs tool
// calls on one worker (first in, first out), so once the fence is answered
// every call before it has been. go-sdk runs calls concurrently: there the
// answer to the line's id is awaited a little longer. Closing the input
// earlier would let mcp-go drop queued calls.
func fence(modern bool) string {
	if modern {
		return `{"jsonrpc":"2.0","id":"fence","method":"tools/call","params":{"name":"fence","arguments":{}` + fixture.ModernMeta + `}}`
	}
	return `{"jsonrpc":"2.0","id":"fence","method":"tools/call","params":{"name":"fence","arguments":{}}}`
}

// unknownToolName reads an SDK's own unknown-tool answer to id.
// (The session holds that one call, and mcp-go rounds integer ids beyond
// 2^53 in its answer, so the answer is not matched by id.)
func unknownToolName(sdk string, out []string) (string, bool) {
	for _, l := range out {
		var m rpcMessage
		if json.Unmarshal([]byte(l), &m) != nil || m.Error == nil || m.Error.Code != -32602 {
			continue
		}
		switch sdk {
		case "mcpgo":
			if n, ok := strings.CutPrefix(m.Error.Message, "tool '"); ok {
				return strings.CutSuffix(n, "' not found: tool not found")
			}
		case "gosdk":
			if n, ok := strings.CutPrefix(m.Error.Message, "unknown tool "); ok {
				var s string
				return s, json.Unmarshal([]byte(n), &s) == nil
			}
		}
	}
	return "", false
}

// stdioTally counts what compareStdio saw, in the differential's Tally: a
// session is a case, one whose answers the guard translated is rejected,
// and the broken promises (each also reported as a test error) are
// WrongRejection (the guard answered -32602 where the server alone ran a
// tool or gave another answer than its not-found), OtherName (the guard's
// answer names another tool than the server's not-found answer), OtherRun
// (the tools run differ), ChangedAnswer (an answer changed other than the
// server's own not-found answer, or the server read other lines) and
// OtherBytes (a passing answer whose bytes differ from alone). The server's
// not-found answers are counted besides.
type stdioTally struct {
	fixture.Tally
	notFoundAlone int // sessions in which the server alone gave its not-found answer
	untranslated  int // the server's not-found answers passed on as they were (a line the guard did not track)
}

func (tl *stdioTally) add(o stdioTally) {
	tl.Tally.Add(o.Tally)
	tl.notFoundAlone += o.notFoundAlone
	tl.untranslated += o.untranslated
}

func (tl stdioTally) String() string {
	return fmt.Sprintf("%s; %d sessions got the server's not-found answer alone (%d of those answers passed on untranslated)", tl.Tally, tl.notFoundAlone, tl.untranslated)
}

// guardAnswer reads the guard's -32602 answer: its id and tool name.
func guardAnswer(line string) (id json.RawMessage, name string, ok bool) {
	var m rpcMessage
	if json.Unmarshal([]byte(line), &m) != nil || m.Error == nil || m.Error.Code != -32602 {
		return nil, "", false
	}
	name, ok = fixture.GuardMessageName(m.Error.Message)
	return m.ID, name, ok
}

// compareRuns checks the promise on one session alone and guarded: the
// server read the same lines; the same tools ran; the client read the
// same lines, byte for byte, except the server's own not-found answers,
// each replaced by the guard's -32602 answer to the same id, naming the
// same tool.
func compareRuns(t testing.TB, sdk string, lines []string, alone, guarded stdioRun, tl *stdioTally) {
	t.Helper()
	tl.Cases++
	if len(alone.ran) > 0 {
		tl.RanAlone++
	}
	if !slices.Equal(slices.Sorted(slices.Values(alone.ran)), slices.Sorted(slices.Values(guarded.ran))) {
		tl.OtherRun++
		t.Errorf("%s: alone ran %q, guarded ran %q\nlines %q", sdk, alone.ran, guarded.ran, lines)
	}
	// The server reads the client's lines, byte for byte (a server that
	// ends the session at a line reads a beginning of them).
	sent := strings.Join(lines, "\n") + "\n"
	read := strings.Join(guarded.read, "")
	if aloneRead := strings.Join(alone.read, ""); !strings.HasPrefix(sent+fence(false)+"\n", read) && !strings.HasPrefix(sent+fence(true)+"\n", read) && read != aloneRead {
		tl.ChangedAnswer++
		t.Errorf("%s: the server read %q\nthe client sent %q", sdk, read, sent)
	}
	rest := slices.Clone(guarded.out)
	var replaced []string
	for _, l := range alone.out {
		if i := slices.Index(rest, l); i >= 0 {
			rest = slices.Delete(rest, i, i+1)
			continue
		}
		replaced = append(replaced, l)
	}
	notFound := 0
	for _, l := range alone.out {
		if _, ok := unknownToolName(sdk, []string{l}); ok {
			notFound++
		}
	}
	if notFound > 0 {
		tl.notFoundAlone++
	}
	defer func() { tl.untranslated += notFound - len(guarded.rejected) }()
	if len(replaced) == 0 && len(rest) == 0 {
		tl.Passed++
		if len(guarded.rejected) > 0 {
			tl.ChangedAnswer++
			t.Errorf("%s: OnTranslate told %q, but the client read what it reads alone\nlines %q", sdk, guarded.rejected, lines)
		}
		return
	}
	tl.Rejected++
	for _, l := range replaced {
		sdkName, ok := unknownToolName(sdk, []string{l})
		if !ok {
			// An answer other than the server's not-found answer changed.
			if len(alone.ran) > 0 {
				tl.WrongRejection++
			} else if _, _, guard := guardAnswer(strings.Join(rest, "")); guard {
				tl.WrongRejection++
			} else {
				tl.OtherBytes++
			}
			t.Errorf("%s: alone the client read %q, guarded instead %q\nlines %q", sdk, l, rest, lines)
			continue
		}
		var m rpcMessage
		json.Unmarshal([]byte(l), &m)
		j := slices.IndexFunc(rest, func(g string) bool {
			id, _, ok := guardAnswer(g)
			return ok && string(id) == string(m.ID)
		})
		if j < 0 {
			tl.ChangedAnswer++
			t.Errorf("%s: the server's not-found answer %q is gone, and no -32602 answer to its id came: %q\nlines %q", sdk, l, rest, lines)
			continue
		}
		if _, name, _ := guardAnswer(rest[j]); name != sdkName && !(len(sdkName) > 128 && strings.HasPrefix(sdkName, strings.TrimSuffix(name, "…"))) {
			tl.OtherName++
			t.Errorf("%s: the guard named %q, the server %q\nlines %q", sdk, name, sdkName, lines)
		}
		rest = slices.Delete(rest, j, j+1)
	}
	if len(rest) > 0 {
		tl.ChangedAnswer++
		t.Errorf("%s: guarded the client read more: %q\nlines %q", sdk, rest, lines)
	}
	if len(guarded.rejected) != len(replaced) {
		t.Errorf("%s: OnTranslate told %q for %d replaced answers", sdk, guarded.rejected, len(replaced))
	}
}

// compareStdio sends lines alone and guarded, at once, and checks the
// promise. First the guarded session against itself (faithful): every
// line the server wrote reached the client, but its not-found answers the
// guard replaced. Then against the server alone. A server may answer the
// same lines in more than one way: go-sdk answers a message concurrently
// with reading the next, and a line it cannot decode ends the session, so
// an answer to an earlier line may or may not get out (29 of 40 runs
// alone answered `{"jsonrpc":"2.0","id":0,"method":""}` followed by the
// line `0`). So the guarded session must match one session of the server
// alone: where the first differs, the server alone is run again, up to
// aloneTries times (within aloneWithin), and the promise is checked
// against the last run. A guarded session that a timer ended (an answer
// may come after it on a loaded machine) is run again too, in turns with
// the server alone, each run held to faithful.
func compareStdio(t testing.TB, sdk string, modern bool, lines []string, tl *stdioTally) {
	t.Helper()
	var alone, guarded stdioRun
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); alone = runStdio(t, sdk, false, modern, lines) }()
	go func() { defer wg.Done(); guarded = runStdio(t, sdk, true, modern, lines) }()
	wg.Wait()
	if !faithful(t, sdk, lines, guarded) {
		tl.Cases++
		tl.ChangedAnswer++
		return // the guard's own fault, whatever the server alone does
	}
	deadline := time.Now().Add(aloneWithin)
	for try := 1; try < aloneTries && time.Now().Before(deadline) && !agree(t, sdk, lines, alone, guarded); try++ {
		if guarded.late && try%2 == 1 {
			guarded = runStdio(t, sdk, true, modern, lines)
			rerunsGuarded.Add(1)
			if !faithful(t, sdk, lines, guarded) {
				tl.Cases++
				tl.ChangedAnswer++
				return
			}
			continue
		}
		alone = runStdio(t, sdk, false, modern, lines)
		rerunsAlone.Add(1)
	}
	compareRuns(t, sdk, lines, alone, guarded, tl)
}

// aloneTries and aloneWithin bound the sessions alone a guarded session is
// compared with: where alone gives the guarded outcome one time in four,
// 50 tries miss it once in 1.7 million; a session that waits out its 3 s
// of quiet every time stops after about 15 s.
const (
	aloneTries  = 50
	aloneWithin = 15 * time.Second
)

var rerunsAlone, rerunsGuarded atomic.Int64 // sessions run again by compareStdio

// agree reports whether compareRuns finds nothing wrong, without
// reporting or counting.
func agree(t testing.TB, sdk string, lines []string, alone, guarded stdioRun) bool {
	q := &quietTB{TB: t}
	compareRuns(q, sdk, lines, alone, guarded, &stdioTally{})
	return !q.failed
}

// quietTB records compareRuns' failures (it reports them all with
// Errorf) instead of reporting them.
type quietTB struct {
	testing.TB
	failed bool
}

func (q *quietTB) Helper()               {}
func (q *quietTB) Errorf(string, ...any) { q.failed = true }

// TestStdioDifferential sends the corpus of bodies, as lines, to real
// mcp-go and go-sdk stdio servers alone and behind the in-process guard,
// and counts every broken promise: 0 of each is the bar.
func TestStdioDifferential(t *testing.T) {
	var all stdioTally
	for _, sdk := range []string{"mcpgo", "gosdk"} {
		t.Run(sdk, func(t *testing.T) {
			var tl stdioTally
			for _, modern := range []bool{false, true} {
				meta := ""
				if modern {
					meta = fixture.ModernMeta
				}
				for _, name := range fixture.Names {
					for _, body := range fixture.Corpus(name, meta) {
						// A line holds no newline: the bodies that have one
						// around them get spaces instead.
						compareStdio(t, sdk, modern, []string{strings.ReplaceAll(body, "\n", " ")}, &tl)
					}
				}
			}
			t.Logf("%s: %s", sdk, tl)
			if tl.Rejected == 0 || tl.RanAlone == 0 {
				t.Errorf("degenerate corpus: %+v", tl)
			}
			all.add(tl)
		})
	}
	t.Logf("both SDKs: %s", all)
	t.Logf("%d sessions waited after the fence; %d sessions alone and %d guarded run again", graces.Load(), rerunsAlone.Load(), rerunsGuarded.Load())
}

// TestStdioDifferentialSessions follows each corpus line with a call to an
// unknown tool in the same session: whatever a line does to the stream
// (go-sdk ends the session at a line it cannot decode as one message, or
// reads the next line as the rest of a value), the answers after it are
// the server's, with only its not-found answers translated.
func TestStdioDifferentialSessions(t *testing.T) {
	for _, sdk := range []string{"mcpgo", "gosdk"} {
		t.Run(sdk, func(t *testing.T) {
			var tl stdioTally
			for _, modern := range []bool{false, true} {
				meta := ""
				if modern {
					meta = fixture.ModernMeta
				}
				probe := `{"jsonrpc":"2.0","id":"probe","method":"tools/call","params":{"name":"nope_after","arguments":{}` + meta + `}}`
				for _, name := range []string{"echo", "nope"} {
					for _, body := range fixture.Corpus(name, meta) {
						compareStdio(t, sdk, modern, []string{strings.ReplaceAll(body, "\n", " "), probe}, &tl)
					}
				}
			}
			t.Logf("%s: %s", sdk, tl)
			if tl.Rejected == 0 {
				t.Error("degenerate")
			}
		})
	}
}

// FuzzStdioDifferential sends fuzzed lines to real mcp-go and go-sdk stdio
// servers alone and behind the in-process guard: the same promise as
// TestStdioDifferential. Each input starts four real sessions (about 13
// inputs a second here), so the test command gives it fewer inputs.
//
//toolguard:fuzzbudget 500x
func FuzzStdioDifferential(f *testing.F) {
	for _, seed := range fixture.Corpus("nope", "")[:12] {
		f.Add(seed, false)
	}
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":{}`+fixture.ModernMeta+`}}`, true)
	f.Add(`{"jsonrpc":"2.0","id":5,"method":"ping","params":{"a":[`+"\n"+`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}`+"\n"+`]}}`, false)
	f.Fuzz(func(t *testing.T, data string, modern bool) {
		if len(data) > 1<<12 || strings.Contains(data, "fence") || strings.Contains(data, "toolguard-") {
			return
		}
		lines := strings.Split(strings.TrimSuffix(data, "\n"), "\n")
		for _, sdk := range []string{"mcpgo", "gosdk"} {
			var tl stdioTally
			compareStdio(t, sdk, modern, lines, &tl)
		}
	})
}
