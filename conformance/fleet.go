package conformance

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// FleetOptions configures CheckFleet.
type FleetOptions struct {
	// Concurrency is how many targets are checked at once. Default 16.
	Concurrency int
	// HostSpacing is the least time between two requests to one host
	// (host and port). Zero means no spacing.
	HostSpacing time.Duration
	// Progress, if set, is called after each target, from one goroutine at
	// a time.
	Progress func(done, total int, r Report)
}

// CheckTarget checks one target: an http(s) URL, or "stdio:" followed by a
// command line (split on spaces) that starts a stdio server.
func CheckTarget(ctx context.Context, target string, opts Options) (Report, error) {
	if cmd, ok := strings.CutPrefix(target, "stdio:"); ok {
		return CheckCommand(ctx, strings.Fields(cmd), opts)
	}
	return CheckURL(ctx, target, opts)
}

// CheckFleet checks many targets concurrently and returns their reports in
// the order of targets. A target that cannot be checked at all (a bad URL,
// a command that does not start) is reported UNVERIFIED unreachable.
func CheckFleet(ctx context.Context, targets []string, opts Options, fleet FleetOptions) []Report {
	if fleet.Concurrency <= 0 {
		fleet.Concurrency = 16
	}
	if fleet.HostSpacing > 0 {
		opts.pace = newPacer(fleet.HostSpacing).wait
	}
	reports := make([]Report, len(targets))
	jobs := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for range min(fleet.Concurrency, len(targets)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				rep, err := CheckTarget(ctx, targets[i], opts)
				if err != nil {
					rep = Report{Target: targets[i], Check: Check, Verdict: Unverified, Category: Unreachable, Detail: err.Error()}
				}
				reports[i] = rep
				if fleet.Progress != nil {
					mu.Lock()
					done++
					fleet.Progress(done, len(targets), rep)
					mu.Unlock()
				}
			}
		}()
	}
	for i := range targets {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return reports
}

// pacer spaces requests to each host.
type pacer struct {
	spacing time.Duration
	mu      sync.Mutex
	next    map[string]time.Time
}

func newPacer(d time.Duration) *pacer { return &pacer{spacing: d, next: map[string]time.Time{}} }

func (p *pacer) wait(ctx context.Context, target string) error {
	host := target
	if u, err := url.Parse(target); err == nil {
		host = u.Host
	}
	p.mu.Lock()
	now := time.Now()
	at := p.next[host]
	if at.Before(now) {
		at = now
	}
	p.next[host] = at.Add(p.spacing)
	p.mu.Unlock()
	if d := at.Sub(now); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// Summary counts reports per verdict and per category.
type Summary struct {
	Total      int
	ByVerdict  map[Verdict]int
	ByCategory map[Verdict]map[Category]int
}

// Summarize counts reports.
func Summarize(reports []Report) Summary {
	s := Summary{ByVerdict: map[Verdict]int{}, ByCategory: map[Verdict]map[Category]int{}}
	for _, r := range reports {
		s.Total++
		s.ByVerdict[r.Verdict]++
		if r.Category != "" {
			if s.ByCategory[r.Verdict] == nil {
				s.ByCategory[r.Verdict] = map[Category]int{}
			}
			s.ByCategory[r.Verdict][r.Category]++
		}
	}
	return s
}

// WriteTable writes the summary as a table: each verdict with its count,
// and under it each category, most common first.
func (s Summary) WriteTable(w io.Writer) error {
	type row struct {
		label string
		n     int
	}
	rows := []row{}
	for _, v := range []Verdict{Verified, ObservedRisk, Unverified} {
		rows = append(rows, row{string(v), s.ByVerdict[v]})
		cats := make([]Category, 0, len(s.ByCategory[v]))
		for c := range s.ByCategory[v] {
			cats = append(cats, c)
		}
		slices.SortFunc(cats, func(a, b Category) int {
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
	width := len(Check)
	for _, r := range rows {
		width = max(width, len(r.label))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s  %7s\n", width, Check, "servers")
	for _, r := range rows {
		fmt.Fprintf(&b, "%-*s  %7d\n", width, r.label, r.n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
