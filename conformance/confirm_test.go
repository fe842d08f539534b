package conformance_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolguard/toolguard/conformance"
	"github.com/toolguard/toolguard/conformance/internal/zoo"
)

// A server that rate-limits calls sent close together (the era-probe
// article's goji.agency) gives inconsistent when its two made-up calls go
// unspaced, and a confirmed risk when the fleet's pacer spaces them. The
// server and the pacer share a clock that moves only when the pacer
// waits: the outcome is the pacer's doing, not the machine's load.
func TestConfirmationSpacedByThePacerAgrees(t *testing.T) {
	const window = 100 * time.Millisecond
	for _, tc := range []struct {
		spacing  time.Duration
		verdict  conformance.Verdict
		category conformance.Category
	}{
		{0, conformance.Unverified, conformance.Inconsistent},
		{window / 2, conformance.Unverified, conformance.Inconsistent},
		{window, conformance.ObservedRisk, conformance.ResultIsError},
		{2 * window, conformance.ObservedRisk, conformance.ResultIsError},
	} {
		clock := conformance.NewStepClock()
		srv := httptest.NewServer(zoo.CloseCallsLimited(window, clock.Now))
		var rep conformance.Report
		conformance.CheckFleet(context.Background(), slices.Values([]conformance.Target{{Target: srv.URL}}), conformance.Options{},
			conformance.WithClock(conformance.FleetOptions{HostSpacing: tc.spacing, Report: func(r conformance.Report) { rep = r }}, clock))
		srv.Close()
		if rep.Verdict != tc.verdict || rep.Category != tc.category || rep.Confirmation == nil {
			t.Errorf("spacing %v: %s (confirmation %+v), want %s %s", tc.spacing, rep, rep.Confirmation, tc.verdict, tc.category)
			continue
		}
		if tc.category == conformance.Inconsistent &&
			(!strings.Contains(rep.Detail, "result_is_error") || !strings.Contains(rep.Detail, "not_jsonrpc")) {
			t.Errorf("the detail lacks a category: %s", rep.Detail)
		}
		if tc.category == conformance.ResultIsError && rep.Confirmation.Category != conformance.ResultIsError {
			t.Errorf("confirmation %+v", rep.Confirmation)
		}
	}
}

// The second made-up name, and the one sent in Mcp-Name, are never names
// the server lists; a VERIFIED answer draws no second call.
func TestSecondNamesAreCheckedAgainstTheList(t *testing.T) {
	listed := []string{"echo", "__toolguard_probe_nonexistent_tool_second__", "__toolguard_probe_nonexistent_tool_header__"}
	risky := zoo.Answer(200, "application/json", `{"jsonrpc":"2.0","id":{{id}},"result":{"content":[],"isError":true}}`)
	f := &zoo.Fake{Sessionless: true, Tools: listed, On: map[string]func(http.ResponseWriter, string){"tools/call": risky}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	rep, err := conformance.CheckURL(context.Background(), srv.URL, conformance.Options{})
	if err != nil || rep.Verdict != conformance.ObservedRisk || rep.Confirmation == nil || rep.NameHeader.State != conformance.Strict {
		t.Fatalf("%s, %v", rep.Lines(), err)
	}
	_, names, _ := f.Seen()
	for _, n := range append(names, rep.NameHeader.HeaderName) {
		if slices.Contains(listed, n) {
			t.Errorf("called a listed name, %s", n)
		}
	}
	if rep.Confirmation.Name == conformance.DefaultProbeName || rep.Confirmation.Name == rep.NameHeader.HeaderName ||
		!slices.Contains(names, rep.Confirmation.Name) {
		t.Errorf("second name %q, header name %q, names sent %q", rep.Confirmation.Name, rep.NameHeader.HeaderName, names)
	}

	g := &zoo.Fake{Tools: []string{"x"}}
	srv2 := httptest.NewServer(g)
	defer srv2.Close()
	rep, _ = conformance.CheckURL(context.Background(), srv2.URL, conformance.Options{})
	if _, names, _ := g.Seen(); rep.Verdict != conformance.Verified || len(names) != 1 || rep.Confirmation != nil {
		t.Errorf("a VERIFIED answer: %s, calls %q", rep, names)
	}
}

// The fleet summary counts mcp_name_header on its own, and the report
// prints both checks, one line each.
func TestSummaryAndLinesCarryBothChecks(t *testing.T) {
	strict, lenient, old := zoo.NameHeaderServers(t)
	var reps []conformance.Report
	sum := conformance.CheckFleet(context.Background(), slices.Values([]conformance.Target{{Target: strict}, {Target: lenient}, {Target: old}}),
		conformance.Options{}, conformance.FleetOptions{Report: func(r conformance.Report) { reps = append(reps, r) }})
	want := map[conformance.Strictness]int{conformance.Strict: 1, conformance.Lenient: 1, conformance.NotApplicable: 1}
	for k, v := range want {
		if sum.NameHeader[k] != v {
			t.Errorf("summary %v, want %v", sum.NameHeader, want)
		}
	}
	if sum.ByVerdict[conformance.Verified] != 3 {
		t.Errorf("error_taxonomy %v", sum.ByVerdict)
	}
	for _, r := range reps {
		lines := strings.Split(r.Lines(), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], r.Target+": error_taxonomy VERIFIED") ||
			!strings.HasPrefix(lines[1], r.Target+": mcp_name_header "+string(r.NameHeader.State)) {
			t.Errorf("%q", lines)
		}
	}
}
