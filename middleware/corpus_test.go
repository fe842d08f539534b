package toolguard

import (
	"bufio"
	"encoding/json"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
)

// corpusEntry is one recorded answer of a real npm MCP server
// (testdata/notfound, recorded by scripts/record-notfound-corpus.sh), with
// the names its server listed (kept once a server, in servers.json).
type corpusEntry struct {
	Package, Version, Kind, Tool, Request, Answer string
	Listed                                        []string
}

func readCorpus(t *testing.T) []corpusEntry {
	t.Helper()
	b, err := os.ReadFile("../testdata/notfound/servers.json")
	if err != nil {
		t.Fatal(err)
	}
	var servers []struct {
		Package, Version string
		Listed           []string
	}
	if err := json.Unmarshal(b, &servers); err != nil {
		t.Fatal(err)
	}
	listed := map[[2]string][]string{}
	for _, s := range servers {
		listed[[2]string{s.Package, s.Version}] = s.Listed
	}
	f, err := os.Open("../testdata/notfound/corpus.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e corpusEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		if e.Listed = listed[[2]string{e.Package, e.Version}]; e.Listed == nil {
			t.Fatalf("%s@%s: an answer of a server with no list in servers.json", e.Package, e.Version)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// Every real server's answer to an unknown tool is translated where the
// caller's list shows the name absent, but for the answers that are not
// about the name (a browser or a network missing before any lookup,
// arguments checked first) and the few the guard does not read (missed,
// each with its reason); with no list seen, every error or isError
// answer that names the tool as unknown is translated too. Every answer
// of a known tool that fails reaches the client untouched, whatever the
// list, however it reads.
func TestRealServersAnswers(t *testing.T) {
	corpus := readCorpus(t)
	// Answers that say no more than that the tool is unknown or off
	// without naming it as a tool: translated only against a list.
	needList := map[string]bool{
		"@winor30/mcp-server-datadog":        true, // "Unknown tool"
		"@dangahagan/weather-mcp":            true, // "Tool 'X' is not enabled"
		"mcp-server-commands":                true, // "Unknown tool"
		"serper-search-scrape-mcp-server":    true, // "Unknown tool"
		"@alvincrave/gtasks-mcp":             true, // "Error: Tool not found"
		"@zeddotdev/postgres-context-server": true, // "Tool not found"
		"@henkey/postgres-mcp-server":        true, // "Tool 'X' is not enabled or does not exist."
		"fast-filesystem-mcp":                true, // "Tool not implemented: X"
		"@notionhq/notion-mcp-server":        true, // "Method X not found": a method, not a tool
		"@mieubrisse/notion-mcp-server":      true, // (a fork of it)
		"@isaacphi/mcp-gdrive":               true, // "Tool not found"
		"consult-llm-mcp":                    true, // "tool not found"
		"@supabase/mcp-server-postgrest":     true, // {"error":{"message":"tool not found"}}
		"attio-mcp-server":                   true, // "Error executing tool 'X': Tool not found": the tool's name is in the prefix
		"domain-search-mcp":                  true, // "Error: The tool "X" is not available.⏎Code: UNKNOWN_TOOL…"
		"mcp-server-fetch-typescript":        true, // "Unknown tool"
		"moltbook-http-mcp":                  true, // "Error: Unknown method: X": a method, as notion's
	}
	// The answers left as they are, not about the name: the server
	// answers before any lookup (a browser, a network, a database, an API
	// key, a licence, arguments checked first).
	notAboutName := []string{"@drawio/mcp", "@modelcontextprotocol/server-puppeteer", "@morphllm/morphmcp", "@playwright/mcp",
		"@tiberriver256/mcp-server-azure-devops", "drawio-mcp", "linear-mcp-server", "mcp-ripgrep",
		"@dguido/google-workspace-mcp", "@hisma/server-puppeteer", "@microsoft/workiq", "@mzxrai/mcp-webresearch",
		"@piotr-agier/google-drive-mcp", "@stevestomp/ohno-mcp", "@tsmztech/mcp-server-salesforce", "ag-mcp",
		"hotelzero", "humanagent-mcp", "puppeteer-mcp-server", "universal-db-mcp"}
	// Answers about the name that the guard does not read, and why.
	missed := map[string]string{
		"@agllama/mcp":                       "a line before a JSON text, in a result without isError",
		"@cloudflare/mcp-server-cloudflare":  "the 2024-10-07 result.toolResult shape",
		"attio-mcp":                          "the phrase inside other text, and an error member beside the content",
		"mcp-shrimp-task-manager":            "a result without isError that says more than that",
		"@tosin2013/mcp-shrimp-task-manager": "(a fork of it: the same)",
		"motionmcp":                          `"No validator found for tool: X"`,
		"@googlemaps/code-assist-mcp":        `"Invalid Tool called", naming none, in a result without isError`,
	}
	var unknown, known int
	left := map[string]bool{}
	for _, e := range corpus {
		m := readMessage([]byte(e.Request))
		if !m.strict {
			t.Fatalf("%s: the request is not read: %s", e.Package, e.Request)
		}
		if e.Kind == "known-failing" && !slices.Contains(e.Listed, e.Tool) {
			t.Fatalf("%s: a known tool %q that was not listed", e.Package, e.Tool)
		}
		id := m.id.raw([]byte(e.Request))
		leftHere := false
		for _, ls := range []listState{listAbsent, listUnseen, listHas} { // leftHere is known before a list is unseen
			a, ok := readCallAnswer([]byte(e.Answer), id, e.Tool, nil)
			got := ok && a.notFound(e.Tool, stateIs(ls))
			switch {
			case e.Kind == "known-failing":
				if got {
					t.Errorf("%s %s, %q (list %d): a known tool's error translated:\n%s", e.Package, e.Version, e.Tool, ls, e.Answer)
				}
			case ls == listHas: // not in its server's list
			case ls == listAbsent:
				leftHere = !got
			case got != (a.kind != kindResult && !needList[e.Package] && !leftHere):
				t.Errorf("%s %s, %q with no list: translated %v:\n%s", e.Package, e.Version, e.Tool, got, e.Answer)
			}
		}
		if leftHere {
			left[e.Package] = true
			if strings.Contains(e.Answer, e.Tool) && missed[e.Package] == "" {
				t.Errorf("%s names the tool and is left: %s", e.Package, e.Answer)
			}
		}
		if e.Kind == "unknown" {
			unknown++
		} else {
			known++
		}
	}
	want := slices.Sorted(slices.Values(append(notAboutName, slices.Collect(maps.Keys(missed))...)))
	if got := slices.Sorted(maps.Keys(left)); !slices.Equal(got, want) {
		t.Errorf("unknown-tool answers left untranslated: %q, want only %q", got, want)
	}
	if unknown < 200 || known < 100 {
		t.Errorf("a thin corpus: %d unknown, %d known-failing", unknown, known)
	}
	t.Logf("%d unknown-tool answers, %d answers of failing known tools", unknown, known)
}
