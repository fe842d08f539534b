// Command toolguard-check probes MCP servers with a made-up tool name and
// says whether they answer with a JSON-RPC error (VERIFIED), with anything
// else (OBSERVED_RISK), or could not be asked (UNVERIFIED).
//
// Usage:
//
//	toolguard-check [flags] URL
//	toolguard-check [flags] -stdio -- COMMAND [ARG...]
//	toolguard-check [flags] -fleet FILE     (FILE "-" reads standard input)
//	toolguard-check [flags] -compare PREVIOUS.jsonl CURRENT.jsonl
//
// A fleet file holds one target a line (a URL, "stdio:" and a command line,
// or a JSON object with headers of its own), or MCP Registry documents
// (server.json, /v0.1/servers pages; -env gives their inputs). -compare
// prints what changed since an earlier run, exit 3 if anything got worse.
//
// Exit status: 0 VERIFIED, 1 OBSERVED_RISK, 2 UNVERIFIED, 64 usage error;
// in fleet mode 1 if any target is OBSERVED_RISK, else 2 if any is
// UNVERIFIED, else 0. -h prints the usage, -version the version.
// docs/CHECKER.md has the checks, the fleet format and the reports.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/toolguard/toolguard/conformance"
	"github.com/toolguard/toolguard/internal/cli"
)

// Exit statuses.
const (
	exitVerified   = 0
	exitRisk       = 1
	exitUnverified = 2
	exitWorse      = 3 // -compare: something got worse
	exitUsage      = cli.ExitUsage
)

func main() {
	// SIGTERM too (timeout, CI cancellation, docker stop): a stdio server
	// is ended with the check, not left running.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// flags are the command line's values.
type flags struct {
	opts                       conformance.Options
	asJSON, stdio, quiet       *bool
	fleetFile, resume, compare *string
	envFile, npx               *string
	concurrency, processes     *int
	spacing                    *time.Duration
	inputs                     map[string]string // -env, then -env-file
}

const usageHead = `usage: toolguard-check [flags] URL
       toolguard-check [flags] -stdio -- COMMAND [ARG...]
       toolguard-check [flags] -fleet FILE
       toolguard-check [flags] -compare PREVIOUS.jsonl CURRENT.jsonl

Calls a made-up tool on an MCP server and classifies the answer.
Exit status: 0 VERIFIED, 1 OBSERVED_RISK, 2 UNVERIFIED, 64 usage error
(0 for -h); a fleet: 1 if any target is OBSERVED_RISK, else 2 if any is
UNVERIFIED; with -compare: 3 if anything got worse, else 0.

`

// newFlags declares the flags on cmd.
func newFlags(cmd *cli.Command) *flags {
	fs := cmd.Flags
	f := &flags{
		asJSON:      fs.Bool("json", false, "print JSON instead of a table"),
		stdio:       fs.Bool("stdio", false, "the arguments after -- are a command that speaks MCP over stdio"),
		fleetFile:   fs.String("fleet", "", "check every target listed in `file` (- for standard input), one a line: a URL, stdio:COMMAND, or {\"target\": ..., \"header\": {...}, \"label\": ...}"),
		concurrency: fs.Int("concurrency", 512, "fleet: targets in progress at once (a target waiting out -spacing costs next to nothing)"),
		processes:   fs.Int("processes", 8, "fleet: stdio servers running at once"),
		spacing:     fs.Duration("spacing", 250*time.Millisecond, "fleet: least time between two requests to one host (host:port)"),
		quiet:       fs.Bool("quiet", false, "fleet: no progress on standard error"),
		resume:      fs.String("resume", "", "fleet: skip the targets already reported in `file` (JSON lines of an earlier -json run)"),
		compare:     fs.String("compare", "", "print what changed since the earlier run in `file` (JSON lines of a -json run): after a -fleet run, or against the JSON lines file given as argument; exit 3 if anything got worse, else 0"),
		envFile:     fs.String("env-file", "", "registry documents: the inputs of `file`, NAME=VALUE a line (as -env)"),
		npx:         fs.String("npx", "npx -y", "registry documents: the `command` an npm package runs with, before identifier@version"),
		inputs:      map[string]string{},
	}
	f.opts.Header = http.Header{}
	fs.StringVar(&f.opts.ProbeName, "name", conformance.DefaultProbeName, "the made-up tool `name` to call")
	fs.DurationVar(&f.opts.Timeout, "timeout", 15*time.Second, "timeout of each request, over HTTP and stdio alike")
	fs.IntVar(&f.opts.MaxPages, "max-pages", 20, "most tools/list pages to follow")
	fs.Int64Var(&f.opts.MaxBodyBytes, "max-bytes", 4<<20, "longest reply read; a longer one is UNVERIFIED reply_too_large")
	fs.StringVar(&f.opts.Era, "era", "", "force a protocol era: 2025-11-25 or 2026-07-28 (default: try 2026-07-28, fall back)")
	fs.Func("header", "send `'Name: value'` with every request (repeatable), e.g. your own Authorization", func(s string) error {
		k, v, ok := strings.Cut(s, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return errors.New("want 'Name: value'")
		}
		f.opts.Header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		return nil
	})
	fs.Func("env", "registry documents: give the input `NAME=VALUE` (repeatable): a package's environment variable, or by name a remote's header, a {variable}, an argument's valueHint or --name", func(s string) error {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return errors.New("want NAME=VALUE")
		}
		f.inputs[k] = v
		return nil
	})
	return f
}

// check returns what is wrong with the flags' values, or "". 0 would mean
// the library's default: an explicit 0 is refused rather than read as a
// value it is not (-spacing 0 is no spacing).
func (f *flags) check() string {
	for _, c := range []struct {
		name string
		bad  bool
	}{
		{"-timeout", f.opts.Timeout <= 0}, {"-max-pages", f.opts.MaxPages <= 0}, {"-max-bytes", f.opts.MaxBodyBytes <= 0},
		{"-concurrency", *f.concurrency <= 0}, {"-processes", *f.processes <= 0},
	} {
		if c.bad {
			return c.name + " must be more than 0"
		}
	}
	switch {
	case f.opts.ProbeName == "":
		return "-name must not be empty (the made-up tool name to call)"
	case *f.spacing < 0:
		return "-spacing must not be negative"
	case strings.TrimSpace(*f.npx) == "":
		return "-npx must not be empty"
	}
	if *f.envFile != "" {
		if err := readEnvFile(*f.envFile, f.inputs); err != nil {
			return err.Error()
		}
	}
	return ""
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := cli.New("toolguard-check", usageHead)
	f := newFlags(cmd)
	if err := cmd.Parse(args); err != nil {
		return cmd.Exit(err, stdout, stderr)
	}
	usage := func(msg string) int { return cmd.Usage(stderr, msg) }
	if msg := f.check(); msg != "" {
		return usage(msg)
	}
	fs := cmd.Flags
	if only := fleetOnly(fs); only != "" && *f.fleetFile == "" {
		return usage(only + ": only a -fleet run reads it")
	}
	switch {
	case *f.compare != "" && *f.fleetFile == "":
		if fs.NArg() != 1 || *f.stdio {
			return usage("-compare without -fleet wants one file: the JSON lines of the later run")
		}
		code, err := compareFiles(*f.compare, fs.Arg(0), *f.asJSON, stdout, stderr)
		if err != nil {
			return usage(err.Error())
		}
		return code
	case *f.fleetFile != "":
		if fs.NArg() != 0 || *f.stdio {
			return usage("-fleet takes no other targets")
		}
		code, err := runFleet(ctx, f, stdin, stdout, stderr)
		if err != nil {
			return usage(err.Error())
		}
		return code
	}
	return checkOne(ctx, f, fs, usage, stdout, stderr)
}

// checkOne checks the one target the arguments name (a URL, or with
// -stdio a command) and prints its report; usage writes a usage error.
func checkOne(ctx context.Context, f *flags, fs *flag.FlagSet, usage func(string) int, stdout, stderr io.Writer) int {
	var rep conformance.Report
	var err error
	switch {
	case *f.stdio && fs.NArg() == 0:
		return usage("-stdio needs a command")
	case *f.stdio:
		rep, err = conformance.CheckCommand(ctx, fs.Args(), f.opts)
	case fs.NArg() == 1:
		rep, err = conformance.CheckURL(ctx, fs.Arg(0), f.opts)
	case fs.NArg() > 1 && strings.HasPrefix(fs.Arg(1), "-"):
		return usage("flags go before the URL: " + fs.Arg(1))
	default:
		return usage("want one URL (-fleet FILE checks many)")
	}
	if err != nil && ctx.Err() != nil {
		fmt.Fprintln(stderr, "toolguard-check: interrupted before the check ended: no report")
		return exitUnverified
	}
	if err != nil {
		return usage(err.Error())
	}
	if *f.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
	} else {
		printReport(stdout, rep)
	}
	return exitCode(rep.Verdict)
}

// fleetOnly names the flags given that only a -fleet run reads, or "".
func fleetOnly(fs *flag.FlagSet) string {
	var names []string
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "concurrency", "processes", "spacing", "quiet", "resume", "env", "env-file", "npx":
			names = append(names, "-"+fl.Name)
		}
	})
	return strings.Join(names, ", ")
}

// runFleet checks the targets of -fleet; an error is a usage error (a
// file that cannot be read).
func runFleet(ctx context.Context, f *flags, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	ropts := conformance.RegistryOptions{Values: f.inputs, Npx: strings.Fields(*f.npx)}
	targets, err := readTargets(*f.fleetFile, stdin, ropts, stderr, *f.quiet)
	if err != nil {
		return 0, err
	}
	var previous []conformance.Report
	if *f.compare != "" {
		if previous, err = readReports(*f.compare, stderr); err != nil {
			return 0, err
		}
	}
	var sum conformance.Summary
	var resumed []conformance.Report // for -compare: the run is these and what follows
	if *f.resume != "" {
		if targets, sum, resumed, err = skipDone(*f.resume, targets); err != nil {
			return 0, err
		}
	}
	return fleet(ctx, targets, sum, f.opts, conformance.FleetOptions{
		Concurrency: *f.concurrency,
		Processes:   *f.processes,
		HostSpacing: *f.spacing,
	}, *f.asJSON, *f.quiet, previous, resumed, *f.compare != "", stdout, stderr), nil
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
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 8, 2, ' ', 0)
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
	if r.Era != "" && (r.Stage == "tools/list" || r.Stage == "tools/call") { // the handshake completed
		fmt.Fprintf(tw, "protocol\t%s\n", r.Era)
	}
	if d := r.ErrorData; d != nil { // what a guard (toolguard's among them) adds
		fmt.Fprintf(tw, "error data\t%d availableTools, %d suggestions\n", len(d.AvailableTools), len(d.Suggestions))
	}
	if r.Stage == "tools/call" || r.Tools > 0 { // the list was read
		fmt.Fprintf(tw, "tools listed\t%d\n", r.Tools)
	}
	if r.Detail != "" {
		fmt.Fprintf(tw, "detail\t%s\n", r.Detail)
	}
	for _, h := range r.Hints {
		fmt.Fprintf(tw, "hint\t%s: %s\n", h.Kind, h.Text)
	}
	if c := r.Confirmation; c != nil {
		second := string(c.Verdict)
		if c.Category != "" {
			second += " " + string(c.Category)
		}
		if c.HTTPStatus != 0 {
			second += fmt.Sprintf(" (HTTP %d, %s)", c.HTTPStatus, c.MediaType)
		}
		fmt.Fprintf(tw, "second name\t%s: %s\n", c.Name, second)
	}
	if nh := r.NameHeader; nh.Check != "" {
		printNameHeader(tw, nh)
	}
	tw.Flush()
	for line := range strings.Lines(table.String()) {
		// The blank line between the two checks ("\t\n", which keeps the
		// two in one tabwriter column block) is padded like the others:
		// no trailing spaces.
		io.WriteString(w, strings.TrimRight(line, " \n")+"\n")
	}
}

// printNameHeader adds the mcp_name_header check to a report's table,
// after a blank line.
func printNameHeader(tw io.Writer, nh conformance.NameHeaderReport) {
	fmt.Fprintf(tw, "\t\n")
	fmt.Fprintf(tw, "check\t%s\n", nh.Check)
	fmt.Fprintf(tw, "state\t%s\n", nh.State)
	if nh.HTTPStatus != 0 {
		fmt.Fprintf(tw, "reply\tHTTP %d, %s\n", nh.HTTPStatus, nh.MediaType)
	}
	if nh.ErrorCode != nil {
		fmt.Fprintf(tw, "error code\t%d\n", *nh.ErrorCode)
	}
	if nh.Detail != "" {
		fmt.Fprintf(tw, "detail\t%s\n", nh.Detail)
	}
}

func readTargets(name string, stdin io.Reader, ropts conformance.RegistryOptions, stderr io.Writer, quiet bool) ([]conformance.Target, error) {
	var r io.Reader = stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	data = bytes.TrimPrefix(data, []byte("\uFEFF")) // a byte order mark, as some editors save a file
	if conformance.LooksLikeRegistry(data) {
		targets, repeats, err := conformance.ReadRegistry(bytes.NewReader(data), name, ropts)
		if err == nil && repeats > 0 && !quiet {
			fmt.Fprintf(stderr, "%s: %d registry entries repeated (the same name, version and member), checked once\n", name, repeats)
		}
		return targets, err
	}
	var targets []conformance.Target
	lines := map[string]int{} // a target's key (see targetKey): its line
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		tg := conformance.Target{Target: line}
		want := fmt.Errorf("%s:%d: want a URL, stdio:COMMAND or {\"target\": ..., \"header\": {...}, \"label\": ...}", name, n)
		if strings.HasPrefix(line, "{") {
			var t struct {
				Target string            `json:"target"`
				Header map[string]string `json:"header"`
				Label  string            `json:"label"`
			}
			dec := json.NewDecoder(strings.NewReader(line))
			dec.DisallowUnknownFields() // a misspelt "headers" would send no credentials
			if err := dec.Decode(&t); err != nil {
				return nil, fmt.Errorf("%w: %v", want, err)
			}
			if dec.More() {
				return nil, fmt.Errorf("%w: more after the object", want)
			}
			tg = conformance.Target{Target: t.Target, Label: t.Label}
			for k, v := range t.Header {
				if tg.Header == nil {
					tg.Header = http.Header{}
				}
				tg.Header.Set(k, v)
			}
		}
		if err := checkable(tg.Target); err != "" {
			return nil, fmt.Errorf("%w: %s", want, err)
		}
		key := targetKey(tg.Target, tg.Label, nil)
		if first, ok := lines[key]; ok {
			return nil, fmt.Errorf("%s:%d: the same target as line %d: give each its own \"label\" (a JSON line), or drop one", name, n, first)
		}
		lines[key] = n
		targets = append(targets, tg)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(targets) == 0 {
		return nil, errors.New("no targets in " + name)
	}
	return targets, nil
}

// checkable says what is wrong with a fleet line's target, or "": it
// must be an http or https URL with a host, or stdio: and a command.
func checkable(target string) string {
	if cmd, ok := strings.CutPrefix(target, "stdio:"); ok {
		if strings.TrimSpace(cmd) == "" {
			return "stdio: names no command"
		}
		return ""
	}
	if target == "" {
		return "no target"
	}
	if err := cli.HTTPURL(target); err != nil {
		return err.Error()
	}
	return ""
}

// targetKey is what tells a fleet target and its report from the others:
// its label, when it has one, its target, and the registry entry it came
// from.
func targetKey(target, label string, reg *conformance.RegistryRef) string {
	k := label + "\x00" + cli.Redacted(target) // (reports show it so)
	if reg != nil {
		k += "\x00" + reg.Entry
	}
	return k
}

// skipDone drops the targets an earlier run reported in file (JSON lines)
// and counts those reports, which it returns too; a report of a target
// not in this fleet is left out.
func skipDone(file string, targets []conformance.Target) ([]conformance.Target, conformance.Summary, []conformance.Report, error) {
	var sum conformance.Summary
	var reps []conformance.Report
	f, err := os.Open(file)
	if errors.Is(err, os.ErrNotExist) {
		return targets, sum, nil, nil // nothing done yet
	}
	if err != nil {
		return nil, sum, nil, err
	}
	defer f.Close()
	inFleet := map[string]bool{}
	for _, t := range targets {
		inFleet[targetKey(t.Target, t.Label, t.Registry)] = true
	}
	done := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var r conformance.Report
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.Target == "" || r.Verdict == "" {
			continue // a line cut by an interrupted run
		}
		k := targetKey(r.Target, r.Label, r.Registry)
		if done[k] || !inFleet[k] {
			continue // a repeat, or a target no longer in the fleet
		}
		done[k] = true
		sum.Add(r)
		reps = append(reps, r)
	}
	if err := sc.Err(); err != nil {
		return nil, sum, nil, err
	}
	left := targets[:0]
	for _, t := range targets {
		if !done[targetKey(t.Target, t.Label, t.Registry)] {
			left = append(left, t)
		}
	}
	return left, sum, reps, nil
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func fleet(ctx context.Context, targets []conformance.Target, resumed conformance.Summary, opts conformance.Options,
	fo conformance.FleetOptions, asJSON, quiet bool, previous, reports []conformance.Report, comparing bool, stdout, stderr io.Writer) int {
	start := time.Now()
	total := len(targets)
	if resumed.Total > 0 && !quiet {
		fmt.Fprintf(stderr, "%d targets already reported, %d to go\n", resumed.Total, total)
	}
	tty := isTerminal(stderr)
	step := max(1, total/20)
	done := 0
	out := bufio.NewWriter(stdout)
	enc := json.NewEncoder(out)
	all := resumed // this run and what -resume counted
	// reports are kept for -compare only: those -resume read, then this
	// run's.
	fo.Report = func(r conformance.Report) {
		done++
		all.Add(r)
		if comparing {
			reports = append(reports, r)
		}
		if asJSON {
			enc.Encode(r)
		} else {
			writeLines(out, r)
		}
		out.Flush() // a line per target as it finishes: the run can be read, cut, resumed
		if quiet {
			return
		}
		switch {
		case tty:
			fmt.Fprintf(stderr, "\r[%d/%d] %s", done, total, time.Since(start).Round(time.Second))
		case done%step == 0 || done == total:
			fmt.Fprintf(stderr, "[%d/%d] %s\n", done, total, time.Since(start).Round(time.Second))
		}
	}
	conformance.CheckFleet(ctx, slices.Values(targets), opts, fo)
	if tty && !quiet && done > 0 {
		fmt.Fprintln(stderr)
	}
	if ctx.Err() != nil && !quiet {
		fmt.Fprintf(stderr, "interrupted: %d of %d targets reported\n", done, total)
	}
	if asJSON {
		if !quiet {
			writeTable(stderr, all)
		}
	} else {
		fmt.Fprintln(stdout)
		writeTable(stdout, all)
	}
	if comparing {
		return writeCompared(conformance.Compare(previous, reports), asJSON, stdout, stderr)
	}
	switch {
	case all.ByVerdict[conformance.ObservedRisk] > 0:
		return exitRisk
	case all.ByVerdict[conformance.Unverified] > 0 || ctx.Err() != nil: // (an interrupted fleet verified nothing of the rest)
		return exitUnverified
	}
	return exitVerified
}

// writeLines writes a fleet report as its lines of text: the verdict, the
// Mcp-Name check on a line of its own (as Checkup reports every check),
// and each hint (notes, not verdicts).
func writeLines(out io.Writer, r conformance.Report) {
	cat := string(r.Category)
	if cat == "" {
		cat = "-"
	}
	target := r.Target
	if r.Label != "" {
		target += " (" + r.Label + ")"
	}
	fmt.Fprintf(out, "%-15s %-23s %s\n", r.Verdict, cat, target)
	if st := r.NameHeader.State; st != "" && st != conformance.NotApplicable {
		fmt.Fprintf(out, "%-15s %-23s %s\n", conformance.NameHeaderCheck, st, target)
	}
	for _, h := range r.Hints {
		fmt.Fprintf(out, "%-15s %-23s %s\n", "hint", h.Kind, target)
	}
}

// writeCompared writes what changed since the earlier run and returns the
// exit status. The run's reports are on standard output; with -json, the
// changes go to standard error as a table (compare two files for them in
// JSON).
func writeCompared(c conformance.Comparison, asJSON bool, stdout, stderr io.Writer) int {
	w := stdout
	if asJSON {
		w = stderr
	} else {
		fmt.Fprintln(stdout)
	}
	writeChanges(w, c)
	if c.Worse() {
		return exitWorse
	}
	return exitVerified
}

// writeTable writes the summary as the seed articles' table: each verdict
// with its count, and under it each category, most common first.
func writeTable(w io.Writer, s conformance.Summary) error {
	type row struct {
		label string
		n     int
	}
	rows := []row{}
	for _, v := range []conformance.Verdict{conformance.Verified, conformance.ObservedRisk, conformance.Unverified} {
		rows = append(rows, row{string(v), s.ByVerdict[v]})
		cats := make([]conformance.Category, 0, len(s.ByCategory[v]))
		for c := range s.ByCategory[v] {
			cats = append(cats, c)
		}
		slices.SortFunc(cats, func(a, b conformance.Category) int {
			if d := s.ByCategory[v][b] - s.ByCategory[v][a]; d != 0 {
				return d
			}
			return strings.Compare(string(a), string(b))
		})
		for _, c := range cats {
			rows = append(rows, row{"  " + string(c), s.ByCategory[v][c]})
		}
	}
	rows = append(rows, row{"total", s.Total})
	width := len(conformance.CheckName)
	for _, r := range rows {
		width = max(width, len(r.label))
	}
	second := []row{}
	for _, st := range []conformance.Strictness{conformance.Strict, conformance.Lenient, conformance.Undetermined, conformance.NotApplicable} {
		second = append(second, row{string(st), s.NameHeader[st]})
	}
	width = max(width, len(conformance.NameHeaderCheck))
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s  %7s\n", width, conformance.CheckName, "servers")
	for _, r := range rows {
		fmt.Fprintf(&b, "%-*s  %7d\n", width, r.label, r.n)
	}
	// The second check, counted on its own, never merged into the first.
	fmt.Fprintf(&b, "\n%-*s  %7s\n", width, conformance.NameHeaderCheck, "servers")
	for _, r := range second {
		fmt.Fprintf(&b, "%-*s  %7d\n", width, r.label, r.n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
