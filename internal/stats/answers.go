package stats

import (
	"sync/atomic"

	toolguard "github.com/toolguard/toolguard/middleware"
)

// The unknown tool names shown, and the names kept to choose them from.
const (
	ShownNames = 20
	KeptNames  = 64
)

// Answers counts the answers a guard writes (what its OnReject hook is
// told): the translated ones with and without data.availableTools, and
// the unknown tool names called. The zero value is not ready: use
// NewAnswers.
type Answers struct {
	withList, withoutList atomic.Uint64
	Unknown               *TopNames
}

// NewAnswers returns counters at zero.
func NewAnswers() *Answers { return &Answers{Unknown: NewTopNames(KeptNames)} }

// Count counts one answer of the guard.
func (a *Answers) Count(rej *toolguard.Rejection) {
	if rej.Translated {
		if rej.ListErr != nil {
			a.withoutList.Add(1)
		} else {
			a.withList.Add(1)
		}
	}
	if rej.Code == toolguard.CodeInvalidParams {
		a.Unknown.Add(rej.Name)
	}
}

// Write writes the answers' families.
func (a *Answers) Write(w *Writer) {
	w.Head("toolguard_translated_total", "counter", "Answers that replaced the server's own not-found answer, with (list=\"yes\") and without (list=\"no\") data.availableTools.")
	w.Uint("toolguard_translated_total", a.withList.Load(), "list", "yes")
	w.Uint("toolguard_translated_total", a.withoutList.Load(), "list", "no")
	top, rest, total := a.Unknown.Top(ShownNames)
	w.Head("toolguard_unknown_tool_calls_total", "counter", "Calls of a tool the server does not have, answered -32602 by the guard.")
	w.Uint("toolguard_unknown_tool_calls_total", total)
	w.Head("toolguard_unknown_tool_calls", "gauge", "The most called unknown tool names (at most 20, cut to 128 bytes) with the calls each is sure to have had; a ranking, so a name may leave it.")
	for _, e := range top {
		w.Uint("toolguard_unknown_tool_calls", e.Count, "tool", e.Name)
	}
	w.Head("toolguard_unknown_tool_calls_other", "gauge", "Calls of unknown tool names not in toolguard_unknown_tool_calls.")
	w.Uint("toolguard_unknown_tool_calls_other", rest)
}
