package toolguard

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestCaptureKeepsReplyUpToLimit(t *testing.T) {
	w := newCaptureWriter(10)
	w.Header().Set("Content-Type", "application/json")
	if _, err := io.WriteString(w, "12345"); err != nil {
		t.Fatal(err)
	}
	r := w.reply()
	if r.Status != http.StatusOK || string(r.Body) != "12345" || r.Over || r.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%+v", r)
	}
	if _, err := io.WriteString(w, "678901"); err == nil {
		t.Fatal("a write past the limit succeeded")
	}
	if _, err := io.WriteString(w, "1"); err == nil {
		t.Fatal("a write after the limit was passed succeeded")
	}
	if r := w.reply(); !r.Over || string(r.Body) != "12345" {
		t.Fatalf("past the limit: %+v", r)
	}
}

func TestCaptureStatus(t *testing.T) {
	w := newCaptureWriter(10)
	if r := w.reply(); r.Status != 0 {
		t.Fatalf("nothing written: status %d", r.Status)
	}
	w.WriteHeader(http.StatusForbidden)
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, strings.Repeat("x", 3))
	if r := w.reply(); r.Status != http.StatusForbidden || string(r.Body) != "xxx" {
		t.Fatalf("%+v", r)
	}
}
