package toolguard

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// The default message names the unknown tool, the nearest names and the
// way out, for the model (hosts show it the message, rarely data); data
// keeps its fields; BareMessage keeps the spec example's message alone.
func TestMessageNamesTheNearestNamesAndTheWayOut(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		name string
		want string
	}{
		{Options{}, "get_wether", "Unknown tool: get_wether. Did you mean get_weather? Call tools/list for the available tools."},
		{Options{}, "get_wheather", "Unknown tool: get_wheather. Did you mean get_weather? Call tools/list for the available tools."},
		{Options{}, "get_forcast", "Unknown tool: get_forcast. Did you mean get_forecast? Call tools/list for the available tools."},
		{Options{}, "zzz", "Unknown tool: zzz. Call tools/list for the available tools."},
		{Options{HideSuggestions: true}, "get_wether", "Unknown tool: get_wether. Call tools/list for the available tools."},
		{Options{HideToolList: true, HideSuggestions: true}, "get_wether", "Unknown tool: get_wether. Call tools/list for the available tools."},
		{Options{BareMessage: true}, "get_wether", "Unknown tool: get_wether"},
		{Options{}, `we"ird`, `Unknown tool: we"ird. Call tools/list for the available tools.`},
	} {
		tc.opts.Tools = StaticTools("get_weather", "get_forecast", "search_docs")
		g, err := New(tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		q, _ := json.Marshal(tc.name)
		w := serve(g, http.NotFoundHandler(), newRequest("POST", call("1", string(q)), nil))
		var got struct {
			Error struct {
				Message string `json:"message"`
				Data    struct {
					AvailableTools []string `json:"availableTools"`
					Suggestions    []string `json:"suggestions"`
				} `json:"data"`
			} `json:"error"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
			t.Fatalf("%s: %v", w.Body, err)
		}
		if got.Error.Message != tc.want {
			t.Errorf("%+v %q: message %q, want %q", tc.opts, tc.name, got.Error.Message, tc.want)
		}
		if len(got.Error.Data.AvailableTools) != map[bool]int{false: 3, true: 0}[tc.opts.HideToolList] {
			t.Errorf("%+v %q: data %+v", tc.opts, tc.name, got.Error.Data)
		}
	}
}

// Several nearest names are listed in the sentence, the last after "or".
func TestMessageListsSeveralNearestNames(t *testing.T) {
	g, err := New(Options{Tools: StaticTools("read_file", "read_files", "read_filed", "write_file")})
	if err != nil {
		t.Fatal(err)
	}
	w := serve(g, http.NotFoundHandler(), newRequest("POST", call("1", `"read_fil"`), nil))
	want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: read_fil. Did you mean read_file, read_filed or read_files? Call tools/list for the available tools.","data":{"availableTools":["read_file","read_filed","read_files","write_file"],"suggestions":["read_file","read_filed","read_files"]}}}`
	if w.Body.String() != want {
		t.Errorf("answer\n%s\nwant\n%s", w.Body, want)
	}
}

// An answer is made as it is written, in a buffer used again: however
// many names it shows, making it allocates only the Rejection, and
// writing its message into a buffer nothing.
func TestAnswerIsMadeAsItIsWritten(t *testing.T) {
	g := mustGuard(t, Options{})
	var names []string
	for i := range 1000 {
		names = append(names, fmt.Sprintf("tool_%04d", i))
	}
	listed, id := g.listed(names), []byte(`"42"`)
	for _, near := range [][]string{nil, {"tool_0001"}, {"a_rather_long_tool_name_0001", "a_rather_long_tool_name_0002", "a_rather_long_tool_name_0003"}} {
		for _, name := range []string{"x", "tool_9999", strings.Repeat("n", 200)} {
			var rej *Rejection
			if allocs := testing.AllocsPerRun(10, func() { rej = g.unknownTool(id, name, listed, near, 200, false) }); allocs != 1 {
				t.Errorf("%q with %d nearest names: %v allocations to make", name, len(near), allocs)
			}
			buf := make([]byte, 0, 64<<10) // (Write's comes from a pool, which the race detector empties at random)
			if allocs := testing.AllocsPerRun(10, func() { buf = rej.appendMessage(buf[:0]) }); allocs != 0 {
				t.Errorf("%q with %d nearest names: %v allocations to write", name, len(near), allocs)
			}
		}
	}
}
