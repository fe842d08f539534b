package interop

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// roundTripper sends one line and reads lines until the answer to it.
type roundTripper struct {
	w  io.Writer
	br *bufio.Reader
}

func (rt *roundTripper) do(b *testing.B, line, want string) {
	if _, err := io.WriteString(rt.w, line); err != nil {
		b.Fatal(err)
	}
	for {
		l, err := rt.br.ReadString('\n')
		if err != nil {
			b.Fatal(err)
		}
		if strings.Contains(l, want) {
			return
		}
	}
}

func (rt *roundTripper) handshake(b *testing.B) {
	rt.do(b, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`+"\n", `"init"`)
	io.WriteString(rt.w, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
}

const (
	knownCall = `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello, world"}}}` + "\n"
	knownWant = `echo:hello, world`
)

// pairedRoundTrips alternates a known tools/call round trip on a and on g
// (a first on even iterations, g first on odd ones) and reports the median
// of each and their ratio, so both sides share the machine's noise.
func pairedRoundTrips(b *testing.B, a, g *roundTripper) {
	pairedCalls(b, a, g, knownCall, knownWant, knownWant)
}

// pairedCalls is pairedRoundTrips for any call: a's answer contains
// wantA, g's wantG.
func pairedCalls(b *testing.B, a, g *roundTripper, call, wantA, wantG string) {
	a.handshake(b)
	g.handshake(b)
	for range 200 { // warm up, and fill the guard's list
		a.do(b, call, wantA)
		g.do(b, call, wantG)
	}
	ta := make([]time.Duration, 0, b.N)
	tg := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		sides := []*roundTripper{a, g}
		if i%2 == 1 {
			slices.Reverse(sides)
		}
		for _, rt := range sides {
			want := wantG
			if rt == a {
				want = wantA
			}
			start := time.Now()
			rt.do(b, call, want)
			if rt == a {
				ta = append(ta, time.Since(start))
			} else {
				tg = append(tg, time.Since(start))
			}
		}
	}
	b.StopTimer()
	// Medians: a pause of the shared machine hits one round trip, not the
	// figure.
	slices.Sort(ta)
	slices.Sort(tg)
	ma, mg := ta[len(ta)/2], tg[len(tg)/2]
	b.ReportMetric(float64(ma.Nanoseconds()), "alone-p50-ns")
	b.ReportMetric(float64(mg.Nanoseconds()), "guarded-p50-ns")
	b.ReportMetric(float64(mg)/float64(ma), "ratio")
}

// inProcessPair is an in-process sdk ("mcpgo" or "gosdk") stdio server
// alone (a) and guarded (g); stop stops both.
func inProcessPair(b *testing.B, sdk string) (a, g *roundTripper, stop func()) {
	a, stopA := inProcessRaw(b, sdk)
	g, stopG := inProcessRaw(b, sdk+"-guarded")
	return a, g, func() { stopG(); stopA() }
}

// BenchmarkStdioInProcessPaired: a known tools/call round trip to an
// in-process mcp-go (or go-sdk) stdio server over pipes, without and with
// the stdio guard.
func BenchmarkStdioInProcessPaired(b *testing.B) {
	for _, sdk := range []string{"mcpgo", "gosdk"} {
		b.Run(sdk, func(b *testing.B) {
			a, g, stop := inProcessPair(b, sdk)
			defer stop()
			pairedRoundTrips(b, a, g)
		})
	}
}

// BenchmarkStdioUnknownCallPaired: an unknown tools/call round trip to an
// in-process mcp-go (or go-sdk) stdio server: alone its own not-found
// answer, guarded the translated answer from the kept list.
func BenchmarkStdioUnknownCallPaired(b *testing.B) {
	const call = `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"ech","arguments":{"text":"hello, world"}}}` + "\n"
	for _, sdk := range []string{"mcpgo", "gosdk"} {
		b.Run(sdk, func(b *testing.B) {
			a, g, stop := inProcessPair(b, sdk)
			defer stop()
			pairedCalls(b, a, g, call, `ech`, `"Unknown tool: ech. Did you mean echo? Call tools/list for the available tools.","data":{"availableTools":["add","echo"]`)
		})
	}
}

// inProcessRaw serves mode on pipes and returns a round tripper for it.
func inProcessRaw(b *testing.B, mode string) (*roundTripper, func()) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		serveStdio(b.Context(), mode, inR, outW)
		outW.Close()
	}()
	return &roundTripper{w: inW, br: bufio.NewReaderSize(outR, 64<<10)}, func() {
		inW.Close()
		go io.Copy(io.Discard, outR)
		<-done
	}
}

// BenchmarkStdioCommandPaired: the same round trip to an mcp-go stdio
// server process, alone and behind toolguard-stdio, over pipes.
func BenchmarkStdioCommandPaired(b *testing.B) {
	pairedProcesses(b, helperServer(b, "mcpgo"), wrapped(b, helperServer(b, "mcpgo")))
}

// pairedProcesses starts the two commands, each spoken to over its pipes,
// and pairs their round trips; they end with the benchmark.
func pairedProcesses(b *testing.B, alone, guarded []string) {
	rts := make([]*roundTripper, 2)
	for i, argv := range [][]string{alone, guarded} {
		cmd := exec.Command(argv[0], argv[1:]...)
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		defer func() {
			in.Close()
			cmd.Wait()
		}()
		rts[i] = &roundTripper{w: in, br: bufio.NewReaderSize(out, 64<<10)}
	}
	pairedRoundTrips(b, rts[0], rts[1])
}

// BenchmarkStdioCommandVsBareRelay: the same round trip to an mcp-go stdio
// server process behind toolguard-stdio and behind a bare relay (a process
// that runs the server and only copies bytes both ways, with the Go
// runtime's default pipe copying): what reading the lines costs on top of
// being a process in between.
func BenchmarkStdioCommandVsBareRelay(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	relay := []string{"env", "TOOLGUARD_STDIO_RELAY=1", exe, "-test.run=^TestStdioHelperServer$", "mcpgo"}
	pairedProcesses(b, relay, wrapped(b, helperServer(b, "mcpgo")))
}
