package conformance

import (
	"context"
	"sync"
	"testing"
	"time"
)

// The pacer's grants to one host are never closer than the spacing, however
// many wait at once (on the real clock: the pacer measures the spacing
// after its timer, so a late timer cannot break it).
func TestPacer(t *testing.T) {
	const spacing = 20 * time.Millisecond
	p := newPacer(spacing)
	grants := map[string][]time.Time{}
	p.granted = func(host string, at time.Time) { grants[host] = append(grants[host], at) } // under p.mu
	start := time.Now()
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			target := "http://a.example:1/mcp"
			if i%2 == 1 {
				target = "http://a.example:2/mcp"
			}
			for range 3 {
				if err := p.wait(context.Background(), target); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	for host, ts := range grants {
		if len(ts) != 18 {
			t.Errorf("%s: %d grants", host, len(ts))
		}
		for i := 1; i < len(ts); i++ {
			if d := ts[i].Sub(ts[i-1]); d < spacing {
				t.Errorf("%s: grant %d came %v after the one before", host, i, d)
			}
		}
	}
	if elapsed < 17*spacing {
		t.Errorf("18 grants in %v, spacing %v", elapsed, spacing)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p.wait(ctx, "http://b.example/")
	if err := p.wait(ctx, "http://b.example/"); err == nil {
		t.Error("a cancelled wait returned nil")
	}
}

// Two hosts do not wait for each other: while a's second request waits
// for its slot, b's first is granted at once, on a clock that has not
// moved; a's is granted when the clock reaches its slot.
func TestPacerHostsDoNotWaitForEachOther(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	waits := make(chan time.Duration, 4)
	fire := make(chan time.Time)
	p := newPacer(time.Second)
	p.clock = &clock{
		now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now },
		after: func(d time.Duration) <-chan time.Time {
			waits <- d
			return fire
		},
	}
	ctx := context.Background()
	if err := p.wait(ctx, "http://a.example/mcp"); err != nil {
		t.Fatal(err)
	}
	second := make(chan error, 1)
	go func() { second <- p.wait(ctx, "http://a.example/mcp") }()
	if d := <-waits; d != time.Second {
		t.Fatalf("a's second request waits %v, want 1s", d)
	}
	// a's second request is held until fire is sent: b's first either
	// returns or asks for a timer of its own.
	first := make(chan error, 1)
	go func() { first <- p.wait(ctx, "http://b.example/mcp") }()
	select {
	case err := <-first:
		if err != nil {
			t.Fatal(err)
		}
	case d := <-waits:
		t.Fatalf("b's first request waited %v for a's slot", d)
	}
	mu.Lock()
	now = now.Add(time.Second)
	mu.Unlock()
	fire <- now
	if err := <-second; err != nil {
		t.Fatal(err)
	}
}
