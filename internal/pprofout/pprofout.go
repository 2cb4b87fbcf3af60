// Package pprofout writes the folded stacks a stack projection ranked
// (cpu.folded) as a gzip'd profile.proto, with google/pprof's profile
// package, for go tool pprof, Pyroscope and Parca. The sample type and
// unit come from the evidence: samples as samples/count, seconds as
// cpu/nanoseconds (pprof's CPU convention), any other unit under its own
// name. A function is a frame label; each has one location. Nothing varies
// between runs (no timestamps), so the same input writes the same bytes.
//
// Its Writer is a flameox-rank output (Begin, Row, End, Pass). It imports
// evidence, table and the pprof format's spec, and github.com/google/pprof.
package pprofout

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/flameox/flameox/internal/evidence"
	pprofformat "github.com/flameox/flameox/internal/formats/pprof"
	"github.com/flameox/flameox/internal/table"
)

// Format is the --format name: the pprof format's own, profile.proto.
var Format = pprofformat.Spec.Name

// Writer builds one profile from a cpu.folded result and writes it when
// the result ends.
type Writer struct {
	W io.Writer

	p         *profile.Profile
	scale     float64
	funcs     map[string]*profile.Location
	artifacts []string
	notes     []string
}

// SampleType is the pprof sample type of weights in unit u, and the factor
// from u to its integer values.
func SampleType(u string) (*profile.ValueType, float64) {
	switch u {
	case "samples", "":
		return &profile.ValueType{Type: "samples", Unit: "count"}, 1
	case "s":
		return &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, 1e9
	}
	return &profile.ValueType{Type: "weight", Unit: u}, 1
}

// Begin accepts a cpu.folded header.
func (w *Writer) Begin(h *evidence.Table) error {
	if h.Name != table.CPUFolded.Name && h.Name != table.MemoryFolded.Name {
		msg := fmt.Sprintf("--format pprof writes folded call stacks, and this result is %s: leave out --operation (flameox-rank infers the stacks operation for --format pprof)", h.Name)
		if h.Name == table.CPUFoldedDiff.Name {
			msg = "--format pprof writes one profile, not a comparison: write each side with --format pprof and compare them with go tool pprof -diff_base BASE.pb.gz NEW.pb.gz, or draw the comparison with --format svg"
		}
		return &evidence.Failure{Code: evidence.CodeInvalidArgument, Message: msg, Location: evidence.Location{Field: "format"}}
	}
	u := ""
	for _, c := range h.Columns {
		if c.Name == "weight" {
			u = c.Unit
		}
	}
	st, scale := SampleType(u)
	if h.Name == table.MemoryFolded.Name {
		st, scale = memorySampleType(u), 1
	}
	w.scale = scale
	w.p = &profile.Profile{SampleType: []*profile.ValueType{st}, DefaultSampleType: st.Type}
	w.funcs = map[string]*profile.Location{}
	return nil
}

func (w *Writer) location(label string) *profile.Location {
	if l, ok := w.funcs[label]; ok {
		return l
	}
	id := uint64(len(w.p.Function) + 1)
	fn := &profile.Function{ID: id, Name: label, SystemName: label}
	loc := &profile.Location{ID: id, Line: []profile.Line{{Function: fn}}}
	w.p.Function = append(w.p.Function, fn)
	w.p.Location = append(w.p.Location, loc)
	w.funcs[label] = loc
	return loc
}

// Row adds one stack as a sample, its locations leaf first.
func (w *Writer) Row(v evidence.Object) error {
	var stack []string
	switch list := v["stack"].(type) {
	case []string:
		stack = list
	case []any:
		for _, s := range list {
			x, _ := s.(string)
			stack = append(stack, x)
		}
	}
	weight, _ := evidence.AsFloat(v["weight"])
	locs := make([]*profile.Location, len(stack))
	for i, l := range stack {
		locs[len(stack)-1-i] = w.location(l)
	}
	w.p.Sample = append(w.p.Sample, &profile.Sample{Location: locs, Value: []int64{int64(math.Round(weight * w.scale))}})
	return nil
}

// Pass keeps the artifacts' names and the failures for the profile's
// comments.
func (w *Writer) Pass(b evidence.Block) error {
	o, _ := b.CanonicalValue().(evidence.Object)
	switch b.Kind() {
	case evidence.KindArtifact:
		name, _ := o["name"].(string)
		id, _ := o["artifact_id"].(string)
		w.artifacts = append(w.artifacts, name+" "+id)
	case evidence.KindFailure:
		if f, ok := b.(*evidence.Failure); ok {
			w.notes = append(w.notes, f.Error())
		}
	}
	return nil
}

// End states the evidence's completeness and limitations in the profile's
// comments and writes it.
func (w *Writer) End(s *evidence.Summary) error {
	if w.p == nil {
		return evidence.Failf(evidence.CodeInternal, "pprofout: a summary without a result header")
	}
	c := []string{"flameox-rank: folded stacks of " + strings.Join(w.artifacts, ", ")}
	if s != nil {
		c = append(c, fmt.Sprintf("complete: %t", s.Complete))
		for _, l := range s.Limitations {
			c = append(c, "limitation: "+l)
		}
	}
	for _, n := range w.notes {
		c = append(c, "failure: "+n)
	}
	w.p.Comments = c
	if err := w.p.CheckValid(); err != nil {
		return evidence.Wrap(evidence.CodeInternal, err, "pprofout")
	}
	return w.p.Write(w.W)
}

// memorySampleType names a memory.folded result's weights as Go's heap
// profile does: space in bytes, or the population's count.
func memorySampleType(u string) *profile.ValueType {
	if u == "bytes" {
		return &profile.ValueType{Type: "space", Unit: "bytes"}
	}
	return &profile.ValueType{Type: u, Unit: "count"}
}
