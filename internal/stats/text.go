package stats

import (
	"io"
	"strconv"
	"strings"
)

// ContentType is the Content-Type of the text exposition format.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// A Writer writes metric families in the text exposition format. The
// first write error is kept and returned by Err; later writes do nothing.
type Writer struct {
	w   io.Writer
	b   []byte
	err error
}

// NewWriter returns a Writer to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Head starts a family: its HELP and TYPE lines.
func (w *Writer) Head(name, typ, help string) {
	w.b = append(w.b[:0], "# HELP "...)
	w.b = append(w.b, name...)
	w.b = append(w.b, ' ')
	w.b = append(w.b, helpEscaper.Replace(help)...)
	w.b = append(w.b, "\n# TYPE "...)
	w.b = append(w.b, name...)
	w.b = append(w.b, ' ')
	w.b = append(w.b, typ...)
	w.b = append(w.b, '\n')
	w.flush()
}

// Uint writes one sample of name with an integer value; labels are
// name, value pairs.
func (w *Writer) Uint(name string, v uint64, labels ...string) {
	w.sample(name, labels)
	w.b = strconv.AppendUint(w.b, v, 10)
	w.b = append(w.b, '\n')
	w.flush()
}

// Float writes one sample of name with value v; labels are name, value
// pairs.
func (w *Writer) Float(name string, v float64, labels ...string) {
	w.sample(name, labels)
	w.b = strconv.AppendFloat(w.b, v, 'g', -1, 64)
	w.b = append(w.b, '\n')
	w.flush()
}

func (w *Writer) sample(name string, labels []string) {
	w.b = append(w.b[:0], name...)
	if len(labels) > 0 {
		w.b = append(w.b, '{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.b = append(w.b, labels[i]...)
			w.b = append(w.b, `="`...)
			w.b = append(w.b, valueEscaper.Replace(labels[i+1])...)
			w.b = append(w.b, '"')
		}
		w.b = append(w.b, '}')
	}
	w.b = append(w.b, ' ')
}

func (w *Writer) flush() {
	if w.err == nil {
		_, w.err = w.w.Write(w.b)
	}
}

// Err returns the first write error.
func (w *Writer) Err() error { return w.err }

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	valueEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)
