package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
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

func printTable(corpus, statusPath string) error {
	f, err := os.Open(corpus)
	if err != nil {
		return err
	}
	defer f.Close()
	type row struct {
		version, kind, words string
		names, same          bool
		n                    int
	}
	rows := map[string]*row{}
	var order []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return err
		}
		if e.Kind != "unknown" {
			continue
		}
		kind, words, names := shape(e)
		r := rows[e.Package]
		if r == nil {
			r = &row{version: e.Version, kind: kind, words: words, names: names, same: true}
			rows[e.Package] = r
			order = append(order, e.Package)
		} else if kind != r.kind || words != r.words {
			r.same = false
		} else if !names {
			r.names = false
		}
		r.n++
	}
	if err := sc.Err(); err != nil {
		return err
	}
	fmt.Println("| package | version | unknown-tool answer | words (called name as X) | names the tool |")
	fmt.Println("|---|---|---|---|---|")
	for _, p := range order {
		r := rows[p]
		w := strings.ReplaceAll(r.words, "|", `\|`)
		w = strings.ReplaceAll(w, "\n", "⏎")
		if len(w) > 160 {
			w = w[:160] + "…"
		}
		if !r.same {
			w += " (the three names differ; see the corpus)"
		}
		names := "yes"
		if !r.names {
			names = "no"
		}
		fmt.Printf("| `%s` | %s | %s | `%s` | %s |\n", p, r.version, r.kind, w, names)
	}
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
	fmt.Println()
	fmt.Println("| package | version | why not recorded |")
	fmt.Println("|---|---|---|")
	for _, s := range sts {
		if s.Started && s.Entries > 0 {
			continue
		}
		reason := strings.ReplaceAll(s.Reason, "|", `\|`)
		if len(reason) > 300 {
			reason = reason[:300] + "…"
		}
		fmt.Printf("| `%s` | %s | %s |\n", s.Package, s.Version, reason)
	}
	return nil
}
