// Package cmdlog is the log of toolguard-proxy and toolguard-stdio: one
// line per event on standard error, either as text (the default: the
// command's name, the date and time, and a sentence) or, with -log-format
// json, one JSON object per line written by log/slog's JSONHandler, with
// the fields time, level, msg (the same sentence), cmd (the command),
// event (a short name for the kind of line, where it has one) and the
// event's own fields. docs/OBSERVE.md lists the events and their fields.
package cmdlog

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
)

// Formats are the values -log-format takes.
const Formats = "text or json"

// A Logger writes the command's lines.
type Logger struct {
	text *log.Logger  // text: the line is the sentence
	json *slog.Logger // json: the sentence and the fields
}

// New returns the logger of the command named cmd writing to w in format
// ("text" or "json").
func New(w io.Writer, format, cmd string) (*Logger, error) {
	switch format {
	case "text":
		return Text(log.New(w, cmd+": ", log.LstdFlags)), nil
	case "json":
		return &Logger{json: slog.New(slog.NewJSONHandler(w, nil)).With("cmd", cmd)}, nil
	}
	return nil, fmt.Errorf("-log-format must be %s, not %q", Formats, format)
}

// Text returns a text logger writing through l.
func Text(l *log.Logger) *Logger { return &Logger{text: l} }

// Event writes one line: msg in text, msg with event and attrs in JSON.
func (l *Logger) Event(level slog.Level, event, msg string, attrs ...slog.Attr) {
	if l.text != nil {
		l.text.Print(msg)
		return
	}
	if event != "" {
		attrs = append([]slog.Attr{slog.String("event", event)}, attrs...)
	}
	l.json.LogAttrs(context.Background(), level, msg, attrs...)
}

// Printf writes a line without fields of its own, at level Info.
func (l *Logger) Printf(format string, a ...any) {
	l.Event(slog.LevelInfo, "", fmt.Sprintf(format, a...))
}

// Log returns a *log.Logger whose lines are this logger's (at level in
// JSON), for http.Server.ErrorLog and code that takes a *log.Logger.
func (l *Logger) Log(level slog.Level) *log.Logger {
	if l.text != nil {
		return l.text
	}
	return slog.NewLogLogger(l.json.Handler(), level)
}
