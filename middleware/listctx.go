package toolguard

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// listContext is the context a tool set's List is given: it behaves as
// context.WithDeadlineCause(parent, deadline, ErrListTimeout), except that
// the timer starts only when Done or Err is first asked for. A tool set
// that returns a list it holds asks for neither, and the guard's bound on
// the list then costs no timer; one that waits asks for Done, and is
// bounded as before. stop ends it as a cancel function would.
type listContext struct {
	parent   context.Context
	deadline time.Time

	mu      sync.Mutex // held to arm and to stop
	stopped bool
	cancel  context.CancelFunc
	armed   atomic.Pointer[context.Context] // the real context, once armed
}

func newListContext(parent context.Context, timeout time.Duration) *listContext {
	return &listContext{parent: parent, deadline: time.Now().Add(timeout)}
}

// arm returns the real context, making it the first time.
func (c *listContext) arm() context.Context {
	if ctx := c.armed.Load(); ctx != nil {
		return *ctx
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ctx := c.armed.Load(); ctx != nil {
		return *ctx
	}
	ctx, cancel := context.WithDeadlineCause(c.parent, c.deadline, ErrListTimeout)
	if c.stopped {
		cancel() // asked for after the list ended: done, as it would be
	}
	c.cancel = cancel
	c.armed.Store(&ctx)
	return ctx
}

// stop releases the context once the list has returned: its timer, if it
// was armed, and any later Done or Err sees it canceled.
func (c *listContext) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	if c.cancel != nil {
		c.cancel()
	}
}

// Deadline is the earlier of the parent's deadline and the list's, as the
// real context's would be; it does not arm.
func (c *listContext) Deadline() (time.Time, bool) {
	if d, ok := c.parent.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

func (c *listContext) Done() <-chan struct{} { return c.arm().Done() }
func (c *listContext) Err() error            { return c.arm().Err() }

// Value reads the parent's values until the context is armed, then the
// real context's (which adds only the context package's own key, read by
// context.Cause and by children). Past the deadline it arms, so that
// context.Cause reports ErrListTimeout as the real context's would.
func (c *listContext) Value(key any) any {
	if ctx := c.armed.Load(); ctx != nil {
		return (*ctx).Value(key)
	}
	if !time.Now().Before(c.deadline) {
		return c.arm().Value(key)
	}
	return c.parent.Value(key)
}

// String names it as the context package names its own.
func (c *listContext) String() string { return "toolguard.listContext" }
