package main

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolguard/toolguard/conformance"
	"github.com/toolguard/toolguard/conformance/internal/zoo"
)

// One target: the table shows mcp_name_header as a check of its own, and
// the JSON carries it; the exit status is error_taxonomy's alone.
func TestNameHeaderInTableAndJSON(t *testing.T) {
	srv := httptest.NewServer(&zoo.Fake{Sessionless: true, LenientName: true, Tools: []string{"x"}})
	defer srv.Close()
	code, out, stderr := runCLI(t, "", srv.URL)
	if code != exitVerified {
		t.Errorf("exit %d (%s)", code, stderr)
	}
	for _, want := range []string{"check error_taxonomy verdict VERIFIED", "check mcp_name_header state lenient reply HTTP 200, application/json error code -32602"} {
		if !strings.Contains(words(out), want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	_, out, _ = runCLI(t, "", "-json", srv.URL)
	var rep conformance.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.NameHeader.State != conformance.Lenient || rep.NameHeader.Check != "mcp_name_header" {
		t.Errorf("%v: %s", err, out)
	}
}

// A fleet: each 2026-07-28 target's mcp_name_header on a line of its own,
// and the summary counts it in a table of its own; a risk confirmed shows
// its second name in the table of one target.
func TestFleetSummaryCountsNameHeader(t *testing.T) {
	strict, lenient, old := zoo.NameHeaderServers(t)
	list := strict + "\n" + lenient + "\n" + old + "\n"
	code, out, _ := runCLI(t, list, "-fleet", "-", "-spacing", "1ms", "-quiet")
	if code != exitVerified {
		t.Errorf("exit %d", code)
	}
	for _, want := range []string{
		"mcp_name_header strict " + strict, "mcp_name_header lenient " + lenient,
		"error_taxonomy servers VERIFIED 3 OBSERVED_RISK 0 UNVERIFIED 0 total 3",
		"mcp_name_header servers strict 1 lenient 1 undetermined 0 not_applicable 1",
	} {
		if !strings.Contains(words(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "mcp_name_header not_applicable "+old) {
		t.Errorf("a 2025-era target got a mcp_name_header line:\n%s", out)
	}
	// A target's lines are columns: its verdict's and its check's second
	// field start at one offset.
	var at []int
	for _, line := range strings.Split(out, "\n") {
		if strings.HasSuffix(line, " "+strict) {
			first := strings.IndexByte(line, ' ')
			at = append(at, first+len(line[first:])-len(strings.TrimLeft(line[first:], " ")))
		}
	}
	if len(at) != 2 || at[0] != at[1] {
		t.Errorf("the second column of %s starts at %v:\n%s", strict, at, out)
	}

	risky := httptest.NewServer(server(`{"jsonrpc":"2.0","id":ID,"result":{"content":[],"isError":true}}`, 200))
	defer risky.Close()
	_, out, _ = runCLI(t, "", risky.URL)
	if !strings.Contains(words(out), "second name __toolguard_probe_nonexistent_tool_second__: OBSERVED_RISK result_is_error (HTTP 200, application/json)") {
		t.Errorf("table:\n%s", out)
	}
}

// The text report has no trailing white space, on the blank line between
// the two checks or anywhere else.
func TestTextReportHasNoTrailingSpace(t *testing.T) {
	var out bytes.Buffer
	code := 42
	printReport(&out, conformance.Report{
		Target: "http://x/mcp", Check: conformance.CheckName, Verdict: conformance.Verified, ErrorCode: &code,
		NameHeader: conformance.NameHeaderReport{Check: conformance.NameHeaderCheck, State: conformance.NotApplicable},
	})
	for i, line := range strings.Split(out.String(), "\n") {
		if strings.TrimRight(line, " \t") != line {
			t.Errorf("line %d has trailing white space: %q", i+1, line)
		}
	}
	if !strings.Contains(out.String(), "\n\ncheck") {
		t.Errorf("no blank line between the two checks:\n%s", out.String())
	}
}
