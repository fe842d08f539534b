package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"
)

// shape describes one answer: where the words are and what they say, with
// the called name written as X.
func shape(e Entry) (kind, words string, names bool) {
	var m struct {
		Error *struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"error"`
		Result *struct {
			IsError *bool `json:"isError"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(e.Answer), &m); err != nil {
		return "not JSON", e.Answer, strings.Contains(e.Answer, e.Tool)
	}
	switch {
	case m.Error != nil:
		kind = fmt.Sprintf("JSON-RPC error %d", m.Error.Code)
		words = m.Error.Message
		if len(m.Error.Data) > 0 {
			kind += " (with data)"
		}
		names = strings.Contains(m.Error.Message, e.Tool) || strings.Contains(string(m.Error.Data), e.Tool)
	case m.Result != nil:
		var texts []string
		for _, c := range m.Result.Content {
			if c.Type == "text" {
				texts = append(texts, c.Text)
			}
		}
		words = strings.Join(texts, " ⏎ ")
		switch {
		case m.Result.IsError == nil:
			kind = "result, no isError"
		case *m.Result.IsError:
			kind = "result, isError: true"
		default:
			kind = "result, isError: false"
		}
		if t := strings.TrimSpace(words); strings.HasPrefix(t, "{") && json.Valid([]byte(t)) {
			kind += ", JSON text"
		}
		names = strings.Contains(words, e.Tool)
	default:
		kind = "neither result nor error"
		words = e.Answer
	}
	if e.Tool != "" {
		words = strings.ReplaceAll(words, e.Tool, "X")
	}
	return kind, words, names
}

// printTable prints the markdown table of the corpus's unknown-tool answer
// shapes, one row a package, then, if statusPath can be read, the table of
// the servers that were not recorded and why.
func printTable(corpus, statusPath string) error {
	rows, order, err := readShapes(corpus)
	if err != nil {
		return err
	}
	printShapes(rows, order)
	if statusPath == "" {
		return nil
	}
	b, err := os.ReadFile(statusPath)
	if err != nil {
		return nil
	}
	var sts []Status
	if err := json.Unmarshal(b, &sts); err != nil {
		return err
	}
	printUnrecorded(sts)
	return nil
}

// A shapeRow is the shape of a package's unknown-tool answers: that of the
// first, whether all n had it, and whether all named the tool.
type shapeRow struct {
	version, kind, words string
	names, same          bool
	n                    int
}

// add counts one more unknown-tool answer of the package.
func (r *shapeRow) add(kind, words string, names bool) {
	if kind != r.kind || words != r.words {
		r.same = false
	} else if !names {
		r.names = false
	}
	r.n++
}

// readShapes reads the corpus's unknown-tool entries into a row a package,
// in the order the packages first appear.
func readShapes(corpus string) (map[string]*shapeRow, []string, error) {
	f, err := os.Open(corpus)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	rows := map[string]*shapeRow{}
	var order []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, nil, err
		}
		if e.Kind != "unknown" {
			continue
		}
		kind, words, names := shape(e)
		if r := rows[e.Package]; r != nil {
			r.add(kind, words, names)
			continue
		}
		rows[e.Package] = &shapeRow{version: e.Version, kind: kind, words: words, names: names, same: true, n: 1}
		order = append(order, e.Package)
	}
	return rows, order, sc.Err()
}

func printShapes(rows map[string]*shapeRow, order []string) {
	fmt.Println("| package | version | unknown-tool answer | words (called name as X) | names the tool |")
	fmt.Println("|---|---|---|---|---|")
	for _, p := range order {
		r := rows[p]
		w := strings.ReplaceAll(r.words, "|", `\|`)
		w = clip(strings.ReplaceAll(w, "\n", "⏎"), 160)
		if !r.same {
			w += " (the three names differ; see the corpus)"
		}
		names := "yes"
		if !r.names {
			names = "no"
		}
		fmt.Printf("| `%s` | %s | %s | `%s` | %s |\n", p, r.version, r.kind, w, names)
	}
}

// printUnrecorded prints the servers that did not start or gave no entry.
func printUnrecorded(sts []Status) {
	fmt.Println()
	fmt.Println("| package | version | why not recorded |")
	fmt.Println("|---|---|---|")
	for _, s := range sts {
		if s.Started && s.Entries > 0 {
			continue
		}
		reason := clip(strings.ReplaceAll(s.Reason, "|", `\|`), 300)
		fmt.Printf("| `%s` | %s | %s |\n", s.Package, s.Version, reason)
	}
}

// clip cuts s to at most its first n bytes, at a rune's start, marking
// the cut with an ellipsis.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
