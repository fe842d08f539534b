package main

import (
	"testing"

	"github.com/toolguard/toolguard/examples/internal/exampletest"
)

func TestExample(t *testing.T) {
	url := exampletest.Start(t, run)
	exampletest.RealClients(t, url, "add", map[string]any{"a": 2, "b": 3}, "5")
	exampletest.Exercise(t, url, "add", map[string]any{"a": 2, "b": 3}, "5")
}
