package main

import (
	"testing"

	"github.com/toolguard/toolguard/examples/internal/exampletest"
)

func TestExample(t *testing.T) {
	url := exampletest.Start(t, run)
	exampletest.RealClients(t, url, "add_note", map[string]any{"text": "milk"}, "Saved: milk")
	exampletest.Exercise(t, url, "add_note", map[string]any{"text": "buy milk"}, "Saved: buy milk")
}
