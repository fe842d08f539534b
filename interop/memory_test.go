package interop

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Memory: 200 clients each send a 4 MiB tools/call at once to a real
// mcp-go server in a child process (cmd/memserver), alone and behind the
// guard; the server's peak resident memory (VmHWM in /proc/<pid>/status)
// with the guard must stay within 5% of the server's alone. The tool holds
// every call until all 200 are inside it, so all 200 bodies are in flight
// at once on both sides.
//
// The guard reads each body (up to MaxBodyBytes, 4 MiB by default) before
// the server does, and gives its copy back as soon as the server has read
// the body to the end, so the server never holds a body twice for the rest
// of the request.
//
// It runs each server twice, alternating (alone, guard, guard, alone), and
// compares the means. It takes 7 to 11 minutes on two busy cores, so it is
// a benchmark (one measurement whatever b.N), run on demand, not by the
// test command; it fails above 1.05 and reports the ratio:
//
//	go test -run '^$' -bench MemoryPeak -benchtime 1x -timeout 60m .
const (
	memBodySize = 4 << 20
	memRounds   = 2
)

// memClients is 200; TOOLGUARD_MEMORY_CLIENTS changes it for a quicker look.
var memClients = func() int {
	if n, err := strconv.Atoi(os.Getenv("TOOLGUARD_MEMORY_CLIENTS")); err == nil && n > 0 {
		return n
	}
	return 200
}()

func BenchmarkMemoryPeak(t *testing.B) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Fatal("needs /proc to read a process's peak RSS")
	}
	bin := filepath.Join(t.TempDir(), "memserver")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/memserver").CombinedOutput(); err != nil {
		t.Fatalf("build memserver: %v\n%s", err, out)
	}
	body := memBody(memBodySize)
	peaks := map[string][]int64{}
	for round := range memRounds {
		sides := []string{"alone", "guard"}
		if round%2 == 1 {
			sides = []string{"guard", "alone"}
		}
		for _, mode := range sides {
			start := time.Now()
			peak, err := memRun(bin, mode, body)
			if err != nil {
				t.Fatalf("%s: %v", mode, err)
			}
			t.Logf("round %d %-5s: peak RSS %6.1f MiB (%v)", round+1, mode, float64(peak)/(1<<20), time.Since(start).Round(time.Millisecond))
			peaks[mode] = append(peaks[mode], peak)
		}
	}
	alone, guard := median(peaks["alone"]), median(peaks["guard"])
	ratio := float64(guard) / float64(alone)
	t.Logf("%d clients x %d MiB: median peak RSS alone %.1f MiB, guard %.1f MiB, guard/alone %.3f",
		memClients, memBodySize>>20, float64(alone)/(1<<20), float64(guard)/(1<<20), ratio)
	t.ReportMetric(ratio, "guard/alone-peak-RSS")
	if ratio > 1.05 {
		t.Errorf("guard/alone peak RSS = %.3f, want <= 1.05", ratio)
	}
}

// memBody is a tools/call for "ingest" of exactly n bytes.
func memBody(n int) []byte {
	head := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ingest","arguments":{"data":"`
	tail := `"}}}`
	var b bytes.Buffer
	b.WriteString(head)
	for b.Len() < n-len(tail) {
		b.WriteString("0123456789abcdef")
	}
	b.Truncate(n - len(tail))
	b.WriteString(tail)
	return b.Bytes()
}

// memRun starts the server in the given mode, sends memClients bodies at
// once, checks every answer and returns the server's peak RSS in bytes.
func memRun(bin, mode string, body []byte) (int64, error) {
	cmd := exec.Command(bin, "-mode", mode, "-hold", strconv.Itoa(memClients))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return 0, fmt.Errorf("server address: %v", err)
	}
	url := "http://" + strings.TrimSpace(line) + "/mcp"
	want := fmt.Sprintf(`"text":"%d"`, len(body)-len(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ingest","arguments":{"data":"`)-len(`"}}}`))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: memClients}}
	defer client.CloseIdleConnections()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	ready := make(chan struct{})
	for range memClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-ready
			err := memCall(client, url, body, want)
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		}()
	}
	close(ready)
	wg.Wait()
	if firstErr != nil {
		return 0, firstErr
	}
	return peakRSS(cmd.Process.Pid)
}

func memCall(client *http.Client, url string, body []byte, want string) error {
	req, err := http.NewRequest("POST", url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != 200 || !bytes.Contains(got, []byte(want)) {
		return fmt.Errorf("answer %d %.200s, want %s", resp.StatusCode, got, want)
	}
	return nil
}

// peakRSS reads VmHWM, the peak resident set size, of a process.
func peakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

func median(v []int64) int64 {
	s := append([]int64(nil), v...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[len(s)/2]
}
