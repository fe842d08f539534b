package main

import (
	"testing"

	"github.com/toolguard/toolguard/examples/internal/exampletest"
)

func TestExample(t *testing.T) {
	url := exampletest.Start(t, run)
	exampletest.RealClients(t, url, "get_weather", map[string]any{"city": "Oslo"}, "Sunny in Oslo")
	exampletest.Exercise(t, url, "get_weather", map[string]any{"city": "Oslo"}, "Sunny in Oslo")
}
