package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
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
	ran      []string // the tools that ran
	read     []string // the lines the server read (guarded: less the guard's own)
	rejected []string // the names the guard rejected
	own      int      // the guard's own requests the server read
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
	if guarded {
		g, err := toolguard.NewStdio(inR, outW, toolguard.StdioOptions{OnReject: func(rej *toolguard.Rejection) {
			run.rejected = append(run.rejected, rej.Name)
		}})
		if err != nil {
			panic(err)
		}
		tapped = &lineTap{r: g.Reader()}
		r, w = tapped, g.Writer()
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
	}
	return run
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

type stdioTally struct {
	cases, rejected, passed, ranAlone, identical int
	wrong, nameDisagreements, altered            int
}

// compareStdio sends one line alone and guarded and checks the promise.
func compareStdio(t *testing.T, sdk string, modern bool, line string, tl *stdioTally) {
	var alone, guarded stdioRun
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); alone = runStdio(t, sdk, false, modern, []string{line}) }()
	go func() { defer wg.Done(); guarded = runStdio(t, sdk, true, modern, []string{line}) }()
	wg.Wait()
	tl.cases++
	if len(alone.ran) > 0 {
		tl.ranAlone++
	}
	if len(guarded.rejected) == 0 {
		tl.passed++
		// The server read the line and then the fence, or a beginning of
		// them if the line ended the session (go-sdk stops at a line it
		// cannot parse, wherever its last read ended).
		read := strings.Join(guarded.read, "")
		if whole := line + "\n" + fence(modern) + "\n"; read != "" && strings.HasPrefix(whole, read) && (len(read) > len(line) || len(alone.out) == 0) {
			tl.identical++
		} else {
			tl.altered++
			t.Errorf("%s: passed through, but the server read %q\nline %q", sdk, guarded.read, line)
		}
		if !slices.Equal(alone.ran, guarded.ran) {
			tl.wrong++
			t.Errorf("%s: passed through, but alone ran %q and guarded ran %q\nline %q", sdk, alone.ran, guarded.ran, line)
		}
		a, g := slices.Sorted(slices.Values(alone.out)), slices.Sorted(slices.Values(guarded.out))
		if !slices.Equal(a, g) {
			tl.altered++
			t.Errorf("%s: passed through, but the client read\n%q\nalone\n%q\nline %q", sdk, g, a, line)
		}
		return
	}
	tl.rejected++
	name := guarded.rejected[0]
	if len(alone.ran) > 0 {
		tl.wrong++
		t.Errorf("%s: the guard rejected %q, the server alone ran %q\nline %q", sdk, name, alone.ran, line)
	}
	if read := strings.Join(guarded.read, ""); len(guarded.ran) > 0 || !strings.HasPrefix(fence(modern)+"\n", read) {
		t.Errorf("%s: rejected, yet the server read %q and ran %q", sdk, guarded.read, guarded.ran)
	}
	if sdkName, ok := unknownToolName(sdk, alone.out); !ok {
		tl.wrong++
		t.Errorf("%s: the guard rejected %q, the server alone answered %q\nline %q", sdk, name, alone.out, line)
	} else if sdkName != name {
		tl.nameDisagreements++
		t.Errorf("%s: the guard read %q, the server %q\nline %q", sdk, name, sdkName, line)
	}
}

// TestStdioDifferential sends the corpus of bodies, as lines, to real
// mcp-go and go-sdk stdio servers alone and behind the in-process guard.
func TestStdioDifferential(t *testing.T) {
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
						compareStdio(t, sdk, modern, strings.ReplaceAll(body, "\n", " "), &tl)
					}
				}
			}
			t.Logf("%d sessions waited after the fence", graces.Load())
			t.Logf("%s: %d lines: %d rejected, %d passed (%d byte-identical at the server), %d ran alone; "+
				"%d wrong rejections, %d name disagreements, %d altered",
				sdk, tl.cases, tl.rejected, tl.passed, tl.identical, tl.ranAlone, tl.wrong, tl.nameDisagreements, tl.altered)
			if tl.rejected == 0 || tl.ranAlone == 0 {
				t.Errorf("degenerate corpus: %+v", tl)
			}
		})
	}
}

// TestStdioDifferentialSessions follows each corpus line with a call to an
// unknown tool in the same session: what a line does to the stream (go-sdk
// ends the session at a line it cannot decode as one message) must never
// make the guard answer a later line the server would not have looked up.
func TestStdioDifferentialSessions(t *testing.T) {
	for _, sdk := range []string{"mcpgo", "gosdk"} {
		t.Run(sdk, func(t *testing.T) {
			var sessions, rejected, probesAnswered int
			for _, modern := range []bool{false, true} {
				meta := ""
				if modern {
					meta = fixture.ModernMeta
				}
				probe := `{"jsonrpc":"2.0","id":"probe","method":"tools/call","params":{"name":"nope_after","arguments":{}` + meta + `}}`
				for _, name := range []string{"echo", "nope"} {
					for _, body := range fixture.Corpus(name, meta) {
						lines := []string{strings.ReplaceAll(body, "\n", " "), probe}
						var alone, guarded stdioRun
						var wg sync.WaitGroup
						wg.Add(2)
						go func() { defer wg.Done(); alone = runStdio(t, sdk, false, modern, lines) }()
						go func() { defer wg.Done(); guarded = runStdio(t, sdk, true, modern, lines) }()
						wg.Wait()
						sessions++
						rejected += len(guarded.rejected)
						if !slices.Equal(alone.ran, guarded.ran) {
							t.Errorf("%s: alone ran %q, guarded ran %q\nlines %q", sdk, alone.ran, guarded.ran, lines)
						}
						var unknown []string
						for _, l := range alone.out {
							if n, ok := unknownToolName(sdk, []string{l}); ok {
								unknown = append(unknown, n)
							}
						}
						if slices.Contains(unknown, "nope_after") {
							probesAnswered++
						}
						for _, n := range guarded.rejected {
							i := slices.Index(unknown, n)
							if i < 0 {
								t.Errorf("%s: the guard rejected %q, which the server alone did not answer as unknown (it answered %q)\nlines %q", sdk, n, alone.out, lines)
								continue
							}
							unknown = slices.Delete(unknown, i, i+1)
						}
					}
				}
			}
			t.Logf("%s: %d sessions (a corpus line, then an unknown tool): %d rejections; the server alone answered the unknown tool after %d lines", sdk, sessions, rejected, probesAnswered)
			// go-sdk ends the session at some lines: the test means something
			// only if it did.
			if rejected == 0 || (sdk == "gosdk" && probesAnswered == sessions) {
				t.Error("degenerate")
			}
		})
	}
}
