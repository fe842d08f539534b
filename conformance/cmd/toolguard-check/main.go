// Command toolguard-check probes MCP servers with a made-up tool name and
// says whether they answer with a JSON-RPC error (VERIFIED), with anything
// else (OBSERVED_RISK), or could not be asked (UNVERIFIED).
//
// Usage:
//
//	toolguard-check [flags] URL
//	toolguard-check [flags] -stdio -- COMMAND [ARG...]
//	toolguard-check [flags] -fleet FILE     (FILE "-" reads standard input)
//
// A fleet file holds one target per line: a URL, or "stdio:" and a command
// line. Blank lines and lines starting with # are skipped.
//
// Exit status: 0 VERIFIED, 1 OBSERVED_RISK, 2 UNVERIFIED, 64 usage error.
// In fleet mode: 1 if any target is OBSERVED_RISK, else 2 if any is
// UNVERIFIED, else 0.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/toolguard/toolguard/conformance"
)

// Exit statuses.
const (
	exitVerified   = 0
	exitRisk       = 1
	exitUnverified = 2
	exitUsage      = 64
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("toolguard-check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		opts        conformance.Options
		asJSON      = fs.Bool("json", false, "print JSON instead of a table")
		stdio       = fs.Bool("stdio", false, "the arguments after -- are a command that speaks MCP over stdio")
		fleetFile   = fs.String("fleet", "", "check every target listed in `file` (- for standard input)")
		concurrency = fs.Int("concurrency", 16, "fleet: targets checked at once")
		spacing     = fs.Duration("spacing", 250*time.Millisecond, "fleet: least time between two requests to one host")
		quiet       = fs.Bool("quiet", false, "fleet: no progress on standard error")
	)
	opts.Header = http.Header{}
	fs.StringVar(&opts.ProbeName, "name", conformance.DefaultProbeName, "the made-up tool `name` to call")
	fs.DurationVar(&opts.Timeout, "timeout", 15*time.Second, "timeout of each request")
	fs.IntVar(&opts.MaxPages, "max-pages", 20, "most tools/list pages to follow")
	fs.StringVar(&opts.Era, "era", "", "force a protocol era: 2025-11-25 or 2026-07-28 (default: try 2026-07-28, fall back)")
	fs.Func("header", "send `'Name: value'` with every request (repeatable), e.g. your own Authorization", func(s string) error {
		k, v, ok := strings.Cut(s, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return errors.New("want 'Name: value'")
		}
		opts.Header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		return nil
	})
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: toolguard-check [flags] URL
       toolguard-check [flags] -stdio -- COMMAND [ARG...]
       toolguard-check [flags] -fleet FILE

Calls a made-up tool on an MCP server and classifies the answer.
Exit status: 0 VERIFIED, 1 OBSERVED_RISK, 2 UNVERIFIED, 64 usage error.

`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	usage := func(msg string) int {
		fmt.Fprintln(stderr, "toolguard-check:", msg)
		fs.Usage()
		return exitUsage
	}

	if *fleetFile != "" {
		if fs.NArg() != 0 || *stdio {
			return usage("-fleet takes no other targets")
		}
		targets, err := readTargets(*fleetFile, stdin)
		if err != nil {
			fmt.Fprintln(stderr, "toolguard-check:", err)
			return exitUsage
		}
		return fleet(ctx, targets, opts, conformance.FleetOptions{
			Concurrency: *concurrency,
			HostSpacing: *spacing,
		}, *asJSON, *quiet, stdout, stderr)
	}

	var rep conformance.Report
	var err error
	switch {
	case *stdio:
		if fs.NArg() == 0 {
			return usage("-stdio needs a command")
		}
		rep, err = conformance.CheckCommand(ctx, fs.Args(), opts)
	case fs.NArg() == 1:
		rep, err = conformance.CheckURL(ctx, fs.Arg(0), opts)
	default:
		return usage("want one URL")
	}
	if err != nil {
		fmt.Fprintln(stderr, "toolguard-check:", err)
		return exitUsage
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
	} else {
		printReport(stdout, rep)
	}
	return exitCode(rep.Verdict)
}

func exitCode(v conformance.Verdict) int {
	switch v {
	case conformance.Verified:
		return exitVerified
	case conformance.ObservedRisk:
		return exitRisk
	}
	return exitUnverified
}

func printReport(w io.Writer, r conformance.Report) {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	verdict := string(r.Verdict)
	if r.Category != "" {
		verdict += " " + string(r.Category)
	}
	fmt.Fprintf(tw, "target\t%s\n", r.Target)
	fmt.Fprintf(tw, "check\t%s\n", r.Check)
	fmt.Fprintf(tw, "verdict\t%s\n", verdict)
	if r.Stage != "" {
		fmt.Fprintf(tw, "decided at\t%s\n", r.Stage)
	}
	if r.HTTPStatus != 0 {
		fmt.Fprintf(tw, "reply\tHTTP %d, %s\n", r.HTTPStatus, r.MediaType)
	}
	if r.ErrorCode != nil {
		fmt.Fprintf(tw, "error code\t%d\n", *r.ErrorCode)
	}
	fmt.Fprintf(tw, "protocol\t%s\n", r.Era)
	fmt.Fprintf(tw, "tools listed\t%d\n", r.Tools)
	if r.Detail != "" {
		fmt.Fprintf(tw, "detail\t%s\n", r.Detail)
	}
	tw.Flush()
}

func readTargets(name string, stdin io.Reader) ([]string, error) {
	var r io.Reader = stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	var targets []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		targets = append(targets, line)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(targets) == 0 {
		return nil, errors.New("no targets in " + name)
	}
	return targets, nil
}

func fleet(ctx context.Context, targets []string, opts conformance.Options, fo conformance.FleetOptions,
	asJSON, quiet bool, stdout, stderr io.Writer) int {
	start := time.Now()
	if !quiet {
		fo.Progress = func(done, total int, r conformance.Report) {
			fmt.Fprintf(stderr, "\r[%d/%d] %s", done, total, time.Since(start).Round(time.Second))
			if done == total {
				fmt.Fprintln(stderr)
			}
		}
	}
	reports := conformance.CheckFleet(ctx, targets, opts, fo)
	sum := conformance.Summarize(reports)
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(struct {
			Reports []conformance.Report                                 `json:"reports"`
			Total   int                                                  `json:"total"`
			Verdict map[conformance.Verdict]int                          `json:"verdicts"`
			Detail  map[conformance.Verdict]map[conformance.Category]int `json:"categories"`
		}{reports, sum.Total, sum.ByVerdict, sum.ByCategory})
	} else {
		for _, r := range reports {
			line := fmt.Sprintf("%-14s", r.Verdict)
			if r.Category != "" {
				line += fmt.Sprintf(" %-22s", r.Category)
			} else {
				line += fmt.Sprintf(" %-22s", "-")
			}
			fmt.Fprintf(stdout, "%s %s\n", line, r.Target)
		}
		fmt.Fprintln(stdout)
		sum.WriteTable(stdout)
	}
	switch {
	case sum.ByVerdict[conformance.ObservedRisk] > 0:
		return exitRisk
	case sum.ByVerdict[conformance.Unverified] > 0:
		return exitUnverified
	}
	return exitVerified
}
