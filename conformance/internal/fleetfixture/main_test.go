package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/toolguard/toolguard/conformance"
)

// The fixture serves as many targets as asked, each one the checker can
// reach: fleet mode over them reports every one, none unreachable.
func TestServeListsReachableTargets(t *testing.T) {
	const n = 60
	var list bytes.Buffer
	count, err := serve(n, &list)
	if err != nil || count != n {
		t.Fatalf("served %d, %v", count, err)
	}
	lines := strings.Split(strings.TrimSpace(list.String()), "\n")
	if len(lines) != n {
		t.Fatalf("%d target lines, want %d", len(lines), n)
	}
	targets := func(yield func(conformance.Target) bool) {
		for _, l := range lines {
			if !yield(conformance.Target{Target: l}) {
				return
			}
		}
	}
	sum := conformance.CheckFleet(context.Background(), targets, conformance.Options{}, conformance.FleetOptions{Concurrency: 16})
	if sum.Total != n || sum.ByCategory[conformance.Unverified][conformance.Unreachable] != 0 {
		t.Errorf("fleet over the fixture: %+v", sum)
	}
}
