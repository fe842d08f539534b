// Command toolguard-stdio puts the toolguard stdio guard in front of any MCP
// server that speaks over standard input and output, in any language.
//
// Usage:
//
//	toolguard-stdio [flags] -- COMMAND [ARG...]
//
// It starts COMMAND, pipes the client's standard input to it and its
// standard output back through the guard, and passes its standard error
// through. A tools/call for a tool the server does not have is answered with
// JSON-RPC error -32602 listing the tools the caller can call; every other
// line reaches the server, and every line of the server reaches the client,
// byte for byte and in order. SIGINT, SIGTERM, SIGHUP and SIGQUIT are
// forwarded to the server. When standard input ends, the server's standard
// input is closed. toolguard-stdio exits with the server's status (128 plus
// the signal number when a signal ended it), or 0 after -h, 64 on a usage
// error and 127 when the command cannot be started.
//
// In a JSON MCP client configuration:
//
//	"command": "toolguard-stdio",
//	"args": ["--", "npx", "-y", "@modelcontextprotocol/server-everything"]
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	toolguard "github.com/toolguard/toolguard/middleware"
)

const (
	exitUsage    = 64
	exitNotFound = 127
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// drainGrace is how long the server's output is still read after it
// exited: a child it started may hold the pipe open.
const drainGrace = 2 * time.Second

func run(args []string, stdin io.Reader, stdout io.WriteCloser, stderr io.Writer) int {
	fs := flag.NewFlagSet("toolguard-stdio", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var opts toolguard.StdioOptions
	fs.DurationVar(&opts.ListTimeout, "list-timeout", toolguard.DefaultListTimeout, "longest a translated answer waits for the caller's tools/list; past it the answer goes out without data.availableTools (no call ever waits for it); more than 0")
	fs.IntVar(&opts.ToolListLimit, "tool-list-limit", toolguard.DefaultToolListLimit, "cap on the names listed in data.availableTools; 0 leaves the list out, as -hide-tool-list")
	fs.BoolVar(&opts.HideToolList, "hide-tool-list", false, "leave data.availableTools out of translated answers")
	fs.BoolVar(&opts.HideSuggestions, "hide-suggestions", false, "leave data.suggestions out of translated answers")
	fs.IntVar(&opts.MaxLineBytes, "max-line-bytes", toolguard.DefaultMaxBodyBytes, "longer client lines pass through unread and untracked (their answers are not translated); more than 0")
	logAnswers := fs.Bool("log", false, "write one line to standard error per translated not-found answer, saying why when it went out without data.availableTools, and per line the guard left untracked")
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: toolguard-stdio [flags] -- COMMAND [ARG...]\n\n"+
			"Exit status: the server's (128+N when signal N ended it), 0 for -h, 64 on a usage error,\n"+
			"127 when the command cannot be started.\n\nflags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return exitUsage
	}
	if err := checkFlags(&opts); err != nil {
		fmt.Fprintln(stderr, "toolguard-stdio:", err)
		return exitUsage
	}
	argv := fs.Args()
	if len(argv) == 0 {
		fmt.Fprintln(stderr, "toolguard-stdio: no server command (put it after --)")
		fs.Usage()
		return exitUsage
	}
	if *logAnswers {
		logger := log.New(stderr, "toolguard-stdio: ", log.LstdFlags)
		opts.OnReject = func(rej *toolguard.Rejection) {
			if rej.ListErr != nil {
				logger.Printf("translated the server's not-found answer for tool %q without data.availableTools: %v", rej.Name, rej.ListErr)
				return
			}
			logger.Printf("translated the server's not-found answer for tool %q", rej.Name)
		}
		opts.OnUntracked = func(reason string) {
			logger.Printf("untracked: %s", reason)
		}
	}

	guard, err := toolguard.NewStdio(stdin, stdout, opts)
	if err != nil {
		fmt.Fprintln(stderr, "toolguard-stdio:", err)
		return exitUsage
	}

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = stderr
	serverIn, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintln(stderr, "toolguard-stdio:", err)
		return exitNotFound
	}
	// Our own pipe rather than StdoutPipe: Wait must not close it before
	// everything the server wrote has been read.
	outR, outW, err := os.Pipe()
	if err != nil {
		fmt.Fprintln(stderr, "toolguard-stdio:", err)
		return exitNotFound
	}
	cmd.Stdout = outW

	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(signals)

	if err := cmd.Start(); err != nil {
		outR.Close()
		outW.Close()
		fmt.Fprintln(stderr, "toolguard-stdio:", err)
		return exitNotFound
	}
	outW.Close()

	// Client to server. When the client closes its end, so do we.
	go func() {
		io.Copy(serverIn, guard.Reader())
		serverIn.Close()
	}()
	// Server to client.
	drained := make(chan struct{})
	go func() {
		io.Copy(guard.Writer(), outR)
		guard.Writer().Close()
		close(drained)
	}()

	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var waitErr error
	for done := false; !done; {
		select {
		case sig := <-signals:
			cmd.Process.Signal(sig)
		case waitErr = <-exited:
			done = true
		}
	}
	select {
	case <-drained:
	case <-time.After(drainGrace):
		outR.Close()
		<-drained
	}
	return exitStatus(cmd.ProcessState, waitErr, stderr)
}

// checkFlags checks the flags' values, naming the flag, and makes 0 mean
// what it says where the library would read it as "the default".
func checkFlags(opts *toolguard.StdioOptions) error {
	switch {
	case opts.ListTimeout <= 0:
		return fmt.Errorf("-list-timeout must be more than 0, not %v (how long a translated answer may wait for the caller's tool list)", opts.ListTimeout)
	case opts.ToolListLimit < 0:
		return fmt.Errorf("-tool-list-limit must not be negative, not %d (0 leaves the list out)", opts.ToolListLimit)
	case opts.MaxLineBytes <= 0:
		return fmt.Errorf("-max-line-bytes must be more than 0, not %d", opts.MaxLineBytes)
	}
	if opts.ToolListLimit == 0 {
		opts.HideToolList = true // no names, not the library's default of 100
	}
	return nil
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
