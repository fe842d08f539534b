package toolguard

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

type ctxKey string

// A list context that nobody waits on starts no timer, and reads its
// parent's values and deadline.
func TestListContextUnwaitedStartsNoTimer(t *testing.T) {
	parent := context.WithValue(context.Background(), ctxKey("k"), "v")
	c := newListContext(parent, time.Hour)
	if c.Value(ctxKey("k")) != "v" {
		t.Errorf("Value = %v", c.Value(ctxKey("k")))
	}
	if d, ok := c.Deadline(); !ok || time.Until(d) < 59*time.Minute {
		t.Errorf("Deadline = %v %v", d, ok)
	}
	c.stop()
	if c.armed.Load() != nil {
		t.Error("armed without anyone asking for Done or Err")
	}
	// Asked for after the list ended, it is done, as a cancelled one is.
	select {
	case <-c.Done():
	default:
		t.Error("Done open after stop")
	}
	if !errors.Is(c.Err(), context.Canceled) {
		t.Errorf("Err after stop = %v", c.Err())
	}
}

// Waited on, it ends at its deadline as context.WithDeadlineCause does:
// DeadlineExceeded, with ErrListTimeout as the cause, for it and for the
// contexts made from it.
func TestListContextEndsAtItsDeadline(t *testing.T) {
	c := newListContext(context.Background(), 30*time.Millisecond)
	defer c.stop()
	child, cancel := context.WithCancel(c)
	defer cancel()
	fired := make(chan struct{})
	context.AfterFunc(c, func() { close(fired) })
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("not done past its deadline")
	}
	if !errors.Is(c.Err(), context.DeadlineExceeded) || context.Cause(c) != ErrListTimeout {
		t.Errorf("Err %v, Cause %v", c.Err(), context.Cause(c))
	}
	<-child.Done()
	if context.Cause(child) != ErrListTimeout {
		t.Errorf("child's cause %v", context.Cause(child))
	}
	select {
	case <-fired:
	case <-time.After(5 * time.Second):
		t.Error("AfterFunc not called")
	}
}

// The parent's end and earlier deadline are its own, armed or not.
func TestListContextFollowsItsParent(t *testing.T) {
	soon := time.Now().Add(time.Minute)
	parent, cancel := context.WithDeadline(context.Background(), soon)
	c := newListContext(parent, time.Hour)
	defer c.stop()
	if d, _ := c.Deadline(); !d.Equal(soon) {
		t.Errorf("Deadline %v, want the parent's %v", d, soon)
	}
	cause := errors.New("caller left")
	parent2, cancel2 := context.WithCancelCause(context.Background())
	c2 := newListContext(parent2, time.Hour)
	defer c2.stop()
	done := c2.Done()
	cancel2(cause)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("not done when the parent ended")
	}
	if !errors.Is(c2.Err(), context.Canceled) || context.Cause(c2) != cause {
		t.Errorf("Err %v, Cause %v", c2.Err(), context.Cause(c2))
	}
	cancel()
	// Not yet armed when the parent ends: armed later, it is done at once.
	if !errors.Is(c.Err(), context.DeadlineExceeded) && !errors.Is(c.Err(), context.Canceled) {
		t.Errorf("Err after the parent ended = %v", c.Err())
	}
}

// Armed from many goroutines at once, it is one context.
func TestListContextArmsOnce(t *testing.T) {
	c := newListContext(context.Background(), time.Hour)
	var wg sync.WaitGroup
	chans := make([]<-chan struct{}, 8)
	for i := range chans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			chans[i] = c.Done()
		}()
	}
	wg.Wait()
	for _, ch := range chans {
		if ch != chans[0] {
			t.Fatal("two Done channels")
		}
	}
	c.stop()
	<-chans[0]
}

// context.Cause before Go 1.25 read the cause through Value alone (Go
// 1.25 asks Err first, which arms): past the deadline Value must reach the
// real context, whose cause is ErrListTimeout.
func TestListContextValuePastItsDeadlineReachesTheCause(t *testing.T) {
	parent, cancel := context.WithCancel(context.Background()) // a parent with a cancelCtx, as a request's
	defer cancel()
	c := newListContext(parent, -time.Second) // already past
	defer c.stop()
	c.Value(struct{}{})
	if c.armed.Load() == nil {
		t.Fatal("Value past the deadline read the parent: context.Cause would see no cause before Go 1.25")
	}
	if got := context.Cause(c); got != ErrListTimeout {
		t.Errorf("Cause %v, want ErrListTimeout", got)
	}
}
