// Package stats holds the counters of toolguard-proxy and toolguard-stdio
// and writes them in the Prometheus text exposition format (0.0.4), the
// format Prometheus scrapes and node_exporter's textfile collector reads.
//
// It is written here rather than taken from the Prometheus Go client so
// that the root module keeps no requires: the format is a few lines of
// text, and the counters are a handful of atomics, a fixed histogram and
// one bounded table of names. Everything is bounded by construction: the
// label values are fixed sets, except the unknown tool names, of which a
// fixed number is kept whatever callers send (see [TopNames]).
package stats
