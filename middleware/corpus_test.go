package toolguard

import (
	"bufio"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// corpusEntry is one recorded answer of a real npm MCP server
// (testdata/notfound, recorded by scripts/record-notfound-corpus.sh).
type corpusEntry struct {
	Package, Version, Kind, Tool, Request, Answer string
	Listed                                        []string
}

func readCorpus(t *testing.T) []corpusEntry {
	t.Helper()
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
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// Every real server's answer to an unknown tool that names the tool is
// translated, in every shape the corpus holds; every answer of a known
// tool that fails reaches the client untouched, however it reads; the only
// unknown-tool answers left are those that do not name the tool (a browser
// missing before any lookup).
func TestRealServersAnswers(t *testing.T) {
	corpus := readCorpus(t)
	var unknown, known int
	untouched := map[string]bool{}
	for _, e := range corpus {
		m := readMessage([]byte(e.Request))
		if !m.strict {
			t.Fatalf("%s: the request is not read: %s", e.Package, e.Request)
		}
		id := m.id.raw([]byte(e.Request))
		for _, ls := range []listState{listUnseen, listAbsent, listHas} {
			if e.Kind == "unknown" && ls == listHas {
				continue // not in its server's list
			}
			if e.Kind == "known-failing" && !slices.Contains(e.Listed, e.Tool) {
				t.Fatalf("%s: a known tool %q that was not listed", e.Package, e.Tool)
			}
			a, ok := readCallAnswer([]byte(e.Answer), id, e.Tool, nil)
			got := ok && a.says(e.Tool) && a.notFound(e.Tool, ls)
			want := e.Kind == "unknown" && (ls == listAbsent || a.kind != kindResult)
			if e.Kind == "unknown" && !got && want {
				untouched[e.Package] = true
				continue
			}
			if got != want {
				t.Errorf("%s %s, %s %q (list %d): translated %v, want %v:\n%s", e.Package, e.Version, e.Kind, e.Tool, ls, got, want, e.Answer)
			}
		}
		if e.Kind == "unknown" {
			unknown++
		} else {
			known++
		}
	}
	// The answers left as they are: those that do not name the tool.
	var left []string
	for p := range untouched {
		left = append(left, p)
	}
	slices.Sort(left)
	if want := []string{"@modelcontextprotocol/server-puppeteer", "@playwright/mcp"}; !slices.Equal(left, want) {
		t.Errorf("unknown-tool answers left untranslated: %q, want only %q", left, want)
	}
	for _, e := range corpus {
		if untouched[e.Package] && e.Kind == "unknown" && strings.Contains(e.Answer, e.Tool) {
			t.Errorf("%s names the tool and is left: %s", e.Package, e.Answer)
		}
	}
	if unknown < 90 || known < 30 {
		t.Errorf("a thin corpus: %d unknown, %d known-failing", unknown, known)
	}
	t.Logf("%d unknown-tool answers, %d answers of failing known tools", unknown, known)
}
