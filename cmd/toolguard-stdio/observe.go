package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/toolguard/toolguard/internal/cmdlog"
	"github.com/toolguard/toolguard/internal/stats"
	toolguard "github.com/toolguard/toolguard/middleware"
)

// What an operator reads of a session: the log (-log, in -log-format),
// and with -stats FILE the counts, written when the session ends in the
// Prometheus text format (node_exporter's textfile collector reads it), a
// desktop client giving no listener to scrape. The counts come from the
// guard's hooks (OnTranslate, OnUntracked) alone.

// observe is what -log-format and -stats ask for.
type observe struct {
	format, statsPath string
	log               *cmdlog.Logger
	answers           *stats.Answers
	untracked         [len(untrackedReasons)]atomic.Uint64
}

// untrackedReasons name the guard's OnUntracked reasons in a word, with
// the words of the reason that say it; the last is any other.
var untrackedReasons = [...]struct{ name, says string }{
	{"line-too-long", "longer than MaxLineBytes"},
	{"not-strict", "outside the strict subset"},
	{"other", ""},
}

// observeFlags adds -log-format and -stats to fs.
func observeFlags(fs *flag.FlagSet) *observe {
	o := &observe{}
	fs.StringVar(&o.format, "log-format", "text", "the log's format: text (one sentence a line) or json (one object a line, with the fields of docs/OBSERVE.md)")
	fs.StringVar(&o.statsPath, "stats", "", "when the session ends, write its counts to this `file` in the Prometheus text format (replaced whole, never half written)")
	return o
}

// hooks makes the logger and sets the guard's hooks: a line per event
// with logAnswers, a count per event with -stats.
func (o *observe) hooks(opts *toolguard.StdioOptions, stderr io.Writer, logAnswers bool) error {
	var err error
	if o.log, err = cmdlog.New(stderr, o.format, "toolguard-stdio"); err != nil {
		return err
	}
	if o.statsPath != "" {
		o.answers = stats.NewAnswers()
		o.checkStats()
	}
	if !logAnswers && o.answers == nil {
		return nil
	}
	opts.OnTranslate = func(rej *toolguard.Rejection) {
		if o.answers != nil {
			o.answers.Count(rej)
		}
		if !logAnswers {
			return
		}
		if rej.ListErr != nil {
			o.log.Event(slog.LevelInfo, "translated", fmt.Sprintf("translated the server's not-found answer for tool %q without data.availableTools: %v", rej.Name, rej.ListErr),
				slog.String("tool", rej.Name), slog.Bool("list", false), slog.String("list_err", rej.ListErr.Error()))
			return
		}
		o.log.Event(slog.LevelInfo, "translated", fmt.Sprintf("translated the server's not-found answer for tool %q", rej.Name), slog.String("tool", rej.Name), slog.Bool("list", true))
	}
	opts.OnUntracked = func(reason string) {
		i := 0
		for i < len(untrackedReasons)-1 && !strings.Contains(reason, untrackedReasons[i].says) {
			i++
		}
		o.untracked[i].Add(1)
		if logAnswers {
			o.log.Event(slog.LevelInfo, "untracked", "untracked: "+reason, slog.String("reason", untrackedReasons[i].name), slog.String("why", reason))
		}
	}
	return nil
}

// checkStats says at the start, as a warning, when -stats FILE cannot be
// written (its directory is missing or not writable, or FILE is a
// directory): the session runs all the same, and its end says it again.
func (o *observe) checkStats() {
	var err error
	if fi, serr := os.Stat(o.statsPath); serr == nil && fi.IsDir() {
		err = errors.New("it is a directory, not a file")
	} else if f, cerr := os.CreateTemp(filepath.Dir(o.statsPath), ".toolguard-stats-*"); cerr != nil {
		err = cerr
	} else {
		f.Close()
		err = os.Remove(f.Name())
	}
	if err != nil {
		o.log.Event(slog.LevelWarn, "stats", fmt.Sprintf("-stats %s: cannot be written (%v); the session runs, and unless that changes its counts are lost", o.statsPath, err),
			slog.String("file", o.statsPath), slog.String("err", err.Error()))
	}
}

// writeStats writes the counts to -stats FILE, through a file beside it
// renamed over it, so a reader sees the last session's whole or the one
// before. A failure is logged; it does not change the exit status.
func (o *observe) writeStats() {
	if o.statsPath == "" {
		return
	}
	err := func() error {
		f, err := os.CreateTemp(filepath.Dir(o.statsPath), ".toolguard-stats-*")
		if err != nil {
			return err
		}
		defer os.Remove(f.Name()) // after the rename, nothing
		w := stats.NewWriter(f)
		o.answers.Write(w)
		w.Head("toolguard_untracked_total", "counter", "Client lines the guard left to the server untracked (their answers are not translated), by reason.")
		for i, r := range untrackedReasons {
			w.Uint("toolguard_untracked_total", o.untracked[i].Load(), "reason", r.name)
		}
		if err := w.Err(); err != nil {
			f.Close()
			return err
		}
		if err := f.Chmod(0o644); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		return os.Rename(f.Name(), o.statsPath)
	}()
	if err != nil {
		o.log.Event(slog.LevelError, "stats", fmt.Sprintf("-stats %s: %v", o.statsPath, err), slog.String("file", o.statsPath), slog.String("err", err.Error()))
	}
}
