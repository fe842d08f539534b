package conformance

import (
	"cmp"
	"slices"

	"github.com/toolguard/toolguard/internal/cli"
)

// ChangeKind says how a target's outcome moved between two runs.
type ChangeKind string

// Kinds of change, in the order a Comparison lists them.
const (
	// Worse: the verdict moved down (VERIFIED, then UNVERIFIED, then
	// OBSERVED_RISK), or mcp_name_header became lenient; a new target
	// that is OBSERVED_RISK or lenient is Worse too.
	Worse ChangeKind = "worse"
	// Better: the verdict moved up, or mcp_name_header went from lenient
	// to strict, and nothing moved down.
	Better ChangeKind = "better"
	// Changed: the same verdict, but another category, error code or
	// mcp_name_header state.
	Changed ChangeKind = "changed"
	// New: a target only the later run has (not OBSERVED_RISK nor lenient).
	New ChangeKind = "new"
	// Gone: a target only the earlier run has.
	Gone ChangeKind = "gone"
)

var changeOrder = []ChangeKind{Worse, Better, Changed, New, Gone}

// An Outcome is what a comparison looks at in a report.
type Outcome struct {
	Verdict    Verdict    `json:"verdict"`
	Category   Category   `json:"category,omitempty"`
	ErrorCode  *int       `json:"errorCode,omitempty"`
	NameHeader Strictness `json:"mcpNameHeader,omitempty"`
	// Version is the registry entry's server version, for a target from
	// a registry document.
	Version string `json:"version,omitempty"`
}

func outcomeOf(r Report) *Outcome {
	o := &Outcome{Verdict: r.Verdict, Category: r.Category, ErrorCode: r.ErrorCode, NameHeader: r.NameHeader.State}
	if r.Registry != nil {
		o.Version = r.Registry.Version
	}
	return o
}

// A Change is one target whose outcome differs between two runs.
type Change struct {
	Kind     ChangeKind   `json:"change"`
	Target   string       `json:"target"`
	Label    string       `json:"label,omitempty"`
	Registry *RegistryRef `json:"registry,omitempty"`
	Before   *Outcome     `json:"before,omitempty"` // nil for New
	After    *Outcome     `json:"after,omitempty"`  // nil for Gone
	// What lists what moved: "verdict", "category", "errorCode",
	// "mcpNameHeader" (empty for New and Gone).
	What []string `json:"what,omitempty"`
}

// A Comparison is what changed from one run to another.
type Comparison struct {
	Changes   []Change           `json:"changes"`
	Counts    map[ChangeKind]int `json:"counts"`
	Unchanged int                `json:"unchanged"` // targets in both runs with the same outcome
}

// Worse reports whether anything got worse: a Worse change.
func (c Comparison) Worse() bool { return c.Counts[Worse] > 0 }

// verdictRank orders verdicts from best to worst.
func verdictRank(v Verdict) int {
	switch v {
	case Verified:
		return 0
	case ObservedRisk:
		return 2
	}
	return 1
}

// Compare compares the reports of an earlier run with those of a later
// one. A target is matched by its label and target; one from a registry
// document by its server name and entry, so that a new version of the
// server is a change of the same target (the Outcome's Version tells),
// unless a run holds several versions of it, which are then matched
// version by version. In a run, a key met twice keeps its first report,
// as -resume does.
func Compare(before, after []Report) Comparison {
	loose := map[string]int{} // reports per registry name and entry, in the run that has more
	count := func(rs []Report) {
		n := map[string]int{}
		for _, r := range rs {
			if r.Registry != nil {
				n[r.Registry.Name+"\x00"+r.Registry.Entry]++
			}
		}
		for k, v := range n {
			loose[k] = max(loose[k], v)
		}
	}
	count(before)
	count(after)
	key := func(r Report) string {
		if g := r.Registry; g != nil {
			if loose[g.Name+"\x00"+g.Entry] == 1 {
				return "registry\x00" + g.Name + "\x00" + g.Entry
			}
			return "registry\x00" + g.Name + "\x00" + g.Entry + "\x00" + g.Version
		}
		return "target\x00" + r.Label + "\x00" + cli.Redacted(r.Target) // (a report of before masking shows its password)
	}
	index := func(rs []Report) (map[string]Report, []string) {
		m := map[string]Report{}
		var order []string
		for _, r := range rs {
			k := key(r)
			if _, dup := m[k]; !dup {
				m[k] = r
				order = append(order, k)
			}
		}
		return m, order
	}
	was, wasOrder := index(before)
	now, order := index(after)
	c := Comparison{Counts: map[ChangeKind]int{}}
	for _, k := range order {
		r := now[k]
		ch := Change{Target: cli.Redacted(r.Target), Label: r.Label, Registry: r.Registry, After: outcomeOf(r)}
		old, ok := was[k]
		if !ok {
			ch.Kind = New
			if r.Verdict == ObservedRisk || r.NameHeader.State == Lenient {
				ch.Kind = Worse
			}
			c.add(ch)
			continue
		}
		ch.Before = outcomeOf(old)
		ch.Kind, ch.What = judge(*ch.Before, *ch.After)
		if ch.Kind == "" {
			c.Unchanged++
			continue
		}
		c.add(ch)
	}
	for _, k := range wasOrder {
		if _, ok := now[k]; !ok {
			r := was[k]
			c.add(Change{Kind: Gone, Target: cli.Redacted(r.Target), Label: r.Label, Registry: r.Registry, Before: outcomeOf(r)})
		}
	}
	slices.SortStableFunc(c.Changes, func(a, b Change) int {
		return cmp.Compare(slices.Index(changeOrder, a.Kind), slices.Index(changeOrder, b.Kind))
	})
	return c
}

func (c *Comparison) add(ch Change) {
	c.Changes = append(c.Changes, ch)
	c.Counts[ch.Kind]++
}

// judge says how a target moved from a to b, and what moved; "" when
// nothing did.
func judge(a, b Outcome) (ChangeKind, []string) {
	var what []string
	if a.Verdict != b.Verdict {
		what = append(what, "verdict")
	}
	if a.Category != b.Category {
		what = append(what, "category")
	}
	if (a.ErrorCode == nil) != (b.ErrorCode == nil) || a.ErrorCode != nil && *a.ErrorCode != *b.ErrorCode {
		what = append(what, "errorCode")
	}
	if a.NameHeader != b.NameHeader {
		what = append(what, "mcpNameHeader")
	}
	if len(what) == 0 {
		return "", nil
	}
	ra, rb := verdictRank(a.Verdict), verdictRank(b.Verdict)
	switch {
	case rb > ra || b.NameHeader == Lenient && a.NameHeader != Lenient:
		return Worse, what
	case rb < ra || a.NameHeader == Lenient && b.NameHeader == Strict:
		return Better, what
	}
	return Changed, what
}
