package conformance

import (
	"context"
	"sync"
	"testing"
	"time"
)

// The pacer's grants to one host are never closer than the spacing, however
// many wait at once; two hosts do not wait for each other.
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
	// The two hosts run side by side: each one's grants begin before the
	// other's end.
	a, b := grants["a.example:1"], grants["a.example:2"]
	if len(a) > 0 && len(b) > 0 && (!b[0].Before(a[len(a)-1]) || !a[0].Before(b[len(b)-1])) {
		t.Errorf("the hosts waited for each other: %v–%v and %v–%v", a[0].Sub(start), a[len(a)-1].Sub(start), b[0].Sub(start), b[len(b)-1].Sub(start))
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
