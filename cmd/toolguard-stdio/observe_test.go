package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolguard/toolguard/internal/fixture"
)

// TestStatsFileHasTheSessionsCounts: with -stats, the counts of the
// session (a translated answer with the list, one without, an untracked
// line) are in the file once the session has ended, in the Prometheus
// text format, and no temporary file is left beside it.
func TestStatsFileHasTheSessionsCounts(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "toolguard.prom")
	lines := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope"}}` + "\n" +
		"[" + `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}` + "]\n" + listThenCall
	if got := session(t, lines, "-stats", file); !strings.Contains(got, `"code":-32602`) {
		t.Fatalf("answer %s", got)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# TYPE toolguard_translated_total counter\n",
		`toolguard_translated_total{list="yes"} 1` + "\n",
		`toolguard_translated_total{list="no"} 1` + "\n",
		"toolguard_unknown_tool_calls_total 2\n",
		`toolguard_unknown_tool_calls{tool="ech0"} 1` + "\n",
		`toolguard_unknown_tool_calls{tool="nope"} 1` + "\n",
		`toolguard_untracked_total{reason="not-strict"} 1` + "\n",
		`toolguard_untracked_total{reason="line-too-long"} 0` + "\n",
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("no %q in\n%s", want, b)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files in the directory, want the stats alone", len(entries))
	}
}

// TestStatsFileThatCannotBeWrittenIsLogged: a -stats file in a
// directory that does not exist is one log line; the exit status is the
// server's.
func TestStatsFileThatCannotBeWrittenIsLogged(t *testing.T) {
	var log fixture.SyncBuffer
	sessionLog(t, listThenCall, &log, "-stats", filepath.Join(t.TempDir(), "no", "such.prom"))
	if !strings.Contains(log.String(), "-stats ") || !strings.Contains(log.String(), "no such file") {
		t.Errorf("log %q", log.String())
	}
	// Said at the start, before any client line, and again at the end.
	if first, _, _ := strings.Cut(log.String(), "\n"); !strings.Contains(first, "cannot be written") || strings.Count(log.String(), "-stats ") != 2 {
		t.Errorf("log %q", log.String())
	}
	// A directory (node_exporter's textfile collector takes one) is said
	// at the start too.
	var dirLog fixture.SyncBuffer
	sessionLog(t, listThenCall, &dirLog, "-stats", t.TempDir())
	if first, _, _ := strings.Cut(dirLog.String(), "\n"); !strings.Contains(first, "is a directory") || strings.Count(dirLog.String(), "-stats ") != 2 {
		t.Errorf("log %q", dirLog.String())
	}
}

// TestJSONLogLinesAreObjects: with -log -log-format json, a translation
// and an untracked line are each one JSON object with their fields.
func TestJSONLogLinesAreObjects(t *testing.T) {
	var log fixture.SyncBuffer
	sessionLog(t, "not json, but it mentions tools/call\n"+listThenCall, &log, "-log", "-log-format", "json")
	var events []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		events = append(events, m)
	}
	if len(events) != 2 || events[0]["event"] != "untracked" || events[0]["reason"] != "not-strict" ||
		events[1]["event"] != "translated" || events[1]["tool"] != "ech0" || events[1]["list"] != true || events[1]["cmd"] != "toolguard-stdio" {
		t.Errorf("%v", events)
	}
}

func TestUnknownLogFormatIsAUsageError(t *testing.T) {
	code, _, errOut := runWith(t, "", "-log-format", "xml", "--", "cat")
	if code != exitUsage || !strings.Contains(errOut, "-log-format must be text or json") {
		t.Errorf("exit %d, %q", code, errOut)
	}
}
