package stats

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Counts are exact while the table has room, and the most called names
// come first, ties by name.
func TestTopNamesExactWhileRoomLeft(t *testing.T) {
	tn := NewTopNames(8)
	for _, name := range []string{"b", "a", "c", "a", "b", "a"} {
		tn.Add(name)
	}
	top, rest, total := tn.Top(2)
	if len(top) != 2 || top[0] != (NameCount{Name: "a", Count: 3}) || top[1] != (NameCount{Name: "b", Count: 2}) || rest != 1 || total != 6 {
		t.Errorf("top %+v rest %d total %d", top, rest, total)
	}
}

// A name called far more often than the rest stays in the table whatever
// number of distinct names are called around it, and the table never
// holds more than its capacity.
func TestTopNamesKeepsTheHeavyNameAmongManyDistinct(t *testing.T) {
	tn := NewTopNames(KeptNames)
	for i := range 100_000 {
		tn.Add(fmt.Sprintf("made_up_%d", i))
		if i%10 == 0 {
			tn.Add("get_wether")
		}
	}
	if tn.Len() != KeptNames {
		t.Errorf("%d names kept, want %d", tn.Len(), KeptNames)
	}
	top, rest, total := tn.Top(ShownNames)
	if top[0].Name != "get_wether" || top[0].Count < 10_000-100_000/KeptNames || top[0].Count > 10_000 {
		t.Errorf("first %+v, want get_wether with at most 10000 calls and at least %d", top[0], 10_000-100_000/KeptNames)
	}
	var sum uint64
	for _, e := range top {
		sum += e.Count
	}
	if total != 110_000 || sum+rest != total {
		t.Errorf("total %d, shown %d + rest %d", total, sum, rest)
	}
}

// A long name is kept cut, and a name that is not UTF-8 made valid, so
// neither a caller's 1 MB name nor its bytes reach the table or a label.
func TestTopNamesCutsLongAndInvalidNames(t *testing.T) {
	tn := NewTopNames(4)
	long := strings.Repeat("é", 1<<19)
	tn.Add(long)
	tn.Add("bad\xffname")
	top, _, _ := tn.Top(4)
	for _, e := range top {
		if len(e.Name) > MaxNameBytes || !strings.ContainsRune(e.Name, 'é') && !strings.Contains(e.Name, "\uFFFD") {
			t.Errorf("kept %q (%d bytes)", e.Name, len(e.Name))
		}
	}
	runtime.KeepAlive(long)
}

// The text is the exposition format: escaped label values, cumulative
// buckets ending in +Inf, _sum in seconds and _count.
func TestWriterAndHistogramText(t *testing.T) {
	var b strings.Builder
	w := NewWriter(&b)
	w.Head("x_total", "counter", "a \\ help\nline")
	w.Uint("x_total", 3, "tool", "a\"b\\c\nd")
	h := NewHistogram([]float64{0.01, 1})
	h.Observe(5 * time.Millisecond)
	h.Observe(500 * time.Millisecond)
	h.Observe(2 * time.Second)
	h.Write(w, "lat_seconds", "latency")
	want := `# HELP x_total a \\ help\nline
# TYPE x_total counter
x_total{tool="a\"b\\c\nd"} 3
# HELP lat_seconds latency
# TYPE lat_seconds histogram
lat_seconds_bucket{le="0.01"} 1
lat_seconds_bucket{le="1"} 2
lat_seconds_bucket{le="+Inf"} 3
lat_seconds_sum 2.505
lat_seconds_count 3
`
	if b.String() != want || w.Err() != nil {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
