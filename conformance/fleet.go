package conformance

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolguard/toolguard/internal/cli"
)

// A Target is one entry of a fleet.
type Target struct {
	// Target is an http(s) URL, or "stdio:" followed by a command line
	// (split on spaces) that starts a stdio server.
	Target string
	// Header is sent to this target only, on top of Options.Header (a
	// name in both takes this value).
	Header http.Header
	// Label, if set, tells the target's report (Report.Label) from those
	// of other targets with the same Target: one URL checked with two sets
	// of headers, say.
	Label string

	// Argv, if set, is the stdio command to run, word for word, instead
	// of Target split on spaces (Target is then what the report shows).
	Argv []string
	// Env is added to a stdio server's environment ("NAME=value").
	Env []string
	// Registry names the MCP Registry entry the target came from; the
	// report carries it.
	Registry *RegistryRef
	// Skip, if set, is why the target is not checked: nothing is sent,
	// and its report is UNVERIFIED with Skip's category and detail.
	Skip *Skipped
}

// Skipped is why a fleet target is not checked.
type Skipped struct {
	Category Category
	Detail   string
}

// FleetOptions configures CheckFleet.
type FleetOptions struct {
	// Concurrency is how many targets are in progress at once. Default
	// 512. A target waiting out its host's spacing keeps its place but
	// costs only a sleeping goroutine; with distinct hosts, Concurrency
	// targets run side by side, each taking about six spacings.
	Concurrency int
	// Processes is how many stdio servers run at once. Default 8.
	Processes int
	// HostSpacing is the least time between two requests to one host
	// (host and port). Zero means no spacing.
	HostSpacing time.Duration
	// Report, if set, receives each target's report as soon as the target
	// is done, in the order targets finish, one call at a time. CheckFleet
	// keeps no report: this is where they go.
	Report func(Report)

	// clock, if set, stands in for the time package in the pacer (a
	// test's clock).
	clock *clock
}

// clock is the pacer's view of time: now and a timer.
type clock struct {
	now   func() time.Time
	after func(time.Duration) <-chan time.Time
}

var realClock = &clock{now: time.Now, after: func(d time.Duration) <-chan time.Time { return time.After(d) }}

// CheckTarget checks one target: an http(s) URL, or "stdio:" followed by a
// command line (split on spaces) that starts a stdio server.
func CheckTarget(ctx context.Context, target string, opts Options) (Report, error) {
	if cmd, ok := strings.CutPrefix(target, "stdio:"); ok {
		return CheckCommand(ctx, strings.Fields(cmd), opts)
	}
	return CheckURL(ctx, target, opts)
}

// CheckFleet checks the targets concurrently, hands each report to
// fleet.Report as it is done, and returns the counts. Targets are drawn
// from the sequence as places free up, so a fleet of any size is held in
// memory only Concurrency targets at a time. A target that cannot be
// checked at all (not a URL nor a stdio command, say) is reported
// UNVERIFIED unreachable. When ctx ends, targets not yet started are not
// reported, nor are those in progress: a check cut short says nothing of
// the target, and a -resume runs it again.
func CheckFleet(ctx context.Context, targets iter.Seq[Target], opts Options, fleet FleetOptions) Summary {
	if fleet.Concurrency <= 0 {
		fleet.Concurrency = 512
	}
	if fleet.Processes <= 0 {
		fleet.Processes = 8
	}
	if fleet.HostSpacing > 0 {
		p := newPacer(fleet.HostSpacing)
		if fleet.clock != nil {
			p.clock = fleet.clock
		}
		opts.pace = p.wait
	}
	processes := make(chan struct{}, fleet.Processes)
	sum := newSummary()
	var mu sync.Mutex // guards sum and calls of fleet.Report
	jobs := make(chan Target)
	var wg sync.WaitGroup
	for range fleet.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range jobs {
				rep := checkOne(ctx, t, opts, processes)
				if ctx.Err() != nil {
					continue // cut short, or (by design, as it cannot be told apart) finished as ctx ended: left to a later run
				}
				mu.Lock()
				sum.Add(rep)
				if fleet.Report != nil {
					fleet.Report(rep)
				}
				mu.Unlock()
			}
		}()
	}
	for t := range targets {
		if ctx.Err() != nil {
			break
		}
		select {
		case jobs <- t:
		case <-ctx.Done():
		}
	}
	close(jobs)
	wg.Wait()
	return sum
}

func checkOne(ctx context.Context, t Target, opts Options, processes chan struct{}) Report {
	if len(t.Header) > 0 {
		h := opts.Header.Clone()
		if h == nil {
			h = http.Header{}
		}
		for k, vs := range t.Header {
			h[http.CanonicalHeaderKey(k)] = vs
		}
		opts.Header = h
	}
	if t.Skip != nil {
		rep := unreachable(t.Target, t.Skip.Detail)
		rep.Category = t.Skip.Category
		rep.NameHeader.Detail = stoppedBefore(t.Skip.Category)
		rep.Label, rep.Registry = t.Label, t.Registry
		return rep
	}
	if strings.HasPrefix(t.Target, "stdio:") || t.Argv != nil {
		select {
		case processes <- struct{}{}:
			defer func() { <-processes }()
		case <-ctx.Done():
			return Report{Target: t.Target} // cut short before its turn: no process is started, no report kept
		}
	}
	opts.Env = append(slices.Clip(opts.Env), t.Env...)
	var rep Report
	var err error
	if t.Argv != nil {
		rep, err = CheckCommand(ctx, t.Argv, opts)
		rep.Target = t.Target
	} else {
		rep, err = CheckTarget(ctx, t.Target, opts)
	}
	if err != nil {
		rep = unreachable(cli.Redacted(t.Target), err.Error())
	}
	rep.Label, rep.Registry = t.Label, t.Registry
	return rep
}

// pacer spaces requests to each host. A request first reserves a slot
// (so requests to one host go out in turn, not all at once when a slot
// frees), then, once its slot has come, checks the time since the host's
// last request actually left: a late timer cannot bring two requests
// closer than the spacing.
type pacer struct {
	spacing time.Duration
	clock   *clock
	mu      sync.Mutex
	hosts   map[string]*hostPace
	sweepAt int // sweep the map when it grows to this size

	granted func(host string, at time.Time) // a test's view of each grant
}

type hostPace struct {
	next time.Time // the next free slot
	last time.Time // when the last request left
}

func newPacer(d time.Duration) *pacer {
	return &pacer{spacing: d, clock: realClock, hosts: map[string]*hostPace{}, sweepAt: 1024}
}

func (p *pacer) wait(ctx context.Context, target string) error {
	host := target
	if u, err := url.Parse(target); err == nil {
		host = u.Host
	}
	p.mu.Lock()
	now := p.clock.now()
	h := p.hosts[host]
	if h == nil {
		h = &hostPace{}
		p.hosts[host] = h
	}
	at := h.next
	if at.Before(now) {
		at = now
	}
	h.next = at.Add(p.spacing)
	if len(p.hosts) >= p.sweepAt {
		// A host whose slots and spacing have passed is as good as a host
		// never seen: forget it, so the map holds only hosts in progress.
		for name, hp := range p.hosts {
			if hp.next.Before(now) && hp.last.Add(p.spacing).Before(now) {
				delete(p.hosts, name)
			}
		}
		p.sweepAt = max(1024, 2*len(p.hosts))
	}
	p.mu.Unlock()
	for d := at.Sub(now); ; {
		if d > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-p.clock.after(d):
			}
		}
		p.mu.Lock()
		now := p.clock.now()
		if h.last.IsZero() || now.Sub(h.last) >= p.spacing {
			h.last = now
			if p.granted != nil {
				p.granted(host, now)
			}
			p.mu.Unlock()
			return nil
		}
		d = h.last.Add(p.spacing).Sub(now)
		p.mu.Unlock()
	}
}

// Summary counts reports per verdict and per category, and the
// mcp_name_header outcomes on their own.
type Summary struct {
	Total      int                          `json:"total"`      // reports counted
	ByVerdict  map[Verdict]int              `json:"verdicts"`   // reports per verdict
	ByCategory map[Verdict]map[Category]int `json:"categories"` // reports per verdict and category
	// NameHeader counts the mcp_name_header outcomes (reports of an
	// earlier version, without one, are not counted here).
	NameHeader map[Strictness]int `json:"mcpNameHeader"`
}

func newSummary() Summary {
	return Summary{ByVerdict: map[Verdict]int{}, ByCategory: map[Verdict]map[Category]int{}, NameHeader: map[Strictness]int{}}
}

// Add counts one report.
func (s *Summary) Add(r Report) {
	if s.ByVerdict == nil {
		*s = newSummary()
	}
	s.Total++
	s.ByVerdict[r.Verdict]++
	if r.Category != "" {
		if s.ByCategory[r.Verdict] == nil {
			s.ByCategory[r.Verdict] = map[Category]int{}
		}
		s.ByCategory[r.Verdict][r.Category]++
	}
	if r.NameHeader.State != "" {
		if s.NameHeader == nil {
			s.NameHeader = map[Strictness]int{}
		}
		s.NameHeader[r.NameHeader.State]++
	}
}
