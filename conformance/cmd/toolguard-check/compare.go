package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/toolguard/toolguard/conformance"
)

// readReports reads the JSON lines of a -json run: one report a line.
// Lines that are not reports (a line cut by an interrupted run) are
// skipped, as -resume skips them, and said on stderr: a target such a
// line held counts as gone. A file without any report is an error.
func readReports(file string, stderr io.Writer) ([]conformance.Report, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var reps []conformance.Report
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		var r conformance.Report
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.Target == "" || r.Verdict == "" {
			if len(bytes.TrimSpace(sc.Bytes())) > 0 {
				fmt.Fprintf(stderr, "toolguard-check: %s:%d: not a report (a line cut by an interrupted run?): a target it held counts as gone\n", file, n)
			}
			continue
		}
		reps = append(reps, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	if len(reps) == 0 {
		return nil, fmt.Errorf("%s: no reports (want the JSON lines of a toolguard-check -fleet -json run)", file)
	}
	return reps, nil
}

// compareFiles prints what changed from the run in before to the run in
// after, and returns the exit status: exitWorse if anything got worse.
// The error is for a file that cannot be read.
func compareFiles(before, after string, asJSON bool, stdout, stderr io.Writer) (int, error) {
	was, err := readReports(before, stderr)
	if err != nil {
		return 0, err
	}
	now, err := readReports(after, stderr)
	if err != nil {
		return 0, err
	}
	c := conformance.Compare(was, now)
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if c.Changes == nil {
			c.Changes = []conformance.Change{}
		}
		enc.Encode(c)
	} else {
		writeChanges(stdout, c)
	}
	if c.Worse() {
		return exitWorse, nil
	}
	return exitVerified, nil
}

// writeChanges writes a comparison as a table, worst first, then a line
// of counts.
func writeChanges(w io.Writer, c conformance.Comparison) {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "change\ttarget\tbefore\tafter")
	for _, ch := range c.Changes {
		target := ch.Target
		if ch.Registry != nil {
			target = ch.Registry.Name + " " + ch.Registry.Entry + " (" + ch.Target + ")"
		} else if ch.Label != "" {
			target += " (" + ch.Label + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", ch.Kind, target, outcomeText(ch.Before), outcomeText(ch.After))
	}
	tw.Flush()
	for line := range strings.Lines(b.String()) {
		io.WriteString(w, strings.TrimRight(line, " \n")+"\n")
	}
	var counts []string
	for _, k := range []conformance.ChangeKind{conformance.Worse, conformance.Better, conformance.Changed, conformance.New, conformance.Gone} {
		counts = append(counts, fmt.Sprintf("%s %d", k, c.Counts[k]))
	}
	fmt.Fprintf(w, "%s, unchanged %d\n", strings.Join(counts, ", "), c.Unchanged)
}

// outcomeText is one side of a change: the verdict, its category and
// code, the mcp_name_header state, and the registry version.
func outcomeText(o *conformance.Outcome) string {
	if o == nil {
		return "-"
	}
	s := string(o.Verdict)
	if o.Category != "" {
		s += " " + string(o.Category)
	}
	if o.ErrorCode != nil {
		s += fmt.Sprintf(" %d", *o.ErrorCode)
	}
	if o.NameHeader != "" && o.NameHeader != conformance.NotApplicable {
		s += ", " + conformance.NameHeaderCheck + " " + string(o.NameHeader)
	}
	if o.Version != "" {
		s += " @" + o.Version
	}
	return s
}

// readEnvFile adds the NAME=VALUE lines of file to inputs. Blank lines and
// lines starting with # are skipped; the value is everything after the
// first =, as it stands (no quotes are removed).
func readEnvFile(file string, inputs map[string]string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	n := 0
	for line := range strings.Lines(string(data)) {
		n++
		line = strings.TrimRight(line, "\r\n")
		if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if k = strings.TrimSpace(k); !ok || k == "" {
			return fmt.Errorf("%s:%d: want NAME=VALUE", file, n)
		}
		if _, given := inputs[k]; !given { // -env on the command line wins
			inputs[k] = v
		}
	}
	return nil
}
