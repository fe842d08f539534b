// Command toolguard-stdio puts the toolguard stdio guard in front of any MCP
// server that speaks over standard input and output, in any language.
//
// Usage:
//
//	toolguard-stdio [flags] [--] COMMAND [ARG...]
//
// It starts COMMAND in a process group of its own and passes every client
// line to it at once, byte for byte, and every server line back, except the
// server's own answer to a tools/call for a tool it does not have, which is
// replaced by JSON-RPC error -32602 with the list the server gave the
// client's own tools/list. It asks the server nothing itself.
//
// The end of the client's input only closes the server's; signals go to the
// server's group (a second SIGINT, SIGTERM or SIGQUIT sends SIGKILL); the server is
// ended (SIGTERM -grace later, then SIGKILL) only when the client is gone.
// Exit status: the server's (128+N for signal N), 74 when the client
// stopped reading, 0 for -h and -version, 64 for a usage error, 127 when
// the command cannot be started. docs/COMMANDS.md has the lifecycle, the
// flags and why -grace is 5s; docs/CLIENTS.md each MCP client's
// configuration (an absolute path: clients do not use the shell's PATH):
//
//	"command": "/home/you/go/bin/toolguard-stdio",
//	"args": ["--", "npx", "-y", "@modelcontextprotocol/server-everything"]
package main

import (
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/toolguard/toolguard/internal/cli"
	"github.com/toolguard/toolguard/internal/proc"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// brokenGrace is the most the server has to exit once the client stopped
// reading: no one waits for its answers.
const brokenGrace = 500 * time.Millisecond

// defaultGrace is -grace's default: a server that takes a few seconds to
// exit once the client asked it to stop keeps its own status.
const defaultGrace = 5 * time.Second

const (
	exitClientGone = 74 // EX_IOERR: the client stopped reading
	exitUsage      = cli.ExitUsage
	exitNotFound   = 127
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// usageText is the start of -h, with every exit status.
const usageText = `usage: toolguard-stdio [flags] [--] COMMAND [ARG...]

The server runs in a process group of its own. When the client's input
ends, the server's input is closed and nothing more: everything the server
still writes reaches the client, and toolguard-stdio exits with the
server's status when it exits (MCP's stdio shutdown: the client closes the
server's input, waits for it to exit, then sends SIGTERM, then SIGKILL).
SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 are forwarded to the
server's group; a second SIGINT, SIGTERM or SIGQUIT sends it SIGKILL. Once the client is
gone (it signalled, or a write to standard output failed), a server still
running -grace later gets SIGTERM (SIGKILL when SIGTERM was the client's
signal), then SIGKILL as long after that, its whole group with it (500ms
each once the client stopped reading).

Exit status:
  the server's  when it exits (128+N when signal N ended it: 143 for
                SIGTERM, 137 for SIGKILL)
  74            the client stopped reading (a write to standard output failed)
  0             -h, -version
  64            usage error
  127           the command cannot be started

flags:
`

func run(args []string, stdin io.Reader, stdout io.WriteCloser, stderr io.Writer) int {
	opts, grace, argv, obs, code := parse(args, stdout, stderr)
	if argv == nil {
		return code
	}
	logger := obs.log.Log(slog.LevelWarn)

	out := &clientOut{w: stdout, broke: make(chan struct{})}
	in := &clientIn{r: stdin}
	guard, err := toolguard.NewStdio(in, out, opts)
	if err != nil {
		fmt.Fprintln(stderr, "toolguard-stdio:", err)
		return exitUsage
	}

	signals := make(chan os.Signal, 4)
	defer notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)()
	passOn := make(chan os.Signal, 4)
	defer notify(passOn, proc.PassedOn...)()
	// A write to a closed standard output returns EPIPE instead of ending
	// toolguard-stdio (Go's default for fds 1 and 2). Notify rather than
	// Ignore: an ignored signal would be inherited by the server.
	defer notify(make(chan os.Signal, 1), syscall.SIGPIPE)()

	cmd, serverIn, outR, code := startServer(argv, grace, stderr)
	if cmd == nil {
		return code
	}
	defer obs.writeStats() // once the session has ended

	// Client to server (the guard holds none of its bytes). When the
	// client's input ends, the server's input is closed: that is all the
	// end of input does (MCP's stdio shutdown leaves waiting, SIGTERM and
	// SIGKILL to the client).
	go func() {
		io.Copy(serverIn, guard.Reader())
		serverIn.Close()
	}()
	// Server to client. Once the client stopped reading, out discards.
	drained := make(chan struct{})
	fromServer := &serverOut{f: outR}
	go func() {
		io.Copy(guard.Writer(), fromServer)
		guard.Writer().Close()
		close(drained)
	}()

	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var (
		waitErr   error
		wait      = grace     // each step of the end, once the client is gone
		stop      *time.Timer // runs once the client is gone
		stopC     <-chan time.Time
		deadline  time.Time      // when stop fires
		next      syscall.Signal // what stop sends the group
		since     string         // what the server has had wait since
		stopAsks  int            // SIGINT, SIGTERM and SIGQUIT received
		signalled bool           // any signal of the client's received
		broke     = out.broke
	)
	// gone starts the end of the server, once the client is gone: its
	// input is closed, and from now the server has wait (or less if it
	// had less) before its group gets next.
	gone := func(first syscall.Signal, why string) {
		serverIn.Close()
		at := time.Now().Add(wait)
		switch {
		case stop == nil:
			next, since = first, why
			stop = time.NewTimer(wait)
			stopC = stop.C
		case stopC != nil && at.Before(deadline):
			stop.Reset(wait)
			since = why
		default:
			return
		}
		deadline = at
	}
	for done := false; !done; {
		select {
		case sig := <-signals:
			signalled = true
			if sig != syscall.SIGHUP {
				stopAsks++
			}
			if stopAsks > 1 {
				logger.Printf("%s again while the server runs; SIGKILL to its process group", sigName(sig))
				proc.SignalGroup(cmd.Process, syscall.SIGKILL)
				if stop != nil {
					stop.Stop()
				}
				stopC = nil
				continue
			}
			proc.SignalGroup(cmd.Process, sig)
			// The client asked the server to stop: SIGTERM next, unless
			// that is what it sent.
			gone(after(sig), "the client's "+sigName(sig))
		case sig := <-passOn:
			proc.SignalGroup(cmd.Process, sig)
		case <-broke:
			broke = nil
			logger.Printf("the client stopped reading (%v); closing the server's input", out.error())
			wait = min(wait, brokenGrace)
			gone(syscall.SIGTERM, "the client stopped reading")
		case <-stopC:
			logger.Printf("the server is still running %v after %s; %s to its process group", wait, since, sigName(next))
			proc.SignalGroup(cmd.Process, next)
			if next == syscall.SIGTERM {
				next, since = syscall.SIGKILL, "SIGTERM"
				stop.Reset(wait)
				deadline = time.Now().Add(wait)
			} else {
				stopC = nil
			}
		case waitErr = <-exited:
			done = true
		}
	}
	if stop != nil {
		stop.Stop()
	} else {
		noteEarlyEnd(stderr, argv[0], in, cmd.ProcessState)
	}
	endLeftovers(cmd.Process, wait, drained, logger)
	tick := time.NewTicker(wait)
	awaitDrained(drained, fromServer, tick.C, signals, signalled)
	tick.Stop()
	if out.error() != nil {
		return exitClientGone
	}
	return exitStatus(cmd.ProcessState, waitErr, stderr)
}

// notify relays to c those of sigs that were not ignored when
// toolguard-stdio started, and returns the function that stops it. An
// ignored one stays ignored, so that the server inherits it as it would
// alone (nohup, a shell's background job), and is never passed on.
func notify(c chan os.Signal, sigs ...os.Signal) (stop func()) {
	sigs = slices.DeleteFunc(slices.Clone(sigs), signal.Ignored)
	if len(sigs) == 0 { // (Notify of none would relay every signal)
		return func() {}
	}
	signal.Notify(c, sigs...)
	return func() { signal.Stop(c) }
}

// after is the signal the server's group gets if it outlives the one
// the client sent: SIGKILL after SIGTERM, SIGTERM after any other.
func after(sig os.Signal) syscall.Signal {
	if sig == syscall.SIGTERM {
		return syscall.SIGKILL
	}
	return syscall.SIGTERM
}

// noteEarlyEnd says, in one line, that the server ended by itself before
// the client sent a byte (ps nil: it did not end by itself), and whether
// the client's input had ended by then (a server ends when its input
// does): whatever the server wrote to standard error is above, and this
// says that it is the server that is gone. The command's name alone, for
// its arguments may hold secrets.
func noteEarlyEnd(stderr io.Writer, name string, in *clientIn, ps *os.ProcessState) {
	switch {
	case in.sent.Load() || ps == nil:
	case in.ended.Load():
		fmt.Fprintf(stderr, "toolguard-stdio: the server (%s) %s after the client closed its input without sending anything\n", name, ended(ps))
	default:
		fmt.Fprintf(stderr, "toolguard-stdio: the server (%s) %s before the client sent anything\n", name, ended(ps))
	}
}

// awaitDrained waits for the server's output to be copied to its end,
// however long the client takes to read it, unless the client signals
// (it wants toolguard-stdio gone: what is left goes unread), now or, when
// signalled, before the server ended: then it waits one tick at most.
// Only where one read of that output has waited from one tick to the next
// does a process outside the group (one that called setsid) still hold it
// open, writing nothing: it is closed then.
func awaitDrained(drained <-chan struct{}, out *serverOut, tick <-chan time.Time, signals <-chan os.Signal, signalled bool) {
	last := int64(-1)
	for {
		select {
		case <-drained:
			return
		case <-signals:
			out.f.Close()
			return
		case <-tick:
			n := out.seq.Load()
			switch {
			case signalled: // the copy may wait on a client that reads no more
				out.f.Close()
				return
			case n%2 == 1 && n == last:
				out.f.Close()
				<-drained
				return
			}
			last = n
		}
	}
}

// serverOut is the read end of the server's output. seq counts the starts
// and the ends of its reads: it is odd while one is under way.
type serverOut struct {
	f   *os.File
	seq atomic.Int64
}

func (o *serverOut) Read(b []byte) (int, error) {
	o.seq.Add(1)
	n, err := o.f.Read(b)
	o.seq.Add(1)
	return n, err
}

// startServer starts the server's command in a process group of its own,
// its standard error the wrapper's, and returns it with its input and the
// read end of its output; on failure, it writes why and returns a nil cmd
// and the exit status.
func startServer(argv []string, grace time.Duration, stderr io.Writer) (cmd *exec.Cmd, serverIn io.WriteCloser, outR *os.File, code int) {
	cmd = exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = stderr
	// When stderr is not a file, Wait copies the server's standard error
	// until every process holding it is gone: a child the server left
	// would hold Wait, so that copy gets grace once the server exited.
	cmd.WaitDelay = grace
	proc.OwnGroup(cmd)
	proc.EndWithParent(cmd)
	serverIn, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintln(stderr, "toolguard-stdio:", err)
		return nil, nil, nil, exitNotFound
	}
	// Our own pipe rather than StdoutPipe: Wait must not close it before
	// everything the server wrote has been read.
	outR, outW, err := os.Pipe()
	if err != nil {
		fmt.Fprintln(stderr, "toolguard-stdio:", err)
		return nil, nil, nil, exitNotFound
	}
	cmd.Stdout = outW

	if err := cmd.Start(); err != nil {
		outR.Close()
		outW.Close()
		fmt.Fprintln(stderr, "toolguard-stdio: cannot start the server:", err)
		return nil, nil, nil, exitNotFound
	}
	outW.Close()
	return cmd, serverIn, outR, 0
}

// endLeftovers ends what is left of the server's process group once the
// server itself has exited: what is still there grace later (a child
// holding the server's output, say) gets SIGTERM, and SIGKILL if any of
// it is still there grace after that. It returns once the group is gone or
// after the SIGKILL.
func endLeftovers(p *os.Process, grace time.Duration, drained <-chan struct{}, logger *log.Logger) {
	if !proc.GroupAlive(p.Pid) {
		return
	}
	deadline := time.Now().Add(grace)
	select {
	case <-drained:
	case <-time.After(grace):
	}
	for proc.GroupAlive(p.Pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // children ending as the server did
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		if !proc.GroupAlive(p.Pid) {
			return
		}
		if err := proc.SignalGroup(p, sig); err != nil {
			logger.Printf("the server has exited, processes it started have not, and %s cannot reach its process group: %v", sigName(sig), err)
			return
		}
		logger.Printf("the server has exited, processes it started have not; %s to its process group", sigName(sig))
		for deadline := time.Now().Add(grace); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if !proc.GroupAlive(p.Pid) {
				return
			}
		}
	}
}

// clientIn is the client's standard input; sent is set once a read has
// returned a byte, ended once one has returned an error (its end).
type clientIn struct {
	r     io.Reader
	sent  atomic.Bool
	ended atomic.Bool
}

func (c *clientIn) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 && !c.sent.Load() {
		c.sent.Store(true)
	}
	if err != nil {
		c.ended.Store(true)
	}
	return n, err
}

// clientOut is the client's standard output. After a write fails (the
// client closed its end: EPIPE), broke is closed and later writes are
// discarded, so the server's output is still read until it exits.
type clientOut struct {
	w     io.WriteCloser
	once  sync.Once
	broke chan struct{}
	mu    sync.Mutex
	err   error
}

func (c *clientOut) Write(p []byte) (int, error) {
	if c.error() != nil {
		return len(p), nil
	}
	if _, err := c.w.Write(p); err != nil {
		c.mu.Lock()
		c.err = err
		c.mu.Unlock()
		c.once.Do(func() { close(c.broke) })
	}
	return len(p), nil
}

func (c *clientOut) Close() error { return c.w.Close() }

// error is the first write error, or nil.
func (c *clientOut) error() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// parse reads the flags and the server's command line. argv is nil when
// run must return code at once (-h, -version, or a usage error, already
// written).
func parse(args []string, stdout, stderr io.Writer) (opts toolguard.StdioOptions, grace time.Duration, argv []string, obs *observe, code int) {
	cmd := cli.New("toolguard-stdio", usageText)
	fs := cmd.Flags
	fs.IntVar(&opts.ToolListLimit, "tool-list-limit", toolguard.DefaultToolListLimit, "cap on the names listed in data.availableTools; more than 0 (-hide-tool-list leaves the list out)")
	fs.BoolVar(&opts.HideToolList, "hide-tool-list", false, "leave data.availableTools out of translated answers")
	fs.BoolVar(&opts.HideSuggestions, "hide-suggestions", false, "leave data.suggestions out of translated answers")
	fs.BoolVar(&opts.BareMessage, "bare-message", false, "the message is \"Unknown tool: X\" alone, the spec's example (by default it also names the nearest names and says to call tools/list)")
	fs.IntVar(&opts.MaxLineBytes, "max-line-bytes", toolguard.DefaultMaxBodyBytes, "longer client lines pass through unread and untracked (their answers are not translated); more than 0")
	logAnswers := fs.Bool("log", false, "write one line to standard error per translated not-found answer, saying why when it went out without data.availableTools, and per client line that may be a tools/call the guard left untracked (too long, or outside the strict subset)")
	fs.DurationVar(&grace, "grace", defaultGrace, "once the client is gone (it signalled, or stopped reading), how long the server has to exit before its process group gets SIGTERM, and then SIGKILL as long after that (500ms at most once the client stopped reading); also what the server's leftovers get once it exited. The end of the client's input starts no clock; more than 0")
	obs = observeFlags(fs)
	if err := cmd.Parse(args); err != nil {
		return opts, 0, nil, nil, cmd.Exit(err, stdout, stderr)
	}
	if err := checkFlags(&opts); err != nil {
		return opts, 0, nil, nil, cmd.Usage(stderr, err.Error())
	}
	if grace <= 0 {
		return opts, 0, nil, nil, cmd.Usage(stderr, fmt.Sprintf("-grace must be more than 0, not %v", grace))
	}
	if fs.NArg() == 0 {
		return opts, 0, nil, nil, cmd.Usage(stderr, "no server command: toolguard-stdio [flags] [--] COMMAND [ARG...]")
	}
	if err := obs.hooks(&opts, stderr, *logAnswers); err != nil {
		return opts, 0, nil, nil, cmd.Usage(stderr, err.Error())
	}
	return opts, grace, fs.Args(), obs, 0
}

// checkFlags checks the flags' values, naming the flag.
func checkFlags(opts *toolguard.StdioOptions) error {
	switch {
	case opts.ToolListLimit <= 0:
		return fmt.Errorf("-tool-list-limit must be more than 0, not %d (-hide-tool-list leaves the list out)", opts.ToolListLimit)
	case opts.MaxLineBytes <= 0:
		return fmt.Errorf("-max-line-bytes must be more than 0, not %d", opts.MaxLineBytes)
	}
	return nil
}

// sigName is the name of a signal toolguard-stdio handles or sends.
func sigName(sig os.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	case syscall.SIGKILL:
		return "SIGKILL"
	}
	return sig.String()
}

// ended says how the server's process ended, with the status
// toolguard-stdio exits with.
func ended(ps *os.ProcessState) string {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("was ended by %s (exit status %d)", sigName(ws.Signal()), 128+int(ws.Signal()))
	}
	return fmt.Sprintf("exited with status %d", ps.ExitCode())
}

// exitStatus is the server's exit status, as a shell reports it.
func exitStatus(ps *os.ProcessState, err error, stderr io.Writer) int {
	if ps == nil {
		fmt.Fprintln(stderr, "toolguard-stdio:", err)
		return exitNotFound
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}
