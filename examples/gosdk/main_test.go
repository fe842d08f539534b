package main

import (
	"testing"

	"github.com/toolguard/toolguard/examples/internal/exampletest"
)

func TestExample(t *testing.T) {
	url := exampletest.Start(t, run)
	exampletest.RealClients(t, url, "greet", map[string]any{"name": "Ada"}, "Hello, Ada")
	exampletest.Exercise(t, url, "greet", map[string]any{"name": "Ada"}, "Hello, Ada")
}
