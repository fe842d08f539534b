package stats

import (
	"strconv"
	"sync/atomic"
	"time"
)

// LatencyBuckets are the upper bounds, in seconds, of the latency
// histogram's buckets: from 5ms to a minute (-upstream-timeout's default).
var LatencyBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// A Histogram counts durations in fixed buckets. It is safe for
// concurrent use and never allocates after NewHistogram.
type Histogram struct {
	bounds []float64
	counts []atomic.Uint64 // per bucket, not cumulative; the last is +Inf
	sum    atomic.Int64    // nanoseconds
}

// NewHistogram returns a histogram with the given bucket bounds in
// seconds, ascending.
func NewHistogram(bounds []float64) *Histogram {
	return &Histogram{bounds: bounds, counts: make([]atomic.Uint64, len(bounds)+1)}
}

// Observe counts one duration.
func (h *Histogram) Observe(d time.Duration) {
	s := d.Seconds()
	i := 0
	for i < len(h.bounds) && s > h.bounds[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sum.Add(int64(d))
}

// Write writes the histogram as the family name.
func (h *Histogram) Write(w *Writer, name, help string) {
	w.Head(name, "histogram", help)
	var cum uint64
	for i, b := range h.bounds {
		cum += h.counts[i].Load()
		w.Uint(name+"_bucket", cum, "le", strconv.FormatFloat(b, 'g', -1, 64))
	}
	cum += h.counts[len(h.bounds)].Load()
	w.Uint(name+"_bucket", cum, "le", "+Inf")
	w.Float(name+"_sum", time.Duration(h.sum.Load()).Seconds())
	w.Uint(name+"_count", cum)
}
