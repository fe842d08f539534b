package conformance

import (
	"sync"
	"time"
)

// StepClock is a test's clock for the fleet's pacer: it stands still
// until something waits on it, and then moves on at once by the wait (so
// the pacer's waits take no real time, and a server reading the same
// clock sees exactly the spacing the pacer kept, however loaded the
// machine).
type StepClock struct {
	mu sync.Mutex
	t  time.Time
}

// Now returns the clock's time.
func (c *StepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *StepClock) after(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	c.t = c.t.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.t
	c.mu.Unlock()
	return ch
}

// NewStepClock returns a StepClock set at a fixed time (not the zero
// time, which the pacer reads as "never").
func NewStepClock() *StepClock { return &StepClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

// WithClock returns fo with its pacer on c.
func WithClock(fo FleetOptions, c *StepClock) FleetOptions {
	fo.clock = &clock{now: c.Now, after: c.after}
	return fo
}

// WithStdioGrace returns o whose stdio servers are ended with these
// graces in place of stdioGrace and stdioTermGrace.
func WithStdioGrace(o Options, grace, termGrace time.Duration) Options {
	o.stdioGrace, o.stdioTermGrace = grace, termGrace
	return o
}

// WithNullGrace returns o whose stdio requests wait d, in place of
// nullGrace, for an answer with their id after one with a null id.
func WithNullGrace(o Options, d time.Duration) Options {
	o.nullGrace = d
	return o
}
