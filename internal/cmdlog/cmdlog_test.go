package cmdlog

import (
	"bufio"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

// The text format is the line the commands always wrote: name, date and
// time, sentence; the fields are left to the sentence.
func TestTextIsTheSentence(t *testing.T) {
	var b strings.Builder
	l, err := New(&b, "text", "toolguard-x")
	if err != nil {
		t.Fatal(err)
	}
	l.Event(slog.LevelWarn, "translated", `translated "x"`, slog.String("tool", "x"))
	l.Log(slog.LevelWarn).Print("from net/http")
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "toolguard-x: ") || !strings.HasSuffix(lines[0], ` translated "x"`) || strings.Contains(lines[0], "tool=") ||
		!strings.HasSuffix(lines[1], " from net/http") {
		t.Errorf("%q", lines)
	}
}

// In JSON each line is one object with time, level, msg, cmd, event and
// the event's fields; lines from a *log.Logger are objects too.
func TestJSONIsOneObjectALine(t *testing.T) {
	var b strings.Builder
	l, err := New(&b, "json", "toolguard-x")
	if err != nil {
		t.Fatal(err)
	}
	l.Event(slog.LevelInfo, "translated", "translated \"x\"\nwith a newline", slog.String("tool", "x\ny"), slog.Int("status", 200))
	l.Printf("listening on %s", "here")
	l.Log(slog.LevelWarn).Print("from net/http")
	sc := bufio.NewScanner(strings.NewReader(b.String()))
	var got []map[string]any
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%q: %v", sc.Text(), err)
		}
		got = append(got, m)
	}
	if len(got) != 3 {
		t.Fatalf("%d lines: %s", len(got), b.String())
	}
	first := got[0]
	if first["event"] != "translated" || first["tool"] != "x\ny" || first["status"] != 200.0 || first["level"] != "INFO" || first["cmd"] != "toolguard-x" || first["time"] == nil {
		t.Errorf("first line %v", first)
	}
	if got[1]["msg"] != "listening on here" || got[1]["event"] != nil || got[2]["msg"] != "from net/http" || got[2]["level"] != "WARN" {
		t.Errorf("other lines %v", got[1:])
	}
}

func TestUnknownFormatIsAnError(t *testing.T) {
	if _, err := New(&strings.Builder{}, "logfmt", "x"); err == nil || !strings.Contains(err.Error(), "text or json") {
		t.Errorf("%v", err)
	}
}
