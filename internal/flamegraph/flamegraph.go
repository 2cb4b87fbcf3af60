// Package flamegraph writes the folded stacks a stack projection ranked
// (cpu.folded, cpu.folded_diff) as pictures and text people and tools
// read: Brendan Gregg's folded format (for flamegraph.pl and inferno), a
// flame graph SVG (or icicle, or differential: red grew, blue shrank) with
// its own search and click-to-zoom script, and one self-contained HTML page
// (the graph, a hotspot table and the summary). Nothing is fetched: no
// external asset, font or script. The output is a function of the rows,
// header and summary alone, so the same input gives the same bytes.
//
// Its Writer is a flameox-rank output (Begin, Row, End, Pass). It imports
// evidence, table and unit.
package flamegraph

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/table"
)

// Output formats a Writer writes.
const (
	Folded = "folded"
	SVG    = "svg"
	HTML   = "html"
)

// Writer collects one stack result and writes it in Format when it ends.
type Writer struct {
	W      io.Writer
	Format string // Folded, SVG or HTML
	Icicle bool   // draw top-down: the root at the top

	head      *evidence.Table
	diff      bool
	memory    bool // memory.folded: bytes or allocations, never CPU weight
	rows      []stackRow
	artifacts []string // names of the artifacts passed, in order
	notes     []string // failures passed on
}

type stackRow struct {
	stack     []string
	base, new float64
}

// Begin accepts the header of a stack result and refuses any other.
func (w *Writer) Begin(h *evidence.Table) error {
	switch h.Name {
	case table.CPUFolded.Name:
	case table.MemoryFolded.Name:
		w.memory = true
	case table.CPUFoldedDiff.Name:
		w.diff = true
	default:
		return &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message:  fmt.Sprintf("--format %s writes folded call stacks, and this result is %s: leave out --operation (flameox-rank infers the stacks operation for --format %s)", w.Format, h.Name, w.Format),
			Location: evidence.Location{Field: "format"}}
	}
	w.head = h
	return nil
}

// Row collects one stack.
func (w *Writer) Row(v evidence.Object) error {
	var r stackRow
	switch list := v["stack"].(type) {
	case []string:
		r.stack = list
	case []any:
		r.stack = make([]string, len(list))
		for i, s := range list {
			r.stack[i], _ = s.(string)
		}
	}
	if w.diff {
		r.base, _ = evidence.AsFloat(v["base_weight"])
		r.new, _ = evidence.AsFloat(v["new_weight"])
	} else {
		r.new, _ = evidence.AsFloat(v["weight"])
	}
	w.rows = append(w.rows, r)
	return nil
}

// Pass learns the artifacts' names for the title and keeps failures as
// notes.
func (w *Writer) Pass(b evidence.Block) error {
	o, _ := b.CanonicalValue().(evidence.Object)
	switch b.Kind() {
	case evidence.KindArtifact:
		name, _ := o["name"].(string)
		if role, _ := o["role"].(string); role == "baseline" || role == "new" {
			name = role + " " + name
		}
		w.artifacts = append(w.artifacts, name)
	case evidence.KindFailure:
		if f, ok := b.(*evidence.Failure); ok {
			w.notes = append(w.notes, f.Error())
		}
	}
	return nil
}

// End writes the result.
func (w *Writer) End(s *evidence.Summary) error {
	bw := bufio.NewWriter(w.W)
	var err error
	switch w.Format {
	case Folded:
		err = w.folded(bw)
	case SVG:
		err = w.svg(bw, s, false)
	case HTML:
		err = w.html(bw, s)
	default:
		err = evidence.Failf(evidence.CodeInternal, "flamegraph: unknown format %q", w.Format)
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

// unitOf is the weights' unit in the header.
func (w *Writer) unitOf() string {
	for _, c := range w.head.Columns {
		if c.Name == "weight" || c.Name == "new_weight" {
			return c.Unit
		}
	}
	return ""
}

// FoldedScale is the factor and unit of the integer counts a folded line
// carries: flamegraph.pl and inferno read whole numbers, so weights in
// seconds are written in nanoseconds; counts stay as they are.
func FoldedScale(unitName string) (float64, string) {
	if unitName == "s" {
		return 1e9, "ns"
	}
	return 1, unitName
}

// FoldedLabel makes a label safe in a folded line, whose frames are split
// at ';' and whose count follows the last space: ';' becomes ':', line
// breaks become spaces. The JSONL keeps the exact text.
func FoldedLabel(s string) string {
	if !strings.ContainsAny(s, ";\n\r") {
		return s
	}
	return strings.NewReplacer(";", ":", "\n", " ", "\r", " ").Replace(s)
}

// folded writes one line per stack: frames root first joined by ';', a
// space, the weight as a whole number. A differential result writes
// FlameGraph's difffolded lines: both weights.
func (w *Writer) folded(bw *bufio.Writer) error {
	scale, _ := FoldedScale(w.unitOf())
	var line []byte
	for _, r := range w.rows {
		line = line[:0]
		for i, l := range r.stack {
			if i > 0 {
				line = append(line, ';')
			}
			line = append(line, FoldedLabel(l)...)
		}
		if w.diff {
			line = append(line, ' ')
			line = strconv.AppendInt(line, int64(math.Round(r.base*scale)), 10)
		}
		line = append(line, ' ')
		line = strconv.AppendInt(line, int64(math.Round(r.new*scale)), 10)
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return nil
}

// node is a frame of the merged call tree.
type node struct {
	name      string
	v, base   float64 // weight on the new side (its width), on the baseline
	self      float64 // new weight where the frame is the leaf
	baseSelf  float64
	kids      []*node
	idx       map[string]int
	x         float64 // start, in weight units from the root's
	depth     int
	drawnKids bool
}

func (n *node) child(name string) *node {
	if i, ok := n.idx[name]; ok {
		return n.kids[i]
	}
	if n.idx == nil {
		n.idx = map[string]int{}
	}
	c := &node{name: name}
	n.idx[name] = len(n.kids)
	n.kids = append(n.kids, c)
	return c
}

// tree merges the rows into a call tree under a root named "all" whose
// weight is the total: the summary's total_weight when it says more than
// the stacks hold (samples without a stack), else the stacks' sum.
func (w *Writer) tree(s *evidence.Summary) *node {
	root := &node{name: "all"}
	for _, r := range w.rows {
		n := root
		root.v += r.new
		root.base += r.base
		for _, l := range r.stack {
			n = n.child(l)
			n.v += r.new
			n.base += r.base
		}
		n.self += r.new
		n.baseSelf += r.base
	}
	if s != nil {
		if t, ok := evidence.AsFloat(s.Metrics[table.MetricTotalWeight].Value); ok && t > root.v {
			root.v = t
		}
	}
	return root
}

// FormatWeight writes a weight for people: counts whole, seconds in the
// unit that reads best.
func FormatWeight(v float64, u string) string {
	switch u {
	case "s":
		a := math.Abs(v)
		switch {
		case a == 0:
			return "0 s"
		case a < 1e-3:
			return strconv.FormatFloat(v*1e6, 'f', 1, 64) + " µs"
		case a < 1:
			return strconv.FormatFloat(v*1e3, 'f', 2, 64) + " ms"
		}
		return strconv.FormatFloat(v, 'f', 3, 64) + " s"
	case "bytes":
		return formatBytes(v)
	case "samples", "count", "":
		if v == math.Trunc(v) && a64(v) < 1e15 {
			return strconv.FormatInt(int64(v), 10) + " " + plural(u, v)
		}
	}
	return strconv.FormatFloat(v, 'g', 6, 64) + " " + u
}

func a64(v float64) float64 { return math.Abs(v) }

func plural(u string, v float64) string {
	if u == "" {
		return "samples"
	}
	if u == "samples" && v == 1 {
		return "sample"
	}
	return u
}

// limitations lists the summary's limitations and the notes, each once.
func (w *Writer) limitations(s *evidence.Summary) []string {
	var out []string
	if s != nil {
		out = append(out, s.Limitations...)
	}
	for _, n := range w.notes {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// formatBytes writes bytes as pprof does: the largest binary unit that
// keeps the number at least 1.
func formatBytes(v float64) string {
	a := math.Abs(v)
	for i, u := range []string{"EiB", "PiB", "TiB", "GiB", "MiB", "KiB"} {
		if f := math.Pow(1024, float64(6-i)); a >= f {
			return strconv.FormatFloat(v/f, 'f', 2, 64) + " " + u
		}
	}
	return strconv.FormatFloat(v, 'f', -1, 64) + " bytes"
}
