// Command loadtest drives a real mcp-go server over loopback, without and
// with toolguard in front, with a mix of known and unknown tool calls, and
// reports throughput, errors and the server's resident memory.
//
//	go run ./cmd/loadtest -duration 60s     (from the interop folder)
//
// The server runs in a child process (this program with -serve), so its
// resident memory is its own. The two sides alternate in slices of
// -slice, so a noisy, shared machine slows both alike; each side gets
// -duration in all.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	toolguardmcpgo "github.com/toolguard/toolguard/adapters/mcpgo"
	toolguard "github.com/toolguard/toolguard/middleware"
)

func main() {
	serve := flag.String("serve", "", "internal: serve on this address (guard|alone)")
	duration := flag.Duration("duration", 60*time.Second, "load time per side")
	slice := flag.Duration("slice", 10*time.Second, "length of one alternating slice")
	workers := flag.Int("workers", 16, "concurrent clients")
	unknownShare := flag.Int("unknown", 20, "percent of calls naming an unknown tool")
	sides := flag.String("sides", "alone,guard", "the two servers to compare (alone or guard each): alone,alone measures the noise floor")
	flag.Parse()
	if *serve != "" {
		mode, addr, _ := strings.Cut(*serve, "@")
		log.Fatal(serveMCP(mode, addr))
	}
	a, b, ok := strings.Cut(*sides, ",")
	if !ok {
		log.Fatal("loadtest: -sides wants two modes, such as alone,guard")
	}
	if err := run(a, b, *duration, *slice, *workers, *unknownShare); err != nil {
		log.Fatal(err)
	}
}

// serveMCP serves a stateless mcp-go server with ten tools, guarded or not.
func serveMCP(mode, addr string) error {
	s := server.NewMCPServer("load", "1.0.0", server.WithToolCapabilities(true))
	for i := range 10 {
		name := fmt.Sprintf("tool_%d", i)
		s.AddTool(mcp.NewTool(name, mcp.WithString("text")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(name + ":" + req.GetString("text", "")), nil
		})
	}
	var h http.Handler = server.NewStreamableHTTPServer(s, server.WithStateLess(true))
	if mode == "guard" {
		tools, err := toolguardmcpgo.Tools(s, h, toolguardmcpgo.Options{})
		if err != nil {
			return err
		}
		g, err := toolguard.New(toolguard.Options{Tools: tools})
		if err != nil {
			return err
		}
		h = g.Handler(h)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Println("READY")
	return http.Serve(ln, h)
}

type side struct {
	name     string
	cmd      *exec.Cmd
	url      string
	requests atomic.Int64
	errors   atomic.Int64
	elapsed  time.Duration
	rss      []int64 // kB, sampled once a second
}

func start(mode string) (*side, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "-serve", mode+"@"+addr)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	if line, _ := bufio.NewReader(out).ReadString('\n'); strings.TrimSpace(line) != "READY" {
		return nil, fmt.Errorf("%s server did not start", mode)
	}
	return &side{name: mode, cmd: cmd, url: "http://" + addr + "/mcp"}, nil
}

func rssKB(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb)
			return kb
		}
	}
	return -1
}

var (
	knownBody   = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tool_3","arguments":{"text":"hi"}}}`)
	unknownBody = []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"tool_33","arguments":{"text":"hi"}}}`)
)

// load runs workers against s for d, checking every answer.
func load(s *side, d time.Duration, workers, unknownShare int) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers, MaxConnsPerHost: workers}}
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; time.Now().Before(deadline); i++ {
				body, want := knownBody, `"tool_3:hi"`
				if i%100 < unknownShare {
					body, want = unknownBody, `"code":-32602`
				}
				req, _ := http.NewRequest("POST", s.url, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
				resp, err := client.Do(req)
				if err != nil {
					s.errors.Add(1)
					continue
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != 200 || !bytes.Contains(b, []byte(want)) {
					s.errors.Add(1)
					continue
				}
				s.requests.Add(1)
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				s.rss = append(s.rss, rssKB(s.cmd.Process.Pid))
			}
		}
	}()
	wg.Wait()
	close(done)
	s.elapsed += time.Since(start)
	client.CloseIdleConnections()
}

func run(modeA, modeB string, duration, slice time.Duration, workers, unknownShare int) error {
	alone, err := start(modeA)
	if err != nil {
		return err
	}
	defer alone.cmd.Process.Kill()
	guard, err := start(modeB)
	if err != nil {
		return err
	}
	defer guard.cmd.Process.Kill()
	// Warm both up, then alternate slices.
	load(alone, 2*time.Second, workers, unknownShare)
	load(guard, 2*time.Second, workers, unknownShare)
	for _, s := range []*side{alone, guard} {
		s.requests.Store(0)
		s.errors.Store(0)
		s.elapsed = 0
		s.rss = []int64{rssKB(s.cmd.Process.Pid)}
	}
	for spent := time.Duration(0); spent < duration; spent += slice {
		d := min(slice, duration-spent)
		load(alone, d, workers, unknownShare)
		load(guard, d, workers, unknownShare)
		fmt.Printf("  %3.0fs: alone %d req, guard %d req\n", (spent + d).Seconds(), alone.requests.Load(), guard.requests.Load())
	}
	fmt.Printf("\n%d workers, %d%% unknown tools, %v per side (alternating %v slices)\n\n", workers, unknownShare, duration, slice)
	fmt.Printf("%-6s %10s %10s %8s %14s %14s\n", "side", "requests", "req/s", "errors", "RSS start kB", "RSS end kB")
	for _, s := range []*side{alone, guard} {
		fmt.Printf("%-6s %10d %10.0f %8d %14d %14d\n", s.name, s.requests.Load(),
			float64(s.requests.Load())/s.elapsed.Seconds(), s.errors.Load(), s.rss[0], s.rss[len(s.rss)-1])
	}
	ratio := (float64(guard.requests.Load()) / guard.elapsed.Seconds()) / (float64(alone.requests.Load()) / alone.elapsed.Seconds())
	fmt.Printf("\nthroughput %s/%s: %.3f\n", guard.name, alone.name, ratio)
	if alone.errors.Load()+guard.errors.Load() > 0 {
		return fmt.Errorf("loadtest: %d errors", alone.errors.Load()+guard.errors.Load())
	}
	return nil
}
