// Package render prints a ranked table for people, fitted to the
// terminal like `go tool pprof -top`: header lines (the table, its
// artifacts, totals, what is shown of what), then aligned columns chosen
// by value, then what was hidden or cut, the limitations and the notes.
//
// The view never changes evidence, only how it reads: opaque identities
// and long detail text (declared in the table's schema) are left to the
// JSONL, and so are columns empty or constant in every row; file, line
// and column become one editor-style file:line (1-based, whatever the
// native base the schema or the table states); seconds read in ms or µs;
// control characters and bidi overrides are escaped so native text cannot
// act on the terminal. It imports evidence and table (and x/sys/unix for
// the terminal's size).
package render

import (
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/table"
)

// DefaultWidth is the width when neither COLUMNS nor the terminal says.
const DefaultWidth = 100

const (
	minWidth = 20 // narrower requests are laid out at this width
	gap      = 2  // spaces between columns
)

// Text renders a result table and passed-through blocks as text.
type Text struct {
	W io.Writer
	// Width is the line width in terminal cells; 0 means the COLUMNS
	// environment variable, else the size of the terminal W writes to,
	// else DefaultWidth.
	Width int
	// Plain lays the table out for a program or a model rather than a
	// terminal: no width, so no column is dropped or cut for room; cells
	// are separated by one tab, unpadded, with no rule under the labels.
	Plain bool
	// Full says where every column and the whole text are, in the words
	// of the caller's surface (default "--format jsonl").
	Full string

	header    *evidence.Table
	rows      []evidence.Object
	notes     []string
	artifacts map[string]artifact
	tables    int
}

// artifact is what the view knows of a passed artifact.
type artifact struct{ name, format string }

// Begin starts a table; a projection may write several in turn.
func (t *Text) Begin(h *evidence.Table) error { t.header, t.rows = h, nil; return nil }

func (t *Text) Row(v evidence.Object) error { t.rows = append(t.rows, v); return nil }

// Pass notes captures and failures, and learns artifacts' names.
func (t *Text) Pass(b evidence.Block) error {
	o, _ := b.CanonicalValue().(evidence.Object)
	switch b.Kind() {
	case evidence.KindArtifact:
		if t.artifacts == nil {
			t.artifacts = map[string]artifact{}
		}
		id, _ := o["artifact_id"].(string)
		name, _ := o["name"].(string)
		format, _ := o["format"].(string)
		t.artifacts[id] = artifact{name, format}
	case evidence.KindCapture:
		exit := "-"
		if e, ok := o["exit"].(evidence.Object); ok {
			if c, ok := e["code"]; ok {
				exit = fmt.Sprint("exit ", c)
			} else {
				exit = fmt.Sprint("signal ", e["signal"])
			}
		}
		prov, _ := o["provider"].(evidence.Object)
		name := fmt.Sprint(prov["name"])
		if v, ok := prov["version"].(string); ok {
			name += " " + v
		}
		t.notes = append(t.notes, fmt.Sprintf("capture %v: %s, %s, outcome %v", o["capture_id"], name, exit, o["outcome"]))
	case evidence.KindFailure:
		t.notes = append(t.notes, fmt.Sprintf("failure %v: %v", o["code"], o["message"]))
	}
	return nil
}

func (t *Text) width() int {
	if t.Plain {
		return 0
	}
	w := t.Width
	if w <= 0 {
		if n, err := strconv.Atoi(strings.TrimSpace(os.Getenv("COLUMNS"))); err == nil && n > 0 {
			w = n
		}
	}
	if w <= 0 {
		w = ttyWidth(t.W)
	}
	if w <= 0 {
		w = DefaultWidth
	}
	return max(w, minWidth)
}

// visible drops the columns the table's declared schema marks as opaque
// identities (digests, frame ids), which only machines need; a table
// without a declared schema shows every column. With several artifacts,
// the artifact column stays, shortened, to tell their rows apart.
func visible(h *evidence.Table) []evidence.Column {
	schema := table.Lookup(h.Name)
	var out []evidence.Column
	for _, c := range h.Columns {
		if c.Name == table.ArtifactColumn && len(h.ArtifactIDs) > 1 {
			out = append(out, c)
			continue
		}
		if schema != nil {
			if d, ok := schema.Column(c.Name); ok && d.Identity {
				continue
			}
		}
		out = append(out, c)
	}
	return out
}

func (t *Text) End(s *evidence.Summary) error {
	s.RowsEmitted = int64(len(t.rows))
	w := t.width()
	var out []string
	add := func(text string) {
		if w <= 0 {
			out = append(out, text)
			return
		}
		out = append(out, wrap(text, w)...)
	}

	add(fmt.Sprintf("%s (%s, %s evidence)", t.header.Name, t.header.Operation, t.header.Evidence))
	if a := t.artifactLine(); a != "" {
		add(a)
	}
	for _, l := range metricLines(t.header, s) {
		add(l)
	}
	add(rowsLine(s))

	l := t.layout(w)
	out = append(out, "")
	out = append(out, l.lines...)
	if len(l.footer) > 0 {
		out = append(out, "")
		for _, f := range l.footer {
			add(f)
		}
	}
	if len(s.Limitations) > 0 || len(t.notes) > 0 {
		out = append(out, "")
	}
	for _, lim := range s.Limitations {
		add("limitation: " + lim)
	}
	for _, n := range t.notes {
		add(n)
	}
	t.notes = nil
	var b strings.Builder
	if t.tables > 0 {
		b.WriteString("\n")
	}
	t.tables++
	for _, line := range out {
		// A last guard: nothing is ever printed wider than the width.
		if w > 0 && Width(line) > w {
			line = cutEnd(line, w)
		}
		b.WriteString(strings.TrimRight(line, " "))
		b.WriteString("\n")
	}
	_, err := io.WriteString(t.W, b.String())
	return err
}

// artifactLine names the table's artifacts, by file name where a passed
// artifact block told it, else by a short digest.
func (t *Text) artifactLine() string {
	ids := t.header.ArtifactIDs
	if len(ids) == 0 {
		return ""
	}
	names := make([]string, 0, len(ids))
	for _, id := range ids {
		a, ok := t.artifacts[id]
		switch {
		case ok && a.name != "" && len(ids) == 1 && a.format != "":
			names = append(names, fmt.Sprintf("%s (%s, %s)", a.name, a.format, short(id)))
		case ok && a.name != "":
			names = append(names, a.name)
		default:
			names = append(names, short(id))
		}
	}
	if len(ids) == 1 {
		return "artifact: " + names[0]
	}
	return fmt.Sprintf("%d artifacts: %s", len(ids), strings.Join(names, ", "))
}

// full is where the caller finds every column and the whole text.
func (t *Text) full() string {
	if t.Full != "" {
		return t.Full
	}
	return "--format jsonl"
}

func short(id string) string {
	d := strings.TrimPrefix(id, "sha256:")
	return d[:min(12, len(d))]
}

// rowsLine says what is shown of what, and whether the evidence is
// complete.
func rowsLine(s *evidence.Summary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "rows: %d shown of %d selected", s.RowsEmitted, s.RowsObserved)
	switch {
	case s.Complete:
		b.WriteString("; complete")
	case s.Truncation != nil && len(inputGaps(s)) == 0:
		fmt.Fprintf(&b, "; bounded: %d omitted by %s=%d", s.Truncation.Omitted, s.Truncation.Reason, s.Truncation.Limit)
	default:
		if s.Truncation != nil {
			fmt.Fprintf(&b, "; %d omitted by %s=%d", s.Truncation.Omitted, s.Truncation.Reason, s.Truncation.Limit)
		}
		b.WriteString("; INCOMPLETE evidence")
		if gaps := inputGaps(s); len(gaps) > 0 {
			fmt.Fprintf(&b, " (incomplete inputs: %s)", strings.Join(gaps, ", "))
		}
	}
	return b.String()
}

// metricLines are the summary's metrics as header lines: pytest's
// outcome line for failures, else "name: value unit" pairs on one line.
func metricLines(h *evidence.Table, s *evidence.Summary) []string {
	if h.Name == table.PytestFailures.Name {
		return pytestLines(s)
	}
	names := make([]string, 0, len(s.Metrics))
	for k := range s.Metrics {
		names = append(names, k)
	}
	sort.Strings(names)
	var parts []string
	for _, k := range names {
		m := s.Metrics[k]
		parts = append(parts, k+": "+quantity(m.Value, m.Unit))
	}
	if len(parts) == 0 {
		return nil
	}
	return []string{strings.Join(parts, "; ")}
}

// quantity writes a metric's value with its unit: seconds in human
// units, counts bare.
func quantity(v any, unit string) string {
	if v == nil {
		return "unknown"
	}
	if unit == "s" {
		if f, ok := evidence.AsFloat(v); ok {
			return seconds(f)
		}
	}
	n := number(v)
	if unit == "" || unit == "count" {
		return n
	}
	return n + " " + unit
}

// seconds writes a duration in the unit that keeps three significant
// digits readable: 1.25s, 91.9ms, 893µs, 120ns.
func seconds(f float64) string {
	a := math.Abs(f)
	var v float64
	var u string
	switch {
	case a == 0:
		return "0"
	case a >= 1:
		v, u = f, "s"
	case a >= 1e-3:
		v, u = f*1e3, "ms"
	case a >= 1e-6:
		v, u = f*1e6, "µs"
	default:
		v, u = f*1e9, "ns"
	}
	prec := 2
	switch av := math.Abs(v); {
	case av >= 100:
		prec = 0
	case av >= 10:
		prec = 1
	}
	return strconv.FormatFloat(v, 'f', prec, 64) + u
}

// inputGaps lists incomplete input tables named in the coverage.
func inputGaps(s *evidence.Summary) []string {
	var out []string
	if xs, ok := s.Coverage["incomplete_input_tables"].([]string); ok {
		out = append(out, xs...)
	}
	if xs, ok := s.Coverage["incomplete_input_tables"].([]any); ok {
		for _, x := range xs {
			out = append(out, fmt.Sprint(x))
		}
	}
	return out
}

func numeric(c evidence.Column) bool {
	return c.Type == evidence.TypeInt || c.Type == evidence.TypeDouble
}

func number(v any) string {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'g', 6, 64)
	case int, int64:
		return fmt.Sprint(x)
	}
	if f, ok := evidence.AsFloat(v); ok {
		return number(f)
	}
	return fmt.Sprint(v)
}
