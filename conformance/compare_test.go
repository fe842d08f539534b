package conformance_test

import (
	"reflect"
	"testing"

	"github.com/toolguard/toolguard/conformance"
)

func rep(target string, v conformance.Verdict, c conformance.Category, code *int, nh conformance.Strictness) conformance.Report {
	return conformance.Report{Target: target, Check: conformance.CheckName, Verdict: v, Category: c, ErrorCode: code,
		NameHeader: conformance.NameHeaderReport{Check: conformance.NameHeaderCheck, State: nh}}
}

func code(c int) *int { return &c }

// Compare tells worse from better from changed, and new and gone targets
// from both; what did not move is counted, not listed.
func TestCompareKindsOfChange(t *testing.T) {
	na := conformance.NotApplicable
	before := []conformance.Report{
		rep("http://a/", conformance.Verified, "", code(-32602), na),
		rep("http://b/", conformance.ObservedRisk, conformance.ResultIsError, nil, na),
		rep("http://c/", conformance.ObservedRisk, conformance.ResultIsError, nil, na),
		rep("http://d/", conformance.Verified, "", code(-32602), conformance.Strict),
		rep("http://e/", conformance.Verified, "", code(-32602), na),
		rep("http://f/", conformance.Unverified, conformance.Timeout, nil, na),
		rep("http://g/", conformance.Verified, "", code(-32602), na),
		rep("http://same/", conformance.Verified, "", code(-32602), na),
	}
	after := []conformance.Report{
		rep("http://a/", conformance.ObservedRisk, conformance.ResultIsError, nil, na),   // worse
		rep("http://b/", conformance.Verified, "", code(-32602), na),                     // better
		rep("http://c/", conformance.ObservedRisk, conformance.NotJSON, nil, na),         // changed
		rep("http://d/", conformance.Verified, "", code(-32602), conformance.Lenient),    // worse: lenient
		rep("http://e/", conformance.Verified, "", code(-32601), na),                     // changed: the code
		rep("http://f/", conformance.Verified, "", code(-32602), na),                     // better
		rep("http://same/", conformance.Verified, "", code(-32602), na),                  // unchanged
		rep("http://new/", conformance.Verified, "", code(-32602), na),                   // new
		rep("http://new-risk/", conformance.ObservedRisk, conformance.ResultOK, nil, na), // a new risk is worse
	}
	c := conformance.Compare(before, after)
	got := map[string]conformance.ChangeKind{}
	what := map[string][]string{}
	for _, ch := range c.Changes {
		got[ch.Target] = ch.Kind
		what[ch.Target] = ch.What
	}
	want := map[string]conformance.ChangeKind{
		"http://a/": conformance.Worse, "http://b/": conformance.Better, "http://c/": conformance.Changed,
		"http://d/": conformance.Worse, "http://e/": conformance.Changed, "http://f/": conformance.Better,
		"http://g/": conformance.Gone, "http://new/": conformance.New, "http://new-risk/": conformance.Worse,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("changes %v\nwant    %v", got, want)
	}
	if c.Unchanged != 1 || !c.Worse() || c.Counts[conformance.Worse] != 3 || c.Counts[conformance.Better] != 2 ||
		c.Counts[conformance.Changed] != 2 || c.Counts[conformance.New] != 1 || c.Counts[conformance.Gone] != 1 {
		t.Errorf("counts %v, unchanged %d", c.Counts, c.Unchanged)
	}
	if !reflect.DeepEqual(what["http://a/"], []string{"verdict", "category", "errorCode"}) ||
		!reflect.DeepEqual(what["http://d/"], []string{"mcpNameHeader"}) || !reflect.DeepEqual(what["http://e/"], []string{"errorCode"}) {
		t.Errorf("what moved: %v", what)
	}
	for i, ch := range c.Changes { // worst first
		if i > 0 && ch.Kind == conformance.Worse && c.Changes[i-1].Kind != conformance.Worse {
			t.Errorf("changes out of order: %v", c.Changes)
		}
	}
	if c := conformance.Compare(after, after); len(c.Changes) != 0 || c.Worse() || c.Unchanged != len(after) {
		t.Errorf("a run against itself: %+v", c)
	}
}

// A registry entry is matched by its server name and member, so that a
// new version of the server is a change of the same target; a run holding
// two versions of one server matches them version by version.
func TestCompareRegistryEntriesAcrossVersions(t *testing.T) {
	reg := func(version string, v conformance.Verdict, c conformance.Category) conformance.Report {
		r := rep("stdio:npx -y pkg@"+version, v, c, nil, conformance.NotApplicable)
		r.Label = "io.example/pkg@" + version
		r.Registry = &conformance.RegistryRef{Name: "io.example/pkg", Version: version, Entry: "packages[0]"}
		return r
	}
	c := conformance.Compare(
		[]conformance.Report{reg("1.0.0", conformance.ObservedRisk, conformance.ResultIsError)},
		[]conformance.Report{reg("1.0.1", conformance.Verified, "")})
	if len(c.Changes) != 1 || c.Changes[0].Kind != conformance.Better || c.Changes[0].Before.Version != "1.0.0" || c.Changes[0].After.Version != "1.0.1" {
		t.Errorf("%+v", c.Changes)
	}
	c = conformance.Compare(
		[]conformance.Report{reg("1.0.0", conformance.ObservedRisk, conformance.ResultIsError)},
		[]conformance.Report{reg("1.0.0", conformance.ObservedRisk, conformance.ResultIsError), reg("1.0.1", conformance.Verified, "")})
	if len(c.Changes) != 1 || c.Changes[0].Kind != conformance.New || c.Changes[0].After.Version != "1.0.1" || c.Unchanged != 1 {
		t.Errorf("%+v", c)
	}
}

// A report written before passwords were masked is the same target as
// one written after, and no change shows the password.
func TestComparePasswordMaskedOrNot(t *testing.T) {
	na := conformance.NotApplicable
	c := conformance.Compare(
		[]conformance.Report{rep("http://alice:hunter2@a/", conformance.ObservedRisk, conformance.ResultIsError, nil, na),
			rep("http://bob:hunter3@b/", conformance.Verified, "", code(-32602), na)},
		[]conformance.Report{rep("http://alice:xxxxx@a/", conformance.Verified, "", code(-32602), na)})
	if len(c.Changes) != 2 || c.Changes[0].Kind != conformance.Better || c.Changes[0].Target != "http://alice:xxxxx@a/" ||
		c.Changes[1].Kind != conformance.Gone || c.Changes[1].Target != "http://bob:xxxxx@b/" {
		t.Errorf("%+v", c.Changes)
	}
}
