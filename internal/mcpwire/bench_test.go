package mcpwire_test

import (
	"strconv"
	"testing"

	"github.com/toolguard/toolguard/internal/fixture"
	"github.com/toolguard/toolguard/internal/mcpwire"
)

// bigList is a tools/list reply of n tools with realistic input schemas.
func bigList(n int) []byte {
	var b []byte
	b = append(b, `{"jsonrpc":"2.0","id":"x","result":{"tools":[`...)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":"tool_`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `","description":"Does the thing number `...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, ` with care.","inputSchema":{"type":"object","properties":{"city":{"type":"string","description":"the city"},"days":{"type":"integer","minimum":1,"maximum":14},"units":{"type":"string","enum":["metric","imperial"]}},"required":["city"]}}`...)
	}
	return append(b, `]}}`...)
}

// BenchmarkListReplyPaired reads the same 1,000-tool reply both ways in
// each iteration, each first every other time, and reports the ratio
// (one pass / result then page).
func BenchmarkListReplyPaired(b *testing.B) {
	msg := bigList(1000)
	fixture.Alternated(b, fixture.Side{Name: "one-pass", Run: func() {
		if _, err := mcpwire.DecodeListReply(msg, []byte(`"x"`)); err != nil {
			b.Fatal(err)
		}
	}}, fixture.Side{Name: "two-pass", Run: func() {
		res, err := mcpwire.Result(msg, "x")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := mcpwire.DecodePage(res); err != nil {
			b.Fatal(err)
		}
	}})
}
