// Package render prints a ranked table for people: aligned columns, units
// in the header, shares as percentages, and the summary's completeness,
// truncation and limitations spelled out under the table. Which columns are
// opaque identities, left out for people, comes from the table's declared
// schema. It imports evidence and table.
package render

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/table"
)

// MaxCell bounds a cell's width; longer text is cut in the middle.
const MaxCell = 72

// Text renders a result table and passed-through blocks as text.
type Text struct {
	W      io.Writer
	header *evidence.Table
	rows   []evidence.Object
	notes  []string
	tables int
}

// Begin starts a table; a projection may write several in turn.
func (t *Text) Begin(h *evidence.Table) error { t.header, t.rows = h, nil; return nil }

func (t *Text) Row(v evidence.Object) error { t.rows = append(t.rows, v); return nil }

// Pass notes captures and failures; artifacts are counted in the summary.
func (t *Text) Pass(b evidence.Block) error {
	o, _ := b.CanonicalValue().(evidence.Object)
	switch b.Kind() {
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
	cols := visible(t.header)
	// Drop columns that are null in every row.
	var keep []evidence.Column
	for _, c := range cols {
		for _, r := range t.rows {
			if r[c.Name] != nil {
				keep = append(keep, c)
				break
			}
		}
	}
	if len(t.rows) == 0 {
		keep = cols
	}
	cells := make([][]string, 0, len(t.rows)+1)
	head := make([]string, len(keep))
	for i, c := range keep {
		head[i] = c.Name
		if c.Unit != "" && c.Unit != "ratio" {
			head[i] += " (" + c.Unit + ")"
		}
	}
	cells = append(cells, head)
	for _, r := range t.rows {
		line := make([]string, len(keep))
		for i, c := range keep {
			line[i] = cell(c, r[c.Name])
		}
		cells = append(cells, line)
	}
	widths := make([]int, len(keep))
	for _, line := range cells {
		for i, c := range line {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s, %s evidence)\n", t.header.Name, t.header.Operation, t.header.Evidence)
	for li, line := range cells {
		for i, c := range line {
			pad := widths[i] - utf8.RuneCountInString(c)
			if numeric(keep[i]) {
				b.WriteString(strings.Repeat(" ", pad) + c)
			} else {
				b.WriteString(c + strings.Repeat(" ", pad))
			}
			if i < len(line)-1 {
				b.WriteString("  ")
			}
		}
		b.WriteString("\n")
		if li == 0 {
			for i, w := range widths {
				b.WriteString(strings.Repeat("-", w))
				if i < len(widths)-1 {
					b.WriteString("  ")
				}
			}
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(&b, "\nrows: %d shown of %d selected", s.RowsEmitted, s.RowsObserved)
	switch {
	case s.Complete:
		b.WriteString("; complete\n")
	case s.Truncation != nil && len(inputGaps(s)) == 0:
		fmt.Fprintf(&b, "; bounded: %d omitted by %s=%d\n", s.Truncation.Omitted, s.Truncation.Reason, s.Truncation.Limit)
	default:
		if s.Truncation != nil {
			fmt.Fprintf(&b, "; %d omitted by %s=%d", s.Truncation.Omitted, s.Truncation.Reason, s.Truncation.Limit)
		}
		b.WriteString("; INCOMPLETE evidence")
		if gaps := inputGaps(s); len(gaps) > 0 {
			fmt.Fprintf(&b, " (incomplete inputs: %s)", strings.Join(gaps, ", "))
		}
		b.WriteString("\n")
	}
	names := make([]string, 0, len(s.Metrics))
	for k := range s.Metrics {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		m := s.Metrics[k]
		fmt.Fprintf(&b, "%s: %s %s\n", k, number(m.Value), m.Unit)
	}
	for _, l := range s.Limitations {
		fmt.Fprintf(&b, "limitation: %s\n", l)
	}
	for _, n := range t.notes {
		fmt.Fprintf(&b, "%s\n", n)
	}
	t.notes = nil
	out := b.String()
	if t.tables > 0 {
		out = "\n" + out
	}
	t.tables++
	_, err := io.WriteString(t.W, out)
	return err
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

func cell(c evidence.Column, v any) string {
	if v == nil {
		return "-"
	}
	if c.Unit == "ratio" {
		if f, ok := evidence.AsFloat(v); ok {
			return strconv.FormatFloat(f*100, 'f', 1, 64) + "%"
		}
	}
	if numeric(c) {
		return number(v)
	}
	if c.Name == table.ArtifactColumn {
		d := strings.TrimPrefix(fmt.Sprint(v), "sha256:")
		return d[:min(12, len(d))]
	}
	s := fmt.Sprint(v)
	if c.Type == evidence.TypeString && s == "" {
		return `""`
	}
	return cut(s, MaxCell)
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

func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	half := (n - 1) / 2
	return string(r[:half]) + "…" + string(r[len(r)-(n-1-half):])
}
