package toolguard

import (
	"sync"
	"testing"
	"time"

	"github.com/toolguard/toolguard/internal/mcpwire"
)

// Lists kept, gone, forgotten and read at once, as requests do: what the
// race detector (the test command runs with -race) must find nothing in.
func TestSeenListsUnderConcurrentUse(t *testing.T) {
	g := mustGuard(t, Options{})
	s := g.seen
	clock := time.Unix(1e9, 0)
	var cmu sync.Mutex
	s.now = func() time.Time { cmu.Lock(); defer cmu.Unlock(); clock = clock.Add(time.Second); return clock }
	s.ttl = 50 * time.Second
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 3000 {
				k := itoa(i%7 + 1)
				switch (i + w) % 5 {
				case 0:
					s.page(k, "S", "", s.mark("S"), mcpwire.Page{Names: []string{"a", "b", k}})
				case 1:
					s.dropSession("S", i%11 == 0)
				case 2:
					s.forget(k)
				default:
					l := s.get(k)
					_ = l.state("a")
					_ = l.state("zz")
					l.parts(g, "zz")
					_ = g.translation(l, []byte("1"), "zz", 200, false).appendMessage(nil)
				}
			}
		}()
	}
	wg.Wait()
}

// The count of names held stays exact through any mix of pages, list
// changes, ends, forgets and reads.
func TestSeenListsCountNamesExactly(t *testing.T) {
	s := newSeenLists(DefaultListTTL)
	clock := time.Unix(1e9, 0)
	s.now = func() time.Time { clock = clock.Add(time.Minute); return clock }
	for i := range 20000 {
		k := itoa(i%13 + 1)
		sess := []string{"A", "B", ""}[i%3]
		switch i % 7 {
		case 0, 1:
			s.page(k, sess, "", s.mark(sess), mcpwire.Page{Names: []string{"a", "b", k}, NextCursor: []string{"", "n"}[i%2]})
		case 2:
			s.page(k, sess, "n", s.mark(sess), mcpwire.Page{Names: []string{"c"}})
		case 3:
			s.dropSession(sess, i%5 == 0)
		case 4:
			s.forget(k)
		default:
			s.get(k)
		}
		n := 0
		for _, l := range s.lists {
			n += len(l.sorted)
		}
		for _, r := range s.runs {
			n += len(r.names)
		}
		if n != s.names {
			t.Fatalf("step %d: names %d, held %d", i, s.names, n)
		}
	}
}
