package interop

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Amplification: many distinct callers, each making one call to a tool
// that does not exist, against a real mcp-go server (cmd/ampserver) in a
// child process, alone and behind the guard. What is compared is the CPU
// time the server process spends (user + system, from /proc/<pid>/stat),
// so whatever the guard makes the server do for a rejection (fetching
// the caller's tool list, encoding schemas, searching names) is counted.
//
// Callers:
//
//   - "session": mcp-go's default mode. Each caller opens its own session
//     (initialize, then notifications/initialized) and makes one unknown
//     tools/call in it. CPU is read before and after the opening phase, so
//     the ratio is given for the whole run and for the calls alone.
//   - "sessionless": mcp-go's stateless mode. Each call carries its own
//     Authorization value, so each is a distinct caller to the guard.
//
// Every answer is checked: mcp-go alone must answer with its own -32602
// ("tool '<name>' not found"), the guard with its -32602 and
// data.availableTools drawn from the server's list, or, past the list
// budget (DiscoverOptions.Budget, 20ms of list fetching a second by default), without
// data (counted and reported). mcp-go's own answer through the guard (not
// translated) is counted and fails the run.
//
// The benchmark runs each side twice, alternating (alone, guard, guard,
// alone), for 10 and 1,000 tools, whatever b.N; it fails when the whole-run
// CPU ratio guard/alone is above 1.5:
//
//	go test -run '^$' -bench AmplificationCPU -benchtime 1x -timeout 60m .
//
// (-bench 'AmplificationCPU/^tools=10$/^caller=session$' picks one kind.)
// It also reports the server's peak resident memory, guard / alone (the
// larger of the two runs on each side), since whatever the guard keeps per
// caller grows with the number of callers.
//
// TOOLGUARD_AMP_CALLS changes the number of callers (10,000) for a quicker
// look. TOOLGUARD_AMP_PROFILE=dir makes each server write a CPU profile of
// its run to dir (go tool pprof dir/<file>), named after the run.
// TestAmplificationHarness runs the same harness with a few callers in the
// normal test run.
const (
	ampWorkers  = 16
	ampMaxRatio = 1.5
)

var ampCalls = func() int {
	if n, err := strconv.Atoi(os.Getenv("TOOLGUARD_AMP_CALLS")); err == nil && n > 0 {
		return n
	}
	return 10000
}()

// ampConfig is one kind of run.
type ampConfig struct {
	tools     int
	stateless bool
	calls     int
	workers   int
}

// ampResult is the server's CPU time in one run: opening sessions (zero
// when stateless) and making the unknown calls.
type ampResult struct {
	setup, calls time.Duration
	answers      int // answers checked, every request of the run
	wall         time.Duration
	peakRSS      int64 // the server's peak resident memory (VmHWM), bytes
	passed       int   // guarded unknown calls the guard let through
	unlisted     int   // guarded unknown calls answered without the list
}

func (r ampResult) total() time.Duration { return r.setup + r.calls }

func BenchmarkAmplificationCPU(b *testing.B) {
	bin := ampServer(b)
	for _, tools := range []int{10, 1000} {
		for _, caller := range []string{"session", "sessionless"} {
			b.Run(fmt.Sprintf("tools=%d/caller=%s", tools, caller), func(b *testing.B) {
				cfg := ampConfig{tools: tools, stateless: caller == "sessionless", calls: ampCalls, workers: ampWorkers}
				runs := map[string][]ampResult{}
				for _, mode := range []string{"alone", "guard", "guard", "alone"} {
					res, err := ampRun(bin, mode, cfg)
					if err != nil {
						b.Fatalf("%s: %v", mode, err)
					}
					b.Logf("%-5s: server CPU %8v (opening sessions %8v, unknown calls %8v), peak RSS %6.1f MiB, %d answers checked, %d untranslated, %d without the list, wall %v",
						mode, res.total(), res.setup, res.calls, float64(res.peakRSS)/(1<<20), res.answers, res.passed, res.unlisted, res.wall.Round(time.Millisecond))
					if res.passed > 0 {
						b.Errorf("%s: %d of %d of mcp-go's not-found answers were not translated", mode, res.passed, cfg.calls)
					}
					runs[mode] = append(runs[mode], res)
				}
				sum := func(mode string, f func(ampResult) time.Duration) time.Duration {
					var d time.Duration
					for _, r := range runs[mode] {
						d += f(r)
					}
					return d
				}
				total := func(r ampResult) time.Duration { return r.total() }
				calls := func(r ampResult) time.Duration { return r.calls }
				ratio := float64(sum("guard", total)) / float64(sum("alone", total))
				callRatio := float64(sum("guard", calls)) / float64(sum("alone", calls))
				n := time.Duration(len(runs["alone"]))
				perCall := func(mode string) time.Duration { return sum(mode, calls) / n / time.Duration(cfg.calls) }
				var rss [2]int64
				for i, mode := range []string{"alone", "guard"} {
					for _, r := range runs[mode] {
						rss[i] = max(rss[i], r.peakRSS)
					}
				}
				rssRatio := float64(rss[1]) / float64(rss[0])
				b.Logf("%d callers, %d tools, %s: mean server CPU alone %v, guard %v: guard/alone %.3f; "+
					"unknown calls only: %v and %v a call, guard/alone %.3f; peak RSS guard/alone %.3f",
					cfg.calls, tools, caller, sum("alone", total)/n, sum("guard", total)/n, ratio,
					perCall("alone"), perCall("guard"), callRatio, rssRatio)
				b.ReportMetric(ratio, "guard/alone-CPU")
				b.ReportMetric(callRatio, "guard/alone-call-CPU")
				b.ReportMetric((sum("alone", total) / n).Seconds(), "alone-CPU-s")
				b.ReportMetric((sum("guard", total) / n).Seconds(), "guard-CPU-s")
				b.ReportMetric(float64(perCall("alone").Nanoseconds())/1e3, "alone-µs/call")
				b.ReportMetric(float64(perCall("guard").Nanoseconds())/1e3, "guard-µs/call")
				b.ReportMetric(rssRatio, "guard/alone-peak-RSS")
				if ratio > ampMaxRatio {
					b.Errorf("server CPU guard/alone = %.3f, want <= %.1f", ratio, ampMaxRatio)
				}
			})
		}
	}
}

// TestAmplificationHarness runs the harness with a few callers on every
// kind of server, so that a broken harness (an answer that no longer
// matches, a session not opened, CPU not read) shows in the normal test
// run. It checks no ratio: a few calls are below /proc's 10 ms resolution.
func TestAmplificationHarness(t *testing.T) {
	bin := ampServer(t)
	for _, tools := range []int{10, 1000} {
		for _, stateless := range []bool{false, true} {
			for _, mode := range []string{"alone", "guard"} {
				cfg := ampConfig{tools: tools, stateless: stateless, calls: 12, workers: 4}
				res, err := ampRun(bin, mode, cfg)
				if err != nil {
					t.Fatalf("%d tools, stateless %v, %s: %v", tools, stateless, mode, err)
				}
				want := cfg.calls
				if !stateless {
					want *= 3
				}
				if res.answers != want {
					t.Errorf("%d tools, stateless %v, %s: %d answers checked, want %d", tools, stateless, mode, res.answers, want)
				}
				if res.passed != 0 {
					t.Errorf("%d tools, stateless %v, %s: %d unknown calls passed through", tools, stateless, mode, res.passed)
				}
				if res.setup < 0 || res.calls < 0 || stateless && res.setup != 0 {
					t.Errorf("%d tools, stateless %v, %s: CPU setup %v, calls %v", tools, stateless, mode, res.setup, res.calls)
				}
			}
		}
	}
}

// ampServer builds cmd/ampserver into the test's temporary directory.
func ampServer(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Fatal("needs /proc to read a process's CPU time")
	}
	bin := filepath.Join(t.TempDir(), "ampserver")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/ampserver").CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/ampserver: %v\n%s", err, out)
	}
	return bin
}

// ampRun starts the server, reads its tool list, then (with sessions)
// opens cfg.calls sessions and makes one unknown call in each, or
// (stateless) makes cfg.calls unknown calls with distinct Authorization
// values, checking every answer, and returns the server's CPU time for
// each phase.
func ampRun(bin, mode string, cfg ampConfig) (ampResult, error) {
	args := []string{"-mode", mode, "-tools", strconv.Itoa(cfg.tools)}
	if cfg.stateless {
		args = append(args, "-stateless")
	}
	var profile string
	if dir := os.Getenv("TOOLGUARD_AMP_PROFILE"); dir != "" {
		profile = filepath.Join(dir, fmt.Sprintf("amp-%d-stateless=%v-%s-%d.pprof", cfg.tools, cfg.stateless, mode, time.Now().UnixNano()))
		args = append(args, "-cpuprofile", profile)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return ampResult{}, err
	}
	if err := cmd.Start(); err != nil {
		return ampResult{}, err
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return ampResult{}, fmt.Errorf("server address: %v", err)
	}
	c := &ampClient{
		url:    "http://" + strings.TrimSpace(line) + "/mcp",
		client: &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: cfg.workers}},
		guard:  mode == "guard",
	}
	defer c.client.CloseIdleConnections()

	// The server's own list, read before the measurement starts.
	if err := c.readNames(cfg); err != nil {
		return ampResult{}, fmt.Errorf("tools/list: %v", err)
	}
	pid := cmd.Process.Pid
	start := time.Now()
	cpu0, err := cpuTime(pid)
	if err != nil {
		return ampResult{}, err
	}
	var res ampResult
	sessions := make([]string, cfg.calls)
	if !cfg.stateless {
		err := parallel(cfg.calls, cfg.workers, func(i int) error {
			id, err := c.open()
			sessions[i] = id
			return err
		})
		if err != nil {
			return ampResult{}, fmt.Errorf("opening sessions: %v", err)
		}
		seen := make(map[string]bool, len(sessions))
		for _, id := range sessions {
			if seen[id] {
				return ampResult{}, fmt.Errorf("session id %s handed out twice", id)
			}
			seen[id] = true
		}
		res.answers += 2 * cfg.calls
	}
	cpu1, err := cpuTime(pid)
	if err != nil {
		return ampResult{}, err
	}
	var passed atomic.Int64
	err = parallel(cfg.calls, cfg.workers, func(i int) error {
		hdr := http.Header{}
		if cfg.stateless {
			hdr.Set("Authorization", "Bearer caller-"+strconv.Itoa(i))
		} else {
			hdr.Set("Mcp-Session-Id", sessions[i])
		}
		through, err := c.unknownCall(i, hdr)
		if through {
			passed.Add(1)
		}
		return err
	})
	if err != nil {
		return ampResult{}, fmt.Errorf("unknown calls: %v", err)
	}
	res.answers += cfg.calls
	res.passed = int(passed.Load())
	res.unlisted = int(c.unlisted.Load())
	cpu2, err := cpuTime(pid)
	if err != nil {
		return ampResult{}, err
	}
	res.setup, res.calls, res.wall = cpu1-cpu0, cpu2-cpu1, time.Since(start)
	if res.peakRSS, err = peakRSS(pid); err != nil {
		return ampResult{}, err
	}
	if profile != "" {
		// The server writes its profile and exits on SIGTERM.
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			return ampResult{}, err
		}
		if err := cmd.Wait(); err != nil {
			return ampResult{}, fmt.Errorf("server with -cpuprofile: %v", err)
		}
	}
	return res, nil
}

// parallel runs f(0) .. f(n-1) on the given number of workers and returns
// the first error.
func parallel(n, workers int, f func(i int) error) error {
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	work := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if err := f(i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	return firstErr
}

// ampClient speaks to one server.
type ampClient struct {
	url      string
	client   *http.Client
	guard    bool
	names    map[string]bool // the server's tools
	unlisted atomic.Int64    // the guard's answers without the list (past the list budget)
}

// post sends one JSON-RPC message and returns the status, headers and
// the JSON-RPC message of the answer (the data of an SSE event if the
// server streams).
func (c *ampClient) post(body string, hdr http.Header) (int, http.Header, []byte, error) {
	req, err := http.NewRequest("POST", c.url, strings.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, nil, err
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for l := range strings.SplitSeq(string(got), "\n") {
			if d, ok := strings.CutPrefix(l, "data:"); ok {
				got = []byte(strings.TrimSpace(d))
				break
			}
		}
	}
	return resp.StatusCode, resp.Header, got, nil
}

type rpcAnswer struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    *struct {
			AvailableTools []string `json:"availableTools"`
			Truncated      bool     `json:"availableToolsTruncated"`
		} `json:"data"`
	} `json:"error"`
}

const ampInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"amp","version":"1"}}}`

// open opens a session and returns its id.
func (c *ampClient) open() (string, error) {
	status, hdr, body, err := c.post(ampInit, nil)
	if err != nil {
		return "", err
	}
	var a rpcAnswer
	id := hdr.Get("Mcp-Session-Id")
	if status != 200 || json.Unmarshal(body, &a) != nil || string(a.ID) != "1" || a.Error != nil ||
		!bytes.Contains(a.Result, []byte(`"protocolVersion":"2025-11-25"`)) || id == "" {
		return "", fmt.Errorf("initialize: %d session %q %.300s", status, id, body)
	}
	status, _, body, err = c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		http.Header{"Mcp-Session-Id": {id}, "Mcp-Protocol-Version": {"2025-11-25"}})
	if err != nil {
		return "", err
	}
	if status != http.StatusAccepted {
		return "", fmt.Errorf("notifications/initialized: %d %.300s", status, body)
	}
	return id, nil
}

// readNames reads the server's tool list (in a session of its own when
// the server has sessions).
func (c *ampClient) readNames(cfg ampConfig) error {
	hdr := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}
	if !cfg.stateless {
		id, err := c.open()
		if err != nil {
			return err
		}
		hdr.Set("Mcp-Session-Id", id)
	}
	status, _, body, err := c.post(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, hdr)
	if err != nil {
		return err
	}
	var list struct {
		Result struct {
			Tools []struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		} `json:"result"`
	}
	if status != 200 || json.Unmarshal(body, &list) != nil {
		return fmt.Errorf("%d %.300s", status, body)
	}
	if len(list.Result.Tools) != cfg.tools || list.Result.NextCursor != "" {
		return fmt.Errorf("%d tools (next cursor %q), want %d", len(list.Result.Tools), list.Result.NextCursor, cfg.tools)
	}
	c.names = map[string]bool{}
	for _, tl := range list.Result.Tools {
		if len(tl.InputSchema) < 200 {
			return fmt.Errorf("tool %s has a %d-byte schema, want a realistic one", tl.Name, len(tl.InputSchema))
		}
		c.names[tl.Name] = true
	}
	if len(c.names) != cfg.tools {
		return fmt.Errorf("%d distinct names in %d tools", len(c.names), cfg.tools)
	}
	return nil
}

// unknownCall makes caller i's call to a made-up tool and checks the
// answer: mcp-go's own when alone, the guard's when guarded. It reports
// whether a guarded call got mcp-go's own answer (passed through).
func (c *ampClient) unknownCall(i int, hdr http.Header) (through bool, err error) {
	name := "made_up_tool_" + strconv.Itoa(i)
	hdr.Set("Mcp-Protocol-Version", "2025-11-25")
	status, _, body, err := c.post(`{"jsonrpc":"2.0","id":`+strconv.Itoa(i+2)+`,"method":"tools/call","params":{"name":"`+name+`","arguments":{"owner":"o","repo":"r"}}}`, hdr)
	if err != nil {
		return false, err
	}
	var a rpcAnswer
	if err := json.Unmarshal(body, &a); err != nil || status != 200 || string(a.ID) != strconv.Itoa(i+2) || a.Error == nil || a.Error.Code != -32602 {
		return false, fmt.Errorf("call %d: %d %.300s", i, status, body)
	}
	e := a.Error
	mcpgo := e.Message == "tool '"+name+"' not found: tool not found" && e.Data == nil
	if !c.guard {
		if !mcpgo {
			return false, fmt.Errorf("call %d: not mcp-go's own answer: %s", i, body)
		}
		return false, nil
	}
	if mcpgo {
		return true, nil
	}
	if e.Message != "Unknown tool: "+name {
		return false, fmt.Errorf("call %d: neither the guard's answer nor mcp-go's: %.300s", i, body)
	}
	if e.Data == nil {
		c.unlisted.Add(1) // past DiscoverOptions.Budget: answered without the list
		return false, nil
	}
	want := min(len(c.names), 100)
	if len(e.Data.AvailableTools) != want || e.Data.Truncated != (len(c.names) > want) {
		return false, fmt.Errorf("call %d: %d available tools (truncated %v), want %d of %d", i, len(e.Data.AvailableTools), e.Data.Truncated, want, len(c.names))
	}
	for _, n := range e.Data.AvailableTools {
		if !c.names[n] {
			return false, fmt.Errorf("call %d: available tool %q is not the server's", i, n)
		}
	}
	if !slices.IsSorted(e.Data.AvailableTools) {
		return false, fmt.Errorf("call %d: available tools not sorted", i)
	}
	return false, nil
}

// cpuTime is the CPU time (user + system) a process has used so far, from
// /proc/<pid>/stat (in clock ticks: 10 ms).
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces: fields count
	// from after its closing parenthesis (state is field 3).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("no command name in /proc/<pid>/stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(utime+stime) * time.Second / clockTicks(), nil
}

// clockTicks is sysconf(_SC_CLK_TCK), 100 on Linux.
var clockTicks = sync.OnceValue(func() time.Duration {
	if out, err := exec.Command("getconf", "CLK_TCK").Output(); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(out))); err == nil && n > 0 {
			return time.Duration(n)
		}
	}
	return 100
})
